package worker_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker"
)

// getMetrics GETs url and parses the answer as the Prometheus text format.
func getMetrics(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return mfs
}

// series returns the value of the counter or gauge of family name whose labels are exactly labels.
func series(t *testing.T, mfs map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	require.Contains(t, mfs, name)
	for _, m := range mfs[name].GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if assert.ObjectsAreEqual(labels, got) {
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	require.Failf(t, "missing series", "%s%v", name, labels)
	return 0
}

// GET /metrics on the REST listener reports what the tasks of a worker did and their states.
func TestMetrics(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	w, client := startWorker(t, env)
	ctx := context.Background()
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(), Config: routerConfig(t, rule("r1", "t", 0))})
	require.NoError(t, err)
	tg := newTarget(t)
	tg.failFirst = 1
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r1"), Config: targetConfig("r1", tg.srv.URL)})
	require.NoError(t, err)

	put(t, env, "e1", "t")
	put(t, env, "e2", "other") // read by the router, matched by no rule
	require.Eventually(t, func() bool { return tg.has("e1") }, wait, tick)
	require.Eventually(t, func() bool {
		st, err := client.ConnectorStatus(ctx, targetName("r1"))
		return err == nil && len(st.Tasks) == 1 && st.Tasks[0].Counters != nil && st.Tasks[0].Counters.Written == 1
	}, wait, tick)
	var routerCounters rpc.TaskCounters
	require.Eventually(t, func() bool {
		st, err := client.ConnectorStatus(ctx, routerName())
		if err != nil || len(st.Tasks) != 1 || st.Tasks[0].Counters == nil {
			return false
		}
		routerCounters = *st.Tasks[0].Counters
		return routerCounters.Read == 2 && routerCounters.Written == 2
	}, wait, tick)
	// The status JSON says what the router matched.
	assert.Equal(t, uint64(1), routerCounters.Matched, "e1")
	assert.Equal(t, uint64(1), routerCounters.Unmatched, "e2")
	assert.Equal(t, uint64(1), routerCounters.Routed, "e1 to r1")

	mfs := getMetrics(t, w.URL()+worker.MetricsPath)
	hook := map[string]string{"connector": targetName("r1"), "task": "0"}
	assert.Equal(t, 2.0, series(t, mfs, "eventbridge_worker_task_records_read_total", hook), "each delivery is read")
	assert.Equal(t, 1.0, series(t, mfs, "eventbridge_worker_task_records_written_total", hook))
	assert.Equal(t, 1.0, series(t, mfs, "eventbridge_worker_task_records_retried_total", hook))
	assert.Equal(t, 0.0, series(t, mfs, "eventbridge_worker_task_records_dropped_total", hook))
	routerTask := map[string]string{"connector": routerName(), "task": "0"}
	assert.Equal(t, 2.0, series(t, mfs, "eventbridge_worker_task_records_read_total", routerTask))
	assert.Equal(t, 1.0, series(t, mfs, "eventbridge_worker_task_records_matched_total", routerTask))
	assert.Equal(t, 1.0, series(t, mfs, "eventbridge_worker_task_records_unmatched_total", routerTask))
	assert.Equal(t, 1.0, series(t, mfs, "eventbridge_worker_task_records_routed_total", routerTask))
	assert.Equal(t, 0.0, series(t, mfs, "eventbridge_worker_task_records_matched_total", hook), "a sink that does not route")
	assert.Equal(t, 1.0, series(t, mfs, "eventbridge_worker_task_state",
		map[string]string{"connector": targetName("r1"), "task": "0", "state": rpc.StateRunning}))
	assert.Equal(t, 0.0, series(t, mfs, "eventbridge_worker_task_state",
		map[string]string{"connector": targetName("r1"), "task": "0", "state": rpc.StateFailed}))
	assert.Equal(t, 1.0, series(t, mfs, "eventbridge_worker_connector_state",
		map[string]string{"connector": routerName(), "state": rpc.StateRunning}))
	assert.Contains(t, mfs, "go_goroutines")
	// Both writes were observed: the target's one (after a retry) and the router's copy of e1.
	require.Contains(t, mfs, "eventbridge_worker_delivery_latency_seconds")
	var observed uint64
	for _, m := range mfs["eventbridge_worker_delivery_latency_seconds"].GetMetric() {
		observed += m.GetHistogram().GetSampleCount()
	}
	assert.Equal(t, uint64(3), observed, "router: e1 and e2 written; target: e1 written")

	// A worker reports the tasks it runs: a paused connector's tasks run nowhere, so their series go.
	require.NoError(t, client.PauseConnector(ctx, targetName("r1")))
	require.Eventually(t, func() bool {
		mfs := getMetrics(t, w.URL()+worker.MetricsPath)
		for _, m := range mfs["eventbridge_worker_task_state"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "connector" && l.GetValue() == targetName("r1") {
					return false
				}
			}
		}
		return series(t, mfs, "eventbridge_worker_task_state",
			map[string]string{"connector": routerName(), "task": "0", "state": rpc.StateRunning}) == 1
	}, wait, tick)

	// A deleted connector's latency series go with it; the router's stay.
	require.NoError(t, client.DeleteConnector(ctx, targetName("r1")))
	latencyOf := func(connector string) bool {
		for _, m := range getMetrics(t, w.URL()+worker.MetricsPath)["eventbridge_worker_delivery_latency_seconds"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "connector" && l.GetValue() == connector {
					return true
				}
			}
		}
		return false
	}
	require.Eventually(t, func() bool { return !latencyOf(targetName("r1")) }, wait, tick)
	assert.True(t, latencyOf(routerName()))

	// The in-process handler serves the metrics too, and the API next to them.
	authorized := func(method, path string) *http.Request {
		r := httptest.NewRequest(method, path, nil)
		r.Header.Set("Authorization", "Bearer "+testToken)
		return r
	}
	rec := httptest.NewRecorder()
	w.Handler().ServeHTTP(rec, authorized(http.MethodGet, worker.MetricsPath))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), "eventbridge_worker_task_state{")
	rec = httptest.NewRecorder()
	w.Handler().ServeHTTP(rec, authorized(http.MethodGet, "/connectors"))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), routerName())
	code, _ := raw(t, http.MethodPost, w.URL()+worker.MetricsPath, "")
	assert.Equal(t, http.StatusMethodNotAllowed, code, "only GET and HEAD /metrics are the metrics")
}
