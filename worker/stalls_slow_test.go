//go:build slow

package worker_test

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// stalls measures what holds up a worker's lease renewal in a busy process, between start and stop: the most
// goroutines waiting to run (the runtime's runnable count, every 20 ms), and the longest of a 10 ms sleep's lateness,
// the round trip of a core NATS request to a responder on another connection, and a read of a key of the leases
// bucket (every 100 ms each, on connections of their own, as a worker's lease has). A renewal crosses the same
// goroutines as the read (a client's flusher and reader, the server's reader, the stream's loop and writer), each
// queued behind the runnable ones. It samples nothing between stop and start (the idle window's CPU is measured).
type stalls struct {
	nc     *nats.Conn
	leases jetstream.KeyValue
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu                   sync.Mutex
	runnable             uint64
	late, request, lease time.Duration
}

// stallsOf readies the sampling on connections of its own, once the cluster's leases bucket exists.
func stallsOf(t *testing.T, srv *ebjs.Server) *stalls {
	t.Helper()
	ctx := t.Context()
	nc, responder := jetstreamtest.Connect(t, srv), jetstreamtest.Connect(t, srv)
	_, err := responder.Subscribe("stalls.echo", func(m *nats.Msg) { _ = m.Respond(m.Data) })
	require.NoError(t, err)
	require.NoError(t, responder.Flush())
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	s := &stalls{nc: nc}
	for name := range js.KeyValueStoreNames(ctx).Name() {
		if strings.HasSuffix(name, "_leases") {
			s.leases, err = js.KeyValue(ctx, name)
			require.NoError(t, err)
		}
	}
	require.NotNil(t, s.leases, "no leases bucket")
	t.Cleanup(func() { s.stop() })
	return s
}

// start samples until stop.
func (s *stalls) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	worst := func(d time.Duration, into *time.Duration) {
		s.mu.Lock()
		*into = max(*into, d)
		s.mu.Unlock()
	}
	every := func(period time.Duration, sample func()) {
		s.wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(period):
					sample()
				}
			}
		})
	}
	runnable := []metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}}
	every(20*time.Millisecond, func() {
		metrics.Read(runnable)
		s.mu.Lock()
		s.runnable = max(s.runnable, runnable[0].Value.Uint64())
		s.mu.Unlock()
	})
	every(100*time.Millisecond, func() {
		start := time.Now()
		time.Sleep(10 * time.Millisecond)
		worst(time.Since(start)-10*time.Millisecond, &s.late)
	})
	every(100*time.Millisecond, func() {
		start := time.Now()
		if _, err := s.nc.Request("stalls.echo", nil, 10*time.Second); err == nil {
			worst(time.Since(start), &s.request)
		}
	})
	every(100*time.Millisecond, func() {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		start := time.Now()
		if _, err := s.leases.Get(ctx, "w1"); err == nil || errors.Is(err, jetstream.ErrKeyNotFound) {
			worst(time.Since(start), &s.lease)
		}
	})
}

// stop ends the sampling and returns the worst figures since start, as a figure's text.
func (s *stalls) stop() string {
	if s.cancel == nil {
		return ""
	}
	s.cancel()
	s.cancel = nil
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := fmt.Sprintf("%d / %s / %s / %s", s.runnable, s.late.Round(time.Millisecond),
		s.request.Round(time.Millisecond), s.lease.Round(time.Millisecond))
	s.runnable, s.late, s.request, s.lease = 0, 0, 0, 0
	return out
}
