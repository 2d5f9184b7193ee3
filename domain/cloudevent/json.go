// Package cloudevent is the CloudEvents JSON event format (formats/json-format.md of the CloudEvents 1.0 spec) as
// the spec says, where the SDK (sdk-go 2.16) departs from it: every media type whose subtype is json or ends in
// +json carries its data as a JSON value (the SDK treats only application/json and text/json so, and writes and
// reads the data of any other +json type as a string); data is kept byte for byte, numbers of any size or
// precision included (the SDK's parser refuses 1e400 and rewrites nothing, but cannot skip some numbers); binary
// data is data_base64. Attributes and extensions are written and read as the SDK writes and reads them (by the
// SDK, or directly when they are plain: byte for byte the same, as tests and fuzzing check). The router, input
// transformers, the structured modes of the sinks, PutEvents and the sources all use this one form; patterns are
// matched against MatchView, the same form with an Amazon EventBridge resources extension as the array it holds.
package cloudevent

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/tidwall/gjson"
)

// IsJSONMedia reports whether a datacontenttype declares JSON-formatted data: its media type, stripped of
// parameters, has the form */json or */*+json (json-format.md 3.1.1). The empty type is not, though data of no
// type is read as JSON (see IsBinary).
func IsJSONMedia(contentType string) bool {
	// What mime.ParseMediaType takes for the media type, without parsing the parameters, which do not matter here
	// (it is called for every event put and read).
	base, _, _ := strings.Cut(contentType, ";")
	media := strings.TrimSpace(strings.ToLower(base))
	_, sub, ok := strings.Cut(media, "/")
	return ok && (sub == "json" || strings.HasSuffix(sub, "+json"))
}

// IsBinary reports whether e's data is binary: its JSON form carries it as data_base64. Data of a JSON type that is
// JSON never is, whatever the event says (the SDK's SetData marks any []byte as base64), so that patterns and
// transformers see it as JSON; data of a JSON type that came as bytes and is not JSON is. Data of no
// declared type is when it came so (data_base64: json-format.md 3.1.2 makes no assumption of JSON), is not JSON or
// has white space around it (as a JSON value it would lose it); data of another type when the event marks it so or
// its bytes are not UTF-8 (a JSON string could not carry them unchanged).
func IsBinary(e *event.Event) bool { return formOf(e) == formBase64 }

// The forms of data in the JSON format.
type dataForm int

const (
	formNone dataForm = iota
	formJSON
	formString
	formBase64
)

// formOf decides how e's data is written (see IsBinary), reading it at most once.
func formOf(e *event.Event) dataForm {
	data := e.Data()
	if len(data) == 0 {
		if data == nil {
			return formNone
		}
		return formString
	}
	switch ct := e.DataContentType(); {
	case ct == "":
		if e.DataBase64 || len(bytes.TrimSpace(data)) != len(data) || !isJSON(data) {
			return formBase64
		}
		return formJSON
	case IsJSONMedia(ct):
		// Data of a JSON type not marked binary is JSON: the store's invariant (stream.Check) and Unmarshal make
		// sure of it, so it is not read again here (the router marshals every event).
		if e.DataBase64 && !isJSON(data) {
			return formBase64
		}
		return formJSON
	case e.DataBase64 || !utf8.Valid(data):
		return formBase64
	}
	return formString
}

// Marshal returns e in the JSON format: its attributes as the SDK writes them, then its data as json-format.md
// 3.1.1 says: binary data (IsBinary) as data_base64, JSON data as the JSON value it is, byte for byte, other data
// as a JSON string.
func Marshal(e *event.Event) ([]byte, error) { return AppendMarshal(nil, e) }

// AppendMarshal appends Marshal's form of e to dst and returns the extended slice, so that several events can be
// written one after the other in one buffer (a record batch). On an error it returns dst as it was.
func AppendMarshal(dst []byte, e *event.Event) ([]byte, error) {
	form := formOf(e)
	extra := len(e.DataEncoded) + 16
	if form == formBase64 {
		extra = base64.StdEncoding.EncodedLen(len(e.DataEncoded)) + 16
	}
	start := len(dst)
	out, ok := plainAttributes(dst, e, extra)
	if !ok {
		attrs := *e // a shallow copy: the SDK writes its attributes, without the data
		attrs.DataEncoded, attrs.DataBase64 = nil, false
		sdk, err := attrs.MarshalJSON()
		if err != nil {
			return dst, err
		}
		out = append(out, sdk...)
	}
	if form == formNone {
		return out, nil
	}
	if len(out)-start < 2 || out[len(out)-1] != '}' {
		return dst, errors.New("cloudevent: the SDK wrote no JSON object")
	}
	out = out[:len(out)-1]
	if len(out)-start > 1 {
		out = append(out, ',')
	}
	data := e.Data()
	switch form {
	case formBase64:
		out = append(out, `"data_base64":"`...)
		out = base64.StdEncoding.AppendEncode(out, data)
		out = append(out, '"')
	case formJSON:
		out = append(append(out, `"data":`...), bytes.TrimSpace(data)...)
	default:
		s, err := json.Marshal(string(data))
		if err != nil {
			return dst, err
		}
		out = append(append(out, `"data":`...), s...)
	}
	return append(out, '}'), nil
}

// plainAttributes appends to dst e's attributes and extensions as the SDK's writer does (its MarshalJSON of e
// without data), byte for byte, with room for extra bytes more, when every value is plain: a CloudEvents 1.0 event
// whose strings need no escape (no control character, quote or backslash) and whose extensions are strings,
// booleans or Integers. ok false: e is not, and the SDK writes it (TestPlainAttributesAsTheSDKWrites); out is then
// dst, perhaps with more room.
func plainAttributes(dst []byte, e *event.Event, extra int) (out []byte, ok bool) {
	ec, isV1 := e.Context.(*event.EventContextV1)
	if !isV1 {
		return dst, false
	}
	var source, schema, tm string
	source = uriText(&ec.Source.URL)
	if ec.DataSchema != nil {
		schema = ec.DataSchema.String()
	}
	if ec.Time != nil {
		tm = ec.Time.String()
	}
	size := 256 + len(ec.ID) + len(source) + len(ec.Type) + len(schema) + len(tm) + extra
	if ec.Subject != nil {
		size += len(*ec.Subject)
	}
	if ec.DataContentType != nil {
		size += len(*ec.DataContentType)
	}
	for k, v := range ec.Extensions {
		size += len(k) + 16
		if s, isString := v.(string); isString {
			size += len(s)
		}
	}
	start := len(dst)
	out = slices.Grow(dst, size)
	field := func(name string) { // ,"name":
		out = append(out, ',', '"')
		out = append(out, name...)
		out = append(out, '"', ':')
	}
	str := func(name, v string) bool {
		for i := 0; i < len(v); i++ {
			if c := v[i]; c < 0x20 || c == '"' || c == '\\' {
				return false
			}
		}
		field(name)
		out = append(out, '"')
		out = append(out, v...)
		out = append(out, '"')
		return true
	}
	out = append(out, `{"specversion":"1.0"`...)
	if !str("id", ec.ID) || !str("source", source) || !str("type", ec.Type) ||
		ec.Subject != nil && !str("subject", *ec.Subject) ||
		ec.DataContentType != nil && !str("datacontenttype", *ec.DataContentType) ||
		ec.DataSchema != nil && !str("dataschema", schema) ||
		ec.Time != nil && !str("time", tm) {
		return out[:start], false
	}
	if len(ec.Extensions) > 0 {
		names := make([]string, 0, len(ec.Extensions))
		for k := range ec.Extensions {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			if !lowerAlnum(k) {
				return out[:start], false
			}
			switch v := ec.Extensions[k].(type) {
			case string:
				if !str(k, v) {
					return out[:start], false
				}
			case bool:
				field(k)
				out = strconv.AppendBool(out, v)
			case int32:
				field(k)
				out = strconv.AppendInt(out, int64(v), 10)
			default:
				return out[:start], false
			}
		}
	}
	return append(out, '}'), true
}

// resourcesExtension is the extension that holds an Amazon EventBridge event's resources (domain/awsevent): the
// JSON text of an array of strings, as CloudEvents extensions are scalars.
const resourcesExtension = "resources"

// MatchView returns the JSON document that event patterns are matched against: exactly Marshal(e), except that a
// String extension "resources" whose value is the JSON text of an array of strings appears as that array instead
// of as a string, so that a pattern on resources matches when one element does, as Amazon EventBridge matches the
// resources array of its events. Without such an extension it returns Marshal's bytes at Marshal's cost (one map
// lookup more). The router, TestEvent, Search and traces match on it; what is stored, logged or delivered stays
// Marshal's form. Errors are Marshal's.
func MatchView(e *event.Event) ([]byte, error) {
	out, err := Marshal(e)
	if err != nil {
		return nil, err
	}
	return MatchViewOf(e, out), nil
}

// MatchViewOf is MatchView of e whose JSON form (Marshal's, or a record batch's entry of it) is out: out itself, or
// a copy with the resources extension as its array.
func MatchViewOf(e *event.Event, out []byte) []byte {
	text, ok := extension(e, resourcesExtension).(string)
	if !ok {
		return out
	}
	array := strings.TrimSpace(text)
	if !isStringArray(array) {
		return out
	}
	// The SDK writes every extension as a top-level member; its value is the string text.
	m := gjson.GetBytes(out, resourcesExtension)
	end := m.Index + len(m.Raw)
	if m.Type != gjson.String || m.Index <= 0 || end > len(out) || string(out[m.Index:end]) != m.Raw {
		return out
	}
	view := make([]byte, 0, len(out)-len(m.Raw)+len(array))
	view = append(append(view, out[:m.Index]...), array...)
	return append(view, out[end:]...)
}

// extension returns e's extension name (lower case), nil when it has none. For a CloudEvents 1.0 event it is a map
// lookup: Event.Extensions copies the map.
func extension(e *event.Event, name string) any {
	if ec, ok := e.Context.(*event.EventContextV1); ok {
		return ec.Extensions[name]
	}
	return e.Extensions()[name]
}

// isStringArray reports whether s is the JSON text of an array whose elements are all strings (or of an empty one).
func isStringArray(s string) bool {
	if !strings.HasPrefix(s, "[") || !gjson.Valid(s) {
		return false
	}
	all := true
	gjson.Parse(s).ForEach(func(_, v gjson.Result) bool {
		all = v.Type == gjson.String
		return all
	})
	return all
}

// Unmarshal reads one event in the JSON format: its attributes and extensions as the SDK reads them, its data as
// json-format.md 3.1.2 says: data_base64 as the bytes it encodes; data of a JSON type (or of none) as the JSON
// value, byte for byte; data of any other type must be a JSON string, read as its text. data and data_base64
// together, or JSON that is not an object, are errors naming the problem. The event is not validated. Data of a
// JSON type is the part of raw that holds it, not a copy: raw must not change while the event is in use.
func Unmarshal(raw []byte) (*event.Event, error) {
	if i := skipSpace(raw, 0); i < len(raw) && raw[i] == '{' {
		if members, end := scanObject(raw, i, make([]member, 0, 16)); end >= 0 && skipSpace(raw, end) == len(raw) {
			return fromMembers(members, raw)
		}
	}
	doc, err := parse(raw) // not JSON, or not an object: the error says which
	if err != nil {
		return nil, err
	}
	return fromDoc(doc, raw)
}

// parse validates raw as JSON (ValidJSON: no depth limit) and parses it. The document's strings are raw's bytes, not a
// copy of them (gjson.ParseBytes copies the whole of raw, a batch's every event, to read a few attributes): raw
// must not change while the document, or an event read from it, is in use, which the events' data, parts of raw,
// already asked of every caller.
func parse(raw []byte) (gjson.Result, error) {
	if !isJSON(raw) {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return gjson.Result{}, fmt.Errorf("not valid JSON: %w", err)
		}
		return gjson.Result{}, errors.New("not valid JSON")
	}
	return gjson.Parse(unsafe.String(unsafe.SliceData(raw), len(raw))), nil
}

// fromDoc reads the event of a parsed, valid JSON document (see Unmarshal) of src, the bytes it was parsed from, as
// fromMembers does: the error path of Unmarshal and UnmarshalBatch (scanObject reads every object they take).
func fromDoc(doc gjson.Result, src []byte) (*event.Event, error) {
	if !doc.IsObject() {
		return nil, fmt.Errorf("an event is a JSON object, not %s", kind(doc))
	}
	var members []member
	doc.ForEach(func(k, v gjson.Result) bool {
		members = append(members, member{name: k.String(), k: k, v: v})
		return true
	})
	return fromMembers(members, src)
}

// fromMembers reads the event of an object's members (every member, in order, data included), read from src. A
// JSON data member is not copied: the event's data is the part of src that holds it. members is reused: the
// attributes and extensions are moved to its front.
func fromMembers(members []member, src []byte) (*event.Event, error) {
	attrs := members[:0]          // the attributes and extensions, in order
	var data, data64 gjson.Result // Raw "" when absent
	var source, dataschema string // as written, the first of each (what doc.Get would find), read in the same pass
	var seenSource, seenSchema bool
	for _, m := range members {
		switch k, v := m.k, m.v; m.name {
		case "data":
			data = v
		case "data_base64":
			data64 = v
		default:
			switch {
			case m.name == "source" && !seenSource:
				source, seenSource = v.String(), true
			case m.name == "dataschema" && !seenSchema:
				dataschema, seenSchema = v.String(), true
			}
			// The only number an attribute can hold is an Integer, written with "only the integer component"
			// (json-format.md 2.2); the SDK would take 1.5 as 1 and 1e3 as 1000.
			if v.Type == gjson.Number && strings.ContainsAny(v.Raw, ".eE") {
				return nil, fmt.Errorf("%s: %s is not an Integer (a whole number written without a fraction or an exponent)", k.String(), v.Raw)
			}
			attrs = append(attrs, m)
		}
	}
	e, err := attributes(attrs, true)
	if err != nil {
		return nil, err
	}
	if err := KeptURIs(e, source, dataschema); err != nil {
		return nil, err
	}
	switch {
	case data.Raw != "" && data64.Raw != "":
		return nil, errors.New("data and data_base64 are both present; an event has one or the other")
	case data64.Raw != "":
		if data64.Type != gjson.String {
			return nil, fmt.Errorf("data_base64 must be a string of base64, not %s", kind(data64))
		}
		b, err := base64.StdEncoding.DecodeString(data64.String())
		if err != nil {
			return nil, fmt.Errorf("data_base64 is not base64: %w", err)
		}
		e.DataEncoded, e.DataBase64 = b, true
	case data.Raw != "":
		if ct := e.DataContentType(); ct == "" || IsJSONMedia(ct) {
			e.DataEncoded = within(src, data)
			break
		}
		if data.Type == gjson.Null {
			break // no data
		}
		if data.Type != gjson.String {
			return nil, fmt.Errorf("data must be a JSON string when datacontenttype %q is not a JSON type, not %s",
				e.DataContentType(), kind(data))
		}
		var s string
		if err := json.Unmarshal([]byte(data.Raw), &s); err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		e.DataEncoded = []byte(s)
	}
	return e, nil
}

// within returns the bytes of src that hold v (a value of a document parsed from src), capped so that an append
// copies them; a copy of v's text when they cannot be found.
func within(src []byte, v gjson.Result) []byte {
	if end := v.Index + len(v.Raw); v.Index > 0 && end <= len(src) && string(src[v.Index:end]) == v.Raw {
		return src[v.Index:end:end]
	}
	return []byte(v.Raw)
}

// lowerAlnum reports whether name is lower-case letters and digits only.
func lowerAlnum(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// member is an attribute or extension of an event's JSON form: its name, as read and as written, and its value.
type member struct {
	name string
	k, v gjson.Result
}

// attributes makes the event of members, as the SDK reads them (its UnmarshalJSON of an object of these members).
// With fast, an event of specversion 1.0 whose members are each given once, as strings without escapes (or
// extensions as true, false or numbers), is made directly, without the SDK's reader (a third of reading an event); any
// other, and any member the SDK would refuse, is left to the SDK's reader, whose answer, errors included, is
// therefore the answer for all (TestFastAttributesReadAsTheSDK).
func attributes(members []member, fast bool) (*event.Event, error) {
	if fast {
		if e, ok := fastV1(members); ok {
			return e, nil
		}
	}
	var attrs bytes.Buffer
	attrs.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			attrs.WriteByte(',')
		}
		attrs.WriteString(m.k.Raw)
		attrs.WriteByte(':')
		attrs.WriteString(m.v.Raw)
	}
	attrs.WriteByte('}')
	e := event.New()
	if err := e.UnmarshalJSON(attrs.Bytes()); err != nil {
		return nil, err
	}
	return &e, nil
}

// fastV1 makes the event of members when they are as attributes says; ok false: they are not, or the SDK would
// refuse them.
func fastV1(members []member) (e *event.Event, ok bool) {
	p := new(eventParts)
	ec := &p.ec
	const (
		specversion = 1 << iota
		id
		typ
		source
		subject
		tm
		datacontenttype
		dataschema
	)
	var seen int
	once := func(bit int) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}
	for _, m := range members {
		if m.name == "" || strings.IndexByte(m.k.Raw, '\\') >= 0 {
			return nil, false // the SDK's reader stops at an empty name; escapes are read by it alone
		}
		var text string
		switch m.v.Type {
		case gjson.String:
			if strings.IndexByte(m.v.Raw, '\\') >= 0 {
				return nil, false
			}
			text = m.v.Str
		case gjson.True, gjson.False, gjson.Number:
			switch m.name {
			case "specversion", "id", "type", "source", "subject", "time", "datacontenttype", "dataschema":
				return nil, false
			}
		default:
			return nil, false
		}
		switch m.name {
		case "specversion":
			if !once(specversion) || text != event.CloudEventsVersionV1 {
				return nil, false
			}
		case "id":
			if !once(id) {
				return nil, false
			}
			ec.ID = text
		case "type":
			if !once(typ) {
				return nil, false
			}
			ec.Type = text
		case "source":
			u, ok := sourceRef(text)
			if !once(source) || !ok {
				return nil, false
			}
			ec.Source = u
		case "subject":
			if !once(subject) {
				return nil, false
			}
			if text != "" {
				p.subject = text
				ec.Subject = &p.subject
			}
		case "time":
			t, err := types.ParseTimestamp(text)
			if !once(tm) || err != nil {
				return nil, false
			}
			ec.Time = t
		case "datacontenttype":
			// Given before specversion, "" is no type to the SDK; after it, the empty type.
			if !once(datacontenttype) || text == "" {
				return nil, false
			}
			p.contentType = text
			ec.DataContentType = &p.contentType
		case "dataschema":
			if !once(dataschema) {
				return nil, false
			}
			ec.DataSchema = types.ParseURI(text)
		default:
			if _, dup := ec.Extensions[m.name]; dup || !lowerAlnum(m.name) {
				return nil, false // the SDK lower-cases names: two could be one
			}
			var v any = text
			switch m.v.Type {
			case gjson.True, gjson.False:
				v = m.v.Type == gjson.True
			case gjson.Number: // the SDK reads a float64, and takes it if it is an Integer
				f, err := strconv.ParseFloat(m.v.Raw, 64)
				if err != nil {
					return nil, false
				}
				v = f
			}
			if err := ec.SetExtension(m.name, v); err != nil {
				return nil, false
			}
		}
	}
	if seen&specversion == 0 {
		return nil, false
	}
	p.e.Context = ec
	return &p.e, true
}

// eventParts are an event read by fastV1 and the values its context points to, in one allocation rather than one
// each: every event PutEvents, the router and a target read is made here.
type eventParts struct {
	e                    event.Event
	ec                   event.EventContextV1
	subject, contentType string
}

// Source is e.Source(), the text the SDK writes for e's source, without building it when the source is a plain
// path (letters, digits, "-", ".", "_", "~" and "/", not starting with "//": "bench", "/shop/orders",
// "com.example.orders"), which the SDK writes as it is. The SDK builds the text anew at every call, one allocation
// each; an event is asked for it about ten times on its way (TestSourceAsTheSDKWrites).
func Source(e *event.Event) string {
	if ec, ok := e.Context.(*event.EventContextV1); ok {
		return uriText(&ec.Source.URL)
	}
	return e.Source()
}

// sourceRef is what types.ParseURIRef makes of text (false for nil), without parsing a plain path: url.Parse
// makes a URL of its path alone (FuzzSourceRef). Every event read has a source, most of them plain.
func sourceRef(text string) (types.URIRef, bool) {
	if text != "" && plainPath(text) {
		return types.URIRef{URL: url.URL{Path: text}}, true
	}
	u := types.ParseURIRef(text)
	if u == nil {
		return types.URIRef{}, false
	}
	return *u, true
}

// uriText is u.String(), without building it for a plain path (see Source).
func uriText(u *url.URL) string {
	if u.Scheme == "" && u.Opaque == "" && u.User == nil && u.Host == "" && u.RawPath == "" && !u.ForceQuery &&
		u.RawQuery == "" && u.Fragment == "" && plainPath(u.Path) {
		return u.Path
	}
	return u.String()
}

// plainPath reports whether url.URL writes path, the only part of a URL, as it is: unreserved characters and "/"
// only (nothing to escape, no ":" that would need a "./"), not starting with "//" (an authority).
func plainPath(path string) bool {
	if strings.HasPrefix(path, "//") {
		return false
	}
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '.', c == '_', c == '~', c == '/':
		default:
			return false
		}
	}
	return true
}

// URIError is a source or dataschema that the SDK would not keep as written: not a URI-reference (a URI) as RFC
// 3986 writes one, with spaces, non-ASCII characters or control characters where percent-encodings belong.
type URIError struct {
	Attribute, Value, Stored string
}

func (e *URIError) Error() string {
	return fmt.Sprintf("%s %q is not a URI-reference as RFC 3986 writes one (it would be stored as %q): "+
		"percent-encode spaces, non-ASCII and control characters", e.Attribute, e.Value, e.Stored)
}

// KeptURIs returns a *URIError when e's source or dataschema, as the SDK parsed them, differ from the text they
// were given as (source, dataschema; "" for an absent one): the SDK holds them as parsed URLs and writes them back
// escaped, so "Zoë" would be delivered as "Zo%C3%AB". Refusing them keeps every event as it was put.
func KeptURIs(e *event.Event, source, dataschema string) error {
	if source != "" && Source(e) != source {
		return &URIError{Attribute: "source", Value: source, Stored: e.Source()}
	}
	if dataschema != "" && e.DataSchema() != dataschema {
		return &URIError{Attribute: "dataschema", Value: dataschema, Stored: e.DataSchema()}
	}
	return nil
}

// BatchEntry is one event of a batch: the event or why it cannot be read, its size in the batch, and its JSON
// form as the batch holds it (a part of the bytes read).
type BatchEntry struct {
	Event *event.Event
	Err   error
	Size  int
	JSON  []byte
}

// UnmarshalBatch reads a batch (application/cloudevents-batch+json): a JSON array, validated once however deeply
// its events' data nests, each element read as Unmarshal reads an event, an element that cannot be read failing
// alone. err is the batch failing as a whole: not JSON, or not an array. As with Unmarshal, the events' JSON data
// are parts of raw.
func UnmarshalBatch(raw []byte) ([]BatchEntry, error) {
	if out, ok := scanBatch(raw); ok {
		return out, nil
	}
	return parseBatch(raw) // not JSON, or not an array: the error says which
}

// parseBatch is UnmarshalBatch with raw parsed by gjson: its error path, and what TestScanReadsAsGJSON holds
// scanBatch to.
func parseBatch(raw []byte) ([]BatchEntry, error) {
	doc, err := parse(raw)
	if err != nil {
		return nil, err
	}
	if !doc.IsArray() {
		return nil, fmt.Errorf("a batch is a JSON array, not %s", kind(doc))
	}
	var out []BatchEntry
	doc.ForEach(func(_, v gjson.Result) bool {
		e, err := fromDoc(v, raw)
		out = append(out, BatchEntry{Event: e, Err: err, Size: len(v.Raw), JSON: within(raw, v)})
		return true
	})
	return out, nil
}

// scanBatch is UnmarshalBatch of raw when it is a valid JSON array, reading it once: each element's span, each of
// its members and the validation of every value come from one pass (scanObject, endOfValue), where parsing it with
// gjson after validating it read every event's data three times. ok false: raw is not a valid JSON array, and
// UnmarshalBatch's error path says why.
func scanBatch(raw []byte) (out []BatchEntry, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	out = make([]BatchEntry, 0, 16) // a PutEvents call holds at most 10 (Amazon EventBridge's limit); grown from there
	members := make([]member, 0, 16)
	if i = skipSpace(raw, i+1); i < len(raw) && raw[i] == ']' {
		return out, skipSpace(raw, i+1) == len(raw)
	}
	for {
		start := i
		var end int
		var entry BatchEntry
		if i < len(raw) && raw[i] == '{' {
			if members, end = scanObject(raw, i, members[:0]); end < 0 {
				return nil, false
			}
			entry.Event, entry.Err = fromMembers(members, raw)
		} else {
			if end, _ = endOfValue(raw, i); end < 0 {
				return nil, false
			}
			entry.Err = fmt.Errorf("an event is a JSON object, not %s", kind(result(raw, start, end)))
		}
		entry.Size, entry.JSON = end-start, raw[start:end:end]
		out = append(out, entry)
		switch i = skipSpace(raw, end); {
		case i < len(raw) && raw[i] == ',':
			i = skipSpace(raw, i+1)
		case i < len(raw) && raw[i] == ']':
			return out, skipSpace(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
}

// scanObject reads the members of the JSON object that starts at i of raw, validating each, appends them to members
// (each key and value as gjson's ForEach gives them) and returns them and where the object ends (past its '}');
// end -1 when no valid object starts at i.
func scanObject(raw []byte, i int, members []member) (_ []member, end int) {
	if i = skipSpace(raw, i+1); i < len(raw) && raw[i] == '}' {
		return members, i + 1
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, -1
		}
		keyEnd := endOfString(raw, i)
		if keyEnd < 0 {
			return nil, -1
		}
		k := result(raw, i, keyEnd)
		if i = skipSpace(raw, keyEnd); i >= len(raw) || raw[i] != ':' {
			return nil, -1
		}
		i = skipSpace(raw, i+1)
		valueEnd, _ := endOfValue(raw, i)
		if valueEnd < 0 {
			return nil, -1
		}
		members = append(members, member{name: k.Str, k: k, v: result(raw, i, valueEnd)})
		switch i = skipSpace(raw, valueEnd); {
		case i < len(raw) && raw[i] == ',':
			i = skipSpace(raw, i+1)
		case i < len(raw) && raw[i] == '}':
			return members, i + 1
		default:
			return nil, -1
		}
	}
}

// result is the valid JSON value raw[start:end] as gjson's ForEach gives a member's key or value: its text a part of
// raw's bytes (not a copy), its Index start.
func result(raw []byte, start, end int) gjson.Result {
	text := unsafe.String(unsafe.SliceData(raw[start:]), end-start)
	r := gjson.Result{Raw: text, Index: start}
	switch text[0] {
	case '{', '[':
		r.Type = gjson.JSON
	case '"':
		if strings.IndexByte(text, '\\') >= 0 {
			r.Str = gjson.Parse(text).Str // unescaped as gjson does
		} else {
			r.Str = text[1 : len(text)-1]
		}
		r.Type = gjson.String
	case 't':
		r.Type = gjson.True
	case 'f':
		r.Type = gjson.False
	case 'n':
		r.Type = gjson.Null
	default:
		r.Type = gjson.Number
		r.Num, _ = strconv.ParseFloat(text, 64)
	}
	return r
}

func kind(r gjson.Result) string {
	switch {
	case r.IsObject():
		return "an object"
	case r.IsArray():
		return "an array"
	case r.Type == gjson.String:
		return "a string"
	case r.Type == gjson.Number:
		return "a number"
	case r.Type == gjson.True, r.Type == gjson.False:
		return "a boolean"
	}
	return "null"
}
