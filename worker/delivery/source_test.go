package delivery_test

import (
	"context"
	"sync"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// scriptedSource returns its batches, one per Read, then blocks; it records what is committed.
type scriptedSource struct {
	mu        sync.Mutex
	batches   [][]connector.SourceRecord
	committed [][]connector.SourceRecord
}

func (s *scriptedSource) Connect(context.Context) error { return nil }

func (s *scriptedSource) Read(ctx context.Context) ([]connector.SourceRecord, error) {
	s.mu.Lock()
	if len(s.batches) > 0 {
		b := s.batches[0]
		s.batches = s.batches[1:]
		s.mu.Unlock()
		return b, nil
	}
	s.mu.Unlock()
	<-ctx.Done()
	return nil, ctx.Err()
}

func (s *scriptedSource) Commit(_ context.Context, records []connector.SourceRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.committed = append(s.committed, records)
	return nil
}

func (s *scriptedSource) Close() error { return nil }

func (s *scriptedSource) commits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.committed)
}

const (
	srcStream  = "SRC_OUT"
	srcSubject = "src.bus.in"
)

// runSource runs a task of src storing on srcSubject, with its offsets in a KV bucket, until it committed
// commits batches; it returns the task (stopped) and the offsets stored.
func runSource(t *testing.T, env *jetstreamtest.Env, src *scriptedSource, commits int) (*delivery.SourceTask, []delivery.StoredOffset) {
	t.Helper()
	ctx := context.Background()
	kv, err := env.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "src_offsets"})
	require.NoError(t, err)
	offsets, err := delivery.LoadOffsets(ctx, kv, "src")
	require.NoError(t, err)
	task, err := delivery.StartSource(ctx, delivery.SourceTaskConfig{Source: src, JetStream: env.JS, Subject: srcSubject,
		Stream: srcStream, Tolerance: connector.ToleranceNone, Offsets: offsets})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return src.commits() == commits }, wait, tick)
	require.NoError(t, task.Stop(ctx))
	state, trace := task.State()
	require.NotEqual(t, "FAILED", state, trace)
	stored, err := delivery.LoadOffsets(ctx, kv, "src")
	require.NoError(t, err)
	return task, stored.List()
}

func storedMessages(t *testing.T, env *jetstreamtest.Env) []*jetstream.RawStreamMsg {
	t.Helper()
	ctx := context.Background()
	s, err := env.JS.Stream(ctx, srcStream)
	require.NoError(t, err)
	var out []*jetstream.RawStreamMsg
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			return out
		}
		out = append(out, m)
	}
}

// A record without an event stores nothing but its offset, in its turn, and is committed with the others.
func TestSourceRecordWithoutEventMovesTheOffsetOnly(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	env.Stream(t, srcStream, srcSubject)
	p := map[string]any{"p": "a"}
	q := map[string]any{"p": "b"}
	src := &scriptedSource{batches: [][]connector.SourceRecord{
		{ // events, then a skip past them in p, and a partition q that only moves
			{Event: jetstreamtest.Event("e1", "t", nil), Partition: p, Offset: map[string]any{"n": 1}},
			{Partition: q, Offset: map[string]any{"n": 10}},
			{Event: jetstreamtest.Event("e2", "t", nil), Partition: p, Offset: map[string]any{"n": 2}},
			{Partition: p, Offset: map[string]any{"n": 5}},
		},
		{{Partition: p, Offset: map[string]any{"n": 7, "done": true}}}, // a batch with no event at all
	}}
	task, offsets := runSource(t, env, src, 2)

	var got []string
	for _, m := range storedMessages(t, env) {
		got = append(got, m.Header.Get("ce-id"))
	}
	assert.Equal(t, []string{"e1", "e2"}, got)
	byPartition := map[string]map[string]any{}
	for _, o := range offsets {
		byPartition[o.Partition["p"].(string)] = o.Offset
	}
	assert.Equal(t, map[string]map[string]any{"a": {"n": float64(7), "done": true}, "b": {"n": float64(10)}}, byPartition,
		"the last offset of each partition")
	n := task.Counters()
	assert.Equal(t, uint64(2), n.Read, "records without an event are not read records")
	assert.Equal(t, uint64(2), n.Written)
	assert.Equal(t, uint64(0), n.Filtered)
	assert.Len(t, src.committed[0], 4, "every record of the batch is committed")
	assert.Len(t, src.committed[1], 1)
}

// A record's Header is added to the stored message (but never replaces the event's own headers or NATS's), its
// MsgID replaces PutMsgID, and a record JetStream had already stored counts as a duplicate.
func TestSourceRecordHeadersAndMsgID(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	env.Stream(t, srcStream, srcSubject)
	header := map[string]string{
		stream.HeaderReplay:      "rp1",
		stream.HeaderReplayRules: "r1,r2",
		"ce-id":                  "forged",
		"Nats-Expected-Stream":   "ELSEWHERE",
		"content-type":           "text/plain",
		"bad\nname":              "x",
		"eb-multi":               "a\r\nb",
	}
	first := jetstreamtest.Event("same", "t", map[string]any{"k": 1})
	second := jetstreamtest.Event("same", "t", map[string]any{"k": 1}) // the same event, replayed by another replay
	again := first.Clone()
	src := &scriptedSource{batches: [][]connector.SourceRecord{
		{
			{Event: first, Header: header, MsgID: "replay-1-of-same"},
			{Event: second, Header: header, MsgID: "replay-2-of-same"},
			{Event: jetstreamtest.Event("plain", "t", nil)},
		},
		{{Event: &again, Header: header, MsgID: "replay-1-of-same"}}, // read again
	}}
	task, _ := runSource(t, env, src, 2)

	stored := storedMessages(t, env)
	require.Len(t, stored, 3, "two replays of one event are two copies; a copy read again is stored once")
	for i, wantID := range []string{"replay-1-of-same", "replay-2-of-same"} {
		h := stored[i].Header
		assert.Equal(t, wantID, h.Get(nats.MsgIdHdr))
		assert.Equal(t, "rp1", h.Get(stream.HeaderReplay))
		assert.Equal(t, "r1,r2", h.Get(stream.HeaderReplayRules))
		assert.Equal(t, "same", h.Get("ce-id"), "the event's own headers win")
		assert.Equal(t, []string{srcStream}, h.Values("Nats-Expected-Stream"), "NATS's headers are the runtime's")
		assert.Equal(t, "application/json", h.Get("content-type"))
		assert.Empty(t, h.Get("eb-multi"), "a value a header cannot carry is left out")
	}
	assert.Equal(t, stream.PutMsgID("test/source", "plain"), stored[2].Header.Get(nats.MsgIdHdr))
	assert.Empty(t, stored[2].Header.Get(stream.HeaderReplay))
	n := task.Counters()
	assert.Equal(t, uint64(4), n.Written)
	assert.Equal(t, uint64(1), task.Duplicates(), "the record read again")
}

// A record a transform makes into several events stores each under an id derived from the record's MsgID.
func TestSourceRecordMsgIDOfSeveralEvents(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	env.Stream(t, srcStream, srcSubject)
	src := &scriptedSource{batches: [][]connector.SourceRecord{{{Event: jetstreamtest.Event("one", "t", nil), MsgID: "m"}}}}
	ctx := context.Background()
	task, err := delivery.StartSource(ctx, delivery.SourceTaskConfig{Source: src, JetStream: env.JS, Subject: srcSubject,
		Stream: srcStream, Tolerance: connector.ToleranceNone, Transforms: []connector.NamedTransform{{Name: "split", Transform: splitter{}}}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return src.commits() == 1 }, wait, tick)
	require.NoError(t, task.Stop(ctx))
	stored := storedMessages(t, env)
	require.Len(t, stored, 2)
	for _, m := range stored {
		assert.Equal(t, stream.HopMsgID("m", stream.PutMsgID("test/source", m.Header.Get("ce-id"))), m.Header.Get(nats.MsgIdHdr))
	}
}

// splitter makes two events of one: the event, and a copy whose id has "-copy" appended.
type splitter struct{}

func (splitter) Apply(_ context.Context, e *event.Event) ([]*event.Event, error) {
	c := e.Clone()
	c.SetID(e.ID() + "-copy")
	return []*event.Event{e, &c}, nil
}
