package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/domain/inspect"
	"github.com/eventbridge-go/eventbridge/web"
)

// TestBusEventInput is an event to match against every rule of a bus.
type TestBusEventInput struct {
	// Event is a CloudEvent in the JSON format (attributes at the top level, the payload under "data").
	Event json.RawMessage `json:"event" swaggertype:"object"`
} //@name TestBusEventInput

// RuleVerdict is how one rule of the bus takes the event.
type RuleVerdict struct {
	Rule  string `json:"rule" example:"created"`
	State string `json:"state" example:"ENABLED" enums:"ENABLED,DISABLED"`
	Match bool   `json:"match" example:"false"`
	// Explanation is the first condition of the rule's pattern that the event fails; null on a match.
	Explanation *PatternExplanation `json:"explanation"`
} //@name RuleVerdict

// TestBusEventOutput is every rule of the bus, in the order of their names, with its verdict.
type TestBusEventOutput struct {
	MatchedCount int           `json:"matchedCount" example:"1"`
	Rules        []RuleVerdict `json:"rules"`
} //@name TestBusEventOutput

// StoredEvent is an event as the bus holds it.
type StoredEvent struct {
	// Sequence is the event's place in the bus's stream. The events of one PutEvents call are stored together,
	// at one sequence, each with its index.
	Sequence uint64 `json:"sequence" example:"42"`
	// Index is the event's place among those stored at its sequence (0 for the first, and for an event stored
	// alone).
	Index int `json:"index" example:"0"`
	// StoredAt is when the bus stored it (the time the client set is the event's own "time").
	StoredAt time.Time `json:"storedAt" example:"2026-12-01T12:00:00.123Z"`
	// Event is the CloudEvent in the JSON format.
	Event json.RawMessage `json:"event" swaggertype:"object"`
} //@name StoredEvent

// StoredEventList is one page of a bus's events, oldest first.
type StoredEventList struct {
	Events []StoredEvent `json:"events"`
	// NextToken asks for the next page; absent on the last page. A page reads at most 10,000 stored messages (an
	// event, or the events of one PutEvents call), so a page with a selective filter may hold fewer than limit,
	// even none, and a nextToken.
	NextToken string `json:"nextToken,omitempty"`
} //@name StoredEventList

// testBusEvent matches an event against every rule of a bus.
//
//	@Summary		Test an event against every rule of a bus
//	@Description	Matches a CloudEvent (JSON format) against every rule of the bus, enabled or not, in the order of
//	@Description	their names, as the bus's router matches it once stored, and explains each rule that does not
//	@Description	match: the first condition of its pattern that fails, with the field's path, the pattern's
//	@Description	alternatives, the event's value and the reason. Nothing is stored.
//	@Tags			events
//	@Accept			json
//	@Produce		json
//	@Param			X-Account-Id	header		string				false	"account (default: the caller's own)"
//	@Param			bus				path		string				true	"bus name"
//	@Param			body			body		TestBusEventInput	true	"the event"
//	@Success		200				{object}	TestBusEventOutput
//	@Failure		400				{object}	web.Problem	"InvalidEvent naming the problem, MalformedRequest"
//	@Failure		404				{object}	web.Problem	"BusNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/buses/{bus}/test-event [post]
func (a *api) testBusEvent(c *gin.Context, in *TestBusEventInput) (int, any, error) {
	ev := bytes.TrimSpace(in.Event)
	if len(ev) == 0 || ev[0] != '{' {
		return 0, nil, domain.Invalid("event", "event is required and must be a CloudEvent, a JSON object")
	}
	verdicts, err := a.s.Inspect.TestEvent(c.Request.Context(), web.AccountOf(c), c.Param("bus"), ev)
	if err != nil {
		return 0, nil, err
	}
	out := TestBusEventOutput{Rules: verdictsOf(verdicts)}
	for _, v := range verdicts {
		if v.Match {
			out.MatchedCount++
		}
	}
	return http.StatusOK, out, nil
}

// eventFilterOf reads the filter of a search or a tail from the query.
func eventFilterOf(c *gin.Context) (inspect.Filter, error) {
	parse := func(field string) (time.Time, error) { return queryTime(c, field) }
	from, err := parse("from")
	if err != nil {
		return inspect.Filter{}, err
	}
	to, err := parse("to")
	if err != nil {
		return inspect.Filter{}, err
	}
	var p []byte
	if v := c.Query("pattern"); v != "" {
		p = []byte(v)
	}
	f, err := inspect.NewFilter(from, to, c.Query("type"), c.Query("source"), c.Query("subject"), c.Query("id"), p)
	if de, ok := domain.As(err); ok && de.Field == "" {
		return inspect.Filter{}, de.WithField("pattern")
	}
	return f, err
}

// eventPlace is what names a stored event in a tail: its sequence, and its index after a dot when not 0.
func eventPlace(s inspect.Stored) string {
	if s.Index == 0 {
		return strconv.FormatUint(s.Sequence, 10)
	}
	return strconv.FormatUint(s.Sequence, 10) + "." + strconv.Itoa(s.Index)
}

func storedEventOf(s inspect.Stored) StoredEvent {
	ev, err := cloudevent.Marshal(s.Event)
	if err != nil {
		ev = []byte("null") // a stored event always marshals; never fail a whole page for one
	}
	return StoredEvent{Sequence: s.Sequence, Index: s.Index, StoredAt: s.Time, Event: ev}
}

// searchEvents answers a page of a bus's events.
//
//	@Summary		Search the events of a bus
//	@Description	The events stored on the bus (PutEvents of every dialect, webhooks, sources), oldest first, within
//	@Description	the bus's retention, selected by the time they were stored, their type, source and subject (exact
//	@Description	values) and an event pattern. The search scans the bus's stream: a page reads at most 10,000
//	@Description	stored messages (an event, or the events of one PutEvents call), so it may hold fewer than limit,
//	@Description	even none, and a nextToken.
//	@Tags			events
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			bus				path		string	true	"bus name"
//	@Param			from			query		string	false	"stored at or after this RFC 3339 time"
//	@Param			to				query		string	false	"stored at or before this RFC 3339 time"
//	@Param			type			query		string	false	"the event's type"
//	@Param			source			query		string	false	"the event's source"
//	@Param			subject			query		string	false	"the event's subject"
//	@Param			id				query		string	false	"the event's id"
//	@Param			pattern			query		string	false	"an event pattern (JSON), as a rule's"
//	@Param			limit			query		int		false	"page size, 1 to 500 (default 50)"
//	@Param			nextToken		query		string	false	"token of the next page from the previous answer"
//	@Success		200				{object}	StoredEventList
//	@Failure		400				{object}	web.Problem	"ValidationError naming the parameter, InvalidEventPattern"
//	@Failure		404				{object}	web.Problem	"BusNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/buses/{bus}/events [get]
func (a *api) searchEvents(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	f, err := eventFilterOf(c)
	if err != nil {
		return 0, nil, err
	}
	evs, next, err := a.s.Inspect.Search(c.Request.Context(), web.AccountOf(c), c.Param("bus"), f, page)
	if err != nil {
		return 0, nil, err
	}
	out := StoredEventList{Events: make([]StoredEvent, 0, len(evs)), NextToken: next}
	for _, s := range evs {
		out.Events = append(out.Events, storedEventOf(s))
	}
	return http.StatusOK, out, nil
}

// TailSkipped tells a tail's client how many matching events were not sent, over the tail's rate.
type TailSkipped struct {
	Skipped uint64 `json:"skipped" example:"12"`
} //@name TailSkipped

// tailKeepAlive is how often a quiet tail sends a comment, so that proxies keep the connection.
const tailKeepAlive = 15 * time.Second

// tailEvents streams the events stored on a bus from now on.
//
//	@Summary		Tail the events of a bus
//	@Description	A Server-Sent Events stream of the events stored on the bus from now on that match the filter
//	@Description	(type, source, subject, pattern), in order. It starts with an event "ready" once it listens; each
//	@Description	event is an SSE event "event" whose id is its sequence (sequence.index for the events of a call
//	@Description	after its first) and a StoredEvent as data. A tail sends
//	@Description	at most 100 events a second: matching events beyond are not sent, and an SSE event "skipped"
//	@Description	(TailSkipped) says how many before the next one. An account has at most 5 tails open at once per
//	@Description	replica (429 TooManyTails). A comment is sent every 15 s while quiet.
//	@Tags			events
//	@Produce		text/event-stream
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			bus				path		string	true	"bus name"
//	@Param			type			query		string	false	"the event's type"
//	@Param			source			query		string	false	"the event's source"
//	@Param			subject			query		string	false	"the event's subject"
//	@Param			pattern			query		string	false	"an event pattern (JSON), as a rule's"
//	@Success		200				{object}	StoredEvent	"text/event-stream of StoredEvent"
//	@Failure		400				{object}	web.Problem	"ValidationError naming the parameter, InvalidEventPattern"
//	@Failure		404				{object}	web.Problem	"BusNotFound"
//	@Failure		429				{object}	web.Problem	"TooManyTails (Retry-After)"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/buses/{bus}/tail [get]
func (a *api) tailEvents(c *gin.Context) {
	f, err := eventFilterOf(c)
	if err != nil {
		a.writeError(c, err)
		return
	}
	ctx := c.Request.Context()
	w := c.Writer
	var mu sync.Mutex // the events and the keep-alive comments are written from two goroutines
	started, closed := false, false
	defer func() { mu.Lock(); closed = true; mu.Unlock() }() // no keep-alive once the handler returned
	write := func(format string, args ...any) error {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return net.ErrClosed
		}
		if _, err := fmt.Fprintf(w, format, args...); err != nil {
			return err
		}
		w.Flush()
		return nil
	}
	send := func(kind, id string, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if id != "" {
			return write("event: %s\nid: %s\ndata: %s\n\n", kind, id, data)
		}
		return write("event: %s\ndata: %s\n\n", kind, data)
	}
	ready := func() {
		started = true
		// A tail streams for as long as the client stays: lift the listener's write timeout for it.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		mu.Lock()
		w.WriteHeader(http.StatusOK)
		mu.Unlock()
		_ = send("ready", "", struct{}{})
		go func() {
			t := time.NewTicker(tailKeepAlive)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					if write(": keep-alive\n\n") != nil {
						return
					}
				}
			}
		}()
	}
	err = a.s.Inspect.Tail(ctx, web.AccountOf(c), c.Param("bus"), f, ready, func(te inspect.TailEvent) error {
		if te.Skipped > 0 {
			if err := send("skipped", "", TailSkipped{Skipped: te.Skipped}); err != nil {
				return err
			}
		}
		return send("event", eventPlace(te.Stored), storedEventOf(te.Stored))
	})
	if err != nil && !started {
		a.writeError(c, err)
	}
}

// BusLogRecord is one step of what happened to one event of a bus.
type BusLogRecord struct {
	// ID is the record's place in its account's log.
	ID    string    `json:"id" example:"1042"`
	Time  time.Time `json:"time" example:"2026-12-01T12:00:00.120Z"`
	Level string    `json:"level" example:"ERROR" enums:"ERROR,INFO,TRACE"`
	// Type is the step: EVENT_RECEIPT, RULE_MATCH, NO_STANDARD_RULES_MATCHED, RULE_NO_MATCH,
	// RULE_NO_MATCH_OMITTED, INVOCATION_ATTEMPT_SUCCESS, INVOCATION_ATTEMPT_RETRYABLE_FAILURE,
	// INVOCATION_ATTEMPT_PERMANENT_FAILURE, INVOCATION_DLQ, INVOCATION_DROPPED, INVOCATION_FAILURE, EVENT_FILTERED,
	// EVENT_REDRIVEN, REPLAY_STARTED, REPLAY_COMPLETED, REPLAY_CANCELLED, REPLAY_FAILED (docs/events.md).
	Type        string `json:"type" example:"INVOCATION_ATTEMPT_RETRYABLE_FAILURE"`
	EventID     string `json:"eventId" example:"42"`
	EventSource string `json:"eventSource" example:"shop.web"`
	EventType   string `json:"eventType,omitempty" example:"order.created"`
	// StoredAt and Sequence are when and where the bus stored what the step read: the event for the router's
	// records, its copy for the rule (or its redrive) for a target's.
	StoredAt *time.Time `json:"storedAt,omitempty"`
	Sequence uint64     `json:"sequence,omitempty" example:"7"`
	Rule     string     `json:"rule,omitempty" example:"created"`
	Target   string     `json:"target,omitempty" example:"hook"`
	// Connector is the runtime connector that wrote the record.
	Connector  string  `json:"connector,omitempty" example:"eb.default.orders.created.hook"`
	Attempt    uint64  `json:"attempt,omitempty" example:"1"`
	LatencyMs  float64 `json:"latencyMs,omitempty" example:"12.5"`
	ErrorClass string  `json:"errorClass,omitempty" example:"http-5xx"`
	HTTPStatus int     `json:"httpStatus,omitempty" example:"503"`
	Message    string  `json:"message,omitempty"`
	// Snippet is the start of a failed attempt's answer (includeDetail FULL).
	Snippet string `json:"snippet,omitempty"`
	// Explanation is why the event does not match the rule (RULE_NO_MATCH).
	Explanation json.RawMessage `json:"explanation,omitempty" swaggertype:"object"`
	// Omitted is how many more rules did not match (RULE_NO_MATCH_OMITTED).
	Omitted int `json:"omitted,omitempty"`
	// Replay names the replay of a REPLAY_* record.
	Replay string `json:"replay,omitempty"`
	// TraceID is the OpenTelemetry trace (hex) of the step when the worker traces (docs/tracing.md): look it up
	// in the tracing backend.
	TraceID string `json:"traceId,omitempty" example:"0af7651916cd43dd8448eb211c80319c"`
	// Event is the event (includeDetail FULL, EVENT_RECEIPT).
	Event json.RawMessage `json:"event,omitempty" swaggertype:"object"`
} //@name BusLogRecord

// BusLogPage is one page of a bus's log, oldest first.
type BusLogPage struct {
	Records []BusLogRecord `json:"records"`
	// NextToken asks for the next page; absent on the last page. A page reads at most 10,000 records.
	NextToken string `json:"nextToken,omitempty"`
} //@name BusLogPage

func busLogRecordOf(r inspect.LogRecord) BusLogRecord {
	out := BusLogRecord{
		ID: fmt.Sprint(r.ID), Time: r.Time, Level: r.Level, Type: r.Type, EventID: r.EventID, EventSource: r.EventSource,
		EventType: r.EventType, Sequence: r.Sequence, Rule: r.Rule, Target: r.Target, Connector: r.Connector,
		Attempt: r.Attempt, LatencyMs: r.LatencyMs, ErrorClass: r.ErrorClass, HTTPStatus: r.HTTPStatus,
		Message: r.Message, Snippet: r.Snippet, Explanation: r.Explanation, Omitted: r.Omitted, Replay: r.Replay, TraceID: r.TraceID, Event: r.Event,
	}
	if !r.StoredAt.IsZero() {
		at := r.StoredAt
		out.StoredAt = &at
	}
	return out
}

// readBusLog answers a page of a bus's log.
//
//	@Summary		Read a bus's log
//	@Description	The records of what happened to the bus's events, oldest first, as its logConfig.level
//	@Description	records them: events read by the router, rules matched (and, at TRACE, not matched, with why),
//	@Description	every attempt per target with its outcome, latency and error class, dead letters, redrives.
//	@Description	Filters scan the account's log: a page reads at most 10,000 records, so it may hold fewer than
//	@Description	limit, even none, and a nextToken. docs/events.md lists the record types.
//	@Tags			events
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			bus				path		string	true	"bus name"
//	@Param			from			query		string	false	"written at or after this RFC 3339 time"
//	@Param			to				query		string	false	"written at or before this RFC 3339 time"
//	@Param			level			query		string	false	"ERROR: failures only; INFO: also successes; TRACE: all (default)"	Enums(ERROR, INFO, TRACE)
//	@Param			rule			query		string	false	"records about this rule"
//	@Param			target			query		string	false	"records about this target"
//	@Param			type			query		string	false	"records of this type"
//	@Param			eventSource		query		string	false	"records of events of this source"
//	@Param			eventId			query		string	false	"records of the event with this id"
//	@Param			limit			query		int		false	"page size, 1 to 500 (default 50)"
//	@Param			nextToken		query		string	false	"token of the next page from the previous answer"
//	@Success		200				{object}	BusLogPage
//	@Failure		400				{object}	web.Problem	"ValidationError naming the parameter"
//	@Failure		404				{object}	web.Problem	"BusNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/buses/{bus}/log [get]
func (a *api) readBusLog(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	parse := func(field string) (time.Time, error) { return queryTime(c, field) }
	from, err := parse("from")
	if err != nil {
		return 0, nil, err
	}
	to, err := parse("to")
	if err != nil {
		return 0, nil, err
	}
	f, err := inspect.NewLogFilter(inspect.LogFilter{From: from, To: to, Level: c.Query("level"), Rule: c.Query("rule"),
		Target: c.Query("target"), Type: c.Query("type"), EventSource: c.Query("eventSource"), EventID: c.Query("eventId")})
	if err != nil {
		return 0, nil, err
	}
	recs, next, err := a.s.Inspect.Log(c.Request.Context(), web.AccountOf(c), c.Param("bus"), f, page)
	if err != nil {
		return 0, nil, err
	}
	out := BusLogPage{Records: make([]BusLogRecord, 0, len(recs)), NextToken: next}
	for _, r := range recs {
		out.Records = append(out.Records, busLogRecordOf(r))
	}
	return http.StatusOK, out, nil
}

// queryTime reads the RFC 3339 time of a query parameter (zero when absent); a malformed one names the parameter.
func queryTime(c *gin.Context, field string) (time.Time, error) {
	v := c.Query(field)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, domain.Invalid(field, "%s %q is not an RFC 3339 time such as 2026-11-30T12:00:00Z", field, v)
	}
	return t, nil
}

// EventTrace is what happened to one event of a bus.
type EventTrace struct {
	Event StoredEvent `json:"event"`
	// MatchedFrom says where the rules' verdicts come from: "log" (what the router recorded when it routed the
	// event; a rule it did not route to has match false) or "current-rules" (recomputed now against the bus's
	// current rules, which may differ from those the router had then).
	MatchedFrom string        `json:"matchedFrom" example:"log" enums:"log,current-rules"`
	Rules       []RuleVerdict `json:"rules"`
	// Log are the bus log's records of the event, oldest first: every attempt per target with its outcome (none
	// when the bus did not log then).
	Log []BusLogRecord `json:"log"`
	// DeadLetters are the event's dead letters in the account's dead-letter stream.
	DeadLetters []DeadLetter `json:"deadLetters"`
} //@name EventTrace

// traceEvent answers what happened to one event of a bus.
//
//	@Summary		Trace one event
//	@Description	The event as the bus stored it, every rule of the bus with whether it matched the event and why not,
//	@Description	the bus log's records of the event (the router's matches, every attempt of every target with its
//	@Description	outcome) and its dead letters. Ids are unique per source: source is required. The event is found
//	@Description	where the log's EVENT_RECEIPT says, else by scanning the bus from `from` (default: the oldest event
//	@Description	it keeps), at most 100,000 events: give `from` near the time it was put on a busy bus.
//	@Tags			events
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			bus				path		string	true	"bus name"
//	@Param			id				path		string	true	"the event's id"
//	@Param			source			query		string	true	"the event's source"
//	@Param			from			query		string	false	"stored at or after this RFC 3339 time (where the scan starts)"
//	@Success		200				{object}	EventTrace
//	@Failure		400				{object}	web.Problem	"ValidationError naming the parameter"
//	@Failure		404				{object}	web.Problem	"BusNotFound, EventNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/buses/{bus}/events/{id}/trace [get]
func (a *api) traceEvent(c *gin.Context) (int, any, error) {
	from, err := queryTime(c, "from")
	if err != nil {
		return 0, nil, err
	}
	tr, err := a.s.Inspect.TraceOf(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Query("source"), c.Param("id"), from)
	if err != nil {
		return 0, nil, err
	}
	out := EventTrace{Event: storedEventOf(tr.Event), MatchedFrom: tr.MatchedFrom, Rules: verdictsOf(tr.Rules),
		Log: make([]BusLogRecord, 0, len(tr.Log)), DeadLetters: make([]DeadLetter, 0, len(tr.DeadLetters))}
	for _, r := range tr.Log {
		out.Log = append(out.Log, busLogRecordOf(r))
	}
	for _, d := range tr.DeadLetters {
		out.DeadLetters = append(out.DeadLetters, deadLetterOf(d))
	}
	return http.StatusOK, out, nil
}

// verdictsOf answers rules' verdicts.
func verdictsOf(vs []inspect.Verdict) []RuleVerdict {
	out := make([]RuleVerdict, 0, len(vs))
	for _, v := range vs {
		rv := RuleVerdict{Rule: v.Rule.Name(), State: string(v.Rule.State()), Match: v.Match}
		if v.Explanation != nil {
			rv.Explanation = explanationOf(v.Explanation)
		}
		out = append(out, rv)
	}
	return out
}
