package web_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/eventstore"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/stream"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// TestBusRetentionLimits: a retention over the installation's per-bus maximum, and one the event store has no room
// for (each stream reserves its maxBytes), are refused with 409 and a code naming the limit, on create and on
// change, and a refused change leaves the bus as it was; another account keeps creating buses.
func TestBusRetentionLimits(t *testing.T) {
	t.Parallel()
	// A store of 64 MiB: buses of 8 MiB fit, one of 128 MiB does not.
	js := jetstreamtest.StartWith(t, ebjs.ServerConfig{MaxStore: 64 << 20}).JS
	e := newEnv(t, js, persistence.SQLite)
	e.services.Buses.MaxRetention = bus.Retention{MaxBytes: 256 << 20, MaxAge: 96 * time.Hour}
	e.services.Buses.Store.(*eventstore.Store).DLQ = stream.DLQLimits{MaxBytes: 4 << 20}
	small := map[string]any{"maxBytes": 8 << 20}

	codeOf := func(r *response) string {
		var p struct{ Code, Field string }
		require.NoError(t, json.Unmarshal(r.Body, &p), string(r.Body))
		return p.Code + " " + p.Field
	}
	r := e.must(t, http.MethodPost, "/api/v1/buses", map[string]any{"name": "huge", "retention": map[string]any{"maxBytes": 512 << 20}}, http.StatusConflict)
	assert.Equal(t, "RetentionAboveMaximum retention.maxBytes", codeOf(r))
	r = e.must(t, http.MethodPost, "/api/v1/buses", map[string]any{"name": "old", "retention": map[string]any{"maxAge": "120h", "maxBytes": 8 << 20}}, http.StatusConflict)
	assert.Equal(t, "RetentionAboveMaximum retention.maxAge", codeOf(r))
	r = e.must(t, http.MethodPost, "/api/v1/buses", map[string]any{"name": "big", "retention": map[string]any{"maxBytes": 128 << 20}}, http.StatusConflict)
	assert.Equal(t, "InsufficientStorage ", codeOf(r))

	e.must(t, http.MethodPost, "/api/v1/buses", map[string]any{"name": "orders", "retention": small}, http.StatusCreated)
	r = e.must(t, http.MethodPatch, "/api/v1/buses/orders", map[string]any{"retention": map[string]any{"maxBytes": 128 << 20}}, http.StatusConflict)
	assert.Equal(t, "InsufficientStorage ", codeOf(r))
	var got struct{ Retention struct{ MaxBytes int64 } }
	require.NoError(t, json.Unmarshal(e.must(t, http.MethodGet, "/api/v1/buses/orders", nil, http.StatusOK).Body, &got))
	assert.EqualValues(t, 8<<20, got.Retention.MaxBytes, "a refused change leaves the bus as it was")
	e.must(t, http.MethodPatch, "/api/v1/buses/orders", map[string]any{"retention": map[string]any{"maxBytes": 512 << 20}}, http.StatusConflict)

	// Another account, and the same one, keep creating buses that fit; events are still put.
	resp := e.do(t, http.MethodPost, "/api/v1/buses", map[string]string{"X-Account-Id": "other"},
		map[string]any{"name": "orders", "retention": small})
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Body))
	resp = e.do(t, http.MethodPost, "/api/v1/buses/orders/events", map[string]string{"Content-Type": "application/cloudevents+json"},
		map[string]any{"specversion": "1.0", "id": "1", "source": "/s", "type": "t"})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
}

// TestBusOverANewMaximumStillChanges: a bus made before the maximum was lowered keeps its retention, and its other
// fields still change.
func TestBusOverANewMaximumStillChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	e.must(t, http.MethodPost, "/api/v1/buses", map[string]any{"name": "orders", "retention": map[string]any{"maxBytes": 64 << 20}}, http.StatusCreated)
	e.services.Buses.MaxRetention = bus.Retention{MaxBytes: 16 << 20}
	e.must(t, http.MethodPatch, "/api/v1/buses/orders", map[string]any{"description": "still changes"}, http.StatusOK)
	e.must(t, http.MethodPatch, "/api/v1/buses/orders", map[string]any{"retention": map[string]any{"maxBytes": 32 << 20}}, http.StatusConflict)
}
