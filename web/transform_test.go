package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTestInputTransformer(t *testing.T) {
	t.Parallel()
	const url = "/api/v1/test-input-transformer"
	order := map[string]any{"specversion": "1.0", "id": "e1", "source": "shop", "type": "order.created",
		"subject": "orders/o-1", "time": "2026-03-29T10:15:00Z", "datacontenttype": "application/json",
		"data": map[string]any{"orderId": "o-1", "amount": 120, "items": []any{map[string]any{"sku": "x1"}, map[string]any{"sku": "y2"}},
			"note": "He said \"hi\"\nbye"}}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"event": order}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	run(t, []scenario{
		{
			name: "input transformer, JSON template", method: http.MethodPost, url: url,
			body: with("inputTransformer", map[string]any{
				"inputPathsMap": map[string]any{"id": "$.data.orderId", "sku": "$.data.items[1].sku", "amount": "$.data.amount", "missing": "$.data.nope"},
				"inputTemplate": `{"order": <id>, "sku": "<sku>", "amount": <amount>, "missing": <missing>, "type": <ce.type>, "at": "<ce.time>"}`}),
			status: http.StatusOK,
			json: map[string]any{"contentType": "application/json",
				"output": map[string]any{"order": "o-1", "sku": "y2", "amount": 120, "missing": nil, "type": "order.created", "at": "2026-03-29T10:15:00Z"}},
		},
		{
			name: "input transformer, text template", method: http.MethodPost, url: url,
			body: with("inputTransformer", map[string]any{"inputPathsMap": map[string]any{"id": "$.data.orderId", "note": "$.data.note"},
				"inputTemplate": `Order <id> (<ce.subject>): <note><nope>`}),
			status: http.StatusOK,
			json:   map[string]any{"contentType": "text/plain", "output": "Order o-1 (orders/o-1): He said \"hi\"\nbye<nope>"},
		},
		{
			name: "strings are escaped inside JSON strings", method: http.MethodPost, url: url,
			body:   with("inputTransformer", map[string]any{"inputPathsMap": map[string]any{"note": "$.data.note"}, "inputTemplate": `{"text": "note: <note>"}`}),
			status: http.StatusOK,
			json:   map[string]any{"contentType": "application/json", "output": map[string]any{"text": "note: He said \"hi\"\nbye"}},
		},
		{
			name: "the whole event", method: http.MethodPost, url: url,
			body:   with("inputTransformer", map[string]any{"inputTemplate": `{"wrapped": <ce.event.json>}`}),
			status: http.StatusOK,
			json:   map[string]any{"output.wrapped.id": "e1", "output.wrapped.data.orderId": "o-1", "output.wrapped.subject": "orders/o-1"},
		},
		{
			name: "input", method: http.MethodPost, url: url, body: with("input", `{"fixed": [1, 2]}`),
			status: http.StatusOK, json: map[string]any{"contentType": "application/json", "output": map[string]any{"fixed": []any{1, 2}}},
		},
		{
			name: "inputPath", method: http.MethodPost, url: url, body: with("inputPath", "$.data.items[0]"),
			status: http.StatusOK, json: map[string]any{"contentType": "application/json", "output": map[string]any{"sku": "x1"}},
		},
		{
			name: "inputPath to a string gives a JSON string", method: http.MethodPost, url: url, body: with("inputPath", "$.source"),
			status: http.StatusOK, json: map[string]any{"contentType": "application/json", "output": "shop"},
		},
		{
			name: "ORIGINAL", method: http.MethodPost, url: url, body: with("transform", map[string]any{"form": "ORIGINAL"}),
			status: http.StatusOK, json: map[string]any{"contentType": "application/json", "output.id": "e1", "output.data.amount": 120},
		},
		{
			name: "CONSTANT text", method: http.MethodPost, url: url, body: with("transform", map[string]any{"form": "CONSTANT", "value": "ping"}),
			status: http.StatusOK, json: map[string]any{"contentType": "text/plain", "output": "ping"},
		},
		{
			name: "JSONPATH", method: http.MethodPost, url: url, body: with("transform", map[string]any{"form": "JSONPATH", "value": "$.data.orderId"}),
			status: http.StatusOK, json: map[string]any{"contentType": "text/plain", "output": "o-1"},
		},
		{
			name: "TEMPLATE", method: http.MethodPost, url: url,
			body: with("transform", map[string]any{"form": "TEMPLATE", "value": `{"content": "$.data.note"}`,
				"template": `{"msgtype": "text", "text": {"content": "${content}"}}`}),
			status: http.StatusOK,
			json:   map[string]any{"contentType": "application/json", "output": map[string]any{"msgtype": "text", "text": map[string]any{"content": "He said \"hi\"\nbye"}}},
		},
		{
			name: "an event in CloudEvents 0.3 with text data", method: http.MethodPost, url: url,
			body: map[string]any{"inputPath": "$.data",
				"event": map[string]any{"specversion": "0.3", "id": "e2", "source": "s", "type": "t", "datacontenttype": "text/plain", "data": "plain text"}},
			status: http.StatusOK, json: map[string]any{"output": "plain text"},
		},
		{
			name: "attributes beside an input transformer", method: http.MethodPost, url: url,
			body: with("inputTransformer", map[string]any{"inputPathsMap": map[string]any{"id": "$.data.orderId", "sku": "$.data.items[1].sku",
				"amount": "$.data.amount", "missing": "$.data.nope"}, "inputTemplate": `{"order": <id>}`},
				"attributes", map[string]any{"subject": "orders/<id>/<sku>", "type": "<ce.type>.v2", "orderid": "<id>",
					"amount": "<amount> EUR", "source": "<ce.source>/<missing>eu", "dataschema": "https://example.com/<sku>.json"}),
			status: http.StatusOK,
			json: map[string]any{"contentType": "application/json", "output": map[string]any{"order": "o-1"},
				"attributes": map[string]any{"subject": "orders/o-1/y2", "type": "order.created.v2", "orderid": "o-1",
					"amount": "120 EUR", "source": "shop/eu", "dataschema": "https://example.com/y2.json"}},
		},
		{
			name: "attributes alone keep the data", method: http.MethodPost, url: url,
			body:   with("attributes", map[string]any{"subject": "<ce.source>/<ce.id>", "region": "eu"}),
			status: http.StatusOK,
			json: map[string]any{"contentType": "application/json", "output.orderId": "o-1", "output.items.1.sku": "y2",
				"attributes": map[string]any{"subject": "shop/e1", "region": "eu"}},
		},
		{
			name: "attributes alone on text data", method: http.MethodPost, url: url,
			body: map[string]any{"attributes": map[string]any{"subject": "<ce.type>"},
				"event": map[string]any{"specversion": "1.0", "id": "e2", "source": "s", "type": "t", "datacontenttype": "text/plain", "data": "plain text"}},
			status: http.StatusOK,
			json:   map[string]any{"contentType": "text/plain", "output": "plain text", "attributes": map[string]any{"subject": "t"}},
		},
		{
			name: "attributes alone on an event without data", method: http.MethodPost, url: url,
			body: map[string]any{"attributes": map[string]any{"subject": "<ce.type>"},
				"event": map[string]any{"specversion": "1.0", "id": "e3", "source": "s", "type": "t"}},
			status: http.StatusOK,
			json:   map[string]any{"contentType": "", "output": nil, "attributes": map[string]any{"subject": "t"}},
		},
		{
			name: "an empty value removes the attribute", method: http.MethodPost, url: url,
			body:   with("input", `1`, "attributes", map[string]any{"subject": "<ce.dataschema>"}),
			status: http.StatusOK,
			json:   map[string]any{"output": 1, "attributes": map[string]any{"subject": ""}},
		},
		{
			name: "attributes beside a RocketMQ TEMPLATE use its variables", method: http.MethodPost, url: url,
			body: with("transform", map[string]any{"form": "TEMPLATE", "value": `{"id": "$.data.orderId"}`, "template": `order ${id}`},
				"attributes", map[string]any{"subject": "orders/${id}", "kind": "${ce.type}", "literal": "<id>"}),
			status: http.StatusOK,
			json: map[string]any{"contentType": "text/plain", "output": "order o-1",
				"attributes": map[string]any{"subject": "orders/o-1", "kind": "order.created", "literal": "<id>"}},
		},
		{
			name: "no attributes", method: http.MethodPost, url: url, body: with("inputPath", "$.id"),
			status: http.StatusOK, json: map[string]any{"output": "e1", "attributes": map[string]any{}},
		},
		{
			name: "an empty type is the event's fault", method: http.MethodPost, url: url,
			body:   with("attributes", map[string]any{"type": "<ce.dataschema>"}),
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "event"},
			contains: []string{"attributes.type", "required"},
		},
		{
			name: "a control character in a value", method: http.MethodPost, url: url,
			body: with("inputTransformer", map[string]any{"inputPathsMap": map[string]any{"note": "$.data.note"}, "inputTemplate": "x"},
				"attributes", map[string]any{"subject": "<note>"}),
			status: http.StatusBadRequest, json: map[string]any{"field": "event"}, contains: []string{"attributes.subject", "control character"},
		},
		{
			name: "an attribute that cannot be set", method: http.MethodPost, url: url,
			body:   with("attributes", map[string]any{"datacontenttype": "text/plain"}),
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "attributes.datacontenttype"},
		},
		{
			name: "an extension name too long", method: http.MethodPost, url: url,
			body:   with("attributes", map[string]any{strings.Repeat("x", 21): "v"}),
			status: http.StatusBadRequest, json: map[string]any{"field": "attributes." + strings.Repeat("x", 21)},
		},
		{
			name: "no transformer", method: http.MethodPost, url: url, body: with(),
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "inputTransformer"},
		},
		{
			name: "two transformers", method: http.MethodPost, url: url, body: with("input", `1`, "transform", map[string]any{"form": "ORIGINAL"}),
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "transform"},
		},
		{
			name: "template missing", method: http.MethodPost, url: url, body: with("inputTransformer", map[string]any{}),
			status: http.StatusBadRequest, json: map[string]any{"field": "inputTransformer.inputTemplate"},
		},
		{
			name: "bad path", method: http.MethodPost, url: url,
			body:   with("inputTransformer", map[string]any{"inputPathsMap": map[string]any{"all": "$.data.items[*].sku"}, "inputTemplate": "<all>"}),
			status: http.StatusBadRequest, json: map[string]any{"field": "inputTransformer.inputPathsMap.all"}, contains: []string{"wildcards"},
		},
		{
			name: "reserved variable name", method: http.MethodPost, url: url,
			body:   with("inputTransformer", map[string]any{"inputPathsMap": map[string]any{"ce.id": "$.id"}, "inputTemplate": "<ce.id>"}),
			status: http.StatusBadRequest, json: map[string]any{"field": "inputTransformer.inputPathsMap.ce.id"},
		},
		{
			name: "too many variables", method: http.MethodPost, url: url,
			body: with("inputTransformer", map[string]any{"inputPathsMap": func() map[string]any {
				m := map[string]any{}
				for i := range 101 {
					m["v"+strings.Repeat("x", i)] = "$.id"
				}
				return m
			}(), "inputTemplate": "x"}),
			status: http.StatusBadRequest, json: map[string]any{"field": "inputTransformer.inputPathsMap"}, contains: []string{"at most 100"},
		},
		{
			name: "TEMPLATE value that is not an object", method: http.MethodPost, url: url,
			body:   with("transform", map[string]any{"form": "TEMPLATE", "value": "$.data", "template": "${x}"}),
			status: http.StatusBadRequest, json: map[string]any{"field": "transform.value"},
		},
		{
			name: "event missing", method: http.MethodPost, url: url, body: map[string]any{"input": `1`},
			status: http.StatusBadRequest, json: map[string]any{"field": "event"},
		},
		{
			name: "event invalid", method: http.MethodPost, url: url, body: map[string]any{"input": `1`, "event": map[string]any{"id": "x"}},
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEvent", "field": "event"},
		},
		{
			name: "unknown field", method: http.MethodPost, url: url, body: `{"inputTemplate": "x", "event": {}}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "inputTemplate"},
		},
		{
			name: "malformed JSON", method: http.MethodPost, url: url, body: `{"input": `,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"},
		},
		{
			name: "GET is not allowed", method: http.MethodGet, url: url,
			status: http.StatusMethodNotAllowed,
			after: func(t *testing.T, _ *env, resp *response) {
				assert.Contains(t, resp.Header.Get("Allow"), http.MethodPost)
			},
		},
	})
}
