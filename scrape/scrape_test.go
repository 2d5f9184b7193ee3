package scrape_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/scrape"
)

// collector sends what send sends at each scrape, for the families it describes.
type collector struct {
	families []*scrape.Family
	send     func(ch chan<- prometheus.Metric)
}

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range c.families {
		ch <- f.Desc()
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) { c.send(ch) }

func gather(t *testing.T, c collector) ([]*dto.MetricFamily, error) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	return reg.Gather()
}

// labels returns a series' labels as name=value, in the order it gave them.
func labels(m *dto.Metric) []string {
	var out []string
	for _, l := range m.GetLabel() {
		out = append(out, l.GetName()+"="+l.GetValue())
	}
	return out
}

// TestSeriesLabelsSortedAndShared: a series' labels come out sorted by name wherever the family's last label
// falls among the subject's, and the pair of a subject's label is one for all its series.
func TestSeriesLabelsSortedAndShared(t *testing.T) {
	id := scrape.NewNames("target", "account", "bus")
	health := scrape.NewFamily("h", "health", prometheus.GaugeValue, id, "state", "OK", "FAILING")
	records := scrape.NewFamily("r", "records", prometheus.CounterValue, id, "outcome", "read")
	l := id.With("t1", "a1", "b1")
	var ms []prometheus.Metric
	ms = append(ms, health.Metric(l, "OK", 1), health.Metric(l, "FAILING", 0), records.Metric(l, "read", 7))
	var written []*dto.Metric
	for _, m := range ms {
		var out dto.Metric
		require.NoError(t, m.Write(&out))
		written = append(written, &out)
	}
	assert.Equal(t, []string{"account=a1", "bus=b1", "state=OK", "target=t1"}, labels(written[0]))
	assert.Equal(t, []string{"account=a1", "bus=b1", "state=FAILING", "target=t1"}, labels(written[1]))
	assert.Equal(t, []string{"account=a1", "bus=b1", "outcome=read", "target=t1"}, labels(written[2]))
	assert.Same(t, written[0].GetLabel()[0], written[2].GetLabel()[0], "the subject's pairs are shared")
	var other dto.Metric
	require.NoError(t, health.Metric(id.With("t2", "a2", "b2"), "OK", 0).Write(&other))
	assert.Same(t, written[0].GetLabel()[2], other.GetLabel()[2], "a state's pair is the family's")
	assert.Equal(t, []string{"account=a2", "bus=b2", "state=OK", "target=t2"}, labels(&other))
	assert.Equal(t, 1.0, written[0].GetGauge().GetValue())
	assert.Nil(t, written[0].GetCounter())
	assert.Equal(t, 7.0, written[2].GetCounter().GetValue())
	assert.Nil(t, written[2].GetGauge())
}

// TestGathered: the registry (pedantic: it checks every series against its description) gathers the families
// sorted, a value of the last label outside the family's list as well, and a family without a last label.
func TestGathered(t *testing.T) {
	task := scrape.NewNames("connector", "task")
	state := scrape.NewFamily("task_state", "state", prometheus.GaugeValue, task, "state", "RUNNING", "PAUSED")
	read := scrape.NewFamily("task_read_total", "read", prometheus.CounterValue, task, "")
	mfs, err := gather(t, collector{families: []*scrape.Family{state, read}, send: func(ch chan<- prometheus.Metric) {
		for _, c := range []string{"b", "a"} {
			l := task.With(c, "0")
			ch <- state.Metric(l, "RUNNING", 1)
			ch <- state.Metric(l, "SOMETHING_NEW", 0)
			ch <- read.Metric(l, "", 3)
		}
	}})
	require.NoError(t, err)
	require.Len(t, mfs, 2)
	assert.Equal(t, "task_read_total", mfs[0].GetName())
	assert.Equal(t, dto.MetricType_COUNTER, mfs[0].GetType())
	assert.Equal(t, []string{"connector=a", "task=0"}, labels(mfs[0].GetMetric()[0]))
	assert.Equal(t, "task_state", mfs[1].GetName())
	var got []string
	for _, m := range mfs[1].GetMetric() {
		got = append(got, labels(m)...)
	}
	assert.Equal(t, []string{"connector=a", "state=RUNNING", "task=0", "connector=a", "state=SOMETHING_NEW", "task=0",
		"connector=b", "state=RUNNING", "task=0", "connector=b", "state=SOMETHING_NEW", "task=0"}, got)
}

// TestInvalidUTF8Replaced: a label value that is not UTF-8 is reported with U+FFFD for its invalid bytes, where the
// registry would refuse the scrape (and prometheus.MustNewConstMetric panics).
func TestInvalidUTF8Replaced(t *testing.T) {
	id := scrape.NewNames("connector")
	f := scrape.NewFamily("s", "state", prometheus.GaugeValue, id, "state")
	_, err := gather(t, collector{families: []*scrape.Family{f}, send: func(ch chan<- prometheus.Metric) {
		ch <- f.Metric(id.With("bad\xffname"), "new\xfe", 1)
	}})
	require.NoError(t, err)
	mfs, _ := gather(t, collector{families: []*scrape.Family{f}, send: func(ch chan<- prometheus.Metric) {
		ch <- f.Metric(id.With("bad\xffname"), "new\xfe", 1)
	}})
	assert.Equal(t, []string{"connector=bad\uFFFDname", "state=new\uFFFD"}, labels(mfs[0].GetMetric()[0]))
	assert.Panics(t, func() {
		prometheus.MustNewConstMetric(prometheus.NewDesc("s", "state", []string{"connector"}, nil), prometheus.GaugeValue, 1, "bad\xffname")
	}, "what the series replace")
}

// TestMistakes: labels of other names are an error of the scrape that names the family, and names that repeat or
// are too many are refused when the family is made.
func TestMistakes(t *testing.T) {
	a, b := scrape.NewNames("connector"), scrape.NewNames("task")
	f := scrape.NewFamily("fam", "help", prometheus.GaugeValue, a, "")
	_, err := gather(t, collector{families: []*scrape.Family{f}, send: func(ch chan<- prometheus.Metric) {
		ch <- f.Metric(b.With("0"), "", 1)
	}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"fam"`)
	_, err = gather(t, collector{families: []*scrape.Family{f}, send: func(ch chan<- prometheus.Metric) {
		ch <- f.Metric(scrape.Labels{}, "", 1)
	}})
	require.Error(t, err, "labels of no names")
	assert.Panics(t, func() { scrape.NewNames("a", "b", "a") })
	assert.Panics(t, func() { scrape.NewNames("a", "b", "c", "d", "e", "f", "g", "h") })
	assert.Panics(t, func() { scrape.NewFamily("x", "help", prometheus.GaugeValue, a, "connector") })
	assert.Panics(t, func() { a.With("one", "two") })
	assert.Panics(t, func() { scrape.NewFamily("u", "help", prometheus.UntypedValue, a, "") })
}

// TestConcurrentScrapes: three scrapes at once, two of them in the protobuf format (which caches sizes in the
// messages), read the same pairs of states; run with -race.
func TestConcurrentScrapes(t *testing.T) {
	id := scrape.NewNames("connector")
	f := scrape.NewFamily("state", "state", prometheus.GaugeValue, id, "state", "RUNNING", "PAUSED")
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{families: []*scrape.Family{f}, send: func(ch chan<- prometheus.Metric) {
		for i := range 100 {
			l := id.With(fmt.Sprint("c", i))
			ch <- f.Metric(l, "RUNNING", 1)
			ch <- f.Metric(l, "PAUSED", 0)
		}
	}})
	var wg sync.WaitGroup
	for _, format := range []expfmt.Format{expfmt.NewFormat(expfmt.TypeProtoDelim), expfmt.NewFormat(expfmt.TypeProtoDelim),
		expfmt.NewFormat(expfmt.TypeTextPlain)} {
		wg.Go(func() {
			for range 20 {
				mfs, err := reg.Gather()
				assert.NoError(t, err)
				var buf bytes.Buffer
				enc := expfmt.NewEncoder(&buf, format)
				for _, mf := range mfs {
					assert.NoError(t, enc.Encode(mf))
				}
				assert.Greater(t, buf.Len(), 200*10)
			}
		})
	}
	wg.Wait()
}
