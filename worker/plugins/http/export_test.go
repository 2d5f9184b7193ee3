package http

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// NewWithHooks builds a sink whose guarded dialer resolves names with lookup and connects with dial (either nil:
// the defaults), and whose clock is now (nil: time.Now).
func NewWithHooks(cfg connector.Values, env connector.Env,
	lookup func(ctx context.Context, host string) ([]netip.Addr, error),
	dial func(ctx context.Context, network, address string) (net.Conn, error),
	now func() time.Time,
) (connector.Sink, error) {
	s, err := newSink(cfg, env, options{lookup: lookup, dial: dial, now: now})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ParseLegacyIPv4 is parseLegacyIPv4.
var ParseLegacyIPv4 = parseLegacyIPv4

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
