package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The bus log: what happened to each event of a bus whose log level is not OFF, as records in the account's log
// stream <cluster>_LOG_<account>, subject <cluster>.log.<account>.<busId>. The router writes what it matched
// (and, at TRACE, what it did not, with the explanation), target tasks write each attempt, the control plane
// writes redrives. Levels follow Amazon EventBridge's LogConfig: ERROR ⊂ INFO ⊂ TRACE.

// LogStream is the bus-log stream of an account: <cluster>_LOG_<account>.
func (n Names) LogStream(accountID string) string { return n.Cluster + "_LOG_" + accountID }

// LogSubject is the subject of a bus's log records: <cluster>.log.<account>.<busId>.
func (n Names) LogSubject(accountID, busID string) string {
	return n.Cluster + ".log." + accountID + "." + busID
}

// LogSubjects is the subject family of an account's log stream.
func (n Names) LogSubjects(accountID string) string { return n.Cluster + ".log." + accountID + ".*" }

// Log levels of a bus (LogConfig.Level). A record has level ERROR, INFO or TRACE; a bus at a level records what
// is at that level and the ones before it in this order.
const (
	LogOff   = "OFF"
	LogError = "ERROR"
	LogInfo  = "INFO"
	LogTrace = "TRACE"
)

// LogLevels are the levels of a bus, from least to most.
var LogLevels = []string{LogOff, LogError, LogInfo, LogTrace}

// LogRank orders levels: OFF 0, ERROR 1, INFO 2, TRACE 3; an unknown level is 0. A record of level r is written
// by a bus at level l when 0 < LogRank(r) <= LogRank(l).
func LogRank(level string) int {
	switch level {
	case LogError:
		return 1
	case LogInfo:
		return 2
	case LogTrace:
		return 3
	}
	return 0
}

// Detail of a bus's log (LogConfig.IncludeDetail): FULL adds the event to the records that say it was stored and
// the answer's snippet to failed attempts; NONE does not.
const (
	LogDetailNone = "NONE"
	LogDetailFull = "FULL"
)

// Record types, with their level.
const (
	// LogEventReceipt (INFO): the bus's router read an event stored on the bus (StoredAt, Sequence; Event with
	// FULL).
	LogEventReceipt = "EVENT_RECEIPT"
	// LogRuleMatch (INFO): the event matched Rule; a copy is stored for its targets.
	LogRuleMatch = "RULE_MATCH"
	// LogNoRulesMatched (INFO): the event matched no enabled rule.
	LogNoRulesMatched = "NO_STANDARD_RULES_MATCHED"
	// LogRuleNoMatch (TRACE): the event did not match Rule; Explanation says why. At most LogTraceRules per
	// event, in the order of rule names.
	LogRuleNoMatch = "RULE_NO_MATCH"
	// LogRuleNoMatchOmitted (TRACE): Omitted more rules did not match the event and are not listed.
	LogRuleNoMatchOmitted = "RULE_NO_MATCH_OMITTED"
	// LogAttemptSuccess (INFO): the target (Connector) accepted the event at Attempt, in LatencyMs.
	LogAttemptSuccess = "INVOCATION_ATTEMPT_SUCCESS"
	// LogAttemptRetryableFailure (ERROR): the attempt failed; another is scheduled.
	LogAttemptRetryableFailure = "INVOCATION_ATTEMPT_RETRYABLE_FAILURE"
	// LogAttemptPermanentFailure (ERROR): the attempt failed and no other will be made (permanent error,
	// retries exhausted, refused by the input transformer); a LogInvocationDLQ, LogInvocationDropped or
	// LogInvocationFailure follows.
	LogAttemptPermanentFailure = "INVOCATION_ATTEMPT_PERMANENT_FAILURE"
	// LogInvocationDLQ (ERROR): the event was dead-lettered after Attempt attempts.
	LogInvocationDLQ = "INVOCATION_DLQ"
	// LogInvocationDropped (ERROR): the event was given up without a dead letter (no dead-letter subject).
	LogInvocationDropped = "INVOCATION_DROPPED"
	// LogInvocationFailure (ERROR): the event could not be delivered and the task failed (errors.tolerance none).
	LogInvocationFailure = "INVOCATION_FAILURE"
	// LogEventFiltered (INFO): a transform of the target filtered the event out; it is not delivered.
	LogEventFiltered = "EVENT_FILTERED"
	// LogEventRedriven (INFO): a dead letter of the event was redriven to the target.
	LogEventRedriven = "EVENT_REDRIVEN"
	// LogReplayStarted (INFO), LogReplayCompleted (INFO), LogReplayCancelled (INFO) and LogReplayFailed (ERROR):
	// a replay of an archive of the bus started or ended; Replay names it, Message says its window, destination and
	// count (and for a failure, why). No event: EventID and EventSource are empty.
	LogReplayStarted   = "REPLAY_STARTED"
	LogReplayCompleted = "REPLAY_COMPLETED"
	LogReplayCancelled = "REPLAY_CANCELLED"
	LogReplayFailed    = "REPLAY_FAILED"
)

// LogTraceRules is how many rules that did not match an event a TRACE log explains, at most, per event.
const LogTraceRules = 20

// LogRecord is one record of a bus log, stored as JSON.
type LogRecord struct {
	// Time is when the record was written.
	Time  time.Time `json:"time"`
	Level string    `json:"level"`
	Type  string    `json:"type"`
	// EventID, EventSource and EventType are the event's (ids are unique per source).
	EventID     string `json:"eventId"`
	EventSource string `json:"eventSource"`
	EventType   string `json:"eventType,omitempty"`
	// StoredAt and Sequence are when and where the bus stored what the writer read: the event on the bus for the
	// router's records, the copy routed to the rule (or redriven) for a target's.
	StoredAt time.Time `json:"storedAt,omitzero"`
	Sequence uint64    `json:"sequence,omitempty"`
	// Rule is the rule's name (the router's records).
	Rule string `json:"rule,omitempty"`
	// Connector is the connector that wrote the record: eb.<account>.<bus>.<rule>.<target> for a target.
	Connector string `json:"connector,omitempty"`
	// Attempt, LatencyMs, ErrorClass, HTTPStatus and Message describe an attempt and its failure.
	Attempt    uint64  `json:"attempt,omitempty"`
	LatencyMs  float64 `json:"latencyMs,omitempty"`
	ErrorClass string  `json:"errorClass,omitempty"`
	HTTPStatus int     `json:"httpStatus,omitempty"`
	Message    string  `json:"message,omitempty"`
	// Snippet is the start of the answer of a failed attempt (FULL only).
	Snippet string `json:"snippet,omitempty"`
	// Explanation is why the event does not match Rule (domain/pattern's Explanation as JSON).
	Explanation json.RawMessage `json:"explanation,omitempty"`
	// Omitted is the number of rules not listed (LogRuleNoMatchOmitted).
	Omitted int `json:"omitted,omitempty"`
	// Replay is the replay's name (the LogReplay* records).
	Replay string `json:"replay,omitempty"`
	// TraceID is the OpenTelemetry trace of the step (hex) when the worker traces: where to find it in the
	// tracing backend.
	TraceID string `json:"traceId,omitempty"`
	// Event is the event in the CloudEvents JSON format (FULL only, EVENT_RECEIPT).
	Event json.RawMessage `json:"event,omitempty"`
}

// LogLevelOf is the level of a record type.
func LogLevelOf(typ string) string {
	switch typ {
	case LogRuleNoMatch, LogRuleNoMatchOmitted:
		return LogTrace
	case LogAttemptRetryableFailure, LogAttemptPermanentFailure, LogInvocationDLQ, LogInvocationDropped, LogInvocationFailure,
		LogReplayFailed:
		return LogError
	}
	return LogInfo
}

// EncodeLogRecord makes the message of a record on subject.
func EncodeLogRecord(subject string, r LogRecord) (*nats.Msg, error) {
	if r.Level == "" {
		r.Level = LogLevelOf(r.Type)
	}
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encoding a bus-log record: %w", err)
	}
	return &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}, nil
}

// DecodeLogRecord reads a record.
func DecodeLogRecord(data []byte) (LogRecord, error) {
	var r LogRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("decoding a bus-log record: %w", err)
	}
	return r, nil
}

// LogRetention is how long bus-log records are kept by default.
const LogRetention = 24 * time.Hour

// LogMaxBytes is the default bound of an account's bus log.
const LogMaxBytes = 256 << 20

// LogLimits bound an account's log stream: records older than MaxAge are deleted, and when it holds MaxBytes the
// oldest are deleted to make room (DiscardOld). Zero fields take LogRetention and LogMaxBytes.
type LogLimits struct {
	MaxAge   time.Duration
	MaxBytes int64
}

// LogStreamConfig is the log stream of an account.
func (n Names) LogStreamConfig(accountID string, replicas int, limits LogLimits) jetstream.StreamConfig {
	return boundedStream(n.LogStream(accountID), n.LogSubjects(accountID), replicas, limits.MaxAge, limits.MaxBytes,
		LogRetention, LogMaxBytes)
}

// EnsureLogStream creates the log stream of an account, or updates its limits. Idempotent.
func (n Names) EnsureLogStream(ctx context.Context, js jetstream.JetStream, accountID string, replicas int, limits LogLimits) error {
	if err := ensure(ctx, js, n.LogStreamConfig(accountID, replicas, limits)); err != nil {
		return fmt.Errorf("ensuring the bus-log stream of account %s: %w", accountID, err)
	}
	return nil
}

// DeleteLogStream deletes the log stream of an account; a missing stream is not an error.
func (n Names) DeleteLogStream(ctx context.Context, js jetstream.JetStream, accountID string) error {
	err := js.DeleteStream(ctx, n.LogStream(accountID))
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("deleting the bus-log stream of account %s: %w", accountID, err)
	}
	return nil
}
