package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRetriesSurviveARestart: a target that fails for a while receives every event once it recovers, although
// the process was stopped and started again while the events were being retried.
func TestRetriesSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	m := startMain(t, dir)
	a := apiOf(t, m)

	recv := newReceiver(t)
	var down atomic.Bool
	var refused atomic.Int64
	down.Store(true)
	gate := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			refused.Add(1)
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		}
		recv.srv.Config.Handler.ServeHTTP(w, r)
	})
	front := httptest.NewServer(gate)
	t.Cleanup(front.Close)

	a.must("POST", "/api/v1/buses", map[string]any{"name": "orders"}, 201)
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "all",
		"eventPattern": map[string]any{"type": []any{"order.created"}}}, 201)
	a.must("PUT", "/api/v1/buses/orders/rules/all/targets/hook", httpTarget(front.URL), 201)

	const n = 20
	want := map[string]bool{}
	var batch []map[string]any
	for i := range n {
		id := fmt.Sprintf("evt-%02d", i)
		want[id] = true
		batch = append(batch, event(id, "shop", "order.created", map[string]any{"n": i}))
	}
	a.putBatch("orders", batch)
	require.Eventually(t, func() bool { return refused.Load() >= 2*n }, 30*time.Second, 20*time.Millisecond,
		"every event was attempted and refused at least twice")

	require.NoError(t, m.Close())
	m = startMain(t, dir)
	defer func() { require.NoError(t, m.Close()) }()
	down.Store(false)
	recv.waitFor(t, want)
}
