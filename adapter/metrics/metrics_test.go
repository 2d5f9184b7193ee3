package metrics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/health"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/scrape/scrapetest"
)

// reports returns n targets of as many buses (every fourth without counters, as one that never ran) and two
// sources, one of them without counters.
func reports(n int) Reporter {
	targets := make([]target.Report, n)
	for i := range targets {
		st := &target.Status{Health: healthStates[i%len(healthStates)]}
		if i%4 != 3 {
			st.Counters = &target.Counters{Read: uint64(i), Delivered: uint64(i) * 2, Retried: 3, DeadLettered: 4,
				Dropped: 5, Failed: 6, Filtered: 7}
		}
		targets[i] = target.Report{Account: "acct-1", Bus: fmt.Sprintf("bus-%05d", i), Rule: "rule", Target: "t", Status: st}
	}
	sources := []source.Report{
		{Account: "acct-1", Bus: "bus-00000", Source: "hook", Status: &source.Status{Health: health.Healthy,
			Counters: &source.Counters{Read: 9, Written: 8, Failed: 1, Dropped: 2, Filtered: 3}}},
		{Account: "acct-2", Bus: "b", Source: "mqtt", Status: &source.Status{Health: health.Failed}},
	}
	return func(context.Context, health.Rules, time.Time) ([]target.Report, []source.Report, error) {
		return targets, sources, nil
	}
}

// constResources is what resources collected before package scrape, one prometheus.MustNewConstMetric per series:
// the reference the scrape's series must equal.
type constResources struct{ reports Reporter }

func (r constResources) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(r, ch) }

func (r constResources) Collect(ch chan<- prometheus.Metric) {
	targets, sources, _ := r.reports(context.Background(), health.Rules{}, time.Now())
	desc := func(name, last string, id ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, "", append(id, last), nil)
	}
	th := desc("eventbridge_target_health", "state", "account", "bus", "rule", "target")
	tr := desc("eventbridge_target_records", "outcome", "account", "bus", "rule", "target")
	sh := desc("eventbridge_source_health", "state", "account", "bus", "source")
	sr := desc("eventbridge_source_records", "outcome", "account", "bus", "source")
	ch <- prometheus.MustNewConstMetric(runtimeAnswers, prometheus.GaugeValue, 1)
	states := func(d *prometheus.Desc, current string, id ...string) {
		for _, s := range healthStates {
			v := 0.0
			if s == current {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append(id, s)...)
		}
	}
	for _, t := range targets {
		id := []string{t.Account, t.Bus, t.Rule, t.Target}
		states(th, t.Status.Health, id...)
		if n := t.Status.Counters; n != nil {
			for outcome, v := range map[string]uint64{"read": n.Read, "delivered": n.Delivered, "retried": n.Retried,
				"dead_lettered": n.DeadLettered, "dropped": n.Dropped, "failed": n.Failed, "filtered": n.Filtered} {
				ch <- prometheus.MustNewConstMetric(tr, prometheus.GaugeValue, float64(v), append(id, outcome)...)
			}
		}
	}
	for _, s := range sources {
		id := []string{s.Account, s.Bus, s.Source}
		states(sh, s.Status.Health, id...)
		if n := s.Status.Counters; n != nil {
			for outcome, v := range map[string]uint64{"read": n.Read, "written": n.Written, "failed": n.Failed,
				"dropped": n.Dropped, "filtered": n.Filtered} {
				ch <- prometheus.MustNewConstMetric(sr, prometheus.GaugeValue, float64(v), append(id, outcome)...)
			}
		}
	}
}

// samples returns the samples of g's families of targets and sources, one line each ("name{labels} value"), as
// the registry orders them.
func samples(t *testing.T, g prometheus.Gatherer) []string {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	var out []string
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "eventbridge_target_") && !strings.HasPrefix(mf.GetName(), "eventbridge_source_") &&
			mf.GetName() != "eventbridge_runtime_reachable" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			out = append(out, fmt.Sprintf("%s %s{%s} %g", mf.GetType(), mf.GetName(), strings.Join(labels, ","), m.GetGauge().GetValue()))
		}
	}
	return out
}

// TestResourcesAsConstMetrics: the series of targets and sources are those one constant metric per series gave,
// label for label and value for value.
func TestResourcesAsConstMetrics(t *testing.T) {
	src := reports(40)
	want := prometheus.NewRegistry()
	want.MustRegister(constResources{reports: src})
	m := New(Config{Reports: src})
	got := samples(t, m.reg)
	require.Equal(t, samples(t, want), got)
	require.Len(t, got, 1+40*len(healthStates)+30*len(targetOutcomes)+2*len(healthStates)+len(sourceOutcomes))
	require.Contains(t, got, `GAUGE eventbridge_target_records{account="acct-1",bus="bus-00005",outcome="delivered",rule="rule",target="t"} 10`)
}

// BenchmarkScrape: one scrape of the control plane's /metrics with 2,000 targets (about 30,000 series of theirs),
// in the text format; the reports of the runtime given, not made (connect.Adapter.Reports is not measured here).
func BenchmarkScrape(b *testing.B) {
	m := New(Config{Reports: reports(2000)})
	h := m.Handler()
	b.ReportAllocs()
	for b.Loop() {
		if n := scrapetest.Scrape(b, h); n < 1<<20 {
			b.Fatalf("a scrape of %d bytes", n)
		}
	}
}
