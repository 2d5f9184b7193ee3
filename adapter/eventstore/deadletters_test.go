package eventstore

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/deadletter"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// dlqEnv is a dead-letter store on an embedded server, with the dead-letter stream of account "acme".
type dlqEnv struct {
	store *DeadLetters
	js    jetstream.JetStream
	names stream.Names
}

func newDLQEnv(t *testing.T) *dlqEnv {
	t.Helper()
	env := jetstreamtest.Start(t)
	require.NoError(t, New(env.JS, "t", 1).EnsureDLQStream(context.Background(), "acme"))
	return &dlqEnv{store: NewDeadLetters(env.JS, "t"), js: env.JS, names: stream.Names{Cluster: "t"}}
}

// deadLetter stores the dead letter of event id given up by connector eb.acme.<bus>.<rule>.<target> and returns
// its sequence.
func (e *dlqEnv) deadLetter(t *testing.T, id, busName, ruleName, targetName string) uint64 {
	t.Helper()
	ev := jetstreamtest.Event(id, "order.created", map[string]any{"id": id})
	ev.SetExtension("tenant", "blue")
	m := stream.EncodeDeadLetter(e.names.DLQSubject("acme"), ev, stream.DeadLetter{
		Reason: "http: 500 Internal Server Error", Attempts: 3, ErrorClass: stream.DLQClassExhausted,
		Connector: "eb.acme." + busName + "." + ruleName + "." + targetName,
		Stream:    "t_BUS_x", Sequence: 7, Subject: "t.bus.x.rule.y", MsgID: "msg-" + id,
	})
	ack, err := e.js.PublishMsg(context.Background(), m)
	require.NoError(t, err)
	return ack.Sequence
}

func ids(dls []*deadletter.DeadLetter) []string {
	out := make([]string, 0, len(dls))
	for _, d := range dls {
		out = append(out, d.Event().ID())
	}
	return out
}

func TestDeadLettersOfAnAccountWithoutStream(t *testing.T) {
	t.Parallel()
	e := newDLQEnv(t)
	ctx := context.Background()
	dls, next, err := e.store.List(ctx, "nobody", deadletter.Query{Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, dls)
	assert.Zero(t, next)
	last, err := e.store.Last(ctx, "nobody")
	require.NoError(t, err)
	assert.Zero(t, last)
	_, err = e.store.Get(ctx, "nobody", 1)
	assert.ErrorIs(t, err, deadletter.ErrNotFound)
	assert.ErrorIs(t, e.store.Delete(ctx, "nobody", 1), deadletter.ErrNotFound)
	assert.ErrorIs(t, e.store.Redrive(ctx, "nobody", 1, deadletter.Destination{BusID: "b", RuleID: "r", TargetID: "t"}), deadletter.ErrNotFound)

	dls, next, err = e.store.List(ctx, "acme", deadletter.Query{Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, dls, "an empty stream lists nothing")
	assert.Zero(t, next)
}

func TestDeadLettersList(t *testing.T) {
	t.Parallel()
	e := newDLQEnv(t)
	ctx := context.Background()
	for i := range 6 {
		target := "hook"
		if i%2 == 1 {
			target = "audit"
		}
		e.deadLetter(t, "e"+strconv.Itoa(i), "orders", "created", target)
	}
	e.deadLetter(t, "other", "billing", "paid", "hook")

	// The fields of one dead letter.
	d, err := e.store.Get(ctx, "acme", 1)
	require.NoError(t, err)
	assert.Equal(t, "1", d.ID())
	assert.Equal(t, "orders", d.Bus())
	assert.Equal(t, "created", d.Rule())
	assert.Equal(t, "hook", d.Target())
	assert.Equal(t, "eb.acme.orders.created.hook", d.Connector())
	assert.Equal(t, "http: 500 Internal Server Error", d.Reason())
	assert.Equal(t, stream.DLQClassExhausted, d.ErrorClass())
	assert.EqualValues(t, 3, d.Attempts())
	assert.WithinDuration(t, time.Now(), d.Time(), time.Minute)
	assert.Equal(t, "e0", d.Event().ID())
	assert.Equal(t, map[string]any{"tenant": "blue"}, d.Event().Extensions(), "the original event, without the dead letter's extensions")

	// Pages of 2 over everything, in stream order.
	var all []string
	after := uint64(0)
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		dls, next, err := e.store.List(ctx, "acme", deadletter.Query{After: after, Limit: 2})
		require.NoError(t, err)
		all = append(all, ids(dls)...)
		if next == 0 {
			break
		}
		after = next
	}
	assert.Equal(t, []string{"e0", "e1", "e2", "e3", "e4", "e5", "other"}, all)

	tests := []struct {
		name     string
		q        deadletter.Query
		want     []string
		wantNext uint64
	}{
		{name: "by bus", q: deadletter.Query{Filter: deadletter.Filter{Bus: "billing"}, Limit: 10}, want: []string{"other"}},
		{name: "by target", q: deadletter.Query{Filter: deadletter.Filter{Bus: "orders", Rule: "created", Target: "audit"}, Limit: 10},
			want: []string{"e1", "e3", "e5"}},
		{name: "limit reached", q: deadletter.Query{Filter: deadletter.Filter{Bus: "orders", Rule: "created", Target: "audit"}, Limit: 2},
			want: []string{"e1", "e3"}, wantNext: 4},
		{name: "scan bounded", q: deadletter.Query{Filter: deadletter.Filter{Bus: "billing"}, Limit: 10, MaxScan: 3},
			want: nil, wantNext: 3},
		{name: "until", q: deadletter.Query{Limit: 10, Until: 2}, want: []string{"e0", "e1"}},
		{name: "after", q: deadletter.Query{Limit: 10, After: 5}, want: []string{"e5", "other"}},
		{name: "after the end", q: deadletter.Query{Limit: 10, After: 7}, want: nil},
		{name: "from the future", q: deadletter.Query{Filter: deadletter.Filter{From: time.Now().Add(time.Hour)}, Limit: 10}, want: nil},
		{name: "to the past", q: deadletter.Query{Filter: deadletter.Filter{To: time.Now().Add(-time.Hour)}, Limit: 10}, want: nil},
		{name: "time range around all", q: deadletter.Query{Filter: deadletter.Filter{Bus: "billing",
			From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour)}, Limit: 10}, want: []string{"other"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dls, next, err := e.store.List(ctx, "acme", tt.q)
			require.NoError(t, err)
			if tt.want == nil {
				assert.Empty(t, dls)
			} else {
				assert.Equal(t, tt.want, ids(dls))
			}
			assert.Equal(t, tt.wantNext, next)
		})
	}
}

func TestDeadLetterRedrive(t *testing.T) {
	t.Parallel()
	e := newDLQEnv(t)
	ctx := context.Background()
	// A bus stream made by an earlier version: no redrive subjects yet.
	_, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: e.names.BusStream("b1"),
		Subjects: []string{e.names.BusIn("b1"), "t.bus.b1.rule.*"}, Duplicates: stream.DuplicateWindow})
	require.NoError(t, err)
	seq := e.deadLetter(t, "e1", "orders", "created", "hook")
	keep := e.deadLetter(t, "e2", "orders", "created", "hook")
	stored, err := e.js.Stream(ctx, e.names.DLQStream("acme"))
	require.NoError(t, err)
	raw, err := stored.GetMsg(ctx, seq)
	require.NoError(t, err)
	dlqMsgID := raw.Header.Get(nats.MsgIdHdr)
	require.NotEmpty(t, dlqMsgID)

	to := deadletter.Destination{BusID: "b1", RuleID: "r1", TargetID: "t1"}
	require.NoError(t, e.store.Redrive(ctx, "acme", seq, to))

	redriveSubject := e.names.RedriveSubject("b1", "r1", "t1")
	bs, err := e.js.Stream(ctx, e.names.BusStream("b1"))
	require.NoError(t, err)
	assert.Contains(t, bs.CachedInfo().Config.Subjects, "t.bus.b1.redrive.*.*", "the stream got the redrive subjects")
	m, err := bs.GetMsg(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, redriveSubject, m.Subject)
	assert.Equal(t, stream.HopMsgID(dlqMsgID, "redrive", strconv.FormatUint(seq, 10)), m.Header.Get(nats.MsgIdHdr))
	for k := range m.Header {
		assert.NotContains(t, k, "eb-dlq", "no dead-letter header on the redriven event")
		assert.NotContains(t, k, "ebdlq", "no dead-letter extension on the redriven event")
	}
	ev, err := stream.Decode(&nats.Msg{Header: m.Header, Data: m.Data})
	require.NoError(t, err)
	assert.Equal(t, "e1", ev.ID())
	assert.Equal(t, map[string]any{"tenant": "blue"}, ev.Extensions())
	assert.JSONEq(t, `{"id":"e1"}`, string(ev.Data()))

	_, err = e.store.Get(ctx, "acme", seq)
	assert.ErrorIs(t, err, deadletter.ErrNotFound, "a redriven dead letter leaves the list")
	assert.ErrorIs(t, e.store.Redrive(ctx, "acme", seq, to), deadletter.ErrNotFound)
	_, err = e.store.Get(ctx, "acme", keep)
	assert.NoError(t, err, "the other dead letter stays")

	// The same redrive published again (a crash after the publish, before the delete) is stored once.
	again := stream.Encode(ev)
	again.Subject = redriveSubject
	again.Header.Set(nats.MsgIdHdr, m.Header.Get(nats.MsgIdHdr))
	ack, err := e.js.PublishMsg(ctx, again)
	require.NoError(t, err)
	assert.True(t, ack.Duplicate)

	// A destination bus whose stream is gone: the dead letter stays.
	err = e.store.Redrive(ctx, "acme", keep, deadletter.Destination{BusID: "gone", RuleID: "r1", TargetID: "t1"})
	require.Error(t, err)
	_, err = e.store.Get(ctx, "acme", keep)
	assert.NoError(t, err, "a failed redrive keeps the dead letter")
}

func TestDeadLetterDelete(t *testing.T) {
	t.Parallel()
	e := newDLQEnv(t)
	ctx := context.Background()
	a := e.deadLetter(t, "e1", "orders", "created", "hook")
	b := e.deadLetter(t, "e2", "orders", "created", "hook")
	require.NoError(t, e.store.Delete(ctx, "acme", a))
	assert.ErrorIs(t, e.store.Delete(ctx, "acme", a), deadletter.ErrNotFound)
	assert.ErrorIs(t, e.store.Delete(ctx, "acme", 99), deadletter.ErrNotFound)
	dls, _, err := e.store.List(ctx, "acme", deadletter.Query{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, []string{"e2"}, ids(dls))
	last, err := e.store.Last(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, b, last)
	require.NoError(t, e.store.Delete(ctx, "acme", b))
	dls, next, err := e.store.List(ctx, "acme", deadletter.Query{Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, dls)
	assert.Zero(t, next)
	last, err = e.store.Last(ctx, "acme")
	require.NoError(t, err)
	assert.Zero(t, last, fmt.Sprintf("no dead letter left (last was %d)", b))
}

// BenchmarkDeadLettersScan measures a list page whose filter selects nothing, so it reads ScanLimit (10,000) dead
// letters of a stream of that many: the cost of the longest page.
func BenchmarkDeadLettersScan(b *testing.B) {
	env := jetstreamtest.Start(b)
	ctx := context.Background()
	require.NoError(b, New(env.JS, "t", 1).EnsureDLQStream(ctx, "acme"))
	names := stream.Names{Cluster: "t"}
	futures := make([]jetstream.PubAckFuture, 0, deadletter.ScanLimit)
	for i := range deadletter.ScanLimit {
		ev := jetstreamtest.Event("e"+strconv.Itoa(i), "order.created", map[string]any{"i": i, "region": "eu"})
		f, err := env.JS.PublishMsgAsync(stream.EncodeDeadLetter(names.DLQSubject("acme"), ev, stream.DeadLetter{
			Reason: "http: 503", Attempts: 3, ErrorClass: stream.DLQClassExhausted, Connector: "eb.acme.orders.created.hook",
		}))
		require.NoError(b, err)
		futures = append(futures, f)
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			b.Fatal(err)
		}
	}
	store := NewDeadLetters(env.JS, "t")
	q := deadletter.Query{Filter: deadletter.Filter{Bus: "billing"}, Limit: 50, MaxScan: deadletter.ScanLimit}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		dls, next, err := store.List(ctx, "acme", q)
		if err != nil || len(dls) != 0 || next != 0 {
			b.Fatalf("%d dead letters, next %d, err %v", len(dls), next, err)
		}
	}
	b.ReportMetric(float64(b.N*deadletter.ScanLimit)/time.Since(start).Seconds(), "deadletters/s")
}

// BenchmarkDeadLetterRedrive measures one redrive: read the dead letter, store its event on the target's redrive
// subject and wait for the acknowledgement, delete the dead letter.
func BenchmarkDeadLetterRedrive(b *testing.B) {
	env := jetstreamtest.Start(b)
	ctx := context.Background()
	require.NoError(b, New(env.JS, "t", 1).EnsureDLQStream(ctx, "acme"))
	names := stream.Names{Cluster: "t"}
	_, err := env.JS.CreateStream(ctx, names.BusStreamConfig("b1", time.Hour, -1, 1))
	require.NoError(b, err)
	seqs := make([]uint64, b.N)
	for i := range b.N {
		ev := jetstreamtest.Event("e"+strconv.Itoa(i), "order.created", map[string]any{"i": i})
		ack, err := env.JS.PublishMsg(ctx, stream.EncodeDeadLetter(names.DLQSubject("acme"), ev, stream.DeadLetter{
			Reason: "http: 503", Attempts: 3, ErrorClass: stream.DLQClassExhausted, Connector: "eb.acme.orders.created.hook",
			MsgID: "m" + strconv.Itoa(i),
		}))
		require.NoError(b, err)
		seqs[i] = ack.Sequence
	}
	store := NewDeadLetters(env.JS, "t")
	to := deadletter.Destination{BusID: "b1", RuleID: "r1", TargetID: "t1"}
	b.ResetTimer()
	for _, seq := range seqs {
		if err := store.Redrive(ctx, "acme", seq, to); err != nil {
			b.Fatal(err)
		}
	}
}
