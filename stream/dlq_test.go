package stream_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

func TestDLQNames(t *testing.T) {
	n := stream.Names{Cluster: "eb"}
	assert.Equal(t, "eb_DLQ_default", n.DLQStream("default"))
	assert.Equal(t, "eb.dlq.default", n.DLQSubject("default"))
	c := n.DLQStreamConfig("default", 0, stream.DLQLimits{})
	assert.Equal(t, []string{"eb.dlq.default"}, c.Subjects)
	assert.Equal(t, 1, c.Replicas)
	assert.Equal(t, stream.DLQRetention, c.MaxAge)
	assert.EqualValues(t, stream.DLQMaxBytes, c.MaxBytes, "dead letters are bounded by default")
	c = n.DLQStreamConfig("default", 3, stream.DLQLimits{MaxAge: time.Hour, MaxBytes: 1 << 20})
	assert.Equal(t, time.Hour, c.MaxAge)
	assert.EqualValues(t, 1<<20, c.MaxBytes)
}

// TestDLQAtItsLimit: a dead-letter stream that holds its bound takes every new dead letter and deletes the oldest
// to make room, as documented; it never refuses one.
func TestDLQAtItsLimit(t *testing.T) {
	env := jetstreamtest.Start(t)
	n := stream.Names{Cluster: "t"}
	ctx := context.Background()
	const bound = 64 << 10
	require.NoError(t, n.EnsureDLQStream(ctx, env.JS, "acme", 1, stream.DLQLimits{MaxBytes: bound}))
	body := strings.Repeat("x", 1<<10)
	for i := range 300 { // about 4.5 times the bound
		e := event.New()
		e.SetID(fmt.Sprintf("dl-%d", i))
		e.SetSource("/s")
		e.SetType("t")
		require.NoError(t, e.SetData("text/plain", body))
		m := stream.EncodeDeadLetter(n.DLQSubject("acme"), &e, stream.DeadLetter{Reason: "failing", Attempts: 1,
			Connector: "eb.acme.b.r.t", ErrorClass: stream.DLQClassExhausted, MsgID: fmt.Sprintf("m-%d", i)})
		_, err := env.JS.PublishMsg(ctx, m)
		require.NoErrorf(t, err, "dead letter %d refused", i)
	}
	s, err := env.JS.Stream(ctx, n.DLQStream("acme"))
	require.NoError(t, err)
	info, err := s.Info(ctx)
	require.NoError(t, err)
	assert.LessOrEqual(t, info.State.Bytes, uint64(bound), "the stream stays within its bound")
	assert.EqualValues(t, 300, info.State.LastSeq, "the newest dead letter is kept")
	assert.Greater(t, info.State.FirstSeq, uint64(1), "the oldest were deleted to make room")
	last, err := s.GetMsg(ctx, info.State.LastSeq)
	require.NoError(t, err)
	e, _, err := stream.DecodeDeadLetter(&nats.Msg{Header: last.Header, Data: last.Data})
	require.NoError(t, err)
	assert.Equal(t, "dl-299", e.ID())
}

func TestDeadLetterRoundTrip(t *testing.T) {
	e := jetstreamtest.Event("x", "order.created", map[string]any{"n": 1})
	e.SetExtension("traceparent", "00-abc")
	d := stream.DeadLetter{
		Reason: "giving up\nafter 3", Attempts: 3, Connector: "c", ErrorClass: stream.DLQClassExhausted,
		Stream: "S", Sequence: 9, Subject: "s.in", MsgID: "m1",
	}
	m := stream.EncodeDeadLetter("eb.dlq.default", e, d)
	assert.Equal(t, "eb.dlq.default", m.Subject)
	assert.Equal(t, stream.HopMsgID("m1", "dlq", "c"), m.Header.Get(nats.MsgIdHdr))
	assert.Equal(t, stream.DLQMsgID("m1", "c"), m.Header.Get(nats.MsgIdHdr))
	assert.NotEqual(t, stream.DLQMsgID("m1", "c"), stream.DLQMsgID("m1", "other"), "two connectors' dead letters are two")
	got, gd, err := stream.DecodeDeadLetter(m)
	require.NoError(t, err)
	assert.Equal(t, e.ID(), got.ID())
	assert.Equal(t, e.Type(), got.Type())
	assert.Equal(t, "00-abc", got.Extensions()["traceparent"])
	assert.JSONEq(t, string(e.Data()), string(got.Data()))
	assert.Equal(t, "giving up after 3", gd.Reason, "a reason is one header line")
	d.Reason, d.MsgID = gd.Reason, ""
	assert.Equal(t, d, gd)

	long := stream.EncodeDeadLetter("s", e, stream.DeadLetter{Reason: strings.Repeat("x", 10000)})
	assert.LessOrEqual(t, len(long.Header.Get(stream.HeaderDLQReason)), 2048)
}
