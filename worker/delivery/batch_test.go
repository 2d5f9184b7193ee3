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
	m, err := stream.EncodeBatch(events, traces)
	require.NoError(t, err)
	m.Subject = "s.in"
	m.Header.Set(nats.MsgIdHdr, msgID)
	_, err = f.env.JS.PublishMsg(context.Background(), m)
	require.NoError(t, err)
}

// The events of a record batch are written one after the other, in order, each with its own id (the one it has
// stored alone: PutMsgID of its source and id), index and headers; the counters count events, not messages.
func TestTaskWritesTheEventsOfABatchInOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	f.publishBatch(t, "batch-1", []string{"", tp, "", "", ""}, "b0", "b1", "b2", "b3", "b4")
	f.env.Publish(t, "s.in", jetstreamtest.Event("single", "t", nil))
	sink := newSink()
	task := f.start(t, sink, 15*time.Second)
	require.Eventually(t, func() bool { return len(sink.Accepted()) == 6 }, wait, tick)
	require.Eventually(t, func() bool { return f.settled(t, 2) }, wait, tick)
	var batch []string
	for _, id := range sink.Accepted() {
		if id != "single" {
			batch = append(batch, id)
		}
	}
	assert.Equal(t, []string{"b0", "b1", "b2", "b3", "b4"}, batch, "in order")
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

// An event of a batch to retry hands the batch back from that event: the events before it are not written again,
// and its attempt numbers count its own attempts; the events after it are written once it is.
func TestTaskRetriesABatchFromTheEventThatFailed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.publishBatch(t, "batch-1", nil, "b0", "b1", "b2")
	sink := newSink()
	sink.FailFirst, sink.FailIDs = 2, map[string]bool{"b1": true}
	task := f.startWithAttempts(t, sink, 15*time.Second, 15*time.Second)
	require.Eventually(t, func() bool { return f.settled(t, 1) }, wait, tick)
	assert.Equal(t, []string{"b0", "b1", "b2"}, sink.Accepted())
	assert.Equal(t, []uint64{1}, sink.Attempts("b0"), "settled before the retry: not written again")
	assert.Equal(t, []uint64{1, 2, 3}, sink.Attempts("b1"))
	assert.Equal(t, []uint64{1}, sink.Attempts("b2"), "the event after the retried one starts at attempt 1")
	c := task.Counters()
	assert.EqualValues(t, 3, c.Written)
	assert.EqualValues(t, 2, c.Retried)
}

// An event of a batch whose retries run out is given up alone (dropped here, by the policy): the events after it
// are written, and the batch is acknowledged.
func TestTaskGivesUpOneEventOfABatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.cfg.Retry.MaxRetries = 1
	f.publishBatch(t, "batch-1", nil, "b0", "b1", "b2")
	sink := newSink()
	sink.FailFirst, sink.FailIDs = 100, map[string]bool{"b1": true}
	task := f.startWithAttempts(t, sink, 15*time.Second, 15*time.Second)
	require.Eventually(t, func() bool { return f.settled(t, 1) }, wait, tick)
	assert.Equal(t, []string{"b0", "b2"}, sink.Accepted())
	assert.Equal(t, []uint64{1}, sink.Attempts("b0"))
	assert.Equal(t, []uint64{1, 2}, sink.Attempts("b1"))
	c := task.Counters()
	assert.EqualValues(t, 2, c.Written)
	assert.EqualValues(t, 1, c.Dropped)
}

// A task stopped while it writes an event of a batch hands the batch back from that event: the next task does not
// write the events before it again, and the stop counts as no attempt.
func TestTaskStoppedInABatchResumesThere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.cfg.Retry.MaxRetries = 0 // a cancelled write must not count as a failure that drops the record
	f.publishBatch(t, "batch-1", nil, "b0", "b1", "b2")
	first := newSink()
	first.BlockID = "b1"
	t1 := f.startWithAttempts(t, first, 15*time.Second, 15*time.Second)
	require.Eventually(t, func() bool { now, _ := first.InWrite(); return now == 1 }, wait, tick)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	require.NoError(t, t1.Stop(ctx))
	assert.Equal(t, []string{"b0"}, first.Accepted())
	assert.EqualValues(t, 1, t1.Counters().Nacked)

	second := newSink()
	f.startWithAttempts(t, second, 15*time.Second, 15*time.Second)
	require.Eventually(t, func() bool { return f.settled(t, 1) }, wait, tick)
	assert.Equal(t, []string{"b1", "b2"}, second.Accepted(), "b0 was settled before the stop")
	assert.Equal(t, []uint64{1}, second.Attempts("b1"), "the stop was no attempt")
}

// A batch that is not one (its count does not match its body) is terminated whole: no part of it is written.
func TestTaskTerminatesABrokenBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	m, err := stream.EncodeBatch([]*event.Event{jetstreamtest.Event("b0", "t", nil), jetstreamtest.Event("b1", "t", nil)}, nil)
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
