package web_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

func withArchive(busName, name string, body map[string]any) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		in := map[string]any{"name": name}
		for k, v := range body {
			in[k] = v
		}
		e.must(t, http.MethodPost, "/api/v1/buses/"+busName+"/archives", in, http.StatusCreated)
	}
}

// TestArchiveAPI: what the archive endpoints accept and refuse, each refusal naming the problem.
func TestArchiveAPI(t *testing.T) {
	t.Parallel()
	orders := withBus("orders")
	archived := setups(orders, withArchive("orders", "keep", map[string]any{"retentionDays": 30,
		"eventPattern": map[string]any{"type": []any{"order.created"}}}))
	run(t, []scenario{
		{
			name: "create with every field", method: http.MethodPost, url: "/api/v1/buses/orders/archives", setup: orders,
			body:   map[string]any{"name": "keep", "description": "orders", "retentionDays": 30, "eventPattern": `{"type": ["order.created"]}`},
			status: http.StatusCreated,
			json: map[string]any{"name": "keep", "description": "orders", "retentionDays": 30, "state": "ENABLED", "bus": "orders",
				"eventPattern": map[string]any{"type": []any{"order.created"}}},
			after: func(t *testing.T, e *env, _ *response) {
				synced, _ := e.runtime.calls()
				assert.Contains(t, synced, "orders", "the bus's router is told")
			},
		},
		{
			name: "a negative retention", method: http.MethodPost, url: "/api/v1/buses/orders/archives", setup: orders,
			body: map[string]any{"name": "keep", "retentionDays": -1}, status: http.StatusBadRequest,
			json: map[string]any{"field": "retentionDays"},
		},
		{
			name: "a retention that is not a number", method: http.MethodPost, url: "/api/v1/buses/orders/archives", setup: orders,
			body: `{"name": "keep", "retentionDays": "30"}`, status: http.StatusBadRequest, contains: []string{"retentionDays"},
		},
		{
			name: "the classic pattern mistake", method: http.MethodPost, url: "/api/v1/buses/orders/archives", setup: orders,
			body: map[string]any{"name": "keep", "eventPattern": map[string]any{"type": "order.created"}}, status: http.StatusBadRequest,
			json: map[string]any{"code": "InvalidEventPattern"},
		},
		{
			name: "an unknown field", method: http.MethodPost, url: "/api/v1/buses/orders/archives", setup: orders,
			body: `{"name": "keep", "retention": 3}`, status: http.StatusBadRequest, contains: []string{"retention"},
		},
		{
			name: "on a bus that does not exist", method: http.MethodPost, url: "/api/v1/buses/nope/archives",
			body: map[string]any{"name": "keep"}, status: http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "names are unique per account, across buses", method: http.MethodPost, url: "/api/v1/buses/other/archives",
			setup: setups(archived, withBus("other")), body: map[string]any{"name": "keep"},
			status: http.StatusConflict, json: map[string]any{"code": "ArchiveAlreadyExists"},
		},
		{
			name: "another bus's archive is not found on this one", method: http.MethodGet, url: "/api/v1/buses/other/archives/keep",
			setup: setups(archived, withBus("other")), status: http.StatusNotFound, json: map[string]any{"code": "ArchiveNotFound"},
		},
		{
			name: "patch the retention keeps the pattern", method: http.MethodPatch, url: "/api/v1/buses/orders/archives/keep",
			setup: archived, body: map[string]any{"retentionDays": 0}, status: http.StatusOK,
			json: map[string]any{"retentionDays": 0, "eventPattern": map[string]any{"type": []any{"order.created"}}},
		},
		{
			name: "patch the pattern away: every event", method: http.MethodPatch, url: "/api/v1/buses/orders/archives/keep",
			setup: archived, body: `{"eventPattern": null}`, status: http.StatusOK,
			absent: []string{"eventPattern"},
		},
		{
			name: "a bus with an archive cannot be deleted", method: http.MethodDelete, url: "/api/v1/buses/orders",
			setup: archived, status: http.StatusConflict, contains: []string{"archive", "keep"},
		},
		{
			name: "delete", method: http.MethodDelete, url: "/api/v1/buses/orders/archives/keep", setup: archived,
			status: http.StatusNoContent,
			after: func(t *testing.T, e *env, _ *response) {
				e.must(t, http.MethodGet, "/api/v1/buses/orders/archives/keep", nil, http.StatusNotFound)
				e.must(t, http.MethodDelete, "/api/v1/buses/orders", nil, http.StatusNoContent)
			},
		},
	})
}
