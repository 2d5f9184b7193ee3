package session

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
)

// Repository stores sessions.
type Repository interface {
	// Create stores a new session.
	Create(ctx context.Context, s *Session) error
	// Get returns the session id; ErrNotFound.
	Get(ctx context.Context, id string) (*Session, error)
	// ListByUser returns the user's sessions, newest first.
	ListByUser(ctx context.Context, userID string) ([]*Session, error)
	// Delete deletes the session id; ErrNotFound when there is none.
	Delete(ctx context.Context, id string) error
	// DeleteByUser deletes every session of the user and returns how many there were.
	DeleteByUser(ctx context.Context, userID string) (int, error)
	// Touch records a use of the session at at.
	Touch(ctx context.Context, id string, at time.Time) error
	// DeleteEnded deletes the sessions that expired before now or were last used before idleBefore.
	DeleteEnded(ctx context.Context, idleBefore, now time.Time) (int, error)
}

// Users is what sessions need of users (*user.Service is one).
type Users interface {
	// Authenticate checks a user name and password and returns the user's principal; access.ErrUnauthenticated
	// for an unknown user, a wrong password or a disabled user alike, after the same slow hash.
	Authenticate(ctx context.Context, username, password string) (*access.Principal, error)
	// PrincipalByID returns the principal of the enabled user id with its memberships; access.ErrUnauthenticated
	// when there is no such user or it is disabled.
	PrincipalByID(ctx context.Context, id string) (*access.Principal, error)
}

// Errors of sessions.
var (
	ErrNotFound = &domain.Error{Kind: domain.KindNotFound, Code: "SessionNotFound"}
	// ErrThrottled refuses a sign-in that comes too soon after failed ones; RetryAfter says when to try again.
	ErrThrottled = &domain.Error{Kind: domain.KindThrottled, Code: "TooManySignInAttempts"}
)

// InvalidCredentialsMessage is the one message of a failed sign-in, whatever failed.
const InvalidCredentialsMessage = "invalid user name or password"

// Config is the lifetime of sessions.
type Config struct {
	// IdleTimeout ends a session not used for so long (DefaultIdleTimeout when zero).
	IdleTimeout time.Duration
	// MaxAge ends a session so long after sign-in, used or not (DefaultMaxAge when zero).
	MaxAge time.Duration
}

// Validate checks the durations.
func (c Config) Validate() error {
	switch {
	case c.IdleTimeout < 0 || c.MaxAge < 0:
		return domain.Invalid("session", "session durations must not be negative")
	case c.IdleTimeout != 0 && c.IdleTimeout < time.Minute:
		return domain.Invalid("session-idle-timeout", "the idle timeout of sessions must be at least a minute")
	case c.MaxAge != 0 && c.MaxAge < time.Minute:
		return domain.Invalid("session-max-age", "the maximum age of sessions must be at least a minute")
	}
	return nil
}

func (c Config) idle() time.Duration {
	if c.IdleTimeout > 0 {
		return c.IdleTimeout
	}
	return DefaultIdleTimeout
}

func (c Config) maxAge() time.Duration {
	if c.MaxAge > 0 {
		return c.MaxAge
	}
	return DefaultMaxAge
}

// DefaultCacheTTL is how long a session read from the repository is believed without reading it again: the
// longest an ended session goes on working on another replica.
const DefaultCacheTTL = 500 * time.Millisecond

// TouchInterval is how often, at most, a session's last use is written: the precision of the idle timeout.
const TouchInterval = time.Minute

// Service signs users in and out and authenticates requests by session token. Safe for concurrent use.
type Service struct {
	Sessions Repository
	Failures FailureRepository
	Users    Users
	Config   Config
	// Throttle slows failed sign-ins (DefaultThrottle when zero).
	Throttle Throttle
	Clock    domain.Clock
	// Sleep waits d unless ctx ends first (a timer when nil); tests count the waits instead.
	Sleep  func(ctx context.Context, d time.Duration) error
	Logger *slog.Logger
	// CacheTTL overrides DefaultCacheTTL (tests); negative disables the cache.
	CacheTTL time.Duration

	cache domain.Believed[cached] // by session id
}

// cached is a session with its user's principal.
type cached struct {
	session   *Session
	principal *access.Principal
}

// IdleTimeout is the idle timeout in force.
func (s *Service) IdleTimeout() time.Duration { return s.Config.idle() }

func (s *Service) throttle() Throttle {
	if s.Throttle == (Throttle{}) {
		return DefaultThrottle
	}
	return s.Throttle
}

func (s *Service) ttl() time.Duration {
	if s.CacheTTL != 0 {
		return s.CacheTTL
	}
	return DefaultCacheTTL
}

func (s *Service) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if s.Sleep != nil {
		return s.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Login signs the user in with a password from client and returns the new session and its token (the cookie's
// value). Every attempt is counted as a failure before its password is checked, and cleared if it succeeds, so
// that attempts in parallel cannot pass the throttle together. Every failure — an unknown user, a wrong password,
// a disabled user — is access.ErrUnauthenticated with InvalidCredentialsMessage, reached by the same path (the
// throttle, the slow hash); an attempt that comes too soon after failures from the same address is ErrThrottled
// with RetryAfter set, before the password is checked. A failure to reach the database is returned as it is.
func (s *Service) Login(ctx context.Context, username, password string, client Client) (*Session, string, error) {
	th := s.throttle()
	key := UserKey(username)
	now := s.Clock.Now()
	f, wait, err := s.Failures.Attempt(ctx, key, client.Addr, now.Add(-th.Window), now,
		func(f Failures) time.Duration { return th.Wait(f, now) })
	if err != nil {
		return nil, "", err
	}
	if wait > 0 {
		e := ErrThrottled.With("too many failed sign-ins for this user name from this address; try again in %s",
			wait.Round(time.Second))
		e.RetryAfter = wait
		return nil, "", e
	}
	if err := s.sleep(ctx, th.Soft(f)); err != nil {
		return nil, "", err
	}
	p, err := s.Users.Authenticate(ctx, username, password)
	if errors.Is(err, access.ErrUnauthenticated) {
		return nil, "", access.ErrUnauthenticated.With(InvalidCredentialsMessage) // counted by Attempt
	}
	if err != nil {
		return nil, "", err
	}
	if err := s.Failures.ClearFailures(ctx, key, client.Addr); err != nil {
		return nil, "", err
	}
	sess, token := New(p.ID(), p.Name(), client, s.Config.maxAge(), s.Clock.Now())
	if err := s.Sessions.Create(ctx, sess); err != nil {
		return nil, "", err
	}
	return sess, token, nil
}

// dummyHash is compared against when a token names no session, so that an unknown id and a wrong secret take the
// same path.
var dummyHash = sha256.Sum256([]byte("no session has this secret"))

// Authenticate returns the principal and session of token. Whatever is wrong with it — not the form of a token,
// an unknown or ended session, a wrong secret, a user since disabled or deleted — the error is
// access.ErrUnauthenticated; a failure to read the repository is returned as it is. A session (and its user's
// principal) is read at most once per cache lifetime; its use is written at most once per TouchInterval.
func (s *Service) Authenticate(ctx context.Context, token string) (*access.Principal, *Session, error) {
	id, secret, ok := parse(token)
	got := sha256.Sum256([]byte(secret))
	now := s.Clock.Now()
	var c cached
	found := false
	if ok {
		var err error
		if c, found, err = s.lookup(ctx, id, now); err != nil {
			return nil, nil, err
		}
	}
	want := dummyHash
	if found {
		want = c.session.SecretHash()
	}
	match := subtle.ConstantTimeCompare(got[:], want[:]) == 1
	if !ok || !found || !match || !c.session.Live(now, s.Config.idle()) {
		return nil, nil, access.Unauthenticated()
	}
	if now.Sub(c.session.LastSeenAt()) >= TouchInterval {
		s.touch(ctx, c, now)
	}
	return c.principal, c.session, nil
}

// lookup returns the session id with its user's principal from the cache, or from the repositories when the cache
// has none younger than its lifetime; found is false when there is no such session or its user cannot sign in.
func (s *Service) lookup(ctx context.Context, id string, now time.Time) (cached, bool, error) {
	return s.cache.Lookup(id, now, s.ttl(), func(prev cached, had bool) (cached, bool, error) {
		sess, err := s.Sessions.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return cached{}, false, nil
		}
		if err != nil {
			return cached{}, false, err
		}
		p, err := s.Users.PrincipalByID(ctx, sess.UserID())
		if errors.Is(err, access.ErrUnauthenticated) {
			return cached{}, false, nil
		}
		if err != nil {
			return cached{}, false, err
		}
		if had && prev.session.LastSeenAt().After(sess.LastSeenAt()) {
			sess.lastSeenAt = prev.session.LastSeenAt() // this replica's touch may not be read back yet
		}
		return cached{session: sess, principal: p}, true, nil
	})
}

// touch writes the session's use at now; a failure is logged, never fails the request.
func (s *Service) touch(ctx context.Context, c cached, now time.Time) {
	id := c.session.ID()
	found, changed := s.cache.Update(id, func(cur *cached) bool {
		if now.Sub(cur.session.LastSeenAt()) < TouchInterval {
			return false // another request wrote it meanwhile
		}
		touched := *cur.session
		touched.lastSeenAt = now
		cur.session = &touched
		return true
	})
	if found && !changed {
		return
	}
	if err := s.Sessions.Touch(context.WithoutCancel(ctx), id, now); err != nil && s.Logger != nil {
		s.Logger.Warn("recording the use of a session", "session", id, "err", err)
	}
}

func (s *Service) forget(id string) { s.cache.Forget(id) }

func (s *Service) forgetUser(userID string) {
	s.cache.ForgetIf(func(c cached) bool { return c.session.UserID() == userID })
}

// Logout ends the session id (the caller's own). Errors: ErrNotFound.
func (s *Service) Logout(ctx context.Context, id string) error {
	s.forget(id)
	return s.Sessions.Delete(ctx, id)
}

// List returns the live sessions of the user, newest first.
func (s *Service) List(ctx context.Context, userID string) ([]*Session, error) {
	all, err := s.Sessions.ListByUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	out := all[:0]
	for _, sess := range all {
		if sess.Live(now, s.Config.idle()) {
			out = append(out, sess)
		}
	}
	return out, nil
}

// Revoke ends the user's session id: at once on this replica, within the cache's lifetime on the others. Errors:
// ErrNotFound, also for a session of another user.
func (s *Service) Revoke(ctx context.Context, userID, id string) error {
	sess, err := s.Sessions.Get(ctx, id)
	if err == nil && sess.UserID() != userID {
		err = ErrNotFound.With("session %q not found", id)
	}
	if err != nil {
		return err
	}
	s.forget(id)
	return s.Sessions.Delete(ctx, id)
}

// EndSessionsOf ends every session of the user (its password changed, it was disabled or deleted).
func (s *Service) EndSessionsOf(ctx context.Context, userID string) error {
	s.forgetUser(userID)
	_, err := s.Sessions.DeleteByUser(ctx, userID)
	return err
}

// Sweep deletes the sessions that have ended and the failure counts that are past the throttle's window; the
// control plane calls it now and then.
func (s *Service) Sweep(ctx context.Context) error {
	now := s.Clock.Now()
	if _, err := s.Sessions.DeleteEnded(ctx, now.Add(-s.Config.idle()), now); err != nil {
		return err
	}
	return s.Failures.DeleteFailuresBefore(ctx, now.Add(-s.throttle().Window))
}
