// Package throttle is the account.Throttle of the control plane: a token bucket per account (golang.org/x/time/rate)
// whose rate is the account's own PutEvents limit, or the installation's default. The buckets are this replica's:
// with N replicas behind a load balancer an account may put up to N times its rate in all. An account's limit is
// believed for LimitsTTL after it was read, so a change reaches every replica within it.
package throttle

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/account"
)

// DefaultPutEventsPerSecond is the installation's default rate of an account: Amazon EventBridge's default
// PutEvents quota in its largest regions.
const DefaultPutEventsPerSecond = 10_000

// DefaultLimitsTTL is how long a replica believes an account's limits.
const DefaultLimitsTTL = 5 * time.Second

// Accounts reads an account's limits.
type Accounts interface {
	Get(ctx context.Context, id string) (*account.Account, error)
}

// Throttle admits events at each account's rate. The zero value is not usable: set Accounts.
type Throttle struct {
	Accounts Accounts
	// Default is the rate of an account without its own (DefaultPutEventsPerSecond when 0).
	Default int
	// LimitsTTL overrides DefaultLimitsTTL (tests).
	LimitsTTL time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	limits  domain.Believed[int]
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

var _ account.Throttle = (*Throttle)(nil)

// Admit takes n events of the account's bucket, whose burst is one second's worth of its rate; a request of more
// events than that takes the whole bucket. Over its rate, the answer is account.ErrThrottled with the wait.
func (t *Throttle) Admit(ctx context.Context, accountID string, n int) error {
	if n <= 0 {
		return nil
	}
	perSecond := t.rateOf(ctx, accountID)
	lim := t.bucket(accountID, perSecond)
	now := t.now()
	r := lim.ReserveN(now, min(n, lim.Burst()))
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		e := account.ErrThrottled.With("account %q puts events faster than its rate of %d events per second; put them again later",
			accountID, perSecond)
		e.RetryAfter = d
		return e
	}
	return nil
}

// rateOf is the account's rate, believed for LimitsTTL; the default when its limits cannot be read (a database
// that does not answer does not stop PutEvents).
func (t *Throttle) rateOf(ctx context.Context, accountID string) int {
	ttl := t.LimitsTTL
	if ttl == 0 {
		ttl = DefaultLimitsTTL
	}
	v, found, err := t.limits.Lookup(accountID, t.now(), ttl, func(int, bool) (int, bool, error) {
		a, err := t.Accounts.Get(ctx, accountID)
		if err != nil {
			return 0, false, err
		}
		return a.Limits().PutEventsPerSecond, true, nil
	})
	if err != nil || !found || v <= 0 {
		if t.Default > 0 {
			return t.Default
		}
		return DefaultPutEventsPerSecond
	}
	return v
}

// bucket returns the account's bucket at perSecond, a new one when the account's limit changed.
func (t *Throttle) bucket(accountID string, perSecond int) *rate.Limiter {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buckets == nil {
		t.buckets = map[string]*rate.Limiter{}
	}
	lim, ok := t.buckets[accountID]
	if !ok || lim.Burst() != perSecond { // a new rate starts with a full bucket of its own
		lim = rate.NewLimiter(rate.Limit(perSecond), perSecond)
		t.buckets[accountID] = lim
	}
	return lim
}

// Forget drops what the throttle holds of an account (its limits and bucket), for a deleted account.
func (t *Throttle) Forget(accountID string) {
	t.limits.Forget(accountID)
	t.mu.Lock()
	delete(t.buckets, accountID)
	t.mu.Unlock()
}

func (t *Throttle) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// PurgeAccount forgets a deleted account (account.Purger).
func (t *Throttle) PurgeAccount(_ context.Context, accountID string) error {
	t.Forget(accountID)
	return nil
}

var _ account.Purger = (*Throttle)(nil)
