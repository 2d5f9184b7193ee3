package session

import (
	"testing"
	"time"
)

func TestThrottleWait(t *testing.T) {
	t.Parallel()
	th := DefaultThrottle
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		f    Failures
		want time.Duration
	}{
		{"no failure", Failures{}, 0},
		{"two failures are free", Failures{Pair: 2, PairLast: now}, 0},
		{"the third waits a second", Failures{Pair: 3, PairLast: now}, time.Second},
		{"half of it passed", Failures{Pair: 3, PairLast: now.Add(-500 * time.Millisecond)}, 500 * time.Millisecond},
		{"it passed", Failures{Pair: 3, PairLast: now.Add(-time.Second)}, 0},
		{"doubles", Failures{Pair: 5, PairLast: now}, 4 * time.Second},
		{"at most Max", Failures{Pair: 30, PairLast: now}, 5 * time.Minute},
		{"no overflow", Failures{Pair: 1 << 20, PairLast: now}, 5 * time.Minute},
	} {
		if got := th.Wait(tc.f, now); got != tc.want {
			t.Errorf("%s: Wait = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestThrottleSoft(t *testing.T) {
	t.Parallel()
	th := DefaultThrottle
	for users, want := range map[int]time.Duration{0: 0, 3: 0, 4: 100 * time.Millisecond, 13: time.Second, 50: 2 * time.Second} {
		if got := th.Soft(Failures{User: users}); got != want {
			t.Errorf("Soft(%d failures) = %s, want %s", users, got, want)
		}
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	s, token := New("u1", "alice", Client{UserAgent: string(make([]byte, 1000))}, time.Hour, time.Now())
	id, secret, ok := parse(token)
	if !ok || id != s.ID() || len(secret) != 43 {
		t.Fatalf("parse(%q) = %q, %q, %v", token, id, secret, ok)
	}
	if len(s.Client().UserAgent) > MaxUserAgent {
		t.Errorf("the user agent is %d bytes long", len(s.Client().UserAgent))
	}
	for _, bad := range []string{"", "ebs_", "ebk_" + token[4:], token + "x", token[:len(token)-1], "ebs_UPPERCASEID1234_" + secret} {
		if _, _, ok := parse(bad); ok {
			t.Errorf("parse(%q) accepted", bad)
		}
	}
	if CSRFToken(token) == CSRFToken(token+"x") || CSRFToken(token) == secret {
		t.Error("the CSRF token is derived from the whole token and is not its secret")
	}
}
