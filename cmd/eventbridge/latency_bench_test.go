package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ce "github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// The latency benchmarks compare, for the same events, three ways of getting them to a consumer:
//
//   - BenchmarkLatencyProduct: PutEvents (batch mode) → bus stream → router (half the events match) → HTTP target
//     connector → local HTTP receiver;
//   - BenchmarkBareHTTP: a plain Go HTTP client posting the matching events (binary mode, at most 64 requests in
//     flight) to the same kind of receiver;
//   - BenchmarkBareJetStream: a plain JetStream pull consumer (Messages(), ack each) reading the events from a stream
//     on an embedded server.
//
// One benchmark iteration is one batch of latBatch events. Each runs as "burst" (batches sent back to back by one
// caller) and "paced" (one batch every latPace, by the clock). Latency is measured per event from just before the
// call that sends its batch (PutEvents, the HTTP posts, the JetStream publishes) to its receipt; the benchmark keeps
// an id → send-time map. events/s counts the events received (the matching half for the product path and the
// bare HTTP client, all events for JetStream) over the time from the first send to the last receipt.

const (
	latBatch = 100
	latPace  = 10 * time.Millisecond
)

// latencyRecorder maps event ids to send times and collects send-to-receipt latencies.
type latencyRecorder struct {
	mu    sync.Mutex
	sent  map[string]time.Time
	lat   []time.Duration
	last  time.Time
	first time.Time
	got   atomic.Int64
	bad   atomic.Int64
}

func newLatencyRecorder() *latencyRecorder { return &latencyRecorder{sent: map[string]time.Time{}} }

// reset forgets the warm-up.
func (r *latencyRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = map[string]time.Time{}
	r.lat = r.lat[:0]
	r.got.Store(0)
	r.bad.Store(0)
	r.first = time.Time{}
}

// sending records the send time of ids (now).
func (r *latencyRecorder) sending(ids []string) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first.IsZero() {
		r.first = now
	}
	for _, id := range ids {
		r.sent[id] = now
	}
}

// received records the receipt of id at now.
func (r *latencyRecorder) received(id string, now time.Time) {
	r.mu.Lock()
	t0, ok := r.sent[id]
	if ok {
		delete(r.sent, id)
		r.lat = append(r.lat, now.Sub(t0))
		r.last = now
	}
	r.mu.Unlock()
	if ok {
		r.got.Add(1)
	} else {
		r.bad.Add(1) // unknown id or a duplicate
	}
}

func (r *latencyRecorder) wait(b *testing.B, want int64) {
	deadline := time.Now().Add(5 * time.Minute)
	for r.got.Load() < want {
		if time.Now().After(deadline) {
			b.Fatalf("received %d of %d", r.got.Load(), want)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// report reports events/s, p50_ms and p99_ms of what was received.
func (r *latencyRecorder) report(b *testing.B) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lat) == 0 {
		b.Fatal("nothing received")
	}
	lat := slices.Clone(r.lat)
	slices.Sort(lat)
	pct := func(p int) float64 {
		i := min(len(lat)*p/100, len(lat)-1)
		return float64(lat[i]) / float64(time.Millisecond)
	}
	b.ReportMetric(float64(len(lat))/r.last.Sub(r.first).Seconds(), "events/s")
	b.ReportMetric(pct(50), "p50_ms")
	b.ReportMetric(pct(99), "p99_ms")
	b.ReportMetric(0, "ns/op")
	if n := r.bad.Load(); n > 0 {
		b.ReportMetric(float64(n), "unexpected")
	}
}

// latencyReceiver is a local HTTP receiver of binary-mode CloudEvents answering 204, recording each ce-id.
func latencyReceiver(b *testing.B, rec *latencyRecorder) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		now := time.Now()
		_, _ = io.Copy(io.Discard, req.Body)
		rec.received(req.Header.Get("ce-id"), now)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// latEvent is event i of a run; even i match the rule.
func latEvent(prefix string, i int) map[string]any {
	typ := "odd"
	if i%2 == 0 {
		typ = "even"
	}
	return event(fmt.Sprintf("%s-%d", prefix, i), "bench", typ, map[string]any{"i": i, "pad": "0123456789abcdef"})
}

// drive sends batches 0..n-1 with send, back to back (paced false) or one every latPace by the clock. When paced,
// it reports as late_ms how late the latest batch started against its schedule (0: the load was offered as planned).
func drive(b *testing.B, n int, paced bool, send func(batch int)) {
	start := time.Now()
	var late time.Duration
	for i := range n {
		if paced {
			at := start.Add(time.Duration(i) * latPace)
			if d := time.Until(at); d > 0 {
				time.Sleep(d)
			}
			late = max(late, time.Since(at))
		}
		send(i)
	}
	if paced {
		b.ReportMetric(float64(late)/float64(time.Millisecond), "late_ms")
	}
}

var latModes = []struct {
	name  string
	paced bool
}{{"burst", false}, {"paced", true}}

// BenchmarkLatencyProduct: one bus, a router with two rules (one matches half of the events), one HTTP target
// connector delivering to a local receiver.
func BenchmarkLatencyProduct(b *testing.B) {
	for _, mode := range latModes {
		b.Run(mode.name, func(b *testing.B) {
			m := NewMain()
			require.NoError(b, m.ParseFlags([]string{"--http-addr", "127.0.0.1:0", "--worker-addr", "127.0.0.1:0",
				"--data-dir", b.TempDir(), "--allow-private-targets", "--log-level", "error", "--put-events-rate", "1000000"},
				func(string) string { return "" }))
			require.NoError(b, m.Run(b.Context()))
			defer m.Close()
			rec := newLatencyRecorder()
			srv := latencyReceiver(b, rec)
			a := apiOf(b, m)
			a.must("POST", "/api/v1/buses", map[string]any{"name": "bench"}, 201)
			a.must("POST", "/api/v1/buses/bench/rules", map[string]any{"name": "half",
				"eventPattern": map[string]any{"type": []any{"even"}}}, 201)
			a.must("POST", "/api/v1/buses/bench/rules", map[string]any{"name": "none",
				"eventPattern": map[string]any{"type": []any{"never"}}}, 201)
			a.must("PUT", "/api/v1/buses/bench/rules/half/targets/t", httpTarget(srv.URL), 201)

			put := func(prefix string, batch int) {
				evs := make([]map[string]any, latBatch)
				var ids []string
				for j := range evs {
					i := batch*latBatch + j
					evs[j] = latEvent(prefix, i)
					if i%2 == 0 {
						ids = append(ids, evs[j]["id"].(string))
					}
				}
				body, err := json.Marshal(evs)
				require.NoError(b, err)
				rec.sending(ids)
				status, out := a.do(http.MethodPost, "/api/v1/buses/bench/events", "application/cloudevents-batch+json", body)
				require.Equal(b, http.StatusOK, status, string(out))
			}
			// Warm up: the connectors start, the target's connections open.
			for i := range 5 {
				put("warm", i)
			}
			rec.wait(b, 5*latBatch/2)
			rec.reset()

			b.ResetTimer()
			start := time.Now()
			drive(b, b.N, mode.paced, func(i int) { put("e", i) })
			b.ReportMetric(float64(b.N*latBatch)/time.Since(start).Seconds(), "put/s")
			rec.wait(b, int64(b.N*latBatch/2))
			b.StopTimer()
			rec.report(b)
		})
	}
}

// BenchmarkBareHTTP: a Go HTTP client posts the matching events (binary mode, one event per request, at most 64
// requests in flight) to the same receiver.
func BenchmarkBareHTTP(b *testing.B) {
	for _, mode := range latModes {
		b.Run(mode.name, func(b *testing.B) {
			rec := newLatencyRecorder()
			srv := latencyReceiver(b, rec)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64},
				Timeout: 30 * time.Second}
			defer client.CloseIdleConnections()
			sem := make(chan struct{}, 64)
			var wg sync.WaitGroup
			post := func(ev map[string]any) {
				defer wg.Done()
				defer func() { <-sem }()
				data, _ := json.Marshal(ev["data"])
				req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(data))
				if err != nil {
					panic(err)
				}
				req.Header.Set("Content-Type", "application/json")
				for _, k := range []string{"specversion", "id", "source", "type"} {
					req.Header.Set("ce-"+k, ev[k].(string))
				}
				req.Header.Set("ce-time", time.Now().UTC().Format(time.RFC3339Nano))
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			send := func(prefix string, batch int) {
				var evs []map[string]any
				var ids []string
				for j := range latBatch {
					if i := batch*latBatch + j; i%2 == 0 {
						ev := latEvent(prefix, i)
						evs = append(evs, ev)
						ids = append(ids, ev["id"].(string))
					}
				}
				rec.sending(ids)
				for _, ev := range evs {
					sem <- struct{}{}
					wg.Add(1)
					go post(ev)
				}
			}
			for i := range 5 {
				send("warm", i)
			}
			rec.wait(b, 5*latBatch/2)
			wg.Wait()
			rec.reset()

			b.ResetTimer()
			drive(b, b.N, mode.paced, func(i int) { send("e", i) })
			rec.wait(b, int64(b.N*latBatch/2))
			wg.Wait()
			b.StopTimer()
			rec.report(b)
		})
	}
}

// BenchmarkBareJetStream: the events are published (binary mode, de-duplication id, as PutEvents stores them; each
// batch waits for its acks) to a stream of an embedded server flushing every second; a pull consumer reads them
// with Messages() and acks each.
func BenchmarkBareJetStream(b *testing.B) {
	for _, mode := range latModes {
		b.Run(mode.name, func(b *testing.B) {
			env := jetstreamtest.StartWith(b, ebjs.ServerConfig{SyncInterval: time.Second})
			ctx := context.Background()
			env.Stream(b, "BENCH", "bench.>")
			// The consumer on its own connection, as a worker task would have.
			nc := jetstreamtest.Connect(b, env.Server)
			js, err := jetstream.New(nc)
			require.NoError(b, err)
			cons, err := js.CreateOrUpdateConsumer(ctx, "BENCH", jetstream.ConsumerConfig{
				Durable: "bare", AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 1000,
			})
			require.NoError(b, err)
			rec := newLatencyRecorder()
			it, err := cons.Messages(jetstream.PullMaxMessages(500))
			require.NoError(b, err)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					msg, err := it.Next()
					if err != nil {
						return
					}
					now := time.Now()
					rec.received(msg.Headers().Get("ce-id"), now)
					_ = msg.Ack()
				}
			}()
			defer func() { it.Stop(); <-done }()

			publish := func(prefix string, batch int) {
				msgs := make([]*nats.Msg, latBatch)
				ids := make([]string, latBatch)
				for j := range msgs {
					ev := latEvent(prefix, batch*latBatch+j)
					e := ce.New()
					e.SetID(ev["id"].(string))
					e.SetSource(ev["source"].(string))
					e.SetType(ev["type"].(string))
					e.SetTime(time.Now().UTC())
					require.NoError(b, e.SetData(ce.ApplicationJSON, ev["data"]))
					m := stream.Encode(&e)
					m.Subject = "bench.events"
					m.Header.Set(nats.MsgIdHdr, stream.PutMsgID(e.Source(), e.ID()))
					msgs[j], ids[j] = m, e.ID()
				}
				rec.sending(ids)
				futs := make([]jetstream.PubAckFuture, len(msgs))
				for j, m := range msgs {
					futs[j], err = env.JS.PublishMsgAsync(m)
					require.NoError(b, err)
				}
				for _, f := range futs {
					select {
					case <-f.Ok():
					case err := <-f.Err():
						b.Fatal(err)
					}
				}
			}
			for i := range 5 {
				publish("warm", i)
			}
			rec.wait(b, 5*latBatch)
			rec.reset()

			b.ResetTimer()
			drive(b, b.N, mode.paced, func(i int) { publish("e", i) })
			rec.wait(b, int64(b.N*latBatch))
			b.StopTimer()
			rec.report(b)
		})
	}
}
