package inspect

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/rule"
)

// ErrTooManyTails is a tail opened while the account has as many open as it may (HTTP 429, Retry-After).
var ErrTooManyTails = &domain.Error{Kind: domain.KindThrottled, Code: "TooManyTails", RetryAfter: 5 * time.Second}

// DefaultTailsPerAccount is how many live tails an account may have open at once, per replica.
const DefaultTailsPerAccount = 5

// Tails counts the open tails of each account (per replica) against a limit.
type Tails struct {
	mu    sync.Mutex
	limit int
	open  map[string]int
}

// NewTails returns a counter allowing limit open tails per account (0: DefaultTailsPerAccount).
func NewTails(limit int) *Tails {
	if limit <= 0 {
		limit = DefaultTailsPerAccount
	}
	return &Tails{limit: limit, open: map[string]int{}}
}

// acquire counts one more tail of the account, or refuses it; release uncounts it. A nil Tails bounds nothing.
func (t *Tails) acquire(accountID string) (release func(), err error) {
	if t == nil {
		return func() {}, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.open[accountID] >= t.limit {
		return nil, ErrTooManyTails.With("account %s already has %d live tails open, the most it may; close one or try again later", accountID, t.limit)
	}
	t.open[accountID]++
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.open[accountID]--; t.open[accountID] <= 0 {
				delete(t.open, accountID)
			}
		})
	}, nil
}

// limiter allows n events in each second (a window that starts with the first event after the last one closed).
type limiter struct {
	n     int
	start time.Time
	used  int
}

func newLimiter(n int) *limiter { return &limiter{n: n} }

func (l *limiter) allow(now time.Time) bool {
	if now.Sub(l.start) >= time.Second {
		l.start, l.used = now, 0
	}
	if l.used >= l.n {
		return false
	}
	l.used++
	return true
}

// sortedByName returns rules in the order of their names.
func sortedByName(rules []*rule.Rule) []*rule.Rule {
	out := slices.Clone(rules)
	slices.SortFunc(out, func(a, b *rule.Rule) int { return cmp.Compare(a.Name(), b.Name()) })
	return out
}
