package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEventTypes: the (source, type) pairs of the events put on a bus are listed with counts and a schema of their
// data once the recorder wrote them; nothing is written per event.
func TestEventTypes(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dialect string) {
		e := newEnv(t, natsServer(t), dialect)
		e.createBus(t, "orders")
		e.createBus(t, "other")
		put := func(bus string, events ...map[string]any) {
			e.do(t, http.MethodPost, "/api/v1/buses/"+bus+"/events", map[string]string{"Content-Type": batch}, jsonOf(t, events))
		}
		put("orders",
			ce("1", "shop/web", "order.created", map[string]any{"id": 1, "sku": "a"}),
			ce("2", "shop/web", "order.created", map[string]any{"id": 2}),
			ce("3", "shop/app", "order.paid", map[string]any{"id": 1, "amount": 9.5}))
		put("other", ce("4", "crm", "contact.added", map[string]any{"name": "x"}))

		got := e.must(t, http.MethodGet, "/api/v1/buses/orders/event-types", nil, http.StatusOK)
		assert.JSONEq(t, `{"eventTypes": []}`, string(got.Body), "nothing is written before the recorder's flush")

		require.NoError(t, e.recorder.Flush(context.Background()))
		got = e.must(t, http.MethodGet, "/api/v1/buses/orders/event-types", nil, http.StatusOK)
		assert.JSONEq(t, `{"eventTypes": [
			{"source": "shop/app", "type": "order.paid", "count": 1, "schema": {"type": "object", "required": ["amount", "id"],
				"properties": {"amount": {"type": "number"}, "id": {"type": "integer"}}}, "schemaVersion": 1},
			{"source": "shop/web", "type": "order.created", "count": 2, "schema": {"type": "object", "required": ["id"],
				"properties": {"id": {"type": "integer"}, "sku": {"type": "string"}}}, "schemaVersion": 1}]}`,
			withoutTimes(t, got.Body))
		assert.Contains(t, string(got.Body), `"firstSeen":"`)

		page := e.must(t, http.MethodGet, "/api/v1/buses/orders/event-types?limit=1", nil, http.StatusOK)
		assert.Contains(t, string(page.Body), `"nextToken":"`)
		e.must(t, http.MethodGet, "/api/v1/buses/orders/event-types?nextToken=%21%21", nil, http.StatusBadRequest)
		e.must(t, http.MethodGet, "/api/v1/buses/nope/event-types", nil, http.StatusNotFound)
		other := e.do(t, http.MethodGet, "/api/v1/buses/orders/event-types", map[string]string{"X-Account-Id": "b"}, nil)
		assert.Equal(t, http.StatusNotFound, other.Status, "another account's bus")
	})
}

// withoutTimes drops firstSeen and lastSeen from an event type list.
func withoutTimes(t *testing.T, body []byte) string {
	t.Helper()
	var v map[string][]map[string]any
	require.NoError(t, json.Unmarshal(body, &v))
	for _, et := range v["eventTypes"] {
		delete(et, "firstSeen")
		delete(et, "lastSeen")
	}
	return string(jsonOf(t, v))
}
