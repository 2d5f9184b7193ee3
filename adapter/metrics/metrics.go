// Package metrics is the control plane's Prometheus metrics: what its API answered and stored, its reconciliation
// passes, and, read from the runtime when scraped, the health and counters of every target and source. The
// worker's own metrics (per task, per process) are the worker's (worker/metrics).
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/eventbridge-go/eventbridge/domain/health"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/scrape"
)

// Reporter reads the summarized runtime state of every target and source (connect.Adapter.Reports).
type Reporter func(ctx context.Context, rules health.Rules, now time.Time) ([]target.Report, []source.Report, error)

// Config configures the metrics.
type Config struct {
	// Reports, when set, gives the health and counters of targets and sources at each scrape, with Health's
	// thresholds; nil reports none.
	Reports Reporter
	Health  health.Rules
	// ReportTimeout bounds the runtime's answer at a scrape (default 5s).
	ReportTimeout time.Duration
	Logger        *slog.Logger
}

// Metrics holds the control plane's series. Safe for concurrent use.
type Metrics struct {
	cfg       Config
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	authFails *prometheus.CounterVec
	events    *prometheus.CounterVec
	webhooks  *prometheus.CounterVec
	passes    *prometheus.CounterVec
}

// New registers the series, the Go runtime's and the process's.
func New(cfg Config) *Metrics {
	if cfg.ReportTimeout <= 0 {
		cfg.ReportTimeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{cfg: cfg, reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventbridge_api_requests_total",
			Help: "Requests answered by the control plane's API, by operation and status code."}, []string{"operation", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "eventbridge_api_request_duration_seconds",
			Help:    "Time from a request's arrival to its answer, by operation (events.put is PutEvents).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"operation"}),
		authFails: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventbridge_api_auth_failures_total",
			Help: "Requests refused for their credentials: unauthenticated (401) or forbidden (403)."}, []string{"reason"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventbridge_putevents_events_total",
			Help: "Events of PutEvents calls, by account, bus and outcome: stored, duplicate, or the error code of their entry."},
			[]string{"account", "bus", "outcome"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventbridge_webhook_events_total",
			Help: "Requests webhook sources stored on their bus, by account, bus, source and outcome: stored or duplicate."},
			[]string{"account", "bus", "source", "outcome"}),
		passes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventbridge_reconcile_passes_total",
			Help: "Periodic reconciliations of the declared channels with the runtime, by outcome (ok, error)."}, []string{"outcome"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.authFails, m.events, m.webhooks, m.passes,
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(gcCycles)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), &resources{m: m})
	m.passes.WithLabelValues("ok")
	m.passes.WithLabelValues("error")
	return m
}

// Answered counts a request answered (web.Metrics).
func (m *Metrics) Answered(operation string, status int, took time.Duration) {
	if operation == "" {
		operation = "none"
	}
	m.requests.WithLabelValues(operation, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(operation).Observe(took.Seconds())
	switch status {
	case http.StatusUnauthorized:
		m.authFails.WithLabelValues("unauthenticated").Inc()
	case http.StatusForbidden:
		m.authFails.WithLabelValues("forbidden").Inc()
	}
}

// Put counts events of a PutEvents call by outcome (web.Metrics).
func (m *Metrics) Put(accountID, busName, outcome string, n int) {
	m.events.WithLabelValues(accountID, busName, outcome).Add(float64(n))
}

// Webhook counts a request a webhook source stored on its bus, by outcome: stored or duplicate.
func (m *Metrics) Webhook(accountID, busName, sourceName, outcome string) {
	m.webhooks.WithLabelValues(accountID, busName, sourceName, outcome).Inc()
}

// Reconciled counts a periodic reconciliation pass that ended with err.
func (m *Metrics) Reconciled(err error) {
	if err != nil {
		m.passes.WithLabelValues("error").Inc()
		return
	}
	m.passes.WithLabelValues("ok").Inc()
}

// Handler serves the metrics (web.Metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: slogErrors{m.cfg.Logger}})
}

type slogErrors struct{ log *slog.Logger }

func (s slogErrors) Println(v ...any) { s.log.Warn("serving metrics", "err", v) }

var (
	healthStates = []string{health.Pending, health.Healthy, health.Retrying, health.Failing, health.DeadLettering, health.Paused, health.Stopped, health.Failed}
	targetID     = scrape.NewNames("account", "bus", "rule", "target")
	sourceID     = scrape.NewNames("account", "bus", "source")
	targetHealth = scrape.NewFamily("eventbridge_target_health", "1 for the health state a target is in, 0 for the others (docs/health.md).",
		prometheus.GaugeValue, targetID, "state", healthStates...)
	targetRecords = scrape.NewFamily("eventbridge_target_records", "What a target did since it was created, over pauses, restarts and moves between workers, by outcome.",
		prometheus.GaugeValue, targetID, "outcome", targetOutcomes...)
	sourceHealth = scrape.NewFamily("eventbridge_source_health", "1 for the health state a source is in, 0 for the others.",
		prometheus.GaugeValue, sourceID, "state", healthStates...)
	sourceRecords = scrape.NewFamily("eventbridge_source_records", "What a source did since it was created, by outcome.",
		prometheus.GaugeValue, sourceID, "outcome", sourceOutcomes...)
	runtimeAnswers = prometheus.NewDesc("eventbridge_runtime_reachable", "1 when the worker runtime answered the status of its connectors at this scrape, else 0.", nil, nil)
)

// The outcomes of eventbridge_target_records and eventbridge_source_records, in the order of targetCounts and
// sourceCounts.
var (
	targetOutcomes = []string{"read", "delivered", "retried", "dead_lettered", "dropped", "failed", "filtered"}
	sourceOutcomes = []string{"read", "written", "failed", "dropped", "filtered"}
)

func targetCounts(n *target.Counters) [7]uint64 {
	return [...]uint64{n.Read, n.Delivered, n.Retried, n.DeadLettered, n.Dropped, n.Failed, n.Filtered}
}

func sourceCounts(n *source.Counters) [5]uint64 {
	return [...]uint64{n.Read, n.Written, n.Failed, n.Dropped, n.Filtered}
}

// resources collects the health and counters of targets and sources at each scrape.
type resources struct{ m *Metrics }

func (r *resources) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range []*scrape.Family{targetHealth, targetRecords, sourceHealth, sourceRecords} {
		ch <- f.Desc()
	}
	ch <- runtimeAnswers
}

func (r *resources) Collect(ch chan<- prometheus.Metric) {
	cfg := r.m.cfg
	if cfg.Reports == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ReportTimeout)
	defer cancel()
	targets, sources, err := cfg.Reports(ctx, cfg.Health, time.Now())
	if err != nil {
		cfg.Logger.Warn("reading the runtime's connectors for the metrics", "err", err)
		ch <- prometheus.MustNewConstMetric(runtimeAnswers, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(runtimeAnswers, prometheus.GaugeValue, 1)
	states := func(f *scrape.Family, l scrape.Labels, current string) {
		for _, s := range healthStates {
			var v float64
			if s == current {
				v = 1
			}
			ch <- f.Metric(l, s, v)
		}
	}
	for _, t := range targets {
		l := targetID.With(t.Account, t.Bus, t.Rule, t.Target)
		states(targetHealth, l, t.Status.Health)
		if n := t.Status.Counters; n != nil {
			for i, v := range targetCounts(n) {
				ch <- targetRecords.Metric(l, targetOutcomes[i], float64(v))
			}
		}
	}
	for _, s := range sources {
		l := sourceID.With(s.Account, s.Bus, s.Source)
		states(sourceHealth, l, s.Status.Health)
		if n := s.Status.Counters; n != nil {
			for i, v := range sourceCounts(n) {
				ch <- sourceRecords.Metric(l, sourceOutcomes[i], float64(v))
			}
		}
	}
}

// gcCycles adds the collector's cycles to the Go collector's series, as the worker's metrics do: all, and those the
// process forced (gcpace's releases of the free heap).
var gcCycles = collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/cycles/`)}
