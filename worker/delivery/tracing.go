package delivery

import (
	"context"

	"github.com/cloudevents/sdk-go/v2/event"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/eventbridge-go/eventbridge/tracing"
	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// startSpan starts the span of one attempt of a record (TaskConfig.SpanName): a child of the hop's trace context
// in the message's headers (the store's span for the router, the router's for a target), else of the trace the
// event started in (its traceparent extension: a record stored by a process that did not trace), else a root. The
// sink finds it in ctx: the router writes it into its copies' headers, the http sink into the request's.
func (t *Task) startSpan(ctx context.Context, meta connector.Meta, e *event.Event) (context.Context, trace.Span) {
	parent, ok := tracing.Extract(ctx, meta.Header)
	if !ok {
		parent, _ = tracing.FromEvent(ctx, e)
	}
	return t.cfg.Tracer.Start(parent, t.cfg.SpanName, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(append(tracing.EventAttributes(e),
			attribute.String("messaging.system", "eventbridge"),
			attribute.String("messaging.operation.type", "process"),
			attribute.String("messaging.destination.name", meta.Subject),
			attribute.Int64("eventbridge.sequence", int64(meta.Sequence)),
			attribute.Int64("eventbridge.attempt", int64(meta.Attempt)))...))
}

// traceIDOf is the trace id of span in hex, "" without one (the task does not trace).
func traceIDOf(span trace.Span) string {
	if span == nil {
		return ""
	}
	if sc := span.SpanContext(); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}

// endSpan ends an attempt's span with its outcome (ack, retry, dead-lettered, ...) and, for a failed attempt, the
// failure as task health shows it (redacted of the config's secrets).
func endSpan(span trace.Span, o Outcome, f Failure) {
	span.SetAttributes(attribute.String("eventbridge.outcome", o.Action.String()))
	if f.Status != 0 {
		span.SetAttributes(attribute.Int("eventbridge.target.status", f.Status))
	}
	if f.Message != "" {
		span.SetStatus(codes.Error, f.Message)
	}
	span.End()
}

// storeSpans starts, when the source task traces, the span of storing each record on the bus (a producer span,
// a child of the trace the event started in, else a root), gives an event without a traceparent the span's when
// the store's invariant still holds, and writes the span's context into the message's headers for the router. It
// returns the spans to end once the records were stored, nil when the task does not trace.
func (t *SourceTask) storeSpans(events []*event.Event, mark func(*event.Event) bool) []trace.Span {
	if t.cfg.Tracer == nil {
		return nil
	}
	spans := make([]trace.Span, len(events))
	for i, e := range events {
		parent, _ := tracing.FromEvent(context.Background(), e)
		_, spans[i] = t.cfg.Tracer.Start(parent, "store "+t.cfg.Connector, trace.WithSpanKind(trace.SpanKindProducer),
			trace.WithAttributes(append(tracing.EventAttributes(e),
				attribute.String("messaging.system", "eventbridge"),
				attribute.String("messaging.operation.type", "send"),
				attribute.String("messaging.destination.name", t.cfg.Subject))...))
		if !tracing.HasTraceParent(e) {
			tracing.Mark(e, spans[i].SpanContext())
			if !mark(e) {
				tracing.Unmark(e)
			}
		}
	}
	return spans
}

// endSpans ends the spans of storeSpans, with err when the records could not be stored.
func endSpans(spans []trace.Span, err error) {
	for _, s := range spans {
		if err != nil {
			s.SetStatus(codes.Error, err.Error())
		}
		s.End()
	}
}
