package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
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

// PutEventsResponse tells, in request order, which events were stored.
type PutEventsResponse struct {
	FailedEntryCount int                    `json:"failedEntryCount" example:"0"`
	Entries          []PutEventsResultEntry `json:"entries"`
} //@name PutEventsResponse

// PutEventsResultEntry is the outcome of one event: its id when stored, else an error code and message.
type PutEventsResultEntry struct {
	EventID      string `json:"eventId,omitempty" example:"8f3c1a2e-0a4d-4c4b-9b1e-2f0c6d1e7a55"`
	ErrorCode    string `json:"errorCode,omitempty" example:"InvalidEvent"`
	ErrorMessage string `json:"errorMessage,omitempty" example:"invalid CloudEvent: source: REQUIRED but MISSING"`
} //@name PutEventsResultEntry

// putEvents stores CloudEvents on a bus.
//
//	@Summary		Put events on a bus
//	@Description	Takes CloudEvents in the HTTP binding's binary mode (ce-* headers, the body is the data), structured
//	@Description	mode (application/cloudevents+json) or batch mode (application/cloudevents-batch+json: an array).
//	@Description	Each event is validated alone: an invalid one or one over 256 KiB fails with its errorCode
//	@Description	(InvalidEvent, EventTooLarge) while the others are stored. The answer lists the outcome of every
//	@Description	event in request order, with status 200 even when some failed. An event put again with the same
//	@Description	source and id within 2 minutes is stored once and answered with the same eventId. A body over
//	@Description	1 MiB is refused whole (413); a single invalid event in binary or structured mode is answered 400.
//	@Tags			events
//	@Accept			application/cloudevents+json
//	@Accept			application/cloudevents-batch+json
//	@Accept			json
//	@Produce		json
//	@Param			X-Account-Id	header		string		false	"account (default: default)"
//	@Param			bus				path		string		true	"bus name"
//	@Param			ce-specversion	header		string		false	"binary mode: spec version (1.0)"
//	@Param			ce-id			header		string		false	"binary mode: event id"
//	@Param			ce-source		header		string		false	"binary mode: event source"
//	@Param			ce-type			header		string		false	"binary mode: event type"
//	@Param			event			body		CloudEvent	true	"a CloudEvent (structured), an array of them (batch), or the data (binary)"
//	@Success		200				{object}	PutEventsResponse
//	@Failure		400				{object}	Problem	"InvalidEvent, MalformedRequest"
//	@Failure		404				{object}	Problem	"BusNotFound"
//	@Failure		413				{object}	Problem	"PayloadTooLarge (body over 1 MiB), EventTooLarge"
//	@Router			/api/v1/buses/{bus}/events [post]
func (a *api) putEvents(c *gin.Context) {
	events, errs, single, err := decodeEvents(c)
	if err != nil {
		a.writeError(c, err)
		return
	}
	// Called even with no valid event, so that an unknown bus is a 404 whatever the events.
	entries, failed, err := a.storeEvents(c, accountOf(c), c.Param("bus"), events, errs)
	if err != nil {
		a.writeError(c, err)
		return
	}
	if single && errs[0] != nil {
		a.writeError(c, errs[0])
		return
	}
	c.JSON(http.StatusOK, PutEventsResponse{FailedEntryCount: failed, Entries: entries})
}

// decodeEvents reads the body of a PutEvents request (at most bus.MaxRequestSize bytes) and decodes its
// CloudEvents in binary, structured or batch mode. It returns one event per entry, nil where the entry failed
// validation, with errs[i] saying why; single tells a binary or structured request (one event) from a batch.
// err is the request failing as a whole: a body too large (PayloadTooLarge), a malformed batch
// (MalformedRequest), or no CloudEvent at all (InvalidEvent). Both /api/v1 and the RocketMQ EventBridge API use it.
func decodeEvents(c *gin.Context) (events []*event.Event, errs []error, single bool, err error) {
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, bus.MaxRequestSize))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, nil, false, domain.ErrTooLarge.With("the request body is larger than %d bytes", mbe.Limit)
		}
		return nil, nil, false, malformed("", "reading the request body: %s", err)
	}
	media, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	switch {
	case media == mediaBatch:
		events, errs, err = decodeBatch(body)
		return events, errs, false, err
	case media == mediaStructured:
		e, err := decodeStructured(body)
		return []*event.Event{e}, []error{err}, true, nil
	case c.GetHeader("ce-specversion") != "":
		e, err := decodeBinary(c.Request, body)
		return []*event.Event{e}, []error{err}, true, nil
	}
	return nil, nil, false, bus.ErrInvalidEvent.With("the request holds no CloudEvent: send ce-* headers (binary mode), "+
		"%s (structured mode) or %s (batch mode), not Content-Type %q", mediaStructured, mediaBatch, c.GetHeader("Content-Type"))
}

// storeEvents puts the valid events (errs[i] == nil) on the bus and answers the outcome of every entry in request
// order, with the number that failed. It fails as a whole only when the bus does not exist (bus.ErrNotFound).
func (a *api) storeEvents(c *gin.Context, accountID, busName string, events []*event.Event, errs []error) ([]PutEventsResultEntry, int, error) {
	valid := make([]*event.Event, 0, len(events))
	for i, e := range events {
		if errs[i] == nil {
			valid = append(valid, e)
		}
	}
	results, err := a.s.Buses.PutEvents(c.Request.Context(), accountID, busName, valid)
	if err != nil {
		return nil, 0, err
	}
	entries, failed := make([]PutEventsResultEntry, len(events)), 0
	j := 0 // index in valid and results
	for i, e := range events {
		err := errs[i]
		if err == nil {
			if j < len(results) {
				err = results[j]
			} else { // never reported stored without the store's word
				err = fmt.Errorf("the event store answered %d results for %d events", len(results), len(valid))
			}
			j++
		}
		if err == nil {
			entries[i] = PutEventsResultEntry{EventID: e.ID()}
			continue
		}
		failed++
		entries[i] = a.failedEntry(c, err)
	}
	return entries, failed, nil
}

// failedEntry is the answer about an event that was not stored. Internal details are logged, never returned.
func (a *api) failedEntry(c *gin.Context, err error) PutEventsResultEntry {
	de, ok := domain.As(err)
	if !ok || de.Kind == domain.KindInternal {
		a.log.Error("putting an event", "path", c.Request.URL.Path, "err", err)
		return PutEventsResultEntry{ErrorCode: domain.ErrInternal.Code, ErrorMessage: "an internal error occurred; it has been logged"}
	}
	return PutEventsResultEntry{ErrorCode: de.Code, ErrorMessage: messageOf(de)}
}

// decodeBatch decodes a batch entry by entry, so that an invalid entry fails alone: events[i] is nil when
// errs[i] is not. It fails as a whole only when the body is not a non-empty JSON array.
func decodeBatch(body []byte) (events []*event.Event, errs []error, err error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return nil, nil, malformed("", "a batch must be a JSON array of CloudEvents, not a JSON %s", typ.Value)
		}
		return nil, nil, malformed("", "the batch is not valid JSON: %s", err)
	}
	if len(raws) == 0 {
		return nil, nil, bus.ErrInvalidEvent.With("the batch is empty; send at least one CloudEvent")
	}
	events, errs = make([]*event.Event, len(raws)), make([]error, len(raws))
	for i, raw := range raws {
		events[i], errs[i] = decodeStructured(raw)
	}
	return events, errs, nil
}

// decodeStructured decodes one CloudEvent in its JSON form and validates it with bus.ValidateEvent.
func decodeStructured(raw []byte) (*event.Event, error) {
	e := event.New()
	if err := e.UnmarshalJSON(raw); err != nil {
		if len(raw) > bus.MaxEventSize {
			return nil, bus.ValidateEvent(&e, len(raw)) // too large whatever else is wrong
		}
		return nil, bus.ErrInvalidEvent.With("invalid CloudEvent: %s", err.Error())
	}
	if err := bus.ValidateEvent(&e, len(raw)); err != nil {
		return nil, err
	}
	// The SDK keeps a JSON payload's bytes as they stood in the envelope, whitespace around them included
	// (a data_base64 payload is binary and stays as it is).
	if !e.DataBase64 {
		e.DataEncoded = bytes.TrimSpace(e.DataEncoded)
	}
	return &e, nil
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
	if err := bus.ValidateEvent(e, size); err != nil {
		return nil, err
	}
	return e, nil
}
