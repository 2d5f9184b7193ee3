package stream

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

func newEvent(mod func(e *event.Event)) *event.Event {
	e := event.New()
	e.SetID("e1")
	e.SetSource("/shop")
	e.SetType("order.created")
	if mod != nil {
		mod(&e)
	}
	return &e
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		mod      func(e *event.Event)
		field    string
		tooLarge bool
		ok       bool
	}{
		{name: "plain", ok: true},
		{name: "JSON data", mod: func(e *event.Event) { _ = e.SetData("application/json", map[string]any{"a": 1}) }, ok: true},
		{name: "text data with control characters", mod: func(e *event.Event) { e.SetDataContentType("text/plain"); e.DataEncoded = []byte("a\x00b\n") }, ok: true},
		{name: "binary data, no type", mod: func(e *event.Event) { e.DataEncoded = []byte{0, 1, 2} }, ok: true},
		{name: "a NUL in type", mod: func(e *event.Event) { e.SetType("a\x00b") }, field: "type"},
		{name: "DEL in id", mod: func(e *event.Event) { e.SetID("a\x7f") }, field: "id"},
		{name: "C1 in subject", mod: func(e *event.Event) { e.SetSubject("x\u0085y") }, field: "subject"},
		{name: "a noncharacter", mod: func(e *event.Event) { e.SetSubject("x\ufffe") }, field: "subject"},
		{name: "a control character in an extension", mod: func(e *event.Event) { e.SetExtension("region", "eu\n") }, field: "region"},
		{name: "attributes too large", mod: func(e *event.Event) { e.SetSource("/" + strings.Repeat("s", MaxAttributesSize)) }, field: "source", tooLarge: true},
		{name: "many large extensions", mod: func(e *event.Event) {
			for i := range 40 {
				e.SetExtension("x"+strings.Repeat("a", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26)), strings.Repeat("v", 1000))
			}
		}, tooLarge: true},
		{name: "too many extensions", mod: func(e *event.Event) {
			for i := range MaxExtensions + 1 {
				e.SetExtension("x"+string(rune('a'+i%26))+string(rune('a'+i/26%26)), "v")
			}
		}, field: "", tooLarge: true},
		{name: "an extension name too long", mod: func(e *event.Event) { e.SetExtension(strings.Repeat("n", 70), "v") }},
		{name: "data too deep", mod: func(e *event.Event) {
			e.SetDataContentType("application/json")
			e.DataEncoded = []byte(strings.Repeat("[", MaxDataDepth+1) + strings.Repeat("]", MaxDataDepth+1))
		}, field: "data"},
		{name: "data at the depth limit", mod: func(e *event.Event) {
			e.SetDataContentType("application/json")
			e.DataEncoded = []byte(strings.Repeat("[", MaxDataDepth) + strings.Repeat("]", MaxDataDepth))
		}, ok: true},
		{name: "brackets in strings do not count", mod: func(e *event.Event) {
			e.SetDataContentType("application/json")
			e.DataEncoded = []byte(`["` + strings.Repeat("[", 2000) + `\"["]`)
		}, ok: true},
		{name: "invalid JSON data", mod: func(e *event.Event) {
			e.SetDataContentType("application/cloudevents+json")
			e.DataEncoded = []byte("{")
		}, field: "data"},
		{name: "event too large", mod: func(e *event.Event) { e.SetDataContentType("text/plain"); e.DataEncoded = make([]byte, MaxEventSize+1) }, tooLarge: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(newEvent(tc.mod), 0)
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ce *CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *CheckError", err)
			}
			if tc.field != "" && ce.Field != tc.field {
				t.Errorf("field %q, want %q (%v)", ce.Field, tc.field, err)
			}
			if ce.TooLarge != tc.tooLarge {
				t.Errorf("TooLarge %v, want %v (%v)", ce.TooLarge, tc.tooLarge, err)
			}
		})
	}
}

// TestEncodeDecodeKeepsEverything: every attribute keeps its value and CloudEvents type, and the data its bytes and
// its being binary, through the stored form; the JSON form of the decoded event is the original's.
func TestEncodeDecodeKeepsEverything(t *testing.T) {
	t.Parallel()
	home, _ := url.Parse("https://example.com/x")
	ref, _ := url.Parse("../y?z=1")
	at := time.Date(2026, 12, 1, 10, 11, 12, 123456789, time.UTC)
	for _, tc := range []struct {
		name string
		mod  func(e *event.Event)
	}{
		{"typed extensions", func(e *event.Event) {
			e.SetExtension("count", int32(-7))
			e.SetExtension("flag", false)
			e.SetExtension("blob", []byte{0, 1, 0xff})
			e.SetExtension("home", types.URI{URL: *home})
			e.SetExtension("ref", types.URIRef{URL: *ref})
			e.SetExtension("at", types.Timestamp{Time: at})
			e.SetExtension("text", "42")
			e.SetTime(at)
		}},
		{"JSON data", func(e *event.Event) {
			e.SetDataContentType("application/json")
			e.DataEncoded = []byte(`{"n": 12345678901234567890}`)
		}},
		{"text data with whitespace", func(e *event.Event) { e.SetDataContentType("text/plain"); e.DataEncoded = []byte(" Hello, World!\n") }},
		{"binary data without a type", func(e *event.Event) { e.DataEncoded = []byte{0, 1, 2, 0xff}; e.DataBase64 = true }},
		{"text type, bytes that are not UTF-8", func(e *event.Event) { e.SetDataContentType("text/plain"); e.DataEncoded = []byte{0xc0, 0xa0} }},
		{"octet stream", func(e *event.Event) {
			e.SetDataContentType("application/octet-stream")
			e.DataEncoded = []byte("abc")
			e.DataBase64 = true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newEvent(tc.mod)
			if err := Check(in, 0); err != nil {
				t.Fatal(err)
			}
			m := Encode(in)
			out, err := Decode(&nats.Msg{Header: m.Header, Data: m.Data})
			if err != nil {
				t.Fatal(err)
			}
			in.DataBase64 = cloudevent.IsBinary(in) // the JSON form that keeps the bytes: data_base64 for binary data
			want, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("JSON form\n got %s\nwant %s", got, want)
			}
			if string(out.Data()) != string(in.Data()) {
				t.Errorf("data %q, want %q", out.Data(), in.Data())
			}
			for k, v := range in.Extensions() {
				wantText, wantType, _ := extensionValue(v)
				gotText, gotType, _ := extensionValue(out.Extensions()[k])
				if gotText != wantText || gotType != wantType {
					t.Errorf("extension %s: %s %q, want %s %q", k, gotType, gotText, wantType, wantText)
				}
			}
		})
	}
}

// TestDecodeReadsTheEarlierForm: a message written by the codec of the previous release (every extension a
// string, no type or data-encoding header) decodes as it did: the same attributes, extensions as strings, the data
// as it was.
func TestDecodeReadsTheEarlierForm(t *testing.T) {
	t.Parallel()
	m := nats.NewMsg("x")
	for k, v := range map[string]string{"ce-specversion": "1.0", "ce-id": "e1", "ce-source": "/shop", "ce-type": "order.created",
		"ce-subject": "o-42", "ce-time": "2026-12-01T10:11:12.5Z", "content-type": "application/json", "ce-count": "42",
		"ce-region": "eu"} {
		m.Header.Set(k, v)
	}
	m.Data = []byte(`{"amount": 120}`)
	e, err := Decode(m)
	if err != nil {
		t.Fatal(err)
	}
	if e.ID() != "e1" || e.Source() != "/shop" || e.Type() != "order.created" || e.Subject() != "o-42" ||
		e.DataContentType() != "application/json" || string(e.Data()) != `{"amount": 120}` || e.DataBase64 ||
		!e.Time().Equal(time.Date(2026, 12, 1, 10, 11, 12, 5e8, time.UTC)) {
		t.Errorf("decoded %v", e)
	}
	if e.Extensions()["count"] != "42" || e.Extensions()["region"] != "eu" {
		t.Errorf("extensions %v, want strings", e.Extensions())
	}
	// Encoded again, it is the same message but for the types it never had.
	again := Encode(e)
	for k := range m.Header {
		if again.Header.Get(k) != m.Header.Get(k) {
			t.Errorf("header %s: %q, want %q", k, again.Header.Get(k), m.Header.Get(k))
		}
	}
}

// TestJSONDataIsNeverBinary: JSON data set as bytes (the SDK's SetData marks any []byte as base64) keeps its JSON
// form, data as a JSON value, so that patterns and transformers see into it.
func TestJSONDataIsNeverBinary(t *testing.T) {
	t.Parallel()
	for _, ct := range []string{"application/json", "application/cloudevents+json; charset=utf-8", "text/json"} {
		e := newEvent(nil)
		_ = e.SetData(ct, []byte(`{"amount": 120}`))
		if !e.DataBase64 {
			t.Fatal("the SDK no longer marks []byte data as base64; this test has lost its point")
		}
		if err := Check(e, 0); err != nil {
			t.Fatal(err)
		}
		m := Encode(e)
		if m.Header.Get(HeaderDataEncoding) != "" {
			t.Errorf("%q: JSON data stored as binary", ct)
		}
		out, err := Decode(&nats.Msg{Header: m.Header, Data: m.Data})
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(out)
		if !strings.Contains(string(j), `"data":{"amount":120}`) {
			t.Errorf("%q: JSON form %s", ct, j)
		}
	}
}

// TestStandIn: the event a dead letter carries for one the invariant refuses keeps what can be kept and carries the
// whole event as its data; too large a JSON form is cut, saying its size.
func TestStandIn(t *testing.T) {
	t.Parallel()
	e := newEvent(func(e *event.Event) {
		e.SetType("bad\x00type")
		e.SetSubject(strings.Repeat("s", 40<<10))
	})
	s := StandIn(e)
	if err := Check(s, 0); err != nil {
		t.Fatalf("the stand-in may not be stored: %v", err)
	}
	if s.ID() != e.ID() || s.Source() != e.Source() || s.Type() != StandInType || s.Extensions()[ExtStandIn] != true {
		t.Errorf("stand-in %s %s %s %v", s.ID(), s.Source(), s.Type(), s.Extensions())
	}
	back, err := cloudevent.Unmarshal(s.Data())
	if err != nil || back.Type() != "bad\x00type" || back.Subject() != e.Subject() {
		t.Fatalf("the stand-in's data is not the event: %v", err)
	}
	huge := newEvent(func(e *event.Event) {
		e.SetID(strings.Repeat("i", 2000))
		_ = e.SetData("text/plain", strings.Repeat("d", MaxEventSize+10))
	})
	s = StandIn(huge)
	if err := Check(s, 0); err != nil {
		t.Fatalf("the stand-in may not be stored: %v", err)
	}
	if !strings.HasPrefix(s.ID(), "sha256:") || s.Extensions()[ExtTruncatedFrom] == nil || len(s.Data()) > MaxEventSize {
		t.Errorf("stand-in of a huge event: id %.20s, extensions %v, %d bytes of data", s.ID(), s.Extensions(), len(s.Data()))
	}
}
