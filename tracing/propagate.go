package tracing

import (
	"context"

	"github.com/cloudevents/sdk-go/v2/event"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The W3C Trace Context fields, as NATS headers and as the CloudEvents extensions of the same names.
const (
	TraceParent = "traceparent"
	TraceState  = "tracestate"
)

var w3c = propagation.TraceContext{}

// Header carries the trace context of one hop in a NATS message's headers (nats.Header), under the lower-case
// keys traceparent and tracestate: NATS headers are case-sensitive, so http.Header's canonical keys would not
// be found by another client. These headers are the hop's, never the event's: the event's own extensions travel
// as ce-traceparent and ce-tracestate.
type Header map[string][]string

// Get returns the first value of key.
func (h Header) Get(key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set replaces the values of key.
func (h Header) Set(key, value string) { h[key] = []string{value} }

// Keys lists the keys.
func (h Header) Keys() []string {
	out := make([]string, 0, len(h))
	for k := range h {
		out = append(out, k)
	}
	return out
}

// Inject writes the span context of ctx into h (a message's headers) when ctx holds a valid one; else nothing.
func Inject(ctx context.Context, h map[string][]string) {
	if h == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	w3c.Inject(ctx, Header(h))
}

// Extract returns ctx with the remote span context h carries, and whether it carried a valid one.
func Extract(ctx context.Context, h map[string][]string) (context.Context, bool) {
	if len(h[TraceParent]) == 0 {
		return ctx, false
	}
	out := w3c.Extract(ctx, Header(h))
	return out, trace.SpanContextFromContext(out).IsValid()
}

// eventCarrier reads an event's traceparent and tracestate extensions.
type eventCarrier struct{ e *event.Event }

func (c eventCarrier) Get(key string) string {
	if v, ok := c.e.Extensions()[key].(string); ok {
		return v
	}
	return ""
}
func (c eventCarrier) Set(string, string) {}
func (c eventCarrier) Keys() []string     { return []string{TraceParent, TraceState} }

// FromEvent returns ctx with the remote span context of e's traceparent extension (the CloudEvents
// distributed-tracing extension: the trace the event started in), and whether e has a valid one.
func FromEvent(ctx context.Context, e *event.Event) (context.Context, bool) {
	if _, ok := e.Extensions()[TraceParent]; !ok {
		return ctx, false
	}
	out := w3c.Extract(ctx, eventCarrier{e})
	return out, trace.SpanContextFromContext(out).IsValid()
}

// HasTraceParent reports whether e carries a traceparent extension, valid or not: an event that has one keeps it
// as it is.
func HasTraceParent(e *event.Event) bool {
	_, ok := e.Extensions()[TraceParent]
	return ok
}

// Mark gives e the traceparent (and tracestate) extensions of sc, the span its trace starts from here; e must
// have none (HasTraceParent). Only a process that traces calls it.
func Mark(e *event.Event, sc trace.SpanContext) {
	if !sc.IsValid() {
		return
	}
	h := w3cHeader(sc)
	e.SetExtension(TraceParent, h.Get(TraceParent))
	if ts := h.Get(TraceState); ts != "" {
		e.SetExtension(TraceState, ts)
	}
}

// TraceParentOf is the W3C traceparent of sc ("" when sc is not valid).
func TraceParentOf(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	return w3cHeader(sc).Get(TraceParent)
}

// w3cHeader holds the W3C trace context headers of sc.
func w3cHeader(sc trace.SpanContext) Header {
	h := Header{}
	w3c.Inject(trace.ContextWithSpanContext(context.Background(), sc), h)
	return h
}

// Unmark removes what Mark added.
func Unmark(e *event.Event) {
	e.SetExtension(TraceParent, nil)
	e.SetExtension(TraceState, nil)
}

// EventAttributes are the attributes of a span about one event: the OpenTelemetry semantic conventions'
// cloudevents.* attributes.
func EventAttributes(e *event.Event) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("cloudevents.event_id", e.ID()),
		attribute.String("cloudevents.event_source", e.Source()),
		attribute.String("cloudevents.event_type", e.Type()),
		attribute.String("cloudevents.event_spec_version", e.SpecVersion()),
	}
	if s := e.Subject(); s != "" {
		attrs = append(attrs, attribute.String("cloudevents.event_subject", s))
	}
	return attrs
}
