package web_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestTestEventPattern(t *testing.T) {
	t.Parallel()
	const url = "/api/v1/test-event-pattern"
	order := map[string]any{"specversion": "1.0", "id": "e1", "source": "shop.web", "type": "order.created",
		"data": map[string]any{"amount": 120, "region": "eu", "ip": "10.0.3.7"}}
	run(t, []scenario{
		{
			name: "match", method: http.MethodPost, url: url,
			body: map[string]any{"event": order, "eventPattern": map[string]any{
				"source": []any{map[string]any{"prefix": "shop."}},
				"data":   map[string]any{"amount": []any{map[string]any{"numeric": []any{">", 100}}}, "ip": []any{map[string]any{"cidr": "10.0.0.0/16"}}}}},
			status: http.StatusOK, json: map[string]any{"match": true, "explanation": nil},
		},
		{
			name: "pattern as a string, as Amazon's SDKs send it", method: http.MethodPost, url: url,
			body:   map[string]any{"event": order, "eventPattern": `{"type": ["order.created"]}`},
			status: http.StatusOK, json: map[string]any{"match": true},
		},
		{
			name: "mismatch is explained", method: http.MethodPost, url: url,
			body: `{"event": {"specversion": "1.0", "id": "e1", "source": "shop.web", "type": "order.created", "data": {"amount": 120}},
				"eventPattern": {"type": ["order.created"], "data": {"amount": [{"numeric": [">", 500]}]}}}`,
			status:   http.StatusOK,
			json:     map[string]any{"match": false, "explanation.path": "data.amount", "explanation.actual": 120},
			contains: []string{`"expected":[{"numeric":[">",500]}]`, `"reason":`},
		},
		{
			name: "a missing field is explained", method: http.MethodPost, url: url,
			body:   map[string]any{"event": order, "eventPattern": map[string]any{"data": map[string]any{"customer": []any{"acme"}}}},
			status: http.StatusOK, json: map[string]any{"match": false, "explanation.path": "data.customer"},
			absent: []string{`"actual"`},
		},
		{
			name: "invalid pattern", method: http.MethodPost, url: url,
			body:   map[string]any{"event": order, "eventPattern": map[string]any{"type": "order.created"}},
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEventPattern"}, contains: []string{"type"},
		},
		{
			name: "unknown operator", method: http.MethodPost, url: url,
			body:   map[string]any{"event": order, "eventPattern": map[string]any{"type": []any{map[string]any{"bogus": 1}}}},
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEventPattern"}, contains: []string{"bogus"},
		},
		{
			name: "pattern over 4 KiB", method: http.MethodPost, url: url,
			body:   map[string]any{"event": order, "eventPattern": map[string]any{"type": []any{strings.Repeat("x", 5000)}}},
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEventPattern"},
		},
		{
			name: "missing pattern", method: http.MethodPost, url: url, body: map[string]any{"event": order},
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEventPattern"},
		},
		{
			name: "missing event", method: http.MethodPost, url: url,
			body:   map[string]any{"eventPattern": map[string]any{"type": []any{"x"}}},
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "event"},
		},
		{
			name: "event that is not an object", method: http.MethodPost, url: url,
			body:   map[string]any{"eventPattern": map[string]any{"type": []any{"x"}}, "event": []any{1}},
			status: http.StatusBadRequest, json: map[string]any{"field": "event"},
		},
		{
			name: "malformed JSON", method: http.MethodPost, url: url, body: `{"eventPattern": `,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"},
		},
	})
}
