package eventstore

import (
	"context"
	"testing"
	"time"

	cloudevent "github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/stream"
)

// A webhook's event is stored once, on the bus's .in subject, with the id PutEvents gives it: the same request
// stored again inside the duplicate window is acknowledged as a duplicate, as a retried PutEvents is.
func TestPutWebhookEvent(t *testing.T) {
	s, js := newStore(t, false)
	ctx := context.Background()
	b, err := bus.New("default", "orders", "", bus.Retention{}, time.Now())
	require.NoError(t, err)
	require.NoError(t, s.CreateStream(ctx, b))
	names := stream.Names{Cluster: "t"}

	e := newEvent(1)
	for i, want := range []bool{false, true} {
		duplicate, err := s.PutWebhookEvent(ctx, b, e)
		require.NoError(t, err, "a duplicate is acknowledged")
		assert.Equal(t, want, duplicate, "put %d", i)
	}
	_, err = s.PutWebhookEvent(ctx, b, newEvent(2))
	require.NoError(t, err)
	st, err := js.Stream(ctx, names.BusStream(b.ID()))
	require.NoError(t, err)
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(names.BusIn(b.ID())))
	require.NoError(t, err)
	assert.EqualValues(t, 2, info.State.Msgs, "stored once each, on .in, the duplicate not again")
	assert.EqualValues(t, 2, info.State.Subjects[names.BusIn(b.ID())])

	m, err := st.GetMsg(ctx, info.State.FirstSeq)
	require.NoError(t, err)
	got, err := stream.Decode(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
	require.NoError(t, err)
	assert.Equal(t, e.ID(), got.ID())
	assert.Equal(t, stream.PutMsgID(e.Source(), e.ID()), m.Header.Get(nats.MsgIdHdr), "PutEvents' id")

	bad := newEvent(3)
	bad.SetExtension("bad", "a\x01b")
	_, err = s.PutWebhookEvent(ctx, b, bad)
	require.Error(t, err)
	assert.ErrorIs(t, err, bus.ErrInvalidEvent, "the store's invariant runs on webhooks too")
}

// PurgeSource removes what a source's intake still holds (stored there by earlier versions) and nothing else,
// also in a stream made by an earlier version.
func TestPurgeSource(t *testing.T) {
	s, js := newStore(t, false)
	ctx := context.Background()
	b, err := bus.New("default", "orders", "", bus.Retention{}, time.Now())
	require.NoError(t, err)
	names := stream.Names{Cluster: "t"}
	cfg := names.BusStreamConfig(b.ID(), time.Hour, 1<<30, 1)
	_, err = js.CreateStream(ctx, cfg)
	require.NoError(t, err)

	for _, src := range []string{"src1", "src2"} {
		m := stream.Encode(newEvent(1))
		m.Subject = names.SourceSubject(b.ID(), src)
		_, err := js.PublishMsg(ctx, m)
		require.NoError(t, err)
	}
	for _, r := range s.Put(ctx, b, []*cloudevent.Event{newEvent(2)}) {
		require.NoError(t, r.Err)
	}
	st, err := js.Stream(ctx, names.BusStream(b.ID()))
	require.NoError(t, err)

	require.NoError(t, s.PurgeSource(ctx, b.ID(), "src1"))
	_, err = st.GetLastMsgForSubject(ctx, names.SourceSubject(b.ID(), "src1"))
	assert.Error(t, err, "src1's intake is purged")
	_, err = st.GetLastMsgForSubject(ctx, names.SourceSubject(b.ID(), "src2"))
	assert.NoError(t, err, "another source's intake is kept")
	_, err = st.GetLastMsgForSubject(ctx, names.BusIn(b.ID()))
	assert.NoError(t, err, "the bus's events are kept")
	require.NoError(t, s.PurgeSource(ctx, "nosuchbus", "src1"), "a missing stream is not an error")
}
