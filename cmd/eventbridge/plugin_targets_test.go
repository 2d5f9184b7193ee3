package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	pahomqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
)

// mosquitto is the MQTT broker of the machine (.ci/run makes sure it runs).
const mosquitto = "tcp://127.0.0.1:1883"

// A target of a sink plugin's type is configured with the plugin's own keys, validated by the runtime: a rule
// routes bus events to an mqtt target and a subscriber receives them on the topic built from each event.
func TestMQTTTargetDeliversToASubscriber(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	prefix := "eb-test/" + domain.NewID()

	var mu sync.Mutex
	got := map[string]map[string]any{} // topic -> structured CloudEvent
	opts := pahomqtt.NewClientOptions().AddBroker(mosquitto).SetClientID("sub-" + domain.NewID())
	sub := pahomqtt.NewClient(opts)
	tok := sub.Connect()
	require.True(t, tok.WaitTimeout(10*time.Second) && tok.Error() == nil, "connecting to mosquitto: %v", tok.Error())
	defer sub.Disconnect(100)
	tok = sub.Subscribe(prefix+"/#", 1, func(_ pahomqtt.Client, msg pahomqtt.Message) {
		var ce map[string]any
		if json.Unmarshal(msg.Payload(), &ce) != nil {
			ce = map[string]any{"raw": string(msg.Payload())}
		}
		mu.Lock()
		got[msg.Topic()] = ce
		mu.Unlock()
	})
	require.True(t, tok.WaitTimeout(10*time.Second) && tok.Error() == nil, "subscribing: %v", tok.Error())

	a.must("POST", "/api/v1/buses", map[string]any{"name": "devices"}, 201)
	a.must("POST", "/api/v1/buses/devices/rules", map[string]any{"name": "readings",
		"eventPattern": map[string]any{"type": []any{"reading"}}}, 201)
	out := a.must("PUT", "/api/v1/buses/devices/rules/readings/targets/broker", map[string]any{
		"type": "mqtt",
		"config": map[string]any{"mqtt.url": mosquitto, "mqtt.version": "3.1.1", "mqtt.qos": 1,
			"mqtt.topic": prefix + "/{subject}/{$.data.kind}", "mqtt.username": "eb", "mqtt.password": "s3cret"},
	}, 201)
	require.NotContains(t, string(out), "s3cret", "secret values are never answered")
	var tg struct {
		Type   string            `json:"type"`
		Config map[string]string `json:"config"`
	}
	require.NoError(t, json.Unmarshal(out, &tg))
	require.Equal(t, "mqtt", tg.Type)
	require.Equal(t, "1", tg.Config["mqtt.qos"], "numbers are kept as the connector config's strings")
	require.Equal(t, "***", tg.Config["mqtt.password"])

	// Given back as answered, the masked secret stays stored (the connector config still holds it sealed).
	tg.Config["mqtt.qos"] = "1"
	a.must("PUT", "/api/v1/buses/devices/rules/readings/targets/broker", map[string]any{"type": "mqtt", "config": tg.Config}, 200)
	cfg, err := workerClient(m).GetConnectorConfig(context.Background(), "eb.default.devices.readings.broker")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(cfg["mqtt.password"], "enc:v2:"), "the connector holds the secret sealed for itself: %q", cfg["mqtt.password"])
	require.Equal(t, "mqtt", cfg["connector.class"])

	var batch []map[string]any
	want := map[string]string{}
	for i := range 5 {
		e := event(fmt.Sprintf("r-%d", i), "sensors", "reading", map[string]any{"kind": "temp", "v": i})
		e["subject"] = fmt.Sprintf("dev%d", i)
		batch = append(batch, e)
		want[fmt.Sprintf("%s/dev%d/temp", prefix, i)] = fmt.Sprintf("r-%d", i)
	}
	batch = append(batch, event("other", "sensors", "alarm", map[string]any{"kind": "temp"}))
	a.putBatch("devices", batch)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= len(want)
	}, 30*time.Second, 20*time.Millisecond, "the subscriber receives every matching event")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, len(want), "only the matching events are published: %v", got)
	for topic, id := range want {
		require.Contains(t, got, topic)
		require.Equal(t, id, got[topic]["id"], "MQTT 3.1.1 carries the structured CloudEvent")
	}
}

// Plugin targets get clear errors: a type that is no sink plugin, the plugin's own validation naming the key, and
// keys the control plane sets itself.
func TestPluginTargetErrors(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "b"}, 201)
	a.must("POST", "/api/v1/buses/b/rules", map[string]any{"name": "r", "eventPattern": map[string]any{"type": []any{"x"}}}, 201)
	cases := []struct {
		name   string
		target map[string]any
		field  string
		says   string
	}{
		{"not a sink plugin", map[string]any{"type": "nosuch", "config": map[string]any{}}, "type", "mqtt"},
		{"a source plugin", map[string]any{"type": "eventbus-source", "config": map[string]any{}}, "type", ""},
		{"plugin validation", map[string]any{"type": "mqtt", "config": map[string]any{"mqtt.url": "ftp://x", "mqtt.topic": "a/{"}}, "config.mqtt.url", "config.mqtt.topic"},
		{"missing required key", map[string]any{"type": "mqtt", "config": map[string]any{"mqtt.url": mosquitto}}, "config.mqtt.topic", ""},
		{"a key the control plane sets", map[string]any{"type": "mqtt", "config": map[string]any{"topics": "x"}}, "config.topics", ""},
		{"plugin keys on an http target", map[string]any{"type": "http", "config": map[string]any{"url": "http://127.0.0.1:1/", "mqtt.topic": "x"}}, "config.mqtt.topic", ""},
		{"null value", map[string]any{"type": "mqtt", "config": map[string]any{"mqtt.url": nil}}, "", "null"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := a.must("PUT", "/api/v1/buses/b/rules/r/targets/t", tc.target, 400)
			var p struct {
				Field  string `json:"field"`
				Detail string `json:"detail"`
			}
			require.NoError(t, json.Unmarshal(out, &p))
			if tc.field != "" {
				require.Contains(t, string(out), tc.field)
			}
			if tc.says != "" {
				require.True(t, strings.Contains(p.Detail, tc.says), "detail %q should mention %q", p.Detail, tc.says)
			}
		})
	}
}
