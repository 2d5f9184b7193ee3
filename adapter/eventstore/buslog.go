package eventstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/deadletter"
	"github.com/eventbridge-go/eventbridge/domain/inspect"
	"github.com/eventbridge-go/eventbridge/domain/replay"
	"github.com/eventbridge-go/eventbridge/stream"
)

// BusLog reads the bus logs: each account's log stream (<cluster>_LOG_<account>), one subject per bus, scanned
// with short-lived consumers that acknowledge nothing.
type BusLog struct {
	js    jetstream.JetStream
	names stream.Names
}

var (
	_ inspect.Log           = (*BusLog)(nil)
	_ deadletter.RedriveLog = (*BusLog)(nil)
)

// NewBusLog returns the reader of the bus logs of the installation named cluster on the JetStream context js.
func NewBusLog(js jetstream.JetStream, cluster string) *BusLog {
	return &BusLog{js: js, names: stream.Names{Cluster: cluster}}
}

// Records scans the bus's subject of its account's log stream from q.After+1 (or from q.Filter.From's time on a
// first page), keeps what q.Filter selects and stops at q.Limit matches, after q.MaxScan records read, at the
// first record written after q.Filter.To, or at the end; it returns the id of the last record read when more may
// follow, else 0.
func (l *BusLog) Records(ctx context.Context, b *bus.Bus, q inspect.LogQuery) ([]inspect.LogRecord, uint64, error) {
	st, err := l.js.Stream(ctx, l.names.LogStream(b.AccountID()))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading the log stream of account %s: %w", b.AccountID(), err)
	}
	maxScan := q.MaxScan
	if maxScan <= 0 {
		maxScan = inspect.LogScanLimit
	}
	var out []inspect.LogRecord
	next, err := scan(ctx, st, scanQuery{subject: l.names.LogSubject(b.AccountID(), b.ID()), after: q.After, from: q.Filter.From,
		to: q.Filter.To, limit: q.Limit, maxScan: maxScan, what: "the log of bus " + b.Name()},
		func(seq uint64, _ time.Time, m jetstream.Msg) int {
			r, err := stream.DecodeLogRecord(m.Data())
			if err != nil {
				return 0
			}
			rec := logRecordOf(b.AccountID(), seq, r)
			if !q.Filter.Matches(&rec) {
				return 0
			}
			out = append(out, rec)
			return 1
		})
	if err != nil {
		return nil, 0, err
	}
	return out, next, nil
}

// logRecordOf is the domain's form of a stored record: the rule and target of a target's records are read from
// its connector's name.
func logRecordOf(accountID string, id uint64, r stream.LogRecord) inspect.LogRecord {
	out := inspect.LogRecord{
		ID: id, Time: r.Time, Level: r.Level, Type: r.Type, EventID: r.EventID, EventSource: r.EventSource,
		EventType: r.EventType, StoredAt: r.StoredAt, Sequence: r.Sequence, Rule: r.Rule, Connector: r.Connector,
		Attempt: r.Attempt, LatencyMs: r.LatencyMs, ErrorClass: r.ErrorClass, HTTPStatus: r.HTTPStatus,
		Message: r.Message, Snippet: r.Snippet, Explanation: r.Explanation, Omitted: r.Omitted, Replay: r.Replay, TraceID: r.TraceID, Event: r.Event,
	}
	if _, ruleName, targetName, ok := domain.TargetConnector(accountID, r.Connector); ok {
		out.Rule, out.Target = ruleName, targetName
	}
	return out
}

// WriteRecord stores one record in the log of bus b, waiting for JetStream's acknowledgement (the control
// plane's own records: redrives).
func (l *BusLog) WriteRecord(ctx context.Context, b *bus.Bus, r stream.LogRecord) error {
	m, err := stream.EncodeLogRecord(l.names.LogSubject(b.AccountID(), b.ID()), r)
	if err != nil {
		return err
	}
	if _, err := l.js.PublishMsg(ctx, m); err != nil {
		return fmt.Errorf("writing a record to the log of bus %s: %w", b.Name(), err)
	}
	return nil
}

// Replayed records a replay's start or end in the log of its bus b (the REPLAY_* record types): typ is one of
// stream.LogReplayStarted, LogReplayCompleted, LogReplayCancelled, LogReplayFailed.
func (l *BusLog) Replayed(ctx context.Context, b *bus.Bus, r *replay.Replay, ended replay.State) error {
	typ, msg := stream.LogReplayStarted, fmt.Sprintf("replay of archive %s, events the bus stored in [%s, %s), to %s, at most %d per second",
		r.ArchiveName, r.EventStartTime.Format(time.RFC3339Nano), r.EventEndTime.Format(time.RFC3339Nano), destinationOf(r), r.Rate)
	switch ended {
	case replay.Completed:
		typ, msg = stream.LogReplayCompleted, fmt.Sprintf("replay completed: %d events replayed, %d duplicates", r.Progress.Replayed, r.Progress.Duplicates)
	case replay.Cancelled:
		typ, msg = stream.LogReplayCancelled, fmt.Sprintf("replay cancelled after %d events replayed", r.Progress.Replayed)
	case replay.Failed:
		typ, msg = stream.LogReplayFailed, fmt.Sprintf("replay failed after %d events replayed: %s", r.Progress.Replayed, r.StateReason)
	}
	return l.WriteRecord(ctx, b, stream.LogRecord{Time: time.Now().UTC(), Type: typ, Replay: r.Name, Message: msg})
}

// destinationOf says where a replay puts its events.
func destinationOf(r *replay.Replay) string {
	switch d := r.Destination; {
	case d.TargetID != "":
		return "target " + d.TargetName + " of rule " + d.TargetRuleName
	case len(d.RuleNames) > 0:
		return "rules " + strings.Join(d.RuleNames, ", ")
	}
	return "every rule"
}

// Redriven records EVENT_REDRIVEN in the log of bus b: the dead letter dl went back to its target.
func (l *BusLog) Redriven(ctx context.Context, b *bus.Bus, dl *deadletter.DeadLetter) error {
	ev := dl.Event()
	return l.WriteRecord(ctx, b, stream.LogRecord{
		Time: time.Now().UTC(), Type: stream.LogEventRedriven, EventID: ev.ID(), EventSource: ev.Source(), EventType: ev.Type(),
		Connector: dl.Connector(), Attempt: dl.Attempts(),
		Message: fmt.Sprintf("dead letter %s (%s after %d attempts: %s) redriven to its target", dl.ID(), dl.ErrorClass(), dl.Attempts(), dl.Reason()),
	})
}
