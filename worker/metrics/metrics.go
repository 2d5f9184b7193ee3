// Package metrics exposes a worker's connectors and tasks in the Prometheus text format on GET /metrics.
//
// Task counters and states are read from the herder at scrape time (a Collector over Source), so nothing is
// counted twice and a deleted connector disappears from the next scrape. The delivery latency histogram is fed by
// an Observer. Each Metrics has its own registry: nothing is registered on the global one.
package metrics

import (
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/eventbridge-go/eventbridge/rpc"
)

// Namespace and subsystem of every metric of the worker: eventbridge_worker_*.
const (
	Namespace = "eventbridge"
	Subsystem = "worker"
)

// Source gives the connectors and their statuses; *herder.Herder satisfies it.
type Source interface {
	// Connectors returns the names of every connector.
	Connectors() []string
	// Status returns the state of a connector and of its tasks, with each running task's counters.
	Status(name string) (rpc.ConnectorStatus, error)
}

// Metrics is the registry of one worker: its connectors and tasks, the delivery latency, and the Go runtime and
// process metrics.
type Metrics struct {
	reg      *prometheus.Registry
	observer *Observer
	handler  http.Handler
}

// New returns the metrics of the worker whose connectors src gives.
func New(src Source) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		newCollector(src),
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(gcCycles)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	o := newObserver()
	reg.MustRegister(o.latency)
	return &Metrics{
		reg:      reg,
		observer: o,
		handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			ErrorHandling: promhttp.ContinueOnError,
			Registry:      reg, // promhttp_metric_handler_errors_total
		}),
	}
}

// Registry is the worker's registry, for more collectors or for tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Observer records delivery latencies into the worker's registry.
func (m *Metrics) Observer() *Observer { return m.observer }

// Handler serves the registry in the Prometheus exposition formats (GET /metrics).
func (m *Metrics) Handler() http.Handler { return m.handler }

// LatencyBuckets are the upper bounds, in seconds, of the delivery latency histogram's buckets: from a millisecond,
// for a local receiver, to five minutes, for a record that waited out its retries.
var LatencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}

// Observer records how long deliveries took. A nil *Observer records nothing.
type Observer struct {
	latency *prometheus.HistogramVec
}

func newObserver() *Observer {
	return &Observer{latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace,
		Subsystem: Subsystem,
		Name:      "delivery_latency_seconds",
		Help:      "Time from a record's storage in its stream to its acceptance by the sink, by connector and task.",
		Buckets:   LatencyBuckets,
	}, []string{"connector", "task"})}
}

// Task returns what records that task of connector delivered a record d after it was put (nil for a nil
// Observer). The series is looked up once, here, not at every record; once Forget removed it, what Task returned
// before records nothing that a scrape sees, so a task still stopping does not bring a deleted connector back.
func (o *Observer) Task(connector string, task int) func(d time.Duration) {
	if o == nil {
		return nil
	}
	h := o.latency.WithLabelValues(connector, strconv.Itoa(task))
	return func(d time.Duration) { h.Observe(d.Seconds()) }
}

// Forget removes the latency series of a connector, for when it is deleted.
func (o *Observer) Forget(connector string) {
	if o == nil {
		return
	}
	o.latency.DeletePartialMatch(prometheus.Labels{"connector": connector})
}

// gcCycles adds the collector's cycles to the Go collector's series: go_gc_cycles_total_gc_cycles_total, and
// go_gc_cycles_forced_gc_cycles_total, the collections the process forced, which are gcpace's releases of the free
// heap (the binaries call neither runtime.GC nor debug.FreeOSMemory otherwise).
var gcCycles = collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/cycles/`)}
