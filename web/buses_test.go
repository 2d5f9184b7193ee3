package web_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
)

func TestBuses(t *testing.T) {
	t.Parallel()
	run(t, []scenario{
		{
			name: "create with defaults", method: http.MethodPost, url: "/api/v1/buses",
			body:   map[string]any{"name": "orders", "description": "shop orders"},
			status: http.StatusCreated,
			json: map[string]any{"name": "orders", "description": "shop orders",
				"retention": map[string]any{"maxAge": "72h0m0s"}},
			contains: []string{`"createdAt":"`},
			after: func(t *testing.T, e *env, resp *response) {
				got := e.must(t, http.MethodGet, "/api/v1/buses/orders", nil, http.StatusOK)
				assert.JSONEq(t, string(resp.Body), string(got.Body), "a created bus reads back as it was answered")
				synced, _ := e.runtime.calls()
				assert.Equal(t, []string{"orders"}, synced, "the bus's router is applied")
				b, err := e.buses.Get(context.Background(), domain.DefaultAccountID, "orders")
				require.NoError(t, err)
				_, err = e.js.Stream(context.Background(), e.names.BusStream(b.ID()))
				assert.NoError(t, err, "the bus has its stream")
			},
		},
		{
			name: "create with a retention", method: http.MethodPost, url: "/api/v1/buses",
			body:   `{"name": "orders", "retention": {"maxAge": "24h", "maxBytes": 2097152}}`,
			status: http.StatusCreated,
			json:   map[string]any{"retention": map[string]any{"maxAge": "24h0m0s", "maxBytes": 2097152}},
		},
		{
			name: "name with a space", method: http.MethodPost, url: "/api/v1/buses",
			body:   map[string]any{"name": "orders eu"},
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "name"},
		},
		{
			name: "name with dots and slashes, as AWS allows", method: http.MethodPost, url: "/api/v1/buses",
			body:   map[string]any{"name": "org.shop/orders.eu"},
			status: http.StatusCreated, json: map[string]any{"name": "org.shop/orders.eu"},
			after: func(t *testing.T, e *env, _ *response) {
				e.must(t, http.MethodGet, "/api/v1/buses/org.shop%2Forders.eu", nil, http.StatusOK)
				e.must(t, http.MethodPost, "/api/v1/buses/org.shop%2Forders.eu/rules", map[string]any{"name": "created.v1",
					"eventPattern": map[string]any{"type": []any{"x"}}}, http.StatusCreated)
				e.must(t, http.MethodGet, "/api/v1/buses/org.shop%2Forders.eu/rules/created.v1", nil, http.StatusOK)
				e.must(t, http.MethodDelete, "/api/v1/buses/org.shop%2Forders.eu/rules/created.v1", nil, http.StatusNoContent)
				e.must(t, http.MethodDelete, "/api/v1/buses/org.shop%2Forders.eu", nil, http.StatusNoContent)
			},
		},
		{
			name: "name too long", method: http.MethodPost, url: "/api/v1/buses",
			body:   map[string]any{"name": strings.Repeat("a", 257)},
			status: http.StatusBadRequest, json: map[string]any{"field": "name"},
		},
		{
			name: "name missing", method: http.MethodPost, url: "/api/v1/buses",
			body:   map[string]any{"description": "x"},
			status: http.StatusBadRequest, json: map[string]any{"field": "name"},
		},
		{
			name: "description too long", method: http.MethodPost, url: "/api/v1/buses",
			body:   map[string]any{"name": "orders", "description": strings.Repeat("x", 513)},
			status: http.StatusBadRequest, json: map[string]any{"field": "description"},
		},
		{
			name: "maxAge not a duration", method: http.MethodPost, url: "/api/v1/buses",
			body:   `{"name": "orders", "retention": {"maxAge": "three days"}}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "retention.maxAge"},
		},
		{
			name: "maxAge too short", method: http.MethodPost, url: "/api/v1/buses",
			body:   `{"name": "orders", "retention": {"maxAge": "1s"}}`,
			status: http.StatusBadRequest, json: map[string]any{"field": "retention.maxAge"},
		},
		{
			name: "maxBytes too small", method: http.MethodPost, url: "/api/v1/buses",
			body:   `{"name": "orders", "retention": {"maxBytes": 1024}}`,
			status: http.StatusBadRequest, json: map[string]any{"field": "retention.maxBytes"},
		},
		{
			name: "maxBytes of the wrong type", method: http.MethodPost, url: "/api/v1/buses",
			body:   `{"name": "orders", "retention": {"maxBytes": "1GB"}}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "retention.maxBytes"},
			contains: []string{"an integer"},
		},
		{
			name: "name of the wrong type", method: http.MethodPost, url: "/api/v1/buses",
			body:   `{"name": 42}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "name"},
		},
		{
			name: "unknown field", method: http.MethodPost, url: "/api/v1/buses",
			body:   `{"name": "orders", "colour": "red"}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "colour"},
			contains: []string{"unknown field"},
		},
		{
			name: "unknown nested field", method: http.MethodPost, url: "/api/v1/buses",
			body:   `{"name": "orders", "retention": {"maxAge": "1h", "maxMessages": 5}}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "retention.maxMessages"},
		},
		{
			name: "malformed JSON", method: http.MethodPost, url: "/api/v1/buses",
			body:   `{"name": "orders",`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"},
			contains: []string{"not valid JSON"},
		},
		{
			name: "syntax error", method: http.MethodPost, url: "/api/v1/buses",
			body:   `{"name": orders}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"},
		},
		{
			name: "empty body", method: http.MethodPost, url: "/api/v1/buses",
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"},
		},
		{
			name: "an array instead of an object", method: http.MethodPost, url: "/api/v1/buses",
			body:   `[{"name": "orders"}]`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"},
		},
		{
			name: "two JSON values", method: http.MethodPost, url: "/api/v1/buses",
			body:   `{"name": "a"} {"name": "b"}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"},
		},
		{
			name: "body over 1 MiB", method: http.MethodPost, url: "/api/v1/buses",
			body:   `{"name": "orders", "description": "` + strings.Repeat("x", 1<<20) + `"}`,
			status: http.StatusRequestEntityTooLarge, json: map[string]any{"code": "PayloadTooLarge"},
		},
		{
			name: "duplicate", method: http.MethodPost, url: "/api/v1/buses",
			body: map[string]any{"name": "orders"}, setup: withBus("orders"),
			status: http.StatusConflict,
			json: map[string]any{"code": "BusAlreadyExists", "type": "https://eventbridge-go.dev/problems/BusAlreadyExists",
				"title": "Conflict", "status": 409},
		},
		{
			name: "names are case-sensitive", method: http.MethodPost, url: "/api/v1/buses",
			body: map[string]any{"name": "Orders"}, setup: withBus("orders"),
			status: http.StatusCreated,
		},
		{
			name: "get", method: http.MethodGet, url: "/api/v1/buses/orders", setup: withBus("orders"),
			status: http.StatusOK,
			json:   map[string]any{"name": "orders", "description": "", "retention": map[string]any{"maxAge": "72h0m0s"}},
		},
		{
			name: "get unknown", method: http.MethodGet, url: "/api/v1/buses/nope",
			status: http.StatusNotFound,
			json:   map[string]any{"code": "BusNotFound", "type": "https://eventbridge-go.dev/problems/BusNotFound", "title": "Not Found"},
		},
		{
			name: "list empty", method: http.MethodGet, url: "/api/v1/buses",
			status: http.StatusOK, json: map[string]any{"buses": []any{}}, absent: []string{"nextToken"},
		},
		{
			name: "list", method: http.MethodGet, url: "/api/v1/buses",
			setup:  setups(withBus("b"), withBus("a")),
			status: http.StatusOK, json: map[string]any{"buses.0.name": "a", "buses.1.name": "b"}, absent: []string{"nextToken"},
		},
		{
			name: "list with limit 0", method: http.MethodGet, url: "/api/v1/buses?limit=0",
			status: http.StatusBadRequest, json: map[string]any{"field": "limit"},
		},
		{
			name: "list with limit over 500", method: http.MethodGet, url: "/api/v1/buses?limit=501",
			status: http.StatusBadRequest, json: map[string]any{"field": "limit"},
		},
		{
			name: "list with a limit that is not a number", method: http.MethodGet, url: "/api/v1/buses?limit=ten",
			status: http.StatusBadRequest, json: map[string]any{"field": "limit"},
		},
		{
			name: "list with a forged token", method: http.MethodGet, url: "/api/v1/buses?nextToken=%21%21",
			status: http.StatusBadRequest, json: map[string]any{"field": "nextToken"},
		},
		{
			name: "delete", method: http.MethodDelete, url: "/api/v1/buses/orders", setup: withBus("orders"),
			status: http.StatusNoContent,
			after: func(t *testing.T, e *env, resp *response) {
				assert.Empty(t, resp.Body)
				e.must(t, http.MethodGet, "/api/v1/buses/orders", nil, http.StatusNotFound)
				_, removed := e.runtime.calls()
				assert.Equal(t, []string{"orders"}, removed, "the bus's connectors are removed")
			},
		},
		{
			name: "delete unknown", method: http.MethodDelete, url: "/api/v1/buses/nope",
			status: http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "delete a bus with rules", method: http.MethodDelete, url: "/api/v1/buses/orders",
			setup:  setups(withBus("orders"), withRule("orders", "created")),
			status: http.StatusConflict, json: map[string]any{"code": "BusNotEmpty"},
			contains: []string{`created`},
			after: func(t *testing.T, e *env, _ *response) {
				e.must(t, http.MethodGet, "/api/v1/buses/orders", nil, http.StatusOK)
			},
		},
		{
			name: "patch the description", method: http.MethodPatch, url: "/api/v1/buses/orders",
			setup: withBus("orders"), body: map[string]any{"description": "new words"},
			status: http.StatusOK,
			json:   map[string]any{"name": "orders", "description": "new words", "retention": map[string]any{"maxAge": "72h0m0s"}},
			after: func(t *testing.T, e *env, resp *response) {
				got := e.must(t, http.MethodGet, "/api/v1/buses/orders", nil, http.StatusOK)
				assert.JSONEq(t, string(resp.Body), string(got.Body), "a patched bus reads back as it was answered")
			},
		},
		{
			name: "patch the retention: the stream follows", method: http.MethodPatch, url: "/api/v1/buses/orders",
			setup: withBus("orders"), body: `{"retention": {"maxAge": "24h", "maxBytes": 2097152}}`,
			status: http.StatusOK,
			json:   map[string]any{"description": "", "retention": map[string]any{"maxAge": "24h0m0s", "maxBytes": 2097152}},
			after: func(t *testing.T, e *env, _ *response) {
				b, err := e.buses.Get(context.Background(), domain.DefaultAccountID, "orders")
				require.NoError(t, err)
				st, err := e.js.Stream(context.Background(), e.names.BusStream(b.ID()))
				require.NoError(t, err)
				assert.Equal(t, 24*time.Hour, st.CachedInfo().Config.MaxAge)
				assert.Equal(t, int64(2097152), st.CachedInfo().Config.MaxBytes)
			},
		},
		{
			name: "patch with a bad maxAge", method: http.MethodPatch, url: "/api/v1/buses/orders",
			setup: withBus("orders"), body: `{"retention": {"maxAge": "1s"}}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "retention.maxAge"},
			after: func(t *testing.T, e *env, _ *response) {
				got := e.must(t, http.MethodGet, "/api/v1/buses/orders", nil, http.StatusOK)
				assert.Contains(t, string(got.Body), `"maxAge":"72h0m0s"`, "a refused patch changes nothing")
			},
		},
		{
			name: "patch with an unknown field", method: http.MethodPatch, url: "/api/v1/buses/orders",
			setup: withBus("orders"), body: `{"name": "renamed"}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "name"},
		},
		{
			name: "patch an unknown bus", method: http.MethodPatch, url: "/api/v1/buses/nope",
			body: map[string]any{"description": "x"}, status: http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "patch another account's bus", method: http.MethodPatch, url: "/api/v1/buses/orders",
			setup: withBus("orders"), headers: map[string]string{"X-Account-Id": "other"},
			body: map[string]any{"description": "x"}, status: http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
	})
}

// TestBusQuota: an account has at most its quota of buses.
func TestBusQuota(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dialect string) {
		e := newEnv(t, natsServer(t), dialect)
		e.services.Buses.MaxPerAccount = 2
		e.createBus(t, "a")
		e.createBus(t, "b")
		resp := e.must(t, http.MethodPost, "/api/v1/buses", map[string]any{"name": "c"}, http.StatusConflict)
		assert.Contains(t, string(resp.Body), `"code":"BusQuotaExceeded"`)
		assert.Contains(t, string(resp.Body), "buses per account (2)")
		e.must(t, http.MethodPost, "/api/v1/buses", map[string]any{"name": "c"}, http.StatusConflict)
		resp = e.do(t, http.MethodPost, "/api/v1/buses", map[string]string{"X-Account-Id": "other"}, map[string]any{"name": "c"})
		assert.Equal(t, http.StatusCreated, resp.Status, "the quota is per account")
	})
}

// TestBusDeleteRemovesStream: deleting a bus deletes its stream.
func TestBusDeleteRemovesStream(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dialect string) {
		e := newEnv(t, natsServer(t), dialect)
		e.createBus(t, "orders")
		b, err := e.buses.Get(context.Background(), domain.DefaultAccountID, "orders")
		require.NoError(t, err)
		e.must(t, http.MethodDelete, "/api/v1/buses/orders", nil, http.StatusNoContent)
		_, err = e.js.Stream(context.Background(), e.names.BusStream(b.ID()))
		assert.True(t, errors.Is(err, jetstream.ErrStreamNotFound), "stream still there: %v", err)
	})
}

// TestBusPaging walks the pages of a list with limit=1 and the nextToken of each answer.
func TestBusPaging(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dialect string) {
		e := newEnv(t, natsServer(t), dialect)
		for _, n := range []string{"c", "a", "b"} {
			e.createBus(t, n)
		}
		var got []string
		url := "/api/v1/buses?limit=1"
		for range 10 {
			v := e.must(t, http.MethodGet, url, nil, http.StatusOK).JSON(t)
			buses := v["buses"].([]any)
			require.Len(t, buses, 1)
			got = append(got, buses[0].(map[string]any)["name"].(string))
			next, _ := v["nextToken"].(string)
			if next == "" {
				break
			}
			url = "/api/v1/buses?limit=1&nextToken=" + next
		}
		assert.Equal(t, []string{"a", "b", "c"}, got)
		v := e.must(t, http.MethodGet, "/api/v1/buses?limit=2", nil, http.StatusOK).JSON(t)
		assert.Len(t, v["buses"], 2)
		assert.NotEmpty(t, v["nextToken"])
	})
}
