package http_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

func TestBucket(t *testing.T) {
	t.Parallel()
	c := &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	b := httpsink.NewBucket(10, 3, c.Now)
	for range 3 {
		assert.Zero(t, b.Reserve(), "the burst")
	}
	assert.Equal(t, 100*time.Millisecond, b.Reserve())
	assert.Equal(t, 200*time.Millisecond, b.Reserve(), "waiters queue")
	c.Add(time.Second) // 10 tokens accrue; 2 were owed, the bucket holds at most 3
	for range 3 {
		assert.Zero(t, b.Reserve())
	}
	assert.Equal(t, 100*time.Millisecond, b.Reserve())

	// A waiter that gives up returns its token.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, b.Wait(ctx), context.Canceled)
	assert.Equal(t, 200*time.Millisecond, b.Reserve())
}

// rateTarget records the arrival time of each request.
func rateTarget(t *testing.T) (*httptest.Server, func() []time.Time) {
	var mu sync.Mutex
	var at []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv, func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Time(nil), at...)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	srv, arrivals := rateTarget(t)
	s := newSink(t, map[string]string{"url": srv.URL, "rate_limit_per_second": "20", "timeout": "1s"}, true)
	assert.Equal(t, time.Second+64*time.Second/20, s.(connector.WriteTimeouter).WriteTimeout(),
		"the write timeout covers a full queue")
	start := time.Now()
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() { assert.NoError(t, s.Write(context.Background(), orderEvent())) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	assert.GreaterOrEqual(t, elapsed, 900*time.Millisecond, "20 at once, then 20 more at 20 a second")
	at := arrivals()
	require.Len(t, at, 40)
	// Past the burst of 20, request k arrives no earlier than (k-19)/20 s after the start.
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	for k := 20; k < len(at); k++ {
		earliest := start.Add(time.Duration(k-19)*50*time.Millisecond - 10*time.Millisecond)
		assert.False(t, at[k].Before(earliest), "request %d arrived %v after the start", k, at[k].Sub(start))
	}
}

func TestRateLimitWaitEndsWithTheContext(t *testing.T) {
	t.Parallel()
	srv, arrivals := rateTarget(t)
	s := newSink(t, map[string]string{"url": srv.URL, "rate_limit_per_second": "1"}, true)
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := s.Write(ctx, orderEvent())
	require.Error(t, err)
	assert.False(t, connector.IsPermanent(err))
	assert.Len(t, arrivals(), 1)
}

func TestNoRateLimitByDefault(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	t.Cleanup(srv.Close)
	for _, cfg := range []map[string]string{{"url": srv.URL}, {"url": srv.URL, "rate_limit_per_second": "0"}} {
		s := newSink(t, cfg, true)
		start := time.Now()
		for range 50 {
			require.NoError(t, s.Write(context.Background(), orderEvent()))
		}
		assert.Less(t, time.Since(start), 5*time.Second)
		assert.Equal(t, 5*time.Second, s.(connector.WriteTimeouter).WriteTimeout())
	}
	assert.Equal(t, int32(100), n.Load())
}
