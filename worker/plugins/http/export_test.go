package http

import (
	"context"
	"time"

	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// NewWithClock builds a sink whose clock is now (nil: time.Now).
func NewWithClock(cfg connector.Values, env connector.Env, now func() time.Time) (connector.Sink, error) {
	s, err := newSink(cfg, env, options{now: now})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Bucket exposes the token bucket to tests.
type Bucket struct{ b *bucket }

// NewBucket returns a bucket of rate tokens a second, burst stored, on the clock now.
func NewBucket(rate float64, burst int, now func() time.Time) Bucket {
	b := newBucket(rate, burst)
	b.now = now
	b.last = now()
	return Bucket{b}
}

// Reserve takes a token and returns how long to wait for it.
func (b Bucket) Reserve() time.Duration { return b.b.reserve() }

// Wait waits for a token.
func (b Bucket) Wait(ctx context.Context) error { return b.b.wait(ctx) }
