package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// BenchmarkPathModel measures what the product's delivery path costs JetStream, and what storing several events per
// message would save: the path rebuilt on bare JetStream without the product's code. Events are stored on a stream
// (bus.in), a router reads them and stores the matching half on bus.rule, a target reads those and posts each event
// to a local HTTP receiver (at most 64 requests in flight, as the product's target and the bare client), acking a
// message once all its events are answered. The router holds at most 64 messages, acks each once its copy is stored
// (explicit acks, Nats-Msg-Id on every message, a file stream flushing every second, as the product has them).
// events-per-message=1 is the product's layout; 10 and 50 store that many events in one message and copy the
// matching ones of a message in one message; copies-batched stores one event per message on bus.in and gathers the
// matching events of the messages the router holds into one copy; copies-single stores 10 events per message on
// bus.in and each matching event in a copy of its own (the first step of record batches: PutEvents storing a call's
// events in one message while the rules' subjects keep one event per message). Per event the router and the target
// do the same work whatever the layout (read its type, post it). bare-http posts the matching events directly.
//
// burst publishes 30,000 events at once and reports matching events delivered per second and the process's CPU per
// matching event delivered (cpu_us/event, publishing included); paced publishes them in groups of 100 every 10 ms
// (5,000 matching events/s, as the side-by-side paced goal) and reports the p50 and p99 from publish to receipt.
func BenchmarkPathModel(b *testing.B) {
	const events = 30_000
	layouts := []struct {
		name           string
		per, copyBatch int // copyBatch -1: one copy per matching event
	}{{"events-per-message=1", 1, 0}, {"events-per-message=10", 10, 0}, {"events-per-message=50", 50, 0},
		{"events-per-message=1/copies-batched", 1, 64}, {"events-per-message=10/copies-single", 10, -1},
		{"bare-http", 0, 0}}
	for _, mode := range latModes {
		for _, layout := range layouts {
			b.Run(mode.name+"/"+layout.name, func(b *testing.B) {
				var sum modelRun
				var late time.Duration
				for range b.N {
					var r modelRun
					if layout.per == 0 {
						r = bareModel(b, events, mode.paced)
					} else {
						r = pathModel(b, layout.per, layout.copyBatch, events, mode.paced)
					}
					sum = modelRun{sum.rate + r.rate, sum.cpu + r.cpu, sum.p50 + r.p50, sum.p99 + r.p99, 0}
					late = max(late, r.late)
				}
				n := float64(b.N)
				if mode.paced {
					b.ReportMetric(sum.p50/n, "p50_ms")
					b.ReportMetric(sum.p99/n, "p99_ms")
					reportLate(b, late)
				} else {
					b.ReportMetric(sum.rate/n, "delivered/s")
					b.ReportMetric(sum.cpu/n, "cpu_us/event")
				}
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// modelRun is what one run of the model measured: matching events delivered per second, the process's CPU per
// matching event in microseconds, the p50 and p99 from publish to receipt in milliseconds, and how late a paced
// run offered its load.
type modelRun struct {
	rate, cpu, p50, p99 float64
	late                time.Duration
}

// modelReceiver answers 204 to every post and counts them.
type modelReceiver struct {
	srv    *httptest.Server
	client *http.Client
	got    atomic.Int64
	slots  chan struct{} // requests in flight

	mu            sync.Mutex
	sent, arrived map[string]time.Time // by event id
}

func newModelReceiver(b *testing.B) *modelReceiver {
	r := &modelReceiver{slots: make(chan struct{}, 64), sent: map[string]time.Time{}, arrived: map[string]time.Time{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		now := time.Now()
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.arrived[req.Header.Get("ce-id")] = now
		r.mu.Unlock()
		r.got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(func() { r.client.CloseIdleConnections(); r.srv.Close() })
	return r
}

// post posts one event (its JSON form) in a slot, as the http target posts one event per request.
func (r *modelReceiver) post(b *testing.B, ev []byte) {
	r.slots <- struct{}{}
	defer func() { <-r.slots }()
	var head struct {
		ID, Source, Type string
		Data             json.RawMessage
	}
	if err := json.Unmarshal(ev, &head); err != nil {
		b.Error(err)
		return
	}
	req, _ := http.NewRequest(http.MethodPost, r.srv.URL, bytes.NewReader(head.Data))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("ce-specversion", "1.0")
	req.Header.Set("ce-id", head.ID)
	req.Header.Set("ce-source", head.Source)
	req.Header.Set("ce-type", head.Type)
	resp, err := r.client.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// sending records the send time of the events of evs with the given indexes, now.
func (r *modelReceiver) sending(from, to int) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := from; i < to; i++ {
		r.sent["m-"+strconv.Itoa(i)] = now
	}
}

// result returns what a run measured since start, cpu0 (the process's CPU then) and late.
func (r *modelReceiver) result(b *testing.B, n int, start time.Time, cpu0, late time.Duration) modelRun {
	r.wait(b, int64(n/2))
	took, cpu := time.Since(start), processCPU()-cpu0
	r.mu.Lock()
	defer r.mu.Unlock()
	var lat []time.Duration
	for id, at := range r.arrived {
		if t0, ok := r.sent[id]; ok {
			lat = append(lat, at.Sub(t0))
		}
	}
	require.Len(b, lat, n/2, "every matching event arrived")
	slices.Sort(lat)
	ms := func(q int) float64 { return float64(lat[len(lat)*q/100]) / float64(time.Millisecond) }
	return modelRun{rate: float64(n/2) / took.Seconds(), cpu: float64(cpu.Microseconds()) / float64(n/2),
		p50: ms(50), p99: ms(99), late: late}
}

func (r *modelReceiver) wait(b *testing.B, want int64) {
	deadline := time.Now().Add(2 * time.Minute)
	for r.got.Load() < want {
		if time.Now().After(deadline) {
			b.Fatalf("received %d of %d", r.got.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// modelEvents returns n events in their JSON form; even ones match.
func modelEvents(b *testing.B, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		raw, err := json.Marshal(latEvent("m", i))
		require.NoError(b, err)
		out[i] = raw
	}
	return out
}

// pack writes events length-prefixed in one body; unpack reads them back.
func pack(events [][]byte) []byte {
	var buf bytes.Buffer
	for _, ev := range events {
		buf.Write(binary.AppendUvarint(nil, uint64(len(ev))))
		buf.Write(ev)
	}
	return buf.Bytes()
}

func unpack(body []byte) [][]byte {
	var out [][]byte
	for len(body) > 0 {
		n, k := binary.Uvarint(body)
		out = append(out, body[k:k+int(n)])
		body = body[k+int(n):]
	}
	return out
}

// pathModel puts n events, per per message, through the modelled path, at once or paced, and returns what it
// measured. With copyBatch > 0 the router gathers the
// matching events of the messages it holds, up to copyBatch, into one copy (stored once, then every message it
// holds acked), whatever per is.
func pathModel(b *testing.B, per, copyBatch, n int, paced bool) modelRun {
	env := jetstreamtest.StartWith(b, ebjs.ServerConfig{SyncInterval: time.Second})
	env.Stream(b, "BUS", "bus.in", "bus.rule")
	rec := newModelReceiver(b)
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	consume := func(name, subject string, handle func(msg jetstream.Msg)) {
		cons, err := env.JS.CreateOrUpdateConsumer(ctx, "BUS", jetstream.ConsumerConfig{Durable: name,
			FilterSubject: subject, AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 64})
		require.NoError(b, err)
		iter, err := cons.Messages(jetstream.PullMaxMessages(64))
		require.NoError(b, err)
		b.Cleanup(iter.Stop)
		slots := make(chan struct{}, 64)
		go func() {
			for {
				msg, err := iter.Next()
				if err != nil {
					return
				}
				slots <- struct{}{}
				go func() {
					defer func() { <-slots }()
					handle(msg)
				}()
			}
		}()
	}
	// storeCopy stores matched, read from src (the first of them, when several), on bus.rule and waits for it: in
	// one message, or with copyBatch -1 each event in a message of its own.
	storeCopy := func(src jetstream.Msg, matched [][]byte) bool {
		groups := [][][]byte{matched}
		if copyBatch < 0 {
			groups = groups[:0]
			for _, ev := range matched {
				groups = append(groups, [][]byte{ev})
			}
		}
		var futs []jetstream.PubAckFuture
		for i, g := range groups {
			out := &nats.Msg{Subject: "bus.rule", Header: nats.Header{}, Data: pack(g)}
			out.Header.Set(nats.MsgIdHdr, fmt.Sprintf("route-%s-%d", src.Headers().Get(nats.MsgIdHdr), i))
			f, err := env.JS.PublishMsgAsync(out)
			if err != nil {
				b.Error(err)
				return false
			}
			futs = append(futs, f)
		}
		for _, f := range futs {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				b.Error(err)
				return false
			}
		}
		return true
	}
	type routed struct {
		msg     jetstream.Msg
		matched [][]byte
	}
	gathered := make(chan routed, 64)
	if copyBatch > 0 {
		go func() { // stores what the router's handlers matched, as few copies as it can
			for {
				var held []routed
				var evs [][]byte
				select {
				case r := <-gathered:
					held, evs = append(held, r), append(evs, r.matched...)
				case <-ctx.Done():
					return
				}
			more:
				for len(evs) < copyBatch {
					select {
					case r := <-gathered:
						held, evs = append(held, r), append(evs, r.matched...)
					default:
						break more
					}
				}
				if !storeCopy(held[0].msg, evs) {
					return
				}
				for _, r := range held {
					_ = r.msg.Ack()
				}
			}
		}()
	}
	consume("router", "bus.in", func(msg jetstream.Msg) {
		var matched [][]byte
		for _, ev := range unpack(msg.Data()) {
			var head struct{ Type string }
			if json.Unmarshal(ev, &head) == nil && head.Type == "even" {
				matched = append(matched, ev)
			}
		}
		if len(matched) > 0 && copyBatch > 0 {
			gathered <- routed{msg, matched}
			return
		}
		if len(matched) > 0 && !storeCopy(msg, matched) {
			return
		}
		_ = msg.Ack()
	})
	consume("target", "bus.rule", func(msg jetstream.Msg) {
		var wg sync.WaitGroup
		for _, ev := range unpack(msg.Data()) {
			wg.Go(func() { rec.post(b, ev) })
		}
		wg.Wait()
		_ = msg.Ack()
	})

	evs := modelEvents(b, n)
	var futs []jetstream.PubAckFuture
	publish := func(from, to int) {
		rec.sending(from, to)
		for i := from; i < to; i += per {
			m := &nats.Msg{Subject: "bus.in", Header: nats.Header{}, Data: pack(evs[i:min(i+per, to)])}
			m.Header.Set(nats.MsgIdHdr, fmt.Sprintf("put-%d", i))
			f, err := env.JS.PublishMsgAsync(m)
			require.NoError(b, err)
			futs = append(futs, f)
		}
	}
	cpu0, start := processCPU(), time.Now()
	late := offer(n, paced, publish)
	for _, f := range futs {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			b.Fatal(err)
		}
	}
	return rec.result(b, n, start, cpu0, late)
}

// offer sends events 0..n-1 with send: all at once, or paced in groups of latBatch every latPace (drive), returning
// how late the latest group was.
func offer(n int, paced bool, send func(from, to int)) time.Duration {
	if !paced {
		send(0, n)
		return 0
	}
	return drive(n/latBatch, true, func(g int) { send(g*latBatch, (g+1)*latBatch) })
}

// bareModel posts the matching half of n events directly, 64 in flight, at once or paced, and returns what it
// measured.
func bareModel(b *testing.B, n int, paced bool) modelRun {
	rec := newModelReceiver(b)
	evs := modelEvents(b, n)
	var wg sync.WaitGroup
	gate := make(chan struct{}, 64) // a goroutine per request in flight, as a client with 64 in flight
	post := func(from, to int) {
		rec.sending(from, to)
		for i := from; i < to; i += 2 {
			gate <- struct{}{}
			wg.Go(func() {
				defer func() { <-gate }()
				rec.post(b, evs[i])
			})
		}
	}
	cpu0, start := processCPU(), time.Now()
	late := offer(n, paced, post)
	wg.Wait()
	return rec.result(b, n, start, cpu0, late)
}
