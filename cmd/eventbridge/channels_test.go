package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A channel saved through the channel API, with the real runtime: the plugins check their configs and each problem
// is answered at its key's pointer while nothing is created (not the bus the document asked for, not a connector);
// fixed, the document creates the bus, the webhook source, the rule and its targets together, and a request to the
// webhook URL the answer holds reaches the http target.
func TestChannelEndToEnd(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	rcv := newReceiver(t)

	doc := func(scheme, qos, url string) map[string]any {
		return map[string]any{
			"createBus": true,
			"sources": []any{map[string]any{"name": "shop", "type": "http",
				"config": map[string]any{"http.methods": "POST", "http.signature.scheme": scheme}}},
			"rule": map[string]any{"eventPattern": map[string]any{"type": []any{"eventbridge:Events:HTTPEvent"}}},
			"targets": []any{
				map[string]any{"name": "broker", "type": "mqtt",
					"config": map[string]any{"mqtt.url": mosquitto, "mqtt.qos": qos, "mqtt.topic": "eb-test/channels"}},
				map[string]any{"name": "hook", "type": "http", "config": map[string]any{"url": url}},
			},
		}
	}
	body, err := json.Marshal(doc("nope", "7", "not a url"))
	require.NoError(t, err)
	status, out := a.do(http.MethodPut, "/api/v1/buses/shop/channels/orders", "application/json", body)
	require.Equal(t, http.StatusBadRequest, status, string(out))
	var problem struct {
		Code   string `json:"code"`
		Errors []struct {
			Pointer string `json:"pointer"`
			Detail  string `json:"detail"`
		} `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(out, &problem))
	assert.Equal(t, "InvalidChannel", problem.Code)
	pointers := map[string]string{}
	for _, e := range problem.Errors {
		pointers[e.Pointer] = e.Detail
	}
	assert.Contains(t, pointers, "/sources/0/config/http.signature.scheme", "the webhook plugin's problem, at its key: %s", out)
	assert.Contains(t, pointers, "/targets/0/config/mqtt.qos", "the mqtt plugin's problem, at its key: %s", out)
	assert.Contains(t, pointers, "/targets/1/config/url", "%s", out)
	a.must(http.MethodGet, "/api/v1/buses/shop", nil, http.StatusNotFound)
	conns, err := workerClient(m).ListConnectorsWithPrefix(context.Background(), "eb.default.shop.")
	require.NoError(t, err)
	assert.Empty(t, conns, "no connector was made")

	out = a.must(http.MethodPut, "/api/v1/buses/shop/channels/orders", doc("none", "1", rcv.srv.URL), http.StatusCreated)
	var ch struct {
		Sources []sourceAnswer `json:"sources"`
		Targets []struct {
			Name string `json:"name"`
		} `json:"targets"`
	}
	require.NoError(t, json.Unmarshal(out, &ch))
	require.Len(t, ch.Sources, 1)
	require.NotNil(t, ch.Sources[0].Webhook, "the answer holds the webhook of the http source")
	require.Len(t, ch.Targets, 2)

	require.Eventually(t, func() bool {
		status, _ := hook(t, http.MethodPost, ch.Sources[0].Webhook.URLs[1], map[string]string{"Content-Type": "application/json"},
			[]byte(`{"order": 1}`))
		return status == http.StatusOK || status == http.StatusAccepted
	}, 10*time.Second, 100*time.Millisecond, "the webhook takes the request")
	require.Eventually(t, func() bool { return len(rcv.snapshot()) > 0 }, 30*time.Second, 50*time.Millisecond,
		"the request reaches the http target through the rule")
}
