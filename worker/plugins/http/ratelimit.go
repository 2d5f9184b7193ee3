package http

import (
	"context"
	"sync"
	"time"
)

// bucket is a token bucket: rate tokens a second, up to burst stored. It belongs to one sink, so to one task: a
// connector with tasks.max N sends up to N times rate_limit_per_second to its destination.
type bucket struct {
	rate  float64
	burst float64
	now   func() time.Time

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

func newBucket(rate float64, burst int) *bucket {
	b := &bucket{rate: rate, burst: float64(max(burst, 1)), now: time.Now}
	b.tokens, b.last = b.burst, b.now()
	return b
}

// reserve takes a token and returns how long to wait before using it. Waiters queue by going negative: the
// n-th waiter waits n/rate.
func (b *bucket) reserve() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if now.After(b.last) {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
		b.last = now
	}
	b.tokens--
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * float64(time.Second))
}

// cancel gives back a token reserved by a waiter that gave up.
func (b *bucket) cancel() {
	b.mu.Lock()
	b.tokens = min(b.burst, b.tokens+1)
	b.mu.Unlock()
}

// wait blocks until a token is available or ctx ends.
func (b *bucket) wait(ctx context.Context) error {
	d := b.reserve()
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		b.cancel()
		return ctx.Err()
	}
}
