package awsevent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// Entry is one entry of an Amazon EventBridge PutEvents request (PutEventsRequestEntry), its bus aside.
type Entry struct {
	Source     string
	DetailType string
	// Detail is the text of a JSON object.
	Detail    string
	Resources []string
	// Time is the event's time; nil for the time of the call.
	Time *time.Time
	// TraceHeader is AWS's X-Ray trace header (X-Amzn-Trace-Id); only a W3C traceparent is kept.
	TraceHeader string
}

// Per-entry error codes of PutEvents, as Amazon EventBridge answers them (see EntryError).
const (
	CodeInvalidArgument = "InvalidArgument"
	CodeMalformedDetail = "MalformedDetail"
)

// EntryError is why one PutEvents entry failed, with the code and message Amazon EventBridge answers in that entry's
// result (ErrorCode, ErrorMessage) while the request as a whole succeeds.
type EntryError struct {
	Code    string
	Message string
}

func (e *EntryError) Error() string { return e.Code + ": " + e.Message }

// The texts below are LocalStack's (localstack-core/localstack/services/events/provider.py, validate_event), which
// its tests recorded against AWS (tests/aws/services/events/test_events.snapshot.json: test_put_events_without_source,
// test_put_event_without_detail_type, test_put_event_without_detail, test_put_event_malformed_detail).
var (
	errNoSource = &EntryError{Code: CodeInvalidArgument,
		Message: "Parameter Source is not valid. Reason: Source is a required argument."}
	errNoDetailType = &EntryError{Code: CodeInvalidArgument,
		Message: "Parameter DetailType is not valid. Reason: DetailType is a required argument."}
	errNoDetail = &EntryError{Code: CodeInvalidArgument,
		Message: "Parameter Detail is not valid. Reason: Detail is a required argument."}
	errMalformedDetail = &EntryError{Code: CodeMalformedDetail, Message: "Detail is malformed."}
)

// Validate returns the *EntryError AWS answers for the entry, nil when it has none: Source, DetailType and Detail
// are required (empty is missing, as AWS answers an empty DetailType), checked in that order as LocalStack does;
// Detail must be the text of a JSON object (AWS refuses "NotJSON", "[]", "{{}" and "\"NotJSON\"" alike). A copy
// of the error is returned, so callers may keep it. The size limit of a request (256 KiB) is the caller's.
func (en Entry) Validate() *EntryError {
	var err *EntryError
	switch {
	case en.Source == "":
		err = errNoSource
	case en.DetailType == "":
		err = errNoDetailType
	case en.Detail == "":
		err = errNoDetail
	case !isJSONObject(en.Detail):
		err = errMalformedDetail
	default:
		return nil
	}
	c := *err
	return &c
}

// isJSONObject reports whether s is the text of one JSON object, white space around it allowed.
func isJSONObject(s string) bool {
	return strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), "{") && json.Valid([]byte(s))
}

// FromEntry returns the CloudEvent stored for the PutEvents entry e (see the package doc): id; source Source;
// type DetailType; time Time, or now when it has none, in UTC to the second (as AWS has it); datacontenttype application/json and data Detail
// byte for byte; the String extensions account and region (none for an empty argument), resources (the compact
// JSON text of Resources, none when it is empty) and traceparent (TraceHeader when it is a W3C traceparent:
// AWS's X-Ray headers and anything else are not kept). It does not read the clock.
//
// Errors: the *EntryError of e.Validate; an error naming the problem when the entry makes no valid CloudEvent (an
// empty id; a Source that is no URI-reference as RFC 3986 writes one, a *cloudevent.URIError: a CloudEvent's source
// would store it escaped).
func FromEntry(e Entry, id, account, region string, now time.Time) (*event.Event, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	ev := event.New()
	ev.SetID(id)
	ev.SetSource(e.Source)
	ev.SetType(e.DetailType)
	at := now
	if e.Time != nil {
		at = *e.Time
	}
	ev.SetTime(at.UTC().Truncate(time.Second)) // AWS's events have whole seconds, and patterns on time see them so
	// SetData takes the bytes as they are; the SDK marks them base64, but they are the JSON text of the data.
	if err := ev.SetData(event.ApplicationJSON, []byte(e.Detail)); err != nil {
		return nil, fmt.Errorf("detail: %w", err)
	}
	ev.DataBase64 = false
	if account != "" {
		ev.SetExtension(ExtAccount, account)
	}
	if region != "" {
		ev.SetExtension(ExtRegion, region)
	}
	if len(e.Resources) > 0 {
		ev.SetExtension(ExtResources, resourcesText(e.Resources))
	}
	if isTraceparent(e.TraceHeader) {
		ev.SetExtension(extTraceParent, e.TraceHeader)
	}
	if err := ev.Validate(); err != nil {
		return nil, fmt.Errorf("the entry makes no valid CloudEvent: %w", err)
	}
	if err := cloudevent.KeptURIs(&ev, e.Source, ""); err != nil {
		return nil, err
	}
	return &ev, nil
}

// resourcesText is the compact JSON text of the array of resources, HTML characters unescaped.
func resourcesText(resources []string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(resources) // strings always encode
	return strings.TrimSuffix(b.String(), "\n")
}

// isTraceparent reports whether s is a traceparent of W3C Trace Context (www.w3.org/TR/trace-context, 3.2) in the
// 55-character form of version 00: version, trace id, parent id and flags in lowercase hex, separated by "-";
// version ff, an all-zero trace id or an all-zero parent id are invalid. It is the form the http sink propagates.
func isTraceparent(s string) bool {
	if len(s) != 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return false
	}
	version, trace, parent, flags := s[:2], s[3:35], s[36:52], s[53:]
	return isLowerHex(version) && version != "ff" && isLowerHex(trace) && isLowerHex(parent) && isLowerHex(flags) &&
		trace != strings.Repeat("0", 32) && parent != strings.Repeat("0", 16)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
