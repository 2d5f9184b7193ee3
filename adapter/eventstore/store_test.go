package eventstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/stream"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

func newStore(tb testing.TB, syncAlways bool) (*Store, jetstream.JetStream) {
	tb.Helper()
	env := jetstreamtest.StartWith(tb, ebjs.ServerConfig{SyncAlways: syncAlways, SyncInterval: time.Second})
	return New(env.JS, "t", 1), env.JS
}

func newEvent(i int) *event.Event {
	e := event.New()
	e.SetID(fmt.Sprintf("id-%d", i))
	e.SetSource("bench")
	e.SetType("order.created")
	_ = e.SetData("application/json", map[string]any{"orderId": i, "amount": 12.5, "region": "eu"})
	return &e
}

func TestPutStoresDecodableEventsOnce(t *testing.T) {
	s, js := newStore(t, false)
	ctx := context.Background()
	b, err := bus.New("default", "orders", "", bus.Retention{}, time.Now())
	require.NoError(t, err)
	require.NoError(t, s.CreateStream(ctx, b))
	require.NoError(t, s.CreateStream(ctx, b), "CreateStream is idempotent")
	st, err := js.Stream(ctx, "t_BUS_"+b.ID())
	require.NoError(t, err)
	lastSeq := func() uint64 {
		last, err := s.LastSequence(ctx, b.ID())
		require.NoError(t, err)
		return last
	}
	outcomes := func(rs []bus.PutResult) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			require.NoError(t, r.Err)
			out[i] = map[bool]string{false: "stored", true: "duplicate"}[r.Duplicate]
		}
		return out
	}

	// A call is one record batch; the third event repeats the first and is stored once.
	events := []*event.Event{newEvent(1), newEvent(2), newEvent(1)}
	require.Equal(t, []string{"stored", "stored", "duplicate"}, outcomes(s.Put(ctx, b, events)))
	require.EqualValues(t, 1, lastSeq())
	msg, err := st.GetMsg(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, "t.bus."+b.ID()+".in", msg.Subject)
	require.Equal(t, stream.BatchMsgID([]string{stream.PutMsgID("bench", "id-1"), stream.PutMsgID("bench", "id-2")}),
		msg.Header.Get("Nats-Msg-Id"))
	stored, err := stream.DecodeAll(&nats.Msg{Subject: msg.Subject, Header: msg.Header, Data: msg.Data})
	require.NoError(t, err)
	require.Len(t, stored, 2)
	for i, e := range stored {
		require.Equal(t, fmt.Sprintf("id-%d", i+1), e.ID())
		require.Equal(t, "order.created", e.Type())
		require.JSONEq(t, fmt.Sprintf(`{"orderId":%d,"amount":12.5,"region":"eu"}`, i+1), string(e.Data()))
	}

	// The call retried with the same events in the same order is stored once.
	require.Equal(t, []string{"duplicate", "duplicate"}, outcomes(s.Put(ctx, b, []*event.Event{newEvent(1), newEvent(2)})))
	require.EqualValues(t, 1, lastSeq())

	// An event alone is a message of the binary mode with its own id; de-duplication is per message, so an event of
	// an earlier batch put alone is stored again (at least once), and put alone again it is stored once.
	require.Equal(t, []string{"stored"}, outcomes(s.Put(ctx, b, []*event.Event{newEvent(1)})))
	require.Equal(t, []string{"duplicate"}, outcomes(s.Put(ctx, b, []*event.Event{newEvent(1)})))
	require.EqualValues(t, 2, lastSeq())
	msg, err = st.GetMsg(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, stream.PutMsgID("bench", "id-1"), msg.Header.Get("Nats-Msg-Id"))
	require.Equal(t, "order.created", msg.Header.Get("ce-type"))
	require.JSONEq(t, `{"orderId":1,"amount":12.5,"region":"eu"}`, string(msg.Data))

	require.NoError(t, s.DeleteStream(ctx, b))
	require.NoError(t, s.DeleteStream(ctx, b), "DeleteStream is idempotent")
	_, err = s.LastSequence(ctx, b.ID())
	require.Error(t, err)
}

// A call larger than the server's max payload is split into record batches that each fit, in order; an event the
// store refuses is left out and the others are stored around it.
func TestPutSplitsACallAtTheMaxPayload(t *testing.T) {
	env := jetstreamtest.StartWith(t, ebjs.ServerConfig{MaxPayload: 64 << 10})
	s := New(env.JS, "t", 1)
	ctx := context.Background()
	b, err := bus.New("default", "orders", "", bus.Retention{}, time.Now())
	require.NoError(t, err)
	require.NoError(t, s.CreateStream(ctx, b))

	big := strings.Repeat("x", 20<<10)
	var events []*event.Event
	for i := range 10 {
		e := newEvent(i)
		_ = e.SetData("application/json", map[string]any{"n": i, "pad": big})
		events = append(events, e)
	}
	bad := newEvent(99)
	bad.SetSubject("a\x01b") // a control character: refused by Check, and the others stored around it
	events = append(events[:4], append([]*event.Event{bad}, events[4:]...)...)

	results := s.Put(ctx, b, events)
	for i, r := range results {
		if i == 4 {
			require.ErrorIs(t, r.Err, bus.ErrInvalidEvent)
			continue
		}
		require.NoError(t, r.Err, "event %d", i)
		require.False(t, r.Duplicate)
	}
	var got []string
	seqs := map[uint64]bool{}
	for _, m := range env.Messages(t, "t_BUS_"+b.ID(), "t.bus."+b.ID()+".in") {
		got = append(got, m.Event.ID())
		seqs[m.Seq] = true
	}
	require.Greater(t, len(seqs), 3, "10 events of 20 KiB do not fit 64 KiB")
	require.Less(t, len(seqs), 10, "but several fit in one message")
	require.Equal(t, []string{"id-0", "id-1", "id-2", "id-3", "id-4", "id-5", "id-6", "id-7", "id-8", "id-9"}, got)

	results = s.Put(ctx, b, events)
	for i, r := range results {
		if i != 4 {
			require.True(t, r.Duplicate, "event %d of the call put again", i)
		}
	}
	require.Len(t, env.Messages(t, "t_BUS_"+b.ID(), "t.bus."+b.ID()+".in"), len(got))
}

// BenchmarkPut measures stored events per second through Put in batches of 10 (one PutEvents call each), with
// JetStream flushing every second (the default) and on every write (--fsync always).
func BenchmarkPut(b *testing.B) {
	for _, always := range []bool{false, true} {
		name := "fsync=1s"
		if always {
			name = "fsync=always"
		}
		b.Run(name, func(b *testing.B) {
			s, _ := newStore(b, always)
			ctx := context.Background()
			bu, err := bus.New("default", "bench", "", bus.Retention{}, time.Now())
			require.NoError(b, err)
			require.NoError(b, s.CreateStream(ctx, bu))
			const batch = 10
			events := make([]*event.Event, batch)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				for j := range events {
					events[j] = newEvent(i*batch + j)
				}
				for _, r := range s.Put(ctx, bu, events) {
					if r.Err != nil {
						b.Fatal(r.Err)
					}
				}
			}
			b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "events/s")
		})
	}
}

func TestCreateStreamEnsuresTheAccountDLQStream(t *testing.T) {
	s, js := newStore(t, false)
	ctx := context.Background()
	b1, err := bus.New("default", "orders", "", bus.Retention{}, time.Now())
	require.NoError(t, err)
	b2, err := bus.New("default", "billing", "", bus.Retention{}, time.Now())
	require.NoError(t, err)
	require.NoError(t, s.CreateStream(ctx, b1))
	require.NoError(t, s.CreateStream(ctx, b2), "the account's dead-letter stream is shared and ensured again")
	st, err := js.Stream(ctx, "t_DLQ_default")
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"t.dlq.default"}, info.Config.Subjects)
	require.Equal(t, stream.DLQRetention, info.Config.MaxAge)
	require.Equal(t, stream.DuplicateWindow, info.Config.Duplicates)
}

// With a Publisher, Put publishes on its connection, and the store's own connection carries none of the events:
// PutEvents' acknowledgements do not share a connection with the control plane's JetStream requests.
func TestPutPublishesOnThePublisher(t *testing.T) {
	env := jetstreamtest.StartWith(t, ebjs.ServerConfig{})
	s := New(env.JS, "t", 1)
	putNC := jetstreamtest.Connect(t, env.Server)
	pub, err := jetstream.New(putNC)
	require.NoError(t, err)
	s.Publisher = pub
	ctx := context.Background()
	b, err := bus.New("default", "orders", "", bus.Retention{}, time.Now())
	require.NoError(t, err)
	require.NoError(t, s.CreateStream(ctx, b))

	own, put := env.Conn.Stats(), putNC.Stats()
	for i := range 5 {
		for _, r := range s.Put(ctx, b, []*event.Event{newEvent(2 * i), newEvent(2*i + 1)}) {
			require.NoError(t, r.Err)
		}
	}
	require.EqualValues(t, 5, putNC.Stats().OutMsgs-put.OutMsgs, "one record batch per call, on the publisher's connection")
	require.EqualValues(t, 5, putNC.Stats().InMsgs-put.InMsgs, "and its acknowledgements")
	require.Zero(t, env.Conn.Stats().OutMsgs-own.OutMsgs, "nothing on the store's own connection")
	require.Len(t, env.Messages(t, "t_BUS_"+b.ID(), "t.bus."+b.ID()+".in"), 10, "every event stored")
}
