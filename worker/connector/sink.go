package connector

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/egress"
)

// Sink delivers records to an external system. The runtime calls, for each task:
//
//	NewSink → Connect → Write (concurrently, many times) → Close
//
// Close may also follow NewSink directly (a config being validated) or a failed Connect.
type Sink interface {
	// Connect prepares the sink (opens connections, checks credentials). An error fails the task.
	Connect(ctx context.Context) error
	// Write delivers one record and blocks until the external system accepted or refused it. nil means accepted:
	// only then is the record acked. An error wrapped with Permanent is not retried; any other error is retried
	// under the connector's retry policy, after the delay given with RetryAfter if any. Write is called concurrently and must be safe for it; ctx ends when the
	// task is forced to stop. The record's JetStream metadata is in ctx (MetaFrom). The sink must not modify e.
	// A routing sink says how many rules the record matched with ReportMatched(ctx, copies) before returning nil;
	// the task counts it as matched, unmatched and routed copies.
	Write(ctx context.Context, e *event.Event) error
	// Close releases what Connect opened. It is called once, after every Write returned.
	Close() error
}

// Idler is implemented by sinks that hold what an idle task need not keep, such as the http sink's keep-alive
// connections: Idle is called when the task parks (no record for delivery.ParkAfter), never while a Write runs,
// and the next Write opens again what it needs. With thousands of targets, idle connections kept for their own
// timeout (90 s) held a file descriptor on each side, two goroutines and their buffers per target.
type Idler interface {
	Idle()
}

// WriteTimeouter is implemented by sinks whose Write is bounded by a timeout; the runtime gives the records of
// such a sink that long (plus a margin) before JetStream redelivers them. Other sinks get DefaultWriteTimeout.
type WriteTimeouter interface {
	WriteTimeout() time.Duration
}

// SpanNamer is implemented by sinks whose writes are not deliveries to a target: SpanName is the verb of the span
// of each attempt when the worker traces ("route" for the router); other sinks' are "deliver". When tracing is on,
// ctx of Write holds the attempt's span (trace.SpanFromContext): a sink that writes on carries its context (the
// router into its copies' headers, the http sink into the request's traceparent).
type SpanNamer interface {
	SpanName() string
}

// DefaultWriteTimeout is the write timeout assumed of a sink that does not say.
const DefaultWriteTimeout = 30 * time.Second

// Env is what a plugin gets from the runtime.
type Env struct {
	// JetStream is the worker's JetStream context, shared by every task.
	JetStream jetstream.JetStream
	// Names builds the physical names of the installation (cluster).
	Names stream.Names
	// Logger is scoped to the connector and task.
	Logger *slog.Logger
	// Egress is the installation's egress policy (--allow-private-targets, --egress-allow): every connection a
	// plugin opens to a system its config names goes through egress.New(Egress). The zero value lets public
	// addresses only through.
	Egress egress.Config
	// Connector and Task name the task the plugin is built for; Tasks is the number of tasks of the connector.
	Connector string
	Task      int
	Tasks     int
	// Offsets gives a source task the offsets stored for its connector (nil for sinks).
	Offsets OffsetReader
}

// Log returns env's logger, or a logger that discards when there is none.
func (e Env) Log() *slog.Logger {
	if e.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Logger
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as not worth retrying: the record is given up at once (dead-lettered, dropped or failed, as
// the connector's errors.tolerance and errors.deadletterqueue.topic.name say). Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or an error it wraps, was marked with Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// Meta is the JetStream metadata of the record being written.
type Meta struct {
	Stream  string
	Subject string
	// Sequence is the record's stream sequence.
	Sequence uint64
	// Attempt is the number of this attempt to write the record, 1-based: the attempts made before it were recorded
	// when they failed (delivery.Attempts), so redeliveries that were no attempt (after an ack wait, a handover or a
	// crash) do not count. Without such a record it is the delivery count.
	Attempt uint64
	// Timestamp is when the record was stored in the stream.
	Timestamp time.Time
	// Index is the event's place in a record batch (stream.EncodeBatch), 0 for a message of one event.
	Index int
	// MsgID is the record's Nats-Msg-Id header ("" when it has none); for an event of a record batch, the id it has
	// alone (stream.EntryMsgID), so that each event has its own.
	MsgID string
	// Header holds the record's NATS headers (the router reads stream.HeaderReplay and its kin there); for an event
	// of a record batch, stream.EntryHeaders'. Read-only: it may be the message's own map.
	Header nats.Header
	// JSON is, for an event of a record batch, its JSON form as the batch holds it (stream.DecodeEntries: what
	// cloudevent.Marshal writes for the event); nil for a message of one event. Read-only: it is a part of the
	// message.
	JSON []byte
}

// ID returns an id of the record that is stable across redeliveries: its Nats-Msg-Id, else stream:sequence.
func (m Meta) ID() string {
	if m.MsgID != "" {
		return m.MsgID
	}
	return m.Stream + ":" + strconv.FormatUint(m.Sequence, 10)
}

type metaKey struct{}

// WithMeta returns ctx carrying m; the runtime calls it before Write.
func WithMeta(ctx context.Context, m Meta) context.Context {
	return context.WithValue(ctx, metaKey{}, &m) // a pointer, as WithWrite's: MetaFrom reads one kind
}

// MetaFrom returns the record metadata the runtime put in ctx.
func MetaFrom(ctx context.Context) (Meta, bool) {
	if m, ok := ctx.Value(metaKey{}).(*Meta); ok {
		return *m, true
	}
	return Meta{}, false
}

// WithWrite returns ctx carrying m (WithMeta), a Report of its own (WithReport), which it returns, and b unless it
// is nil (WithBatch): what the runtime puts in the ctx of every Write, in one allocation rather than five (three
// context values, m boxed, the Report), made for every event written.
func WithWrite(ctx context.Context, m Meta, b *Batch) (context.Context, *Report) {
	w := &writeContext{Context: ctx, meta: m, batch: b}
	return w, &w.report
}

// writeContext is WithWrite's ctx: it answers the keys of WithMeta, WithReport and WithBatch itself, and asks its
// parent for any other, as the values of context.WithValue do.
type writeContext struct {
	context.Context
	meta   Meta
	report Report
	batch  *Batch
}

func (w *writeContext) Value(key any) any {
	switch key.(type) {
	case metaKey:
		return &w.meta
	case reportKey:
		return &w.report
	case batchKey:
		if w.batch != nil {
			return w.batch
		}
	}
	return w.Context.Value(key)
}

type retryAfterError struct {
	err   error
	delay time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// RetryAfter marks a retryable err with the delay the external system asked for (an HTTP Retry-After): the retry
// middleware waits that long before the next attempt, capped by the connector's maximum delay. RetryAfter(nil, d)
// is nil; a delay ≤ 0 leaves err as it is.
func RetryAfter(err error, d time.Duration) error {
	if err == nil || d <= 0 {
		return err
	}
	return &retryAfterError{err: err, delay: d}
}

// RetryAfterOf returns the delay err, or an error it wraps, was marked with by RetryAfter.
func RetryAfterOf(err error) (time.Duration, bool) {
	var r *retryAfterError
	if errors.As(err, &r) {
		return r.delay, true
	}
	return 0, false
}

type statusError struct {
	err      error
	status   int
	response string
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// WithStatus marks err as the answer of an external system that refused a write: its status (an HTTP status
// code) and the start of its response, which task health shows (delivery.Failure). WithStatus(nil, ...) is nil.
func WithStatus(err error, status int, response string) error {
	if err == nil {
		return nil
	}
	return &statusError{err: err, status: status, response: response}
}

// StatusOf returns the status and response err, or an error it wraps, was marked with by WithStatus.
func StatusOf(err error) (status int, response string, ok bool) {
	var s *statusError
	if errors.As(err, &s) {
		return s.status, s.response, true
	}
	return 0, "", false
}
