package router

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/cloudevents/sdk-go/v2/event"
	"go.opentelemetry.io/otel/trace"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/domain/pattern"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// enabledAfter explains why a rule whose pattern matches an event did not get it: its FromSequence.
var enabledAfter = json.RawMessage(`{"reason":"the rule was enabled after the event was stored"}`)

// notReplayed explains why a rule did not get an event a replay stored: the replay names other rules or a target
// of another rule.
var notReplayed = json.RawMessage(`{"reason":"the replay that stored the event does not replay to the rule"}`)

// logRouted writes the bus-log records of an event e (stored as meta says; view is the JSON form its rules
// matched, cloudevent.MatchView) whose copies were stored for the rules routed; matched are the rules whose pattern
// it matched (routed and those its FromSequence excludes) among those sel allows; archives are in neither. Write
// calls it at INFO or above, once every copy was stored:
//
//	EVENT_RECEIPT (with the event at FULL, in the JSON form of cloudevent.Marshal, as stored)
//	RULE_MATCH per rule routed, or NO_STANDARD_RULES_MATCHED when none
//	at TRACE: RULE_NO_MATCH, with its explanation, for the first stream.LogTraceRules rules not routed in the
//	order of their names, then RULE_NO_MATCH_OMITTED with the number of the others, if any.
//
// The records are published asynchronously; it does not wait for them.
func (s *Sink) logRouted(meta connector.Meta, e *event.Event, view []byte, matched, routed []string, sel selection, traceID string) {
	base := stream.LogRecord{
		EventID: e.ID(), EventSource: cloudevent.Source(e), EventType: e.Type(), StoredAt: meta.Timestamp, Sequence: meta.Sequence,
		TraceID: traceID,
	}
	r := base
	r.Type = stream.LogEventReceipt
	if s.log.Full() {
		// The event as stored, not the view; Marshal cannot fail where MatchView, which calls it, did not.
		if body, err := cloudevent.Marshal(e); err == nil {
			r.Event = body
		}
	}
	s.log.Write(r)
	if len(routed) == 0 {
		r = base
		r.Type = stream.LogNoRulesMatched
		s.log.Write(r)
	}
	for _, id := range routed {
		r = base
		r.Type, r.Rule = stream.LogRuleMatch, s.rules[id].Name
		s.log.Write(r)
	}
	if !s.log.Enabled(stream.LogTrace) {
		return
	}
	// routed holds distinct rules of the table: the others are len(byName)-len(routed).
	listed := 0
	for _, id := range s.byName {
		if listed == stream.LogTraceRules {
			break
		}
		if slices.Contains(routed, id) {
			continue
		}
		listed++
		r = base
		r.Type, r.Rule, r.Explanation = stream.LogRuleNoMatch, s.rules[id].Name, s.explain(id, view, matched, sel)
		s.log.Write(r)
	}
	if omitted := len(s.byName) - len(routed) - listed; omitted > 0 {
		r = base
		r.Type, r.Omitted = stream.LogRuleNoMatchOmitted, omitted
		s.log.Write(r)
	}
}

// explain says, as JSON, why the event (view, the form its rules match) did not get a copy for rule id:
// notReplayed when the replay that stored it (sel) leaves the rule out, pattern.Explain of its pattern, or
// enabledAfter when the pattern matches (matched) and the rule's FromSequence excluded the event.
func (s *Sink) explain(id string, view []byte, matched []string, sel selection) json.RawMessage {
	if !sel.allows(s.rules[id]) {
		return notReplayed
	}
	if slices.Contains(matched, id) {
		return enabledAfter
	}
	x, err := pattern.Explain(s.patterns[id], view)
	if err != nil {
		return reason("the pattern could not be explained: " + err.Error())
	}
	if x == nil {
		// The index and the pattern disagree; say so rather than invent a cause.
		return reason("the pattern matches the event")
	}
	b, err := json.Marshal(x)
	if err != nil {
		return reason("the explanation could not be encoded: " + err.Error())
	}
	return b
}

// reason is an explanation that holds a reason only.
func reason(text string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Reason string `json:"reason"`
	}{text})
	return b
}

// traceIDOf is the trace id (hex) of the route span in ctx, "" when the worker does not trace.
func traceIDOf(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}
