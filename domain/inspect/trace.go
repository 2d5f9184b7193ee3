package inspect

import (
	"context"
	"fmt"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/domain/deadletter"
)

// ErrEventNotFound is an event the bus does not hold (never put, put on another bus, or older than its retention),
// or that a trace's scan did not reach.
var ErrEventNotFound = &domain.Error{Kind: domain.KindNotFound, Code: "EventNotFound"}

// TraceScanLimit is how many events of a bus a trace reads at most to find its event (from its `from` hint, else
// from the oldest the bus holds) when the bus log does not say where it is.
const TraceScanLimit = 100_000

// How a trace knows which rules an event matched.
const (
	// MatchedFromLog: the bus log's records of the router (INFO or TRACE when the event was routed).
	MatchedFromLog = "log"
	// MatchedAgainstCurrentRules: recomputed now against the bus's current rules, which may differ from those the
	// router had when it routed the event.
	MatchedAgainstCurrentRules = "current-rules"
)

// Trace is what happened to one event of a bus.
type Trace struct {
	Event Stored
	// Rules are every rule of the bus with its verdict on the event, recomputed against the current rules; for
	// MatchedFromLog, Match is what the router recorded for the rules it names.
	Rules       []Verdict
	MatchedFrom string
	// Log are the bus log's records of the event, oldest first (none when the bus did not log).
	Log []LogRecord
	// DeadLetters are the event's dead letters in the account's dead-letter stream (targets with a dead-letter bus
	// send theirs to that bus instead; the log's INVOCATION_DLQ records them all).
	DeadLetters []*deadletter.DeadLetter
}

// TraceOf returns what happened to the event of the bus with that source and id: the event as stored, the rules it
// matched and why the others did not, every record of the bus log about it, and its dead letters. The event is
// found where the log's EVENT_RECEIPT says it is, else by a scan of the bus from `from` (zero: the oldest event
// the bus holds) of at most TraceScanLimit events. Errors: bus.ErrNotFound; ErrEventNotFound; validation.
func (s *Service) TraceOf(ctx context.Context, accountID, busName, source, id string, from time.Time) (*Trace, error) {
	if source == "" {
		return nil, domain.Invalid("source", "source is required: event ids are unique per source")
	}
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, err
	}
	tr := &Trace{}
	var recs []LogRecord
	if s.Logs != nil {
		recs, _, err = s.Logs.Records(ctx, b, LogQuery{Filter: LogFilter{From: from, EventSource: source, EventID: id},
			Limit: domain.MaxPageLimit, MaxScan: LogScanLimit})
		if err != nil {
			return nil, fmt.Errorf("reading the log of bus %s: %w", busName, err)
		}
	}
	var found *Stored
	for _, r := range recs {
		if r.Type == typeEventReceipt && r.Sequence != 0 {
			stored, _ := s.Store.Get(ctx, b, r.Sequence)
			for i := range stored {
				if st := &stored[i]; st.Event.ID() == id && st.Event.Source() == source {
					found = st
					break
				}
			}
			if found != nil {
				break
			}
		}
	}
	if found == nil {
		evs, _, err := s.Store.Events(ctx, b, Query{Filter: Filter{From: from, Source: source, ID: id}, Limit: 1, MaxScan: TraceScanLimit})
		if err != nil {
			return nil, fmt.Errorf("finding event %s of bus %s: %w", id, busName, err)
		}
		if len(evs) == 0 {
			return nil, ErrEventNotFound.With("bus %q holds no event of source %q and id %q stored since %s within the %d events read; "+
				"give from (the time it was put) to search from there", busName, source, id, fromText(from), TraceScanLimit)
		}
		found = &evs[0]
	}
	tr.Event = *found
	// The log's records of the event, read again from when it was stored (the first read started at from, which
	// may be long before: its 10,000 records may not have reached them all).
	if s.Logs != nil {
		tr.Log, _, err = s.Logs.Records(ctx, b, LogQuery{Filter: LogFilter{From: found.Time.Add(-time.Second), EventSource: source, EventID: id},
			Limit: domain.MaxPageLimit, MaxScan: LogScanLimit})
		if err != nil {
			return nil, fmt.Errorf("reading the log of bus %s: %w", busName, err)
		}
	}
	if err := s.traceRules(ctx, b, tr); err != nil {
		return nil, err
	}
	if s.DeadLetters != nil {
		f, err := deadletter.NewFilter(busName, "", "", found.Time, time.Time{})
		if err != nil {
			return nil, err
		}
		dls, _, err := s.DeadLetters.List(ctx, accountID, deadletter.Query{Filter: f, Limit: domain.MaxPageLimit, MaxScan: deadletter.ScanLimit})
		if err != nil {
			return nil, fmt.Errorf("reading the dead letters of account %s: %w", accountID, err)
		}
		for _, dl := range dls {
			if dl.Event().ID() == id && dl.Event().Source() == source {
				tr.DeadLetters = append(tr.DeadLetters, dl)
			}
		}
	}
	return tr, nil
}

// typeEventReceipt is the log record of the router reading an event (stream.LogEventReceipt).
const (
	typeEventReceipt = "EVENT_RECEIPT"
	typeRuleMatch    = "RULE_MATCH"
)

// traceRules gives the trace every rule's verdict against the current rules, and, when the log recorded what the
// router matched, the router's matches instead.
func (s *Service) traceRules(ctx context.Context, b *bus.Bus, tr *Trace) error {
	body, err := cloudevent.MatchView(tr.Event.Event)
	if err != nil {
		return fmt.Errorf("the JSON form of event %s: %w", tr.Event.Event.ID(), err)
	}
	verdicts, err := s.verdicts(ctx, b, body)
	if err != nil {
		return err
	}
	tr.Rules, tr.MatchedFrom = verdicts, MatchedAgainstCurrentRules
	routed, receipt := map[string]bool{}, false
	for _, r := range tr.Log {
		switch r.Type {
		case typeEventReceipt:
			receipt = true
		case typeRuleMatch:
			routed[r.Rule] = true
		}
	}
	if !receipt {
		return nil
	}
	tr.MatchedFrom = MatchedFromLog
	for i := range tr.Rules {
		tr.Rules[i].Match = routed[tr.Rules[i].Rule.Name()]
		if tr.Rules[i].Match {
			tr.Rules[i].Explanation = nil
		}
	}
	return nil
}

func fromText(from time.Time) string {
	if from.IsZero() {
		return "the oldest it keeps"
	}
	return from.Format(time.RFC3339Nano)
}
