// Package delivery runs JetStream-fed sink tasks: it owns their durable consumer, reads records with at most
// MaxInFlight in flight, decodes them into CloudEvents, hands them to the sink through middleware (transforms,
// retry, dead letters, errors.tolerance) and acks a record only after the sink accepted it or its dead letter was
// stored.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// MaxInFlight is the number of records a task holds at most: delivered to it and not yet acked or nak'ed.
const MaxInFlight = 64

// AckWait is the AckWait of every consumer a task reads. A task sends an in-progress ack every third of it for
// each record it holds, whatever its sink's write timeout, so only the records of a worker that died (or was cut
// off) come back after it: within AckWait of the death, which is shorter than the time its lease takes to expire,
// so they are ready when the task's next owner starts.
const AckWait = 2 * time.Second

// attemptsTimeout bounds a read or write of the attempts bucket.
const attemptsTimeout = 5 * time.Second

// Config is the part of a sink connector's config the runtime reads (the common keys of connector.SinkSpec).
type Config struct {
	Stream string
	// Subject is the subject the sink reads, or several subjects, comma-separated (the topics key).
	Subject       string
	Durable       string
	DeliverPolicy jetstream.DeliverPolicy
	Tasks         int
	Retry         RetryPolicy
	// Tolerance is connector.ToleranceAll (dead-letter or drop what cannot be delivered) or
	// connector.ToleranceNone (fail).
	Tolerance string
	// DLQSubject is the subject of dead letters (errors.deadletterqueue.topic.name); "" drops them.
	DLQSubject string
	// Log is the task's bus log (eventlog.*): the records of its attempts (TaskConfig.EventLog).
	Log connector.LogConfig
}

// ParseConfig reads the common keys of a config that passed connector.SinkSpec validation.
func ParseConfig(v connector.Values) Config {
	c := Config{
		Stream:        v.String(connector.KeyStream),
		Subject:       v.String(connector.KeyTopics),
		Durable:       v.String(connector.KeyDurable),
		DeliverPolicy: jetstream.DeliverAllPolicy,
		Tasks:         int(v.Int(connector.KeyTasksMax)),
		Tolerance:     v.String(connector.KeyErrorsTolerance),
		DLQSubject:    v.String(connector.KeyDLQTopic),
		Log:           connector.ParseLogConfig(v),
		Retry: RetryPolicy{
			MaxRetries:   int(v.Int(connector.KeyRetryMaxAttempts)),
			MaxAge:       time.Duration(v.Int(connector.KeyRetryTimeout)) * time.Millisecond,
			InitialDelay: time.Duration(v.Int(connector.KeyRetryDelayInitial)) * time.Millisecond,
			MaxDelay:     time.Duration(v.Int(connector.KeyRetryDelayMax)) * time.Millisecond,
		},
	}
	if v.String(connector.KeyDeliverPolicy) == connector.DeliverNew {
		c.DeliverPolicy = jetstream.DeliverNewPolicy
	}
	if c.Tasks < 1 {
		c.Tasks = 1
	}
	if c.Retry.MaxAge < 0 {
		c.Retry.MaxAge = -1
	}
	return c
}

// EventLog returns the writer of c's bus-log records on behalf of connectorName, published by pub (nil when c.Log
// writes none): TaskConfig.EventLog.
func (c Config) EventLog(pub connector.LogPublisher, connectorName string, log *slog.Logger) *connector.EventLog {
	return connector.NewEventLog(pub, c.Log, connectorName, log)
}

// PullExpiry is how long one pull request of a task lives. Under CPU load a pull request sometimes vanishes while
// the client still counts on it (nats.go issue 1622: the consumer shows no waiting pulls and pending messages);
// the client notices only when two heartbeats (half the expiry each) are missing and pulls again. The default
// expiry of 30 s made such a stall last 30 s (measured in BenchmarkDelivery under load); 5 s bounds it at
// about 5 s, for one small pull request every 5 s per idle task.
const PullExpiry = 5 * time.Second

// Subjects returns the subjects of c.Subject: one, or several when it is a comma-separated list.
func (c Config) Subjects() []string {
	if c.Subject == "" {
		return nil
	}
	return strings.Split(c.Subject, ",")
}

// ConsumerConfig is the durable consumer of c: explicit acks, redelivered without bound (the retry middleware
// decides when to give up), MaxInFlight records pending per task. One subject is its FilterSubject, several are its
// FilterSubjects.
func (c Config) ConsumerConfig(ackWait time.Duration) jetstream.ConsumerConfig {
	cc := jetstream.ConsumerConfig{
		Durable:       c.Durable,
		DeliverPolicy: c.DeliverPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		MaxDeliver:    -1,
		MaxAckPending: MaxInFlight * c.Tasks,
	}
	if subjects := c.Subjects(); len(subjects) > 1 {
		cc.FilterSubjects = subjects
	} else {
		cc.FilterSubject = c.Subject
	}
	return cc
}

// EnsureConsumer creates c's durable consumer, or updates an existing one. The deliver policy only applies when
// the consumer is created: an existing consumer keeps its position and start policy, also when its subjects change
// (one subject becoming several, as when a target connector starts reading its redrive subject too). Errors come from JetStream
// (a missing stream is jetstream.ErrStreamNotFound).
func EnsureConsumer(ctx context.Context, js jetstream.JetStream, c Config, ackWait time.Duration) (jetstream.Consumer, error) {
	cc := c.ConsumerConfig(ackWait)
	existing, err := js.Consumer(ctx, c.Stream, c.Durable)
	switch {
	case err == nil:
		old := existing.CachedInfo().Config
		cc.DeliverPolicy, cc.OptStartSeq, cc.OptStartTime = old.DeliverPolicy, old.OptStartSeq, old.OptStartTime
		cc.Replicas = old.Replicas
		if sameConsumer(old, cc) {
			// Nothing to change. An update would still make the server rewrite and fsync the consumer's metadata
			// file, one at a time for all consumers: the cost of every task start when thousands start at once.
			return existing, nil
		}
	case errors.Is(err, jetstream.ErrConsumerNotFound):
	default:
		return nil, fmt.Errorf("reading consumer %s of stream %s: %w", c.Durable, c.Stream, err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, c.Stream, cc)
	if err != nil {
		return nil, fmt.Errorf("creating consumer %s of stream %s: %w", c.Durable, c.Stream, err)
	}
	return cons, nil
}

// sameConsumer reports whether the consumer configured as old already is what want asks for, in every field
// ConsumerConfig sets (the server fills in others).
func sameConsumer(old, want jetstream.ConsumerConfig) bool {
	return old.Durable == want.Durable && old.AckPolicy == want.AckPolicy && old.AckWait == want.AckWait &&
		old.MaxDeliver == want.MaxDeliver && old.MaxAckPending == want.MaxAckPending &&
		old.FilterSubject == want.FilterSubject && slices.Equal(old.FilterSubjects, want.FilterSubjects)
}

// DeleteConsumer deletes a durable consumer; a missing consumer or stream is not an error.
func DeleteConsumer(ctx context.Context, js jetstream.JetStream, stream, durable string) error {
	err := js.DeleteConsumer(ctx, stream, durable)
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("deleting consumer %s of stream %s: %w", durable, stream, err)
	}
	return nil
}
