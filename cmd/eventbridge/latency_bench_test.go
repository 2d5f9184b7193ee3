package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
// an id → send-time map. events/s counts the events received (the matching half for the product path and the bare
// HTTP client, all events for JetStream) over the time from the first send to the last receipt. The product's and
// the bare HTTP client's requests are encoded before their run starts (PutEvents' batches, the bare client's event
// data): the callers' JSON encoding is not what is compared, as PutEvents' side by side leaves it out too. It was
// in the time before 2026-12-06, on the product's side in its one caller's loop, between its calls.

const (
	latBatch = 100
	latPace  = 10 * time.Millisecond
)

// latencyRecorder maps event ids to send times and collects send-to-receipt latencies.
type latencyRecorder struct {
	mu    sync.Mutex
	sent  map[string]time.Time
	times map[string][2]time.Time // id → send and receipt times of what was received since the last reset
	lat   []time.Duration
	last  time.Time
	first time.Time
	got   atomic.Int64
	bad   atomic.Int64
}

func newLatencyRecorder() *latencyRecorder {
	return &latencyRecorder{sent: map[string]time.Time{}, times: map[string][2]time.Time{}}
}

// reset forgets the warm-up.
func (r *latencyRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = map[string]time.Time{}
	r.times = map[string][2]time.Time{}
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
		r.times[id] = [2]time.Time{t0, now}
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

// latStats are the figures of one run: events received per second, and the 50th and 99th percentile of their
// send-to-receipt latency in milliseconds. For the product's runs, drain is the events received per second once
// every event was put (what the router and the target deliver of what is stored, PutEvents no longer competing for
// the cores) and drainCPU the process's CPU meanwhile, in percent of one core.
type latStats struct{ rate, p50, p99, drain, drainCPU float64 }

// stats returns the figures of what was received since the last reset.
func (r *latencyRecorder) stats(b *testing.B) latStats {
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
	return latStats{rate: float64(len(lat)) / r.last.Sub(r.first).Seconds(), p50: pct(50), p99: pct(99)}
}

// report reports events/s, p50_ms and p99_ms of what was received.
func (r *latencyRecorder) report(b *testing.B) {
	s := r.stats(b)
	b.ReportMetric(s.rate, "events/s")
	b.ReportMetric(s.p50, "p50_ms")
	b.ReportMetric(s.p99, "p99_ms")
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
// it returns how late the latest batch started against its schedule (0: the load was offered as planned).
func drive(n int, paced bool, send func(batch int)) (late time.Duration) {
	start := time.Now()
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
	return late
}

// reportLate reports how late a paced run offered its load, as late_ms.
func reportLate(b *testing.B, late time.Duration) {
	b.ReportMetric(float64(late)/float64(time.Millisecond), "late_ms")
}

var latModes = []struct {
	name  string
	paced bool
}{{"burst", false}, {"paced", true}}

// productPath is the product in this process with bus bench, a rule matching the even events, one matching none,
// and an http target (binary mode, the defaults) delivering to a receiver that records latencies.
type productPath struct {
	b      *testing.B
	a      api
	rec    *latencyRecorder
	js     jetstream.JetStream
	stream string // the bus's
}

func newProductPath(b *testing.B) *productPath {
	m := NewMain()
	require.NoError(b, m.ParseFlags([]string{"--http-addr", "127.0.0.1:0", "--worker-addr", "127.0.0.1:0",
		"--data-dir", b.TempDir(), "--allow-private-targets", "--log-level", "error", "--put-events-rate", "1000000"},
		func(string) string { return "" }))
	require.NoError(b, m.Run(b.Context()))
	b.Cleanup(func() { _ = m.Close() })
	js, err := jetstream.New(m.nc)
	require.NoError(b, err)
	p := &productPath{b: b, a: apiOf(b, m), rec: newLatencyRecorder(), js: js}
	srv := latencyReceiver(b, p.rec)
	p.a.must("POST", "/api/v1/buses", map[string]any{"name": "bench"}, 201)
	busStreams := stream.Names{Cluster: m.Config.ClusterID}.BusStream("")
	for name := range js.StreamNames(b.Context()).Name() {
		if strings.HasPrefix(name, busStreams) {
			p.stream = name // the only bus
		}
	}
	require.NotEmpty(b, p.stream)
	p.a.must("POST", "/api/v1/buses/bench/rules", map[string]any{"name": "half",
		"eventPattern": map[string]any{"type": []any{"even"}}}, 201)
	p.a.must("POST", "/api/v1/buses/bench/rules", map[string]any{"name": "none",
		"eventPattern": map[string]any{"type": []any{"never"}}}, 201)
	p.a.must("PUT", "/api/v1/buses/bench/rules/half/targets/t", httpTarget(srv.URL), 201)
	// Warm up: the connectors start, the target's connections open.
	for i := range 5 {
		p.put(p.call("warm", i))
	}
	p.rec.wait(b, 5*latBatch/2)
	p.rec.reset()
	return p
}

// putCall is one PutEvents call of a run, made before the run starts: the callers' encoding is left out of both
// sides' time (the bare client's events are encoded before its run too), as PutEvents' side by side leaves it out.
type putCall struct {
	body []byte   // latBatch events in the JSON format, half of them matching
	ids  []string // the matching events'
}

// call makes batch i of the run named prefix.
func (p *productPath) call(prefix string, batch int) putCall {
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
	require.NoError(p.b, err)
	return putCall{body: body, ids: ids}
}

// put sends c in one PutEvents call.
func (p *productPath) put(c putCall) {
	p.rec.sending(c.ids)
	status, out := p.a.do(http.MethodPost, "/api/v1/buses/bench/events", "application/cloudevents-batch+json", c.body)
	require.Equal(p.b, http.StatusOK, status, string(out))
}

// run puts n batches (prefix names the run) and waits for their matching events; it returns what the receiver
// saw, PutEvents' accepted events per second and how late a paced run was.
func (p *productPath) run(prefix string, n int, paced bool) (latStats, float64, time.Duration) {
	calls := make([]putCall, n)
	for i := range calls {
		calls[i] = p.call(prefix, i)
	}
	p.rec.reset()
	start := time.Now()
	late := drive(n, paced, func(i int) { p.put(calls[i]) })
	putRate := float64(n*latBatch) / time.Since(start).Seconds()
	put, got, cpu := time.Now(), p.rec.got.Load(), processCPU()
	p.rec.wait(p.b, int64(n*latBatch/2))
	cpu = processCPU() - cpu
	s := p.rec.stats(p.b)
	if rest := int64(n*latBatch/2) - got; rest > 0 {
		p.rec.mu.Lock()
		took := p.rec.last.Sub(put)
		p.rec.mu.Unlock()
		s.drain, s.drainCPU = float64(rest)/took.Seconds(), 100*cpu.Seconds()/took.Seconds()
	}
	return s, putRate, late
}

// hops are the percentiles of where the matching events received since the last reset spent their time, in
// milliseconds: from the PutEvents call to the event stored on the bus's .in subject, from there to the router's
// copy stored on the rule's subject, and from there to the receiver (read from the stored messages' timestamps).
type hops struct{ storeP50, storeP99, routeP50, routeP99, deliverP50, deliverP99 float64 }

func (p *productPath) hops() hops {
	p.rec.mu.Lock()
	times := maps.Clone(p.rec.times)
	p.rec.mu.Unlock()
	if len(times) == 0 {
		return hops{}
	}
	// From the first of these events put on: the stream holds every run of the process before them too.
	first := time.Now()
	for _, t := range times {
		if t[0].Before(first) {
			first = t[0]
		}
	}
	from := first.Add(-time.Second)
	cons, err := p.js.OrderedConsumer(p.b.Context(), p.stream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &from})
	require.NoError(p.b, err)
	defer func() { // not left behind for settle to wait on as later runs add to the stream
		if info := cons.CachedInfo(); info != nil {
			require.NoError(p.b, p.js.DeleteConsumer(p.b.Context(), p.stream, info.Name))
		}
	}()
	stored, routed := map[string]time.Time{}, map[string]time.Time{}
	for {
		batch, err := cons.FetchNoWait(1000)
		require.NoError(p.b, err)
		n := 0
		for msg := range batch.Messages() {
			n++
			md, err := msg.Metadata()
			require.NoError(p.b, err)
			// Record batches hold several events: each is stored or routed when its message is.
			evs, err := stream.DecodeAll(&nats.Msg{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data()})
			require.NoError(p.b, err)
			for _, e := range evs {
				id := e.ID()
				if _, ok := times[id]; !ok {
					continue
				}
				if strings.HasSuffix(msg.Subject(), ".in") {
					stored[id] = md.Timestamp
				} else {
					routed[id] = md.Timestamp
				}
			}
		}
		require.NoError(p.b, batch.Error())
		if n == 0 {
			break
		}
	}
	var store, route, deliver []time.Duration
	for id, t := range times {
		in, ok1 := stored[id]
		copied, ok2 := routed[id]
		if !ok1 || !ok2 {
			continue // trimmed already (the bus's storage was 80% full)
		}
		store, route, deliver = append(store, in.Sub(t[0])), append(route, copied.Sub(in)), append(deliver, t[1].Sub(copied))
	}
	if len(store) == 0 {
		return hops{}
	}
	pct := func(d []time.Duration, p int) float64 {
		slices.Sort(d)
		return float64(d[min(len(d)*p/100, len(d)-1)]) / float64(time.Millisecond)
	}
	return hops{pct(store, 50), pct(store, 99), pct(route, 50), pct(route, 99), pct(deliver, 50), pct(deliver, 99)}
}

// settle waits until every consumer of the bus (its router, its target) has read and acknowledged everything: a
// bare baseline measured next has the machine to itself.
func (p *productPath) settle() {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, err := p.js.Stream(p.b.Context(), p.stream)
		require.NoError(p.b, err)
		busy := false
		for info := range st.ListConsumers(p.b.Context()).Info() {
			busy = busy || info.NumPending > 0 || info.NumAckPending > 0
		}
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			p.b.Fatal("the bus's consumers did not catch up in 2 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processCPU is the CPU time the process used so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// minorFaults is the number of minor page faults the process took so far: memory touched for the first time since
// it was mapped (or since the runtime gave it back to the system). On the 2-vCPU VM of docs/benchmarks.md each costs
// about 11 µs, so a run that grows the heap pays for it in its rate.
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt
}

// BenchmarkLatencyProduct: one bus, a router with two rules (one matches half of the events), one HTTP target
// connector delivering to a local receiver.
func BenchmarkLatencyProduct(b *testing.B) {
	for _, mode := range latModes {
		b.Run(mode.name, func(b *testing.B) {
			p := newProductPath(b)
			b.ResetTimer()
			_, putRate, late := p.run("e", b.N, mode.paced)
			b.StopTimer()
			b.ReportMetric(putRate, "put/s")
			if mode.paced {
				reportLate(b, late)
			}
			p.rec.report(b)
		})
	}
}

// bareHTTP is a plain Go HTTP client posting the matching events, one per request in binary mode (ce-* headers,
// JSON body), with at most conc requests in flight, to a receiver like the product's.
type bareHTTP struct {
	b      *testing.B
	rec    *latencyRecorder
	url    string
	client *http.Client
	sem    chan struct{}
	wg     sync.WaitGroup
}

func newBareHTTP(b *testing.B, conc int) *bareHTTP {
	h := &bareHTTP{b: b, rec: newLatencyRecorder(), sem: make(chan struct{}, conc),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc},
			Timeout: 30 * time.Second}}
	h.url = latencyReceiver(b, h.rec).URL
	b.Cleanup(h.client.CloseIdleConnections)
	for i := range 5 {
		h.send(h.batch("warm", i))
	}
	h.rec.wait(b, 5*latBatch/2)
	h.wg.Wait()
	h.rec.reset()
	return h
}

// bareEvent is one request of the bare client: a matching event, its data encoded before the run starts.
type bareEvent struct {
	attrs map[string]any
	data  []byte
}

func (h *bareHTTP) post(ev bareEvent) {
	defer h.wg.Done()
	defer func() { <-h.sem }()
	req, err := http.NewRequest(http.MethodPost, h.url, bytes.NewReader(ev.data))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for _, k := range []string{"specversion", "id", "source", "type"} {
		req.Header.Set("ce-"+k, ev.attrs[k].(string))
	}
	req.Header.Set("ce-time", time.Now().UTC().Format(time.RFC3339Nano))
	resp, err := h.client.Do(req)
	if err != nil {
		h.b.Error(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// batch makes the matching events of batch i of the run named prefix.
func (h *bareHTTP) batch(prefix string, batch int) []bareEvent {
	var evs []bareEvent
	for j := range latBatch {
		if i := batch*latBatch + j; i%2 == 0 {
			ev := latEvent(prefix, i)
			data, err := json.Marshal(ev["data"])
			require.NoError(h.b, err)
			evs = append(evs, bareEvent{attrs: ev, data: data})
		}
	}
	return evs
}

// send posts evs.
func (h *bareHTTP) send(evs []bareEvent) {
	ids := make([]string, len(evs))
	for i, ev := range evs {
		ids[i] = ev.attrs["id"].(string)
	}
	h.rec.sending(ids)
	for _, ev := range evs {
		h.sem <- struct{}{}
		h.wg.Add(1)
		go h.post(ev)
	}
}

// run sends n batches and waits for them; it returns what the receiver saw and how late a paced run was.
func (h *bareHTTP) run(prefix string, n int, paced bool) (latStats, time.Duration) {
	batches := make([][]bareEvent, n)
	for i := range batches {
		batches[i] = h.batch(prefix, i)
	}
	h.rec.reset()
	late := drive(n, paced, func(i int) { h.send(batches[i]) })
	h.rec.wait(h.b, int64(n*latBatch/2))
	h.wg.Wait()
	return h.rec.stats(h.b), late
}

// BenchmarkBareHTTP: a Go HTTP client posts the matching events (binary mode, one event per request, at most 64
// requests in flight) to the same receiver.
func BenchmarkBareHTTP(b *testing.B) {
	for _, mode := range latModes {
		b.Run(mode.name, func(b *testing.B) {
			h := newBareHTTP(b, 64)
			b.ResetTimer()
			_, late := h.run("e", b.N, mode.paced)
			b.StopTimer()
			if mode.paced {
				reportLate(b, late)
			}
			h.rec.report(b)
		})
	}
}

// latMsgs encodes batch i as PutEvents stores it (binary mode, de-duplication id) on subject, with the ids.
func latMsgs(b *testing.B, subject, prefix string, batch int) ([]*nats.Msg, []string) {
	msgs := make([]*nats.Msg, latBatch)
	ids := make([]string, latBatch)
	for j := range msgs {
		ev := latEvent(prefix, batch*latBatch+j)
		msgs[j], ids[j] = storedMsg(b, ev, subject), ev["id"].(string)
	}
	return msgs, ids
}

// storedMsg encodes ev (an event as PutEvents takes it in JSON) as PutEvents stores it on subject: binary mode,
// stored now, with its de-duplication id.
func storedMsg(b *testing.B, ev map[string]any, subject string) *nats.Msg {
	e := ce.New()
	e.SetID(ev["id"].(string))
	e.SetSource(ev["source"].(string))
	e.SetType(ev["type"].(string))
	e.SetTime(time.Now().UTC())
	require.NoError(b, e.SetData(ce.ApplicationJSON, ev["data"]))
	m := stream.Encode(&e)
	m.Subject = subject
	m.Header.Set(nats.MsgIdHdr, stream.PutMsgID(e.Source(), e.ID()))
	return m
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
				msgs, ids := latMsgs(b, "bench.events", prefix, batch)
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
			late := drive(b.N, mode.paced, func(i int) { publish("e", i) })
			rec.wait(b, int64(b.N*latBatch))
			b.StopTimer()
			if mode.paced {
				reportLate(b, late)
			}
			rec.report(b)
		})
	}
}
