package stream

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
)

// Header names of the CloudEvents NATS protocol binding, binary content mode.
const (
	headerPrefix      = "ce-"
	headerContentType = "content-type"
)

// Encode returns the event as a NATS message in the CloudEvents binary content mode: attributes and extensions in
// ce-* headers, datacontenttype in content-type, data in the body. The caller sets the subject and Nats-Msg-Id.
func Encode(e *event.Event) *nats.Msg {
	m := nats.NewMsg("")
	h := m.Header
	h.Set(headerPrefix+"specversion", e.SpecVersion())
	h.Set(headerPrefix+"id", e.ID())
	h.Set(headerPrefix+"source", e.Source())
	h.Set(headerPrefix+"type", e.Type())
	if v := e.Subject(); v != "" {
		h.Set(headerPrefix+"subject", v)
	}
	if v := e.DataSchema(); v != "" {
		h.Set(headerPrefix+"dataschema", v)
	}
	if t := e.Time(); !t.IsZero() {
		h.Set(headerPrefix+"time", t.UTC().Format(time.RFC3339Nano))
	}
	if v := e.DataContentType(); v != "" {
		h.Set(headerContentType, v)
	}
	for k, v := range e.Extensions() {
		h.Set(headerPrefix+k, fmt.Sprint(v))
	}
	m.Data = e.Data()
	return m
}

// Decode reads an event written by Encode. Extensions come back as strings.
func Decode(m *nats.Msg) (*event.Event, error) {
	e := event.New()
	for k, vs := range m.Header {
		if len(vs) == 0 {
			continue
		}
		key := strings.ToLower(k)
		v := vs[0]
		switch {
		case key == headerContentType:
			e.SetDataContentType(v)
		case !strings.HasPrefix(key, headerPrefix):
		default:
			name := key[len(headerPrefix):]
			switch name {
			case "specversion":
				e.SetSpecVersion(v)
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
			case "time":
				t, err := time.Parse(time.RFC3339Nano, v)
				if err != nil {
					return nil, fmt.Errorf("header ce-time: %w", err)
				}
				e.SetTime(t)
			default:
				e.SetExtension(name, v)
			}
		}
	}
	if len(m.Data) > 0 {
		e.DataEncoded = append([]byte(nil), m.Data...)
	}
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("stored message is not a valid CloudEvent: %w", err)
	}
	return &e, nil
}

// Headers of a dead letter, on top of the original event's CloudEvents binary-mode headers.
const (
	HeaderDLQReason     = "eb-dlq-reason"      // the error that gave the record up
	HeaderDLQAttempts   = "eb-dlq-attempts"    // attempts made (the delivery count)
	HeaderDLQConnector  = "eb-dlq-connector"   // the connector that gave it up
	HeaderDLQErrorClass = "eb-dlq-error-class" // permanent | retries-exhausted | transform
	HeaderDLQStream     = "eb-dlq-stream"      // stream and sequence the record was read from
	HeaderDLQSequence   = "eb-dlq-sequence"
	HeaderDLQSubject    = "eb-dlq-subject" // subject the record was read from
)

// Error classes of a dead letter.
const (
	DLQClassPermanent = "permanent"
	DLQClassExhausted = "retries-exhausted"
	DLQClassTransform = "transform"
)

// DeadLetter describes why a record was given up.
type DeadLetter struct {
	Reason     string
	Attempts   uint64
	Connector  string
	ErrorClass string
	// Where the record was read: stream, sequence, subject.
	Stream   string
	Sequence uint64
	Subject  string
	// MsgID is an id of the record stable across redeliveries; the dead letter's Nats-Msg-Id hashes it.
	MsgID string
}

// maxReason bounds the reason header.
const maxReason = 2048

// EncodeDeadLetter returns the dead letter of e on subject: e in the CloudEvents binary content mode, the
// eb-dlq-* headers and Nats-Msg-Id DLQMsgID(d.MsgID, d.Connector).
func EncodeDeadLetter(subject string, e *event.Event, d DeadLetter) *nats.Msg {
	m := Encode(e)
	m.Subject = subject
	reason := d.Reason
	if len(reason) > maxReason {
		reason = strings.ToValidUTF8(reason[:maxReason], "")
	}
	reason = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, reason)
	m.Header.Set(HeaderDLQReason, reason)
	m.Header.Set(HeaderDLQAttempts, strconv.FormatUint(d.Attempts, 10))
	m.Header.Set(HeaderDLQConnector, d.Connector)
	m.Header.Set(HeaderDLQErrorClass, d.ErrorClass)
	if d.Stream != "" {
		m.Header.Set(HeaderDLQStream, d.Stream)
		m.Header.Set(HeaderDLQSequence, strconv.FormatUint(d.Sequence, 10))
	}
	if d.Subject != "" {
		m.Header.Set(HeaderDLQSubject, d.Subject)
	}
	if d.MsgID != "" {
		m.Header.Set(nats.MsgIdHdr, DLQMsgID(d.MsgID, d.Connector))
	}
	// The same facts as CloudEvents extensions, for a dead-letter bus: its rules can match them and its targets
	// receive them.
	m.Header.Set(headerPrefix+ExtDLQReason, reason)
	m.Header.Set(headerPrefix+ExtDLQAttempts, strconv.FormatUint(d.Attempts, 10))
	m.Header.Set(headerPrefix+ExtDLQConnector, d.Connector)
	if d.ErrorClass != "" {
		m.Header.Set(headerPrefix+ExtDLQErrorClass, d.ErrorClass)
	}
	return m
}

// CloudEvents extensions of a dead letter put on a dead-letter bus.
const (
	ExtDLQReason     = "ebdlqreason"
	ExtDLQAttempts   = "ebdlqattempts"
	ExtDLQConnector  = "ebdlqconnector"
	ExtDLQErrorClass = "ebdlqerrorclass"
)

// DecodeDeadLetter reads a message written by EncodeDeadLetter: the original event and why it was given up.
func DecodeDeadLetter(m *nats.Msg) (*event.Event, DeadLetter, error) {
	e, err := Decode(m)
	if err != nil {
		return nil, DeadLetter{}, err
	}
	for _, ext := range []string{ExtDLQReason, ExtDLQAttempts, ExtDLQConnector, ExtDLQErrorClass} {
		e.SetExtension(ext, nil) // the original event had none of them (Extensions returns a copy)
	}
	h := m.Header
	d := DeadLetter{
		Reason: h.Get(HeaderDLQReason), Connector: h.Get(HeaderDLQConnector), ErrorClass: h.Get(HeaderDLQErrorClass),
		Stream: h.Get(HeaderDLQStream), Subject: h.Get(HeaderDLQSubject),
	}
	d.Attempts, _ = strconv.ParseUint(h.Get(HeaderDLQAttempts), 10, 64)
	d.Sequence, _ = strconv.ParseUint(h.Get(HeaderDLQSequence), 10, 64)
	return e, d, nil
}
