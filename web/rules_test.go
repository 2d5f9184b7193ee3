package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRules(t *testing.T) {
	t.Parallel()
	orders := withBus("orders")
	created := setups(orders, withRule("orders", "created"))
	pattern := map[string]any{"type": []any{"order.created"}, "data": map[string]any{"shop": []any{map[string]any{"prefix": "eu-"}}}}
	run(t, []scenario{
		{
			name: "create with an object pattern", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:    orders,
			body:     map[string]any{"name": "created", "description": "new orders", "eventPattern": pattern},
			status:   http.StatusCreated,
			json:     map[string]any{"name": "created", "description": "new orders", "state": "ENABLED", "eventPattern": pattern},
			contains: []string{`"createdAt":"`, `"updatedAt":"`},
			after: func(t *testing.T, e *env, resp *response) {
				got := e.must(t, http.MethodGet, "/api/v1/buses/orders/rules/created", nil, http.StatusOK)
				assert.JSONEq(t, string(resp.Body), string(got.Body), "a created rule reads back as it was answered")
				synced, _ := e.runtime.calls()
				assert.Equal(t, []string{"orders", "orders"}, synced, "the router is applied after the bus and after the rule")
			},
		},
		{
			name: "create with a pattern in a string", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  orders,
			body:   `{"name": "created", "eventPattern": "{\"type\": [\"order.created\"]}"}`,
			status: http.StatusCreated,
			json:   map[string]any{"eventPattern": map[string]any{"type": []any{"order.created"}}},
		},
		{
			name: "create disabled", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  orders,
			body:   map[string]any{"name": "created", "state": "DISABLED", "eventPattern": pattern},
			status: http.StatusCreated, json: map[string]any{"state": "DISABLED"},
		},
		{
			name: "create on an unknown bus", method: http.MethodPost, url: "/api/v1/buses/nope/rules",
			body:   map[string]any{"name": "created", "eventPattern": pattern},
			status: http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "duplicate", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  created,
			body:   map[string]any{"name": "created", "eventPattern": pattern},
			status: http.StatusConflict, json: map[string]any{"code": "RuleAlreadyExists"},
		},
		{
			name: "invalid name", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  orders,
			body:   map[string]any{"name": "created/eu", "eventPattern": pattern}, // dots are AWS's, slashes are not
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "name"},
		},
		{
			name: "invalid state", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  orders,
			body:   map[string]any{"name": "created", "state": "PAUSED", "eventPattern": pattern},
			status: http.StatusBadRequest, json: map[string]any{"field": "state"},
		},
		{
			name: "invalid pattern", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  orders,
			body:   map[string]any{"name": "created", "eventPattern": map[string]any{"type": "order.created"}},
			status: http.StatusBadRequest,
			json: map[string]any{"code": "InvalidEventPattern", "field": "eventPattern",
				"type": "https://eventbridge-go.dev/problems/InvalidEventPattern"},
			contains: []string{"type"},
		},
		{
			name: "pattern with an unsupported operator", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  orders,
			body:   map[string]any{"name": "created", "eventPattern": map[string]any{"type": []any{map[string]any{"sounds-like": "x"}}}},
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEventPattern"},
			contains: []string{"sounds-like"},
		},
		{
			name: "pattern in a string that is not JSON", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  orders,
			body:   map[string]any{"name": "created", "eventPattern": "{type: order.created}"},
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEventPattern", "field": "eventPattern"},
		},
		{
			name: "pattern that is a number", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  orders,
			body:   `{"name": "created", "eventPattern": 42}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEventPattern"},
		},
		{
			name: "pattern missing", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  orders,
			body:   map[string]any{"name": "created"},
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEventPattern", "field": "eventPattern"},
		},
		{
			name: "pattern null", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  orders,
			body:   `{"name": "created", "eventPattern": null}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEventPattern"},
		},
		{
			name: "pattern too large", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  orders,
			body:   map[string]any{"name": "created", "eventPattern": map[string]any{"type": []any{strings.Repeat("x", 5000)}}},
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEventPattern"},
		},
		{
			name: "malformed JSON", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  orders,
			body:   `{"name": "created", "eventPattern": {"type": ["a"]}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"},
		},
		{
			name: "description of the wrong type", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup:  orders,
			body:   `{"name": "created", "description": ["x"], "eventPattern": {"type": ["a"]}}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "description"},
		},
		{
			name: "get", method: http.MethodGet, url: "/api/v1/buses/orders/rules/created", setup: created,
			status: http.StatusOK,
			json:   map[string]any{"name": "created", "state": "ENABLED", "eventPattern": map[string]any{"source": []any{"shop"}}},
		},
		{
			name: "get an unknown rule", method: http.MethodGet, url: "/api/v1/buses/orders/rules/nope", setup: orders,
			status: http.StatusNotFound, json: map[string]any{"code": "RuleNotFound"},
		},
		{
			name: "get on an unknown bus", method: http.MethodGet, url: "/api/v1/buses/nope/rules/created",
			status: http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "put creates", method: http.MethodPut, url: "/api/v1/buses/orders/rules/created", setup: orders,
			body:   map[string]any{"eventPattern": pattern},
			status: http.StatusCreated, json: map[string]any{"name": "created", "eventPattern": pattern},
		},
		{
			name: "put replaces", method: http.MethodPut, url: "/api/v1/buses/orders/rules/created", setup: created,
			body:   map[string]any{"name": "created", "description": "changed", "state": "DISABLED", "eventPattern": pattern},
			status: http.StatusOK,
			json:   map[string]any{"name": "created", "description": "changed", "state": "DISABLED", "eventPattern": pattern},
			after: func(t *testing.T, e *env, _ *response) {
				v := e.must(t, http.MethodGet, "/api/v1/buses/orders/rules/created", nil, http.StatusOK).JSON(t)
				assertJSONPath(t, v, "description", "changed")
				assertJSONPath(t, v, "eventPattern", pattern)
			},
		},
		{
			name: "put accepts what get answered", method: http.MethodPut, url: "/api/v1/buses/orders/rules/created", setup: created,
			body: `{"name":"created","description":"","state":"ENABLED","eventPattern":{"source":["shop"]},` +
				`"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}`,
			status: http.StatusOK,
		},
		{
			name: "put with another name", method: http.MethodPut, url: "/api/v1/buses/orders/rules/created", setup: created,
			body:   map[string]any{"name": "renamed", "eventPattern": pattern},
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "name"},
		},
		{
			name: "put with an invalid name in the path", method: http.MethodPut, url: "/api/v1/buses/orders/rules/bad%20name", setup: orders,
			body:   map[string]any{"eventPattern": pattern},
			status: http.StatusBadRequest, json: map[string]any{"field": "name"},
		},
		{
			name: "put with an invalid pattern", method: http.MethodPut, url: "/api/v1/buses/orders/rules/created", setup: created,
			body:   map[string]any{"eventPattern": map[string]any{}},
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEventPattern"},
			after: func(t *testing.T, e *env, _ *response) {
				v := e.must(t, http.MethodGet, "/api/v1/buses/orders/rules/created", nil, http.StatusOK).JSON(t)
				assertJSONPath(t, v, "eventPattern", map[string]any{"source": []any{"shop"}})
			},
		},
		{
			name: "put on an unknown bus", method: http.MethodPut, url: "/api/v1/buses/nope/rules/created",
			body:   map[string]any{"eventPattern": pattern},
			status: http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "disable", method: http.MethodPost, url: "/api/v1/buses/orders/rules/created/disable", setup: created,
			status: http.StatusOK, json: map[string]any{"name": "created", "state": "DISABLED"},
			after: func(t *testing.T, e *env, _ *response) {
				v := e.must(t, http.MethodGet, "/api/v1/buses/orders/rules/created", nil, http.StatusOK).JSON(t)
				assertJSONPath(t, v, "state", "DISABLED")
			},
		},
		{
			name: "enable", method: http.MethodPost, url: "/api/v1/buses/orders/rules/created/enable",
			setup: setups(created, func(t *testing.T, e *env) {
				e.must(t, http.MethodPost, "/api/v1/buses/orders/rules/created/disable", nil, http.StatusOK)
			}),
			status: http.StatusOK, json: map[string]any{"state": "ENABLED"},
		},
		{
			name: "enable an unknown rule", method: http.MethodPost, url: "/api/v1/buses/orders/rules/nope/enable", setup: orders,
			status: http.StatusNotFound, json: map[string]any{"code": "RuleNotFound"},
		},
		{
			name: "disable on an unknown bus", method: http.MethodPost, url: "/api/v1/buses/nope/rules/created/disable",
			status: http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "delete", method: http.MethodDelete, url: "/api/v1/buses/orders/rules/created",
			setup:  setups(created, withTarget("orders", "created", "hook")),
			status: http.StatusNoContent,
			after: func(t *testing.T, e *env, _ *response) {
				e.must(t, http.MethodGet, "/api/v1/buses/orders/rules/created", nil, http.StatusNotFound)
				e.must(t, http.MethodDelete, "/api/v1/buses/orders", nil, http.StatusNoContent) // empty now
			},
		},
		{
			name: "delete an unknown rule", method: http.MethodDelete, url: "/api/v1/buses/orders/rules/nope", setup: orders,
			status: http.StatusNotFound, json: map[string]any{"code": "RuleNotFound"},
		},
		{
			name: "list", method: http.MethodGet, url: "/api/v1/buses/orders/rules",
			setup:  setups(created, withRule("orders", "all")),
			status: http.StatusOK, json: map[string]any{"rules.0.name": "all", "rules.1.name": "created"},
			absent: []string{"nextToken"},
		},
		{
			name: "list empty", method: http.MethodGet, url: "/api/v1/buses/orders/rules", setup: orders,
			status: http.StatusOK, json: map[string]any{"rules": []any{}},
		},
		{
			name: "list on an unknown bus", method: http.MethodGet, url: "/api/v1/buses/nope/rules",
			status: http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "list with a bad limit", method: http.MethodGet, url: "/api/v1/buses/orders/rules?limit=-1", setup: orders,
			status: http.StatusBadRequest, json: map[string]any{"field": "limit"},
		},
		{
			name: "list with limit 1", method: http.MethodGet, url: "/api/v1/buses/orders/rules?limit=1",
			setup:  setups(created, withRule("orders", "all")),
			status: http.StatusOK, json: map[string]any{"rules.0.name": "all"}, contains: []string{`"nextToken":"`},
			after: func(t *testing.T, e *env, resp *response) {
				next, _ := resp.JSON(t)["nextToken"].(string)
				require.NotEmpty(t, next)
				v := e.must(t, http.MethodGet, "/api/v1/buses/orders/rules?limit=1&nextToken="+next, nil, http.StatusOK).JSON(t)
				assertJSONPath(t, v, "rules.0.name", "created")
				assert.Len(t, v["rules"], 1)
				assert.Empty(t, v["nextToken"], "the last page has no token")
			},
		},
	})
}
