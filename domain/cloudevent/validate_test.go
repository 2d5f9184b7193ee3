package cloudevent_test

import (
	"errors"
	"maps"
	"net/url"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// validateCases are attributes at the edges of what the SDK's Validate takes: id, source, type, subject,
// datacontenttype and dataschema ("-" for absent).
var validateCases = [][6]string{
	{"1", "bench", "order.created", "-", "-", "-"},
	{"1", "/shop/orders", "t", "s", "application/json", "https://example.com/schema"},
	{"1", "https://example.com/a?b#c", "t", "-", "application/cloudevents+json", "-"},
	{" ", "bench", "t", "-", "-", "-"},
	{"1", "", "t", "-", "-", "-"},
	{"1", "bench", "\t", "-", "-", "-"},
	{"1", "bench", "t", " ", "-", "-"},
	{"1", "bench", "t", "", "-", "-"},
	{"1", "bench", "t", "-", "", "-"},
	{"1", "bench", "t", "-", " ", "-"},
	{"1", "bench", "t", "-", "json", "-"},
	{"1", "bench", "t", "-", "Application/JSON", "-"},
	{"1", "bench", "t", "-", "application/json; charset=utf-8", "-"},
	{"1", "bench", "t", "-", "application/json;", "-"},
	{"1", "bench", "t", "-", "application/json; charset", "-"},
	{"1", "bench", "t", "-", " text/plain ", "-"},
	{"1", "bench", "t", "-", "a/b/c", "-"},
	{"1", "bench", "t", "-", "/json", "-"},
	{"1", "bench", "t", "-", "application/", "-"},
	{"1", "bench", "t", "-", "tëxt/plain", "-"},
	{"1", "bench", "t", "-", "text/pl ain", "-"},
	{"1", "bench", "t", "-", "text/(plain)", "-"},
	{"1", "bench", "t", "-", "-", "relative/schema"},
	{"1", "bench", "t", "-", "-", ""},
}

// v1Event makes the event of attrs as a reader might leave it: the source parsed as the SDK parses it, or, when
// raw, set as a path the way the fast reader sets a plain one.
func v1Event(attrs [6]string, raw bool) *event.Event {
	ec := &event.EventContextV1{ID: attrs[0], Type: attrs[2]}
	if u := types.ParseURIRef(attrs[1]); u != nil && !raw {
		ec.Source = *u
	} else {
		ec.Source = types.URIRef{URL: url.URL{Path: attrs[1]}}
	}
	if attrs[3] != "-" {
		ec.Subject = &attrs[3]
	}
	if attrs[4] != "-" {
		ec.DataContentType = &attrs[4]
	}
	if attrs[5] != "-" {
		if u := types.ParseURI(attrs[5]); u != nil {
			ec.DataSchema = u
		} else {
			ec.DataSchema = &types.URI{URL: url.URL{Path: attrs[5]}}
		}
	}
	return &event.Event{Context: ec}
}

// checkValidate holds Validate to the SDK's Validate: the same answer, the same errors (a map, written in no
// order).
func checkValidate(t *testing.T, e *event.Event) {
	t.Helper()
	got, want := cloudevent.Validate(e), e.Validate()
	if (got == nil) != (want == nil) || got != nil && !maps.EqualFunc(fieldErrors(t, got), fieldErrors(t, want), sameError) {
		t.Errorf("%+v: Validate %v, the SDK %v", e.Context, got, want)
	}
}

func fieldErrors(t *testing.T, err error) event.ValidationError {
	t.Helper()
	var v event.ValidationError
	if !errors.As(err, &v) {
		t.Fatalf("%v is not an event.ValidationError", err)
	}
	return v
}

func sameError(a, b error) bool { return a.Error() == b.Error() }

func TestValidateAsTheSDK(t *testing.T) {
	for _, c := range validateCases {
		checkValidate(t, v1Event(c, false))
		checkValidate(t, v1Event(c, true))
	}
	withFieldErrors := v1Event(validateCases[0], false)
	withFieldErrors.FieldErrors = map[string]error{"id": errors.New("set badly")}
	checkValidate(t, withFieldErrors)
	v03 := event.New(event.CloudEventsVersionV03)
	checkValidate(t, &v03)
	v03.SetID("1")
	v03.SetSource("bench")
	v03.SetType("t")
	checkValidate(t, &v03)
}

// An event that passes costs the SDK a map, the source's text and the content type's parameters; it costs Validate
// nothing.
func TestValidateAllocatesNothingForAPlainEvent(t *testing.T) {
	for _, c := range validateCases[:2] { // plain sources: a URL's text is built
		e := v1Event(c, false)
		if n := testing.AllocsPerRun(100, func() { _ = cloudevent.Validate(e) }); n != 0 {
			t.Errorf("%v: %v allocations", c, n)
		}
	}
}

func FuzzValidateAsTheSDK(f *testing.F) {
	for _, c := range validateCases {
		f.Add(c[0], c[1], c[2], c[3], c[4], c[5])
	}
	f.Fuzz(func(t *testing.T, id, source, typ, subject, contentType, schema string) {
		attrs := [6]string{id, source, typ, subject, contentType, schema}
		checkValidate(t, v1Event(attrs, false))
		checkValidate(t, v1Event(attrs, true))
	})
}
