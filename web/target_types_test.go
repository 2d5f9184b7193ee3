package web_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// withAPIDestination creates a connection and an API destination named name through the API.
func withAPIDestination(name string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		e.must(t, http.MethodPost, "/api/v1/connections", map[string]any{"name": name + "-conn", "authorizationType": "API_KEY",
			"authParameters": map[string]any{"apiKeyAuthParameters": map[string]any{"apiKeyName": "X-Key", "apiKeyValue": "s3cret-value"}}},
			http.StatusCreated)
		e.must(t, http.MethodPost, "/api/v1/api-destinations", map[string]any{"name": name, "connection": name + "-conn",
			"invocationEndpoint": "https://api.example.com/orders/*", "httpMethod": "POST"}, http.StatusCreated)
	}
}

func TestTargetTypes(t *testing.T) {
	t.Parallel()
	const url = "/api/v1/buses/orders/rules/created/targets/t1"
	rule := setups(withBus("orders"), withRule("orders", "created"))
	withAudit := setups(rule, withBus("audit"))
	run(t, []scenario{
		{
			name: "bus target", method: http.MethodPut, url: url, setup: withAudit,
			body:   map[string]any{"type": "bus", "config": map[string]any{"bus": "audit"}},
			status: http.StatusCreated, json: map[string]any{"type": "bus", "config": map[string]any{"bus": "audit"}},
			after: func(t *testing.T, e *env, resp *response) {
				got := e.must(t, http.MethodGet, url, nil, http.StatusOK)
				assert.JSONEq(t, string(resp.Body), string(got.Body), "reads back as answered")
				assert.NotContains(t, string(got.Body), `"url"`)
			},
		},
		{
			name: "bus target on its own bus", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "bus", "config": map[string]any{"bus": "orders"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config.bus"}, contains: []string{"own bus"},
		},
		{
			name: "bus target on an unknown bus", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "bus", "config": map[string]any{"bus": "nope"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config.bus"}, contains: []string{"does not exist"},
		},
		{
			name: "bus target of another account's bus", method: http.MethodPut, url: url,
			setup: setups(rule, func(t *testing.T, e *env) {
				resp := e.do(t, http.MethodPost, "/api/v1/buses", map[string]string{"X-Account-Id": "other"}, map[string]any{"name": "audit"})
				assert.Equal(t, http.StatusCreated, resp.Status)
			}),
			body:   map[string]any{"type": "bus", "config": map[string]any{"bus": "audit"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config.bus"},
		},
		{
			name: "bus target without its bus", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "bus"}, status: http.StatusBadRequest, json: map[string]any{"field": "config.bus"},
		},
		{
			name: "bus target with a url", method: http.MethodPut, url: url, setup: withAudit,
			body:   map[string]any{"type": "bus", "config": map[string]any{"bus": "audit", "url": "https://x"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config"},
		},
		{
			name: "log target", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "log"}, status: http.StatusCreated, json: map[string]any{"type": "log", "config": map[string]any{}},
		},
		{
			name: "api-destination target", method: http.MethodPut, url: url, setup: setups(rule, withAPIDestination("crm")),
			body: map[string]any{"type": "api-destination", "config": map[string]any{"apiDestination": "crm",
				"pathParameterValues": []any{"$.data.orderId"}}},
			status: http.StatusCreated, json: map[string]any{"type": "api-destination",
				"config": map[string]any{"apiDestination": "crm", "pathParameterValues": []any{"$.data.orderId"}}},
			after: func(t *testing.T, e *env, _ *response) {
				resp := e.do(t, http.MethodDelete, "/api/v1/api-destinations/crm", nil, nil)
				assert.Equal(t, http.StatusConflict, resp.Status, "an API destination in use is not deleted")
				assert.Contains(t, string(resp.Body), "orders/created/t1")
			},
		},
		{
			name: "api-destination target without its path parameter", method: http.MethodPut, url: url,
			setup:  setups(rule, withAPIDestination("crm")),
			body:   map[string]any{"type": "api-destination", "config": map[string]any{"apiDestination": "crm"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config.pathParameterValues"},
			contains: []string{"1 path parameters"},
		},
		{
			name: "api-destination target with a bad path", method: http.MethodPut, url: url,
			setup: setups(rule, withAPIDestination("crm")),
			body: map[string]any{"type": "api-destination", "config": map[string]any{"apiDestination": "crm",
				"pathParameterValues": []any{"data.orderId"}}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config.pathParameterValues"},
		},
		{
			name: "api-destination target of an unknown destination", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "api-destination", "config": map[string]any{"apiDestination": "nope"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config.apiDestination"},
		},
		{
			name: "dead-letter bus", method: http.MethodPut, url: url, setup: setups(rule, withBus("dlq")),
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/h"},
				"deadLetterConfig": map[string]any{"bus": "dlq"}},
			status: http.StatusCreated, json: map[string]any{"deadLetterConfig": map[string]any{"bus": "dlq"}},
		},
		{
			name: "dead-letter bus is the target's own", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "log", "deadLetterConfig": map[string]any{"bus": "orders"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "deadLetterConfig.bus"},
		},
		{
			name: "dead-letter bus unknown", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "log", "deadLetterConfig": map[string]any{"bus": "nope"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "deadLetterConfig.bus"},
		},
		{
			name: "dead-letter config without a bus", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "log", "deadLetterConfig": map[string]any{}},
			status: http.StatusBadRequest, json: map[string]any{"field": "deadLetterConfig.bus"},
		},
	})
}
