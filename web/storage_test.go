package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/eventstore"
	"github.com/eventbridge-go/eventbridge/adapter/storagequota"
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

// TestAccountStorageQuota: with the meter of adapter/storagequota, a bus whose own maxBytes does not fit its
// account's quota is refused with AccountStorageQuotaExceeded naming the field (also right after another
// reservation, before the meter read the streams again); events that fill the quota because nothing consumed them
// refuse that account's PutEvents with the same code while another account keeps putting; once the router's
// consumer acknowledged them they are trimmed and PutEvents works again. A bus of its own size that holds that
// much undelivered refuses the event that does not fit with BusFull, keeping what it holds.
func TestAccountStorageQuota(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	e.services.Buses.Store.(*eventstore.Store).DLQ = stream.DLQLimits{MaxBytes: 1 << 20}
	meter := &storagequota.Meter{JS: e.js, Names: e.names, Buses: e.buses, Quota: 8 << 20}
	e.services.Buses.Storage = meter
	codeOf := func(r *response) string {
		var p struct{ Code, Field string }
		require.NoError(t, json.Unmarshal(r.Body, &p), string(r.Body))
		return strings.TrimSpace(p.Code + " " + p.Field)
	}
	put := func(account, busName string, i int) *response {
		return e.do(t, http.MethodPost, "/api/v1/buses/"+busName+"/events",
			map[string]string{"Content-Type": "application/cloudevents+json", "X-Account-Id": account},
			map[string]any{"specversion": "1.0", "id": fmt.Sprint(i), "source": "/s", "type": "t", "data": strings.Repeat("x", 64<<10)})
	}

	e.must(t, http.MethodPost, "/api/v1/buses", map[string]any{"name": "orders"}, http.StatusCreated)
	require.NoError(t, meter.Check(ctx)) // the account's dead letters (1 MiB) now count
	r := e.must(t, http.MethodPost, "/api/v1/buses", map[string]any{"name": "big", "retention": map[string]any{"maxBytes": 16 << 20}}, http.StatusConflict)
	assert.Equal(t, "AccountStorageQuotaExceeded retention.maxBytes", codeOf(r))
	e.must(t, http.MethodPost, "/api/v1/buses", map[string]any{"name": "sized", "retention": map[string]any{"maxBytes": 4 << 20}}, http.StatusCreated)
	r = e.must(t, http.MethodPost, "/api/v1/buses", map[string]any{"name": "sized2", "retention": map[string]any{"maxBytes": 4 << 20}}, http.StatusConflict)
	assert.Equal(t, "AccountStorageQuotaExceeded retention.maxBytes", codeOf(r), "the reservation just made counts before the meter reads again")
	require.NoError(t, meter.Check(ctx))
	assert.EqualValues(t, 5<<20, meter.Footprint("default").Reserved, "4 MiB of its own and 1 MiB of dead letters")

	// Nothing reads "orders": 64 KiB events fill the rest of the quota (3 MiB).
	i := 0
	for ; meter.Footprint("default").Bytes() < 8<<20; i++ {
		require.Less(t, i, 100, "the quota never filled")
		resp := put("default", "orders", i)
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
		require.NoError(t, meter.Check(ctx))
	}
	r = put("default", "orders", i)
	require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
	assert.Equal(t, "AccountStorageQuotaExceeded", codeOf(r))
	assert.Contains(t, string(r.Body), "storage quota")

	// Another account is not affected.
	resp := e.do(t, http.MethodPost, "/api/v1/buses", map[string]string{"X-Account-Id": "other"}, map[string]any{"name": "orders"})
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Body))
	require.NoError(t, meter.Check(ctx))
	resp = put("other", "orders", 1)
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))

	// The router routes everything: what it acknowledged is trimmed and the account puts again.
	b, err := e.buses.Get(ctx, "default", "orders")
	require.NoError(t, err)
	s, err := e.js.Stream(ctx, e.names.BusStream(b.ID()))
	require.NoError(t, err)
	cons, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "router", FilterSubject: e.names.BusIn(b.ID()), AckPolicy: jetstream.AckExplicitPolicy})
	require.NoError(t, err)
	batch, err := cons.Fetch(i, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(t, err)
	for m := range batch.Messages() {
		require.NoError(t, m.DoubleAck(ctx))
	}
	require.NoError(t, meter.Check(ctx))
	assert.Less(t, meter.Footprint("default").Bytes(), int64(6<<20), "delivered events were trimmed")
	resp = put("default", "orders", i+1)
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))

	// "sized" holds 4 MiB of its own: what does not fit is refused, what it holds stays.
	var stored int
	for j := 0; ; j++ {
		require.Less(t, j, 100, "the bus never filled")
		resp := put("default", "sized", j)
		if resp.Status == http.StatusConflict {
			assert.Equal(t, "BusFull", codeOf(resp))
			break
		}
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
		stored++
	}
	sb, err := e.buses.Get(ctx, "default", "sized")
	require.NoError(t, err)
	ss, err := e.js.Stream(ctx, e.names.BusStream(sb.ID()))
	require.NoError(t, err)
	assert.EqualValues(t, stored, ss.CachedInfo().State.Msgs, "a full bus discards nothing it holds")
	assert.Greater(t, stored, 50)
}
