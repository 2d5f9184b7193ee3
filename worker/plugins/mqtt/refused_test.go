package mqtt_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/mqtt"
)

// TestSourceDeadLettersWhatTheStoreRefuses: MQTT messages carrying CloudEvents the store's invariant refuses (a NUL
// in type, a subject too large for the stored form's headers) go to the dead letters with their reason, the whole
// event in the stand-in's data, while the messages around them are stored and the source keeps running.
func TestSourceDeadLettersWhatTheStoreRefuses(t *testing.T) {
	brokerURL := sharedBroker(t)
	topic := unique("eb-test") + "/refused"
	clientID := unique("eb-refused")
	t.Cleanup(func() { dropSession(t, mqtt.Version5, brokerURL, clientID) })
	src, err := mqtt.NewSource(sourceValues(map[string]string{mqtt.KeyURL: brokerURL, mqtt.KeyTopics: topic,
		mqtt.KeyClientID: clientID, mqtt.KeyQoS: "1"}), connector.Env{Egress: localBrokers, Connector: "refused"})
	require.NoError(t, err)

	env := jetstreamtest.Start(t)
	env.Stream(t, "BUS", "bus.in")
	env.Stream(t, "DLQ", "dlq.acct")
	task, err := delivery.StartSource(context.Background(), delivery.SourceTaskConfig{
		Source: src, JetStream: env.JS, Subject: "bus.in", Stream: "BUS", Tolerance: connector.ToleranceAll,
		DLQSubject: "dlq.acct", Connector: "eb.acct.orders.refused",
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })

	ce := func(id, typ, extra string) outgoing {
		return outgoing{topic: topic, contentType: mqtt.StructuredContentType,
			payload: []byte(`{"specversion":"1.0","id":"` + id + `","source":"/sensors","type":"` + typ + `"` + extra + `,"data":{"v":1}}`)}
	}
	hugeSubject := strings.Repeat("s", 70_000)
	publish5(t, sharedBrokerAddr,
		ce("ok-1", "reading", ""),
		ce("nul-type", `read\u0000ing`, ""),
		ce("huge-subject", "reading", `,"subject":"`+hugeSubject+`"`),
		ce("ok-2", "reading", ""))

	require.Eventually(t, func() bool { return len(env.Messages(t, "BUS", "bus.in")) == 2 && len(deadLetters(t, env)) == 2 },
		wait, 20*time.Millisecond)
	var stored []string
	for _, m := range env.Messages(t, "BUS", "bus.in") {
		stored = append(stored, m.Event.ID())
	}
	assert.Equal(t, []string{"ok-1", "ok-2"}, stored)

	byID := map[string]deadLetter{}
	for _, d := range deadLetters(t, env) {
		byID[d.event.ID()] = d
	}
	nul := byID["nul-type"]
	require.NotNil(t, nul.event, "the NUL-in-type event is dead-lettered under its id")
	assert.Contains(t, nul.info.Reason, "type")
	assert.Contains(t, nul.info.Reason, "control character")
	assert.Equal(t, stream.DLQClassPermanent, nul.info.ErrorClass)
	assert.Equal(t, "eb.acct.orders.refused", nul.info.Connector)
	assert.Equal(t, stream.StandInType, nul.event.Type(), "a type CloudEvents forbids is not kept")
	assert.Equal(t, "/sensors", nul.event.Source())
	assert.Equal(t, true, nul.event.Extensions()[stream.ExtStandIn])
	original, err := cloudevent.Unmarshal(nul.event.Data())
	require.NoError(t, err, "the stand-in's data is the refused event in the JSON format")
	assert.Equal(t, "read\x00ing", original.Type())
	assert.JSONEq(t, `{"v":1}`, string(original.Data()))

	huge := byID["huge-subject"]
	require.NotNil(t, huge.event)
	assert.Contains(t, huge.info.Reason, "subject")
	assert.Equal(t, "reading", huge.event.Type())
	original, err = cloudevent.Unmarshal(huge.event.Data())
	require.NoError(t, err)
	assert.Equal(t, hugeSubject, original.Subject(), "the whole event is kept")

	c := task.Counters()
	assert.EqualValues(t, 2, c.DeadLettered)
	assert.EqualValues(t, 0, c.Dropped)
	assert.EqualValues(t, 2, c.Written)
}

type deadLetter struct {
	event *event.Event
	info  stream.DeadLetter
}

func deadLetters(t *testing.T, env *jetstreamtest.Env) []deadLetter {
	t.Helper()
	ctx := context.Background()
	s, err := env.JS.Stream(ctx, "DLQ")
	require.NoError(t, err)
	var out []deadLetter
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			require.ErrorIs(t, err, jetstream.ErrMsgNotFound)
			return out
		}
		e, d, err := stream.DecodeDeadLetter(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
		require.NoError(t, err)
		out = append(out, deadLetter{event: e, info: d})
	}
}
