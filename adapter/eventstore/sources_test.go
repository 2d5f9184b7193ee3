package eventstore

import (
	"context"
	"testing"
	"time"

	cloudevent "github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/stream"
)

// A webhook's event is stored on its source's intake subject, also in a stream made by an earlier version
// (without the source family), with an id of its own hop: the same event moved to .in by the source's connector
// (with PutMsgID) is not taken for a duplicate. PurgeSource removes the intake and nothing else.
func TestPutSourceEventAndPurge(t *testing.T) {
	s, js := newStore(t, false)
	ctx := context.Background()
	b, err := bus.New("default", "orders", "", bus.Retention{}, time.Now())
	require.NoError(t, err)
	names := stream.Names{Cluster: "t"}
	cfg := names.BusStreamConfig(b.ID(), time.Hour, 1<<30, 1)
	cfg.Subjects = []string{names.BusIn(b.ID()), names.RuleSubject(b.ID(), "*")} // as an earlier version made it
	_, err = js.CreateStream(ctx, cfg)
	require.NoError(t, err)

	e := newEvent(1)
	require.NoError(t, s.PutSourceEvent(ctx, b.ID(), "src1", e))
	require.NoError(t, s.PutSourceEvent(ctx, b.ID(), "src2", newEvent(2)))
	for _, r := range s.Put(ctx, b, []*cloudevent.Event{e}) {
		require.NoError(t, r.Err)
	}
	st, err := js.Stream(ctx, names.BusStream(b.ID()))
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	assert.Contains(t, info.Config.Subjects, names.SourceSubject(b.ID(), "*"), "the source family was added")
	assert.EqualValues(t, 3, info.State.Msgs, "the event moved to .in is not a duplicate of its intake copy")

	m, err := st.GetLastMsgForSubject(ctx, names.SourceSubject(b.ID(), "src1"))
	require.NoError(t, err)
	got, err := stream.Decode(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
	require.NoError(t, err)
	assert.Equal(t, e.ID(), got.ID())

	require.NoError(t, s.PurgeSource(ctx, b.ID(), "src1"))
	_, err = st.GetLastMsgForSubject(ctx, names.SourceSubject(b.ID(), "src1"))
	assert.Error(t, err, "src1's intake is purged")
	_, err = st.GetLastMsgForSubject(ctx, names.SourceSubject(b.ID(), "src2"))
	assert.NoError(t, err, "another source's intake is kept")
	_, err = st.GetLastMsgForSubject(ctx, names.BusIn(b.ID()))
	assert.NoError(t, err, "the bus's events are kept")
	require.NoError(t, s.PurgeSource(ctx, "nosuchbus", "src1"), "a missing stream is not an error")
}
