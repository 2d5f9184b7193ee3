package cloudevent_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/domain/pattern"
)

func TestIsJSONMedia(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]bool{
		"application/json": true, "application/json; charset=utf-8": true, "text/json": true, "foo/json": true,
		"application/vnd.api+json": true, "Application/VND.Shop+JSON; v=1": true, "application/cloudevents+json": true,
		"": false, "text/plain": false, "application/jsonx": false, "application/xml": false, "json": false,
		"application/json-seq": false, " application/json ; charset=utf-8": true, "application/json; charset=\"bad": true,
		"application/json;;": true, "application/ json": false, "text/plain; x=application/json": false,
	} {
		if got := cloudevent.IsJSONMedia(ct); got != want {
			t.Errorf("IsJSONMedia(%q) = %v, want %v", ct, got, want)
		}
	}
}

// TestUnmarshal: json-format.md 3.1.2, case by case: what data becomes, byte for byte.
func TestUnmarshal(t *testing.T) {
	t.Parallel()
	const head = `{"specversion":"1.0","id":"1","source":"/s","type":"t"`
	for _, c := range []struct {
		name, in string
		data     string // the bytes of the data; "<nil>" for none
		base64   bool
		err      string
	}{
		{"json object", head + `,"datacontenttype":"application/json","data": {"a" : 1} }`, `{"a" : 1}`, false, ""},
		{"+json object (the SDK wants a string)", head + `,"datacontenttype":"application/vnd.shop+json","data":{"a":[1,2]}}`, `{"a":[1,2]}`, false, ""},
		{"+json string is a JSON string, not a document", head + `,"datacontenttype":"application/vnd.shop+json","data":"ac"}`, `"ac"`, false, ""},
		{"no type is JSON", head + `,"data":[true,null]}`, `[true,null]`, false, ""},
		{"numbers as written", head + `,"data":{"big":1e400,"n":9007199254740993,"f":3.141592653589793238462643383279}}`,
			`{"big":1e400,"n":9007199254740993,"f":3.141592653589793238462643383279}`, false, ""},
		{"explicit null", head + `,"datacontenttype":"application/json","data":null}`, `null`, false, ""},
		{"text byte for byte", head + `,"datacontenttype":"text/plain","data":"Hello, World!\n  "}`, "Hello, World!\n  ", false, ""},
		{"text escapes", head + `,"datacontenttype":"text/plain; charset=utf-8","data":"\u00e9\ud83c\udf0e \"q\" \\ \u0000"}`, "é🌎 \"q\" \\ \x00", false, ""},
		{"text null is no data", head + `,"datacontenttype":"text/plain","data":null}`, "<nil>", false, ""},
		{"base64 with a type", head + `,"datacontenttype":"application/octet-stream","data_base64":"AAEC/w=="}`, "\x00\x01\x02\xff", true, ""},
		{"base64 without a type", head + `,"data_base64":"SGVsbG8="}`, "Hello", true, ""},
		{"no data", head + `}`, "<nil>", false, ""},
		{"deep nesting is read (the invariant refuses it)", head + `,"data":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
			strings.Repeat("[", 10000) + strings.Repeat("]", 10000), false, ""},
		{"both", head + `,"data":1,"data_base64":"AA=="}`, "", false, "both present"},
		{"text not a string", head + `,"datacontenttype":"text/plain","data":{"a":1}}`, "", false, "must be a JSON string"},
		{"base64 not a string", head + `,"data_base64":12}`, "", false, "not a number"},
		{"base64 malformed", head + `,"data_base64":"!!"}`, "", false, "not base64"},
		{"an Integer extension", head + `,"count":-2147483648}`, "<nil>", false, ""},
		{"an Integer with a fraction (json-format.md 2.2)", head + `,"count":1.5}`, "", false, "count: 1.5 is not an Integer"},
		{"an Integer with a zero fraction", head + `,"count":1.0}`, "", false, "count: 1.0 is not an Integer"},
		{"an Integer with an exponent", head + `,"count":1e3}`, "", false, "count: 1e3 is not an Integer"},
		{"not an object", `[1]`, "", false, "not an array"},
		{"not JSON", `{"id":`, "", false, "not valid JSON"},
	} {
		e, err := cloudevent.Unmarshal([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want one saying %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := "<nil>"
		if e.Data() != nil {
			got = string(e.Data())
		}
		if got != c.data || e.DataBase64 != c.base64 {
			t.Errorf("%s: data %.80q (base64 %v), want %.80q (base64 %v)", c.name, got, e.DataBase64, c.data, c.base64)
		}
		if e.ID() != "1" || e.Source() != "/s" || e.Type() != "t" {
			t.Errorf("%s: attributes %v", c.name, e)
		}
	}
}

// TestMarshalRoundTrip: what Marshal writes Unmarshal reads back to the same event, and the data member takes the
// form 3.1.1 says.
func TestMarshalRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ct, data string
		base64   bool
		member   string // how the data member is written
	}{
		{"application/json", `{"a" : 1e400}`, false, `"data":{"a" : 1e400}`},
		{"application/vnd.api+json", `{"a":1}`, true, `"data":{"a":1}`}, // JSON bytes are JSON, whatever the SDK marked
		{"", `[1,2]`, false, `"data":[1,2]`},
		{"", `[1,2]`, true, `"data_base64":"WzEsMl0="`}, // it came as data_base64: no assumption of JSON (3.1.2)
		{"", "not json", false, `"data_base64":"bm90IGpzb24="`},
		{"", "  9", true, `"data_base64":"ICA5"`}, // of no type: bytes, white space and all
		{"application/json", "not json", true, `"data_base64":"bm90IGpzb24="`},
		{"text/plain", "Hello, World!\n", false, `"data":"Hello, World!\n"`},
		{"text/plain", "\xff\xfe", false, `"data_base64":"//4="`},
		{"image/png", "\x89PNG", true, `"data_base64":"iVBORw=="`},
	} {
		e := event.New()
		e.SetID("1")
		e.SetSource("/s")
		e.SetType("t")
		e.SetExtension("count", 42)
		if c.ct != "" {
			e.SetDataContentType(c.ct)
		}
		e.DataEncoded, e.DataBase64 = []byte(c.data), c.base64
		out, err := cloudevent.Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(out, []byte(c.member)) || !bytes.Contains(out, []byte(`"count":42`)) {
			t.Errorf("%q %q: %s, want %s", c.ct, c.data, out, c.member)
		}
		back, err := cloudevent.Unmarshal(out)
		if err != nil {
			t.Fatalf("%q %q: %s: %v", c.ct, c.data, out, err)
		}
		if string(back.Data()) != c.data || back.DataContentType() != c.ct || back.Extensions()["count"] != int32(42) {
			t.Errorf("%q %q: read back %q %q %v", c.ct, c.data, back.DataContentType(), back.Data(), back.Extensions())
		}
		// Appended after other bytes, as a record batch writes its events: the same form, what was there kept,
		// written in place when there is room for it.
		buf := make([]byte, 0, 4096)
		buf = append(buf, `[{"earlier":1},`...)
		appended, err := cloudevent.AppendMarshal(buf, &e)
		if err != nil {
			t.Fatal(err)
		}
		if string(appended) != `[{"earlier":1},`+string(out) || &appended[0] != &buf[0] {
			t.Errorf("%q %q: appended %s", c.ct, c.data, appended)
		}
	}
}

func TestUnmarshalBatch(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	ev := `{"specversion":"1.0","id":"1","source":"/s","type":"t","data":` + deep + `}`
	entries, err := cloudevent.UnmarshalBatch([]byte(` [ {"a":1} , ` + ev + `,"x"] `))
	if err != nil || len(entries) != 3 {
		t.Fatalf("UnmarshalBatch = %d entries, %v", len(entries), err)
	}
	if entries[0].Err == nil || entries[0].Size != len(`{"a":1}`) {
		t.Errorf("an object that is no event: %+v", entries[0])
	}
	if entries[1].Err != nil || string(entries[1].Event.Data()) != deep || entries[1].Size != len(ev) {
		t.Errorf("an event nested 20,000 deep, read alone: %v", entries[1].Err)
	}
	if entries[2].Err == nil || !strings.Contains(entries[2].Err.Error(), "not a string") {
		t.Errorf("a string in the batch: %v", entries[2].Err)
	}
	if entries, err := cloudevent.UnmarshalBatch([]byte(`[]`)); err != nil || len(entries) != 0 {
		t.Fatalf("empty batch = %v, %v", entries, err)
	}
	for in, want := range map[string]string{`{}`: "not an object", `[1,`: "not valid JSON", `"a"`: "not a string"} {
		if _, err := cloudevent.UnmarshalBatch([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("UnmarshalBatch(%s) = %v, want %q", in, err, want)
		}
	}
}

// TestUnmarshalSharesJSONData: an event's JSON data is the part of the bytes read that holds it, not a copy, and an
// append to it copies rather than writing over what follows (the next event of a batch).
func TestUnmarshalSharesJSONData(t *testing.T) {
	raw := []byte(`[{"specversion":"1.0","id":"1","source":"/s","type":"t","data":{"a":1}},` +
		`{"specversion":"1.0","id":"2","source":"/s","type":"t","datacontenttype":"text/plain","data":"x"}]`)
	entries, err := cloudevent.UnmarshalBatch(raw)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	first := entries[0].Event.DataEncoded
	require.Equal(t, `{"a":1}`, string(first))
	at := bytes.Index(raw, []byte(`{"a":1}`))
	assert.Same(t, &raw[at], &first[0], "the data is read in place")
	before := string(raw)
	_ = append(first, "XXXXXXXX"...)
	assert.Equal(t, before, string(raw), "an append to the data copies it")
	assert.Equal(t, "x", string(entries[1].Event.DataEncoded))

	single := []byte(`{"specversion":"1.0","id":"1","source":"/s","type":"t","data":[1,2]}`)
	e, err := cloudevent.Unmarshal(single)
	require.NoError(t, err)
	assert.Same(t, &single[bytes.Index(single, []byte(`[1,2]`))], &e.DataEncoded[0])
	assert.Equal(t, cap(e.DataEncoded), len(e.DataEncoded))
	allocs := testing.AllocsPerRun(100, func() { _, _ = cloudevent.Unmarshal(single) })
	assert.LessOrEqual(t, allocs, 1.0, "a plain event is read in one allocation")
	withTexts := []byte(`{"specversion":"1.0","id":"1","source":"/s","type":"t","subject":"x","datacontenttype":"application/json","data":[1,2]}`)
	allocs = testing.AllocsPerRun(100, func() { _, _ = cloudevent.Unmarshal(withTexts) })
	assert.LessOrEqual(t, allocs, 1.0, "its subject and data content type too (the event's parts are one value)")
}

// TestMatchView: the form patterns see is Marshal's, but for a resources extension holding a JSON array of strings,
// which appears as that array; anything else in that extension stays the string it is.
func TestMatchView(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		resources any    // the extension's value; nil for none
		want      string // the resources member of the view; "" when the view is Marshal's bytes
	}{
		{"no extension", nil, ""},
		{"two ARNs", `["arn:a","arn:b"]`, `"resources":["arn:a","arn:b"]`},
		{"white space around and inside", " [ \"arn:a\" ,\n\"arn:b\" ] ", `"resources":[ "arn:a" ,` + "\n" + `"arn:b" ]`},
		{"escapes kept", `["arn:\u00e9\"q\""]`, `"resources":["arn:\u00e9\"q\""]`},
		{"empty array", `[]`, `"resources":[]`},
		{"a plain string", `arn:a`, ""},
		{"an array of numbers", `[1,2]`, ""},
		{"a mixed array", `["a",1]`, ""},
		{"an object", `{"a":"b"}`, ""},
		{"not JSON", `["arn:a"`, ""},
		{"not a string extension", int32(7), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := event.New()
			e.SetID("1")
			e.SetSource("/s")
			e.SetType("t")
			e.SetExtension("account", "123456789012")
			e.SetExtension("zone", "eu")
			if c.resources != nil {
				e.SetExtension("resources", c.resources)
			}
			e.SetDataContentType("application/json")
			e.DataEncoded = []byte(`{"resources":"in data"}`)
			stored, err := cloudevent.Marshal(&e)
			require.NoError(t, err)
			view, err := cloudevent.MatchView(&e)
			require.NoError(t, err)
			require.True(t, json.Valid(view), "%s", view)
			if c.want == "" {
				assert.Equal(t, string(stored), string(view))
				return
			}
			assert.Contains(t, string(view), c.want)
			// Nothing else changes: the view is the stored form with the member's string replaced by the array.
			var sv, vv map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(stored, &sv))
			require.NoError(t, json.Unmarshal(view, &vv))
			delete(sv, "resources")
			delete(vv, "resources")
			assert.Equal(t, sv, vv)
			assert.JSONEq(t, `{"resources":"in data"}`, string(vv["data"]))
		})
	}
}

// TestMatchViewMatchesElements: an AWS pattern on resources matches an element of the view's array, and not the
// stored form's string.
func TestMatchViewMatchesElements(t *testing.T) {
	t.Parallel()
	e := event.New()
	e.SetID("1")
	e.SetSource("/s")
	e.SetType("t")
	e.SetExtension("resources", `["arn:a","arn:b"]`)
	stored, err := cloudevent.Marshal(&e)
	require.NoError(t, err)
	view, err := cloudevent.MatchView(&e)
	require.NoError(t, err)
	for _, c := range []struct {
		pattern      string
		view, stored bool
	}{
		{`{"resources":["arn:b"]}`, true, false},
		{`{"resources":["arn:a","arn:c"]}`, true, false},
		{`{"resources":[{"prefix":"arn:"}]}`, true, false},
		{`{"resources":["arn:c"]}`, false, false},
		{`{"resources":["[\"arn:a\",\"arn:b\"]"]}`, false, true},
	} {
		p, err := pattern.Compile([]byte(c.pattern))
		require.NoError(t, err, c.pattern)
		got, err := p.Match(view)
		require.NoError(t, err)
		assert.Equal(t, c.view, got, "%s on the view %s", c.pattern, view)
		got, err = p.Match(stored)
		require.NoError(t, err)
		assert.Equal(t, c.stored, got, "%s on the stored form %s", c.pattern, stored)
	}
}

// TestMatchViewCostsMarshal: without a resources array, MatchView allocates what Marshal does, no more.
func TestMatchViewCostsMarshal(t *testing.T) {
	e := event.New()
	e.SetID("1")
	e.SetSource("/s")
	e.SetType("t")
	e.SetExtension("region", "eu")
	e.SetDataContentType("application/json")
	e.DataEncoded = []byte(`{"a":1}`)
	marshal := testing.AllocsPerRun(100, func() { _, _ = cloudevent.Marshal(&e) })
	view := testing.AllocsPerRun(100, func() { _, _ = cloudevent.MatchView(&e) })
	assert.Equal(t, marshal, view)
}
