package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceContextPropagated: an event with the distributed-tracing extension's traceparent and tracestate is sent
// with the W3C Trace Context headers of the same values (replacing configured ones), in both modes, while the event
// itself keeps them; a traceparent that is not a valid one is not propagated, nor its tracestate.
func TestTraceContextPropagated(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, mode := range []string{"binary", "structured"} {
		srv, got := captureServer(t, http.StatusOK)
		s := newSink(t, map[string]string{"url": srv.URL, "mode": mode,
			"headers": `{"traceparent": "00-11111111111111111111111111111111-2222222222222222-00", "tracestate": "static=1"}`}, true)
		e := orderEvent()
		e.SetExtension("traceparent", tp)
		e.SetExtension("tracestate", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
		require.NoError(t, s.Write(context.Background(), e))
		req := <-got
		assert.Equal(t, tp, req.header.Get("Traceparent"), mode)
		assert.Equal(t, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", req.header.Get("Tracestate"), mode)
		if mode == "binary" {
			assert.Equal(t, tp, req.header.Get("Ce-Traceparent"), "the event keeps its extension")
		} else {
			var body map[string]any
			require.NoError(t, json.Unmarshal(req.body, &body))
			assert.Equal(t, tp, body["traceparent"], "the event keeps its extension")
		}
	}

	for name, bad := range map[string]string{
		"not hex":        "00-4bf92f3577b34da6a3ce929d0e0e473z-00f067aa0ba902b7-01",
		"upper case":     "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"version ff":     "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"zero trace id":  "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"zero parent id": "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"short":          "00-4bf92f3577b34da6-00f067aa0ba902b7-01",
	} {
		srv, got := captureServer(t, http.StatusOK)
		s := newSink(t, map[string]string{"url": srv.URL}, true)
		e := orderEvent()
		e.SetExtension("traceparent", bad)
		e.SetExtension("tracestate", "rojo=1")
		require.NoError(t, s.Write(context.Background(), e))
		req := <-got
		assert.Empty(t, req.header.Get("Traceparent"), name)
		assert.Empty(t, req.header.Get("Tracestate"), name)
	}

	srv, got := captureServer(t, http.StatusOK)
	s := newSink(t, map[string]string{"url": srv.URL}, true)
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	req := <-got
	assert.Empty(t, req.header.Get("Traceparent"), "an event without a trace context sends none")
}
