package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
)

// LogRecord is one record of a bus's log: a step of what happened to one event.
type LogRecord struct {
	// ID is the record's place in its account's log.
	ID    uint64
	Time  time.Time
	Level string
	Type  string
	// EventID, EventSource and EventType are the event's.
	EventID, EventSource, EventType string
	// StoredAt and Sequence are when and where the bus stored what the writer read.
	StoredAt time.Time
	Sequence uint64
	// Rule and Target name the rule and the target the record is about ("" when none); Connector is the writer.
	Rule, Target, Connector string
	Attempt                 uint64
	LatencyMs               float64
	ErrorClass              string
	HTTPStatus              int
	Message, Snippet        string
	// Explanation is why the event did not match Rule (a pattern explanation as JSON).
	Explanation json.RawMessage
	Omitted     int
	// Replay names the replay of a REPLAY_* record.
	Replay string
	// TraceID is the OpenTelemetry trace of the step when the worker traces.
	TraceID string
	// Event is the event in the CloudEvents JSON format (FULL detail only).
	Event json.RawMessage
}

// LogFilter selects records: by the time they were written (both ends included), by level (Level ERROR keeps
// ERROR records, INFO keeps INFO and ERROR, TRACE all; "" all), by rule and target name, record type, and event
// source and id (exact values; "" selects all).
type LogFilter struct {
	From, To             time.Time
	Level                string
	Rule, Target, Type   string
	EventSource, EventID string
}

// logRank orders the levels of records: ERROR 1, INFO 2, TRACE 3.
func logRank(level string) int {
	switch level {
	case bus.LogError:
		return 1
	case bus.LogInfo:
		return 2
	case bus.LogTrace:
		return 3
	}
	return 0
}

// NewLogFilter validates a filter: From is not after To, the level is one of ERROR, INFO, TRACE, names are names.
// Errors name the parameter.
func NewLogFilter(f LogFilter) (LogFilter, error) {
	if !f.From.IsZero() && !f.To.IsZero() && f.From.After(f.To) {
		return LogFilter{}, domain.Invalid("from", "from (%s) is after to (%s)", f.From.Format(time.RFC3339Nano), f.To.Format(time.RFC3339Nano))
	}
	if f.Level != "" && logRank(f.Level) == 0 {
		return LogFilter{}, domain.Invalid("level", "level %q is not ERROR, INFO or TRACE", f.Level)
	}
	for _, p := range []struct{ field, v string }{{"rule", f.Rule}, {"target", f.Target}} {
		if p.v != "" {
			if err := domain.ValidateNameOf(p.field, p.v); err != nil {
				return LogFilter{}, err
			}
		}
	}
	return f, nil
}

// Matches reports whether f selects r.
func (f LogFilter) Matches(r *LogRecord) bool {
	switch {
	case !f.From.IsZero() && r.Time.Before(f.From), !f.To.IsZero() && r.Time.After(f.To):
		return false
	case f.Level != "" && logRank(r.Level) > logRank(f.Level):
		return false
	case f.Rule != "" && r.Rule != f.Rule, f.Target != "" && r.Target != f.Target, f.Type != "" && r.Type != f.Type:
		return false
	case f.EventSource != "" && r.EventSource != f.EventSource, f.EventID != "" && r.EventID != f.EventID:
		return false
	}
	return true
}

// LogQuery asks a log store for one page of a bus's records.
type LogQuery struct {
	Filter LogFilter
	// After is the record id the scan starts after (0: from Filter.From, else the first record).
	After   uint64
	Limit   int
	MaxScan int
}

// Log reads the bus logs.
type Log interface {
	// Records scans the bus's records in the order they were written and returns those q.Filter selects, at most
	// q.Limit, and the id of the last one read when more may follow (0 at the end). It reads at most q.MaxScan
	// records. A bus whose account has no log has no records.
	Records(ctx context.Context, b *bus.Bus, q LogQuery) ([]LogRecord, uint64, error)
}

// LogScanLimit is the number of records one page of a bus's log reads at most, matching or not.
const LogScanLimit = 10_000

// Log returns one page of the bus's log records that f selects, oldest first, and the next page's token ("" at
// the end). Errors: bus.ErrNotFound; domain.ErrValidation (nextToken); the log's errors.
func (s *Service) Log(ctx context.Context, accountID, busName string, f LogFilter, page domain.Page) ([]LogRecord, string, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, "", err
	}
	after, err := page.AfterSequence()
	if err != nil {
		return nil, "", err
	}
	recs, next, err := s.Logs.Records(ctx, b, LogQuery{Filter: f, After: after, Limit: page.Size(), MaxScan: LogScanLimit})
	if err != nil {
		return nil, "", fmt.Errorf("reading the log of bus %s: %w", busName, err)
	}
	return recs, domain.SequenceToken(next), nil
}
