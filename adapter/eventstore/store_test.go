package eventstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
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

	events := []*event.Event{newEvent(1), newEvent(2), newEvent(1)} // the third repeats the first
	for _, r := range s.Put(ctx, b, events) {
		require.NoError(t, r.Err)
	}
	last, err := s.LastSequence(ctx, b.ID())
	require.NoError(t, err)
	require.EqualValues(t, 2, last, "a repeated source+id is stored once")

	st, err := js.Stream(ctx, "t_BUS_"+b.ID())
	require.NoError(t, err)
	msg, err := st.GetMsg(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, "t.bus."+b.ID()+".in", msg.Subject)
	require.Equal(t, stream.PutMsgID("bench", "id-1"), msg.Header.Get("Nats-Msg-Id"))
	require.Equal(t, "order.created", msg.Header.Get("ce-type"))
	require.JSONEq(t, `{"orderId":1,"amount":12.5,"region":"eu"}`, string(msg.Data))

	require.NoError(t, s.DeleteStream(ctx, b))
	require.NoError(t, s.DeleteStream(ctx, b), "DeleteStream is idempotent")
	_, err = s.LastSequence(ctx, b.ID())
	require.Error(t, err)
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
