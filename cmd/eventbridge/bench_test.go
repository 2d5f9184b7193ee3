package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkDelivery measures the whole path in one process: PutEvents in batches of 100 → bus stream → router
// (one rule of two matching) → rule subject → HTTP target on loopback. It reports events put per second and
// events delivered per second (the clock stops when the last matching event arrived).
func BenchmarkDelivery(b *testing.B) {
	m := benchMain(b)
	defer m.Close()
	deliver(b, m, "bench", nil)
}

// BenchmarkBusLog is BenchmarkDelivery on buses whose log records at each level, side by side in one process:
// what PutEvents and delivery cost when the router and the target write their records (INFO: two of the router
// and one of the target per matching event; TRACE: also one explanation per event for the rule it did not match).
func BenchmarkBusLog(b *testing.B) {
	m := benchMain(b)
	defer m.Close()
	var runs atomic.Int64 // a bus per run: the benchmark runs each level more than once
	for _, level := range []string{"OFF", "ERROR", "INFO", "TRACE"} {
		b.Run(level, func(b *testing.B) {
			deliver(b, m, fmt.Sprintf("log-%s-%d", strings.ToLower(level), runs.Add(1)), map[string]any{"level": level})
		})
	}
}

// BenchmarkTracing is BenchmarkDelivery with tracing off (the default) and on, side by side in one run, each in a
// process of its own: on, every event has a store span, a route span and a deliver span, exported in batches by
// OTLP/HTTP (protobuf) to a collector on loopback that reads and discards them; then with one trace in ten sampled
// (OTEL_TRACES_SAMPLER=traceidratio: the others' spans are made but neither recorded nor exported).
func BenchmarkTracing(b *testing.B) {
	b.Run("off", func(b *testing.B) {
		m := benchMain(b)
		defer m.Close()
		deliver(b, m, "bench", nil)
	})
	b.Run("on", func(b *testing.B) { tracedDelivery(b, nil) })
	b.Run("on-sampled-10pct", func(b *testing.B) {
		tracedDelivery(b, map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"})
	})
}

// tracedDelivery is deliver on a control plane that traces, exporting to a collector that discards, with the SDK's
// variables env (the SDK reads them from the process's environment).
func tracedDelivery(b *testing.B, env map[string]string) {
	for k, v := range env {
		b.Setenv(k, v)
	}
	{
		var exported atomic.Int64
		collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, _ := io.Copy(io.Discard, r.Body)
			exported.Add(n)
			w.Header().Set("Content-Type", "application/x-protobuf")
		}))
		defer collector.Close()
		m := benchMainWith(b, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL})
		defer m.Close()
		deliver(b, m, "bench", nil)
		b.StopTimer()
		_ = m.Close()
		if exported.Load() == 0 && env == nil { // one trace in ten of a short run may export nothing
			b.Fatal("no span was exported")
		}
	}
}

// benchMain starts the control plane for a benchmark, with logs at error level and no PutEvents rate.
func benchMain(b *testing.B) *Main { return benchMainWith(b, nil) }

// benchMainWith is benchMain with the environment variables env.
func benchMainWith(b *testing.B, env map[string]string) *Main {
	m := NewMain()
	require.NoError(b, m.ParseFlags([]string{"--http-addr", "127.0.0.1:0", "--worker-addr", "127.0.0.1:0",
		"--data-dir", b.TempDir(), "--allow-private-targets", "--log-level", "error", "--put-events-rate", "1000000"},
		func(k string) string { return env[k] }))
	require.NoError(b, m.Run(b.Context()))
	return m
}

// deliver makes a bus with a rule matching half its events and an http target, puts b.N batches of 100 events and
// waits for the matching ones to arrive.
func deliver(b *testing.B, m *Main, busName string, logConfig map[string]any) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	a := apiOf(b, m)
	bus := map[string]any{"name": busName}
	if logConfig != nil {
		bus["logConfig"] = logConfig
	}
	a.must("POST", "/api/v1/buses", bus, 201)
	a.must("POST", "/api/v1/buses/"+busName+"/rules", map[string]any{"name": "half",
		"eventPattern": map[string]any{"type": []any{"even"}}}, 201)
	a.must("POST", "/api/v1/buses/"+busName+"/rules", map[string]any{"name": "none",
		"eventPattern": map[string]any{"type": []any{"never"}}}, 201)
	a.must("PUT", "/api/v1/buses/"+busName+"/rules/half/targets/t", httpTarget(srv.URL), 201)

	const batch = 100
	n := b.N * batch
	b.ResetTimer()
	start := time.Now()
	var batchEvents []map[string]any
	for i := 0; i < n; i++ {
		typ := "odd"
		if i%2 == 0 {
			typ = "even"
		}
		batchEvents = append(batchEvents, event(fmt.Sprintf("b-%d", i), "bench", typ, map[string]any{"i": i, "pad": "0123456789abcdef"}))
		if len(batchEvents) == batch {
			a.putBatch(busName, batchEvents)
			batchEvents = batchEvents[:0]
		}
	}
	put := time.Since(start)
	want := int64((n + 1) / 2)
	for got.Load() < want {
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("delivered %d of %d", got.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
	total := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(n)/put.Seconds(), "put/s")
	b.ReportMetric(float64(want)/total.Seconds(), "delivered/s")
}

// BenchmarkWebhook measures a webhook source end to end in one process: concurrent POSTs to the source's
// /webhook/putEvents URL (each answered once its HTTPEvent is stored on the intake) → http-source connector → bus →
// router → HTTP target on loopback. It reports requests answered per second and events delivered per second.
func BenchmarkWebhook(b *testing.B) {
	m := NewMain()
	require.NoError(b, m.ParseFlags([]string{"--http-addr", "127.0.0.1:0", "--worker-addr", "127.0.0.1:0",
		"--data-dir", b.TempDir(), "--allow-private-targets", "--log-level", "error", "--put-events-rate", "1000000"}, func(string) string { return "" }))
	require.NoError(b, m.Run(b.Context()))
	defer m.Close()
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	a := apiOf(b, m)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "hooks"}, 201)
	a.must("POST", "/api/v1/buses/hooks/rules", map[string]any{"name": "all",
		"eventPattern": map[string]any{"type": []any{"eventbridge:Events:HTTPEvent"}}}, 201)
	a.must("PUT", "/api/v1/buses/hooks/rules/all/targets/t", httpTarget(srv.URL), 201)
	var src struct {
		Webhook struct {
			URLs []string `json:"urls"`
		} `json:"webhook"`
	}
	require.NoError(b, json.Unmarshal(a.must("POST", "/api/v1/buses/hooks/sources",
		map[string]any{"name": "in", "type": "http", "config": map[string]any{}}, 201), &src))
	require.NotEmpty(b, src.Webhook.URLs)
	url := src.Webhook.URLs[0]

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	var sent atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(url, "application/json", strings.NewReader(`{"order": 42, "pad": "0123456789abcdef"}`))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("webhook answered %d", resp.StatusCode)
				return
			}
			sent.Add(1)
		}
	})
	answered := time.Since(start)
	for got.Load() < sent.Load() {
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("delivered %d of %d", got.Load(), sent.Load())
		}
		time.Sleep(time.Millisecond)
	}
	total := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(sent.Load())/answered.Seconds(), "answered/s")
	b.ReportMetric(float64(sent.Load())/total.Seconds(), "delivered/s")
}

// replayBench is a control plane for the replay benchmarks: bus rb with rule all, an HTTP target on loopback that
// counts live and replayed deliveries apart, and archive ra of every event.
type replayBench struct {
	b              *testing.B
	a              api
	live, replayed atomic.Int64
}

func newReplayBench(b *testing.B) *replayBench {
	m := benchMain(b)
	b.Cleanup(func() { _ = m.Close() })
	rb := &replayBench{b: b, a: apiOf(b, m)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Header.Get("ce-replayname") != "" {
			rb.replayed.Add(1)
		} else {
			rb.live.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	rb.a.must("POST", "/api/v1/buses", map[string]any{"name": "rb"}, 201)
	rb.a.must("POST", "/api/v1/buses/rb/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"bench"}}}, 201)
	rb.a.must("PUT", "/api/v1/buses/rb/rules/all/targets/t", httpTarget(srv.URL), 201)
	rb.a.must("POST", "/api/v1/buses/rb/archives", map[string]any{"name": "ra"}, 201)
	return rb
}

// put puts batches of 100 events whose ids start with prefix.
func (rb *replayBench) put(prefix string, batches int) {
	for i := 0; i < batches; i++ {
		batch := make([]map[string]any, 100)
		for j := range batch {
			batch[j] = event(fmt.Sprintf("%s-%d-%d", prefix, i, j), "bench", "t", map[string]any{"i": j, "pad": "0123456789abcdef"})
		}
		rb.a.putBatch("rb", batch)
	}
}

// wait waits until c counts want deliveries and returns the time since since.
func (rb *replayBench) wait(c *atomic.Int64, want int64, since time.Time) time.Duration {
	for c.Load() < want {
		if time.Since(since) > 5*time.Minute {
			rb.b.Fatalf("delivered %d of %d", c.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
	return time.Since(since)
}

// archived waits until the archive holds want events.
func (rb *replayBench) archived(want int64) {
	for {
		var arch struct {
			EventCount int64 `json:"eventCount"`
		}
		require.NoError(rb.b, json.Unmarshal(rb.a.must("GET", "/api/v1/buses/rb/archives/ra", nil, 200), &arch))
		if arch.EventCount >= want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// replay starts a replay of ra's window [start, end) at rate (0: the default).
func (rb *replayBench) replay(name string, start, end time.Time, rate int) {
	body := map[string]any{"name": name, "archive": "ra", "eventStartTime": start, "eventEndTime": end}
	if rate > 0 {
		body["rate"] = rate
	}
	rb.a.must("POST", "/api/v1/replays", body, 201)
}

// BenchmarkReplay measures a replay against live delivery of the same events, side by side in one process:
// b.N batches of 100 events are put on a bus with one rule, an HTTP target on loopback and an archive, and
// delivered live (live/s: from the first put to the last delivery); then a replay of the window at its highest rate
// (100,000/s) puts them on the bus again for the same rule (replayed/s: from the start call to the last replayed
// delivery).
func BenchmarkReplay(b *testing.B) {
	rb := newReplayBench(b)
	n := int64(b.N * 100)
	b.ResetTimer()
	windowStart := time.Now().UTC()
	start := time.Now()
	rb.put("r", b.N)
	liveTook := rb.wait(&rb.live, n, start)
	rb.archived(n)
	time.Sleep(5 * time.Millisecond)
	start = time.Now()
	rb.replay(fmt.Sprintf("bench-%d", b.N), windowStart.Add(-time.Second), time.Now().UTC(), 100000)
	replayTook := rb.wait(&rb.replayed, n, start)
	b.StopTimer()
	b.ReportMetric(float64(n)/liveTook.Seconds(), "live/s")
	b.ReportMetric(float64(n)/replayTook.Seconds(), "replayed/s")
}

// BenchmarkReplayBesideLive measures what a replay at its default rate (1,000 events/s) takes from live traffic,
// side by side in one process: a bus with one rule, an HTTP target on loopback and an archive holding 20,000 events;
// b.N batches of 100 live events are put and delivered alone (live-alone/s), then again while a replay of the
// archive runs (live-beside-replay/s, with the replay's own rate over the same time, replayed/s).
func BenchmarkReplayBesideLive(b *testing.B) {
	rb := newReplayBench(b)
	const seeded = 20000
	seedStart := time.Now().UTC()
	rb.put("seed", seeded/100)
	rb.wait(&rb.live, seeded, seedStart)
	rb.archived(seeded)
	windowEnd := time.Now().UTC()
	n := int64(b.N * 100)

	b.ResetTimer()
	start := time.Now()
	rb.put("alone", b.N)
	alone := rb.wait(&rb.live, seeded+n, start)

	rb.replay(fmt.Sprintf("beside-%d", b.N), seedStart.Add(-time.Second), windowEnd, 0)
	for rb.replayed.Load() == 0 {
		time.Sleep(time.Millisecond) // the replay runs
	}
	start, before := time.Now(), rb.replayed.Load()
	rb.put("beside", b.N)
	beside := rb.wait(&rb.live, seeded+2*n, start)
	during := rb.replayed.Load() - before
	b.StopTimer()
	b.ReportMetric(float64(n)/alone.Seconds(), "live-alone/s")
	b.ReportMetric(float64(n)/beside.Seconds(), "live-beside-replay/s")
	b.ReportMetric(float64(during)/beside.Seconds(), "replayed/s")
}
