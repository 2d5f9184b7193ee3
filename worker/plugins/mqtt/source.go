package mqtt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/google/uuid"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/egress"
)

// SourceName is the source plugin's connector.class.
const SourceName = "mqtt-source"

// Config keys of the source.
const (
	// KeyTopics are the topic filters subscribed to, comma-separated ('+' and '#' wildcards allowed).
	KeyTopics = "mqtt.topics"
	// KeySessionExpiry is how long the broker keeps the source's session (and queues its messages) while no task
	// is connected (MQTT 5; an MQTT 3.1.1 broker keeps it as long as its own configuration says).
	KeySessionExpiry = "mqtt.session.expiry"
	// KeyBatch bounds the messages of one read.
	KeyBatch = "mqtt.batch.size"
)

// MessageType is the CloudEvent type of an MQTT message that was not a CloudEvent.
const MessageType = "eventbridge:Events:MQTTMessage"

// buffered bounds the messages received and not yet read; a full buffer holds the connection back.
const buffered = 1024

func init() { connector.Register(SourcePlugin()) }

// SourcePlugin returns the mqtt-source plugin.
func SourcePlugin() connector.Plugin {
	spec := commonSpec()
	spec = append(spec,
		connector.Field{Name: KeyTopics, Title: "Topic filters", Type: connector.TypeString, Required: true, Check: checkTopicFilters,
			Example: "devices/+/telemetry,alerts/#",
			Doc: "Topic filters to subscribe to, comma-separated; '+' matches one level and '#' the remaining levels " +
				"(devices/+/telemetry,alerts/#). With MQTT 5, $share/<group>/<filter> is a shared subscription."},
		connector.Field{Name: KeyQoS, Title: "QoS level", Type: connector.TypeEnum, Default: "1", Enum: []string{"0", "1", "2"},
			Doc: "QoS of the subscriptions: with 1 or 2, a message is acknowledged to the broker only once its event " +
				"is stored on the bus, and messages published while no task runs wait in the session; 0 may lose messages."},
		connector.Field{Name: KeySessionExpiry, Title: "Session expiry", Type: connector.TypeDuration, Default: "24h", Check: checkExpiry,
			Example: "72h",
			Doc: "MQTT 5: how long the broker keeps the session, and queues its messages, while no task is connected " +
				"(whole seconds, at most 136 years). MQTT 3.1.1 brokers keep sessions as configured on the broker."},
		connector.Field{Name: KeyBatch, Title: "Batch size", Type: connector.TypeInt, Default: "100", Min: connector.Min(1),
			Doc: "Most messages one read returns: the messages already received, up to this many, are stored on the bus together."},
	)
	return connector.Plugin{
		Name:    SourceName,
		Type:    connector.TypeSource,
		Version: "1.0.0",
		Doc: "Feeds a bus from MQTT topic filters (MQTT 5 or 3.1.1). CloudEvents published in the MQTT binding " +
			"(binary mode with MQTT 5 user properties, or structured application/cloudevents+json) are stored as " +
			"they are; other messages become CloudEvents of type " + MessageType + " with source mqtt://<broker>/<topic>, " +
			"the topic as subject and the payload as data. QoS 1 and 2 messages are acknowledged only after the event " +
			"is stored, in a persistent session: nothing the broker holds is lost while no task runs. Use one task " +
			"(several tasks need MQTT 5 shared subscriptions, $share/<group>/<filter>, to share the messages).",
		Spec:      spec,
		NewSource: NewSource,
	}
}

func checkTopicFilters(v string) error {
	for _, f := range strings.Split(v, ",") {
		if err := checkTopicFilter(strings.TrimSpace(f), true); err != nil {
			return err
		}
	}
	return nil
}

func checkExpiry(v string) error {
	d, _ := time.ParseDuration(v)
	if d%time.Second != 0 || d/time.Second > 1<<32-1 {
		return errors.New("must be whole seconds, at most 4294967295s")
	}
	return nil
}

// Source subscribes to the topic filters in a persistent session and reads the messages as CloudEvents; it
// connects in Connect, and again in Read whenever the connection was lost (the runtime backs off between failed
// reads).
type Source struct {
	opts          options
	filters       []string
	qos           byte
	sessionExpiry time.Duration
	batch         int
	host          string // the broker in the source attribute of events
	env           connector.Env

	msgs     chan message
	stop     chan struct{}
	stopOnce sync.Once

	mu   sync.Mutex
	conn conn
	acks map[*event.Event]func() error // acknowledgements of records read and not committed
}

var _ connector.Source = (*Source)(nil)

// NewSource builds a source from its config; problems the spec cannot see (a shared subscription with MQTT
// 3.1.1, a WebSocket URL with MQTT 5, TLS material that does not load) are FieldErrors.
func NewSource(cfg connector.Values, env connector.Env) (connector.Source, error) {
	opts, errs, err := parseOptions(cfg, env, "")
	if err != nil {
		return nil, err
	}
	var filters []string
	for _, f := range strings.Split(cfg.String(KeyTopics), ",") {
		f = strings.TrimSpace(f)
		if err := checkTopicFilter(f, opts.version == Version5); err != nil {
			errs = append(errs, connector.FieldError{Key: KeyTopics, Message: err.Error()})
			continue
		}
		filters = append(filters, f)
	}
	if cfg.Int(connector.KeyTasksMax) > 1 {
		for _, f := range filters {
			if !strings.HasPrefix(f, "$share/") {
				errs = append(errs, connector.FieldError{Key: connector.KeyTasksMax, Message: fmt.Sprintf(
					"every task would receive every message of %q; use 1 task, or MQTT 5 shared subscriptions ($share/<group>/<filter>)", f)})
				break
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &Source{
		opts: opts, filters: filters, qos: qosOf(cfg), sessionExpiry: cfg.Duration(KeySessionExpiry),
		batch: int(cfg.Int(KeyBatch)), host: opts.urls[0].Host, env: env,
		msgs: make(chan message, buffered), stop: make(chan struct{}), acks: map[*event.Event]func() error{},
	}, nil
}

// Connect connects and subscribes. A broker that cannot be reached is not an error here: Read reports it and
// connects again. A broker address the egress guard refuses is: connecting again cannot help.
func (s *Source) Connect(ctx context.Context) error {
	if err := s.connect(ctx); err != nil {
		if errors.Is(err, egress.ErrRefused) {
			return err
		}
		s.env.Log().Warn("mqtt-source: cannot connect yet; Read tries again", "err", err)
	}
	return nil
}

// connect opens the connection, resuming the session, and subscribes to the filters.
func (s *Source) connect(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		select {
		case <-s.conn.dead():
			s.conn.close()
			s.conn = nil
			clear(s.acks) // acknowledgements belong to the lost connection; the broker sends those messages again
		default:
			return nil
		}
	}
	c, err := dial(ctx, connectConfig{
		options: s.opts, clean: false, sessionExpiry: s.sessionExpiry, manualAck: true, deliver: s.deliver,
	})
	if err != nil {
		return fmt.Errorf("mqtt-source: %w", err)
	}
	sctx, cancel := context.WithTimeout(ctx, s.opts.connectTimeout)
	defer cancel()
	if err := c.subscribe(sctx, s.filters, s.qos); err != nil {
		c.close()
		return fmt.Errorf("mqtt-source: %w", err)
	}
	s.conn = c
	return nil
}

// deliver hands a received message to Read; it blocks while the buffer is full, until Close.
func (s *Source) deliver(m message) {
	select {
	case s.msgs <- m:
	case <-s.stop:
	}
}

// Read returns the messages received, at most mqtt.batch.size, once there are some. A lost connection is
// returned as an error (the task's status shows it) after the messages received before it; the next Read
// connects again.
func (s *Source) Read(ctx context.Context) ([]connector.SourceRecord, error) {
	if out := s.drain(nil); len(out) > 0 {
		return out, nil
	}
	if err := s.connect(ctx); err != nil {
		if errors.Is(err, egress.ErrRefused) {
			return nil, connector.Permanent(err) // fails the task, saying which address and how to allow it
		}
		return nil, err
	}
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	select {
	case m := <-s.msgs:
		return s.drain([]message{m}), nil
	case <-c.dead():
		if out := s.drain(nil); len(out) > 0 {
			return out, nil
		}
		return nil, fmt.Errorf("mqtt-source: connection to %s lost: %w", s.host, c.cause())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// drain adds the messages waiting, without blocking, to first and returns them as records.
func (s *Source) drain(first []message) []connector.SourceRecord {
	msgs := first
	for len(msgs) < s.batch {
		select {
		case m := <-s.msgs:
			msgs = append(msgs, m)
			continue
		default:
		}
		break
	}
	if len(msgs) == 0 {
		return nil
	}
	out := make([]connector.SourceRecord, 0, len(msgs))
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		e := s.toEvent(m)
		if m.ack != nil {
			s.acks[e] = m.ack
		}
		out = append(out, connector.SourceRecord{Event: e})
	}
	return out
}

// Commit acknowledges the records' messages to the broker, in the order they were received. Records of a lost
// connection are not acknowledged: the broker sends them again, under the same event ids.
func (s *Source) Commit(_ context.Context, records []connector.SourceRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, r := range records {
		ack, ok := s.acks[r.Event]
		if !ok {
			continue
		}
		delete(s.acks, r.Event)
		if err := ack(); err != nil {
			errs = append(errs, fmt.Errorf("acknowledging %s: %w", r.Event.ID(), err))
		}
	}
	return errors.Join(errs...)
}

// Close disconnects, after the acknowledgements of the last Commit are sent. Messages read and not committed are
// not acknowledged: the broker keeps them in the session for the next task.
func (s *Source) Close() error {
	s.stopOnce.Do(func() { close(s.stop) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.close()
		s.conn = nil
	}
	return nil
}

// toEvent returns the CloudEvent a message carries (MQTT 5 binary mode, or structured mode), or wraps any other
// message in a CloudEvent of type MessageType.
func (s *Source) toEvent(m message) *event.Event {
	if e := binaryEvent(m); e != nil {
		return e
	}
	if e := structuredEvent(m); e != nil {
		return e
	}
	e := event.New()
	e.SetID(s.messageID(m))
	e.SetSource((&url.URL{Scheme: "mqtt", Host: s.host, Path: "/" + m.topic}).String())
	e.SetType(MessageType)
	e.SetSubject(m.topic)
	e.SetTime(time.Now().UTC())
	ct := m.contentType
	switch {
	case ct != "" || len(m.payload) == 0:
	case json.Valid(m.payload):
		ct = event.ApplicationJSON
	default:
		ct = "application/octet-stream"
	}
	setPayload(&e, ct, m.payload)
	return &e
}

// setPayload makes payload the data of e: JSON as JSON, text as text, anything else as bytes (data_base64 in
// the JSON form of the event).
func setPayload(e *event.Event, ct string, payload []byte) {
	if ct != "" {
		e.SetDataContentType(ct)
	}
	if len(payload) == 0 {
		return
	}
	mt := ct
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = strings.TrimSpace(strings.ToLower(mt))
	switch {
	case (mt == "application/json" || strings.HasSuffix(mt, "+json")) && json.Valid(payload),
		strings.HasPrefix(mt, "text/") && utf8.Valid(payload):
		e.DataEncoded, e.DataBase64 = payload, false
	default:
		e.DataEncoded, e.DataBase64 = payload, true
	}
}

// messageID is the id of a message that is not a CloudEvent. A QoS 1 or 2 message that the broker sends again
// (it was not acknowledged before a task stopped or a connection dropped) keeps its packet identifier in the
// session, so hashing the client id, packet identifier, topic and payload gives it the same id, and the bus stores
// it once within its duplicate window. A QoS 0 message is never sent again: it gets a random id.
func (s *Source) messageID(m message) string {
	if m.qos == 0 || m.packetID == 0 {
		return uuid.NewString()
	}
	h := sha256.New()
	for _, part := range []string{s.opts.clientID, strconv.Itoa(int(m.packetID)), m.topic} {
		h.Write([]byte(strconv.Itoa(len(part)) + ":" + part + "|"))
	}
	h.Write(m.payload)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// binaryEvent reads an MQTT 5 message in the CloudEvents binary mode: the attributes as user properties named
// after them (as the CloudEvents MQTT binding says; ce_-prefixed names, as in the Kafka binding, are read too),
// datacontenttype as the Content Type, the payload as data. nil when the message is not one.
func binaryEvent(m message) *event.Event {
	attrs := map[string]string{}
	for _, kv := range m.user {
		name := strings.ToLower(kv[0])
		name = strings.TrimPrefix(name, "ce_")
		if _, dup := attrs[name]; !dup {
			attrs[name] = kv[1]
		}
	}
	if v := attrs["specversion"]; v != event.CloudEventsVersionV1 && v != event.CloudEventsVersionV03 {
		return nil
	}
	e := event.New(attrs["specversion"])
	for name, v := range attrs {
		var err error
		switch name {
		case "specversion":
		case "id":
			e.SetID(v)
		case "source":
			e.SetSource(v)
		case "type":
			e.SetType(v)
		case "subject":
			e.SetSubject(v)
		case "dataschema":
			e.SetDataSchema(v)
		case "datacontenttype":
			e.SetDataContentType(v)
		case "time":
			var t *types.Timestamp
			t, err = types.ParseTimestamp(v)
			if err == nil {
				e.SetTime(t.Time)
			}
		default:
			err = e.Context.SetExtension(name, v)
		}
		if err != nil {
			return nil
		}
	}
	ct := m.contentType
	if ct == "" {
		ct = attrs["datacontenttype"]
	}
	setPayload(&e, ct, m.payload)
	if err := cloudevent.Validate(&e); err != nil {
		return nil
	}
	return &e
}

// structuredEvent reads a message in the CloudEvents structured mode with the JSON format: Content Type
// application/cloudevents+json (MQTT 5), or no content type and a JSON object with a specversion member (MQTT
// 3.1.1 has no content type). nil when the message is not one.
func structuredEvent(m message) *event.Event {
	if m.contentType != "" && !strings.HasPrefix(m.contentType, "application/cloudevents+json") {
		return nil
	}
	if len(m.payload) == 0 || m.payload[0] != '{' && !strings.HasPrefix(strings.TrimSpace(string(m.payload)), "{") {
		return nil
	}
	e, err := cloudevent.Unmarshal(m.payload)
	if err != nil || e.SpecVersion() == "" || cloudevent.Validate(e) != nil {
		return nil
	}
	return e
}
