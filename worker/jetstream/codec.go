package jetstream

import (
	"fmt"
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
