package delivery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/tracing"
	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// Back-off of a source task between failed reads and failed stores: from SourceBackoffInitial, doubling, to
// SourceBackoffMax.
const (
	SourceBackoffInitial = 100 * time.Millisecond
	SourceBackoffMax     = 5 * time.Second
	// SourcePublishTimeout bounds the wait for JetStream to store one batch of records.
	SourcePublishTimeout = 10 * time.Second
)

// SourceTaskConfig configures one source task.
type SourceTaskConfig struct {
	// Source is connected by StartSource and closed by Stop.
	Source     connector.Source
	Transforms []connector.NamedTransform
	// JetStream stores the records on Subject, expecting Stream to hold it.
	JetStream jetstream.JetStream
	Subject   string
	Stream    string
	// Tolerance is connector.ToleranceNone (a record a transform or the store's invariant refuses fails the task)
	// or ToleranceAll (it is dead-lettered on DLQSubject, or dropped when there is none).
	Tolerance string
	// DLQSubject is where refused records go under ToleranceAll (the account's dead letters), each with its reason;
	// Connector names the connector in them.
	DLQSubject string
	Connector  string
	// Offsets, when set, stores the offset of each record's partition once the record is stored.
	Offsets *Offsets
	Logger  *slog.Logger
	// Used, when set, is called with Subject once records were stored on it (Kafka Connect's active topics); it
	// must be cheap and must not block.
	Used func(subject string)
	// Failed, when set, is called (without blocking) when the task fails.
	Failed func()
	// Redact, when set, removes the secret values of the connector's config from what Health shows of a failure.
	Redact func(string) string
	// Tracer, when set, makes a span of storing every record (storeSpans); nil traces nothing.
	Tracer trace.Tracer
}

// SourceTask reads a source and stores its records on a bus: each batch of Read is transformed, stored (every
// record acknowledged by JetStream, under a Nats-Msg-Id made of its source and id or the record's own MsgID, so a
// record read twice is stored once within the duplicate window), then its offsets are stored, then the source is
// told to Commit. A record without an event moves its partition's offset only. It is RUNNING from StartSource
// until it fails (FAILED) or is stopped.
type SourceTask struct {
	cfg SourceTaskConfig
	log *slog.Logger

	readCtx    context.Context // ends when the task stops: Read returns
	stopRead   context.CancelFunc
	writeCtx   context.Context // ends when Stop's ctx ends: the batch being stored is abandoned
	stopWrites context.CancelFunc
	done       chan struct{}
	closeOnce  sync.Once
	closeErr   error

	mu      sync.Mutex
	state   string
	trace   string
	lastErr string // the last read or store error while RUNNING, cleared by a success

	read, written, retried, dropped, failed, filtered, transformFailed, deadLettered atomic.Uint64
	duplicates                                                                       atomic.Uint64
	hl                                                                               health
}

// StartSource connects the source and starts the task.
func StartSource(ctx context.Context, cfg SourceTaskConfig) (*SourceTask, error) {
	if cfg.JetStream == nil || cfg.Subject == "" || cfg.Stream == "" {
		return nil, errors.New("source task: JetStream, Subject and Stream are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Source.Connect(ctx); err != nil {
		_ = cfg.Source.Close()
		return nil, fmt.Errorf("connecting the source: %w", err)
	}
	t := &SourceTask{cfg: cfg, log: log, done: make(chan struct{}), state: rpc.StateRunning, hl: health{redact: cfg.Redact}}
	t.readCtx, t.stopRead = context.WithCancel(context.Background())
	t.writeCtx, t.stopWrites = context.WithCancel(context.Background())
	go t.run()
	return t, nil
}

// State returns RUNNING or FAILED with the error that failed the task as trace. While RUNNING, the trace is the
// last read or store error, if the source is failing and retrying.
func (t *SourceTask) State() (state, trace string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.state == rpc.StateRunning {
		return t.state, t.lastErr
	}
	return t.state, t.trace
}

// Counters returns what the task did so far: Read records read (those with an event), Written records stored (a
// record a transform made into several counts once per stored record), Retried failed reads and stores, Filtered
// and Dropped records not stored. Duplicates has the rest.
func (t *SourceTask) Counters() Counters {
	return Counters{Read: t.read.Load(), Written: t.written.Load(), Retried: t.retried.Load(), Dropped: t.dropped.Load(),
		Failed: t.failed.Load(), Filtered: t.filtered.Load(), TransformFailed: t.transformFailed.Load(),
		DeadLettered: t.deadLettered.Load(), Duplicates: t.duplicates.Load()}
}

// Duplicates counts, among the records Written, those JetStream had already stored under the same Nats-Msg-Id
// within its duplicate window (the PubAck said Duplicate), so were not stored again: records read twice (after a
// restart or failover of the task, or a source that repeats itself). A record retried after a store that failed
// only in part is published again only where it was not acknowledged, so the task's own retries add little to it.
// Safe to call at any time.
func (t *SourceTask) Duplicates() uint64 { return t.duplicates.Load() }

// Stop stops reading and lets the batch being stored finish; when ctx ends first, that batch is abandoned
// uncommitted (read again by the next task). Then the source is closed; its Close error is returned.
// Abort stops the task at once, without waiting: it stops reading and cancels the writes in flight (see
// Task.Abort); Stop, afterwards, waits for the task to end and closes the source.
func (t *SourceTask) Abort() {
	t.stopRead()
	t.stopWrites()
}

func (t *SourceTask) Stop(ctx context.Context) error {
	t.stopRead()
	select {
	case <-t.done:
	case <-ctx.Done():
		t.stopWrites()
		<-t.done
	}
	t.stopWrites()
	t.closeOnce.Do(func() { t.closeErr = t.cfg.Source.Close() })
	return t.closeErr
}

func (t *SourceTask) fail(err error) {
	t.mu.Lock()
	t.state, t.trace = rpc.StateFailed, err.Error()
	t.mu.Unlock()
	t.log.Error("task failed", "err", err)
	if t.cfg.Failed != nil {
		t.cfg.Failed()
	}
}

// RoutedTo is nil: a source routes nothing.
func (t *SourceTask) RoutedTo() map[string]uint64 { return nil }

// Asleep reports that a source task never parks.
func (t *SourceTask) Asleep() (parks uint64, asleep bool) { return 0, false }

// Health returns what the task knows of how its reads and writes go: a failed read or store is a failed attempt
// (retried), a batch read and stored a success.
func (t *SourceTask) Health() Health { return t.hl.get() }

func (t *SourceTask) setLastErr(err error) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if err == nil {
		t.lastErr = ""
		if recovered, after := t.hl.success(now); recovered {
			t.log.Info("reading and storing records succeeds again", "failed_attempts", after)
		}
	} else {
		t.lastErr = now.UTC().Format(time.RFC3339) + ": " + err.Error()
		if first, f := t.hl.failure(now, 0, err, true, false); first {
			t.log.Info("reading or storing records failed; the task's health shows the failure until it succeeds",
				"class", f.Class, "err", f.Message)
		}
	}
}

// wait sleeps d unless the task stops first; it reports whether the task goes on.
func (t *SourceTask) wait(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func nextBackoff(d time.Duration) time.Duration { return min(d*2, SourceBackoffMax) }

func (t *SourceTask) run() {
	defer close(t.done)
	backoff := SourceBackoffInitial
	for t.readCtx.Err() == nil {
		records, err := t.cfg.Source.Read(t.readCtx)
		if err != nil {
			if t.readCtx.Err() != nil {
				return
			}
			if connector.IsPermanent(err) {
				t.fail(fmt.Errorf("reading the source: %w", err))
				return
			}
			t.retried.Add(1)
			t.setLastErr(fmt.Errorf("reading the source: %w", err))
			t.log.Warn("reading the source", "err", err, "retry_in", backoff)
			if !t.wait(t.readCtx, backoff) {
				return
			}
			backoff = nextBackoff(backoff)
			continue
		}
		backoff = SourceBackoffInitial
		if len(records) == 0 {
			continue
		}
		for _, r := range records {
			if r.Event != nil { // the others only move an offset
				t.read.Add(1)
			}
		}
		if !t.handle(records) {
			return
		}
		t.setLastErr(nil)
	}
}

// handle stores a batch, then its offsets, then commits it; false when the task stops or fails before. Records
// without an event are not stored; their offsets are, in their turn.
func (t *SourceTask) handle(records []connector.SourceRecord) bool {
	var refused []*nats.Msg
	var events []*event.Event
	var from []made // of each event
	for _, r := range records {
		if r.Event == nil {
			continue
		}
		out, err := t.transform(r.Event)
		if err != nil {
			if IsTransformError(err) {
				t.transformFailed.Add(1)
			}
			if t.cfg.Tolerance == connector.ToleranceAll && t.cfg.DLQSubject != "" {
				refused = append(refused, t.deadLetter(r, err))
				t.log.Warn("record dead-lettered: it may not be stored", "id", r.Event.ID(), "source", r.Event.Source(), "err", err)
				continue
			}
			if t.cfg.Tolerance == connector.ToleranceAll {
				t.dropped.Add(1)
				t.log.Warn("record dropped: it may not be stored", "id", r.Event.ID(), "source", r.Event.Source(), "err", err)
				continue
			}
			t.failed.Add(1)
			t.fail(fmt.Errorf("record %s from %s: %w", r.Event.ID(), r.Event.Source(), err))
			return false
		}
		if len(out) == 0 {
			t.filtered.Add(1)
		}
		for _, e := range out {
			events = append(events, e)
			from = append(from, made{record: r, of: len(out)})
		}
	}
	spans := t.storeSpans(events, func(e *event.Event) bool { return stream.Check(e, 0) == nil })
	out := &outbox{msgs: make([]*nats.Msg, 0, len(events))}
	for i, e := range events {
		m := stream.Encode(e)
		m.Subject = t.cfg.Subject
		addHeaders(m.Header, from[i].record.Header)
		m.Header.Set(nats.MsgIdHdr, from[i].msgID(e))
		if spans != nil {
			tracing.Inject(trace.ContextWithSpan(context.Background(), spans[i]), m.Header)
		}
		out.msgs = append(out.msgs, m)
	}
	stored := t.retrying(func() error { return t.store(out, t.cfg.Stream) })
	if spans != nil {
		var err error
		if !stored {
			err = errors.New("not stored: the task stopped or failed first")
		}
		endSpans(spans, err)
	}
	if !stored {
		return false
	}
	t.written.Add(uint64(len(out.msgs)))
	t.duplicates.Add(out.duplicates)
	if len(out.msgs) > 0 && t.cfg.Used != nil {
		t.cfg.Used(t.cfg.Subject)
	}
	// The dead letters are stored before the offsets, as the records are: a record read again after a crash is
	// dead-lettered again under the same message id, so stored once.
	if !t.retrying(func() error { return t.store(&outbox{msgs: refused}, "") }) {
		return false
	}
	t.deadLettered.Add(uint64(len(refused)))
	if len(refused) > 0 {
		t.hl.deadLettered(time.Now())
	}
	if t.cfg.Offsets != nil {
		if !t.retrying(func() error { return t.storeOffsets(records) }) {
			return false
		}
	}
	if err := t.cfg.Source.Commit(t.writeCtx, records); err != nil {
		t.log.Warn("committing records to the source", "err", err)
	}
	return true
}

// made says which record an event to store was made from, and how many events its transforms made of it.
type made struct {
	record connector.SourceRecord
	of     int
}

// msgID is the Nats-Msg-Id of e: stream.PutMsgID of its source and id, or the record's MsgID when it has one
// (hashed with PutMsgID of e when the record made several events, which then have distinct ids).
func (m made) msgID(e *event.Event) string {
	switch {
	case m.record.MsgID == "":
		return stream.PutMsgID(cloudevent.Source(e), e.ID())
	case m.of == 1:
		return m.record.MsgID
	}
	return stream.HopMsgID(m.record.MsgID, stream.PutMsgID(cloudevent.Source(e), e.ID()))
}

// addHeaders adds a record's extra headers (connector.SourceRecord.Header) to the message h, leaving out the names
// of the event's encoding (ce-*, content-type, stream.HeaderTypes, stream.HeaderDataEncoding), NATS's own (Nats-*)
// and names or values a NATS header cannot carry.
func addHeaders(h nats.Header, extra map[string]string) {
	for k, v := range extra {
		lk := strings.ToLower(k)
		switch {
		case k == "", strings.ContainsAny(k, ": \t\r\n"), strings.ContainsAny(v, "\r\n"),
			strings.HasPrefix(lk, "ce-"), strings.HasPrefix(lk, "nats-"), lk == "content-type",
			lk == strings.ToLower(stream.HeaderTypes), lk == strings.ToLower(stream.HeaderDataEncoding):
			continue
		}
		h.Set(k, v)
	}
}

// retrying runs f until it succeeds, backing off between failures; false when the task stops or fails first. An
// offset conflict (another task owns the connector now) fails the task.
func (t *SourceTask) retrying(f func() error) bool {
	backoff := SourceBackoffInitial
	for {
		err := f()
		if err == nil {
			return true
		}
		if t.writeCtx.Err() != nil {
			return false
		}
		if errors.Is(err, ErrOffsetConflict) {
			t.fail(err)
			return false
		}
		t.retried.Add(1)
		t.setLastErr(err)
		t.log.Warn("storing records", "err", err, "retry_in", backoff)
		// A stopping task gives up its batch (read again later) rather than wait for a store that fails.
		if !t.wait(t.readCtx, backoff) {
			return false
		}
		backoff = nextBackoff(backoff)
	}
}

func (t *SourceTask) transform(e *event.Event) ([]*event.Event, error) {
	records := []*event.Event{e}
	for _, tr := range t.cfg.Transforms {
		var out []*event.Event
		for _, r := range records {
			made, err := tr.Apply(t.writeCtx, r)
			if err != nil {
				return nil, &TransformError{Transform: tr.Name, Err: err}
			}
			out = append(out, made...)
		}
		records = out
	}
	for _, r := range records {
		if err := stream.Check(r, 0); err != nil { // the store's invariant, as PutEvents applies it
			return nil, fmt.Errorf("the record may not be stored: %w", err)
		}
	}
	return records, nil
}

// outbox is a batch of messages being stored, over the attempts of store.
type outbox struct {
	msgs []*nats.Msg
	// acked[i] once JetStream acknowledged msgs[i]; nil until store first ran.
	acked []bool
	// duplicates counts the acknowledgements that said JetStream had the message already (PubAck.Duplicate).
	duplicates uint64
}

// store publishes every message of out not yet acknowledged and waits until JetStream stored each one, in
// expectStream when it is not "". It notes each acknowledgement in out, so a call after a failure publishes the
// rest only.
func (t *SourceTask) store(out *outbox, expectStream string) error {
	msgs := out.msgs
	if len(msgs) == 0 {
		return nil
	}
	if out.acked == nil {
		out.acked = make([]bool, len(msgs))
	}
	ctx, cancel := context.WithTimeout(t.writeCtx, SourcePublishTimeout)
	defer cancel()
	type pending struct {
		i int
		f jetstream.PubAckFuture
	}
	futures := make([]pending, 0, len(msgs))
	var opts []jetstream.PublishOpt
	if expectStream != "" {
		opts = append(opts, jetstream.WithExpectStream(expectStream))
	}
	for i, m := range msgs {
		if out.acked[i] {
			continue
		}
		f, err := t.cfg.JetStream.PublishMsgAsync(m, opts...)
		if err != nil {
			return fmt.Errorf("storing record %s on %s: %w", m.Header.Get("ce-id"), m.Subject, err)
		}
		futures = append(futures, pending{i: i, f: f})
	}
	var errs []error
	for _, p := range futures {
		select {
		case ack := <-p.f.Ok():
			out.acked[p.i] = true
			if ack != nil && ack.Duplicate {
				out.duplicates++
			}
		case err := <-p.f.Err():
			if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) {
				err = fmt.Errorf("no stream stores %s (yet): %w", msgs[p.i].Subject, err)
			}
			errs = append(errs, fmt.Errorf("record %s: %w", msgs[p.i].Header.Get("ce-id"), err))
		case <-ctx.Done():
			return fmt.Errorf("waiting for records to be stored on %s: %w", msgs[0].Subject, ctx.Err())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("storing records on %s: %w", msgs[0].Subject, errors.Join(errs...))
	}
	return nil
}

// deadLetter is the dead letter of a record r that may not be stored (err says why): the record as it was read
// when the store's invariant allows it in the dead-letter stream, else a stand-in carrying it in the JSON format as
// its data (attributes too large or with characters a header cannot carry), under the record's id, source and type
// where those are fit to keep. Its message id derives from the record's MsgID, else from its source and id.
func (t *SourceTask) deadLetter(r connector.SourceRecord, err error) *nats.Msg {
	e := r.Event
	class := stream.DLQClassPermanent
	if IsTransformError(err) {
		class = stream.DLQClassTransform
	}
	d := stream.DeadLetter{Reason: err.Error(), Attempts: 1, Connector: t.cfg.Connector, ErrorClass: class,
		Subject: t.cfg.Subject, MsgID: cmp.Or(r.MsgID, stream.PutMsgID(cloudevent.Source(e), e.ID()))}
	if stream.Check(e, 0) == nil {
		return stream.EncodeDeadLetter(t.cfg.DLQSubject, e, d)
	}
	return stream.EncodeDeadLetter(t.cfg.DLQSubject, stream.StandIn(e), d)
}

// storeOffsets stores the last offset of each partition of the batch.
func (t *SourceTask) storeOffsets(records []connector.SourceRecord) error {
	last := map[string]connector.SourceRecord{}
	var order []string
	for _, r := range records {
		if r.Partition == nil || r.Offset == nil {
			continue
		}
		k := connector.PartitionKey(r.Partition)
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = r
	}
	for _, k := range order {
		r := last[k]
		if err := t.cfg.Offsets.Put(t.writeCtx, r.Partition, r.Offset); err != nil {
			return err
		}
	}
	return nil
}
