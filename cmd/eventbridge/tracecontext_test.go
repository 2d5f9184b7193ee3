package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientTraceContextReachesTheTarget: a traceparent (and tracestate) the client sends with its event, as the
// CloudEvents distributed-tracing extension, arrives at the HTTP target as the W3C Trace Context headers, and the
// event keeps its extension.
func TestClientTraceContextReachesTheTarget(t *testing.T) {
	t.Parallel()
	m := startMain(t, t.TempDir())
	t.Cleanup(func() { _ = m.Close() })
	a := apiOf(t, m)
	got := make(chan http.Header, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "tr"}, 201)
	a.must("POST", "/api/v1/buses/tr/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
	a.must("PUT", "/api/v1/buses/tr/rules/all/targets/t", httpTarget(srv.URL), 201)
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	ev := event("e1", "shop", "order.created", map[string]any{"n": 1})
	ev["traceparent"], ev["tracestate"] = tp, "congo=t61rcWkgMzE"
	a.putBatch("tr", []map[string]any{ev})
	select {
	case h := <-got:
		assert.Equal(t, tp, h.Get("Traceparent"), "the client's trace context reaches the target")
		assert.Equal(t, "congo=t61rcWkgMzE", h.Get("Tracestate"))
		assert.Equal(t, tp, h.Get("Ce-Traceparent"), "and the event keeps its extension")
	case <-time.After(15 * time.Second):
		require.FailNow(t, "the target got nothing")
	}
}
