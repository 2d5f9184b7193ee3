package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/eventbridge-go/eventbridge/listener/listenertest"
	"github.com/eventbridge-go/eventbridge/tracing"
	"github.com/eventbridge-go/eventbridge/worker"
)

// spansOf returns the spans exp recorded whose name starts with prefix.
func spansOf(exp *tracetest.InMemoryExporter, prefix string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, s)
		}
	}
	return out
}

func attrOf(s tracetest.SpanStub, key string) string {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}

// TestTracingAcrossProcesses: the control plane and a worker joined over NATS, each with a tracer provider of
// its own (as two processes have), trace one event from PutEvents to two delivery attempts. The spans link
// parent to child across them: the API's server span, the store span (a child of the trace the client's
// traceparent extension names, linked to the request), the router's route span (in the worker, from the stored
// message's headers), then two deliver spans (the first answered 500 and is retried), each a child of the route
// span. The target gets the W3C traceparent of its attempt's span, in the client's trace, and the event keeps the
// client's extension. An event put without a traceparent gets the store span's.
func TestTracingAcrossProcesses(t *testing.T) {
	t.Parallel()
	cpSpans, workerSpans := tracetest.NewInMemoryExporter(), tracetest.NewInMemoryExporter()
	cpProvider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(cpSpans))
	workerProvider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(workerSpans))

	natsAddr, workerAddr := listenertest.Addr(t), listenertest.Addr(t)
	tokenFile, token := writeTokenFile(t)
	m := NewMain()
	require.NoError(t, m.ParseFlags([]string{"--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-level", "warn",
		"--nats-listen", natsAddr, "--runtime", "http://" + workerAddr, "--cluster-token-file", tokenFile},
		func(string) string { return "" }))
	m.TracerProvider = cpProvider
	require.NoError(t, m.Run(context.Background()))
	t.Cleanup(func() { _ = m.Close() })
	nc, err := nats.Connect("nats://"+natsAddr, m.NATSCredentials().Option())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	w, err := worker.New(worker.Config{NATS: nc, ClusterID: "eb", WorkerID: "traced", RESTAddr: workerAddr,
		AllowPrivateTargets: true, Token: token, Tracer: tracing.Tracer(workerProvider)})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(func() { _ = w.Close(context.Background()) })

	type request struct{ traceparent, ceTraceparent, id string }
	got := make(chan request, 8)
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got <- request{r.Header.Get("Traceparent"), r.Header.Get("Ce-Traceparent"), r.Header.Get("Ce-Id")}
		if r.Header.Get("Ce-Id") == "traced" && calls.Add(1) == 1 {
			rw.WriteHeader(http.StatusInternalServerError)
			return
		}
		rw.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	a := apiOf(t, m)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "tr", "logConfig": map[string]any{"level": "INFO"}}, 201)
	a.must("POST", "/api/v1/buses/tr/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
	a.must("PUT", "/api/v1/buses/tr/rules/all/targets/t", httpTarget(srv.URL), 201)

	const clientTrace, clientSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	clientTP := "00-" + clientTrace + "-" + clientSpan + "-01"
	ev := event("traced", "shop", "order.created", map[string]any{"n": 1})
	ev["traceparent"] = clientTP
	a.putBatch("tr", []map[string]any{ev})

	var requests []request
	for len(requests) < 2 {
		select {
		case r := <-got:
			requests = append(requests, r)
		case <-time.After(30 * time.Second):
			require.FailNow(t, "the target got fewer than two attempts", "%v", requests)
		}
	}
	require.Eventually(t, func() bool { return len(spansOf(workerSpans, "deliver ")) == 2 }, 10*time.Second, 20*time.Millisecond,
		"both attempts' spans ended")

	servers := spansOf(cpSpans, "POST /api/v1/buses/:bus/events")
	stores := spansOf(cpSpans, "store tr")
	routes := spansOf(workerSpans, "route ")
	delivers := spansOf(workerSpans, "deliver ")
	require.Len(t, servers, 1)
	require.Len(t, stores, 1)
	require.Len(t, routes, 1)
	server, store, route := servers[0], stores[0], routes[0]
	assert.Equal(t, trace.SpanKindServer, server.SpanKind)
	assert.Equal(t, "events.put", attrOf(server, "eventbridge.operation"))

	// The store span continues the client's trace (its extension) and links the request.
	assert.Equal(t, clientTrace, store.SpanContext.TraceID().String())
	assert.Equal(t, clientSpan, store.Parent.SpanID().String(), "the store span is a child of the client's span")
	assert.True(t, store.Parent.IsRemote())
	require.Len(t, store.Links, 1)
	assert.Equal(t, server.SpanContext.SpanID(), store.Links[0].SpanContext.SpanID(), "linked to the PutEvents request")
	assert.Equal(t, trace.SpanKindProducer, store.SpanKind)
	assert.Equal(t, "traced", attrOf(store, "cloudevents.event_id"))

	// Across the process boundary: the route span is the store span's child, the attempts the route span's.
	assert.Equal(t, store.SpanContext.SpanID(), route.Parent.SpanID(), "route is a child of store")
	assert.Equal(t, clientTrace, route.SpanContext.TraceID().String())
	assert.Equal(t, "route eb.default.tr.router", route.Name)
	require.Len(t, delivers, 2)
	byAttempt := map[string]tracetest.SpanStub{}
	for _, d := range delivers {
		assert.Equal(t, route.SpanContext.SpanID(), d.Parent.SpanID(), "each attempt is a child of route")
		assert.Equal(t, clientTrace, d.SpanContext.TraceID().String())
		assert.Equal(t, "deliver eb.default.tr.all.t", d.Name)
		byAttempt[attrOf(d, "eventbridge.attempt")] = d
	}
	first, second := byAttempt["1"], byAttempt["2"]
	assert.Equal(t, "retry", attrOf(first, "eventbridge.outcome"))
	assert.Equal(t, codes.Error, first.Status.Code)
	assert.Contains(t, first.Status.Description, "500")
	assert.Equal(t, "ack", attrOf(second, "eventbridge.outcome"))
	assert.NotEqual(t, codes.Error, second.Status.Code)

	// What the target saw: each attempt's own span as the W3C header, the client's extension untouched.
	assert.Equal(t, "00-"+clientTrace+"-"+first.SpanContext.SpanID().String()+"-01", requests[0].traceparent)
	assert.Equal(t, "00-"+clientTrace+"-"+second.SpanContext.SpanID().String()+"-01", requests[1].traceparent)
	assert.Equal(t, clientTP, requests[0].ceTraceparent)
	assert.Equal(t, clientTP, requests[1].ceTraceparent)

	// The bus log names the trace of each step, to find it in the tracing backend.
	require.Eventually(t, func() bool {
		var page struct {
			Records []struct {
				Type    string `json:"type"`
				EventID string `json:"eventId"`
				TraceID string `json:"traceId"`
			} `json:"records"`
		}
		require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/buses/tr/log?eventId=traced", nil, 200), &page))
		types := map[string]bool{}
		for _, r := range page.Records {
			if r.TraceID == clientTrace {
				types[r.Type] = true
			}
		}
		return types["RULE_MATCH"] && types["INVOCATION_ATTEMPT_RETRYABLE_FAILURE"] && types["INVOCATION_ATTEMPT_SUCCESS"]
	}, 10*time.Second, 50*time.Millisecond, "RULE_MATCH and both attempts carry the client's trace id")

	// An event without a traceparent: its trace starts at the request, and it gets the store span's.
	a.putBatch("tr", []map[string]any{event("plain", "shop", "order.created", map[string]any{"n": 2})})
	var plain request
	select {
	case plain = <-got:
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the second event did not arrive")
	}
	require.Equal(t, "plain", plain.id)
	var plainStore tracetest.SpanStub
	for _, s := range spansOf(cpSpans, "store tr") {
		if attrOf(s, "cloudevents.event_id") == "plain" {
			plainStore = s
		}
	}
	require.True(t, plainStore.SpanContext.IsValid())
	assert.Equal(t, "00-"+plainStore.SpanContext.TraceID().String()+"-"+plainStore.SpanContext.SpanID().String()+"-01",
		plain.ceTraceparent, "the event got the store span's traceparent")
	assert.True(t, strings.HasPrefix(plain.traceparent, "00-"+plainStore.SpanContext.TraceID().String()+"-"))
	assert.Empty(t, plainStore.Links, "its parent is the request's span itself")
	assert.Equal(t, plainStore.Parent.TraceID(), plainStore.SpanContext.TraceID())

	// A call of two events is stored as one record batch: each event's route span is the child of its own store
	// span, in its own trace, and the target sees that trace.
	const batchTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	withTP := event("batch-a", "shop", "order.created", map[string]any{"n": 3})
	withTP["traceparent"] = "00-" + batchTrace + "-" + clientSpan + "-01"
	a.putBatch("tr", []map[string]any{withTP, event("batch-b", "shop", "order.created", map[string]any{"n": 4})})
	seen := map[string]request{}
	for len(seen) < 2 {
		select {
		case r := <-got:
			seen[r.id] = r
		case <-time.After(30 * time.Second):
			require.FailNow(t, "the events of the batch did not arrive", "%v", seen)
		}
	}
	byEvent := func(spans []tracetest.SpanStub, id string) tracetest.SpanStub {
		for _, s := range spans {
			if attrOf(s, "cloudevents.event_id") == id {
				return s
			}
		}
		return tracetest.SpanStub{}
	}
	require.Eventually(t, func() bool {
		return byEvent(spansOf(workerSpans, "route "), "batch-a").SpanContext.IsValid() &&
			byEvent(spansOf(workerSpans, "route "), "batch-b").SpanContext.IsValid()
	}, 10*time.Second, 20*time.Millisecond, "both events' route spans ended")
	traces := map[string]string{}
	for _, id := range []string{"batch-a", "batch-b"} {
		st, rt := byEvent(spansOf(cpSpans, "store tr"), id), byEvent(spansOf(workerSpans, "route "), id)
		require.True(t, st.SpanContext.IsValid(), id)
		assert.Equal(t, st.SpanContext.SpanID(), rt.Parent.SpanID(), "%s: route is a child of its own store span", id)
		assert.Equal(t, st.SpanContext.TraceID(), rt.SpanContext.TraceID(), id)
		assert.True(t, strings.HasPrefix(seen[id].traceparent, "00-"+st.SpanContext.TraceID().String()+"-"), id)
		traces[id] = st.SpanContext.TraceID().String()
	}
	assert.Equal(t, batchTrace, traces["batch-a"], "the client's trace")
	assert.NotEqual(t, traces["batch-a"], traces["batch-b"])
}

// otlpReceiver is an OTLP/HTTP traces endpoint: it decodes every protobuf request it gets.
type otlpReceiver struct {
	mu   sync.Mutex
	reqs []*collectortrace.ExportTraceServiceRequest
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "unexpected "+r.URL.Path+" "+r.Header.Get("Content-Type"), http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := new(collectortrace.ExportTraceServiceRequest)
	if err := proto.Unmarshal(body, req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	o.reqs = append(o.reqs, req)
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// spans returns the names of the spans received per service.name.
func (o *otlpReceiver) spans() map[string][]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string][]string{}
	for _, req := range o.reqs {
		for _, rs := range req.GetResourceSpans() {
			service := ""
			for _, a := range rs.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					out[service] = append(out[service], s.GetName())
				}
			}
		}
	}
	return out
}

// TestTracingExportsByOTLP: with OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME set, the binary exports its
// spans (the API's, the store's and the embedded worker's) to an OTLP/HTTP receiver, protobuf encoded; Close
// flushes what is buffered. Without the variables the same binary traces nothing (TestClientTraceContextReachesTheTarget
// and every other test run so).
func TestTracingExportsByOTLP(t *testing.T) {
	t.Parallel()
	recv := new(otlpReceiver)
	collector := httptest.NewServer(recv)
	t.Cleanup(collector.Close)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_SERVICE_NAME": "router-under-test"}
	m := NewMain()
	require.NoError(t, m.ParseFlags([]string{"--http-addr", "127.0.0.1:0", "--worker-addr", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--allow-private-targets", "--log-level", "warn"}, func(k string) string { return env[k] }))
	require.True(t, m.Config.Tracing.Enabled)
	require.NoError(t, m.Run(context.Background()))
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = m.Close()
		}
	})
	r := newReceiver(t)
	a := apiOf(t, m)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "ot"}, 201)
	a.must("POST", "/api/v1/buses/ot/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
	a.must("PUT", "/api/v1/buses/ot/rules/all/targets/t", httpTarget(r.srv.URL), 201)
	a.putBatch("ot", []map[string]any{event("exported", "shop", "order.created", map[string]any{"n": 1})})
	r.waitFor(t, map[string]bool{"exported": true})
	// Close stops the worker's tasks (the deliver span ends as the target answered), then flushes the exporter.
	closed = true
	require.NoError(t, m.Close())

	names := recv.spans()["router-under-test"]
	joined := strings.Join(names, "\n")
	for _, want := range []string{"POST /api/v1/buses/:bus/events", "store ot", "route eb.default.ot.router",
		"deliver eb.default.ot.all.t"} {
		assert.Contains(t, joined, want, "the receiver got the %q span", want)
	}
}

// TestTracingWebhookSource: an event that arrives through a webhook continues the trace of the request (its W3C
// traceparent header): the webhook's server span, then the store span of the event stored once on the bus (as
// PutEvents stores it; its context is the traceparent extension the event gets, which the target receives), the
// route span and the deliver span.
func TestTracingWebhookSource(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewInMemoryExporter()
	m := NewMain()
	require.NoError(t, m.ParseFlags([]string{"--http-addr", "127.0.0.1:0", "--worker-addr", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--allow-private-targets", "--log-level", "warn"}, func(string) string { return "" }))
	m.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	require.NoError(t, m.Run(context.Background()))
	t.Cleanup(func() { _ = m.Close() })
	got := make(chan http.Header, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got <- r.Header.Clone()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	a := apiOf(t, m)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "wh"}, 201)
	a.must("POST", "/api/v1/buses/wh/rules", map[string]any{"name": "hooks",
		"eventPattern": map[string]any{"source": []any{"eventbridge:webhook:gh"}}}, 201)
	a.must("PUT", "/api/v1/buses/wh/rules/hooks/targets/t", httpTarget(srv.URL), 201)
	created := decodeSource(t, a.must("POST", "/api/v1/buses/wh/sources", map[string]any{"name": "gh", "type": "http"}, 201))
	require.NotNil(t, created.Webhook)

	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	status, out := hook(t, "POST", created.Webhook.URLs[0], map[string]string{"Content-Type": "application/json",
		"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01"}, []byte(`{"push": 1}`))
	require.Equal(t, http.StatusOK, status, string(out))
	var h http.Header
	select {
	case h = <-got:
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the target got nothing")
	}
	require.Eventually(t, func() bool { return len(spansOf(spans, "deliver ")) == 1 }, 10*time.Second, 20*time.Millisecond)

	servers := spansOf(spans, "POST /webhook/putEvents")
	stores := spansOf(spans, "store wh")
	routes := spansOf(spans, "route eb.default.wh.router")
	require.Len(t, servers, 1)
	require.Len(t, stores, 1)
	require.Len(t, routes, 1)
	deliver := spansOf(spans, "deliver ")[0]
	assert.Equal(t, clientSpan, servers[0].Parent.SpanID().String(), "the webhook's span is a child of the caller's")
	assert.Equal(t, servers[0].SpanContext.SpanID(), stores[0].Parent.SpanID(), "the store span a child of the webhook's")
	assert.Empty(t, spansOf(spans, "store eb.default.wh.source.gh"), "stored once: the source's connector moves nothing")
	assert.Equal(t, stores[0].SpanContext.SpanID(), routes[0].Parent.SpanID())
	assert.Equal(t, routes[0].SpanContext.SpanID(), deliver.Parent.SpanID())
	for _, s := range []tracetest.SpanStub{servers[0], stores[0], routes[0], deliver} {
		assert.Equal(t, clientTrace, s.SpanContext.TraceID().String(), "%s is in the caller's trace", s.Name)
	}
	assert.Equal(t, "00-"+clientTrace+"-"+stores[0].SpanContext.SpanID().String()+"-01", h.Get("Ce-Traceparent"),
		"the event carries its store span as its traceparent, as an event put with PutEvents does")
	assert.Equal(t, "00-"+clientTrace+"-"+deliver.SpanContext.SpanID().String()+"-01", h.Get("Traceparent"))
}
