package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// Failures are the failed sign-ins recorded within a Throttle's window.
type Failures struct {
	// Pair counts the failures of one user name from one client address; PairLast is the latest of them.
	Pair     int
	PairLast time.Time
	// User counts the failures of the user name from every address.
	User int
}

// FailureRepository counts failed sign-ins in the database, so that every replica sees the same counts. user is
// UserKey of the name that was tried, which need not be a user's.
type FailureRepository interface {
	// Attempt counts an attempt of user from addr in one transaction that locks that count, so that attempts on
	// every replica take turns: it reads the failures whose latest is at or after since (older ones count as none)
	// and calls decide with them; when decide answers 0 the attempt is counted as a failure at now, which
	// ClearFailures undoes if the attempt succeeds. It returns what it read and what decide answered.
	Attempt(ctx context.Context, user, addr string, since, now time.Time, decide func(Failures) time.Duration) (Failures, time.Duration, error)
	// ClearFailures forgets the failures of user from addr (a successful sign-in from there).
	ClearFailures(ctx context.Context, user, addr string) error
	// DeleteFailuresBefore forgets the counts whose latest failure is before t.
	DeleteFailuresBefore(ctx context.Context, t time.Time) error
}

// UserKey is how a tried user name is counted: the SHA-256 of its lower-case form, so that the counts hold no
// name that was typed (a password typed into the name field stays unreadable), and an unknown name is counted
// exactly like a known one.
func UserKey(username string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(username))))
	return hex.EncodeToString(sum[:])
}

// Throttle is the policy that slows failed sign-ins down.
//
// From one client address, a user name may fail Free times in a row freely; after that each attempt must wait
// Base·2^(n−Free) after the latest failure (n failures so far), at most Max: an earlier attempt is refused
// (ErrThrottled, with the wait) without checking the password. Every attempt on a user name that failed more
// than Free times from all addresses together is held for SoftStep per extra failure, at most SoftMax, before its
// password is checked: this slows guessing spread over many addresses without ever refusing the right password.
// Nothing locks a user out. Counts are forgotten Window after their latest failure, and a successful sign-in
// clears the count of its user name and address.
type Throttle struct {
	Free     int
	Base     time.Duration
	Max      time.Duration
	SoftStep time.Duration
	SoftMax  time.Duration
	Window   time.Duration
}

// DefaultThrottle is the policy of the control plane.
var DefaultThrottle = Throttle{Free: 3, Base: time.Second, Max: 5 * time.Minute, SoftStep: 100 * time.Millisecond,
	SoftMax: 2 * time.Second, Window: 15 * time.Minute}

// Wait returns how long after now an attempt with failures f must wait (0: it may go ahead).
func (t Throttle) Wait(f Failures, now time.Time) time.Duration {
	if f.Pair < t.Free {
		return 0
	}
	d := t.Max
	if shift := f.Pair - t.Free; shift < 30 {
		if step := t.Base << shift; step > 0 && step < t.Max {
			d = step
		}
	}
	if w := f.PairLast.Add(d).Sub(now); w > 0 {
		return w
	}
	return 0
}

// Soft returns how long an attempt with failures f is held before its password is checked.
func (t Throttle) Soft(f Failures) time.Duration {
	extra := f.User - t.Free
	if extra <= 0 {
		return 0
	}
	if d := time.Duration(extra) * t.SoftStep; d < t.SoftMax {
		return d
	}
	return t.SoftMax
}
