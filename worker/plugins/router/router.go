// Package router is the router sink plugin: it reads the events put on a bus, matches each of them once against
// every enabled rule of the bus (one pattern.Matcher), and stores one copy per matched rule on the rule's subject.
// The input record is accepted only after every copy was stored, so nothing is lost between the two.
//
// Archives are pseudo-rules of the table (Rule.Archive): their copies go to the archive's stream with the time the
// bus stored the event (stream.HeaderStoredAt). Events a replay put back on the bus (stream.HeaderReplay) are
// never archived again, and go only to the rules, or the one target, the replay names (stream.HeaderReplayRules,
// stream.HeaderReplayTarget).
package router

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/domain/pattern"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/tracing"
	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// Name is the plugin's connector.class.
const Name = "router"

// Config keys of the router.
const (
	// KeyRules is the rule table: a JSON array of Rule.
	KeyRules = "router.rules"
	// KeyEventTypesSubject is where the router reports the event types it routes (stream.EventTypesReport):
	// <cluster>.eventtypes.<busId>. Empty: it reports nothing.
	KeyEventTypesSubject = "router.eventtypes.subject"
	// KeyEventTypesInterval is how often, in milliseconds, the router reports (when it routed something).
	KeyEventTypesInterval = "router.eventtypes.interval.ms"
	// KeyBusID is the id of the router's bus, which its reports name. Absent: the last token of
	// router.eventtypes.subject.
	KeyBusID = "eb.bus.id"
)

// DefaultEventTypesInterval is the default of router.eventtypes.interval.ms.
const DefaultEventTypesInterval = 5 * time.Second

// PublishTimeout bounds the wait for JetStream to store the copies of one event.
const PublishTimeout = 10 * time.Second

// Rule is one entry of the rule table.
type Rule struct {
	ID string `json:"id"`
	// Name is the rule's name, for the bus log's records.
	Name string `json:"name,omitempty"`
	// Subject is where the rule's copies are stored: <cluster>.bus.<busId>.rule.<ruleId>.
	Subject string `json:"subject"`
	// Pattern is the rule's event pattern (domain/pattern).
	Pattern json.RawMessage `json:"pattern"`
	// FromSequence gives exact start semantics: the rule receives the events whose stream sequence is greater,
	// i.e. those stored after the rule was enabled. A replayed event is stored anew, after it: it is routed.
	FromSequence uint64 `json:"fromSequence"`
	// Stream is the stream expected to store Subject (an archive's stream); empty: the stream of the record read
	// (the bus's).
	Stream string `json:"stream,omitempty"`
	// Archive marks an archive's pseudo-rule: its copies carry stream.HeaderStoredAt, it gets no copy of a
	// replayed record (stream.HeaderReplay, HeaderReplayRules or HeaderReplayTarget), and its copies are neither
	// reported as routed (connector.ReportRoutedTo: an event that matched only archives is unmatched) nor written
	// to the bus log.
	Archive bool `json:"archive,omitempty"`
}

func init() { connector.Register(Plugin()) }

// Plugin returns the router plugin.
func Plugin() connector.Plugin {
	return connector.Plugin{
		Name:    Name,
		Type:    connector.TypeSink,
		Version: "1.0.0",
		Doc:     "Matches the events of a bus against its rules in one pass and stores one copy per matched rule.",
		Spec: connector.Spec{
			{Name: KeyRules, Title: "Rule table", Type: connector.TypeJSON, Default: "[]",
				Example: `[{"id": "k7d2mz4xq5vb3nta", "name": "orders-to-billing", "subject": "eb.bus.q4xbm2n7vd3kza6e.rule.k7d2mz4xq5vb3nta", "pattern": {"source": ["shop.orders"]}, "fromSequence": 0}]`,
				Doc: `Rule table: [{"id": "...", "name": "...", "subject": "<cluster>.bus.<busId>.rule.<ruleId>", "pattern": {...}, "fromSequence": N}]; name (the id when absent) names the rule in the bus log. ` +
					`An archive is an entry with "archive": true, "subject": "<cluster>.archive.<accountId>.<archiveId>" and "stream": "<cluster>_ARCHIVE_<accountId>_<archiveId>" (the stream expected to store subject; absent: the bus's).`},
			{Name: KeyEventTypesSubject, Title: "Event types subject", Type: connector.TypeString, Check: checkSubject,
				Example: "eb.eventtypes.q4xbm2n7vd3kza6e",
				Doc: "Subject the router reports the event types it routed to (<cluster>.eventtypes.<busId>, on the " +
					"event-types stream): the (source, type) pairs of the events, with counts, when they were first and " +
					"last stored, and samples of their JSON data. Empty: none."},
			{Name: KeyEventTypesInterval, Title: "Event types report interval (ms)", Type: connector.TypeInt,
				Default: strconv.FormatInt(DefaultEventTypesInterval.Milliseconds(), 10), Min: connector.Min(100),
				Doc: "Interval in milliseconds between two reports of event types; nothing is published for an interval " +
					"in which nothing was routed."},
			{Name: KeyBusID, Title: "Bus ID", Type: connector.TypeString,
				Example: "q4xbm2n7vd3kza6e",
				Doc: "Id of the router's bus, which its reports of event types and the subjects of replays to one " +
					"target name. Empty: the last token of " + KeyEventTypesSubject + ", else the bus of the subject read."},
		},
		NewSink: New,
	}
}

// Sink is the router. Safe for concurrent Write.
type Sink struct {
	js      jetstream.JetStream
	names   stream.Names
	busID   string // eb.bus.id, else the last token of router.eventtypes.subject; "" when neither
	matcher *pattern.Matcher
	rules   map[string]Rule // by id, archives too; Name is the id when the table gives none

	// log writes the bus-log records of what the router matched (eventlog.*); nil when the bus's log is OFF.
	log *connector.EventLog
	// patterns (by rule id) and byName (rule ids in the order of their names, archives left out) explain, at TRACE
	// only, why an event did not match a rule: the matcher is one index of every pattern.
	patterns map[string]*pattern.Pattern
	byName   []string

	// types counts the event types routed and report publishes them (router.eventtypes.*); both nil without a
	// subject.
	types  *eventTypes
	report *reporter
}

var (
	_ connector.Sink           = (*Sink)(nil)
	_ connector.WriteTimeouter = (*Sink)(nil)
	_ connector.SelfLogging    = (*Sink)(nil)
	_ connector.Batcher        = (*Sink)(nil)
)

// New compiles the rule table into one matcher. Problems of the table are connector.FieldErrors of router.rules,
// one per problem. The bus-log keys (connector.KeyLogTopic, KeyLogLevel, KeyLogDetail) say which records Write
// writes, published through env.JetStream on behalf of env.Connector; router.eventtypes.subject, where the reports
// of event types go (through env.JetStream too, from Connect on).
func New(cfg connector.Values, env connector.Env) (connector.Sink, error) {
	var rules []Rule
	if err := cfg.JSON(KeyRules, &rules); err != nil {
		return nil, err
	}
	s := &Sink{js: env.JetStream, names: env.Names, busID: cfg.String(KeyBusID), matcher: pattern.NewMatcher(),
		rules: make(map[string]Rule, len(rules))}
	if subject := cfg.String(KeyEventTypesSubject); subject != "" {
		if s.busID == "" {
			s.busID = subject[strings.LastIndexByte(subject, '.')+1:]
		}
		interval := time.Duration(cfg.Int(KeyEventTypesInterval)) * time.Millisecond
		if interval <= 0 { // a config New was given without validating it
			interval = DefaultEventTypesInterval
		}
		s.types = newEventTypes()
		s.report = &reporter{pub: env.JetStream, subject: subject, busID: s.busID, interval: interval, types: s.types,
			log: env.Log()}
	}
	s.log = connector.NewEventLog(env.JetStream, connector.ParseLogConfig(cfg), env.Connector, env.Log())
	trace := s.log.Enabled(stream.LogTrace)
	if trace {
		s.patterns = make(map[string]*pattern.Pattern, len(rules))
	}
	var errs connector.FieldErrors
	bad := func(i int, r Rule, format string, args ...any) {
		errs = append(errs, connector.FieldError{Key: KeyRules,
			Message: fmt.Sprintf("rule %d (id %q): %s", i, r.ID, fmt.Sprintf(format, args...))})
	}
	seen := map[string]bool{}
	for i, r := range rules {
		switch {
		case r.ID == "":
			bad(i, r, "id is required")
			continue
		case seen[r.ID]:
			bad(i, r, "id is used twice")
			continue
		}
		seen[r.ID] = true
		if !literalSubject(r.Subject) {
			bad(i, r, "subject %q is not a literal NATS subject", r.Subject)
			continue
		}
		if r.Stream != "" && !streamName(r.Stream) {
			bad(i, r, "stream %q is not a stream name", r.Stream)
			continue
		}
		p, err := pattern.Compile(r.Pattern)
		if err != nil {
			bad(i, r, "pattern: %v", err)
			continue
		}
		if err := s.matcher.Add(r.ID, p); err != nil {
			bad(i, r, "pattern: %v", err)
			continue
		}
		if r.Name == "" {
			r.Name = r.ID
		}
		s.rules[r.ID] = r
		if trace && !r.Archive {
			s.patterns[r.ID] = p
			s.byName = append(s.byName, r.ID)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	slices.SortFunc(s.byName, func(a, b string) int {
		return cmp.Or(strings.Compare(s.rules[a].Name, s.rules[b].Name), strings.Compare(a, b))
	})
	// Build the matcher's index now, when the configuration loads, rather than on the first event (about 9 ms
	// for 10,000 rules).
	if _, err := s.matcher.Match([]byte("{}")); err != nil {
		return nil, fmt.Errorf("router: building the rule index: %w", err)
	}
	return s, nil
}

// literalSubject reports whether subject is a NATS subject without wildcards.
func literalSubject(subject string) bool {
	return subject != "" && !strings.ContainsAny(subject, "*> \t\r\n") && !strings.Contains(subject, "..") &&
		!strings.HasPrefix(subject, ".") && !strings.HasSuffix(subject, ".")
}

// streamName reports whether name can name a JetStream stream.
func streamName(name string) bool {
	return name != "" && !strings.ContainsAny(name, ".*> \t\r\n/\\")
}

// checkSubject accepts a literal NATS subject (router.eventtypes.subject).
func checkSubject(v string) error {
	if !literalSubject(v) {
		return errors.New("is not a literal NATS subject")
	}
	return nil
}

// Connect starts reporting the event types the router routes, when its config has router.eventtypes.subject: a
// goroutine publishes a report every router.eventtypes.interval.ms, until Close. The router publishes on the
// worker's JetStream context: there is nothing to open, and Connect never fails.
func (s *Sink) Connect(context.Context) error {
	if s.report != nil {
		s.report.start()
	}
	return nil
}

// Close stops reporting the event types and publishes what was counted since the last report, waiting at most
// ReportCloseTimeout for JetStream once the report is encoded (what it could not publish is logged and lost). It
// returns nil.
func (s *Sink) Close() error {
	if s.report != nil {
		s.report.stop()
	}
	return nil
}

// WriteTimeout is how long a Write may wait for JetStream to store its copies.
func (s *Sink) WriteTimeout() time.Duration { return PublishTimeout }

// Write matches e once and stores a copy on the subject of every matched rule whose FromSequence is below the
// record's stream sequence, publishing them together and returning once JetStream acknowledged every one. A copy's
// Nats-Msg-Id hashes the record's id with the rule, so copies stored before a crash are not stored twice when the
// record is retried. An archive's copy (Rule.Archive) is stored the same way, in Rule.Stream, with
// stream.HeaderStoredAt the record's stored time.
//
// For an event of a record batch written with a connector.Batch (the runtime's, Batches), Write leaves its copies
// to the Batch and returns: once the batch's events are handled, the runtime flushes them, and the copies for one
// rule of the batch's events are stored as record batches (stream.EncodeBatches, at the server's max payload) whose
// events keep the ids they would have alone (stream.HeaderBatchIDs). Copies to archives and to one target of a
// replay stay messages of their own.
//
// The record's headers (connector.Meta.Header) restrict what it is routed to (replaySelection): a record a replay
// stored (stream.HeaderReplay) is never archived; with stream.HeaderReplayRules it goes only to those rules; with
// stream.HeaderReplayTarget <ruleId>.<targetId> only to that rule, and its copy goes to the target's redrive subject
// (stream.Names.RedriveSubject of eb.bus.id) instead of the rule's. Rule ids the table does not have are ignored.
//
// Once every copy is stored (with a Batch: once the Batch's flush stored them), it counts the event's type for the
// report of event types (when the router reports them) and, when the bus's log is at INFO or TRACE, writes the
// records of what it matched (logRouted), archives left out, without waiting for them to be stored. It reports the
// copies' rules to the task (connector.ReportRoutedTo), archives left out: 0 when no rule matched, or only
// archives, or only rules whose FromSequence excludes the record. A record without JetStream metadata, whose JSON
// form cannot be built, or whose replay headers cannot be read, is a permanent error; a copy that was not stored
// is a retryable one.
func (s *Sink) Write(ctx context.Context, e *event.Event) error {
	meta, ok := connector.MetaFrom(ctx)
	if !ok {
		return connector.Permanent(errors.New("router: record without JetStream metadata"))
	}
	sel, err := s.replaySelection(meta)
	if err != nil {
		return connector.Permanent(err)
	}
	// Rules match the view (a resources extension as its array); the copies are the event itself (stream.Encode).
	// An event of a record batch has its JSON form already: the batch's (meta.JSON).
	var view []byte
	if meta.JSON != nil {
		view = cloudevent.MatchViewOf(e, meta.JSON)
	} else if view, err = cloudevent.MatchView(e); err != nil {
		return connector.Permanent(fmt.Errorf("router: JSON form of the event: %w", err))
	}
	all, err := s.matcher.Match(view)
	if err != nil {
		return connector.Permanent(fmt.Errorf("router: matching: %w", err))
	}
	var later *copies // the Batch's copies, when the runtime gives one
	if b, ok := connector.BatchFrom(ctx); ok {
		later = b.Defer(s, func() connector.Flusher { return &copies{s: s} }).(*copies)
	}
	now := &copies{s: s}                   // copies stored before Write returns
	matched := make([]string, 0, len(all)) // rules, not archives, the record may go to
	routed := make([]string, 0, len(all))  // rules, not archives, that get a copy
	storedAt := meta.Timestamp
	if storedAt.IsZero() {
		storedAt = time.Now()
	}
	sc := trace.SpanContextFromContext(ctx) // the route span's, when the worker traces
	for _, id := range all {
		r := s.rules[id]
		if !sel.allows(r) {
			continue
		}
		if !r.Archive {
			matched = append(matched, id)
		}
		if r.FromSequence >= meta.Sequence {
			continue
		}
		if !r.Archive {
			routed = append(routed, id)
		}
		msgID := stream.HopMsgID(meta.ID(), "route", r.ID)
		expect := cmp.Or(r.Stream, meta.Stream)
		if later != nil && !r.Archive && sel.target == "" {
			later.add(r.ID, r.Subject, expect, e, meta.JSON, msgID, sc)
			continue
		}
		m := stream.Encode(e)
		m.Subject = r.Subject
		if sel.target != "" {
			m.Subject = s.names.RedriveSubject(sel.busID, r.ID, sel.target)
		}
		m.Header.Set(nats.MsgIdHdr, msgID)
		if r.Archive {
			m.Header.Set(stream.HeaderStoredAt, stream.FormatStoredAt(storedAt))
		}
		tracing.Inject(ctx, m.Header)
		c := now
		if later != nil {
			c = later
		}
		c.single(r.ID, m, expect)
	}
	if err := now.Flush(ctx); err != nil {
		return fmt.Errorf("router: storing copies of stream %s sequence %s: %w", meta.Stream,
			strconv.FormatUint(meta.Sequence, 10), err)
	}
	done := routedEvent{e: e, at: meta.Timestamp}
	if s.log.Enabled(stream.LogInfo) {
		m, traceID := meta, traceIDOf(ctx) // meta itself, captured, would be moved to the heap for every event
		done.log = func() { s.logRouted(m, e, view, matched, routed, sel, traceID) }
	}
	if later != nil {
		later.stored = append(later.stored, done) // once the Batch's copies are
	} else {
		s.routed(done)
	}
	connector.ReportRoutedTo(ctx, routed)
	return nil
}

// routedEvent is what a Write does once its copies are stored: count the event's type (e stored at at) and, when
// the bus's log is at INFO or TRACE, write what it matched (log). A value, not a closure: one for every event routed.
type routedEvent struct {
	e   *event.Event
	at  time.Time
	log func()
}

// routed does what r says once its event's copies are stored.
func (s *Sink) routed(r routedEvent) {
	if s.types != nil {
		// Counted once stored: a Write that failed and is retried counts once, when it succeeds.
		at := r.at
		if at.IsZero() {
			at = time.Now().UTC()
		}
		s.types.observe(cloudevent.Source(r.e), r.e.Type(), r.e.DataContentType(), r.e.Data(), at)
	}
	if r.log != nil {
		r.log()
	}
}

// Batches marks the router as a connector.Batcher.
func (s *Sink) Batches() {}

// copies are the copies of one Write, or of the events of one record batch (a connector.Flusher of its Batch),
// waiting to be published.
type copies struct {
	s       *Sink
	rules   []*ruleCopies // in the order of their first copy
	byRule  map[string]*ruleCopies
	singles []singleCopy
	// stored are what the Writes do once their copies are stored: count the event types, write the bus log.
	stored []routedEvent
}

// ruleCopies are the copies of a record batch's events for one rule, stored as record batches.
type ruleCopies struct {
	rule, subject, stream string
	events                []*event.Event
	jsons                 [][]byte // their JSON forms, nil for one that has none yet
	ids                   []string
	spans                 []trace.SpanContext
}

// singleCopy is a copy stored as a message of its own.
type singleCopy struct {
	rule, stream string
	msg          *nats.Msg
}

// add leaves a copy of e (whose JSON form is form, nil when it has none yet) for rule (on subject, in stream) with
// the id msgID, made in the span sc, to be stored in a record batch of the rule's copies.
func (c *copies) add(rule, subject, streamName string, e *event.Event, form []byte, msgID string, sc trace.SpanContext) {
	rc := c.byRule[rule]
	if rc == nil {
		if c.byRule == nil {
			c.byRule = map[string]*ruleCopies{}
		}
		rc = &ruleCopies{rule: rule, subject: subject, stream: streamName}
		c.byRule[rule] = rc
		c.rules = append(c.rules, rc)
	}
	rc.events = append(rc.events, e)
	rc.jsons = append(rc.jsons, form)
	rc.ids = append(rc.ids, msgID)
	rc.spans = append(rc.spans, sc)
}

// single leaves m, a copy for rule expected in streamName, to be stored as it is.
func (c *copies) single(rule string, m *nats.Msg, streamName string) {
	c.singles = append(c.singles, singleCopy{rule: rule, stream: streamName, msg: m})
}

// Flush publishes the copies together, a rule's as record batches of consecutive copies within the server's max
// payload (an event alone in its part is a message of Encode, as Write stores it without a Batch), and returns
// once JetStream acknowledged every one, or with the errors of those it did not. Each message's Nats-Msg-Id
// hashes its events' ids, so the same record batch flushed again stores nothing twice.
func (c *copies) Flush(ctx context.Context) error {
	type pending struct {
		rule string
		f    jetstream.PubAckFuture
	}
	var futures []pending
	var errs []error
	publish := func(rule string, m *nats.Msg, streamName string) {
		f, err := c.s.js.PublishMsgAsync(m, jetstream.WithExpectStream(streamName))
		if err != nil {
			errs = append(errs, fmt.Errorf("rule %s: %w", rule, err))
			return
		}
		futures = append(futures, pending{rule: rule, f: f})
	}
	maxPayload := 0
	if len(c.rules) > 0 {
		maxPayload = stream.MaxPayload(c.s.js.Conn())
	}
	for _, rc := range c.rules {
		traces := make([]string, len(rc.spans))
		for i, sc := range rc.spans {
			traces[i] = tracing.TraceParentOf(sc)
		}
		parts, err := stream.EncodeBatches(rc.events, rc.jsons, traces, rc.ids, maxPayload)
		if err != nil { // only a mistake of ours: not one id and trace per event
			errs = append(errs, fmt.Errorf("rule %s: %w", rc.rule, err))
			continue
		}
		for _, part := range parts {
			m := part.Msg
			m.Subject = rc.subject
			if part.To-part.From == 1 {
				m.Header.Set(nats.MsgIdHdr, rc.ids[part.From])
				tracing.Inject(trace.ContextWithSpanContext(context.Background(), rc.spans[part.From]), m.Header)
			} else {
				m.Header.Set(nats.MsgIdHdr, stream.BatchMsgID(rc.ids[part.From:part.To]))
			}
			publish(rc.rule, m, rc.stream)
		}
	}
	for _, sc := range c.singles {
		publish(sc.rule, sc.msg, sc.stream)
	}
	stored := c.stored
	c.rules, c.byRule, c.singles, c.stored = nil, nil, nil, nil
	if len(futures) > 0 {
		timer := time.NewTimer(PublishTimeout)
		defer timer.Stop()
		for _, p := range futures {
			select {
			case <-p.f.Ok():
			case err := <-p.f.Err():
				errs = append(errs, fmt.Errorf("rule %s: %w", p.rule, err))
			case <-ctx.Done():
				return fmt.Errorf("waiting for copies to be stored: %w", ctx.Err())
			case <-timer.C:
				return errors.New("timed out waiting for copies to be stored")
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, r := range stored {
		c.s.routed(r)
	}
	return nil
}

// selection is what a record's replay headers let it be routed to.
type selection struct {
	replayed bool            // stored by a replay (or restricted by one): archives get no copy
	rules    map[string]bool // the only rules allowed; nil: every rule
	// target, when set, is the one target of the one rule in rules that the copy goes to, on busID's redrive
	// subject of that rule and target.
	target, busID string
}

// allows reports whether r may get a copy of the record.
func (sel selection) allows(r Rule) bool {
	if r.Archive {
		return !sel.replayed
	}
	return sel.rules == nil || sel.rules[r.ID]
}

// replaySelection reads the replay headers of the record meta describes: stream.HeaderReplay, HeaderReplayRules
// (comma-separated rule ids) and HeaderReplayTarget (<ruleId>.<targetId>, which wins over HeaderReplayRules). A
// record without them may go to every rule and archive. An error says the headers cannot be followed: a target
// that is not <ruleId>.<targetId> of NATS tokens, or a bus that is not known for its redrive subject.
func (s *Sink) replaySelection(meta connector.Meta) (selection, error) {
	h := meta.Header
	target, rules := h.Get(stream.HeaderReplayTarget), h.Get(stream.HeaderReplayRules)
	sel := selection{replayed: h.Get(stream.HeaderReplay) != "" || target != "" || rules != ""}
	switch {
	case target != "":
		ruleID, targetID, ok := strings.Cut(target, ".")
		if !ok || !token(ruleID) || !token(targetID) {
			return selection{}, fmt.Errorf("router: header %s: %q is not <ruleId>.<targetId>", stream.HeaderReplayTarget, target)
		}
		sel.busID = s.busID
		if sel.busID == "" {
			sel.busID = s.busOf(meta.Subject)
		}
		if sel.busID == "" {
			return selection{}, fmt.Errorf("router: header %s: the bus is unknown (%s is not set)", stream.HeaderReplayTarget, KeyBusID)
		}
		sel.rules, sel.target = map[string]bool{ruleID: true}, targetID
	case rules != "":
		sel.rules = map[string]bool{}
		for id := range strings.SplitSeq(rules, ",") {
			if id = strings.TrimSpace(id); id != "" {
				sel.rules[id] = true
			}
		}
	}
	return sel, nil
}

// busOf returns the bus whose .in subject subject is, or "".
func (s *Sink) busOf(subject string) string {
	prefix := s.names.Cluster + ".bus."
	if !strings.HasPrefix(subject, prefix) || !strings.HasSuffix(subject, ".in") {
		return ""
	}
	bus := strings.TrimSuffix(strings.TrimPrefix(subject, prefix), ".in")
	if !token(bus) {
		return ""
	}
	return bus
}

// token reports whether v is one token of a literal NATS subject.
func token(v string) bool { return v != "" && !strings.Contains(v, ".") && literalSubject(v) }

// SpanName is the verb of the router's spans when the worker traces (connector.SpanNamer).
func (s *Sink) SpanName() string { return "route" }

// LogsOwnRecords is true: the router writes the records of the events it routed (connector.SelfLogging).
func (s *Sink) LogsOwnRecords() bool { return true }

// LogDropped counts the router's bus-log records that could not be published.
func (s *Sink) LogDropped() uint64 { return s.log.Dropped() }
