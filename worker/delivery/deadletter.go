package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// Publisher publishes a message to JetStream and waits for its acknowledgement; jetstream.JetStream is one.
type Publisher interface {
	PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)
}

// DeadLetterConfig configures WithDeadLetter.
type DeadLetterConfig struct {
	Publisher Publisher
	// Subject is the dead-letter subject (the account's stream.Names.DLQSubject).
	Subject string
	// Connector names the connector in the dead letters and their message ids.
	Connector string
	// Retry spaces the redeliveries of a record whose dead letter could not be stored.
	Retry RetryPolicy
	// PublishTimeout bounds one publish (default 10s).
	PublishTimeout time.Duration
	// MinRetryDelay is the smallest delay before a record whose dead letter could not be stored comes back
	// (default DLQPublishRetryDelay).
	MinRetryDelay time.Duration
}

// DLQPublishRetryDelay is the smallest delay before a record whose dead letter could not be stored comes back.
const DLQPublishRetryDelay = time.Second

// ErrDeadLetter wraps the error of a dead letter that could not be stored.
var ErrDeadLetter = errors.New("storing the dead letter")

// WithDeadLetter is the dead-letter middleware: a GiveUp of next is published to the dead-letter subject (the
// record in CloudEvents binary mode, with the eb-dlq-* headers) and becomes DeadLettered once JetStream
// acknowledged the dead letter, so the task acks the record only then. When the publish fails, the record becomes
// a Retry (nak with a delay): it comes back, is given up again and its dead letter is published again, under the
// same message id, so it is stored once. Nothing given up is lost.
func WithDeadLetter(c DeadLetterConfig, next Handler) Handler {
	if c.PublishTimeout <= 0 {
		c.PublishTimeout = 10 * time.Second
	}
	if c.MinRetryDelay <= 0 {
		c.MinRetryDelay = DLQPublishRetryDelay
	}
	return func(ctx context.Context, e *event.Event) Outcome {
		o := next(ctx, e)
		if o.Action != GiveUp {
			return o
		}
		m, _ := connector.MetaFrom(ctx)
		attempts := max(o.Attempts, m.Attempt, 1)
		dl := stream.DeadLetter{
			Reason: fmt.Sprint(o.Err), Attempts: attempts, Connector: c.Connector, ErrorClass: errorClass(o.Err),
			Stream: m.Stream, Sequence: m.Sequence, Subject: m.Subject, MsgID: m.ID(),
		}
		pctx, cancel := context.WithTimeout(ctx, c.PublishTimeout)
		defer cancel()
		if _, err := c.Publisher.PublishMsg(pctx, stream.EncodeDeadLetter(c.Subject, e, dl)); err != nil {
			return Outcome{
				Action:   Retry,
				Delay:    max(c.Retry.Delay(attempts), c.MinRetryDelay),
				Err:      fmt.Errorf("%w to %s: %w (record given up: %w)", ErrDeadLetter, c.Subject, err, o.Err),
				Attempts: o.Attempts,
			}
		}
		o.Action = DeadLettered
		return o
	}
}

// errorClass is the eb-dlq-error-class of a record given up with err.
func errorClass(err error) string {
	switch {
	case IsTransformError(err):
		return stream.DLQClassTransform
	case connector.IsPermanent(err):
		return stream.DLQClassPermanent
	default:
		return stream.DLQClassExhausted
	}
}
