package cloudevent

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// attributeCases are JSON forms of events (data left out) that the fast reader takes and that it leaves to the
// SDK: orders, duplicates, escapes, types, names and values the SDK refuses.
var attributeCases = []string{
	`{"specversion":"1.0","id":"1","source":"shop","type":"order.created"}`,
	`{"id":"1","source":"shop","type":"t","specversion":"1.0"}`,
	`{"specversion":"1.0","id":"1","source":"/a/b?c=d#e","type":"t","subject":"s","time":"2026-12-04T10:00:00.123456789+01:00","datacontenttype":"application/json","dataschema":"https://schemas.example.com/x.json"}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","subject":""}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","time":""}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","time":"yesterday"}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","datacontenttype":""}`,
	`{"datacontenttype":"","specversion":"1.0","id":"1","source":"shop","type":"t"}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","dataschema":""}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","dataschema":"::"}`,
	`{"specversion":"1.0","id":"1","source":"","type":"t"}`,
	`{"specversion":"1.0","id":"1","source":"%zz","type":"t"}`,
	`{"specversion":"1.0","id":"1","source":"Zoë","type":"t"}`,
	`{"specversion":"1.0","id":"1","type":"t"}`,
	`{"specversion":"0.3","id":"1","source":"shop","type":"t"}`,
	`{"specversion":"2.0","id":"1","source":"shop","type":"t"}`,
	`{"specversion":1,"id":"1","source":"shop","type":"t"}`,
	`{"id":"1","source":"shop","type":"t"}`,
	`{"specversion":"1.0","specversion":"1.0","id":"1","source":"shop","type":"t"}`,
	`{"specversion":"1.0","id":"1","id":"2","source":"shop","type":"t"}`,
	`{"specversion":"1.0","id":1,"source":"shop","type":"t"}`,
	`{"specversion":"1.0","id":true,"source":"shop","type":"t"}`,
	`{"specversion":"1.0","id":null,"source":"shop","type":"t"}`,
	`{"specversion":"1.0","id":"a\"b","source":"shop","type":"t\u00e9"}`,
	`{"specversion":"1.0","id":"\ud800","source":"shop","type":"t"}`,
	`{"spec\u0076ersion":"1.0","id":"1","source":"shop","type":"t"}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","ext":"v","flag":true,"off":false}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","num":7,"big":2147483648,"neg":-1}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","nothing":null}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","obj":{"a":1},"arr":["x"]}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","Ext":"v"}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","ext":"v","EXT":"w"}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","ext":"v","ext":"w"}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","ex-t":"v"}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","schemaurl":"x","datacontentencoding":"base64"}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","a23456789012345678901234567890":"long name"}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","":"empty name"}`,
	`{"ext":"before","specversion":"1.0","id":"1","source":"shop","type":"t"}`,
	`{"specversion":"1.0","id":"1","source":"shop","type":"t","time":"2026-12-04T10:00:00Z","subject":"x\ty"}`,
	"{\"specversion\":\"1.0\",\"id\":\"\xff\xfe\",\"source\":\"shop\",\"type\":\"t\"}",
}

// The fast reader of attributes makes the same event as the SDK's reader, or leaves the members to it (so that
// the answer, errors included, is the SDK's).
func TestFastAttributesReadAsTheSDK(t *testing.T) {
	fast := 0
	for _, c := range attributeCases {
		t.Run(c, func(t *testing.T) {
			members := membersOf(t, c)
			if _, ok := fastV1(members); ok {
				fast++
			}
			sameAsTheSDK(t, members)
		})
	}
	require.GreaterOrEqual(t, fast, 10, "the fast reader reads the plain cases")
}

// FuzzFastAttributes checks TestFastAttributesReadAsTheSDK's property on any JSON object.
func FuzzFastAttributes(f *testing.F) {
	for _, c := range attributeCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		doc := gjson.Parse(raw)
		if !gjson.Valid(raw) || !doc.IsObject() {
			return
		}
		members := membersOf(t, raw)
		for _, m := range members {
			if m.v.Type == gjson.Number && strings.ContainsAny(m.v.Raw, ".eE") {
				return // refused before the attributes are read
			}
		}
		sameAsTheSDK(t, members)
	})
}

func membersOf(t *testing.T, raw string) []member {
	t.Helper()
	require.True(t, gjson.Valid(raw), raw)
	var members []member
	gjson.Parse(raw).ForEach(func(k, v gjson.Result) bool {
		if name := k.String(); name != "data" && name != "data_base64" { // read apart, as fromDoc does
			members = append(members, member{name: name, k: k, v: v})
		}
		return true
	})
	return members
}

func sameAsTheSDK(t *testing.T, members []member) {
	t.Helper()
	want, wantErr := attributes(members, false)
	got, err := attributes(members, true)
	if wantErr != nil {
		require.EqualError(t, err, wantErr.Error())
		return
	}
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, fmt.Sprint(want), fmt.Sprint(got))
}

// sdkAttributes is what the SDK writes of e without its data.
func sdkAttributes(t testing.TB, e *event.Event) string {
	t.Helper()
	attrs := *e
	attrs.DataEncoded, attrs.DataBase64 = nil, false
	out, err := attrs.MarshalJSON()
	require.NoError(t, err)
	return string(out)
}

// plainAsTheSDK checks that plainAttributes writes e as the SDK does, when it writes it, after what the buffer it
// appends to held, which it leaves as it was when it does not; it reports whether it wrote e.
func plainAsTheSDK(t testing.TB, e *event.Event) bool {
	t.Helper()
	const before = `[{"earlier":1},`
	got, ok := plainAttributes([]byte(before), e, 0)
	if ok {
		require.Equal(t, before+sdkAttributes(t, e), string(got))
	} else {
		require.Equal(t, before, string(got))
	}
	return ok
}

// The writer of plain attributes writes what the SDK's writer does, byte for byte, or leaves the event to it.
func TestPlainAttributesAsTheSDKWrites(t *testing.T) {
	plain := 0
	for _, c := range attributeCases {
		e, err := attributes(membersOf(t, c), false)
		if err != nil {
			continue
		}
		if plainAsTheSDK(t, e) {
			plain++
		}
	}
	typed := event.New()
	typed.SetID("x")
	typed.SetSource("urn:x")
	typed.SetType("t")
	typed.SetTime(time.Date(2026, 12, 4, 10, 0, 0, 5, time.FixedZone("", 3600)))
	typed.SetExtension("n", int32(-7))
	typed.SetExtension("b", false)
	typed.SetExtension("s", "Zoë <&>")
	typed.SetDataSchema("https://example.com/s.json")
	typed.SetDataContentType("application/json; charset=utf-8")
	typed.SetSubject("ünï")
	require.True(t, plainAsTheSDK(t, &typed))
	plain++
	for _, v := range []any{[]byte("bin"), types.URI{URL: url.URL{Scheme: "https", Host: "a"}}, types.Timestamp{Time: time.Unix(0, 0)}} {
		e := typed.Clone()
		e.SetExtension("other", v)
		require.False(t, plainAsTheSDK(t, &e), "%T is left to the SDK", v)
	}
	quoted := typed.Clone()
	quoted.SetSubject(`say "hi"`)
	require.False(t, plainAsTheSDK(t, &quoted), "a quote is escaped by the SDK")
	require.GreaterOrEqual(t, plain, 10)
}

// FuzzPlainAttributes checks TestPlainAttributesAsTheSDKWrites's property on any attribute values.
func FuzzPlainAttributes(f *testing.F) {
	f.Add("1", "shop", "t", "s", "v", int32(3), true, int64(1764842400123456789))
	f.Add("a\"b", "/a?b=c", "t\u00e9", "", "\x01", int32(-1), false, int64(0))
	f.Fuzz(func(t *testing.T, id, source, typ, subject, ext string, n int32, b bool, nanos int64) {
		e := event.New()
		e.SetID(id)
		e.SetSource(source)
		e.SetType(typ)
		if subject != "" {
			e.SetSubject(subject)
		}
		e.SetTime(time.Unix(0, nanos))
		e.SetExtension("ext", ext)
		e.SetExtension("num", n)
		e.SetExtension("flag", b)
		if e.FieldErrors != nil {
			return
		}
		plainAsTheSDK(t, &e)
	})
}

// sourceCases are sources that Source gives without building (plain paths) and that it leaves to the SDK.
var sourceCases = []string{
	"bench", "/shop/orders", "com.example.orders", "a-b_c~d.e/F/9", "", "/", "a//b", "//host/x", "///x", "./a",
	"a:b", "urn:shop:orders", "https://shop.example.com/orders", "/a b", "/a%20b", "/Zo%C3%AB", "/a?b", "/a#b",
	"mailto:x@example.com", "//", "a/../b", "/a/./b", "..", "HTTP://X/", "/a;b", "/a@b", "/a+b", "*",
}

// TestSourceAsTheSDKWrites: Source gives e.Source() for every source the SDK parses, and sourceRef parses each as
// the SDK does.
func TestSourceAsTheSDKWrites(t *testing.T) {
	for _, s := range sourceCases {
		checkSource(t, s)
		checkSourceRef(t, s)
	}
	e := event.New()
	e.SetSource("/shop/orders")
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = Source(&e) }), "a plain path is not built")
}

func FuzzSource(f *testing.F) {
	for _, s := range sourceCases {
		f.Add(s)
	}
	f.Fuzz(checkSource)
}

func FuzzSourceRef(f *testing.F) {
	for _, s := range sourceCases {
		f.Add(s)
	}
	f.Fuzz(checkSourceRef)
}

// checkSourceRef checks sourceRef against the SDK's parser for s.
func checkSourceRef(t *testing.T, s string) {
	got, ok := sourceRef(s)
	want := types.ParseURIRef(s)
	if ok != (want != nil) {
		t.Fatalf("sourceRef(%q) ok %v, the SDK parses %v", s, ok, want)
	}
	if ok && !reflect.DeepEqual(got.URL, want.URL) {
		t.Fatalf("sourceRef(%q) = %#v, the SDK parses %#v", s, got.URL, want.URL)
	}
}

// checkSource checks Source against the SDK for an event whose source is s as the SDK parses it.
func checkSource(t *testing.T, s string) {
	u := types.ParseURIRef(s)
	if u == nil {
		return
	}
	e := event.New()
	e.Context.(*event.EventContextV1).Source = *u
	if got, want := Source(&e), e.Source(); got != want {
		t.Fatalf("Source of %q = %q, the SDK writes %q", s, got, want)
	}
}
