// Package eventstore implements the domain's event-store port on NATS JetStream: one stream per bus, events
// stored in the CloudEvents binary mode with de-duplicating message ids, published with asynchronous
// acknowledgements.
package eventstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/tracing"
)

// Store stores events on bus streams.
type Store struct {
	js       jetstream.JetStream
	names    stream.Names
	replicas int
	// AckTimeout bounds the wait for JetStream's acknowledgements of one Put.
	AckTimeout time.Duration
	// DLQ bounds every account's dead-letter stream (zero: stream.DLQRetention and stream.DLQMaxBytes).
	DLQ stream.DLQLimits
	// Log bounds every account's bus-log stream (zero: stream.LogRetention and stream.LogMaxBytes).
	Log stream.LogLimits
	// Tracer, when set, makes a span of every event stored (tracing.Tracer; nil: tracing off, events stored as
	// they came).
	Tracer trace.Tracer
	// Publisher, when set, is the context Put publishes events on: a connection of PutEvents' own, so that its
	// acknowledgements never wait behind the control plane's JetStream requests on the store's connection (nil:
	// the store's context).
	Publisher jetstream.JetStream
}

var _ bus.EventStore = (*Store)(nil)

// New returns a store on the JetStream context js for the installation named cluster; replicas is the number of
// stream replicas (1 on a single server).
func New(js jetstream.JetStream, cluster string, replicas int) *Store {
	return &Store{js: js, names: stream.Names{Cluster: cluster}, replicas: replicas, AckTimeout: 10 * time.Second}
}

// CreateStream creates or updates the bus's stream, and the dead-letter stream of the bus's account (shared by
// the account's buses; idempotent).
func (s *Store) CreateStream(ctx context.Context, b *bus.Bus) error {
	if err := s.EnsureDLQStream(ctx, b.AccountID()); err != nil {
		return storageError(err, "the account's dead letters")
	}
	if b.Log().On() {
		if err := s.EnsureLogStream(ctx, b.AccountID()); err != nil {
			return storageError(err, "the account's bus log")
		}
	}
	return s.EnsureBusLimits(ctx, b)
}

// EnsureBusLimits gives the stream of a bus the limits of its retention (a stream made by an earlier version).
func (s *Store) EnsureBusLimits(ctx context.Context, b *bus.Bus) error {
	r := b.Retention()
	return storageError(s.names.EnsureBusStream(ctx, s.js, b.ID(), r.MaxAge, r.MaxBytes, s.replicas),
		fmt.Sprintf("a retention of %d bytes", r.MaxBytes))
}

// JetStream's errors of a stream whose limits do not fit what the server may store, and of a write refused.
const (
	jsInsufficientResources    jetstream.ErrorCode = 10023
	jsMemoryResourcesExceeded  jetstream.ErrorCode = 10028
	jsStorageResourcesExceeded jetstream.ErrorCode = 10047
	jsStoreFailed              jetstream.ErrorCode = 10077
)

// fullRetryAfter is when an event refused for want of room is worth putting again.
const fullRetryAfter = 5 * time.Second

// putError is the domain error of a write JetStream refused for want of room: bus.ErrBusFull when the bus's own
// maxBytes holds events not delivered yet (its stream discards nothing new), bus.ErrInsufficientStorage when the
// event store as a whole is full; any other error as it is.
func putError(err error) error {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return err
	}
	var e *domain.Error
	switch {
	case apiErr.ErrorCode == jsStoreFailed && strings.Contains(apiErr.Description, "maximum bytes"):
		e = bus.ErrBusFull.With("the bus holds its retention.maxBytes of events that are not delivered yet; " +
			"put the event again once its targets caught up, or raise retention.maxBytes")
	case apiErr.ErrorCode == jsInsufficientResources || apiErr.ErrorCode == jsStorageResourcesExceeded:
		e = bus.ErrInsufficientStorage.With("the event store is full (JetStream: %s); put the event again later", apiErr.Description)
	default:
		return err
	}
	e.RetryAfter = fullRetryAfter
	return e
}

// storageError is bus.ErrInsufficientStorage for a JetStream refusal of a stream that does not fit the store (its
// maximum size is reserved up front), what names the reservation; any other error as it is.
func storageError(err error, what string) error {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case jsInsufficientResources, jsMemoryResourcesExceeded, jsStorageResourcesExceeded:
			return bus.ErrInsufficientStorage.With("the event store has no room for %s (JetStream: %s); "+
				"a smaller retention.maxBytes may fit, or an operator can free or add storage", what, apiErr.Description)
		}
	}
	return err
}

// EnsureDLQStream creates or updates the dead-letter stream of an account. Idempotent.
func (s *Store) EnsureDLQStream(ctx context.Context, accountID string) error {
	return s.names.EnsureDLQStream(ctx, s.js, accountID, s.replicas, s.DLQ)
}

// EnsureLogStream creates or updates the bus-log stream of an account. Idempotent.
func (s *Store) EnsureLogStream(ctx context.Context, accountID string) error {
	return s.names.EnsureLogStream(ctx, s.js, accountID, s.replicas, s.Log)
}

// PurgeAccount deletes the account's dead-letter and bus-log streams (account.Purger), once its buses are gone.
func (s *Store) PurgeAccount(ctx context.Context, accountID string) error {
	if err := s.names.DeleteLogStream(ctx, s.js, accountID); err != nil {
		return err
	}
	return s.names.DeleteDLQStream(ctx, s.js, accountID)
}

// DeleteStream deletes the bus's stream.
func (s *Store) DeleteStream(ctx context.Context, b *bus.Bus) error {
	return s.names.DeleteBusStream(ctx, s.js, b.ID())
}

// PurgeRule removes the events routed to a rule.
func (s *Store) PurgeRule(ctx context.Context, busID, ruleID string) error {
	return s.names.PurgeRule(ctx, s.js, busID, ruleID)
}

// LastSequence returns the last stored sequence of the bus's stream.
func (s *Store) LastSequence(ctx context.Context, busID string) (uint64, error) {
	return s.names.LastSequence(ctx, s.js, busID)
}

// Put checks every event (stream.Check: what it refuses is bus.ErrInvalidEvent or bus.ErrEventTooLarge naming
// the field, never published), stores the others, in order, as few messages as the server's payload allows (record
// batches, stream.EncodeBatches; an event alone is a message of its own), publishes those without waiting between
// them, then waits for every acknowledgement. An event is reported stored only once JetStream acknowledged its
// message, and a message fails or succeeds whole. De-duplication is per message: an event repeated inside the call
// (the same source and id) is stored once and reported with Duplicate, and so is every event of a message stored
// before inside the window (a call retried with the same events in the same order, or its failed entries put
// again), so that a retried PutEvents answers success with the same ids and says that nothing was stored again.
// With a Tracer, each event stored has a span (store) whose context travels with the event to the router (the
// message's headers), and an event without a traceparent extension gets that span's.
func (s *Store) Put(ctx context.Context, b *bus.Bus, events []*event.Event) []bus.PutResult {
	results := make([]bus.PutResult, len(events))
	var spans []trace.Span
	if s.Tracer != nil {
		spans = make([]trace.Span, len(events))
		defer func() {
			for i, span := range spans {
				if span == nil {
					continue
				}
				if err := results[i].Err; err != nil {
					span.SetStatus(codes.Error, err.Error())
				} else if results[i].Duplicate {
					span.SetAttributes(attribute.Bool("eventbridge.duplicate", true))
				}
				span.End()
			}
		}()
	}
	// kept are the indexes of the events to store, each with its PutMsgID (ids) and traceparent (traces, with a
	// Tracer); repeats maps an event repeated inside the call to the first.
	kept := make([]int, 0, len(events))
	ids := make([]string, 0, len(events))
	var traces []string
	var repeats map[int]int
	var first map[string]int // PutMsgID → index, for a call of several events
	if len(events) > 1 {
		first = make(map[string]int, len(events))
	}
	for i, e := range events {
		if err := stream.Check(e, 0); err != nil {
			results[i].Err = refused(err)
			continue
		}
		var span trace.Span
		if s.Tracer != nil {
			span = s.startStore(ctx, b, e)
			spans[i] = span
		}
		id := stream.PutMsgID(cloudevent.Source(e), e.ID())
		if j, ok := first[id]; ok {
			if repeats == nil {
				repeats = map[int]int{}
			}
			repeats[i] = j
			continue
		}
		if first != nil {
			first[id] = i
		}
		kept = append(kept, i)
		ids = append(ids, id)
		if span != nil {
			traces = append(traces, tracing.TraceParentOf(span.SpanContext()))
		}
	}
	s.putKept(ctx, b, events, kept, ids, traces, spans, results)
	for i, j := range repeats {
		results[i] = bus.PutResult{Err: results[j].Err, Duplicate: results[j].Err == nil}
	}
	return results
}

// putKept stores events[kept[k]] (PutMsgID ids[k], traceparent traces[k] when traces is not nil) and sets their
// results.
func (s *Store) putKept(ctx context.Context, b *bus.Bus, events []*event.Event, kept []int, ids, traces []string,
	spans []trace.Span, results []bus.PutResult) {
	if len(kept) == 0 {
		return
	}
	batch := make([]*event.Event, len(kept))
	for k, i := range kept {
		batch[k] = events[i]
	}
	pub := s.js
	if s.Publisher != nil {
		pub = s.Publisher
	}
	parts, err := stream.EncodeBatches(batch, nil, traces, nil, stream.MaxPayload(pub.Conn()))
	if err != nil { // only a mistake of ours: traces not one per event
		for _, i := range kept {
			results[i].Err = fmt.Errorf("encoding: %w", err)
		}
		return
	}
	subject := s.names.BusIn(b.ID())
	futures := make([]jetstream.PubAckFuture, len(parts))
	for p, part := range parts {
		m := part.Msg
		m.Subject = subject
		if part.To-part.From == 1 {
			m.Header.Set(nats.MsgIdHdr, ids[part.From])
			if spans != nil {
				tracing.Inject(trace.ContextWithSpan(ctx, spans[kept[part.From]]), m.Header)
			}
		} else {
			m.Header.Set(nats.MsgIdHdr, stream.BatchMsgID(ids[part.From:part.To]))
		}
		f, err := pub.PublishMsgAsync(m)
		if err != nil {
			for _, i := range kept[part.From:part.To] {
				results[i].Err = fmt.Errorf("publishing: %w", err)
			}
			continue
		}
		futures[p] = f
	}
	timer := time.NewTimer(s.AckTimeout)
	defer timer.Stop()
	for p, f := range futures {
		if f == nil {
			continue
		}
		var r bus.PutResult
		select {
		case ack := <-f.Ok():
			r.Duplicate = ack.Duplicate
		case err := <-f.Err():
			r.Err = putError(err)
		case <-ctx.Done():
			r.Err = ctx.Err()
		case <-timer.C:
			r.Err = errors.New("timed out waiting for the acknowledgement")
			timer.Reset(0) // every later unacknowledged message fails at once
		}
		for _, i := range kept[parts[p].From:parts[p].To] {
			results[i] = r
		}
	}
}

// startStore starts the span of storing e on b. Its parent is the trace e started in (its traceparent extension,
// linked to the request that put it) or else the request's span in ctx; an event without a traceparent gets the
// span's, unless that would take it over the store's limits (stream.Check), e already checked.
func (s *Store) startStore(ctx context.Context, b *bus.Bus, e *event.Event) trace.Span {
	parent := ctx
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(append(tracing.EventAttributes(e),
			attribute.String("messaging.system", "eventbridge"),
			attribute.String("messaging.operation.type", "send"),
			attribute.String("messaging.destination.name", b.Name()),
			attribute.String("eventbridge.account", b.AccountID()))...)}
	if pctx, ok := tracing.FromEvent(ctx, e); ok {
		if rc := trace.SpanContextFromContext(ctx); rc.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: rc}))
		}
		parent = pctx
	}
	_, span := s.Tracer.Start(parent, "store "+b.Name(), opts...)
	if !tracing.HasTraceParent(e) {
		tracing.Mark(e, span.SpanContext())
		if stream.Check(e, 0) != nil {
			tracing.Unmark(e)
		}
	}
	return span
}

// refused is the domain error of an event that stream.Check refused.
func refused(err error) error {
	var ce *stream.CheckError
	if !errors.As(err, &ce) {
		return bus.ErrInvalidEvent.With("%s", err)
	}
	sentinel := bus.ErrInvalidEvent
	if ce.TooLarge {
		sentinel = bus.ErrEventTooLarge
	}
	e := sentinel.With("%s", ce.Error())
	e.Field = ce.Field
	return e
}

// PutWebhookEvent stores the event a webhook request of a source of b became on b's .in subject, as Put stores one
// event (the same checks, id and span), and returns once JetStream acknowledged it; a duplicate inside the window
// is acknowledged too, and reported. Stored once: the router reads it there. Earlier versions stored it on the source's intake
// subject first, from where the source's connector moved it (it still drains what they left).
func (s *Store) PutWebhookEvent(ctx context.Context, b *bus.Bus, e *event.Event) (duplicate bool, err error) {
	r := s.Put(ctx, b, []*event.Event{e})[0]
	return r.Duplicate, r.Err
}

// PurgeSource removes what a source received and its connector did not move to the bus yet.
func (s *Store) PurgeSource(ctx context.Context, busID, sourceID string) error {
	return s.names.PurgeSource(ctx, s.js, busID, sourceID)
}
