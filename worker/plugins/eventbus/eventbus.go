// Package eventbus is the eventbus sink plugin: it forwards every record to another bus, storing it on the
// destination bus's .in subject (<cluster>.bus.<busId>.in) in the destination bus's stream, where the bus's router
// reads it like an event put with PutEvents. A record is accepted only once JetStream stored it; its Nats-Msg-Id
// hashes the record's id with the hop and the connector, so a forward retried after a crash is stored once.
//
//	connector.class=eventbus
//	bus.id=orders
package eventbus

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// Name is the plugin's connector.class.
const Name = "eventbus"

// Config keys: exactly one of them names the destination.
const (
	// KeyBusID is the internal id of the destination bus; the sink stores on Names.BusIn(busId).
	KeyBusID = "bus.id"
	// KeySubject is the destination bus's .in subject itself: <cluster>.bus.<busId>.in.
	KeySubject = "subject"
)

// Hop is the hop of the Nats-Msg-Id of a forwarded record: HopMsgID(<record id>, Hop, <connector>).
const Hop = "forward"

// PublishTimeout bounds the wait for JetStream to store one forwarded record.
const PublishTimeout = 10 * time.Second

func init() { connector.Register(Plugin()) }

// Plugin returns the eventbus sink plugin.
func Plugin() connector.Plugin {
	return connector.Plugin{
		Name:    Name,
		Type:    connector.TypeSink,
		Version: "1.0.0",
		Doc:     "Forwards each event to another event bus, as if it had been put on it.",
		Spec: connector.Spec{
			{Name: KeyBusID, Title: "Destination bus ID", Type: connector.TypeString, Check: checkBusID,
				Example: "q4xbm2n7vd3kza6e",
				Doc: "Internal id of the destination bus (1 to 128 of A-Z, a-z, 0-9, _ and -); events are stored on its " +
					"input subject in its stream. Exactly one of bus.id and subject is required."},
			{Name: KeySubject, Title: "Destination subject", Type: connector.TypeString,
				Example: "eb.bus.q4xbm2n7vd3kza6e.in",
				Doc: "The destination bus's input subject, <cluster>.bus.<busId>.in, of this installation's cluster. " +
					"Exactly one of bus.id and subject is required."},
		},
		NewSink: New,
	}
}

// busIDRe accepts the ids that fit in a subject token and a stream name.
var busIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

func checkBusID(v string) error {
	if !busIDRe.MatchString(v) {
		return errors.New("a bus id is 1 to 128 characters of A-Z, a-z, 0-9, _ and -")
	}
	return nil
}

// subjectRe reads <cluster>.bus.<busId>.in.
var subjectRe = regexp.MustCompile(`^([A-Za-z0-9_-]+)\.bus\.([A-Za-z0-9_-]{1,128})\.in$`)

// Sink forwards records to one bus. Safe for concurrent Write.
type Sink struct {
	js        jetstream.JetStream
	stream    string
	subject   string
	connector string
}

var (
	_ connector.Sink           = (*Sink)(nil)
	_ connector.WriteTimeouter = (*Sink)(nil)
)

// New resolves the destination: its .in subject and its stream, both from worker/jetstream Names. Problems are
// connector.FieldErrors of bus.id or subject.
func New(cfg connector.Values, env connector.Env) (connector.Sink, error) {
	busID, subject := cfg.String(KeyBusID), cfg.String(KeySubject)
	s := &Sink{js: env.JetStream, connector: env.Connector}
	switch {
	case busID != "" && subject != "":
		return nil, connector.FieldErrors{{Key: KeySubject, Message: "give bus.id or subject, not both"}}
	case busID == "" && subject == "":
		return nil, connector.FieldErrors{{Key: KeyBusID, Message: "is required (or subject)"}}
	case busID != "":
		if err := checkBusID(busID); err != nil {
			return nil, connector.FieldErrors{{Key: KeyBusID, Message: err.Error()}}
		}
		s.subject, s.stream = env.Names.BusIn(busID), env.Names.BusStream(busID)
	default:
		m := subjectRe.FindStringSubmatch(subject)
		if m == nil {
			return nil, connector.FieldErrors{{Key: KeySubject,
				Message: fmt.Sprintf("%q is not the input subject of a bus (<cluster>.bus.<busId>.in)", subject)}}
		}
		if env.Names.Cluster != "" && m[1] != env.Names.Cluster {
			return nil, connector.FieldErrors{{Key: KeySubject,
				Message: fmt.Sprintf("%q is a bus of cluster %q, not of this installation (%q)", subject, m[1], env.Names.Cluster)}}
		}
		names := stream.Names{Cluster: m[1]}
		s.subject, s.stream = names.BusIn(m[2]), names.BusStream(m[2])
	}
	return s, nil
}

// Subject is where the sink stores records.
func (s *Sink) Subject() string { return s.subject }

// Stream is the stream the sink expects to store records.
func (s *Sink) Stream() string { return s.stream }

// Connect does nothing: the sink publishes on the worker's JetStream context. A destination stream that does not
// exist yet is not an error of the task: each record waits for it (see Write).
func (s *Sink) Connect(context.Context) error {
	if s.js == nil {
		return errors.New("eventbus: no JetStream context")
	}
	return nil
}

// Close does nothing.
func (s *Sink) Close() error { return nil }

// WriteTimeout is how long a Write may wait for JetStream to store the record.
func (s *Sink) WriteTimeout() time.Duration { return PublishTimeout }

// Write stores e on the destination bus's .in subject, in the CloudEvents binary content mode, and returns once
// JetStream acknowledged it. Its Nats-Msg-Id is HopMsgID(<record id>, "forward", <connector>), the record id being
// the record's Nats-Msg-Id (or stream:sequence), so a retried forward is stored once. A destination stream that is
// missing (or another stream that holds the subject) is a retryable error: the record is retried until the bus
// exists. Forwarding a record to the subject it was read from is a permanent error (it would loop).
func (s *Sink) Write(ctx context.Context, e *event.Event) error {
	prev := stream.PutMsgID(e.Source(), e.ID())
	if meta, ok := connector.MetaFrom(ctx); ok {
		if meta.Subject == s.subject {
			return connector.Permanent(fmt.Errorf("eventbus: the record was read from %s, its destination: forwarding would loop", s.subject))
		}
		prev = meta.ID()
	}
	m := stream.Encode(e)
	m.Subject = s.subject
	m.Header.Set(nats.MsgIdHdr, stream.HopMsgID(prev, Hop, s.connector))
	ctx, cancel := context.WithTimeout(ctx, PublishTimeout)
	defer cancel()
	if _, err := s.js.PublishMsg(ctx, m, jetstream.WithExpectStream(s.stream)); err != nil {
		if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("eventbus: stream %s of the destination bus does not exist (yet): %w", s.stream, err)
		}
		return fmt.Errorf("eventbus: storing the record on %s: %w", s.subject, err)
	}
	return nil
}
