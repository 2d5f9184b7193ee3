package web_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const channelURL = "/api/v1/buses/orders/channels/created"

// channelDoc is a valid channel: a webhook source of the bus, a rule with a layout, an http target with a transformer
// and a secret header, and a log target.
func channelDoc() map[string]any {
	return map[string]any{
		"sources": []any{map[string]any{"name": "shop", "type": "http", "description": "the shop's webhook",
			"config": map[string]any{"http.methods": "POST"}}},
		"rule": map[string]any{"description": "new orders", "eventPattern": map[string]any{"type": []any{"order.created"}},
			"layout": map[string]any{"version": 1, "nodes": map[string]any{"bus": map[string]any{"x": 260, "y": 40}}}},
		"targets": []any{
			map[string]any{"name": "hook", "type": "http",
				"config":           map[string]any{"url": "https://example.com/hook", "headers": map[string]any{"Authorization": "Bearer s3cret"}},
				"inputTransformer": map[string]any{"inputPathsMap": map[string]any{"id": "$.data.id"}, "inputTemplate": `{"order": <id>}`},
				"retryPolicy":      map[string]any{"maximumRetryAttempts": 3, "maximumEventAgeInSeconds": 600}},
			map[string]any{"name": "audit", "type": "log"},
		},
	}
}

// nothingStored checks that the bus orders has no rule created, no source and (when it is meant not to exist) that the
// bus is absent.
func nothingStored(t *testing.T, e *env, busExists bool) {
	t.Helper()
	if !busExists {
		e.must(t, http.MethodGet, "/api/v1/buses/orders", nil, http.StatusNotFound)
		return
	}
	e.must(t, http.MethodGet, "/api/v1/buses/orders/rules/created", nil, http.StatusNotFound)
	sources := e.must(t, http.MethodGet, "/api/v1/buses/orders/sources", nil, http.StatusOK).JSON(t)
	assert.Empty(t, sources["sources"], "no source was created")
	synced, _ := e.runtime.calls()
	assert.NotContains(t, synced[1:], "orders", "the runtime was not asked to apply anything after the bus")
}

// A channel is saved whole or not at all: a document with problems changes nothing and answers every problem with
// the JSON pointer of its place; a valid one creates the source, the rule and its targets together, and reads
// back as the same document.
func TestChannels(t *testing.T) {
	t.Parallel()
	orders := withBus("orders")
	invalid := func() map[string]any {
		d := channelDoc()
		d["sources"] = []any{
			map[string]any{"name": "shop", "type": "http", "config": map[string]any{"http.methods": "POST"}},
			map[string]any{"name": "tick", "type": "schedule", "config": map[string]any{"schedule.catchup": "maybe"}},
		}
		d["rule"].(map[string]any)["eventPattern"] = map[string]any{"type": "order.created"}
		targets := d["targets"].([]any)
		targets[0].(map[string]any)["config"] = map[string]any{"url": "not a url"}
		targets = append(targets, map[string]any{"name": "copy", "type": "bus", "config": map[string]any{"bus": "nowhere"}})
		d["targets"] = targets
		return d
	}
	run(t, []scenario{
		{
			name: "a valid channel creates its source, rule and targets together", method: http.MethodPut, url: channelURL,
			setup: orders, body: channelDoc(), status: http.StatusCreated,
			json: map[string]any{"bus": "orders", "rule.name": "created", "rule.description": "new orders",
				"sources.0.name": "shop", "sources.0.description": "the shop's webhook", "targets.0.name": "audit",
				"targets.1.name": "hook", "targets.1.config.headers.Authorization": "***",
				"targets.1.retryPolicy.maximumRetryAttempts": float64(3), "rule.layout.nodes.bus.x": float64(260)},
			after: func(t *testing.T, e *env, resp *response) {
				put := resp.JSON(t)
				urls := put["sources"].([]any)[0].(map[string]any)["webhook"].(map[string]any)["urls"].([]any)
				assert.Len(t, urls, 2, "an http source answers its webhook URLs")
				got := e.must(t, http.MethodGet, channelURL, nil, http.StatusOK).JSON(t)
				for _, k := range []string{"bus", "rule", "targets"} {
					assert.Equal(t, put[k], got[k], "GET answers what PUT stored: %s", k)
				}
				// The parts are the same resources as through their own endpoints.
				e.must(t, http.MethodGet, "/api/v1/buses/orders/sources/shop", nil, http.StatusOK)
				ts := e.must(t, http.MethodGet, "/api/v1/buses/orders/rules/created/targets", nil, http.StatusOK).JSON(t)
				assert.Len(t, ts["targets"], 2)
			},
		},
		{
			name: "every problem is answered at its place and nothing changes", method: http.MethodPut, url: channelURL,
			setup: orders, body: invalid(), status: http.StatusBadRequest,
			json: map[string]any{"code": "InvalidChannel", "field": "/sources/1/config"},
			after: func(t *testing.T, e *env, resp *response) {
				errs := resp.JSON(t)["errors"].([]any)
				var pointers []string
				for _, p := range errs {
					m := p.(map[string]any)
					pointers = append(pointers, m["pointer"].(string))
					assert.NotEmpty(t, m["detail"])
					assert.NotEmpty(t, m["code"])
				}
				assert.Equal(t, []string{"/sources/1/config", "/rule/eventPattern", "/targets/0/config/url", "/targets/2/config/bus"}, pointers)
				nothingStored(t, e, true)
			},
		},
		{
			name: "a problem of a part's form is found before the service is asked", method: http.MethodPut, url: channelURL,
			setup: orders, body: map[string]any{"rule": map[string]any{"eventPattern": map[string]any{"type": []any{"a"}}},
				"targets": []any{map[string]any{"name": "hook", "type": "http", "config": map[string]any{"url": "https://example.com", "timeout": "soon"}}}},
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidChannel", "errors.0.pointer": "/targets/0/config/timeout"},
			after: func(t *testing.T, e *env, _ *response) { nothingStored(t, e, true) },
		},
		{
			name: "a missing bus is not found", method: http.MethodPut, url: channelURL,
			body: channelDoc(), status: http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "createBus makes the bus once the document passed", method: http.MethodPut, url: channelURL,
			body: func() map[string]any { d := channelDoc(); d["createBus"] = true; return d }(), status: http.StatusCreated,
			after: func(t *testing.T, e *env, _ *response) {
				e.must(t, http.MethodGet, "/api/v1/buses/orders", nil, http.StatusOK)
			},
		},
		{
			name: "createBus with problems makes no bus", method: http.MethodPut, url: channelURL,
			body: func() map[string]any { d := invalid(); d["createBus"] = true; return d }(), status: http.StatusBadRequest,
			json:  map[string]any{"code": "InvalidChannel"},
			after: func(t *testing.T, e *env, _ *response) { nothingStored(t, e, false) },
		},
		{
			name: "a saved channel is replaced: targets not listed are deleted, secrets sent back masked kept", method: http.MethodPut,
			url: channelURL, setup: setups(orders, func(t *testing.T, e *env) {
				e.must(t, http.MethodPut, channelURL, channelDoc(), http.StatusCreated)
			}),
			body: func() map[string]any {
				d := channelDoc()
				d["rule"].(map[string]any)["eventPattern"] = map[string]any{"type": []any{"order.paid"}}
				d["sources"].([]any)[0].(map[string]any)["description"] = "changed"
				hook := d["targets"].([]any)[0].(map[string]any)
				hook["config"] = map[string]any{"url": "https://example.com/v2", "headers": map[string]any{"Authorization": "***"}}
				d["targets"] = []any{hook}
				return d
			}(),
			status: http.StatusOK,
			json: map[string]any{"rule.eventPattern.type.0": "order.paid", "sources.0.description": "changed",
				"targets.0.name": "hook", "targets.0.config.url": "https://example.com/v2", "targets.0.config.headers.Authorization": "***"},
			after: func(t *testing.T, e *env, resp *response) {
				assert.Len(t, resp.JSON(t)["targets"], 1, "the log target not listed is deleted")
				e.must(t, http.MethodGet, "/api/v1/buses/orders/rules/created/targets/audit", nil, http.StatusNotFound)
				var cfg string
				require.NoError(t, e.db.SQL().QueryRowContext(t.Context(), "SELECT config FROM targets WHERE name = 'hook'").Scan(&cfg))
				assert.Contains(t, cfg, `"Authorization":"enc:`, "the stored secret is kept, sealed")
			},
		},
		{
			name: "a channel's targets are not the rule's", method: http.MethodPut, url: channelURL, setup: orders,
			body: map[string]any{"rule": map[string]any{"eventPattern": map[string]any{"type": []any{"a"}},
				"targets": []any{map[string]any{"name": "x", "type": "log"}}}},
			status: http.StatusBadRequest, json: map[string]any{"errors.0.pointer": "/rule/targets"},
		},
		{
			name: "get of a rule that does not exist", method: http.MethodGet, url: channelURL, setup: orders,
			status: http.StatusNotFound, json: map[string]any{"code": "RuleNotFound"},
		},
	})
}
