package stream_test

import (
	"strings"
	"testing"

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
	c := n.DLQStreamConfig("default", 0)
	assert.Equal(t, []string{"eb.dlq.default"}, c.Subjects)
	assert.Equal(t, 1, c.Replicas)
	assert.Equal(t, stream.DLQRetention, c.MaxAge)
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
