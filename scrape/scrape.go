// Package scrape builds the constant series a collector reports at each Prometheus scrape (one per target, task or
// connector and state or outcome) for both binaries' metrics, at a fraction of the allocations of
// prometheus.MustNewConstMetric: the label pairs a subject's series share (its account, bus, rule and target, or its
// connector and task) are made once per subject and scrape (Names.With), the pair of each state or outcome once per
// Family, and each series is one allocation. At 2,000 targets a scrape of the control plane's metrics built about
// 30,000 series through MustNewConstMetric, each with its own label pairs, sorted copies and value pointers.
//
// A label value that is not valid UTF-8 is reported with the invalid bytes replaced (U+FFFD), where
// MustNewConstMetric panicked and the registry refused the whole scrape.
package scrape

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// maxLabels bounds the labels of a series, its subject's and its state's or outcome's together.
const maxLabels = 6

// Names are the names of the labels that identify a subject (a target: account, bus, rule, target), shared by the
// series of every Family made with them.
type Names struct {
	names []string
}

// NewNames returns the label names of a subject, in the order Names.With takes their values. It panics when they
// are more than a series may have or repeat a name: a mistake of the caller's, found when its package starts.
func NewNames(names ...string) *Names {
	if len(names) >= maxLabels {
		panic(fmt.Sprintf("scrape: %d labels, at most %d", len(names), maxLabels-1))
	}
	sorted := slices.Sorted(slices.Values(names))
	if len(slices.Compact(sorted)) != len(names) {
		panic(fmt.Sprintf("scrape: labels %q repeat a name", names))
	}
	return &Names{names: slices.Clone(names)}
}

// Labels are the label pairs of one subject, for the series of every Family made with the same Names.
type Labels struct {
	names *Names
	pairs []dto.LabelPair
}

// With returns the labels of a subject with these values, one per name. It panics when they are not as many as
// the names.
func (n *Names) With(values ...string) Labels {
	if len(values) != len(n.names) {
		panic(fmt.Sprintf("scrape: %d values for the labels %q", len(values), n.names))
	}
	l := Labels{names: n, pairs: make([]dto.LabelPair, len(values))}
	kept := make([]string, len(values))
	for i, v := range values {
		kept[i] = valid(v)
		l.pairs[i].Name, l.pairs[i].Value = &n.names[i], &kept[i]
	}
	return l
}

// valid is v with U+FFFD for the bytes that are not UTF-8.
func valid(v string) string {
	if utf8.ValidString(v) {
		return v
	}
	return strings.ToValidUTF8(v, "\uFFFD")
}

// Family is one metric family of constant series: a subject's labels (Names) and, optionally, one more label that
// tells its series apart (a state, an outcome).
type Family struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	names *Names
	// order is where each label of a series goes among them sorted by name (the registry's order): -1 for the
	// last label, else the index of the subject's label.
	order []int
	last  string
	// known are the pairs of the last label's values given to NewFamily.
	known map[string]*dto.LabelPair
}

// NewFamily returns a family named name of kind (prometheus.CounterValue or prometheus.GaugeValue; it panics for
// another) whose series carry the subject's labels and, unless last is "", the label last with one of values (a value
// not among them is reported as well, at the cost of an allocation).
func NewFamily(name, help string, kind prometheus.ValueType, names *Names, last string, values ...string) *Family {
	if kind != prometheus.CounterValue && kind != prometheus.GaugeValue {
		panic(fmt.Sprintf("scrape: family %s of kind %v, not a counter or a gauge", name, kind))
	}
	labels := slices.Clone(names.names)
	if last != "" {
		if slices.Contains(labels, last) {
			panic(fmt.Sprintf("scrape: label %q is the subject's and the family's", last))
		}
		labels = append(labels, last)
	}
	f := &Family{desc: prometheus.NewDesc(name, help, labels, nil), kind: kind, names: names, last: last,
		known: make(map[string]*dto.LabelPair, len(values))}
	sorted := slices.Sorted(slices.Values(labels))
	for _, l := range sorted {
		i := slices.Index(names.names, l)
		if l == last {
			i = -1
		}
		f.order = append(f.order, i)
	}
	for _, v := range values {
		f.known[v] = &dto.LabelPair{Name: &f.last, Value: &v}
	}
	return f
}

// Desc is the family's description, for the collector's Describe.
func (f *Family) Desc() *prometheus.Desc { return f.desc }

// Metric returns the series of the subject l whose last label is value (ignored without a last label), worth v. It
// returns an invalid metric, which the scrape reports as an error, when l was made with other Names.
func (f *Family) Metric(l Labels, value string, v float64) prometheus.Metric {
	if l.names != f.names {
		var names []string
		if l.names != nil {
			names = l.names.names
		}
		return prometheus.NewInvalidMetric(f.desc, fmt.Errorf("scrape: labels %q for the family %s", names, f.desc))
	}
	s := series{family: f, value: v, n: len(f.order)}
	for k, i := range f.order {
		if i >= 0 {
			s.labels[k] = &l.pairs[i]
			continue
		}
		p, ok := f.known[value]
		if !ok {
			p = &dto.LabelPair{Name: &f.last, Value: new(valid(value))}
		}
		s.labels[k] = p
	}
	if f.kind == prometheus.CounterValue {
		return &counterSeries{series: s}
	}
	return &gaugeSeries{series: s}
}

// series is one constant series; its label pairs are shared with the other series of its subject and family. The
// registry reads what Write gives it and never changes it.
type series struct {
	family *Family
	labels [maxLabels]*dto.LabelPair
	n      int
	value  float64
}

func (s *series) Desc() *prometheus.Desc { return s.family.desc }

// counterSeries and gaugeSeries hold the value of their kind with the series: one allocation each.
type counterSeries struct {
	series
	counter dto.Counter
}

func (s *counterSeries) Write(m *dto.Metric) error {
	m.Label = s.labels[:s.n:s.n]
	s.counter.Value = &s.value
	m.Counter = &s.counter
	return nil
}

type gaugeSeries struct {
	series
	gauge dto.Gauge
}

func (s *gaugeSeries) Write(m *dto.Metric) error {
	m.Label = s.labels[:s.n:s.n]
	s.gauge.Value = &s.value
	m.Gauge = &s.gauge
	return nil
}
