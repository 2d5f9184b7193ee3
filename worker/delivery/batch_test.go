package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// publishBatch stores the events ids as one record batch on s.in, with Nats-Msg-Id msgID and, per event, the
// traceparents traces (nil: none).
func (f *fixture) publishBatch(t *testing.T, msgID string, traces []string, ids ...string) {
	t.Helper()
	events := make([]*event.Event, len(ids))
	for i, id := range ids {
		events[i] = jetstreamtest.Event(id, "t", map[string]any{"i": i})
	}
	m, err := stream.EncodeBatch(events, traces, nil)
	require.NoError(t, err)
	m.Subject = "s.in"
	m.Header.Set(nats.MsgIdHdr, msgID)
	_, err = f.env.JS.PublishMsg(context.Background(), m)
	require.NoError(t, err)
}

// The events of a record batch are written at the same time, each once, with its own id (the one it has stored
// alone: PutMsgID of its source and id, or its value of stream.HeaderBatchIDs), index and headers; the counters
// count events, not messages.
func TestTaskWritesTheEventsOfABatchAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	f.publishBatch(t, "batch-1", []string{"", tp, "", "", ""}, "b0", "b1", "b2", "b3", "b4")
	f.env.Publish(t, "s.in", jetstreamtest.Event("single", "t", nil))
	sink := newSink()
	sink.Block = make(chan struct{})
	task := f.start(t, sink, 15*time.Second)
	require.Eventually(t, func() bool { now, _ := sink.InWrite(); return now == 6 }, wait, tick,
		"the five events of the batch and the single one are written at the same time")
	close(sink.Block)
	require.Eventually(t, func() bool { return len(sink.Accepted()) == 6 }, wait, tick)
	require.Eventually(t, func() bool { return f.settled(t, 2) }, wait, tick)
	assert.ElementsMatch(t, []string{"single", "b0", "b1", "b2", "b3", "b4"}, sink.Accepted())
	seen := map[string]bool{}
	for i, id := range []string{"b0", "b1", "b2", "b3", "b4"} {
		require.Len(t, sink.metas[id], 1)
		m := sink.metas[id][0]
		assert.Equal(t, i, m.Index)
		assert.EqualValues(t, 1, m.Sequence, "every event of the batch is at its message's sequence")
		assert.Equal(t, stream.PutMsgID(jetstreamtest.Event(id, "t", nil).Source(), id), m.ID())
		assert.False(t, seen[m.ID()])
		seen[m.ID()] = true
		assert.Empty(t, m.Header.Get(stream.HeaderBatch), "the batch's own headers are not the event's")
	}
	assert.Equal(t, tp, sink.metas["b1"][0].Header.Get("traceparent"))
	assert.Empty(t, sink.metas["b0"][0].Header.Get("traceparent"))
	assert.Equal(t, 0, sink.metas["single"][0].Index)
	c := task.Counters()
	assert.EqualValues(t, 6, c.Read)
	assert.EqualValues(t, 6, c.Written)
}

// A sink that stores a record batch's writes together (connector.Batcher) gets the events one after the other, in
// order, with one connector.Batch that the task flushes before it acknowledges the record.
func TestTaskWritesTheEventsOfABatchInOrderToABatcher(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.publishBatch(t, "batch-1", nil, "b0", "b1", "b2", "b3", "b4")
	sink := &batchingSink{recordingSink: newSink()}
	task := f.start(t, sink, 15*time.Second)
	require.Eventually(t, func() bool { return f.settled(t, 1) }, wait, tick)
	assert.Equal(t, []string{"b0", "b1", "b2", "b3", "b4"}, sink.Accepted(), "in order")
	_, peak := sink.InWrite()
	assert.Equal(t, 1, peak, "one after the other")
	sink.mu.Lock()
	assert.Equal(t, [][]string{{"b0", "b1", "b2", "b3", "b4"}}, sink.flushed, "one Batch, flushed once")
	sink.mu.Unlock()
	assert.EqualValues(t, 5, task.Counters().Written)
}

// batchingSink is a connector.Batcher: it leaves the ids of the events it writes to the Batch, whose flush records
// them.
type batchingSink struct {
	*recordingSink
	flushed [][]string
}

func (s *batchingSink) Batches() {}

func (s *batchingSink) Write(ctx context.Context, e *event.Event) error {
	if err := s.recordingSink.Write(ctx, e); err != nil {
		return err
	}
	if b, ok := connector.BatchFrom(ctx); ok {
		f := b.Defer(s, func() connector.Flusher { return &idFlusher{s: s} }).(*idFlusher)
		f.ids = append(f.ids, e.ID())
	}
	return nil
}

type idFlusher struct {
	s   *batchingSink
	ids []string
}

func (f *idFlusher) Flush(context.Context) error {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.s.flushed = append(f.s.flushed, f.ids)
	return nil
}

// An event of a batch to retry hands the batch back with the events settled: they are not written again, and the
// retried event's attempt numbers count its own attempts.
func TestTaskRetriesOnlyTheEventsOfABatchThatFailed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.publishBatch(t, "batch-1", nil, "b0", "b1", "b2")
	sink := newSink()
	sink.FailFirst, sink.FailIDs = 2, map[string]bool{"b1": true}
	task := f.startWithAttempts(t, sink, 15*time.Second, 15*time.Second)
	require.Eventually(t, func() bool { return f.settled(t, 1) }, wait, tick)
	assert.ElementsMatch(t, []string{"b0", "b1", "b2"}, sink.Accepted())
	assert.Equal(t, []uint64{1}, sink.Attempts("b0"), "settled before the retry: not written again")
	assert.Equal(t, []uint64{1, 2, 3}, sink.Attempts("b1"))
	assert.Equal(t, []uint64{1}, sink.Attempts("b2"), "settled after the retried one: not written again")
	c := task.Counters()
	assert.EqualValues(t, 3, c.Written)
	assert.EqualValues(t, 2, c.Retried)
}

// An event of a batch whose retries run out is given up alone (dropped here, by the policy): the others are
// written, and the batch is acknowledged.
func TestTaskGivesUpOneEventOfABatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.cfg.Retry.MaxRetries = 1
	f.publishBatch(t, "batch-1", nil, "b0", "b1", "b2")
	sink := newSink()
	sink.FailFirst, sink.FailIDs = 100, map[string]bool{"b1": true}
	task := f.startWithAttempts(t, sink, 15*time.Second, 15*time.Second)
	require.Eventually(t, func() bool { return f.settled(t, 1) }, wait, tick)
	assert.ElementsMatch(t, []string{"b0", "b2"}, sink.Accepted())
	assert.Equal(t, []uint64{1}, sink.Attempts("b0"))
	assert.Equal(t, []uint64{1, 2}, sink.Attempts("b1"))
	assert.Equal(t, []uint64{1}, sink.Attempts("b2"))
	c := task.Counters()
	assert.EqualValues(t, 2, c.Written)
	assert.EqualValues(t, 1, c.Dropped)
}

// A task stopped while it writes an event of a batch hands the batch back with the others settled: the next task
// writes that event only, and the stop counts as no attempt.
func TestTaskStoppedInABatchResumesThere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.cfg.Retry.MaxRetries = 0 // a cancelled write must not count as a failure that drops the record
	f.publishBatch(t, "batch-1", nil, "b0", "b1", "b2")
	first := newSink()
	first.BlockID = "b1"
	t1 := f.startWithAttempts(t, first, 15*time.Second, 15*time.Second)
	require.Eventually(t, func() bool { return len(first.Accepted()) == 2 }, wait, tick)
	require.Eventually(t, func() bool { now, _ := first.InWrite(); return now == 1 }, wait, tick)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	require.NoError(t, t1.Stop(ctx))
	assert.ElementsMatch(t, []string{"b0", "b2"}, first.Accepted())
	assert.EqualValues(t, 1, t1.Counters().Nacked)

	second := newSink()
	f.startWithAttempts(t, second, 15*time.Second, 15*time.Second)
	require.Eventually(t, func() bool { return f.settled(t, 1) }, wait, tick)
	assert.Equal(t, []string{"b1"}, second.Accepted(), "b0 and b2 were settled before the stop")
	assert.Equal(t, []uint64{1}, second.Attempts("b1"), "the stop was no attempt")
}

// A batch that is not one (its count does not match its body) is terminated whole: no part of it is written.
func TestTaskTerminatesABrokenBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	m, err := stream.EncodeBatch([]*event.Event{jetstreamtest.Event("b0", "t", nil), jetstreamtest.Event("b1", "t", nil)}, nil, nil)
	require.NoError(t, err)
	m.Subject = "s.in"
	m.Header.Set(stream.HeaderBatch, "3")
	_, err = f.env.JS.PublishMsg(context.Background(), m)
	require.NoError(t, err)
	sink := newSink()
	task := f.start(t, sink, 15*time.Second)
	require.Eventually(t, func() bool { return f.settled(t, 1) }, wait, tick)
	assert.Empty(t, sink.Accepted())
	assert.EqualValues(t, 1, task.Counters().Undecodable)
}
