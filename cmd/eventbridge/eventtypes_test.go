package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	pahomqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
)

// listedType is the part of an event type these tests read.
type listedType struct {
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Count           int64           `json:"count"`
	Schema          json.RawMessage `json:"schema"`
	SchemaVersion   int             `json:"schemaVersion"`
	PreviousSchemas []struct {
		Version int             `json:"version"`
		Schema  json.RawMessage `json:"schema"`
	} `json:"previousSchemas"`
}

// TestEventTypesFromAllTraffic: event types are learned from what the bus's router routes, whatever way the
// events came in: a webhook source, an MQTT source (the machine's Mosquitto) and PutEvents, each counted once; a
// change of a type's inferred schema keeps the one before as a version.
func TestEventTypesFromAllTraffic(t *testing.T) {
	t.Parallel()
	m := startMain(t, t.TempDir(), "--event-types-interval", "300ms")
	t.Cleanup(func() { _ = m.Close() })
	a := apiOf(t, m)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "all"}, 201)
	hook := decodeSource(t, a.must("POST", "/api/v1/buses/all/sources", map[string]any{"name": "hook", "type": "http"}, 201))
	require.NotNil(t, hook.Webhook)
	topic := "eb-types-test/" + domain.NewID()
	a.must("POST", "/api/v1/buses/all/sources", map[string]any{"name": "mq", "type": "mqtt",
		"config": map[string]any{"mqtt.url": "tcp://127.0.0.1:1883", "mqtt.topics": topic}}, 201)
	list := func() map[string]listedType {
		var out struct{ EventTypes []listedType }
		require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/buses/all/event-types", nil, 200), &out))
		byType := map[string]listedType{}
		for _, et := range out.EventTypes {
			byType[et.Type] = et
		}
		return byType
	}
	waitType := func(typ string, ok func(listedType) bool, why string) listedType {
		t.Helper()
		var et listedType
		require.Eventuallyf(t, func() bool {
			var found bool
			et, found = list()[typ]
			return found && ok(et)
		}, 30*time.Second, 100*time.Millisecond, "%s: %v", why, list())
		return et
	}

	// A webhook request.
	require.Eventually(t, func() bool {
		resp, err := http.Post(hook.Webhook.URLs[0], "application/json", bytes.NewReader([]byte(`{"ref": "main"}`)))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 100*time.Millisecond, "the webhook takes a request")
	web := waitType("eventbridge:Events:HTTPEvent", func(et listedType) bool { return et.Count >= 1 }, "the webhook's event type")
	assert.Equal(t, "eventbridge:webhook:hook", web.Source)
	assert.EqualValues(t, 1, web.Count, "counted once")

	// An MQTT message (the source subscribes once it runs: publish until one arrives).
	c := pahomqtt.NewClient(pahomqtt.NewClientOptions().AddBroker("tcp://127.0.0.1:1883").SetClientID("pub-" + domain.NewID()))
	tok := c.Connect()
	require.True(t, tok.WaitTimeout(10*time.Second))
	require.NoError(t, tok.Error())
	t.Cleanup(func() { c.Disconnect(100) })
	require.Eventually(t, func() bool {
		pt := c.Publish(topic, 1, false, []byte(`{"temperature": 21.5}`))
		pt.WaitTimeout(5 * time.Second)
		_, ok := list()["eventbridge:Events:MQTTMessage"]
		return ok
	}, 30*time.Second, time.Second, "the MQTT source's event type")
	mq := list()["eventbridge:Events:MQTTMessage"]
	assert.Contains(t, mq.Source, "mqtt://127.0.0.1:1883/"+topic)
	assert.Contains(t, string(mq.Schema), "temperature")

	// PutEvents, then data of another shape: a new schema version.
	a.putBatch("all", []map[string]any{event("o1", "shop", "order.created", map[string]any{"id": 1})})
	v1 := waitType("order.created", func(et listedType) bool { return et.Count == 1 }, "the put event's type")
	assert.Equal(t, 1, v1.SchemaVersion)
	assert.Empty(t, v1.PreviousSchemas)
	a.putBatch("all", []map[string]any{event("o2", "shop", "order.created", map[string]any{"id": 2, "note": "gift"})})
	v2 := waitType("order.created", func(et listedType) bool { return et.Count == 2 }, "the second event")
	assert.Equal(t, 2, v2.SchemaVersion, "the schema changed")
	require.Len(t, v2.PreviousSchemas, 1)
	assert.Equal(t, 1, v2.PreviousSchemas[0].Version)
	assert.JSONEq(t, string(v1.Schema), string(v2.PreviousSchemas[0].Schema), "the schema before is kept")
	assert.Contains(t, string(v2.Schema), "note")
}

// TestMetricsHistoryMoves: the metrics history of a bus, its rule and its target move as events flow: the sums of
// their points count the events put, matched and delivered.
func TestMetricsHistoryMoves(t *testing.T) {
	t.Parallel()
	m := startMain(t, t.TempDir(), "--metrics-history-interval", "200ms")
	t.Cleanup(func() { _ = m.Close() })
	a := apiOf(t, m)
	got := make(chan string, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("ce-id")
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "m"}, 201)
	a.must("POST", "/api/v1/buses/m/rules", map[string]any{"name": "even", "eventPattern": map[string]any{"type": []any{"even"}}}, 201)
	a.must("PUT", "/api/v1/buses/m/rules/even/targets/t", httpTarget(srv.URL), 201)
	var events []map[string]any
	for i := range 10 {
		typ := "odd"
		if i%2 == 0 {
			typ = "even"
		}
		events = append(events, event(fmt.Sprintf("e%d", i), "shop", typ, map[string]any{"i": i}))
	}
	type history struct {
		Range, Step string
		Series      []struct {
			Bus, Rule, Target, Metric string
			Points                    []struct {
				T time.Time
				V *float64
			}
		}
	}
	sums := func(query string) map[string]float64 {
		var h history
		require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/metrics?"+query, nil, 200), &h))
		out := map[string]float64{}
		for _, s := range h.Series {
			for _, p := range s.Points {
				if p.V != nil && s.Metric != "latencyMs" {
					out[s.Rule+"/"+s.Target+":"+s.Metric] += *p.V
				}
			}
		}
		return out
	}
	// The history begins with the first sample: put once the target's series are there (two samples taken).
	require.Eventually(t, func() bool { _, ok := sums("bus=m&rule=even&target=t")["even/t:in"]; return ok }, 30*time.Second,
		100*time.Millisecond, "the target's series")
	a.putBatch("m", events)
	require.Eventually(t, func() bool {
		s := sums("bus=m")
		return s["/:in"] == 10 && s["/:matched"] == 5 && s["even/:matched"] == 5 && s["even/t:delivered"] == 5
	}, 30*time.Second, 200*time.Millisecond, "the series count the events")
	var h history
	require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/metrics?bus=m&rule=even&target=t", nil, 200), &h))
	assert.Equal(t, "1h", h.Range)
	assert.Equal(t, "200ms", h.Step)
	metrics := map[string]bool{}
	for _, s := range h.Series {
		metrics[s.Metric] = true
		assert.Equal(t, "t", s.Target)
	}
	assert.Equal(t, map[string]bool{"in": true, "delivered": true, "failed": true, "deadLettered": true, "latencyMs": true}, metrics)
	var lat []float64
	for _, s := range h.Series {
		if s.Metric == "latencyMs" {
			for _, p := range s.Points {
				if p.V != nil {
					lat = append(lat, *p.V)
				}
			}
		}
	}
	require.NotEmpty(t, lat, "a step with deliveries has a latency")
	assert.Greater(t, lat[0], 0.0)
	a.must("GET", "/api/v1/metrics?range=1d", nil, 200)
	status, body := a.do("GET", "/api/v1/metrics?range=1w", "", nil)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, string(body), "range")
	status, _ = a.do("GET", "/api/v1/metrics?rule=even", "", nil)
	assert.Equal(t, http.StatusBadRequest, status, "a rule needs its bus")
}
