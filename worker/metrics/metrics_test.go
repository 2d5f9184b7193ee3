package metrics_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/scrape/scrapetest"
	"github.com/eventbridge-go/eventbridge/worker/metrics"
)

// source is a fixed Source; a name without a status answers an error, as a connector deleted mid-scrape does.
type source struct {
	names    []string
	statuses map[string]rpc.ConnectorStatus
}

func (s source) Connectors() []string { return s.names }

func (s source) Status(name string) (rpc.ConnectorStatus, error) {
	st, ok := s.statuses[name]
	if !ok {
		return rpc.ConnectorStatus{}, errors.New("not found")
	}
	return st, nil
}

func fixture() source {
	return source{
		names: []string{"hook", "paused", "gone", "failing"},
		statuses: map[string]rpc.ConnectorStatus{
			"hook": {Name: "hook", Connector: rpc.ConnectorState{State: rpc.StateRunning}, Tasks: []rpc.TaskState{
				{ID: 0, State: rpc.StateRunning, Counters: &rpc.TaskCounters{Read: 10, Written: 6, Retried: 3, Dropped: 2, DeadLettered: 4,
					Failed: 0, Undecodable: 1, Filtered: 1, TransformFailed: 1, Matched: 5, Unmatched: 7, Routed: 8}},
				{ID: 1, State: rpc.StateFailed, Counters: &rpc.TaskCounters{Read: 4, Failed: 1}},
			}},
			"paused": {Name: "paused", Connector: rpc.ConnectorState{State: rpc.StatePaused}, Tasks: []rpc.TaskState{
				{ID: 0, State: rpc.StatePaused},
			}},
			"failing": {Name: "failing", Connector: rpc.ConnectorState{State: "SOMETHING_NEW"}, Tasks: []rpc.TaskState{}},
		},
	}
}

// scrape GETs the handler and parses the answer as the Prometheus text format.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain"), rec.Header().Get("Content-Type"))
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(rec.Body)
	require.NoError(t, err)
	return mfs
}

// value returns the value of the series of family name with exactly labels; ok is false when there is none.
func value(mfs map[string]*dto.MetricFamily, name string, labels map[string]string) (v float64, ok bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
	for _, m := range mf.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if len(got) != len(labels) {
			continue
		}
		match := true
		for k, want := range labels {
			if got[k] != want {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

func requireValue(t *testing.T, mfs map[string]*dto.MetricFamily, want float64, name string, labels map[string]string) {
	t.Helper()
	v, ok := value(mfs, name, labels)
	require.True(t, ok, "%s%v is missing", name, labels)
	assert.Equal(t, want, v, "%s%v", name, labels)
}

func task(connector, id string) map[string]string {
	return map[string]string{"connector": connector, "task": id}
}

func TestTaskCounters(t *testing.T) {
	mfs := scrape(t, metrics.New(fixture()).Handler())
	for what, want := range map[string]float64{"read": 10, "written": 6, "retried": 3, "dropped": 2, "dead_lettered": 4, "failed": 0,
		"undecodable": 1, "filtered": 1, "transform_failed": 1, "matched": 5, "unmatched": 7, "routed": 8} {
		name := "eventbridge_worker_task_records_" + what + "_total"
		requireValue(t, mfs, want, name, task("hook", "0"))
		assert.Equal(t, dto.MetricType_COUNTER, mfs[name].GetType(), name)
		assert.Len(t, mfs[name].GetMetric(), 2, "%s: one series per running task", name)
	}
	requireValue(t, mfs, 4, "eventbridge_worker_task_records_read_total", task("hook", "1"))
	requireValue(t, mfs, 1, "eventbridge_worker_task_records_failed_total", task("hook", "1"))
	_, ok := value(mfs, "eventbridge_worker_task_records_read_total", task("paused", "0"))
	assert.False(t, ok, "a task without counters has no counter series")
}

func TestStates(t *testing.T) {
	mfs := scrape(t, metrics.New(fixture()).Handler())
	state := func(connector, id, state string) map[string]string {
		l := task(connector, id)
		l["state"] = state
		return l
	}
	assert.Equal(t, dto.MetricType_GAUGE, mfs["eventbridge_worker_task_state"].GetType())
	for _, s := range metrics.States() {
		want := func(current string) float64 {
			if s == current {
				return 1
			}
			return 0
		}
		requireValue(t, mfs, want(rpc.StateRunning), "eventbridge_worker_task_state", state("hook", "0", s))
		requireValue(t, mfs, want(rpc.StateFailed), "eventbridge_worker_task_state", state("hook", "1", s))
		requireValue(t, mfs, want(rpc.StatePaused), "eventbridge_worker_task_state", state("paused", "0", s))
		requireValue(t, mfs, want(rpc.StateRunning), "eventbridge_worker_connector_state", map[string]string{"connector": "hook", "state": s})
		requireValue(t, mfs, want(rpc.StatePaused), "eventbridge_worker_connector_state", map[string]string{"connector": "paused", "state": s})
		requireValue(t, mfs, 0, "eventbridge_worker_connector_state", map[string]string{"connector": "failing", "state": s})
	}
	requireValue(t, mfs, 1, "eventbridge_worker_connector_state", map[string]string{"connector": "failing", "state": "SOMETHING_NEW"})
	for _, m := range mfs["eventbridge_worker_connector_state"].GetMetric() {
		for _, l := range m.GetLabel() {
			assert.NotEqual(t, "gone", l.GetValue(), "a connector whose status fails is left out")
		}
	}
}

func TestScrapeReadsTheSourceEachTime(t *testing.T) {
	src := fixture()
	m := metrics.New(src)
	requireValue(t, scrape(t, m.Handler()), 10, "eventbridge_worker_task_records_read_total", task("hook", "0"))
	src.statuses["hook"].Tasks[0].Counters.Read = 11
	delete(src.statuses, "paused")
	mfs := scrape(t, m.Handler())
	requireValue(t, mfs, 11, "eventbridge_worker_task_records_read_total", task("hook", "0"))
	_, ok := value(mfs, "eventbridge_worker_task_state", map[string]string{"connector": "paused", "task": "0", "state": rpc.StatePaused})
	assert.False(t, ok, "a deleted connector disappears")
}

func TestRuntimeAndProcessCollectors(t *testing.T) {
	mfs := scrape(t, metrics.New(source{}).Handler())
	assert.Contains(t, mfs, "go_goroutines")
	assert.Contains(t, mfs, "process_cpu_seconds_total")
	assert.NotContains(t, mfs, "eventbridge_worker_task_state", "no connector, no series")
}

// gcpace's releases are seen on /metrics: as collections the process forced.
func TestForcedCollections(t *testing.T) {
	h := metrics.New(source{}).Handler()
	cycles := func() (forced, total float64) {
		mfs := scrape(t, h)
		forced, ok := value(mfs, "go_gc_cycles_forced_gc_cycles_total", nil)
		require.True(t, ok, "the forced collections are counted")
		total, ok = value(mfs, "go_gc_cycles_total_gc_cycles_total", nil)
		require.True(t, ok, "the collections are counted")
		return forced, total
	}
	forced, total := cycles()
	debug.FreeOSMemory() // what gcpace calls to release
	after, afterTotal := cycles()
	assert.GreaterOrEqual(t, after, forced+1)
	assert.GreaterOrEqual(t, afterTotal, total+1)
	assert.GreaterOrEqual(t, afterTotal, after)
}

func TestDeliveryLatency(t *testing.T) {
	m := metrics.New(fixture())
	o := m.Observer()
	hook0 := o.Task("hook", 0)
	hook0(3 * time.Millisecond)
	hook0(2 * time.Second)
	o.Task("hook", 1)(time.Millisecond)
	o.Task("other", 0)(time.Millisecond)

	mfs := scrape(t, m.Handler())
	const name = "eventbridge_worker_delivery_latency_seconds"
	require.Equal(t, dto.MetricType_HISTOGRAM, mfs[name].GetType())
	requireValue(t, mfs, 2, name, task("hook", "0"))
	requireValue(t, mfs, 1, name, task("hook", "1"))
	for _, s := range mfs[name].GetMetric() {
		if s.GetLabel()[0].GetValue() == "hook" && s.GetLabel()[1].GetValue() == "0" {
			assert.InDelta(t, 2.003, s.GetHistogram().GetSampleSum(), 1e-9)
		}
	}

	o.Forget("hook")
	hook0(time.Second) // a task of the deleted connector still stopping
	mfs = scrape(t, m.Handler())
	_, ok := value(mfs, name, task("hook", "0"))
	assert.False(t, ok, "forgotten, and not brought back by a task that was still running")
	requireValue(t, mfs, 1, name, task("other", "0"))
	o.Task("hook", 0)(time.Millisecond) // a connector of that name made again starts a new series
	requireValue(t, scrape(t, m.Handler()), 1, name, task("hook", "0"))

	var none *metrics.Observer
	assert.Nil(t, none.Task("hook", 0), "a nil Observer records nothing")
	none.Forget("hook")
}

// Two workers in one process have their own registries: nothing goes to the global one.
func TestRegistriesArePrivate(t *testing.T) {
	a, b := metrics.New(fixture()), metrics.New(source{})
	a.Observer().Task("hook", 0)(time.Millisecond)
	assert.NotContains(t, scrape(t, b.Handler()), "eventbridge_worker_delivery_latency_seconds")
	assert.NotSame(t, a.Registry(), b.Registry())
}

// BenchmarkObserveDelivery: what a task pays per record written for the latency histogram, its series looked up
// once (task) against a lookup per record (lookup, as tasks did before 2026-12-06: the label values hashed and
// found at every record) and a bare histogram of the same buckets (bare).
func BenchmarkObserveDelivery(b *testing.B) {
	o := metrics.New(fixture()).Observer()
	b.Run("task", func(b *testing.B) {
		observe := o.Task("hook", 0)
		for b.Loop() {
			observe(3 * time.Millisecond)
		}
	})
	b.Run("lookup", func(b *testing.B) {
		for b.Loop() {
			o.Task("hook", 0)(3 * time.Millisecond)
		}
	})
	b.Run("bare", func(b *testing.B) {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "bare", Buckets: metrics.LatencyBuckets})
		for b.Loop() {
			h.Observe((3 * time.Millisecond).Seconds())
		}
	})
}

// BenchmarkScrape: one scrape of a worker's /metrics with 4,000 connectors of one running task each (2,000 buses:
// a router and a target each), about 100,000 series of theirs, their statuses ready as the worker keeps them:
// idle, then after every task delivered once (its delivery latency histogram, client_golang's, 19 more lines).
func BenchmarkScrape(b *testing.B) {
	src := source{statuses: map[string]rpc.ConnectorStatus{}}
	for i := range 4000 {
		name := fmt.Sprintf("bus-%05d-target", i)
		src.names = append(src.names, name)
		src.statuses[name] = rpc.ConnectorStatus{Name: name, Connector: rpc.ConnectorState{State: rpc.StateRunning},
			Tasks: []rpc.TaskState{{ID: 0, State: rpc.StateRunning, Counters: &rpc.TaskCounters{Read: uint64(i), Written: 6}}}}
	}
	m := metrics.New(src)
	h := m.Handler()
	scrape := func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n := scrapetest.Scrape(b, h); n < 1<<20 {
				b.Fatalf("a scrape of %d bytes", n)
			}
		}
	}
	b.Run("idle", scrape)
	for _, name := range src.names {
		m.Observer().Task(name, 0)(3 * time.Millisecond)
	}
	b.Run("delivered", scrape)
}
