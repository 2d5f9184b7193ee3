package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A rule's layout (the console's node positions) is kept and answered as given; PATCH replaces or removes it and
// leaves it alone when absent.
func TestRuleLayout(t *testing.T) {
	t.Parallel()
	orders := withBus("orders")
	layout := map[string]any{"nodes": map[string]any{"bus": map[string]any{"x": 10, "y": 20.5}}, "viewport": map[string]any{"zoom": 1.25}}
	withLayout := func(t *testing.T, e *env) {
		e.must(t, http.MethodPut, "/api/v1/buses/orders/rules/drawn", map[string]any{
			"eventPattern": map[string]any{"source": []any{"shop"}}, "layout": layout}, http.StatusCreated)
	}
	run(t, []scenario{
		{
			name: "created with a layout", method: http.MethodGet, url: "/api/v1/buses/orders/rules/drawn",
			setup: setups(orders, withLayout), status: http.StatusOK, json: map[string]any{"layout": layout},
		},
		{
			name: "a patch without layout keeps it", method: http.MethodPatch, url: "/api/v1/buses/orders/rules/drawn",
			setup: setups(orders, withLayout), body: map[string]any{"description": "d"},
			status: http.StatusOK, json: map[string]any{"description": "d", "layout": layout},
		},
		{
			name: "a patch replaces it", method: http.MethodPatch, url: "/api/v1/buses/orders/rules/drawn",
			setup: setups(orders, withLayout), body: map[string]any{"layout": map[string]any{"v": 2}},
			status: http.StatusOK, json: map[string]any{"layout": map[string]any{"v": 2}},
		},
		{
			name: "null removes it", method: http.MethodPatch, url: "/api/v1/buses/orders/rules/drawn",
			setup: setups(orders, withLayout), body: `{"layout": null}`, status: http.StatusOK,
			after: func(t *testing.T, _ *env, resp *response) {
				assert.NotContains(t, string(resp.Body), `"layout"`)
			},
		},
		{
			name: "a layout that is not an object", method: http.MethodPut, url: "/api/v1/buses/orders/rules/drawn",
			setup: orders, body: `{"eventPattern": {"source": ["shop"]}, "layout": [1, 2]}`,
			status: http.StatusBadRequest, json: map[string]any{"field": "layout"},
		},
		{
			name: "a layout over 64 KiB", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup: orders, body: `{"name": "big", "eventPattern": {"source": ["shop"]}, "layout": {"x": "` + strings.Repeat("a", 70<<10) + `"}}`,
			status: http.StatusBadRequest, json: map[string]any{"field": "layout"},
		},
	})
}
