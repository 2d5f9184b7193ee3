package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// TaskConfig configures one sink task.
type TaskConfig struct {
	// Consumer is the durable consumer the task reads (EnsureConsumer); tasks of a connector share it.
	Consumer jetstream.Consumer
	// Sink is connected by Start and closed by Stop.
	Sink connector.Sink
	// Handler handles each record; usually Config.Chain(Sink, transforms...).
	Handler Handler
	// AckWait is the consumer's AckWait (default AckWait); every record the task holds gets an in-progress ack every
	// third of it, so only a dead worker's records come back after it.
	AckWait time.Duration
	// Attempts, when set, records the failed attempts of records, so that their attempt numbers count attempts,
	// not deliveries; without it the attempt number is the delivery count.
	Attempts *Attempts
	// MaxInFlight bounds the records the task holds (default MaxInFlight).
	MaxInFlight int
	Logger      *slog.Logger
	// Delivered, when set, is called with the time from a record's storing to its acceptance by the sink
	// (put-to-delivery latency, retries included), for every record written.
	Delivered func(latency time.Duration)
	// Used, when set, is called with the subject of every record read (Kafka Connect's active topics); it must be
	// cheap and must not block.
	Used func(subject string)
	// Conn, when set, is the connection of Consumer's JetStream: the task parks on it when idle (see ParkAfter).
	Conn *nats.Conn
	// ParkAfter is how long the task waits for a record before it parks (default ParkAfter; negative: never).
	// ParkCheck is the time between two checks of its consumer while parked, after the first (default ParkCheck).
	ParkAfter, ParkCheck time.Duration
	// Wakes, when set, wakes every parked task of the worker (see Wakes); without, each parked task has its own.
	Wakes *Wakes
	// Gate, when set, bounds how many of the worker's tasks park or wake at the same time (see Gate).
	Gate Gate
	// Waking, when set, bounds how many of the worker's woken tasks handle their first record at the same time
	// (see waking); a woken task holds its place for WakeHold at most (default WakeHold).
	Waking   Gate
	WakeHold time.Duration
	// Failed, when set, is called (once, without blocking) when the task fails.
	Failed func()
	// Redact, when set, removes the secret values of the connector's config from what Health shows of a failure
	// and from the bus-log records.
	Redact func(string) string
	// EventLog, when set, writes the bus-log records of every attempt (Config.EventLog): failures at ERROR,
	// successes and filtered records at INFO, unless Sink writes those itself (connector.SelfLogging).
	EventLog *connector.EventLog
	// Tracer, when set, makes a span named SpanName of every attempt (startSpan); nil traces nothing.
	Tracer   trace.Tracer
	SpanName string
}

// Counters count what a task did with records. A record retried three times counts three Retried.
type Counters struct {
	Read        uint64 // records received
	Written     uint64 // accepted by the sink, then acked
	Retried     uint64 // nak'ed with a delay for another attempt
	Dropped     uint64 // given up and acked without delivery (errors.tolerance=all)
	Failed      uint64 // given up and left in the stream, failing the task (errors.tolerance=none)
	Undecodable uint64 // not a CloudEvent; terminated
	Nacked      uint64 // handed back unprocessed because the task stopped
	// Redelivered counts records the server handed out again while the task still handled them (their ack wait
	// passed without an in-progress ack, on a starved machine); they are not handled twice.
	Redelivered uint64
	// Parked counts the times the task parked, idle (see ParkAfter).
	Parked   uint64
	Filtered uint64 // removed by a transform, then acked without being written
	// TransformFailed counts records a transform refused; each is also counted DeadLettered, Dropped or Failed.
	TransformFailed uint64
	// DeadLettered counts records given up, published to the dead-letter subject, then acked
	// (errors.tolerance=all with errors.deadletterqueue.topic.name).
	DeadLettered uint64
	// Matched, Unmatched and Routed are what a routing sink reported (connector.ReportMatched) of the records it
	// wrote: those that matched at least one rule, those that matched none, and the copies stored, one per
	// matched rule. They count accepted attempts only, so a record retried before it is written counts once; a
	// record a transform made into several counts once per record written. Sinks that do not route leave them 0.
	Matched   uint64
	Unmatched uint64
	Routed    uint64
	// LogDropped counts the bus-log records of the task (TaskConfig.EventLog) and of its sink (connector.SelfLogging)
	// that could not be published.
	LogDropped uint64
	// LatencyMicros sums, over the records Written, the time from their storing to their acceptance by the sink
	// (retries included), in microseconds: with Written, the mean delivery latency of any interval.
	LatencyMicros uint64
	// Duplicates counts, for a source task, the records Written that JetStream had stored already within its
	// duplicate window (SourceTask.Duplicates); 0 for sink tasks.
	Duplicates uint64
}

type counters struct {
	read, written, retried, dropped, failed, undecodable, nacked, filtered, transformFailed, deadLettered atomic.Uint64
	redelivered, parked                                                                                   atomic.Uint64
	matched, unmatched, routed, latencyMicros                                                             atomic.Uint64
}

// Task reads a durable consumer and delivers its records to a sink. It is RUNNING from Start until it fails
// (FAILED, with the error as trace) or is stopped.
type Task struct {
	cfg  TaskConfig
	log  *slog.Logger
	iter jetstream.MessagesContext

	stopping     chan struct{} // closed when the task stops reading (Stop or failure)
	stopOnce     sync.Once
	readerDone   chan struct{} // closed when the reader loop returned
	inflight     sync.WaitGroup
	writeCtx     context.Context // ends when Stop's grace period is over
	cancelWrites context.CancelFunc
	closeOnce    sync.Once
	closeErr     error

	mu    sync.Mutex
	state string
	trace string
	// held are the stream sequences of the records being handled: a record the server hands out again while this
	// task still handles it (its ack wait passed on a starved machine) is not handled twice.
	held map[uint64]bool
	// parked is set, by the reader loop only, from the moment the task parks until it pulls again; iter is
	// replaced then (under mu, which halt takes to read it).
	parked *parking
	// woke, set by unpark and read by the reader loop only, is the waking place the task holds until the first
	// record it reads after waking is handled.
	woke *waking
	// asleep is true from when the task parked (after its Parked count grew) until something woke it.
	asleep atomic.Bool

	n  counters
	hl health

	routesMu sync.Mutex
	routedTo map[string]uint64 // copies routed per rule (connector.ReportRoutedTo)

	// selfLog is the sink when it writes its own bus-log records (connector.SelfLogging), else nil.
	selfLog connector.SelfLogging
	// batcher says that the sink stores what a record batch's events write together (connector.Batcher).
	batcher bool
	// batchSlots bounds the writers of record batches' events (handleAll, run); jobs hands them their writes.
	batchSlots chan struct{}
	jobs       chan func()
}

// Start connects the sink and starts reading. It returns once the task reads; an error means the sink did not
// connect or the consumer could not be read, and nothing was started.
func Start(ctx context.Context, cfg TaskConfig) (*Task, error) {
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = MaxInFlight
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = AckWait
	}
	if cfg.ParkAfter == 0 {
		cfg.ParkAfter = ParkAfter
	}
	if cfg.ParkCheck <= 0 {
		cfg.ParkCheck = ParkCheck
	}
	if cfg.WakeHold <= 0 {
		cfg.WakeHold = WakeHold
	}
	if cfg.Handler == nil {
		cfg.Handler = Write(cfg.Sink)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Sink.Connect(ctx); err != nil {
		_ = cfg.Sink.Close()
		return nil, fmt.Errorf("connecting the sink: %w", err)
	}
	// The consumer's MaxAckPending bounds what the server hands out (MaxInFlight per task), and the task has a slot
	// for each: a record never waits in the client's buffer while its ack wait runs without in-progress acks.
	iter, err := cfg.Consumer.Messages(jetstream.PullMaxMessages(cfg.MaxInFlight), jetstream.PullExpiry(PullExpiry))
	if err != nil {
		_ = cfg.Sink.Close()
		return nil, fmt.Errorf("reading the consumer: %w", err)
	}
	t := &Task{
		cfg:        cfg,
		log:        log,
		iter:       iter,
		stopping:   make(chan struct{}),
		readerDone: make(chan struct{}),
		state:      rpc.StateRunning,
		held:       map[uint64]bool{},
		hl:         health{redact: cfg.Redact},
		batchSlots: make(chan struct{}, cfg.MaxInFlight),
		jobs:       make(chan func()),
	}
	if sl, ok := cfg.Sink.(connector.SelfLogging); ok && sl.LogsOwnRecords() {
		t.selfLog = sl
	}
	_, t.batcher = cfg.Sink.(connector.Batcher)
	t.writeCtx, t.cancelWrites = context.WithCancel(context.Background())
	go t.read(cfg.MaxInFlight)
	return t, nil
}

// State returns RUNNING or FAILED, with the error that failed the task as trace.
func (t *Task) State() (state, trace string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state, t.trace
}

// RoutedTo returns the copies a routing sink stored per rule, of the records it wrote (nil for other sinks).
func (t *Task) RoutedTo() map[string]uint64 {
	t.routesMu.Lock()
	defer t.routesMu.Unlock()
	return maps.Clone(t.routedTo)
}

// Asleep reports whether the task is parked now, and how many times it parked. While it stays parked (the same
// count, asleep) it reads and writes nothing: its counters and health do not change, and it has not failed (a
// failure clears asleep before it sets the state). asleep is read before the count, which grows before asleep is
// set: a task that woke and parked again between two calls has another count.
func (t *Task) Asleep() (parks uint64, asleep bool) {
	asleep = t.asleep.Load()
	return t.n.parked.Load(), asleep
}

// Health returns what the task knows of how its writes go.
func (t *Task) Health() Health { return t.hl.get() }

// Counters returns what the task did so far.
func (t *Task) Counters() Counters {
	return Counters{
		Read: t.n.read.Load(), Written: t.n.written.Load(), Retried: t.n.retried.Load(), Dropped: t.n.dropped.Load(),
		Failed: t.n.failed.Load(), Undecodable: t.n.undecodable.Load(), Nacked: t.n.nacked.Load(),
		Filtered: t.n.filtered.Load(), TransformFailed: t.n.transformFailed.Load(), Redelivered: t.n.redelivered.Load(),
		DeadLettered: t.n.deadLettered.Load(), Matched: t.n.matched.Load(), Unmatched: t.n.unmatched.Load(),
		Routed: t.n.routed.Load(), Parked: t.n.parked.Load(), LogDropped: t.logDropped(), LatencyMicros: t.n.latencyMicros.Load(),
	}
}

// logDropped counts the bus-log records of the task and of its sink that could not be published.
func (t *Task) logDropped() uint64 {
	n := t.cfg.EventLog.Dropped()
	if t.selfLog != nil {
		n += t.selfLog.LogDropped()
	}
	return n
}

// Stop stops reading, hands back the records received but not started (nak), lets the records being handled
// finish, then closes the sink. When ctx ends first, the writes still running are cancelled and their records
// nak'ed. Nothing is acked that the sink did not accept. Safe to call more than once; the sink's Close error is
// returned.
func (t *Task) Stop(ctx context.Context) error {
	t.halt()
	done := make(chan struct{})
	go func() {
		<-t.readerDone
		t.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		t.cancelWrites()
		<-done
	}
	t.cancelWrites()
	t.closeOnce.Do(func() { t.closeErr = t.cfg.Sink.Close() })
	return t.closeErr
}

// Abort stops the task at once, without waiting: it stops reading and cancels the writes in flight, whose records
// are handed back. It is for a task its worker may no longer run (its lease lapsed), which must have no effect
// after this returns, even without NATS; Stop, afterwards, waits for the task to end and closes the sink.
func (t *Task) Abort() {
	t.halt()
	t.cancelWrites()
}

// halt stops reading; the reader loop then naks whatever the client buffered.
func (t *Task) halt() {
	t.stopOnce.Do(func() {
		close(t.stopping)
		t.mu.Lock()
		iter := t.iter
		t.mu.Unlock()
		iter.Drain()
	})
}

func (t *Task) fail(err error) {
	t.asleep.Store(false) // before the state: a task seen asleep has not failed (Asleep)
	t.mu.Lock()
	first := t.state != rpc.StateFailed
	if first {
		t.state, t.trace = rpc.StateFailed, err.Error()
	}
	t.mu.Unlock()
	t.log.Error("task failed", "err", err)
	t.halt()
	if first && t.cfg.Failed != nil {
		t.cfg.Failed()
	}
}

func (t *Task) isStopping() bool {
	select {
	case <-t.stopping:
		return true
	default:
		return false
	}
}

// read is the reader loop: it takes a slot, then a record, and hands the record with the slot to a handler (an idle
// one, or a new one). When the task parks, it waits in unpark.
func (t *Task) read(slots int) {
	defer close(t.readerDone)
	defer func() {
		if t.parked != nil {
			t.parked.close()
		}
		t.woke.release()
	}()
	sem := make(chan struct{}, slots)
	handlers := make(chan received)
	for {
		select {
		case sem <- struct{}{}:
		case <-t.stopping:
			t.drain()
			return
		}
		msg, err := t.next()
		woke := t.woke // the first record after waking, or nothing came
		t.woke = nil
		if err != nil {
			woke.release()
			<-sem
			switch {
			case errors.Is(err, nats.ErrTimeout): // idle for ParkAfter
				if len(sem) == 0 && t.parked == nil {
					t.tryPark()
				}
				continue
			case errors.Is(err, jetstream.ErrMsgIteratorClosed):
				if t.isStopping() {
					return
				}
				if t.parked != nil {
					if !t.unpark() {
						return
					}
					continue
				}
				t.fail(fmt.Errorf("reading the consumer: %w", err))
				return
			case errors.Is(err, jetstream.ErrConsumerDeleted), errors.Is(err, jetstream.ErrConsumerNotFound),
				errors.Is(err, jetstream.ErrBadRequest):
				t.fail(fmt.Errorf("reading the consumer: %w", err))
				t.drain()
				return
			}
			// Missing heartbeats and reconnects: the iterator recovers by itself.
			t.log.Warn("reading the consumer", "err", err)
			select {
			case <-t.stopping:
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		t.n.read.Add(1)
		if t.cfg.Used != nil {
			t.cfg.Used(msg.Subject())
		}
		if t.isStopping() {
			woke.release()
			t.nak(msg)
			<-sem
			continue
		}
		md, mdErr := msg.Metadata() // read once: handle takes it
		if mdErr == nil && !t.hold(md.Sequence.Stream) {
			// Handed out again while this task still handles it: the handling in progress acks it.
			t.n.redelivered.Add(1)
			t.log.Debug("record handed out again while being handled; not handled twice", "seq", md.Sequence.Stream)
			woke.release()
			<-sem
			continue
		}
		t.inflight.Add(1)
		r := received{msg, md, mdErr, woke}
		select {
		case handlers <- r: // an idle handler takes it
		default:
			go t.handler(r, handlers, sem)
		}
	}
}

// received is a record the reader hands to a handler.
type received struct {
	msg   jetstream.Msg
	md    *jetstream.MsgMetadata
	mdErr error
	woke  *waking // released once the record is handled: the first after the task woke
}

// handlerIdle is how long a handler goroutine waits for its next record before it ends.
const handlerIdle = time.Second

// handler handles r, then the records the reader hands it, until none came for handlerIdle. Handlers outlive
// their record so that a busy task does not start a goroutine per record, whose stack grows anew each time to the
// depth of a delivery (a tenth of the CPU of delivery in a profile); each holds a slot only while it handles one.
func (t *Task) handler(r received, handlers <-chan received, sem <-chan struct{}) {
	idle := time.NewTimer(handlerIdle)
	defer idle.Stop()
	for {
		t.handle(r.msg, r.md, r.mdErr)
		r.woke.release()
		<-sem
		t.inflight.Done()
		idle.Reset(handlerIdle)
		select {
		case r = <-handlers:
		case <-idle.C:
			return
		}
	}
}

// drain naks the records the client buffered after reading stopped.
func (t *Task) drain() {
	t.iter.Drain()
	for {
		msg, err := t.iter.Next(jetstream.NextMaxWait(5 * time.Second))
		if err != nil {
			return
		}
		t.n.read.Add(1)
		t.nak(msg)
	}
}

func (t *Task) nak(msg jetstream.Msg) {
	t.n.nacked.Add(1)
	if err := msg.Nak(); err != nil {
		t.log.Warn("nak", "err", err)
	}
}

// hold marks a stream sequence as being handled; false when it already is.
func (t *Task) hold(seq uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held[seq] {
		return false
	}
	t.held[seq] = true
	return true
}

func (t *Task) unhold(seq uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.held, seq)
}

// attempt returns the number of this attempt of a record: one more than its failed attempts recorded, or its
// delivery count without Attempts (or when they cannot be read); and for a record batch how far its events were
// settled by earlier deliveries.
func (t *Task) attempt(md *jetstream.MsgMetadata) (uint64, Progress) {
	if t.cfg.Attempts == nil || md.NumDelivered <= 1 {
		return md.NumDelivered, Progress{}
	}
	ctx, cancel := context.WithTimeout(t.writeCtx, attemptsTimeout)
	defer cancel()
	failed, p, err := t.cfg.Attempts.Failed(ctx, attemptKey(md.Stream, md.Consumer, md.Sequence.Stream))
	if err != nil {
		t.log.Warn("reading the failed attempts of a record; counting its deliveries instead", "seq", md.Sequence.Stream, "err", err)
		return md.NumDelivered, Progress{}
	}
	return failed + 1, p
}

// record stores in Attempts that failed attempts of a record failed, and how far its events are settled, before
// the record is handed back.
func (t *Task) record(md *jetstream.MsgMetadata, failed uint64, p Progress) {
	if t.cfg.Attempts == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), attemptsTimeout)
	defer cancel()
	if err := t.cfg.Attempts.Record(ctx, attemptKey(md.Stream, md.Consumer, md.Sequence.Stream), failed, p); err != nil {
		t.log.Warn("recording the failed attempts of a record", "seq", md.Sequence.Stream, "err", err)
	}
}

// forget ends the record's failures in Attempts once all its events were written or given up. A record that
// never failed an attempt and was never handed back part way costs nothing (not even its key), however often it
// was delivered.
func (t *Task) forget(md *jetstream.MsgMetadata) {
	if t.cfg.Attempts == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), attemptsTimeout)
	defer cancel()
	if err := t.cfg.Attempts.Forget(ctx, attemptKey(md.Stream, md.Consumer, md.Sequence.Stream)); err != nil {
		t.log.Warn("recording the failed attempts of a record", "seq", md.Sequence.Stream, "err", err)
	}
}

// handle handles one record, md its metadata as the reader parsed it (mdErr when it could not): its one event, or
// the events of a record batch not settled yet. The message is acknowledged once every event is settled (written,
// filtered, dead-lettered or dropped); an event to retry hands the message back with the retry's delay, recording
// with its failed attempts (Attempts) how far the events are settled, so that the next delivery writes the others
// only.
//
// A record batch's events are written one after the other when the sink is a connector.Batcher, else at the same
// time (handleAll). The events of a record batch at its first attempt are written with one connector.Batch when
// the sink is a Batcher: what they leave to it is stored (flushed) once every event is handled, or before an
// event's failure is acted on, and what the task counts of their writes only then. When the flush fails, the
// record comes back after BatchRetryDelay as a failed attempt of its first event, and its events are written one
// at a time.
func (t *Task) handle(msg jetstream.Msg, md *jetstream.MsgMetadata, mdErr error) {
	if mdErr != nil {
		t.n.undecodable.Add(1)
		t.log.Error("record without JetStream metadata, terminated", "subject", msg.Subject(), "err", mdErr)
		_ = msg.Term()
		return
	}
	defer t.unhold(md.Sequence.Stream)
	base := connector.Meta{
		Stream:    md.Stream,
		Subject:   msg.Subject(),
		Sequence:  md.Sequence.Stream,
		Timestamp: md.Timestamp,
		MsgID:     msg.Headers().Get(nats.MsgIdHdr),
		Header:    msg.Headers(),
	}
	events, jsons, err := stream.DecodeEntries(&nats.Msg{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data()})
	if err != nil {
		t.n.undecodable.Add(1)
		t.log.Error("record is not a CloudEvent, terminated", "stream", base.Stream, "seq", base.Sequence, "err", err)
		if err := msg.TermWithReason("not a CloudEvent"); err != nil {
			t.log.Warn("term", "err", err)
		}
		return
	}
	batch := stream.IsBatch(msg.Headers())
	if batch {
		t.n.read.Add(uint64(len(events) - 1)) // the reader counted the message as one
	}
	attempt, done := t.attempt(md)
	if done.Index >= len(events) {
		done = Progress{}
	}
	r := &record{t: t, msg: msg, md: md, base: base, events: events, batch: batch, attempt: attempt, done: done}
	if batch {
		r.headers, r.jsons = stream.EntryHeaders(msg.Headers(), len(events)), jsons
	}
	stopProgress := t.keepAlive(msg)
	defer stopProgress()
	if batch && !t.batcher && len(events) > 1 {
		r.handleAll()
	} else {
		r.handleInOrder()
	}
}

// record is one record being handled: its events, and how far they were settled before this attempt.
type record struct {
	t       *Task
	msg     jetstream.Msg
	md      *jetstream.MsgMetadata
	base    connector.Meta
	events  []*event.Event
	headers []nats.Header // of each event, when batch
	jsons   [][]byte      // the JSON form of each event, when batch
	batch   bool
	attempt uint64
	done    Progress
}

// meta is the metadata of the record's event at i, written at attempt.
func (r *record) meta(i int, attempt uint64) connector.Meta {
	meta := r.base
	meta.Attempt = attempt
	if r.batch {
		meta.Index, meta.Header, meta.JSON = i, r.headers[i], r.jsons[i]
		meta.MsgID = stream.EntryMsgID(r.msg.Headers(), i, r.events[i])
	}
	return meta
}

// acked acknowledges the record, all its events settled.
func (r *record) acked() {
	if r.attempt > 1 || r.done.Index > 0 || len(r.done.Settled) > 0 {
		r.t.forget(r.md)
	}
	if err := r.msg.Ack(); err != nil {
		r.t.log.Warn("ack", "err", err)
	}
}

// handleInOrder writes the record's events not settled yet one after the other, the first at the record's attempt
// and the others at their first, stopping at the first that is not settled.
func (r *record) handleInOrder() {
	t, from := r.t, r.done.Index
	var w *batchWrites
	if t.batcher && r.batch && r.attempt == 1 && from == 0 {
		w = &batchWrites{}
	}
	// flushed stores what the events before i left to the Batch; false: it could not, and the record went back.
	flushed := func(i int) bool {
		if w == nil || w.flush(t.writeTimeout()) == nil {
			return true
		}
		t.log.Warn("storing what a record batch's events wrote failed; the record comes back and its events are written one at a time",
			"stream", r.base.Stream, "seq", r.base.Sequence, "events", i, "err", w.err)
		t.record(r.md, r.attempt, r.done)
		t.n.retried.Add(1)
		if err := r.msg.NakWithDelay(BatchRetryDelay); err != nil {
			t.log.Warn("nak", "err", err)
		}
		return false
	}
	// after is how far the events are settled when the one at i is not.
	after := func(i int) Progress {
		var settled []int
		for _, k := range r.done.Settled {
			if k > i {
				settled = append(settled, k)
			}
		}
		return Progress{Index: i, Settled: settled}
	}
	for i := from; i < len(r.events); i++ {
		if r.done.settles(i) {
			continue
		}
		attempt := uint64(1)
		if i == from {
			attempt = r.attempt
		}
		o, handBack := t.handleEvent(r.meta(i, attempt), r.events[i], w)
		if (handBack || o.Action == Retry || o.Action == Fail || o.Action == GiveUp) && !flushed(i) {
			return
		}
		switch {
		case handBack:
			// Stopped while writing: hand the record back at once; it was not a failure of the target.
			if p := after(i); p.Index > 0 || len(p.Settled) > 0 {
				t.record(r.md, attempt-1, p)
			}
			t.nak(r.msg)
			return
		case o.Action == Retry:
			t.record(r.md, attempt, after(i))
			if err := r.msg.NakWithDelay(o.Delay); err != nil {
				t.log.Warn("nak", "err", err)
			}
			return
		case o.Action == Fail || o.Action == GiveUp:
			// Stop reading before handing the record back, or the reader could take it again at once.
			t.fail(fmt.Errorf("record %d of stream %s could not be delivered after %d attempts: %w",
				r.base.Sequence, r.base.Stream, o.Attempts, o.Err))
			if p := after(i); p.Index > 0 || len(p.Settled) > 0 {
				t.record(r.md, attempt-1, p)
			}
			t.nak(r.msg)
			return
		}
	}
	if flushed(len(r.events)) {
		r.acked()
	}
}

// handleAll writes the record batch's events not settled yet at the same time, each at the record's attempt (they
// all had theirs), with at most the task's MaxInFlight writes of record batches' events at once in the task (run). Once
// every write returned, the record is acknowledged when every event is settled; else it is handed back with how far
// its events are settled: failing the task when an event's outcome says so, else after the shortest delay of the
// events to retry, else (the task stopped) at once.
func (r *record) handleAll() {
	t := r.t
	type result struct {
		o        Outcome
		handBack bool
		settled  bool
	}
	results := make([]result, len(r.events))
	var wg sync.WaitGroup
	for i := range r.events {
		if r.done.settles(i) {
			results[i].settled = true
			continue
		}
		wg.Add(1)
		t.run(func() {
			defer wg.Done()
			o, handBack := t.handleEvent(r.meta(i, r.attempt), r.events[i], nil)
			settled := !handBack && o.Action != Retry && o.Action != Fail && o.Action != GiveUp
			results[i] = result{o: o, handBack: handBack, settled: settled}
		})
	}
	wg.Wait()
	p := Progress{Index: -1}
	var failed, retry *result
	for i := range results {
		res := &results[i]
		switch {
		case p.Index < 0 && !res.settled:
			p.Index = i
		case p.Index >= 0 && res.settled:
			p.Settled = append(p.Settled, i)
		}
		switch {
		case res.settled, res.handBack:
		case res.o.Action == Retry:
			if retry == nil || res.o.Delay < retry.o.Delay {
				retry = res
			}
		case failed == nil:
			failed = res
		}
	}
	// progressed: some events are settled that the record's last recorded attempts did not say.
	progressed := p.Index > r.done.Index || len(p.Settled) != len(r.done.Settled)
	switch {
	case p.Index < 0:
		r.acked()
	case failed != nil:
		t.fail(fmt.Errorf("record %d of stream %s could not be delivered after %d attempts: %w",
			r.base.Sequence, r.base.Stream, failed.o.Attempts, failed.o.Err))
		if progressed {
			t.record(r.md, r.attempt-1, p)
		}
		t.nak(r.msg)
	case retry != nil:
		t.record(r.md, r.attempt, p)
		if err := r.msg.NakWithDelay(retry.o.Delay); err != nil {
			t.log.Warn("nak", "err", err)
		}
	default: // the task stopped while writing
		if progressed {
			t.record(r.md, r.attempt-1, p)
		}
		t.nak(r.msg)
	}
}

// run hands job to an idle writer of record batches' events, or to a new one while there are fewer than the
// task's MaxInFlight, else waits for one to be idle. Writers outlive their job for handlerIdle, as handlers do.
func (t *Task) run(job func()) {
	select {
	case t.jobs <- job:
		return
	default:
	}
	select {
	case t.batchSlots <- struct{}{}:
		go t.writer(job)
	case t.jobs <- job:
	}
}

// writer runs job, then the jobs run hands it, until none came for handlerIdle.
func (t *Task) writer(job func()) {
	defer func() { <-t.batchSlots }()
	idle := time.NewTimer(handlerIdle)
	defer idle.Stop()
	for {
		job()
		idle.Reset(handlerIdle)
		select {
		case job = <-t.jobs:
		case <-idle.C:
			return
		}
	}
}

// BatchRetryDelay is how long a record batch whose writes could not be stored together waits before its events
// are written again, one at a time.
const BatchRetryDelay = time.Second

// batchWrites are the writes of a record batch's events with one connector.Batch, and what the task counts of
// them once the Batch is stored.
type batchWrites struct {
	batch  connector.Batch
	counts []func()
	err    error
}

// flush stores the Batch within timeout, then counts the writes it held; it returns the error of a failed flush,
// after which nothing of the writes is counted.
func (w *batchWrites) flush(timeout time.Duration) error {
	// Not the task's write context: a flush that a stop cut short could store copies that the record's next
	// delivery, written one at a time, would store again under other ids.
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	counts := w.counts
	w.counts = nil
	if w.err = w.batch.Flush(ctx); w.err != nil {
		return w.err
	}
	for _, count := range counts {
		count()
	}
	return nil
}

// writeTimeout bounds a write of the task's sink (connector.WriteTimeouter), DefaultWriteTimeout otherwise.
func (t *Task) writeTimeout() time.Duration {
	if wt, ok := t.cfg.Sink.(connector.WriteTimeouter); ok {
		return wt.WriteTimeout()
	}
	return connector.DefaultWriteTimeout
}

// handleEvent makes one attempt to write one event of a record and counts, logs and traces its outcome; handBack
// says that the task stopped while writing, so the record goes back without counting as a failure.
//
// With w, the write is one of a record batch's with a connector.Batch: what it counts of a write the sink accepted
// waits in w until the Batch is stored.
func (t *Task) handleEvent(meta connector.Meta, e *event.Event, w *batchWrites) (o Outcome, handBack bool) {
	var began time.Time
	if t.cfg.EventLog != nil {
		began = time.Now()
	}
	var batch *connector.Batch
	if w != nil {
		batch = &w.batch
	}
	// A report per attempt: what the sink reports of an attempt that is not accepted is dropped with it.
	ctx, report := connector.WithWrite(t.writeCtx, meta, batch)
	var span trace.Span
	if t.cfg.Tracer != nil {
		ctx, span = t.startSpan(ctx, meta, e)
	}
	o = t.cfg.Handler(ctx, e)
	if o.Action != Ack && t.writeCtx.Err() != nil {
		if span != nil {
			span.SetAttributes(attribute.String("eventbridge.outcome", "handed back: the task stopped"))
			span.End()
		}
		return o, true
	}

	log := func(level slog.Level, text string) {
		t.log.Log(context.Background(), level, text, "stream", meta.Stream, "seq", meta.Sequence, "index", meta.Index,
			"event_id", e.ID(), "event_source", e.Source(), "attempts", o.Attempts, "err", o.Err)
	}
	transformFailed := o.Err != nil && IsTransformError(o.Err) && o.Action != Retry
	if transformFailed {
		t.n.transformFailed.Add(1)
	}
	f := t.follow(o, meta.Attempt)
	if span != nil {
		endSpan(span, o, f)
	}
	if t.cfg.EventLog != nil {
		t.logOutcome(e, meta, o, f, time.Since(began), traceIDOf(span))
	}
	switch o.Action {
	case Ack:
		if w != nil {
			// The stored time only: a closure over meta would move every attempt's meta to the heap.
			stored := meta.Timestamp
			w.counts = append(w.counts, func() { t.written(stored, report) })
		} else {
			t.written(meta.Timestamp, report)
		}
	case Filtered:
		t.n.filtered.Add(1)
		log(slog.LevelDebug, "record filtered out by a transform")
	case Retry:
		t.n.retried.Add(1)
		log(slog.LevelDebug, "record will be retried")
	case DeadLettered:
		t.n.deadLettered.Add(1)
		log(slog.LevelWarn, fmt.Sprintf("record dead-lettered after %d attempts", o.Attempts))
	case Drop:
		t.n.dropped.Add(1)
		if transformFailed {
			log(slog.LevelWarn, "record dropped: a transform refused it")
		} else {
			log(slog.LevelWarn, fmt.Sprintf("record dropped after %d attempts", o.Attempts))
		}
	default: // Fail, and GiveUp that no middleware handled
		t.n.failed.Add(1)
		log(slog.LevelError, "record could not be delivered; failing the task")
		o.Action = Fail
	}
	return o, false
}

// written counts a write the sink accepted of a record stored at stored, with what the sink reported of it.
func (t *Task) written(stored time.Time, report *connector.Report) {
	t.n.written.Add(1)
	rs := report.Stats()
	t.n.matched.Add(rs.Matched)
	t.n.unmatched.Add(rs.Unmatched)
	t.n.routed.Add(rs.Routed)
	if rs.Routed > 0 {
		t.routesMu.Lock()
		t.routedTo = report.AddRoutedTo(t.routedTo)
		t.routesMu.Unlock()
	}
	latency := time.Since(stored)
	t.n.latencyMicros.Add(uint64(max(latency.Microseconds(), 0)))
	if t.cfg.Delivered != nil {
		t.cfg.Delivered(latency)
	}
}

// follow records the outcome of an attempt in the task's health, and logs, at info level, when writes start to
// fail and when they succeed again: once per change, not per attempt. It returns the failure of a failed attempt
// as the health shows it (redacted), the zero Failure otherwise.
func (t *Task) follow(o Outcome, attempt uint64) Failure {
	now := time.Now()
	switch o.Action {
	case Ack:
		if recovered, after := t.hl.success(now); recovered {
			t.log.Info("writing records succeeds again", "failed_attempts", after)
		}
	case Retry, DeadLettered, Drop, Fail, GiveUp:
		first, f := t.hl.failure(now, attempt, o.Err, o.Action == Retry, o.Action == DeadLettered)
		if first {
			t.log.Info("writing a record failed; the task's health shows the failure until a record is written",
				"class", f.Class, "status", f.Status, "attempt", f.Attempt, "outcome", o.Action.String(), "err", f.Message)
		}
		return f
	}
	return Failure{}
}

// keepAlive sends in-progress acks for msg every third of AckWait until the returned func is called, so that a
// slow sink does not get its record redelivered to another reader.
func (t *Task) keepAlive(msg jetstream.Msg) (stop func()) {
	every := t.cfg.AckWait / 3
	var mu sync.Mutex
	stopped := false
	mu.Lock()
	defer mu.Unlock()
	var tick *time.Timer
	tick = time.AfterFunc(every, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		if err := msg.InProgress(); err != nil {
			t.log.Warn("in-progress ack", "err", err)
		}
		tick.Reset(every)
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		tick.Stop()
	}
}
