package web_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/eventbridge-go/eventbridge/domain/health"
	"github.com/eventbridge-go/eventbridge/domain/target"
)

func TestTargets(t *testing.T) {
	t.Parallel()
	rule := setups(withBus("orders"), withRule("orders", "created"))
	hook := setups(rule, withTarget("orders", "created", "hook"))
	const url = "/api/v1/buses/orders/rules/created/targets/hook"
	run(t, []scenario{
		{
			name: "put creates with defaults", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"}},
			status: http.StatusCreated,
			json: map[string]any{
				"name": "hook", "type": "http",
				"config":      map[string]any{"url": "https://example.com/hook", "method": "POST", "mode": "binary", "timeout": "5s"},
				"retryPolicy": map[string]any{"maximumRetryAttempts": 185, "maximumEventAgeInSeconds": 86400},
				"status": map[string]any{"state": "RUNNING", "tasks": []any{map[string]any{"id": 0, "state": "RUNNING", "workerId": "w1"}}, "lastError": nil,
					"health": "HEALTHY", "lastFailure": nil, "lastSuccessAt": nil},
			},
			after: func(t *testing.T, e *env, resp *response) {
				got := e.must(t, http.MethodGet, url, nil, http.StatusOK)
				assert.JSONEq(t, string(resp.Body), string(got.Body), "a created target reads back as it was answered")
				synced, _ := e.runtime.calls()
				assert.Equal(t, []string{"orders", "orders", "orders"}, synced, "the target's connector is applied")
			},
		},
		{
			name: "put replaces", method: http.MethodPut, url: url, setup: hook,
			body: map[string]any{"name": "hook", "type": "http",
				"config": map[string]any{"url": "http://example.com/v2", "method": "put", "headers": map[string]any{"X-Team": "shop"},
					"mode": "structured", "timeout": "1500ms"},
				"retryPolicy": map[string]any{"maximumRetryAttempts": 3, "maximumEventAgeInSeconds": 600}},
			status: http.StatusOK,
			json: map[string]any{
				"config":      map[string]any{"url": "http://example.com/v2", "method": "PUT", "headers": map[string]any{"X-Team": "shop"}, "mode": "structured", "timeout": "1.5s"},
				"retryPolicy": map[string]any{"maximumRetryAttempts": 3, "maximumEventAgeInSeconds": 600},
			},
			after: func(t *testing.T, e *env, _ *response) {
				v := e.must(t, http.MethodGet, url, nil, http.StatusOK).JSON(t)
				assertJSONPath(t, v, "config.url", "http://example.com/v2")
				assertJSONPath(t, v, "retryPolicy.maximumRetryAttempts", 3)
			},
		},
		{
			name: "absent retry policy fields take defaults", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"retryPolicy": map[string]any{"maximumRetryAttempts": 0}},
			status: http.StatusCreated,
			json:   map[string]any{"retryPolicy": map[string]any{"maximumRetryAttempts": 0, "maximumEventAgeInSeconds": 86400}},
		},
		{
			name: "status is read-only", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"status": map[string]any{"state": "FAILED", "tasks": []any{}, "lastError": "made up"}},
			status: http.StatusCreated,
			json:   map[string]any{"status.state": "RUNNING", "status.lastError": nil},
			absent: []string{"made up"},
		},
		{
			name: "status while the runtime cannot be reached", method: http.MethodGet, url: url,
			setup:  setups(hook, func(_ *testing.T, e *env) { e.statuses.set(nil, errors.New("dial tcp 127.0.0.1:8083: refused")) }),
			status: http.StatusOK,
			json: map[string]any{"status": map[string]any{"state": "PENDING", "tasks": []any{}, "lastError": "the worker runtime could not be reached",
				"health": "PENDING", "lastFailure": nil, "lastSuccessAt": nil}},
			absent: []string{"127.0.0.1:8083", "dial tcp"}, // not "8083" alone: a time to the microsecond may hold it
		},
		{
			name: "status with a last error", method: http.MethodGet, url: url,
			setup: setups(hook, func(_ *testing.T, e *env) {
				e.statuses.set(&target.Status{State: "FAILED", LastError: "HTTP 500 from the target"}, nil)
			}),
			status: http.StatusOK,
			json: map[string]any{"status": map[string]any{"state": "FAILED", "tasks": []any{}, "lastError": "HTTP 500 from the target",
				"health": "FAILED", "lastFailure": nil, "lastSuccessAt": nil}},
		},
		{
			name: "status of a failing delivery", method: http.MethodGet, url: url,
			setup: setups(hook, func(_ *testing.T, e *env) {
				at := time.Now().UTC().Truncate(time.Millisecond)
				e.statuses.set(&target.Status{State: "RUNNING", Tasks: []target.TaskStatus{{ID: 0, State: "RUNNING", WorkerID: "w1",
					Health: &health.Facts{LastSuccessAt: at.Add(-time.Minute), FailuresSinceSuccess: 2, FailingSince: at.Add(-time.Second),
						RetryScheduled: true, LastFailure: &health.Failure{At: at, Attempt: 2, Class: "http-5xx", Status: 503,
							Message: "http: POST https://example.com/hook answered 503: down", Response: "down"}}}}}, nil)
			}),
			status: http.StatusOK,
			json: map[string]any{"status.health": "RETRYING", "status.state": "RUNNING",
				"status.lastError":           "http: POST https://example.com/hook answered 503: down",
				"status.lastFailure.attempt": 2, "status.lastFailure.errorClass": "http-5xx", "status.lastFailure.httpStatus": 503,
				"status.lastFailure.response": "down"},
		},
		{
			name: "url that is not http", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "http", "config": map[string]any{"url": "ftp://example.com/hook"}},
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "config.url"},
		},
		{
			name: "url missing", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "http", "config": map[string]any{}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config.url"},
		},
		{
			name: "relative url", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "http", "config": map[string]any{"url": "/hook"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config.url"},
		},
		{
			name: "unsupported type", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "lambda", "config": map[string]any{"url": "https://example.com/hook"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "type"},
		},
		{
			name: "type missing", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"config": map[string]any{"url": "https://example.com/hook"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "type"},
		},
		{
			name: "unsupported method", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook", "method": "TRACE"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config.method"},
		},
		{
			name: "unsupported mode", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook", "mode": "batch"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config.mode"},
		},
		{
			name: "timeout not a duration", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook", "timeout": "soon"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config.timeout"},
		},
		{
			name: "timeout too long", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook", "timeout": "2m"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config.timeout"},
		},
		{
			name: "invalid header name", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook", "headers": map[string]any{"X Team": "a"}}},
			status: http.StatusBadRequest, json: map[string]any{"field": "config.headers"},
		},
		{
			name: "header value of the wrong type", method: http.MethodPut, url: url, setup: rule,
			body:   `{"type": "http", "config": {"url": "https://example.com/hook", "headers": {"X-Team": 7}}}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "config.headers"},
		},
		{
			name: "retry attempts out of range", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"retryPolicy": map[string]any{"maximumRetryAttempts": 186}},
			status: http.StatusBadRequest, json: map[string]any{"field": "retryPolicy.maximumRetryAttempts"},
		},
		{
			name: "event age out of range", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"retryPolicy": map[string]any{"maximumEventAgeInSeconds": 10}},
			status: http.StatusBadRequest, json: map[string]any{"field": "retryPolicy.maximumEventAgeInSeconds"},
		},
		{
			name: "retry attempts of the wrong type", method: http.MethodPut, url: url, setup: rule,
			body:   `{"type": "http", "config": {"url": "https://example.com/hook"}, "retryPolicy": {"maximumRetryAttempts": "many"}}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "retryPolicy.maximumRetryAttempts"},
		},
		{
			name: "unknown config key", method: http.MethodPut, url: url, setup: rule,
			body:   `{"type": "http", "config": {"url": "https://example.com/hook", "proxy": "http://proxy"}}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "config.proxy"},
		},
		{
			name: "malformed JSON", method: http.MethodPut, url: url, setup: rule,
			body:   `{"type": "http", "config": }`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"},
		},
		{
			name: "put with another name", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"name": "other", "type": "http", "config": map[string]any{"url": "https://example.com/hook"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "name"},
		},
		{
			name: "invalid name in the path", method: http.MethodPut, url: "/api/v1/buses/orders/rules/created/targets/h%20ook", setup: rule,
			body:   map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "name"},
		},
		{
			name: "put on an unknown rule", method: http.MethodPut, url: "/api/v1/buses/orders/rules/nope/targets/hook", setup: withBus("orders"),
			body:   map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"}},
			status: http.StatusNotFound, json: map[string]any{"code": "RuleNotFound"},
		},
		{
			name: "put on an unknown bus", method: http.MethodPut, url: "/api/v1/buses/nope/rules/created/targets/hook",
			body:   map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"}},
			status: http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "a sixth target", method: http.MethodPut, url: "/api/v1/buses/orders/rules/created/targets/t6",
			setup: setups(rule, withTarget("orders", "created", "t1"), withTarget("orders", "created", "t2"),
				withTarget("orders", "created", "t3"), withTarget("orders", "created", "t4"), withTarget("orders", "created", "t5")),
			body:   map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"}},
			status: http.StatusConflict, json: map[string]any{"code": "LimitExceeded"},
			after: func(t *testing.T, e *env, _ *response) {
				v := e.must(t, http.MethodGet, "/api/v1/buses/orders/rules/created/targets", nil, http.StatusOK).JSON(t)
				assert.Len(t, v["targets"], 5)
				// Replacing one of the five is no new target.
				e.must(t, http.MethodPut, "/api/v1/buses/orders/rules/created/targets/t5",
					map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/t5b"}}, http.StatusOK)
			},
		},
		{
			name: "put with an input transformer", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"inputTransformer": map[string]any{"inputPathsMap": map[string]any{"id": "$.data.orderId", "sku": "$.data.items[0].sku"},
					"inputTemplate": `{"order": <id>, "text": "Order <id>: <sku>"}`}},
			status: http.StatusCreated,
			json: map[string]any{"inputTransformer": map[string]any{"inputPathsMap": map[string]any{"id": "$.data.orderId", "sku": "$.data.items[0].sku"},
				"inputTemplate": `{"order": <id>, "text": "Order <id>: <sku>"}`}},
			absent: []string{`"input"`, `"inputPath"`, `"transform"`},
			after: func(t *testing.T, e *env, resp *response) {
				got := e.must(t, http.MethodGet, url, nil, http.StatusOK)
				assert.JSONEq(t, string(resp.Body), string(got.Body), "the transformer reads back as it was answered")
				// Replaced without one, the target delivers events as they are again.
				out := e.must(t, http.MethodPut, url, map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"}}, http.StatusOK)
				assert.NotContains(t, string(out.Body), "inputTransformer")
				assert.NotContains(t, string(e.must(t, http.MethodGet, url, nil, http.StatusOK).Body), "inputTransformer")
			},
		},
		{
			name: "put with input", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"input": `{"fixed": true}`},
			status: http.StatusCreated, json: map[string]any{"input": `{"fixed": true}`},
			absent: []string{"inputTransformer", "inputPath"},
		},
		{
			name: "put with inputPath", method: http.MethodPut, url: url, setup: hook,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"inputPath": "$.data"},
			status: http.StatusOK, json: map[string]any{"inputPath": "$.data"},
			after: func(t *testing.T, e *env, _ *response) {
				assertJSONPath(t, e.must(t, http.MethodGet, url, nil, http.StatusOK).JSON(t), "inputPath", "$.data")
			},
		},
		{
			name: "put with a RocketMQ EventBridge form", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"transform": map[string]any{"form": "TEMPLATE", "value": `{"content": "$.data.body"}`, "template": `{"text": "${content}"}`}},
			status: http.StatusCreated,
			json:   map[string]any{"transform": map[string]any{"form": "TEMPLATE", "value": `{"content": "$.data.body"}`, "template": `{"text": "${content}"}`}},
		},
		{
			name: "put with attributes beside an input transformer", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"inputTransformer": map[string]any{"inputPathsMap": map[string]any{"id": "$.data.orderId"}, "inputTemplate": `{"order": <id>}`},
				"attributes":       map[string]any{"subject": "orders/<id>", "type": "<ce.type>.v2", "orderid": "<id>"}},
			status: http.StatusCreated,
			json: map[string]any{"attributes": map[string]any{"subject": "orders/<id>", "type": "<ce.type>.v2", "orderid": "<id>"},
				"inputTransformer.inputTemplate": `{"order": <id>}`},
			contains: []string{`"subject":"orders/<id>"`}, // templates read as written, not \u003c
			after: func(t *testing.T, e *env, resp *response) {
				got := e.must(t, http.MethodGet, url, nil, http.StatusOK)
				assert.JSONEq(t, string(resp.Body), string(got.Body), "the attributes read back as they were answered")
				list := e.must(t, http.MethodGet, "/api/v1/buses/orders/rules/created/targets", nil, http.StatusOK).JSON(t)
				assertJSONPath(t, list, "targets.0.attributes", map[string]any{"subject": "orders/<id>", "type": "<ce.type>.v2", "orderid": "<id>"})

				// Attributes alone: the data stays as it is.
				out := e.must(t, http.MethodPut, url, map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
					"attributes": map[string]any{"subject": "<ce.source>/<ce.id>"}}, http.StatusOK)
				assertJSONPath(t, out.JSON(t), "attributes", map[string]any{"subject": "<ce.source>/<ce.id>"})
				assert.NotContains(t, string(out.Body), "inputTransformer")
				assertJSONPath(t, e.must(t, http.MethodGet, url, nil, http.StatusOK).JSON(t), "attributes.subject", "<ce.source>/<ce.id>")

				// Replaced without them, the target has none.
				out = e.must(t, http.MethodPut, url, map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"}}, http.StatusOK)
				assert.NotContains(t, string(out.Body), "attributes")
				assert.NotContains(t, string(e.must(t, http.MethodGet, url, nil, http.StatusOK).Body), "attributes")
			},
		},
		{
			name: "put with attributes beside a RocketMQ TEMPLATE", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"transform":  map[string]any{"form": "TEMPLATE", "value": `{"id": "$.data.orderId"}`, "template": `${id}`},
				"attributes": map[string]any{"subject": "orders/${id}"}},
			status: http.StatusCreated,
			json:   map[string]any{"attributes.subject": "orders/${id}", "transform.form": "TEMPLATE"},
		},
		{
			name: "attributes that cannot be set", method: http.MethodPut, url: url, setup: hook,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"attributes": map[string]any{"subject": "x", "id": "<ce.id>-copy"}},
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "attributes.id"},
			contains: []string{"cannot set id"},
			after: func(t *testing.T, e *env, _ *response) {
				assert.NotContains(t, string(e.must(t, http.MethodGet, url, nil, http.StatusOK).Body), "attributes", "nothing was stored")
			},
		},
		{
			name: "an attribute name that is not a CloudEvents name", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"attributes": map[string]any{"Order-Id": "x"}},
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "attributes.Order-Id"},
			contains: []string{"a-z and 0-9"},
		},
		{
			name: "too many attributes", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"attributes": func() map[string]any {
					m := map[string]any{}
					for i := range 21 {
						m["ext"+strconv.Itoa(i)] = "x"
					}
					return m
				}()},
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "attributes"}, contains: []string{"at most 20"},
		},
		{
			name: "attribute template too long", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"attributes": map[string]any{"subject": strings.Repeat("x", 1025)}},
			status: http.StatusBadRequest, json: map[string]any{"field": "attributes.subject"}, contains: []string{"1024"},
		},
		{
			name: "an empty type", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"attributes": map[string]any{"type": ""}},
			status: http.StatusBadRequest, json: map[string]any{"field": "attributes.type"}, contains: []string{"required"},
		},
		{
			name: "attributes that are not strings", method: http.MethodPut, url: url, setup: rule,
			body:   `{"type": "http", "config": {"url": "https://example.com/hook"}, "attributes": {"subject": 1}}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "attributes"},
		},
		{
			name: "input transformer without a template", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"inputTransformer": map[string]any{"inputPathsMap": map[string]any{"id": "$.data.orderId"}}},
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "inputTransformer.inputTemplate"},
			after: func(t *testing.T, e *env, _ *response) {
				e.must(t, http.MethodGet, url, nil, http.StatusNotFound) // nothing was created
			},
		},
		{
			name: "input transformer with a bad path", method: http.MethodPut, url: url, setup: hook,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"inputTransformer": map[string]any{"inputPathsMap": map[string]any{"id": "data.orderId"}, "inputTemplate": "<id>"}},
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "inputTransformer.inputPathsMap.id"},
			after: func(t *testing.T, e *env, _ *response) {
				assert.NotContains(t, string(e.must(t, http.MethodGet, url, nil, http.StatusOK).Body), "inputTransformer", "nothing was stored")
			},
		},
		{
			name: "input that is not JSON", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"}, "input": "hello"},
			status: http.StatusBadRequest, json: map[string]any{"field": "input"},
		},
		{
			name: "two transformers", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"input": `1`, "inputPath": "$.data"},
			status: http.StatusBadRequest, json: map[string]any{"field": "inputPath"}, contains: []string{"at most one of"},
		},
		{
			name: "unknown RocketMQ form", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"transform": map[string]any{"form": "EVERYTHING"}},
			status: http.StatusBadRequest, json: map[string]any{"field": "transform.form"},
		},
		{
			name: "template too long", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"},
				"inputTransformer": map[string]any{"inputTemplate": strings.Repeat("x", 8193)}},
			status: http.StatusBadRequest, json: map[string]any{"field": "inputTransformer.inputTemplate"}, contains: []string{"8192"},
		},
		{
			name: "unknown input transformer field", method: http.MethodPut, url: url, setup: rule,
			body:   `{"type": "http", "config": {"url": "https://example.com/hook"}, "inputTransformer": {"inputTemplate": "x", "inputPaths": {}}}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "inputTransformer.inputPaths"},
		},
		{
			name: "inputPathsMap of the wrong type", method: http.MethodPut, url: url, setup: rule,
			body:   `{"type": "http", "config": {"url": "https://example.com/hook"}, "inputTransformer": {"inputTemplate": "x", "inputPathsMap": {"id": 1}}}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "inputTransformer.inputPathsMap"},
		},
		{
			name: "get", method: http.MethodGet, url: url, setup: hook,
			status: http.StatusOK,
			json:   map[string]any{"name": "hook", "type": "http", "config.url": "https://example.com/hook", "status.state": "RUNNING"},
		},
		{
			name: "get an unknown target", method: http.MethodGet, url: "/api/v1/buses/orders/rules/created/targets/nope", setup: rule,
			status: http.StatusNotFound, json: map[string]any{"code": "TargetNotFound"},
		},
		{
			name: "get on an unknown rule", method: http.MethodGet, url: "/api/v1/buses/orders/rules/nope/targets/hook", setup: withBus("orders"),
			status: http.StatusNotFound, json: map[string]any{"code": "RuleNotFound"},
		},
		{
			name: "list", method: http.MethodGet, url: "/api/v1/buses/orders/rules/created/targets",
			setup:  setups(hook, withTarget("orders", "created", "audit")),
			status: http.StatusOK,
			json:   map[string]any{"targets.0.name": "audit", "targets.1.name": "hook", "targets.1.status.state": "RUNNING"},
		},
		{
			name: "list empty", method: http.MethodGet, url: "/api/v1/buses/orders/rules/created/targets", setup: rule,
			status: http.StatusOK, json: map[string]any{"targets": []any{}},
		},
		{
			name: "list on an unknown bus", method: http.MethodGet, url: "/api/v1/buses/nope/rules/created/targets",
			status: http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "delete", method: http.MethodDelete, url: url, setup: hook,
			status: http.StatusNoContent,
			after: func(t *testing.T, e *env, _ *response) {
				e.must(t, http.MethodGet, url, nil, http.StatusNotFound)
			},
		},
		{
			name: "delete an unknown target", method: http.MethodDelete, url: url, setup: rule,
			status: http.StatusNotFound, json: map[string]any{"code": "TargetNotFound"},
		},
	})
}
