package web

// The CloudEvents HTTP binding that every dialect's PutEvents reads (binary, structured and batch modes), and the
// outcome of each entry.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// Media types of the CloudEvents HTTP binding's structured and batch modes.
const (
	mediaStructured = "application/cloudevents+json"
	mediaBatch      = "application/cloudevents-batch+json"
)

// CloudEvent is the JSON form of a CloudEvent (structured mode; a batch is an array of them). It documents the
// request body; the handler decodes with the CloudEvents SDK.
type CloudEvent struct {
	SpecVersion     string    `json:"specversion" example:"1.0"`
	ID              string    `json:"id" example:"8f3c1a2e-0a4d-4c4b-9b1e-2f0c6d1e7a55"`
	Source          string    `json:"source" example:"/shop/orders"`
	Type            string    `json:"type" example:"order.created"`
	Subject         string    `json:"subject,omitempty" example:"order-42"`
	Time            time.Time `json:"time,omitempty"`
	DataContentType string    `json:"datacontenttype,omitempty" example:"application/json"`
	DataSchema      string    `json:"dataschema,omitempty"`
	// Data is the payload: any JSON value.
	Data any `json:"data,omitempty" swaggertype:"object"`
	// DataBase64 carries a binary payload instead of data.
	DataBase64 string `json:"data_base64,omitempty"`
} //@name CloudEvent

// PutEventsResultEntry is the outcome of one event: its id when stored, else an error code and message.
type PutEventsResultEntry struct {
	EventID string `json:"eventId,omitempty" example:"8f3c1a2e-0a4d-4c4b-9b1e-2f0c6d1e7a55"`
	// Duplicate is true when an event of the same source and id was stored within the duplicate window (2
	// minutes), by this request or an earlier one: this one was not stored again.
	Duplicate    bool   `json:"duplicate,omitempty"`
	ErrorCode    string `json:"errorCode,omitempty" example:"InvalidEvent"`
	ErrorMessage string `json:"errorMessage,omitempty" example:"invalid CloudEvent: source: REQUIRED but MISSING"`
} //@name PutEventsResultEntry

// DecodeEvents reads the body of a PutEvents request (at most bus.MaxRequestSize bytes) and decodes its
// CloudEvents in binary, structured or batch mode. It returns one event per entry, nil where the entry failed
// validation, with errs[i] saying why; single tells a binary or structured request (one event) from a batch.
// err is the request failing as a whole: a body too large (PayloadTooLarge), a malformed batch
// (MalformedRequest), or no CloudEvent at all (InvalidEvent). Both /api/v1 and the RocketMQ EventBridge API use it.
func DecodeEvents(c *gin.Context) (events []*event.Event, errs []error, single bool, err error) {
	body, err := ReadBody(c, bus.MaxRequestSize)
	if err != nil {
		return nil, nil, false, err
	}
	media, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	switch {
	case media == mediaBatch:
		events, errs, err = decodeBatch(body)
		return events, errs, false, err
	case media == mediaStructured:
		e, err := DecodeStructured(body)
		return []*event.Event{e}, []error{err}, true, nil
	case c.GetHeader("ce-specversion") != "":
		e, err := decodeBinary(c.Request, body)
		return []*event.Event{e}, []error{err}, true, nil
	}
	return nil, nil, false, bus.ErrInvalidEvent.With("the request holds no CloudEvent: send ce-* headers (binary mode), "+
		"%s (structured mode) or %s (batch mode), not Content-Type %q", mediaStructured, mediaBatch, c.GetHeader("Content-Type"))
}

// StoreEvents puts the valid events (errs[i] == nil, as DecodeEvents returns them) on the bus with buses and answers
// the outcome of every entry in request order, with the number that failed; an entry the store did not take gets
// its error in errs[i] too. Internal errors of single entries are logged to log. It fails as a whole only when the
// bus does not exist (bus.ErrNotFound) or when the caller may not put events on it (access.ErrForbidden: an API
// key restricted to other buses).
func StoreEvents(c *gin.Context, log *slog.Logger, buses *bus.Service, accountID, busName string, events []*event.Event, errs []error) ([]PutEventsResultEntry, int, error) {
	if err := MayPutOn(c, busName); err != nil {
		return nil, 0, err
	}
	valid := make([]*event.Event, 0, len(events))
	for i, e := range events {
		if errs[i] == nil {
			valid = append(valid, e)
		}
	}
	results, err := buses.PutEvents(c.Request.Context(), accountID, busName, valid)
	if err != nil {
		return nil, 0, err
	}
	entries, failed := make([]PutEventsResultEntry, len(events)), 0
	j := 0 // index in valid and results
	for i, e := range events {
		var r bus.PutResult
		if errs[i] == nil {
			if j < len(results) {
				r = results[j]
			} else { // never reported stored without the store's word
				r.Err = fmt.Errorf("the event store answered %d results for %d events", len(results), len(valid))
			}
			j++
			errs[i] = r.Err
		}
		if errs[i] == nil {
			entries[i] = PutEventsResultEntry{EventID: e.ID(), Duplicate: r.Duplicate}
			continue
		}
		failed++
		entries[i] = FailedEntry(c, log, errs[i])
	}
	countPut(c, accountID, busName, entries)
	return entries, failed, nil
}

// FailedEntry is the answer about an event that was not stored. Internal details are logged to log, never returned.
func FailedEntry(c *gin.Context, log *slog.Logger, err error) PutEventsResultEntry {
	de, ok := domain.As(err)
	if !ok || de.Kind == domain.KindInternal {
		log.Error("putting an event", "path", c.Request.URL.Path, "err", err)
		return PutEventsResultEntry{ErrorCode: domain.ErrInternal.Code, ErrorMessage: "an internal error occurred; it has been logged"}
	}
	return PutEventsResultEntry{ErrorCode: de.Code, ErrorMessage: MessageOf(de)}
}

// decodeBatch decodes a batch entry by entry, so that an invalid entry fails alone: events[i] is nil when
// errs[i] is not. It fails as a whole only when the body is not a JSON array; an empty one is an empty batch
// (the JSON batch format allows it), answered with no entries.
func decodeBatch(body []byte) (events []*event.Event, errs []error, err error) {
	entries, err := cloudevent.UnmarshalBatch(body)
	if err != nil {
		return nil, nil, Malformed("", "the batch: %s", err)
	}
	events, errs = make([]*event.Event, len(entries)), make([]error, len(entries))
	for i, en := range entries {
		events[i], errs[i] = checkStructured(en.Event, en.Err, en.Size)
	}
	return events, errs, nil
}

// DecodeStructured decodes one CloudEvent in the JSON format (cloudevent.Unmarshal: data byte for byte, JSON for
// every JSON media type) and validates it with bus.ValidateEvent.
func DecodeStructured(raw []byte) (*event.Event, error) {
	e, err := cloudevent.Unmarshal(raw)
	return checkStructured(e, err, len(raw))
}

// checkStructured is the answer about an event read in the JSON format (err: it could not be read), size bytes
// long: the domain error naming the problem, or the event validated with bus.ValidateEvent.
func checkStructured(e *event.Event, err error, size int) (*event.Event, error) {
	if err != nil {
		if size > bus.MaxEventSize {
			return nil, bus.ValidateEvent(&event.Event{}, size) // too large whatever else is wrong
		}
		return nil, uriError(err)
	}
	if err := bus.ValidateEvent(e, size); err != nil {
		return nil, err
	}
	return e, nil
}

// decodeBinary decodes the CloudEvent of a binary-mode request whose body was read already, and validates it
// with bus.ValidateEvent. Its encoded size is the body's plus the ce-* and Content-Type headers'.
func decodeBinary(r *http.Request, body []byte) (*event.Event, error) {
	size := len(body)
	for k, vs := range r.Header {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "ce-") || lk == "content-type" {
			for _, v := range vs {
				size += len(k) + len(v)
			}
		}
	}
	req := r.Clone(r.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	if err := percentDecode(req.Header); err != nil {
		return nil, err
	}
	e, err := cehttp.NewEventFromHTTPRequest(req)
	if err != nil {
		if size > bus.MaxEventSize {
			ev := event.New()
			return nil, bus.ValidateEvent(&ev, size)
		}
		if errors.Is(err, binding.ErrUnknownEncoding) {
			return nil, bus.ErrInvalidEvent.With("ce-specversion %q is not a CloudEvents version this API knows (1.0, 0.3)", r.Header.Get("ce-specversion"))
		}
		return nil, bus.ErrInvalidEvent.With("invalid CloudEvent: %s", err.Error())
	}
	if err := cloudevent.KeptURIs(e, req.Header.Get("ce-source"), req.Header.Get("ce-dataschema")); err != nil {
		return nil, uriError(err)
	}
	if err := bus.ValidateEvent(e, size); err != nil {
		return nil, err
	}
	return e, nil
}

// uriError is the domain error of a source or dataschema the SDK would not keep as written, naming the attribute.
func uriError(err error) error {
	var ue *cloudevent.URIError
	if errors.As(err, &ue) {
		return bus.ErrInvalidEvent.WithField(ue.Attribute).With("%s", ue.Error())
	}
	return bus.ErrInvalidEvent.With("invalid CloudEvent: %s", err.Error())
}

// percentDecode decodes the values of the ce-* headers in place, as the CloudEvents HTTP binding (3.1.3.2) has
// senders percent-encode them (space, '"', '%' and every byte outside printable ASCII), a double-quoted value being
// unquoted first (unquote), and refuses a value that is not UTF-8 once decoded ("%C0%A0") or holds a malformed
// escape, naming the header.
func percentDecode(h http.Header) error {
	for k, vs := range h {
		if !strings.HasPrefix(strings.ToLower(k), "ce-") {
			continue
		}
		for i, v := range vs {
			if err := untrimmed(k, v); err != nil {
				return err
			}
			v, quoted := unquote(v)
			if !strings.Contains(v, "%") {
				if !utf8.ValidString(v) {
					return bus.ErrInvalidEvent.WithField(strings.ToLower(k)).With("header %s is not UTF-8", k)
				}
				if quoted {
					if err := untrimmed(k, v); err != nil {
						return err
					}
					vs[i] = v
				}
				continue
			}
			d, err := url.PathUnescape(v)
			if err != nil {
				return bus.ErrInvalidEvent.WithField(strings.ToLower(k)).With("header %s holds a malformed percent-encoding: %s", k, err)
			}
			if !utf8.ValidString(d) {
				return bus.ErrInvalidEvent.WithField(strings.ToLower(k)).With("header %s is not UTF-8 once percent-decoded", k)
			}
			if err := untrimmed(k, d); err != nil {
				return err
			}
			vs[i] = d
		}
	}
	return nil
}

// unquote reads a header value that is an RFC 7230 (3.2.6) quoted-string, "a \"b\" c", as its content: the HTTP
// binding (3.1.3.2) has receivers unescape one before percent-decoding, for senders of its earlier versions, which
// quoted instead of percent-encoding. ok is false, and v returned as it is, for any other value.
func unquote(v string) (_ string, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v, false
	}
	var b strings.Builder
	for i := 1; i < len(v)-1; i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v)-1:
			i++
			c = v[i]
		case c == '\\' || c == '"':
			return v, false // the closing quote escaped, or a quote inside: not one quoted-string
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

// untrimmed refuses a ce-* value with white space at either end (percent-encoded, or a Unicode space HTTP does not
// trim), naming the header: the SDK would trim it while reading the event, which would then not be the one sent.
func untrimmed(k, v string) error {
	if strings.TrimSpace(v) != v {
		return bus.ErrInvalidEvent.WithField(strings.ToLower(k)).With("header %s begins or ends with white space, which "+
			"CloudEvents SDKs trim; it would not arrive as it was sent", k)
	}
	return nil
}
