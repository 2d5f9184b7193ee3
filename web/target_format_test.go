package web_test

import (
	"net/http"
	"testing"
)

// TestTargetFormat: a target's format is visible and changeable through /api/v1: cloudevents by default, aws on
// request, anything else refused naming the field, and aws refused for a bus target, which forwards the event itself.
func TestTargetFormat(t *testing.T) {
	t.Parallel()
	rule := setups(withBus("orders"), withBus("audit"), withRule("orders", "created"))
	const url = "/api/v1/buses/orders/rules/created/targets/hook"
	hook := func(format string) map[string]any {
		b := map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"}}
		if format != "" {
			b["format"] = format
		}
		return b
	}
	run(t, []scenario{
		{name: "cloudevents by default", method: http.MethodPut, url: url, setup: rule, body: hook(""),
			status: http.StatusCreated, json: map[string]any{"format": "cloudevents"}},
		{name: "aws on request, and read back", method: http.MethodPut, url: url, setup: rule,
			body: map[string]any{"type": "http", "config": map[string]any{"url": "https://example.com/hook"}, "format": "aws",
				"inputTransformer": map[string]any{"inputPathsMap": map[string]any{"id": "$.detail.id"},
					"inputTemplate": `{"id": <id>, "rule": <aws.events.rule-name>}`}},
			status: http.StatusCreated, json: map[string]any{"format": "aws", "inputTransformer.inputPathsMap.id": "$.detail.id"},
			after: func(t *testing.T, e *env, _ *response) {
				v := e.must(t, http.MethodGet, url, nil, http.StatusOK).JSON(t)
				assertJSONPath(t, v, "format", "aws")
				v = e.must(t, http.MethodPut, url, hook("cloudevents"), http.StatusOK).JSON(t)
				assertJSONPath(t, v, "format", "cloudevents")
			}},
		{name: "another format", method: http.MethodPut, url: url, setup: rule, body: hook("xml"),
			status: http.StatusBadRequest, json: map[string]any{"field": "format"}, contains: []string{"cloudevents", "aws"}},
		{name: "a bus target has no format of its own", method: http.MethodPut, url: url, setup: rule,
			body:   map[string]any{"type": "bus", "config": map[string]any{"bus": "audit"}, "format": "aws"},
			status: http.StatusBadRequest, json: map[string]any{"field": "format"}},
	})
}
