package transform_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/transform"
)

func ptr(s string) *string { return &s }

// orderEvent is the event most cases transform.
func orderEvent(t *testing.T) *event.Event {
	t.Helper()
	e := event.New()
	e.SetID("evt-1")
	e.SetSource("shop/eu")
	e.SetType("order.created")
	e.SetSubject("orders/o-1")
	e.SetTime(time.Date(2026, 3, 29, 10, 15, 0, 123000000, time.UTC))
	e.SetExtension("tenant", "acme")
	data := `{"orderId":"o-1","amount":120.50,"big":12345678901234567890,"paid":true,"note":null,` +
		`"items":[{"sku":"x1","qty":2},{"sku":"y2","qty":1}],"customer":{"name":"Zoë \"Z\" O'Neil","address":{"city":"Köln"}},` +
		`"comment":"line1\nline2\ttab <b>&</b>","weird.key":"dotted","tags":["a","b"]}`
	if err := e.SetData(transform.ContentTypeJSON, json.RawMessage(data)); err != nil {
		t.Fatal(err)
	}
	return &e
}

func it(paths map[string]string, template string) transform.Spec {
	return transform.Spec{InputTransformer: &transform.InputTransformer{InputPathsMap: paths, InputTemplate: template}}
}

func param(form transform.Form, value, template string) transform.Spec {
	return transform.Spec{Transform: &transform.Param{Form: form, Value: value, Template: template}}
}

func TestApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec transform.Spec
		// want is compared as JSON when wantCT is JSON, else byte for byte; EVENT stands for the event's JSON form.
		want   string
		wantCT string
	}{
		// Amazon EventBridge: inputPathsMap + inputTemplate, JSON templates.
		{"string inserted as a JSON string", it(map[string]string{"id": "$.data.orderId"}, `{"order": <id>}`),
			`{"order": "o-1"}`, transform.ContentTypeJSON},
		{"number, boolean, null inserted as JSON", it(map[string]string{"a": "$.data.amount", "p": "$.data.paid", "n": "$.data.note"},
			`{"amount": <a>, "paid": <p>, "note": <n>}`), `{"amount": 120.50, "paid": true, "note": null}`, transform.ContentTypeJSON},
		{"big numbers keep their digits", it(map[string]string{"b": "$.data.big"}, `[<b>]`),
			`[12345678901234567890]`, transform.ContentTypeJSON},
		{"object and array inserted as JSON", it(map[string]string{"c": "$.data.customer", "t": "$.data.tags"},
			`{"customer": <c>, "tags": <t>}`),
			`{"customer": {"name": "Zoë \"Z\" O'Neil", "address": {"city": "Köln"}}, "tags": ["a", "b"]}`, transform.ContentTypeJSON},
		{"array index and nested member", it(map[string]string{"sku": "$.data.items[1].sku", "qty": "$.data.items[0].qty", "city": "$.data.customer.address.city"},
			`{"sku": <sku>, "qty": <qty>, "city": <city>}`), `{"sku": "y2", "qty": 2, "city": "Köln"}`, transform.ContentTypeJSON},
		{"quoted member name", it(map[string]string{"w": "$.data['weird.key']", "w2": `$["data"]["weird.key"]`}, `[<w>, <w2>]`),
			`["dotted", "dotted"]`, transform.ContentTypeJSON},
		{"attributes and extensions by path", it(map[string]string{"src": "$.source", "tenant": "$.tenant", "time": "$.time"},
			`{"src": <src>, "tenant": <tenant>, "time": <time>}`),
			`{"src": "shop/eu", "tenant": "acme", "time": "2026-03-29T10:15:00.123Z"}`, transform.ContentTypeJSON},
		{"the whole event by path", it(map[string]string{"all": "$"}, `{"wrapped": <all>}`), `{"wrapped": EVENT}`, transform.ContentTypeJSON},
		{"missing paths give null", it(map[string]string{"m": "$.data.missing", "oob": "$.data.items[5]", "deep": "$.data.orderId.x", "idx": "$.data.customer[0]"},
			`{"m": <m>, "oob": <oob>, "deep": <deep>, "idx": <idx>}`), `{"m": null, "oob": null, "deep": null, "idx": null}`, transform.ContentTypeJSON},
		{"strings needing escapes", it(map[string]string{"c": "$.data.comment", "n": "$.data.customer.name"}, `{"comment": <c>, "name": <n>}`),
			`{"comment": "line1\nline2\ttab <b>&</b>", "name": "Zoë \"Z\" O'Neil"}`, transform.ContentTypeJSON},
		{"placeholder inside a JSON string", it(map[string]string{"id": "$.data.orderId", "c": "$.data.comment", "m": "$.data.missing", "obj": "$.data.customer.address"},
			`{"text": "Order <id>: <c> [<m>] at <obj>"}`),
			`{"text": "Order o-1: line1\nline2\ttab <b>&</b> [] at {\"city\":\"Köln\"}"}`, transform.ContentTypeJSON},
		{"escaped quotes around a placeholder", it(map[string]string{"n": "$.data.customer.name"}, `{"said": "\"<n>\""}`),
			`{"said": "\"Zoë \"Z\" O'Neil\""}`, transform.ContentTypeJSON},
		{"a variable used twice", it(map[string]string{"id": "$.data.orderId"}, `{"a": <id>, "b": "<id>-<id>"}`),
			`{"a": "o-1", "b": "o-1-o-1"}`, transform.ContentTypeJSON},
		{"a lone variable is a JSON template", it(map[string]string{"id": "$.data.orderId"}, `<id>`), `"o-1"`, transform.ContentTypeJSON},
		{"reserved variables", it(nil, `{"id": <ce.id>, "type": <ce.type>, "source": <ce.source>, "subject": <ce.subject>, "time": <ce.time>, "sv": <ce.specversion>, "ct": <ce.datacontenttype>, "schema": <ce.dataschema>}`),
			`{"id": "evt-1", "type": "order.created", "source": "shop/eu", "subject": "orders/o-1", "time": "2026-03-29T10:15:00.123Z", "sv": "1.0", "ct": "application/json", "schema": null}`,
			transform.ContentTypeJSON},
		{"the whole event as a reserved variable", it(nil, `{"event": <ce.event.json>, "id": "<ce.id>"}`), `{"event": EVENT, "id": "evt-1"}`, transform.ContentTypeJSON},
		{"undeclared names stay literal", it(map[string]string{"id": "$.data.orderId"}, `{"html": "<b>bold</b>", "id": <id>}`),
			`{"html": "<b>bold</b>", "id": "o-1"}`, transform.ContentTypeJSON},

		// Text templates: strings as text, other values as JSON text, missing as nothing.
		{"text template", it(map[string]string{"id": "$.data.orderId", "a": "$.data.amount", "c": "$.data.customer.address", "m": "$.data.missing"},
			`Order <id> of <a> EUR to <c><m>, from <ce.source>.`),
			`Order o-1 of 120.50 EUR to {"city":"Köln"}, from shop/eu.`, transform.ContentTypeText},
		{"text template keeps strings raw", it(map[string]string{"c": "$.data.comment", "n": "$.data.customer.name"}, `<n> wrote: <c>`),
			"Zoë \"Z\" O'Neil wrote: line1\nline2\ttab <b>&</b>", transform.ContentTypeText},
		{"JSON-looking template that is not JSON", it(map[string]string{"id": "$.data.orderId"}, `{"id": <id>,}`),
			`{"id": o-1,}`, transform.ContentTypeText},
		{"unbalanced quotes are text", it(map[string]string{"id": "$.data.orderId"}, `He said "<id>`), `He said "o-1`, transform.ContentTypeText},

		// Amazon EventBridge: input and inputPath.
		{"input replaces data", transform.Spec{Input: ptr(`{"fixed": true}`)}, `{"fixed": true}`, transform.ContentTypeJSON},
		{"inputPath selects an object", transform.Spec{InputPath: ptr("$.data.customer")},
			`{"name": "Zoë \"Z\" O'Neil", "address": {"city": "Köln"}}`, transform.ContentTypeJSON},
		{"inputPath selects a string as JSON", transform.Spec{InputPath: ptr("$.data.comment")},
			`"line1\nline2\ttab <b>&</b>"`, transform.ContentTypeJSON},
		{"inputPath selects an array element", transform.Spec{InputPath: ptr("$.data.items[0]")}, `{"sku": "x1", "qty": 2}`, transform.ContentTypeJSON},
		{"inputPath missing", transform.Spec{InputPath: ptr("$.data.nope")}, `null`, transform.ContentTypeJSON},

		// Apache RocketMQ EventBridge forms.
		{"ORIGINAL delivers the whole event", param(transform.Original, "", ""), `EVENT`, transform.ContentTypeJSON},
		{"CONSTANT JSON", param(transform.Constant, `{"k": [1, 2]}`, ""), `{"k": [1, 2]}`, transform.ContentTypeJSON},
		{"CONSTANT text", param(transform.Constant, "hello, world", ""), "hello, world", transform.ContentTypeText},
		{"JSONPATH string as text", param(transform.JSONPath, "$.data.customer.name", ""), "Zoë \"Z\" O'Neil", transform.ContentTypeText},
		{"JSONPATH object as JSON", param(transform.JSONPath, "$.data.items", ""), `[{"sku": "x1", "qty": 2}, {"sku": "y2", "qty": 1}]`, transform.ContentTypeJSON},
		{"JSONPATH missing", param(transform.JSONPath, "$.data.missing", ""), `null`, transform.ContentTypeJSON},
		{"TEMPLATE JSON", param(transform.Template, `{"content": "$.data.comment", "id": "$.data.orderId"}`,
			`{"text": {"content": "${content}"}, "msgtype": "text", "order": ${id}, "by": "${ce.source}"}`),
			`{"text": {"content": "line1\nline2\ttab <b>&</b>"}, "msgtype": "text", "order": "o-1", "by": "shop/eu"}`, transform.ContentTypeJSON},
		{"TEMPLATE text", param(transform.Template, `{"name": "$.data.customer.name"}`, `The value of ${name} is ${missing}${name}`),
			`The value of Zoë "Z" O'Neil is ${missing}Zoë "Z" O'Neil`, transform.ContentTypeText},
		{"TEMPLATE without variables", param(transform.Template, "", `order ${ce.id}`), `order evt-1`, transform.ContentTypeText},
		{"TEMPLATE keeps angle brackets", param(transform.Template, `{"id": "$.data.orderId"}`, `<id> ${id}`), `<id> o-1`, transform.ContentTypeText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, err := transform.Compile(tt.spec)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			in := orderEvent(t)
			before, _ := json.Marshal(in)
			out, err := tr.Apply(in)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if after, _ := json.Marshal(in); !bytes.Equal(before, after) {
				t.Fatal("Apply modified its input")
			}
			if got := out.DataContentType(); got != tt.wantCT {
				t.Fatalf("datacontenttype = %q, want %q (data %s)", got, tt.wantCT, out.Data())
			}
			if out.ID() != in.ID() || out.Type() != in.Type() || out.Source() != in.Source() || out.Subject() != in.Subject() ||
				out.Extensions()["tenant"] != "acme" || !out.Time().Equal(in.Time()) {
				t.Fatalf("attributes changed: %v", out)
			}
			if err := out.Validate(); err != nil {
				t.Fatalf("the output is not a valid CloudEvent: %v", err)
			}
			got := out.Data()
			whole, err := in.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(tt.want, "EVENT", string(whole))
			if tt.wantCT == transform.ContentTypeJSON {
				assertJSONEq(t, want, string(got))
				return
			}
			if string(got) != want {
				t.Fatalf("output\n got %q\nwant %q", got, want)
			}
		})
	}
}

func assertJSONEq(t *testing.T, want, got string) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation %s: %v", want, err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("output is not JSON: %s: %v", got, err)
	}
	wj, _ := json.Marshal(w)
	gj, _ := json.Marshal(g)
	if !bytes.Equal(wj, gj) {
		t.Fatalf("output\n got %s\nwant %s", got, want)
	}
}

func TestApplyKeepsNumbersAndTextExactly(t *testing.T) {
	t.Parallel()
	tr, err := transform.Compile(it(map[string]string{"b": "$.data.big", "a": "$.data.amount", "c": "$.data.comment"}, `{"b": <b>, "a": <a>, "c": <c>}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := tr.Apply(orderEvent(t))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b": 12345678901234567890, "a": 120.50, "c": "line1\nline2\ttab <b>&</b>"}`
	if string(out.Data()) != want {
		t.Fatalf("got  %s\nwant %s", out.Data(), want)
	}
}

func TestEscapingUnicodeAndControlCharacters(t *testing.T) {
	t.Parallel()
	e := orderEvent(t)
	raw := "quote \" backslash \\ nul \x00 bell \x07 sep \u2028 emoji 😀 cjk 漢字"
	data, _ := json.Marshal(map[string]string{"s": raw})
	if err := e.SetData(transform.ContentTypeJSON, json.RawMessage(data)); err != nil {
		t.Fatal(err)
	}
	for _, tmpl := range []string{`{"s": <s>}`, `{"s": "<s>"}`, `["<s><s>", <s>]`} {
		tr, err := transform.Compile(it(map[string]string{"s": "$.data.s"}, tmpl))
		if err != nil {
			t.Fatal(err)
		}
		out, err := tr.Apply(e)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(out.Data(), &v); err != nil {
			t.Fatalf("%s: output is not JSON: %s", tmpl, out.Data())
		}
		if !strings.Contains(fmt.Sprint(v), raw) {
			t.Fatalf("%s: the string did not survive: %q", tmpl, v)
		}
	}
}

func TestEventsWhoseDataIsNotJSON(t *testing.T) {
	t.Parallel()
	text := event.New()
	text.SetID("t1")
	text.SetSource("s")
	text.SetType("t")
	text.SetDataContentType("text/plain")
	text.DataEncoded = []byte("plain \"words\"") // as events read from the bus have it (not base64)
	noData := event.New()
	noData.SetID("n1")
	noData.SetSource("s")
	noData.SetType("t")

	tests := []struct {
		name   string
		e      *event.Event
		spec   transform.Spec
		want   string
		wantCT string
	}{
		{"text data by path", &text, it(map[string]string{"d": "$.data"}, `{"d": <d>}`), `{"d": "plain \"words\""}`, transform.ContentTypeJSON},
		{"text data in a text template", &text, it(map[string]string{"d": "$.data"}, `got <d>`), `got plain "words"`, transform.ContentTypeText},
		{"no data", &noData, it(map[string]string{"d": "$.data", "x": "$.data.x"}, `{"d": <d>, "x": <x>, "subject": <ce.subject>, "time": <ce.time>}`),
			`{"d": null, "x": null, "subject": null, "time": null}`, transform.ContentTypeJSON},
		{"no data, text", &noData, it(map[string]string{"d": "$.data"}, `[<d>|<ce.subject>]`), `[|]`, transform.ContentTypeText},
		{"no data, constant", &noData, transform.Spec{Input: ptr(`"x"`)}, `"x"`, transform.ContentTypeJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, err := transform.Compile(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			out, err := tr.Output(tt.e)
			if err != nil {
				t.Fatal(err)
			}
			if out.ContentType != tt.wantCT || out.IsJSON() != (tt.wantCT == transform.ContentTypeJSON) {
				t.Fatalf("content type %q, want %q", out.ContentType, tt.wantCT)
			}
			if tt.wantCT == transform.ContentTypeJSON {
				assertJSONEq(t, tt.want, string(out.Data))
			} else if string(out.Data) != tt.want {
				t.Fatalf("got %q, want %q", out.Data, tt.want)
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	t.Parallel()
	broken := event.New()
	broken.SetID("b1")
	broken.SetSource("s")
	broken.SetType("t")
	broken.SetDataContentType(transform.ContentTypeJSON)
	broken.DataEncoded = []byte(`{"not": json`)

	tr, err := transform.Compile(it(map[string]string{"x": "$.data.not"}, `{"x": <x>}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Apply(&broken); err == nil || !strings.Contains(err.Error(), "JSON form") {
		t.Fatalf("data that is not the JSON it claims: want an error, got %v", err)
	}
	if _, err := tr.Apply(nil); err == nil {
		t.Fatal("nil event: want an error")
	}
	// A constant needs nothing of the event, so even a broken one transforms.
	c, err := transform.Compile(transform.Spec{Input: ptr(`1`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(&broken); err != nil {
		t.Fatal(err)
	}

	// An output beyond MaxOutputSize fails instead of growing without bound.
	big := event.New()
	big.SetID("big")
	big.SetSource("s")
	big.SetType("t")
	payload, _ := json.Marshal(map[string]string{"s": strings.Repeat("x", 64<<10)})
	if err := big.SetData(transform.ContentTypeJSON, json.RawMessage(payload)); err != nil {
		t.Fatal(err)
	}
	huge, err := transform.Compile(it(nil, strings.Repeat("<ce.event.json>", 5)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := huge.Apply(&big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("want an output-size error, got %v", err)
	}
}

func withAttributes(s transform.Spec, kv ...string) transform.Spec {
	s.Attributes = map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		s.Attributes[kv[i]] = kv[i+1]
	}
	return s
}

func TestApplyAttributes(t *testing.T) {
	t.Parallel()
	paths := map[string]string{"id": "$.data.orderId", "sku": "$.data.items[1].sku", "amount": "$.data.amount",
		"city": "$.data.customer.address", "name": "$.data.customer.name", "m": "$.data.missing", "src": "$.source"}
	order := it(paths, `{"order": <id>}`)
	tests := []struct {
		name string
		spec transform.Spec
		// want are the attributes the new event carries: name → value, "" for absent. Attributes not named must
		// be as they were.
		want map[string]string
		// wantData is the new data as JSON; "" = the event's data, unchanged.
		wantData string
	}{
		{"subject, type and an extension from paths", withAttributes(order,
			"subject", "orders/<id>", "type", "com.example.<sku>.shipped", "orderid", "<id>"),
			map[string]string{"subject": "orders/o-1", "type": "com.example.y2.shipped", "orderid": "o-1"}, `{"order": "o-1"}`},
		{"reserved variables", withAttributes(order,
			"subject", "<ce.type>/<ce.id>", "origin", "<ce.source>", "at", "<ce.time>", "previous", "<ce.subject>"),
			map[string]string{"subject": "order.created/evt-1", "origin": "shop/eu", "at": "2026-03-29T10:15:00.123Z", "previous": "orders/o-1"},
			`{"order": "o-1"}`},
		{"source and dataschema", withAttributes(order,
			"source", "<src>/orders", "dataschema", "https://example.com/schemas/<sku>.json"),
			map[string]string{"source": "shop/eu/orders", "dataschema": "https://example.com/schemas/y2.json"}, `{"order": "o-1"}`},
		{"strings raw, other values as JSON text", withAttributes(order,
			"customer", "<name>", "amount", "<amount> EUR", "city", "<city>"),
			map[string]string{"customer": `Zoë "Z" O'Neil`, "amount": "120.50 EUR", "city": `{"city":"Köln"}`}, `{"order": "o-1"}`},
		{"a JSON-looking template is still text", withAttributes(order, "info", `{"id": <id>}`),
			map[string]string{"info": `{"id": o-1}`}, `{"order": "o-1"}`},
		{"an existing extension replaced", withAttributes(order, "tenant", "globex-<id>"),
			map[string]string{"tenant": "globex-o-1"}, `{"order": "o-1"}`},
		{"white space around a value dropped", withAttributes(order, "subject", "  <id>  ", "note", " x "),
			map[string]string{"subject": "o-1", "note": "x"}, `{"order": "o-1"}`},
		{"a missing value gives nothing", withAttributes(order, "subject", "order <m>", "origin", "<src><m>"),
			map[string]string{"subject": "order", "origin": "shop/eu"}, `{"order": "o-1"}`},
		{"an empty value removes the attribute", withAttributes(order,
			"subject", "<m>", "tenant", "<m>", "dataschema", "", "absent", ""),
			map[string]string{"subject": "", "tenant": "", "dataschema": "", "absent": ""}, `{"order": "o-1"}`},
		{"undeclared names stay literal", withAttributes(order, "subject", "<nope> ${id} <id>"),
			map[string]string{"subject": "<nope> ${id} o-1"}, `{"order": "o-1"}`},
		{"a constant", withAttributes(order, "type", "com.example.order"), map[string]string{"type": "com.example.order"}, `{"order": "o-1"}`},

		// Attributes alone: the data stays as it is.
		{"attributes alone", withAttributes(transform.Spec{}, "subject", "<ce.source>/<ce.id>", "type", "order.copied", "region", "eu"),
			map[string]string{"subject": "shop/eu/evt-1", "type": "order.copied", "region": "eu"}, ""},
		{"attributes alone do not know paths", withAttributes(transform.Spec{}, "subject", "<id>"), map[string]string{"subject": "<id>"}, ""},

		// With the other forms: the reserved variables, and TEMPLATE's own.
		{"input", withAttributes(transform.Spec{Input: ptr(`{"fixed": 1}`)}, "subject", "fixed/<ce.id>"),
			map[string]string{"subject": "fixed/evt-1"}, `{"fixed": 1}`},
		{"inputPath", withAttributes(transform.Spec{InputPath: ptr("$.data.customer.address")}, "subject", "<ce.subject>/address"),
			map[string]string{"subject": "orders/o-1/address"}, `{"city": "Köln"}`},
		{"TEMPLATE with its variables", withAttributes(param(transform.Template, `{"id": "$.data.orderId"}`, `{"order": "${id}"}`),
			"subject", "orders/${id}", "origin", "${ce.source}", "literal", "<id>"),
			map[string]string{"subject": "orders/o-1", "origin": "shop/eu", "literal": "<id>"}, `{"order": "o-1"}`},
		{"JSONPATH with reserved variables", withAttributes(param(transform.JSONPath, "$.data.items[0]", ""), "type", "${ce.type}.item"),
			map[string]string{"type": "order.created.item"}, `{"sku": "x1", "qty": 2}`},
		{"ORIGINAL", withAttributes(param(transform.Original, "", ""), "wrapped", "yes"), map[string]string{"wrapped": "yes"}, "EVENT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, err := transform.Compile(tt.spec)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			in := orderEvent(t)
			before, _ := json.Marshal(in)
			out, err := tr.Apply(in)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if after, _ := json.Marshal(in); !bytes.Equal(before, after) {
				t.Fatal("Apply modified its input")
			}
			if err := out.Validate(); err != nil {
				t.Fatalf("the output is not a valid CloudEvent: %v", err)
			}
			// Every attribute is as it was, except those set.
			was := attributes(in)
			got := attributes(out)
			for name, v := range tt.want {
				was[name] = v
			}
			delete(was, "datacontenttype")
			delete(got, "datacontenttype")
			for name, v := range was {
				if v == "" {
					delete(was, name)
				}
			}
			wj, _ := json.Marshal(was)
			gj, _ := json.Marshal(got)
			if !bytes.Equal(wj, gj) {
				t.Fatalf("attributes\n got %s\nwant %s", gj, wj)
			}

			switch tt.wantData {
			case "":
				if !bytes.Equal(out.Data(), in.Data()) || out.DataContentType() != in.DataContentType() {
					t.Fatalf("the data changed: %s (%s)", out.Data(), out.DataContentType())
				}
			case "EVENT":
				whole, _ := in.MarshalJSON()
				assertJSONEq(t, string(whole), string(out.Data()))
			default:
				assertJSONEq(t, tt.wantData, string(out.Data()))
			}

			// Output tells the same.
			o, err := tr.Output(in)
			if err != nil {
				t.Fatalf("Output: %v", err)
			}
			if !bytes.Equal(o.Data, out.Data()) || o.ContentType != out.DataContentType() {
				t.Fatalf("Output's data %s (%s) differs from Apply's", o.Data, o.ContentType)
			}
			if len(o.Attributes) != len(tt.want) {
				t.Fatalf("Output's attributes %v, want %v", o.Attributes, tt.want)
			}
			for name, v := range tt.want {
				if o.Attributes[name] != v {
					t.Fatalf("Output's attribute %s = %q, want %q", name, o.Attributes[name], v)
				}
			}
		})
	}
}

// attributes returns the attributes of e, extensions included, by name.
func attributes(e *event.Event) map[string]string {
	m := map[string]string{"specversion": e.SpecVersion(), "id": e.ID(), "type": e.Type(), "source": e.Source(),
		"subject": e.Subject(), "dataschema": e.DataSchema(), "datacontenttype": e.DataContentType()}
	if !e.Time().IsZero() {
		m["time"] = e.Time().UTC().Format(time.RFC3339Nano)
	}
	for k, v := range e.Extensions() {
		m[k] = fmt.Sprint(v)
	}
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	return m
}

func TestApplyAttributesOnEventsWithoutDataOrWithText(t *testing.T) {
	t.Parallel()
	noData := event.New()
	noData.SetID("n1")
	noData.SetSource("s")
	noData.SetType("t")
	tr, err := transform.Compile(withAttributes(transform.Spec{}, "subject", "<ce.id>"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := tr.Apply(&noData)
	if err != nil {
		t.Fatal(err)
	}
	if out.Subject() != "n1" || out.Data() != nil || out.DataContentType() != "" {
		t.Fatalf("got %v", out)
	}
	o, err := tr.Output(&noData)
	if err != nil || o.Data != nil || o.IsJSON() || o.Attributes["subject"] != "n1" {
		t.Fatalf("Output = %+v, %v", o, err)
	}

	text := event.New()
	text.SetID("t1")
	text.SetSource("s")
	text.SetType("t")
	text.SetDataContentType("text/plain")
	text.DataEncoded = []byte("plain words")
	if o, err = tr.Output(&text); err != nil || string(o.Data) != "plain words" || o.ContentType != "text/plain" || o.IsJSON() {
		t.Fatalf("Output = %+v, %v", o, err)
	}
}

func TestOutputIsJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ct, data string
		want     bool
	}{
		{transform.ContentTypeJSON, `{"a": 1}`, true},
		{"application/json; charset=utf-8", `1`, true},
		{"application/cloudevents+json", `[]`, true},
		{"text/json", `"x"`, true},
		{"", `{"a": 1}`, true}, // a JSON form's data without datacontenttype
		{"", `plain`, false},
		{transform.ContentTypeText, `{"a": 1}`, false},
		{transform.ContentTypeJSON, `{"broken"`, false},
		{"not a media type/", `1`, false},
	}
	for _, tt := range tests {
		if got := (transform.Output{Data: []byte(tt.data), ContentType: tt.ct}).IsJSON(); got != tt.want {
			t.Errorf("IsJSON(%q, %s) = %v, want %v", tt.ct, tt.data, got, tt.want)
		}
	}
	if (transform.Output{ContentType: transform.ContentTypeJSON}).IsJSON() {
		t.Error("no data is not JSON")
	}
}

// Values that an attribute cannot take fail Apply and Output, naming the attribute.
func TestApplyAttributeErrors(t *testing.T) {
	t.Parallel()
	big := event.New()
	big.SetID("big")
	big.SetSource("s")
	big.SetType("t")
	payload, _ := json.Marshal(map[string]string{"s": strings.Repeat("x", transform.MaxAttributeValueSize+1)})
	if err := big.SetData(transform.ContentTypeJSON, json.RawMessage(payload)); err != nil {
		t.Fatal(err)
	}
	noSubject := orderEvent(t)
	noSubject.SetSubject("")
	paths := map[string]string{"m": "$.data.missing", "c": "$.data.comment", "id": "$.data.orderId", "s": "$.data.s"}
	tests := []struct {
		name  string
		spec  transform.Spec
		e     *event.Event
		field string
		msg   string
	}{
		{"type empty", withAttributes(it(paths, "<id>"), "type", "<m>"), orderEvent(t), "attributes.type", "required"},
		{"type only white space", withAttributes(it(paths, "<id>"), "type", " <m> "), orderEvent(t), "attributes.type", "required"},
		{"source empty", withAttributes(transform.Spec{}, "source", "<ce.subject>"), noSubject, "attributes.source", "required"},
		{"a control character", withAttributes(it(paths, "<id>"), "subject", "<c>"), orderEvent(t), "attributes.subject", "control character"},
		{"a control character in an extension", withAttributes(transform.Spec{}, "note", "<ce.event.json>x"), func() *event.Event {
			e := orderEvent(t)
			e.SetSubject("a\u0085b") // a C1 control character; the event's JSON form holds it as it is
			return e
		}(), "attributes.note", "control character"},
		{"dataschema not an absolute URI", withAttributes(it(paths, "<id>"), "dataschema", "schemas/<id>"), orderEvent(t), "attributes.dataschema", "dataschema"},
		{"a value too large", withAttributes(it(paths, "<id>"), "subject", "<s>"), &big, "attributes.subject", "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, err := transform.Compile(tt.spec)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if _, err := tr.Apply(tt.e); err == nil || !strings.Contains(err.Error(), tt.field+":") || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Apply: want an error naming %s with %q, got %v", tt.field, tt.msg, err)
			}
			if _, err := tr.Output(tt.e); err == nil || !strings.Contains(err.Error(), tt.field+":") {
				t.Fatalf("Output: want an error naming %s, got %v", tt.field, err)
			}
		})
	}
}

func TestCompileRefusesBadSpecs(t *testing.T) {
	t.Parallel()
	many := map[string]string{}
	for i := range transform.MaxVariables + 1 {
		many[fmt.Sprintf("v%d", i)] = "$.data.x"
	}
	atLimit := map[string]string{}
	for i := range transform.MaxVariables {
		atLimit[fmt.Sprintf("v%d", i)] = "$.data.x"
	}
	tests := []struct {
		name      string
		spec      transform.Spec
		wantField string // "" = valid
	}{
		{"nothing", transform.Spec{}, "inputTransformer"},
		{"two forms", transform.Spec{Input: ptr(`1`), InputPath: ptr("$.data")}, "inputPath"},
		{"three forms", transform.Spec{InputTransformer: &transform.InputTransformer{InputTemplate: "x"}, Input: ptr(`1`), Transform: &transform.Param{Form: transform.Original}}, "input"},
		{"template missing", it(map[string]string{"a": "$.data"}, ""), "inputTransformer.inputTemplate"},
		{"template at the limit", it(nil, strings.Repeat("x", transform.MaxTemplateSize)), ""},
		{"template too long", it(nil, strings.Repeat("x", transform.MaxTemplateSize+1)), "inputTransformer.inputTemplate"},
		{"template not UTF-8", it(nil, "a\xffb"), "inputTransformer.inputTemplate"},
		{"100 variables", it(atLimit, "<v0>"), ""},
		{"101 variables", it(many, "<v0>"), "inputTransformer.inputPathsMap"},
		{"path without $", it(map[string]string{"id": "data.orderId"}, "<id>"), "inputTransformer.inputPathsMap.id"},
		{"empty path", it(map[string]string{"id": ""}, "<id>"), "inputTransformer.inputPathsMap.id"},
		{"wildcard", it(map[string]string{"all": "$.data.items[*].sku"}, "<all>"), "inputTransformer.inputPathsMap.all"},
		{"member wildcard", it(map[string]string{"all": "$.data.*"}, "<all>"), "inputTransformer.inputPathsMap.all"},
		{"slice", it(map[string]string{"s": "$.data.items[0:2]"}, "<s>"), "inputTransformer.inputPathsMap.s"},
		{"filter", it(map[string]string{"f": "$.data.items[?(@.qty>1)]"}, "<f>"), "inputTransformer.inputPathsMap.f"},
		{"recursive descent", it(map[string]string{"r": "$..sku"}, "<r>"), "inputTransformer.inputPathsMap.r"},
		{"negative index", it(map[string]string{"n": "$.data.items[-1]"}, "<n>"), "inputTransformer.inputPathsMap.n"},
		{"unclosed bracket", it(map[string]string{"u": "$.data.items[0"}, "<u>"), "inputTransformer.inputPathsMap.u"},
		{"path too long", it(map[string]string{"l": "$." + strings.Repeat("a", transform.MaxPathLength)}, "<l>"), "inputTransformer.inputPathsMap.l"},
		{"reserved name", it(map[string]string{"ce.id": "$.id"}, "<ce.id>"), "inputTransformer.inputPathsMap.ce.id"},
		{"reserved prefix", it(map[string]string{"ce.other": "$.id"}, "x"), "inputTransformer.inputPathsMap.ce.other"},
		{"bad variable name", it(map[string]string{"a b": "$.id"}, "x"), "inputTransformer.inputPathsMap.a b"},
		{"input not JSON", transform.Spec{Input: ptr(`not json`)}, "input"},
		{"input empty", transform.Spec{Input: ptr(``)}, "input"},
		{"input too long", transform.Spec{Input: ptr(`"` + strings.Repeat("x", transform.MaxInputSize) + `"`)}, "input"},
		{"inputPath bad", transform.Spec{InputPath: ptr("data")}, "inputPath"},
		{"inputPath root", transform.Spec{InputPath: ptr("$")}, ""},
		{"form missing", param("", "", ""), "transform.form"},
		{"form unknown", param("EVERYTHING", "", ""), "transform.form"},
		{"form lower case", param("original", "", ""), "transform.form"},
		{"ORIGINAL with a value", param(transform.Original, "x", ""), "transform.value"},
		{"ORIGINAL with a template", param(transform.Original, "", "x"), "transform.template"},
		{"CONSTANT with a template", param(transform.Constant, "x", "y"), "transform.template"},
		{"CONSTANT too long", param(transform.Constant, strings.Repeat("x", transform.MaxInputSize+1), ""), "transform.value"},
		{"CONSTANT empty", param(transform.Constant, "", ""), ""},
		{"JSONPATH without a path", param(transform.JSONPath, "", ""), "transform.value"},
		{"JSONPATH bad path", param(transform.JSONPath, "$.data[x]", ""), "transform.value"},
		{"JSONPATH with a template", param(transform.JSONPath, "$.data", "x"), "transform.template"},
		{"TEMPLATE without a template", param(transform.Template, `{"a": "$.data"}`, ""), "transform.template"},
		{"TEMPLATE value not an object", param(transform.Template, `["$.data"]`, "${a}"), "transform.value"},
		{"TEMPLATE value not JSON", param(transform.Template, `$.data`, "${a}"), "transform.value"},
		{"TEMPLATE value with a bad path", param(transform.Template, `{"a": "$.data..x"}`, "${a}"), "transform.value.a"},
		{"TEMPLATE too long", param(transform.Template, "", strings.Repeat("x", transform.MaxTemplateSize+1)), "transform.template"},

		// Attributes.
		{"attributes alone", withAttributes(transform.Spec{}, "subject", "<ce.id>"), ""},
		{"attributes with a form", withAttributes(param(transform.Original, "", ""), "subject", "x"), ""},
		{"attributes empty", withAttributes(transform.Spec{}), "inputTransformer"},
		{"attributes with two forms", withAttributes(transform.Spec{Input: ptr(`1`), InputPath: ptr("$.data")}, "subject", "x"), "inputPath"},
		{"attributes with a bad form", withAttributes(transform.Spec{InputPath: ptr("data")}, "subject", "x"), "inputPath"},
		{"every settable kind", withAttributes(transform.Spec{}, "subject", "s", "type", "t", "source", "src", "dataschema", "https://example.com/s",
			"ext1", "x", strings.Repeat("a", transform.MaxAttributeNameLength), "y"), ""},
		{"specversion", withAttributes(transform.Spec{}, "specversion", "0.3"), "attributes.specversion"},
		{"id", withAttributes(transform.Spec{}, "id", "<ce.id>-2"), "attributes.id"},
		{"time", withAttributes(transform.Spec{}, "time", "<ce.time>"), "attributes.time"},
		{"datacontenttype", withAttributes(transform.Spec{}, "datacontenttype", "text/plain"), "attributes.datacontenttype"},
		{"data", withAttributes(transform.Spec{}, "data", "x"), "attributes.data"},
		{"data_base64", withAttributes(transform.Spec{}, "data_base64", "eA=="), "attributes.data_base64"},
		{"upper case name", withAttributes(transform.Spec{}, "Subject", "x"), "attributes.Subject"},
		{"name with a dash", withAttributes(transform.Spec{}, "my-ext", "x"), "attributes.my-ext"},
		{"name with a dot", withAttributes(transform.Spec{}, "ce.subject", "x"), "attributes.ce.subject"},
		{"empty name", withAttributes(transform.Spec{}, "", "x"), "attributes."},
		{"name too long", withAttributes(transform.Spec{}, strings.Repeat("a", transform.MaxAttributeNameLength+1), "x"),
			"attributes." + strings.Repeat("a", transform.MaxAttributeNameLength+1)},
		{"20 attributes", transform.Spec{Attributes: manyAttributes(transform.MaxAttributes)}, ""},
		{"21 attributes", transform.Spec{Attributes: manyAttributes(transform.MaxAttributes + 1)}, "attributes"},
		{"template at the limit", withAttributes(transform.Spec{}, "subject", strings.Repeat("x", transform.MaxAttributeTemplateSize)), ""},
		{"template over the limit", withAttributes(transform.Spec{}, "subject", strings.Repeat("x", transform.MaxAttributeTemplateSize+1)), "attributes.subject"},
		{"template not UTF-8", withAttributes(transform.Spec{}, "subject", "a\xffb"), "attributes.subject"},
		{"type empty", withAttributes(transform.Spec{}, "type", ""), "attributes.type"},
		{"source white space", withAttributes(transform.Spec{}, "source", "  "), "attributes.source"},
		{"subject empty removes it", withAttributes(transform.Spec{}, "subject", ""), ""},
		{"a constant with a control character", withAttributes(transform.Spec{}, "subject", "a\nb"), "attributes.subject"},
		{"a constant dataschema that is not an absolute URI", withAttributes(transform.Spec{}, "dataschema", "schemas/order"), "attributes.dataschema"},
		{"a dataschema template is checked at Apply", withAttributes(transform.Spec{}, "dataschema", "<ce.source>"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, err := transform.Compile(tt.spec)
			if tt.wantField == "" {
				if err != nil || tr == nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if !errors.Is(err, domain.ErrValidation) {
				t.Fatalf("want a validation error, got %v", err)
			}
			de, _ := domain.As(err)
			if de.Field != tt.wantField {
				t.Fatalf("field = %q, want %q (%v)", de.Field, tt.wantField, err)
			}
			if !strings.Contains(de.Message, strings.SplitN(tt.wantField, ".", 2)[0]) {
				t.Fatalf("the message does not name the field: %q", de.Message)
			}
		})
	}
}

func manyAttributes(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("ext%d", i)] = "<ce.id>"
	}
	return m
}

func TestParseSpecRoundTrip(t *testing.T) {
	t.Parallel()
	specs := []transform.Spec{
		it(map[string]string{"id": "$.data.orderId", "sku": "$.data.items[0].sku"}, `{"order": <id>, "sku": "<sku>"}`),
		{Input: ptr(`{"a": 1}`)},
		{InputPath: ptr("$.data")},
		param(transform.Template, `{"c": "$.data.c"}`, `{"k": "${c}"}`),
		param(transform.Original, "", ""),
		withAttributes(it(map[string]string{"id": "$.data.orderId"}, `<id>`), "subject", "orders/<id>", "tenant", ""),
		withAttributes(transform.Spec{}, "type", "com.example.<ce.type>"),
	}
	for _, s := range specs {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := transform.ParseSpec(b)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(s) || got.IsZero() {
			t.Fatalf("round trip of %s gave %+v", b, got)
		}
	}
	for _, bad := range []string{`{"inputTemplate": "x"}`, `{"input": 1}`, `not json`, `{} {}`} {
		if _, err := transform.ParseSpec([]byte(bad)); err == nil {
			t.Fatalf("ParseSpec(%s): want an error", bad)
		}
	}
	if s, err := transform.ParseSpec([]byte(`{}`)); err != nil || !s.IsZero() {
		t.Fatalf("{} is the zero spec: %+v %v", s, err)
	}
	if s, err := transform.ParseSpec([]byte(`{"attributes": {}}`)); err != nil || !s.IsZero() {
		t.Fatalf("no attributes is the zero spec: %+v %v", s, err)
	}
	if s, err := transform.ParseSpec([]byte(`{"attributes": {"subject": "<ce.id>"}}`)); err != nil || s.IsZero() || s.Attributes["subject"] != "<ce.id>" {
		t.Fatalf("attributes alone are a transformer: %+v %v", s, err)
	}
	if _, err := transform.ParseSpec([]byte(`{"attributes": {"subject": 1}}`)); err == nil {
		t.Fatal("attribute templates are strings")
	}
}

// A compiled transformer is used by every write of a task at once.
func TestConcurrentApply(t *testing.T) {
	t.Parallel()
	tr, err := transform.Compile(withAttributes(it(map[string]string{"id": "$.data.orderId", "sku": "$.data.items[1].sku"},
		`{"id": <id>, "sku": "<sku>", "at": <ce.time>}`), "subject", "orders/<id>/<sku>"))
	if err != nil {
		t.Fatal(err)
	}
	e := orderEvent(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 16 {
		wg.Go(func() {
			for range 50 {
				out, err := tr.Apply(e)
				if err != nil {
					errs <- err
					return
				}
				if string(out.Data()) != `{"id": "o-1", "sku": "y2", "at": "2026-03-29T10:15:00.123Z"}` || out.Subject() != "orders/o-1/y2" {
					errs <- fmt.Errorf("got %s, subject %s", out.Data(), out.Subject())
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// FuzzTransform: no template, path or event makes Compile or Apply panic, and a JSON output is valid JSON.
func FuzzTransform(f *testing.F) {
	f.Add(`{"a": <v>, "b": "<v> <ce.id>"}`, "$.data.x[0]", `{"x": ["s\"q", 1]}`)
	f.Add(`text <v>`, "$['a.b']", `{"a.b": {"c": null}}`)
	f.Add(`<v>`, "$", `"str"`)
	f.Fuzz(func(t *testing.T, tmpl, path, data string) {
		tr, err := transform.Compile(it(map[string]string{"v": path}, tmpl))
		if err != nil {
			return
		}
		e := event.New()
		e.SetID("id")
		e.SetSource("s")
		e.SetType("t")
		e.SetDataContentType(transform.ContentTypeJSON)
		e.DataEncoded = []byte(data)
		out, err := tr.Output(&e)
		if err != nil {
			return
		}
		if out.IsJSON() && !json.Valid(out.Data) {
			t.Fatalf("template %q gave invalid JSON %q", tmpl, out.Data)
		}
	})
}

func TestPathsTexts(t *testing.T) {
	e := event.New()
	e.SetID("1")
	e.SetSource("shop")
	e.SetType("order.created")
	if err := e.SetData(event.ApplicationJSON, map[string]any{"customer": "c/42", "n": 7, "tags": []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	p, err := transform.CompilePaths([]string{"$.data.customer", "$.data.n", "$.source", "$.data.tags"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Texts(&e)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"c/42", "7", "shop", `["a"]`}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	missing, _ := transform.CompilePaths([]string{"$.data.nope"})
	if _, err := missing.Texts(&e); err == nil || !strings.Contains(err.Error(), "$.data.nope") {
		t.Fatalf("want an error naming the path, got %v", err)
	}
	if _, err := transform.CompilePaths([]string{"$.data.ok", "data.x"}); err == nil || !strings.Contains(err.Error(), "path 1") {
		t.Fatalf("want an error naming path 1, got %v", err)
	}
}
