package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scrape reads the control plane's /metrics with a's key.
func (a api) scrape() map[string]*dto.MetricFamily {
	a.t.Helper()
	status, body := a.do(http.MethodGet, "/metrics", "", nil)
	require.Equal(a.t, http.StatusOK, status, string(body))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(a.t, err)
	return families
}

// value is the value of the series of family name whose labels include labels (-1 when there is none).
func value(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f, ok := families[name]
	if !ok {
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue()
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return -1
}

// TestControlPlaneMetrics: /metrics answers instance administrators only, and its series move with what the
// control plane does: PutEvents by bus and outcome, requests by operation and status with their latency,
// authentication failures, reconciliation passes, and the health and counters of targets.
func TestControlPlaneMetrics(t *testing.T) {
	t.Parallel()
	m := startMain(t, t.TempDir(), "--reconcile-interval", "1s")
	t.Cleanup(func() { _ = m.Close() })
	admin := apiOf(t, m)
	r := newReceiver(t)
	admin.must("POST", "/api/v1/buses", map[string]any{"name": "h"}, 201)
	admin.must("POST", "/api/v1/buses/h/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"h"}}}, 201)
	admin.must("PUT", "/api/v1/buses/h/rules/all/targets/ok", httpTarget(r.srv.URL), 201)
	admin.must("PUT", "/api/v1/buses/h/rules/all/targets/down", httpTarget("http://"+closedPort(t)+"/"), 201)
	admin.waitHealth("/api/v1/buses/h/rules/all/targets/ok", "HEALTHY", 15*time.Second)
	admin.waitHealth("/api/v1/buses/h/rules/all/targets/down", "HEALTHY", 15*time.Second)

	before := admin.scrape()
	assert.Equal(t, -1.0, value(before, "eventbridge_putevents_events_total", map[string]string{"bus": "h"}), "nothing put yet")
	target := func(name string, extra map[string]string) map[string]string {
		l := map[string]string{"account": "default", "bus": "h", "rule": "all", "target": name}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	assert.Equal(t, 1.0, value(before, "eventbridge_target_health", target("down", map[string]string{"state": "HEALTHY"})))
	assert.Equal(t, 0.0, value(before, "eventbridge_target_health", target("down", map[string]string{"state": "RETRYING"})))
	assert.Equal(t, 1.0, value(before, "eventbridge_runtime_reachable", nil))

	admin.putBatch("h", []map[string]any{event("e1", "h", "t", nil), event("e2", "h", "t", nil)})
	admin.putBatch("h", []map[string]any{event("e1", "h", "t", nil), event("e2", "h", "t", nil)}) // again: duplicates
	b, err := json.Marshal([]map[string]any{event("e3", "h", "t", nil), {"specversion": "1.0", "id": "no-source", "type": "t"}})
	require.NoError(t, err)
	status, out := admin.do(http.MethodPost, "/api/v1/buses/h/events", "application/cloudevents-batch+json", b)
	require.Equal(t, http.StatusOK, status, string(out))
	gh := decodeSource(t, admin.must("POST", "/api/v1/buses/h/sources", map[string]any{"name": "gh", "type": "http"}, 201))
	for range 2 {
		status, out := hook(t, "POST", gh.Webhook.URLs[0], map[string]string{"Content-Type": "application/json"}, []byte(`{"push": 1}`))
		require.Equal(t, http.StatusOK, status, string(out))
	}
	stranger := api{t: t, base: admin.base, key: "ebk_not-a-key"}
	status, _ = stranger.do(http.MethodGet, "/api/v1/buses", "", nil)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Eventually(t, func() bool { return len(r.snapshot()) == 3 }, 10*time.Second, 50*time.Millisecond)

	var after map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		after = admin.scrape()
		return value(after, "eventbridge_target_health", target("down", map[string]string{"state": "RETRYING"})) == 1 &&
			value(after, "eventbridge_target_records", target("ok", map[string]string{"outcome": "delivered"})) == 3 &&
			value(after, "eventbridge_reconcile_passes_total", map[string]string{"outcome": "ok"}) >= 1
	}, 15*time.Second, 100*time.Millisecond, "target health, target counters and reconciliation passes")
	put := func(outcome string) float64 {
		return value(after, "eventbridge_putevents_events_total", map[string]string{"account": "default", "bus": "h", "outcome": outcome})
	}
	assert.Equal(t, 3.0, put("stored"))
	assert.Equal(t, 2.0, put("duplicate"))
	assert.Equal(t, 1.0, put("InvalidEvent"))
	assert.Equal(t, 2.0, value(after, "eventbridge_webhook_events_total",
		map[string]string{"account": "default", "bus": "h", "source": "gh", "outcome": "stored"}), "the webhook's requests, per source")
	assert.Equal(t, 3.0, value(after, "eventbridge_api_requests_total", map[string]string{"operation": "events.put", "code": "200"}))
	assert.Equal(t, 3.0, value(after, "eventbridge_api_request_duration_seconds", map[string]string{"operation": "events.put"}))
	assert.GreaterOrEqual(t, value(after, "eventbridge_api_auth_failures_total", map[string]string{"reason": "unauthenticated"}), 1.0)
	assert.Equal(t, 0.0, value(after, "eventbridge_target_health", target("down", map[string]string{"state": "HEALTHY"})))
	assert.Greater(t, value(after, "go_goroutines", nil), 0.0)
	forced := value(after, "go_gc_cycles_forced_gc_cycles_total", nil) // gcpace's releases
	assert.GreaterOrEqual(t, forced, 0.0, "the collections the process forced are counted")
	assert.GreaterOrEqual(t, value(after, "go_gc_cycles_total_gc_cycles_total", nil), forced)

	// Instance administrators only.
	status, _ = stranger.do(http.MethodGet, "/metrics", "", nil)
	assert.Equal(t, http.StatusUnauthorized, status)
	admin.account = "default"
	var key struct{ Secret string }
	require.NoError(t, json.Unmarshal(admin.must("POST", "/api/v1/api-keys", map[string]any{"name": "owner", "role": "admin"}, 201), &key))
	owner := api{t: t, base: admin.base, key: key.Secret}
	status, body := owner.do(http.MethodGet, "/metrics", "", nil)
	assert.Equal(t, http.StatusForbidden, status, "an account's administrator is not the instance's: %s", body)
}
