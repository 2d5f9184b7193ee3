//go:build slow

package main

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	pahomqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
)

// TestSlowMQTTSourceLosesNothingWhenItsWorkerIsKilled runs an mqtt-source connector on a cmd/worker process against
// the machine's Mosquitto: QoS 1 messages published before the worker is SIGKILLed, and while no worker runs, are
// all on the bus once a worker returns (the source's persistent session keeps them at the broker, and it acks a
// message only after the bus stored it).
func TestSlowMQTTSourceLosesNothingWhenItsWorkerIsKilled(t *testing.T) {
	c := newCluster(t)
	w := c.start("m1")
	topic := "eb-slow/" + domain.NewID()
	const connector = "mqtt-in"
	_, err := w.client().CreateConnector(context.Background(), rpc.CreateConnectorRequest{Name: connector, Config: map[string]string{
		rpc.ConfigConnectorClass: "mqtt-source", rpc.ConfigTasksMax: "1",
		"output.subject": clusterNames.BusIn(clusterBus), "output.stream": clusterNames.BusStream(clusterBus),
		"mqtt.url": "tcp://127.0.0.1:1883", "mqtt.topics": topic + "/#", "mqtt.qos": "1",
		"mqtt.client.id": "eb-slow-" + domain.NewID(),
	}})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := w.client().ConnectorStatus(context.Background(), connector)
		return err == nil && len(st.Tasks) == 1 && st.Tasks[0].State == rpc.StateRunning
	}, waitLong, 20*time.Millisecond, "the source runs: %s", w.out)

	pub := pahomqtt.NewClient(pahomqtt.NewClientOptions().AddBroker("tcp://127.0.0.1:1883").SetClientID("pub-" + domain.NewID()))
	tok := pub.Connect()
	require.True(t, tok.WaitTimeout(10*time.Second) && tok.Error() == nil, "connecting: %v", tok.Error())
	defer pub.Disconnect(100)
	publish := func(prefix string, n int) {
		for i := range n {
			tok := pub.Publish(fmt.Sprintf("%s/%s", topic, prefix), 1, false, fmt.Sprintf(`{"n":"%s-%03d"}`, prefix, i))
			require.True(t, tok.WaitTimeout(10*time.Second) && tok.Error() == nil, "publishing: %v", tok.Error())
		}
	}
	onBus := func() map[string]int {
		seen := map[string]int{}
		cons, err := c.js.OrderedConsumer(context.Background(), clusterNames.BusStream(clusterBus),
			jetstream.OrderedConsumerConfig{FilterSubjects: []string{clusterNames.BusIn(clusterBus)}})
		require.NoError(t, err)
		for {
			batch, err := cons.FetchNoWait(500)
			require.NoError(t, err)
			n := 0
			for m := range batch.Messages() {
				n++
				e, err := stream.Decode(&nats.Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()})
				require.NoError(t, err)
				var data struct{ N string }
				if e.DataAs(&data) == nil && data.N != "" {
					seen[data.N]++
				}
			}
			if n == 0 {
				return seen
			}
		}
	}
	want := func(prefixes ...string) func() bool {
		return func() bool {
			seen := onBus()
			for _, p := range prefixes {
				for i := range 20 {
					if seen[fmt.Sprintf("%s-%03d", p, i)] == 0 {
						return false
					}
				}
			}
			return true
		}
	}

	publish("before", 20)
	require.Eventually(t, want("before"), waitLong, 50*time.Millisecond, "the messages reach the bus")

	// Published while the worker dies and while none runs: the broker holds them for the source's session.
	publish("during", 10)
	w.signal(t, syscall.SIGKILL)
	<-w.done
	publish("while-down", 20)
	c.start("m2") // takes the task once the dead worker's lease expired
	require.Eventually(t, want("before", "while-down"), waitLong, 50*time.Millisecond, "everything published reaches the bus")
	seen := onBus()
	for i := range 10 {
		require.NotZero(t, seen[fmt.Sprintf("during-%03d", i)], "during-%03d", i)
	}
	dups := 0
	for _, n := range seen {
		if n > 1 {
			dups++
		}
	}
	t.Logf("%d messages on the bus, %d stored more than once", len(seen), dups)
}
