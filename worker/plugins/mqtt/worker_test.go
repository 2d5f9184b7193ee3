package mqtt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/mqtt"
	"github.com/eventbridge-go/eventbridge/worker/plugins/router"
)

// testToken is the cluster token of the tests' workers.
const testToken = "mqtt-test-cluster-token-0123456789ab"

var names = stream.Names{Cluster: "eb"}

const bus = "mqttbus00000000a"

// startWorker starts a worker with the MQTT plugins and the router on env's NATS server.
func startWorker(t *testing.T, env *jetstreamtest.Env, id string) (*worker.Worker, *rpc.Client) {
	t.Helper()
	r := connector.NewRegistry()
	require.NoError(t, r.Register(mqtt.SourcePlugin()))
	require.NoError(t, r.Register(mqtt.Plugin()))
	require.NoError(t, r.Register(router.Plugin()))
	w, err := worker.New(worker.Config{Token: testToken, NATS: env.Conn, WorkerID: id, RESTAddr: "127.0.0.1:0", Registry: r,
		AllowPrivateTargets: true, StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	return w, rpc.NewClient(w.URL(), rpc.WithToken(testToken))
}

func busEnv(t *testing.T) *jetstreamtest.Env {
	env := jetstreamtest.Start(t)
	require.NoError(t, names.EnsureBusStream(context.Background(), env.JS, bus, time.Hour, -1, 1))
	return env
}

func createConnector(t *testing.T, w *worker.Worker, name string, cfg map[string]string) {
	t.Helper()
	body, err := json.Marshal(rpc.CreateConnectorRequest{Name: name, Config: cfg})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, w.URL()+"/connectors", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", b)
}

func taskState(t *testing.T, c *rpc.Client, name string) rpc.TaskState {
	st, err := c.ConnectorStatus(context.Background(), name)
	if err != nil || len(st.Tasks) == 0 {
		return rpc.TaskState{}
	}
	return st.Tasks[0]
}

// An mqtt-source connector created through the worker's REST API feeds the bus; the QoS 1 messages published while
// no worker runs are on the bus once a worker returns; while the broker is down the task's status shows the
// connection error, and the source reconnects when the broker is back.
func TestSourceConnectorThroughTheWorker(t *testing.T) {
	b := startBroker(t, nil)
	env := busEnv(t)
	w1, client := startWorker(t, env, "w1")
	name := "eb.acct.plant.source.sensors"
	createConnector(t, w1, name, map[string]string{
		connector.KeyClass: mqtt.SourceName, connector.KeyOutputSubject: names.BusIn(bus),
		connector.KeyOutputStream: names.BusStream(bus), mqtt.KeyURL: b.URL(), mqtt.KeyTopics: "plant/+/temp",
	})
	require.Eventually(t, func() bool { return taskState(t, client, name).State == rpc.StateRunning }, wait, 20*time.Millisecond)

	publish := func(from, to int) {
		var msgs []outgoing
		for i := from; i < to; i++ {
			msgs = append(msgs, outgoing{topic: fmt.Sprintf("plant/%d/temp", i), payload: fmt.Appendf(nil, `{"c":%d}`, 20+i)})
		}
		publish5(t, b.addr(), msgs...)
	}
	onBus := func() []string {
		var subjects []string
		for _, m := range env.Messages(t, names.BusStream(bus), names.BusIn(bus)) {
			subjects = append(subjects, m.Event.Subject())
		}
		slices.Sort(subjects)
		return subjects
	}
	want := func(n int) []string {
		var s []string
		for i := range n {
			s = append(s, fmt.Sprintf("plant/%d/temp", i))
		}
		slices.Sort(s)
		return s
	}

	publish(0, 3)
	require.Eventually(t, func() bool { return len(onBus()) >= 3 }, wait, 20*time.Millisecond)
	assert.Equal(t, want(3), onBus())

	require.NoError(t, w1.Close(context.Background()))
	publish(3, 6) // no worker runs
	_, client = startWorker(t, env, "w2")
	require.Eventually(t, func() bool { return len(onBus()) >= 6 }, wait, 20*time.Millisecond)
	assert.Equal(t, want(6), onBus(), "the messages published while no worker ran, each once")

	b.Stop()
	require.Eventually(t, func() bool {
		st := taskState(t, client, name)
		return st.State == rpc.StateRunning && strings.Contains(st.Trace, "mqtt-source")
	}, wait, 20*time.Millisecond, "the task's status shows the connection error")
	b.Start()
	publish(6, 7)
	require.Eventually(t, func() bool { return len(onBus()) >= 7 }, wait, 20*time.Millisecond)
	assert.Equal(t, want(7), onBus())
	require.Eventually(t, func() bool { return taskState(t, client, name).Trace == "" }, wait, 20*time.Millisecond,
		"the error is cleared once the source reads again")
}

// A rule routes bus events to an mqtt target connector: a subscriber on the machine's broker receives the events
// the rule matched, on the topic built from each event.
func TestRuleToMQTTTarget(t *testing.T) {
	brokerURL := sharedBroker(t)
	base := unique("eb-test")
	sub := subscriber5(t, sharedBrokerAddr, base+"/#")
	env := busEnv(t)
	w, _ := startWorker(t, env, "w1")
	rules, err := json.Marshal([]router.Rule{{ID: "r1", Subject: names.RuleSubject(bus, "r1"),
		Pattern: json.RawMessage(`{"type": ["order.created"]}`)}})
	require.NoError(t, err)
	createConnector(t, w, "eb.acct.shop.router", map[string]string{
		connector.KeyClass: router.Name, connector.KeyTopics: names.BusIn(bus), connector.KeyStream: names.BusStream(bus),
		connector.KeyDurable: names.RouterConsumer(bus), router.KeyRules: string(rules),
	})
	createConnector(t, w, "eb.acct.shop.r1.devices", map[string]string{
		connector.KeyClass: mqtt.Name, connector.KeyTopics: names.RuleSubject(bus, "r1"),
		connector.KeyStream: names.BusStream(bus), connector.KeyDurable: names.TargetConsumer("r1", "t1"),
		mqtt.KeyURL: brokerURL, mqtt.KeyTopic: base + "/{type}/{$.data.id}",
	})
	for _, e := range []struct{ id, typ string }{{"o1", "order.created"}, {"o2", "order.cancelled"}, {"o3", "order.created"}} {
		env.Publish(t, names.BusIn(bus), jetstreamtest.Event(e.id, e.typ, map[string]any{"id": e.id}))
	}
	got := map[string]string{}
	for range 2 {
		m := next(t, sub)
		got[m.user["id"]] = m.topic
	}
	assert.Equal(t, map[string]string{"o1": base + "/order.created/o1", "o3": base + "/order.created/o3"}, got)
}
