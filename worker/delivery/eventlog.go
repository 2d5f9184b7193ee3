package delivery

import (
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// logOutcome writes the bus-log records of an attempt of e, the record as read (before transforms), whose outcome
// is o, failure f (as follow returned it) and duration took; handle calls it only with a TaskConfig.EventLog, and
// not for an attempt cut short by the task's stop. The records, by outcome:
//
//	Ack           INVOCATION_ATTEMPT_SUCCESS (INFO; not for a connector.SelfLogging sink)
//	Filtered      EVENT_FILTERED (INFO; not for a connector.SelfLogging sink)
//	Retry         INVOCATION_ATTEMPT_RETRYABLE_FAILURE (ERROR)
//	DeadLettered  INVOCATION_ATTEMPT_PERMANENT_FAILURE, INVOCATION_DLQ (ERROR)
//	Drop          INVOCATION_ATTEMPT_PERMANENT_FAILURE, INVOCATION_DROPPED (ERROR)
//	Fail, GiveUp  INVOCATION_ATTEMPT_PERMANENT_FAILURE, INVOCATION_FAILURE (ERROR)
//
// It does not block: the records are published asynchronously (connector.EventLog.Write).
func (t *Task) logOutcome(e *event.Event, meta connector.Meta, o Outcome, f Failure, took time.Duration, traceID string) {
	lg := t.cfg.EventLog
	var typ string
	switch o.Action {
	case Ack:
		typ = stream.LogAttemptSuccess
	case Filtered:
		typ = stream.LogEventFiltered
	case Retry:
		typ = stream.LogAttemptRetryableFailure
	default:
		typ = stream.LogAttemptPermanentFailure
	}
	if !lg.Enabled(stream.LogLevelOf(typ)) || (t.selfLog != nil && (o.Action == Ack || o.Action == Filtered)) {
		return
	}
	r := stream.LogRecord{
		Type: typ, EventID: e.ID(), EventSource: cloudevent.Source(e), EventType: e.Type(),
		StoredAt: meta.Timestamp, Sequence: meta.Sequence, Attempt: meta.Attempt,
		LatencyMs: float64(took) / float64(time.Millisecond), TraceID: traceID,
	}
	if typ == stream.LogAttemptSuccess || typ == stream.LogEventFiltered {
		lg.Write(r)
		return
	}
	r.ErrorClass, r.HTTPStatus, r.Message, r.Snippet = f.Class, f.Status, f.Message, f.Response
	lg.Write(r) // the snippet only at FULL: Write removes it otherwise
	if o.Action == Retry {
		return
	}
	// What became of the record, after its last attempt.
	switch o.Action {
	case DeadLettered:
		r.Type = stream.LogInvocationDLQ
	case Drop:
		r.Type = stream.LogInvocationDropped
	default:
		r.Type = stream.LogInvocationFailure
	}
	r.LatencyMs, r.Snippet = 0, ""
	lg.Write(r)
}
