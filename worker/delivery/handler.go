package delivery

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// Action is what the task does with a record once its handler returned.
type Action int

// Actions.
const (
	// Ack: the sink accepted the record.
	Ack Action = iota
	// Retry: redeliver the record after Outcome.Delay (NakWithDelay).
	Retry
	// GiveUp: the record cannot be delivered (permanent error, retries exhausted); a later middleware decides
	// what that means (WithDeadLetter: dead-letter; Tolerate: drop or fail). A task treats an unhandled GiveUp as Fail.
	GiveUp
	// Drop: ack the record without delivering it, logged and counted.
	Drop
	// Fail: nak the record and fail the task (errors.tolerance=none).
	Fail
	// Filtered: ack the record without writing it: a transform removed it.
	Filtered
	// DeadLettered: the record was given up and its dead letter stored; ack it.
	DeadLettered
)

func (a Action) String() string {
	switch a {
	case Ack:
		return "ack"
	case Retry:
		return "retry"
	case GiveUp:
		return "give-up"
	case Drop:
		return "drop"
	case Fail:
		return "fail"
	case Filtered:
		return "filtered"
	case DeadLettered:
		return "dead-lettered"
	}
	return fmt.Sprintf("action(%d)", int(a))
}

// Outcome is the result of handling one record.
type Outcome struct {
	Action Action
	// Delay is the redelivery delay of Retry.
	Delay time.Duration
	// Err is why the record was not accepted.
	Err error
	// Attempts is the attempt that produced the outcome (the delivery count).
	Attempts uint64
}

// Handler handles one record; the record's JetStream metadata is in ctx (connector.MetaFrom). Middleware wraps a
// Handler into another one.
type Handler func(ctx context.Context, e *event.Event) Outcome

// Write is the innermost handler: it writes to the sink. nil → Ack; a permanent error → GiveUp; any other error
// → Retry without delay (Retry middleware sets the delay and the bounds).
func Write(s connector.Sink) Handler {
	return func(ctx context.Context, e *event.Event) Outcome {
		m, _ := connector.MetaFrom(ctx)
		err := s.Write(ctx, e)
		switch {
		case err == nil:
			return Outcome{Action: Ack, Attempts: m.Attempt}
		case connector.IsPermanent(err):
			return Outcome{Action: GiveUp, Err: err, Attempts: m.Attempt}
		default:
			return Outcome{Action: Retry, Err: err, Attempts: m.Attempt}
		}
	}
}

// RetryPolicy bounds the retries of a record by attempts and by age, and spaces them exponentially.
type RetryPolicy struct {
	// MaxRetries is the number of retries after the first attempt; 0 disables retries.
	MaxRetries int
	// MaxAge is the age (since the record was stored) beyond which a record is not retried; negative is unbounded,
	// 0 disables retries.
	MaxAge time.Duration
	// InitialDelay is the delay before the first retry; it doubles with every attempt up to MaxDelay. Each delay
	// varies by ±20% so that records failed together do not come back together.
	InitialDelay time.Duration
	MaxDelay     time.Duration
}

// Allows reports whether a record that failed its attempt-th attempt (1-based) and was stored age ago may be
// retried.
func (p RetryPolicy) Allows(attempt uint64, age time.Duration) bool {
	if attempt >= uint64(p.MaxRetries)+1 {
		return false
	}
	return p.MaxAge < 0 || age < p.MaxAge
}

// Delay is the redelivery delay after the attempt-th attempt (1-based): InitialDelay·2^(attempt-1), capped at
// MaxDelay, ±20% jitter.
func (p RetryPolicy) Delay(attempt uint64) time.Duration {
	d := p.InitialDelay
	for i := uint64(1); i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	jitter := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * jitter)
}

// WithRetry is the retry middleware: a Retry outcome of next becomes a Retry with the policy's delay while the
// policy allows another attempt, else a GiveUp. An error marked with connector.RetryAfter sets the delay instead
// (capped by MaxDelay). Attempts are the record's delivery count, so they survive the
// death of a worker.
func WithRetry(p RetryPolicy, next Handler) Handler {
	return func(ctx context.Context, e *event.Event) Outcome {
		o := next(ctx, e)
		if o.Action != Retry {
			return o
		}
		m, _ := connector.MetaFrom(ctx)
		attempt := max(m.Attempt, 1)
		age := time.Duration(0)
		if !m.Timestamp.IsZero() {
			age = time.Since(m.Timestamp)
		}
		if !p.Allows(attempt, age) {
			o.Action = GiveUp
			o.Err = fmt.Errorf("giving up after %d attempt(s), event age %s: %w", attempt, age.Round(time.Millisecond), o.Err)
			return o
		}
		o.Delay = p.Delay(attempt)
		if d, ok := connector.RetryAfterOf(o.Err); ok {
			// The target said when to come back: that long, capped by the policy's maximum delay.
			if p.MaxDelay > 0 && d > p.MaxDelay {
				d = p.MaxDelay
			}
			o.Delay = d
		}
		return o
	}
}

// Tolerate is the errors.tolerance middleware: GiveUp becomes Drop under connector.ToleranceAll and Fail under
// connector.ToleranceNone.
func Tolerate(tolerance string, next Handler) Handler {
	return func(ctx context.Context, e *event.Event) Outcome {
		o := next(ctx, e)
		if o.Action == GiveUp {
			if tolerance == connector.ToleranceNone {
				o.Action = Fail
			} else {
				o.Action = Drop
			}
		}
		return o
	}
}

// TransformError is the error of a record that a transform refused. Such a record is given up at once: applying
// the transform again would refuse it again.
type TransformError struct {
	// Transform is the name the connector's config gives the transform.
	Transform string
	Err       error
}

func (e *TransformError) Error() string { return fmt.Sprintf("transform %s: %v", e.Transform, e.Err) }
func (e *TransformError) Unwrap() error { return e.Err }

// IsTransformError reports whether err, or an error it wraps, is a *TransformError.
func IsTransformError(err error) bool {
	var te *TransformError
	return errors.As(err, &te)
}

// WithTransforms is the transform middleware: it applies the transforms in order, each to the records the
// previous one made, and hands the resulting records to next one after the other. No record left → Filtered; a
// transform error → GiveUp with a *TransformError (permanent); otherwise the first outcome of next that is not Ack,
// or the last Ack. A record made into several is retried whole, so the ones written before a retryable failure
// are written again (delivery is at least once). The transforms run again on every attempt: they are cheap and
// deterministic.
func WithTransforms(ts []connector.NamedTransform, next Handler) Handler {
	if len(ts) == 0 {
		return next
	}
	return func(ctx context.Context, e *event.Event) Outcome {
		m, _ := connector.MetaFrom(ctx)
		if m.JSON != nil { // the form of the record read, not of what the transforms make of it
			written := m
			written.JSON = nil
			ctx = connector.WithMeta(ctx, written)
		}
		records := []*event.Event{e}
		for _, t := range ts {
			var out []*event.Event
			for _, r := range records {
				made, err := t.Apply(ctx, r)
				if err != nil {
					return Outcome{Action: GiveUp, Err: &TransformError{Transform: t.Name, Err: connector.Permanent(err)},
						Attempts: m.Attempt}
				}
				out = append(out, made...)
			}
			records = out
		}
		if len(records) == 0 {
			return Outcome{Action: Filtered, Attempts: m.Attempt}
		}
		var o Outcome
		for _, r := range records {
			if o = next(ctx, r); o.Action != Ack {
				return o
			}
		}
		return o
	}
}

// Chain is the standard handler of a sink under c with the connector's transforms, if any, without dead letters:
// Tolerate(WithRetry(WithTransforms(ts, Write(s)))). Records given up are dropped (errors.tolerance=all) even
// when c names a dead-letter topic; ChainDLQ publishes them there.
func (c Config) Chain(s connector.Sink, ts ...connector.NamedTransform) Handler {
	return Tolerate(c.Tolerance, WithRetry(c.Retry, WithTransforms(ts, Write(s))))
}

// ChainDLQ is Chain with dead letters: when c.Tolerance is all and c.DLQSubject is set, records given up are
// published there by pub on behalf of connectorName (WithDeadLetter); otherwise it is Chain.
// Tolerate(WithDeadLetter(WithRetry(WithTransforms(ts, Write(s))))).
func (c Config) ChainDLQ(pub Publisher, connectorName string, s connector.Sink, ts ...connector.NamedTransform) Handler {
	inner := WithRetry(c.Retry, WithTransforms(ts, Write(s)))
	if pub != nil && c.DLQSubject != "" && c.Tolerance == connector.ToleranceAll {
		inner = WithDeadLetter(DeadLetterConfig{
			Publisher: pub, Subject: c.DLQSubject, Connector: connectorName, Retry: c.Retry,
		}, inner)
	}
	return Tolerate(c.Tolerance, inner)
}
