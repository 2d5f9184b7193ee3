package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	taskdelivery "github.com/eventbridge-go/eventbridge/worker/delivery"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// BenchmarkSideBySide measures each goal of the side-by-side table of docs/benchmarks.md: the product's path and its
// bare baseline run one after the other in the same benchmark, on the same machine at the same moment, and the
// benchmark reports both figures and their ratio. Authentication is on (an API key, as a user has), the other
// settings are the defaults but the PutEvents rate limit. One op times sbPairs pairs (the product's run, then the
// bare baseline's) and reports the median of each figure over them, with the range of the goal's figure beside it
// (ratio_min, ratio_max; diff_p99_ms_min, diff_p99_ms_max); `make bench` runs them.
//
//   - delivery-burst: matching events delivered per second by the product (PutEvents → bus → router → http
//     target) against a bare Go HTTP client posting the same events to the same kind of receiver with as many
//     requests in flight as the target's default (taskdelivery.MaxInFlight, one task); the bare client's best rate over
//     16–256 in flight is reported beside it. Goal: ratio ≥ 0.7.
//   - delivery-paced: 5,000 matching events/s offered; p99 put → delivery of the product against the bare client's
//     p99. Goal: difference ≤ 5 ms.
//   - putevents: events accepted per second by PutEvents over HTTP (batches of 10 events of 1 KiB, sbCallers
//     callers) against JetStream asynchronous publishes of the same events, encoded as PutEvents stores them, to a
//     stream of an embedded server flushing every second, once the bus's router has read every event put (the bare
//     run has the machine to itself). Goal: ratio ≥ 0.5. Asynchronous publishes keep as many events in flight as
//     the server takes; PutEvents' saturated rate, the best over 16, 32 and 64 callers once the pairs are done, is
//     reported beside it (product_best_put/s, and ratio_best against the median of the bare publishes).
//   - webhook: requests answered per second by a webhook source (1 KiB JSON bodies, sbCallers callers) against
//     single-event binary-mode PutEvents of the same bodies to the same bus. Goal: ratio ≥ 0.8.
//
// Each comparison first runs both sides, untimed, in rounds of the size of a timed run for sbWarm (warm), so that
// neither measures the process growing its heap to what a continuous load keeps: memory touched for the first time
// costs a page fault, about 11 µs each on the VM of docs/benchmarks.md, and the side measured first in a new
// process took tens of thousands of them that the other side, measured after it in the grown heap, did not. Each
// reports the page faults of its timed runs (product_faults, bare_faults: per run, minorFaults).
func BenchmarkSideBySide(b *testing.B) {
	b.Run("delivery-burst", func(b *testing.B) {
		p := newProductPath(b)
		h := newBareHTTP(b, taskdelivery.MaxInFlight)
		warmDelivery(p, h)
		var s sbSamples
		var faults [2]int64
		for i := range b.N * sbPairs {
			f := minorFaults()
			ps, putRate, _ := p.run(fmt.Sprintf("p%d", i), sbBatches, false)
			faults[0] += minorFaults() - f // the run's, as in the paced comparison: not the settling after it
			p.settle()
			f = minorFaults()
			hs, _ := h.run(fmt.Sprintf("h%d", i), sbBatches, false)
			faults[1] += minorFaults() - f
			s.add("product_events/s", ps.rate)
			s.add("bare_events/s", hs.rate)
			s.add("ratio", ps.rate/hs.rate)
			s.add("product_put/s", putRate)
			// What the router and the target deliver of what is stored once every event was put: the delivery
			// path's own speed against the bare client's, and the CPU it used meanwhile.
			s.add("product_drain_events/s", ps.drain)
			s.add("drain_ratio", ps.drain/hs.rate)
			s.add("drain_cpu_%", ps.drainCPU)
		}
		s.report(b, "ratio")
		reportFaults(b, faults, float64(b.N*sbPairs))
		b.StopTimer()
		best, bestConc := 0.0, 0
		for _, conc := range []int{16, 32, 64, 128, 256} {
			r, _ := newBareHTTP(b, conc).run("best", sbBatches, false)
			if r.rate > best {
				best, bestConc = r.rate, conc
			}
		}
		b.ReportMetric(best, "bare_best_events/s")
		b.ReportMetric(float64(bestConc), "bare_best_inflight")
		b.ReportMetric(0, "ns/op")
	})
	b.Run("delivery-paced", func(b *testing.B) {
		p := newProductPath(b)
		h := newBareHTTP(b, taskdelivery.MaxInFlight)
		warmDelivery(p, h)
		var s sbSamples
		var late time.Duration
		var faults [2]int64
		for i := range b.N * sbPairs {
			f := minorFaults()
			ps, _, pl := p.run(fmt.Sprintf("p%d", i), sbBatches, true)
			faults[0] += minorFaults() - f
			ph := p.hops()
			p.settle()
			f = minorFaults()
			bs, hl := h.run(fmt.Sprintf("h%d", i), sbBatches, true)
			faults[1] += minorFaults() - f
			late = max(late, pl, hl)
			s.add("product_p99_ms", ps.p99)
			s.add("bare_p99_ms", bs.p99)
			s.add("diff_p99_ms", ps.p99-bs.p99)
			// Where the product's time goes, hop by hop (p50 and p99 of each: PutEvents to stored on the bus,
			// stored to routed to the rule, routed to received).
			s.add("store_p50_ms", ph.storeP50)
			s.add("store_p99_ms", ph.storeP99)
			s.add("route_p50_ms", ph.routeP50)
			s.add("route_p99_ms", ph.routeP99)
			s.add("deliver_p50_ms", ph.deliverP50)
			s.add("deliver_p99_ms", ph.deliverP99)
		}
		s.report(b, "diff_p99_ms")
		reportFaults(b, faults, float64(b.N*sbPairs))
		reportLate(b, late)
		b.ReportMetric(0, "ns/op")
	})
	b.Run("putevents", func(b *testing.B) {
		p := newProductPath(b)
		env := jetstreamtest.StartWith(b, ebjs.ServerConfig{SyncInterval: time.Second})
		env.Stream(b, "BARE", "bare.>")
		warmRounds(func(w int) {
			warm := sbEvents(fmt.Sprintf("warm%d", w), sbEventsPerOp)
			sbPutEvents(b, p.a, sbBodies(b, warm), sbCallers)
			p.settle()
			sbPublish(b, env.JS, warm)
		})
		var s sbSamples
		var prodCPU, bareCPU, prodBusy time.Duration
		var faults [2]int64
		for i := range b.N * sbPairs {
			evs := sbEvents(fmt.Sprintf("put%d", i), sbEventsPerOp)
			bodies := sbBodies(b, evs) // the callers' encoding, left out of the process's CPU
			cpu, start, f := processCPU(), time.Now(), minorFaults()
			prod := sbPutEvents(b, p.a, bodies, sbCallers)
			prodCPU, prodBusy = prodCPU+processCPU()-cpu, prodBusy+time.Since(start)
			faults[0] += minorFaults() - f
			p.settle() // the router has read what was put: the bare run has the machine to itself
			cpu, f = processCPU(), minorFaults()
			bare := sbPublish(b, env.JS, evs)
			bareCPU += processCPU() - cpu
			faults[1] += minorFaults() - f
			s.add("product_put/s", prod)
			s.add("bare_publish/s", bare)
			s.add("ratio", prod/bare)
		}
		s.report(b, "ratio")
		n := b.N * sbPairs
		reportFaults(b, faults, float64(n))
		// The process's CPU: per event put with sbCallers callers (the calling client included) and per event
		// published by the bare client (its message building excluded), and how busy the product's run kept it.
		perEvent := float64(n * sbEventsPerOp)
		b.ReportMetric(float64(prodCPU.Microseconds())/perEvent, "product_cpu_us/event")
		b.ReportMetric(float64(bareCPU.Microseconds())/perEvent, "bare_cpu_us/event")
		b.ReportMetric(100*prodCPU.Seconds()/prodBusy.Seconds(), "product_cpu_%")
		// Saturated: the best rate over more callers, as asynchronous publishes keep as many in flight as the
		// server takes, against the median of the bare publishes above.
		top, at := 0.0, 0
		for _, callers := range []int{16, 32, 64} {
			rate := sbPutEvents(b, p.a, sbBodies(b, sbEvents(fmt.Sprintf("best-%d", callers), sbEventsPerOp)), callers)
			if rate > top {
				top, at = rate, callers
			}
		}
		b.ReportMetric(top, "product_best_put/s")
		b.ReportMetric(top/median(s["bare_publish/s"]), "ratio_best")
		b.ReportMetric(float64(at), "best_callers")
		b.ReportMetric(0, "ns/op")
	})
	b.Run("webhook", func(b *testing.B) {
		p := newProductPath(b)
		var src struct {
			Webhook struct {
				URLs []string `json:"urls"`
			} `json:"webhook"`
		}
		require.NoError(b, json.Unmarshal(p.a.must("POST", "/api/v1/buses/bench/sources",
			map[string]any{"name": "in", "type": "http", "config": map[string]any{}}, 201), &src))
		require.NotEmpty(b, src.Webhook.URLs)
		hook := src.Webhook.URLs[0]
		webhook := func(ev map[string]any, data []byte) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, hook, bytes.NewReader(data))
			req.Header.Set("Content-Type", "application/json")
			return req
		}
		binary := func(ev map[string]any, data []byte) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, p.a.base+"/api/v1/buses/bench/events", bytes.NewReader(data))
			req.Header.Set("Authorization", "Bearer "+p.a.key)
			req.Header.Set("Content-Type", "application/json")
			for _, k := range []string{"specversion", "id", "source", "type"} {
				req.Header.Set("ce-"+k, ev[k].(string))
			}
			return req
		}
		warmRounds(func(w int) {
			sbPost(b, sbEvents(fmt.Sprintf("warm-hook%d", w), sbEventsPerOp/2), webhook)
			sbPost(b, sbEvents(fmt.Sprintf("warm-put%d", w), sbEventsPerOp/2), binary)
		})
		var s sbSamples
		var faults [2]int64
		for i := range b.N * sbPairs {
			evs := sbEvents(fmt.Sprintf("hook%d", i), sbEventsPerOp/2)
			f := minorFaults()
			prod := sbPost(b, evs, webhook)
			faults[0] += minorFaults() - f
			f = minorFaults()
			bare := sbPost(b, evs, binary)
			faults[1] += minorFaults() - f
			s.add("webhook_answered/s", prod)
			s.add("putevents_binary/s", bare)
			s.add("ratio", prod/bare)
		}
		s.report(b, "ratio")
		reportFaults(b, faults, float64(b.N*sbPairs))
		b.ReportMetric(0, "ns/op")
	})
}

// sbPairs is how many times one op of a comparison times both sides, one after the other. One pair is not enough
// on the VM of docs/benchmarks.md: on an otherwise idle machine, after the warm-up, the ratio of single PutEvents
// pairs ranged from 0.27 to 1.42 over some 200 pairs (from 0.30 to 0.93 within one process; the product's rate from
// 26,000 to 78,000 events/s, the bare publishes' from 57,000 to 120,000), so that a run's one figure said more about
// the moment than about the product. A run reports the median of its pairs, and the lowest and highest of the goal's
// figure beside it.
const sbPairs = 7

// sbSamples holds each figure of a comparison, one value per timed pair, by the name it is reported under.
type sbSamples map[string][]float64

func (s *sbSamples) add(name string, v float64) {
	if *s == nil {
		*s = sbSamples{}
	}
	(*s)[name] = append((*s)[name], v)
}

// report reports the median of every figure over the pairs, and the lowest and highest value of goal (goal_min,
// goal_max).
func (s sbSamples) report(b *testing.B, goal string) {
	for name, vs := range s {
		b.ReportMetric(median(vs), name)
	}
	b.ReportMetric(slices.Min(s[goal]), goal+"_min")
	b.ReportMetric(slices.Max(s[goal]), goal+"_max")
}

// median is the middle value of vs (the mean of the two middle ones for an even count).
func median(vs []float64) float64 {
	sorted := slices.Sorted(slices.Values(vs))
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

const (
	sbBatches     = 300    // batches of latBatch events per delivery run: 15,000 matching events
	sbEventsPerOp = 20_000 // events per PutEvents run
	sbPutBatch    = 10     // events per PutEvents call
	sbCallers     = 8      // concurrent HTTP callers of PutEvents and webhook runs
)

// sbWarm is how long each comparison runs both sides before it times them. nats-server keeps the cache of a stream's
// message block for 10 s after its last use (its filestore's cache expiry), so a process under a continuous load
// grows its heap for about that long; the runs after a single warm round still took 4,000–13,000 page faults each,
// those after 12 s of rounds 0–4,000.
const sbWarm = 12 * time.Second

// warmRounds runs round (numbered from 0) until sbWarm has passed, at least once.
func warmRounds(round func(w int)) {
	start := time.Now()
	for w := 0; w == 0 || time.Since(start) < sbWarm; w++ {
		round(w)
	}
}

// warmDelivery runs the product's path and the bare client in bursts, untimed, at the size of a timed run, for
// sbWarm, and waits until the product's consumers have caught up.
func warmDelivery(p *productPath, h *bareHTTP) {
	warmRounds(func(w int) {
		p.run(fmt.Sprintf("warm-p%d", w), sbBatches, false)
		p.settle()
		h.run(fmt.Sprintf("warm-h%d", w), sbBatches, false)
	})
}

// reportFaults reports the page faults of the timed runs of each side (product, bare), per run of n.
func reportFaults(b *testing.B, faults [2]int64, n float64) {
	b.ReportMetric(float64(faults[0])/n, "product_faults")
	b.ReportMetric(float64(faults[1])/n, "bare_faults")
}

// sbEvents returns n events of about 1 KiB in their JSON form.
func sbEvents(prefix string, n int) []map[string]any {
	pad := strings.Repeat("0123456789abcdef", 52)
	evs := make([]map[string]any, n)
	for i := range evs {
		evs[i] = event(fmt.Sprintf("%s-%d", prefix, i), "bench", "put", map[string]any{"i": i, "pad": pad})
	}
	return evs
}

// sbBodies returns the bodies of the PutEvents calls that put evs, sbPutBatch events each.
func sbBodies(b *testing.B, evs []map[string]any) [][]byte {
	var bodies [][]byte
	for i := 0; i < len(evs); i += sbPutBatch {
		body, err := json.Marshal(evs[i:min(i+sbPutBatch, len(evs))])
		require.NoError(b, err)
		bodies = append(bodies, body)
	}
	return bodies
}

// sbPutEvents puts events on bus bench, one call per body of bodies (sbPutBatch events each) from callers callers,
// and returns events accepted per second.
func sbPutEvents(b *testing.B, a api, bodies [][]byte, callers int) float64 {
	calls := sbCall(b, len(bodies), callers, func(i int) *http.Request {
		req, _ := http.NewRequest(http.MethodPost, a.base+"/api/v1/buses/bench/events", bytes.NewReader(bodies[i]))
		req.Header.Set("Authorization", "Bearer "+a.key)
		req.Header.Set("Content-Type", "application/cloudevents-batch+json")
		return req
	})
	return calls * sbPutBatch
}

// sbPublish publishes evs as PutEvents stores them, asynchronously, and returns events stored per second.
func sbPublish(b *testing.B, js jetstream.JetStream, evs []map[string]any) float64 {
	msgs := make([]*nats.Msg, len(evs))
	for i, ev := range evs {
		msgs[i] = storedMsg(b, ev, "bare.events")
	}
	start := time.Now()
	futs := make([]jetstream.PubAckFuture, len(msgs))
	for i, m := range msgs {
		f, err := js.PublishMsgAsync(m)
		require.NoError(b, err)
		futs[i] = f
	}
	for _, f := range futs {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			b.Fatal(err)
		}
	}
	return float64(len(msgs)) / time.Since(start).Seconds()
}

// sbPost sends one request per event (request builds it from the event and its data) from sbCallers callers and
// returns requests answered per second.
func sbPost(b *testing.B, evs []map[string]any, request func(ev map[string]any, data []byte) *http.Request) float64 {
	datas := make([][]byte, len(evs))
	for i, ev := range evs {
		data, err := json.Marshal(ev["data"])
		require.NoError(b, err)
		datas[i] = data
	}
	return sbCall(b, len(evs), sbCallers, func(i int) *http.Request { return request(evs[i], datas[i]) })
}

// sbCall sends requests 0..n-1 (request builds them) from callers callers and returns requests answered per
// second; each must be answered 200.
func sbCall(b *testing.B, n, callers int, request func(i int) *http.Request) float64 {
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: callers}}
	defer client.CloseIdleConnections()
	start := time.Now()
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for i := range next {
				sbDo(b, client, request(i))
			}
		})
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

// sbDo sends req and fails the benchmark unless it is answered 200.
func sbDo(b *testing.B, client *http.Client, req *http.Request) {
	resp, err := client.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Errorf("%s answered %d: %s", req.URL.Path, resp.StatusCode, out)
	}
}
