package stream_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// DrainWorkQueue hands a burst over in batches of at most batch, every message once, and while the queue is idle
// it sends no pull request a second: one stays open (it fetched for a second at a time, a request, its timeout and
// a subscription each second, the largest part of an idle control plane's NATS traffic with the other merger).
func TestDrainWorkQueueBatchesABurstAndIdlesQuietly(t *testing.T) {
	env := jetstreamtest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := env.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "Q", Subjects: []string{"q.>"},
		Retention: jetstream.WorkQueuePolicy})
	require.NoError(t, err)
	var pulls atomic.Int64
	sub, err := env.Conn.Subscribe("$JS.API.CONSUMER.MSG.NEXT.Q.merge", func(*nats.Msg) { pulls.Add(1) })
	require.NoError(t, err)
	defer sub.Unsubscribe()

	var mu sync.Mutex
	var batches [][]string
	done := make(chan error, 1)
	go func() {
		done <- stream.DrainWorkQueue(ctx, env.JS, "Q", "merge", 40, func(ctx context.Context, msgs []jetstream.Msg) error {
			var got []string
			for _, m := range msgs {
				got = append(got, string(m.Data()))
				if err := m.Ack(); err != nil {
					return err
				}
			}
			mu.Lock()
			batches = append(batches, got)
			mu.Unlock()
			return nil
		})
	}()
	handled := func() (n int, most int) {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range batches {
			n, most = n+len(b), max(most, len(b))
		}
		return n, most
	}
	// Idle, the consumer created: pull requests counted over 3 s.
	require.Eventually(t, func() bool { return pulls.Load() > 0 }, 5*time.Second, 10*time.Millisecond)
	before := pulls.Load()
	time.Sleep(3 * time.Second)
	require.NoError(t, env.Conn.Flush())
	assert.LessOrEqual(t, pulls.Load()-before, int64(1), "pull requests in 3 s of an idle queue")

	const burst = 100
	for i := range burst {
		_, err := env.JS.PublishAsync(fmt.Sprintf("q.%d", i), fmt.Appendf(nil, "m%d", i))
		require.NoError(t, err)
	}
	select {
	case <-env.JS.PublishAsyncComplete():
	case <-time.After(10 * time.Second):
		t.Fatal("the burst was not stored")
	}
	require.Eventually(t, func() bool { n, _ := handled(); return n >= burst }, 10*time.Second, 10*time.Millisecond)
	n, most := handled()
	assert.Equal(t, burst, n, "every message handed over once")
	assert.LessOrEqual(t, most, 40, "a batch holds at most batch messages")
	mu.Lock()
	assert.Less(t, len(batches), burst/2, "a burst is handed over in batches, not one by one")
	seen := map[string]bool{}
	for _, b := range batches {
		for _, m := range b {
			assert.False(t, seen[m], "%s handed over twice", m)
			seen[m] = true
		}
	}
	mu.Unlock()

	cancel()
	select {
	case err := <-done:
		assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("DrainWorkQueue did not return when its context ended")
	}
}
