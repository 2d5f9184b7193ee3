package mqtt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/domain/transform"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/egress"
)

// Name is the sink plugin's connector.class.
const Name = "mqtt"

// Config keys of the sink.
const (
	// KeyTopic is the topic each record is published to: a template whose {…} placeholders are filled from the event.
	KeyTopic = "mqtt.topic"
	// KeyRetain sets the retain flag of the messages.
	KeyRetain = "mqtt.retain"
	// KeyMode is binary or structured.
	KeyMode = "mqtt.mode"
	// KeyPublishTimeout bounds the wait for the broker's acknowledgement of one message.
	KeyPublishTimeout = "mqtt.publish.timeout"
)

// Content modes (values of mqtt.mode).
const (
	ModeBinary     = "binary"
	ModeStructured = "structured"
)

// StructuredContentType is the Content Type of an MQTT 5 message in the structured mode.
const StructuredContentType = "application/cloudevents+json"

func init() { connector.Register(Plugin()) }

// Plugin returns the mqtt sink plugin.
func Plugin() connector.Plugin {
	spec := commonSpec()
	spec = append(spec,
		connector.Field{Name: KeyTopic, Title: "Topic", Type: connector.TypeString, Required: true, Check: checkTemplate,
			Example: "devices/{subject}/{$.data.kind}",
			Doc: "Topic to publish to. {name} is replaced by the event's attribute name ({subject}, {type}, {source}, " +
				"an extension) and {$.path} by the value of a JSON path over the event ({$.data.deviceId}): strings as " +
				"they are, other values as JSON. Example: devices/{subject}/{$.data.kind}. A record whose topic comes out " +
				"empty, lacks a value, or holds '+' or '#' is given up (a permanent error)."},
		connector.Field{Name: KeyQoS, Title: "QoS level", Type: connector.TypeEnum, Default: "1", Enum: []string{"0", "1", "2"},
			Doc: "QoS of the messages. With 1 and 2 a record is acknowledged only after the broker's PUBACK or PUBCOMP; " +
				"with 0, once the message is written to the connection."},
		connector.Field{Name: KeyRetain, Title: "Retain messages", Type: connector.TypeBool, Default: "false",
			Doc: "Publish retained messages: the broker keeps the last one of each topic for new subscribers."},
		connector.Field{Name: KeyMode, Title: "Content mode", Type: connector.TypeEnum, Enum: []string{ModeBinary, ModeStructured},
			Doc: "binary (the default with MQTT 5): the data is the payload, datacontenttype the Content Type and the " +
				"other attributes MQTT 5 user properties named after them, as in the CloudEvents MQTT binding. " +
				"structured (the default, and only choice, with MQTT 3.1.1): the payload is the event in JSON " +
				"(application/cloudevents+json)."},
		connector.Field{Name: KeyPublishTimeout, Title: "Publish timeout", Type: connector.TypeDuration, Default: "10s", Check: checkPositive,
			Example: "30s",
			Doc:     "Bound of the wait for the broker to acknowledge one message; a timeout is retried."},
	)
	return connector.Plugin{
		Name:    Name,
		Type:    connector.TypeSink,
		Version: "1.0.0",
		Doc: "Publishes each event to an MQTT broker (MQTT 5 or 3.1.1), to a topic that may be built from the event's " +
			"fields, in the CloudEvents binary (MQTT 5) or structured mode.",
		Spec:    spec,
		NewSink: New,
	}
}

// Sink publishes records on one connection, opened in Connect and again whenever it was lost.
type Sink struct {
	opts    options
	topic   topicTemplate
	qos     byte
	retain  bool
	binary  bool
	timeout time.Duration
	env     connector.Env

	mu     sync.Mutex
	conn   conn
	closed bool
}

var (
	_ connector.Sink           = (*Sink)(nil)
	_ connector.WriteTimeouter = (*Sink)(nil)
)

// New builds a sink from its config; problems the spec cannot see (a template path that does not compile,
// binary mode with MQTT 3.1.1, TLS material that does not load) are FieldErrors.
func New(cfg connector.Values, env connector.Env) (connector.Sink, error) {
	opts, errs, err := parseOptions(cfg, env, "-sink")
	if err != nil {
		return nil, err
	}
	tpl, err := parseTemplate(cfg.String(KeyTopic))
	if err != nil {
		errs = append(errs, connector.FieldError{Key: KeyTopic, Message: err.Error()})
	}
	mode := cfg.String(KeyMode)
	switch {
	case mode == "" && opts.version == Version311:
		mode = ModeStructured
	case mode == "":
		mode = ModeBinary
	case mode == ModeBinary && opts.version == Version311:
		errs = append(errs, connector.FieldError{Key: KeyMode,
			Message: "binary needs MQTT 5 user properties; use structured with " + KeyVersion + "=" + Version311})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &Sink{opts: opts, topic: tpl, qos: qosOf(cfg), retain: cfg.Bool(KeyRetain), binary: mode == ModeBinary,
		timeout: cfg.Duration(KeyPublishTimeout), env: env}, nil
}

// Connect connects to the broker. A broker that refuses the client (bad credentials, not authorized) or that the
// egress guard refuses (a non-public address the operator did not allow) fails the task; one that cannot be
// reached does not: Write connects again and its records are retried.
func (s *Sink) Connect(ctx context.Context) error {
	if _, err := s.connection(ctx); err != nil {
		var perm *permanentConnectError
		if errors.As(err, &perm) || errors.Is(err, egress.ErrRefused) {
			return err
		}
		s.env.Log().Warn("mqtt: broker unreachable; retrying with the records", "err", err)
	}
	return nil
}

// connection returns the open connection, opening one when there is none or it was lost.
func (s *Sink) connection(ctx context.Context) (conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("mqtt: sink closed")
	}
	if s.conn != nil {
		select {
		case <-s.conn.dead():
			s.conn.close()
			s.conn = nil
		default:
			return s.conn, nil
		}
	}
	c, err := dial(ctx, connectConfig{options: s.opts, clean: true})
	if err != nil {
		return nil, fmt.Errorf("mqtt: %w", err)
	}
	s.conn = c
	return c, nil
}

// Close disconnects.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.conn != nil {
		s.conn.close()
		s.conn = nil
	}
	return nil
}

// WriteTimeout bounds one Write: a connection attempt and the wait for the acknowledgement.
func (s *Sink) WriteTimeout() time.Duration { return s.opts.connectTimeout + s.timeout }

// Write publishes e and waits for the broker's acknowledgement (QoS 1 and 2). A topic that cannot be built, an
// event that cannot be encoded, a broker address the egress guard refuses and an MQTT 5 refusal that would be
// repeated (topic name invalid, packet too large, payload format invalid, not authorized) are permanent errors; an
// unreachable broker, a lost connection and a timeout are retried.
func (s *Sink) Write(ctx context.Context, e *event.Event) error {
	topic, err := s.topic.render(e)
	if err != nil {
		return connector.Permanent(fmt.Errorf("mqtt: %s: %w", KeyTopic, err))
	}
	m, err := s.encode(e)
	if err != nil {
		return connector.Permanent(fmt.Errorf("mqtt: encoding the event: %w", err))
	}
	m.topic, m.qos, m.retain = topic, s.qos, s.retain
	c, err := s.connection(ctx)
	if err != nil {
		if errors.Is(err, egress.ErrRefused) {
			return connector.Permanent(err)
		}
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := c.publish(pctx, m); err != nil {
		var pe *publishError
		if errors.As(err, &pe) && pe.permanent() {
			return connector.Permanent(fmt.Errorf("mqtt: publishing to %q: %w", topic, err))
		}
		s.drop(c) // the next attempt connects afresh: the connection may be lost or half-open
		return fmt.Errorf("mqtt: publishing to %q: %w", topic, err)
	}
	return nil
}

// drop closes c if it is still the sink's connection, so the next Write opens a new one.
func (s *Sink) drop(c conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == c {
		s.conn.close()
		s.conn = nil
	}
}

// encode returns the message of e without its topic, in the sink's mode.
func (s *Sink) encode(e *event.Event) (outMessage, error) {
	if !s.binary {
		b, err := cloudevent.Marshal(e)
		if err != nil {
			return outMessage{}, err
		}
		m := outMessage{payload: b}
		if s.opts.version == Version5 {
			m.contentType = StructuredContentType
		}
		return m, nil
	}
	return binaryMessage(e)
}

// binaryMessage is e in the binary mode of the CloudEvents MQTT 5 binding.
func binaryMessage(e *event.Event) (outMessage, error) {
	m := outMessage{payload: e.Data(), contentType: e.DataContentType()}
	add := func(k, v string) {
		if v != "" {
			m.user = append(m.user, [2]string{k, v})
		}
	}
	add("specversion", e.SpecVersion())
	add("id", e.ID())
	add("source", e.Source())
	add("type", e.Type())
	add("subject", e.Subject())
	add("dataschema", e.DataSchema())
	if !e.Time().IsZero() {
		add("time", types.FormatTime(e.Time()))
	}
	exts := e.Extensions()
	names := make([]string, 0, len(exts))
	for k := range exts {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		v, err := types.Format(exts[k])
		if err != nil {
			return outMessage{}, fmt.Errorf("extension %s: %w", k, err)
		}
		add(k, v)
	}
	return m, nil
}

// topicTemplate is mqtt.topic compiled: literal parts and, between them, paths filled from the event.
type topicTemplate struct {
	parts []string // len(parts) == paths.Len()+1
	paths transform.Paths
	texts []string // the placeholders as written, for messages
}

func checkTemplate(v string) error {
	_, err := parseTemplate(v)
	return err
}

// parseTemplate compiles a topic template; a template without placeholders must be a valid topic name.
func parseTemplate(v string) (topicTemplate, error) {
	t := topicTemplate{}
	var exprs []string
	rest := v
	for {
		open := strings.IndexByte(rest, '{')
		closing := strings.IndexByte(rest, '}')
		if open < 0 {
			if closing >= 0 {
				return t, fmt.Errorf("%q has a '}' without '{'", v)
			}
			t.parts = append(t.parts, rest)
			break
		}
		if closing >= 0 && closing < open {
			return t, fmt.Errorf("%q has a '}' without '{'", v)
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return t, fmt.Errorf("%q has a '{' without '}'", v)
		}
		expr := strings.TrimSpace(rest[open+1 : open+end])
		if expr == "" || strings.ContainsRune(expr, '{') {
			return t, fmt.Errorf("%q has an empty or nested placeholder", v)
		}
		t.parts = append(t.parts, rest[:open])
		t.texts = append(t.texts, "{"+expr+"}")
		if !strings.HasPrefix(expr, "$") {
			expr = "$." + expr
		}
		exprs = append(exprs, expr)
		rest = rest[open+end+1:]
	}
	for _, p := range t.parts {
		if strings.ContainsAny(p, "+#") {
			return t, fmt.Errorf("%q contains a wildcard ('+' or '#'); a topic to publish to has none", v)
		}
	}
	paths, err := transform.CompilePaths(exprs)
	if err != nil {
		return t, fmt.Errorf("%q: %w", v, err)
	}
	t.paths = paths
	if len(exprs) == 0 {
		if err := checkTopicName(v); err != nil {
			return t, err
		}
	}
	return t, nil
}

// render fills the template from e; the topic must come out a valid topic name.
func (t topicTemplate) render(e *event.Event) (string, error) {
	if t.paths.Len() == 0 {
		return t.parts[0], nil
	}
	values, err := t.paths.Texts(e)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, p := range t.parts {
		b.WriteString(p)
		if i < len(values) {
			b.WriteString(values[i])
		}
	}
	topic := b.String()
	if err := checkTopicName(topic); err != nil {
		return "", err
	}
	return topic, nil
}
