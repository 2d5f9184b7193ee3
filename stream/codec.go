package stream

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// Header names of the CloudEvents NATS protocol binding, binary content mode, and of what it cannot say.
const (
	headerPrefix      = "ce-"
	headerContentType = "content-type"
	// HeaderTypes names the CloudEvents type of every extension that is not a String:
	// "count=Integer,flag=Boolean,blob=Binary,ref=URI-reference,home=URI,at=Timestamp". A message without it (an
	// earlier version's) has string extensions only.
	HeaderTypes = "eb-ce-types"
	// HeaderDataEncoding is "base64" when the data is binary: its JSON form is data_base64, whatever its bytes.
	HeaderDataEncoding = "eb-data-encoding"
)

// CloudEvents type names of extension values, as HeaderTypes writes them.
const (
	typeInteger   = "Integer"
	typeBoolean   = "Boolean"
	typeBinary    = "Binary"
	typeURI       = "URI"
	typeURIRef    = "URI-reference"
	typeTimestamp = "Timestamp"
)

// extensionValue is the canonical string form of an extension value, and its CloudEvents type ("" for a String).
func extensionValue(v any) (text, typ string, err error) {
	switch x := v.(type) {
	case string:
		return x, "", nil
	case bool:
		return types.FormatBool(x), typeBoolean, nil
	case int32:
		return types.FormatInteger(x), typeInteger, nil
	case []byte:
		return types.FormatBinary(x), typeBinary, nil
	case types.URI:
		return x.String(), typeURI, nil
	case *types.URI:
		return x.String(), typeURI, nil
	case types.URIRef:
		return x.String(), typeURIRef, nil
	case *types.URIRef:
		return x.String(), typeURIRef, nil
	case types.Timestamp:
		return types.FormatTime(x.Time), typeTimestamp, nil
	case *types.Timestamp:
		return types.FormatTime(x.Time), typeTimestamp, nil
	case time.Time:
		return types.FormatTime(x), typeTimestamp, nil
	}
	t, err := types.Format(v)
	if err != nil {
		return "", "", fmt.Errorf("a value of type %T is not a CloudEvents type", v)
	}
	return t, "", nil
}

// extensionText is the canonical string form of an extension value.
func extensionText(v any) (string, error) {
	t, _, err := extensionValue(v)
	return t, err
}

// parseExtension reads the canonical string form of an extension of CloudEvents type typ.
func parseExtension(typ, text string) (any, error) {
	switch typ {
	case typeInteger:
		return types.ParseInteger(text)
	case typeBoolean:
		return types.ParseBool(text)
	case typeBinary:
		return types.ParseBinary(text)
	case typeURI:
		u, err := url.Parse(text)
		if err != nil || !u.IsAbs() {
			return nil, fmt.Errorf("%q is not an absolute URI", text)
		}
		return types.URI{URL: *u}, nil
	case typeURIRef:
		u, err := url.Parse(text)
		if err != nil {
			return nil, err
		}
		return types.URIRef{URL: *u}, nil
	case typeTimestamp:
		t, err := types.ParseTime(text)
		if err != nil {
			return nil, err
		}
		return types.Timestamp{Time: t}, nil
	}
	return text, nil
}

// Encode returns the event as a NATS message in the CloudEvents binary content mode: attributes and extensions in
// ce-* headers (their canonical string forms), datacontenttype in content-type, data in the body byte for byte;
// the types of extensions that are not strings in HeaderTypes, and binary data marked by HeaderDataEncoding, so
// that Decode gives the same event back. The caller sets the subject and Nats-Msg-Id. The event must have passed
// Check (within the header limits); an extension of no CloudEvents type is written as fmt.Sprint would.
func Encode(e *event.Event) *nats.Msg {
	m := nats.NewMsg("")
	h := m.Header
	h.Set(headerPrefix+"specversion", e.SpecVersion())
	h.Set(headerPrefix+"id", e.ID())
	h.Set(headerPrefix+"source", cloudevent.Source(e))
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
	var typed []string
	for k, v := range e.Extensions() {
		text, typ, err := extensionValue(v)
		if err != nil {
			text = fmt.Sprint(v)
		}
		h.Set(headerPrefix+k, text)
		if typ != "" {
			typed = append(typed, k+"="+typ)
		}
	}
	if len(typed) > 0 {
		sort.Strings(typed)
		h.Set(HeaderTypes, strings.Join(typed, ","))
	}
	if cloudevent.IsBinary(e) {
		h.Set(HeaderDataEncoding, "base64")
	}
	m.Data = e.Data()
	return m
}

// Decode reads an event written by Encode, of this version or an earlier one: extensions get their types back
// from HeaderTypes (an earlier version's are strings), and binary data its DataBase64. The event's data is m.Data,
// not a copy (a message received from NATS owns its payload): neither is changed afterwards. What is stored was
// validated before it was stored, so Decode checks only that the required attributes are there (the SDK's full
// Validate costs a map per call, on every hop of every record).
func Decode(m *nats.Msg) (*event.Event, error) {
	e := event.New()
	var typed map[string]string
	if v := m.Header.Get(HeaderTypes); v != "" {
		typed = map[string]string{}
		for _, pair := range strings.Split(v, ",") {
			if name, typ, ok := strings.Cut(pair, "="); ok {
				typed[name] = typ
			}
		}
	}
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
				value, err := parseExtension(typed[name], v)
				if err != nil {
					return nil, fmt.Errorf("header ce-%s of type %s: %w", name, typed[name], err)
				}
				e.SetExtension(name, value)
			}
		}
	}
	if len(m.Data) > 0 {
		e.DataEncoded = m.Data
	}
	e.DataBase64 = m.Header.Get(HeaderDataEncoding) == "base64"
	if err := hasRequired(&e); err != nil {
		return nil, err
	}
	return &e, nil
}

// hasRequired checks that a stored event has the attributes every CloudEvent has.
func hasRequired(e *event.Event) error {
	for _, a := range [...]struct{ name, value string }{{"specversion", e.SpecVersion()}, {"id", e.ID()},
		{"source", cloudevent.Source(e)}, {"type", e.Type()}} {
		if a.value == "" {
			return fmt.Errorf("stored message is not a valid CloudEvent: no %s", a.name)
		}
	}
	return nil
}

// Headers of a dead letter, on top of the original event's CloudEvents binary-mode headers.
const (
	HeaderDLQReason     = "eb-dlq-reason"      // the error that gave the record up
	HeaderDLQAttempts   = "eb-dlq-attempts"    // attempts made (not the delivery count: delivery.Attempts)
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
