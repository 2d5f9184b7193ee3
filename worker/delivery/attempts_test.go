package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// startWithAttempts starts a task that records failed attempts, on a consumer whose ack wait is consumerAckWait
// while the task sends its in-progress acks every third of taskAckWait.
func (f *fixture) startWithAttempts(t *testing.T, s *recordingSink, consumerAckWait, taskAckWait time.Duration) *delivery.Task {
	t.Helper()
	attempts, err := delivery.OpenAttempts(context.Background(), f.env.JS, "t_attempts", 1)
	require.NoError(t, err)
	cons, err := delivery.EnsureConsumer(context.Background(), f.env.JS, f.cfg, consumerAckWait)
	require.NoError(t, err)
	task, err := delivery.Start(context.Background(), delivery.TaskConfig{
		Consumer: cons, Sink: s, Handler: f.cfg.Chain(s), AckWait: taskAckWait, Attempts: attempts,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })
	return task
}

// TestAttemptsDoNotCountRedeliveries: a starved worker sends its in-progress acks too late, so JetStream hands a
// record out again while the task still writes it (here the in-progress acks come every 2 s against an ack wait of
// 150 ms). The task does not write it twice, and the attempt numbers that drive the retry policy and the dead
// letter count attempts (1, 2, 3), not the deliveries, which grow far beyond.
func TestAttemptsDoNotCountRedeliveries(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.cfg.Retry.MaxRetries = 2
	f.env.Publish(t, "s.in", jetstreamtest.Event("starved", "t", nil))
	sink := newSink()
	sink.FailFirst = 100
	sink.Block = make(chan struct{})
	task := f.startWithAttempts(t, sink, 150*time.Millisecond, 6*time.Second)
	// Each attempt blocks for 600 ms (four ack waits), then fails.
	go func() {
		for range 3 {
			time.Sleep(600 * time.Millisecond)
			sink.Block <- struct{}{}
		}
	}()
	require.Eventually(t, func() bool { return task.Counters().Dropped == 1 }, wait, tick)
	assert.Equal(t, []uint64{1, 2, 3}, sink.Attempts("starved"), "attempt numbers count attempts")
	n := task.Counters()
	assert.Positive(t, n.Redelivered, "the server handed the record out again while it was written")
	assert.EqualValues(t, 2, n.Retried)
	info := f.info(t)
	assert.Greater(t, info.Delivered.Consumer, uint64(3), "deliveries outnumber attempts")
	require.Eventually(t, func() bool { return f.settled(t, 1) }, wait, tick)
	t.Logf("3 attempts, %d deliveries, %d handed out again while being written", info.Delivered.Consumer, n.Redelivered)
}

// TestAttemptsSurviveHandover: records handed back unstarted when a task stops (a handover) come back with a
// higher delivery count; the next owner's attempt numbers continue from the failed attempts recorded.
func TestAttemptsSurviveHandover(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.cfg.Retry.MaxRetries = 3
	f.cfg.Retry.InitialDelay, f.cfg.Retry.MaxDelay = 300*time.Millisecond, 300*time.Millisecond
	f.env.Publish(t, "s.in", jetstreamtest.Event("moved", "t", nil))
	first := newSink()
	first.FailFirst = 100
	t1 := f.startWithAttempts(t, first, delivery.AckWait, delivery.AckWait)
	require.Eventually(t, func() bool { return len(first.Attempts("moved")) == 2 }, wait, tick)
	require.NoError(t, t1.Stop(context.Background()))
	// Deliveries that were no attempt: the record is handed out and handed back unstarted, twice.
	cons, err := f.env.JS.Consumer(context.Background(), "S", "d")
	require.NoError(t, err)
	for range 2 {
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
		require.NoError(t, err)
		for msg := range batch.Messages() {
			require.NoError(t, msg.Nak())
		}
	}
	second := newSink()
	second.FailFirst = 100
	t2 := f.startWithAttempts(t, second, delivery.AckWait, delivery.AckWait)
	require.Eventually(t, func() bool { return t2.Counters().Dropped == 1 }, wait, tick)
	assert.Equal(t, []uint64{1, 2}, first.Attempts("moved"))
	assert.Equal(t, []uint64{3, 4}, second.Attempts("moved"), "max retries 3: attempts 3 and 4 by the next owner")
	assert.Greater(t, f.info(t).Delivered.Consumer, uint64(4))
}
