package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	ce "github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/stream"
)

// The property of the issue "Nothing lost, nothing altered": every event PutEvents acknowledges is, for every
// target of a rule matching it, delivered or dead-lettered: exactly one of the two (delivery is at least once: a
// task that lost its lease may deliver a record again, counted), and what is delivered is the event that was put. runProperty generates random and hostile events (deep nesting, huge and odd
// attributes, every data form, duplicates, what the issue saw acknowledged and then dropped), puts them in batch,
// structured and binary mode, adds messages in the stored form of the previous release, and counts by source and id.

// propTarget is one target of the property's rule: how it is configured and how its receiver answers.
type propTarget struct {
	name       string
	structured bool
	retries    int
	transform  bool
}

var propTargets = []propTarget{
	{name: "bin", retries: 2},
	{name: "struct", structured: true},
	{name: "shaped", transform: true},
}

// propCase is one generated request: an event in the JSON format (or garbage), how it is sent, and what the
// generator expects: "ok" (acknowledged), "refused" (a 4xx, entry or request) or "either".
type propCase struct {
	kind   string
	raw    []byte
	mode   string // batch | structured | binary
	expect string
}

// fate is how a target's receiver answers an event: from a hash of the target and the event, so that every target
// sees every outcome: 2 in 20 answered 400 (permanent: dead-lettered at once), 1 in 20 always 503 (retries
// exhausted), 1 in 20 503 once then accepted (a retry delivers it, or, without retries, it is dead-lettered).
func fate(target, key string) int {
	h := fnv.New32a()
	h.Write([]byte(target))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return int(h.Sum32() % 20)
}

const (
	fateReject  = 0 // and 1
	fateFail    = 2
	fateFailOne = 3
)

// propReceiver records what each target accepted, by "source\x00id", with the request it came in.
type propReceiver struct {
	t        testing.TB
	srv      *httptest.Server
	mu       sync.Mutex
	attempts map[string]int            // target + "\x00" + key
	accepted map[string]map[string]int // target → key → times
	requests map[string]map[string]*http.Request
	bodies   map[string]map[string][]byte
	problems []string
}

func newPropReceiver(t testing.TB) *propReceiver {
	r := &propReceiver{t: t, attempts: map[string]int{}, accepted: map[string]map[string]int{},
		requests: map[string]map[string]*http.Request{}, bodies: map[string]map[string][]byte{}}
	for _, pt := range propTargets {
		r.accepted[pt.name], r.requests[pt.name], r.bodies[pt.name] = map[string]int{}, map[string]*http.Request{}, map[string][]byte{}
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *propReceiver) problem(format string, args ...any) {
	r.mu.Lock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *propReceiver) serve(w http.ResponseWriter, req *http.Request) {
	target := strings.TrimPrefix(req.URL.Path, "/")
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var key string
	if ct := req.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/cloudevents+json") {
		e, err := cloudevent.Unmarshal(body)
		if err != nil {
			r.problem("%s: a structured request that is not a CloudEvent in the JSON format: %v: %.200s", target, err, body)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		key = e.Source() + "\x00" + e.ID()
	} else {
		id, err1 := percentDecode(req.Header.Get("ce-id"))
		source, err2 := percentDecode(req.Header.Get("ce-source"))
		if err1 != nil || err2 != nil || id == "" {
			r.problem("%s: binary-mode headers not percent-encoded as the binding says: ce-id %q ce-source %q",
				target, req.Header.Get("ce-id"), req.Header.Get("ce-source"))
			http.Error(w, "bad ce-id or ce-source", http.StatusBadRequest)
			return
		}
		key = source + "\x00" + id
	}
	r.mu.Lock()
	r.attempts[target+"\x00"+key]++
	attempt := r.attempts[target+"\x00"+key]
	r.mu.Unlock()
	switch f := fate(target, key); {
	case f == fateReject || f == fateReject+1:
		http.Error(w, "refused by the property's receiver", http.StatusBadRequest)
		return
	case f == fateFail, f == fateFailOne && attempt == 1:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "unavailable by the property's receiver", http.StatusServiceUnavailable)
		return
	}
	r.mu.Lock()
	r.accepted[target][key]++
	if r.accepted[target][key] == 1 {
		r.requests[target][key] = &http.Request{Header: req.Header.Clone()}
		r.bodies[target][key] = body
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// propGen generates the cases from a seeded source.
type propGen struct {
	r    *rand.Rand
	n    int
	keys [][2]string // source and id of events generated so far, for duplicates
}

// oddStrings are attribute values that take every path of the percent-encoding and of JSON escaping.
var oddStrings = []string{
	"a b", `quote " inside`, "100% sure", "%41 is not A", "Zoë", "日本語", "emoji 🎉🌍", "tab-free\\backslash",
	"ce-id", "a,b;c=d", "<xml>&amp;</xml>", "plus+sign", "~!@#$^&*()_+`-={}|[]:';?/.,", "\u00a0nbsp", "é́ combining",
	strings.Repeat("long-", 200),
}

func (g *propGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *propGen) text(max int) string {
	var b strings.Builder
	alphabet := []rune("abcxyz 019 \"\\/%+é日🎉\u2028\t\n\r")
	for i, n := 0, g.r.IntN(max+1); i < n; i++ {
		b.WriteRune(alphabet[g.r.IntN(len(alphabet))])
	}
	return b.String()
}

// jsonValue is a random JSON value nested at most depth deep.
func (g *propGen) jsonValue(depth int) any {
	k := g.r.IntN(10)
	if depth <= 0 {
		k %= 6
	}
	switch k {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2:
		return json.Number(g.pick([]string{"0", "-1", "42", "9007199254740993", "18446744073709551617", "1e400",
			"-0.0", "3.141592653589793238462643383279", "1E-7", "123456789012345678901234567890"}))
	case 3, 4, 5:
		return g.text(20)
	case 6, 7:
		a := make([]any, g.r.IntN(5))
		for i := range a {
			a[i] = g.jsonValue(depth - 1)
		}
		return a
	default:
		o := map[string]any{}
		for i, n := 0, g.r.IntN(6); i < n; i++ {
			o[g.text(8)] = g.jsonValue(depth - 1)
		}
		return o
	}
}

func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// withData is attrs in the JSON format with the member name set to raw, a JSON value written as it is.
func withData(attrs map[string]any, name string, raw []byte) []byte {
	b := marshal(attrs)
	if raw == nil {
		return b
	}
	return append(append(append(b[:len(b)-1], fmt.Sprintf(",%q:", name)...), raw...), '}')
}

func nested(depth int) []byte {
	return []byte(strings.Repeat(`{"a":[`, depth/2) + "1" + strings.Repeat(`]}`, depth/2))
}

// next returns the next case.
func (g *propGen) next() propCase {
	g.n++
	id := fmt.Sprintf("p-%d", g.n)
	source := "/property/" + strconv.Itoa(g.r.IntN(3))
	attrs := map[string]any{"specversion": "1.0", "id": id, "source": source, "type": "property.t" + strconv.Itoa(g.r.IntN(4))}
	c := propCase{expect: "ok"}
	var dataName string
	var data []byte
	setJSON := func(v any) {
		attrs["datacontenttype"] = g.pick([]string{"application/json", "application/json; charset=utf-8", "text/json", "application/vnd.shop+json"})
		dataName, data = "data", marshal(v)
	}
	switch k := g.r.IntN(100); {
	case k < 25:
		c.kind = "json-object"
		o := map[string]any{"n": json.Number("9007199254740993"), "nested": g.jsonValue(5)}
		for i, n := 0, g.r.IntN(8); i < n; i++ {
			o[g.text(10)] = g.jsonValue(4)
		}
		setJSON(o)
	case k < 32:
		c.kind = "json-scalar"
		setJSON(g.jsonValue(2))
		if g.r.IntN(3) == 0 {
			delete(attrs, "datacontenttype") // JSON data without a content type: the format's default
		}
	case k < 42:
		c.kind = "text"
		attrs["datacontenttype"] = g.pick([]string{"text/plain", "text/plain; charset=utf-8", "application/xml", "text/csv"})
		dataName, data = "data", marshal(g.pick([]string{"Hello, World!\n", "  padded  ", "", "\n\n"})+g.text(200))
	case k < 50:
		c.kind = "binary"
		b := make([]byte, g.r.IntN(2048))
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		attrs["datacontenttype"] = g.pick([]string{"application/octet-stream", "image/png", "application/protobuf"})
		dataName, data = "data_base64", marshal(base64.StdEncoding.EncodeToString(b))
	case k < 55:
		c.kind = "base64-without-content-type" // acknowledged, then dropped, in the issue
		dataName, data = "data_base64", marshal(base64.StdEncoding.EncodeToString([]byte(g.text(100))))
	case k < 59:
		c.kind = "no-data"
	case k < 61:
		c.kind = "deep-ok"
		attrs["datacontenttype"] = "application/json"
		dataName, data = "data", nested(500)
	case k < 63:
		c.kind, c.expect = "deep-refused", "refused" // acknowledged, then dropped, in the issue
		attrs["datacontenttype"] = "application/json"
		dataName, data = "data", nested(g.pick2(600, 10000))
	case k < 66:
		c.kind = "big-subject"
		attrs["subject"] = strings.Repeat("s", 20_000+g.r.IntN(10_000))
	case k < 68:
		c.kind, c.expect = "huge-attribute", "refused"
		attrs[g.pick([]string{"subject", "source", "exthuge"})] = strings.Repeat("x", 70_000)
	case k < 70:
		c.kind = "many-extensions"
		for i := range 100 {
			attrs[fmt.Sprintf("ext%03d", i)] = i
		}
	case k < 71:
		c.kind, c.expect = "too-many-extensions", "refused"
		for i := range 101 {
			attrs[fmt.Sprintf("ext%03d", i)] = "v"
		}
	case k < 78:
		c.kind = "typed-extensions"
		attrs["count"] = g.pick2(-2147483648, 2147483647)
		attrs["flag"] = g.r.IntN(2) == 0
		attrs["ref"] = "https://example.com/a?b=c#d"
		attrs["when"] = "2026-12-02T01:02:03.123456789Z"
		attrs["note"] = g.pick(oddStrings)
		setJSON(map[string]any{"i": g.n})
	case k < 86:
		c.kind = "odd-attributes"
		id = g.pick(oddStrings) + "#" + strconv.Itoa(g.n)
		attrs["id"] = id
		if g.r.IntN(2) == 0 {
			// Most are not URI-references as RFC 3986 writes them: refused rather than stored escaped.
			attrs["source"], c.expect = g.pick(oddStrings), "either"
		}
		attrs["subject"] = g.pick(oddStrings)
		attrs["dataschema"] = "https://example.com/schemas/" + url.PathEscape(g.pick(oddStrings))
		setJSON(map[string]any{"s": g.pick(oddStrings)})
	case k < 89:
		c.kind = "time"
		attrs["time"] = g.pick([]string{"2026-12-02T01:02:03.123456789Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
			"2026-12-02T06:32:03.5+05:30", "2026-12-02T01:02:03Z"})
		setJSON(map[string]any{"t": attrs["time"]})
	case k < 92:
		c.kind, c.expect = "control-character", "refused" // retried for hours in the issue
		attrs[g.pick([]string{"type", "subject", "source", "note"})] = g.pick([]string{"nul\x00", "bell\a", "c1\u0085", "nonchar\uFFFE", "esc\x1b"})
	case k < 94:
		c.kind = "big-data"
		setJSON(map[string]any{"blob": strings.Repeat("0123456789abcdef", 6000+g.r.IntN(6000))})
	case k < 95:
		c.kind, c.expect = "too-large", "refused"
		setJSON(map[string]any{"blob": strings.Repeat("0123456789abcdef", 20_000)})
	case k < 97:
		c.kind, c.expect = "missing-attribute", "refused"
		delete(attrs, g.pick([]string{"id", "source", "type"}))
	default:
		c.kind = "duplicate"
		if len(g.keys) > 0 {
			prev := g.keys[g.r.IntN(len(g.keys))]
			attrs["source"], attrs["id"] = prev[0], prev[1]
		}
		setJSON(map[string]any{"second": true})
	}
	for _, v := range attrs {
		if v, ok := v.(string); ok && strings.TrimSpace(v) != v && c.expect == "ok" {
			c.expect = "refused" // white space at an end: SDKs and header parsers would trim it
		}
	}
	if c.expect == "ok" {
		if s, ok := attrs["source"].(string); ok {
			g.keys = append(g.keys, [2]string{s, attrs["id"].(string)})
		}
	}
	c.raw = withData(attrs, dataName, data)
	switch k := g.r.IntN(100); {
	case k < 60:
		c.mode = "batch"
	case k < 85:
		c.mode = "structured"
	default:
		c.mode = "binary"
	}
	return c
}

func (g *propGen) pick2(a, b int) int {
	if g.r.IntN(2) == 0 {
		return a
	}
	return b
}

// binaryRequest is the event raw as a binary-mode request, or nil when the SDK does not read raw (the case is
// then sent structured).
func binaryRequest(raw []byte) (http.Header, []byte) {
	e, err := cloudevent.Unmarshal(raw)
	if err != nil {
		return nil, nil
	}
	h := http.Header{}
	set := func(name, v string) { h.Set("ce-"+name, percentEncode(v)) }
	set("specversion", e.SpecVersion())
	set("id", e.ID())
	set("source", e.Source())
	set("type", e.Type())
	if v := e.Subject(); v != "" {
		set("subject", v)
	}
	if v := e.DataSchema(); v != "" {
		set("dataschema", v)
	}
	if !e.Time().IsZero() {
		set("time", e.Time().UTC().Format(time.RFC3339Nano))
	}
	for k, v := range e.Extensions() {
		s, err := types.Format(v)
		if err != nil {
			return nil, nil
		}
		set(k, s)
	}
	if ct := e.DataContentType(); ct != "" {
		h.Set("Content-Type", ct)
	}
	return h, e.Data()
}

// sdkEvent is an event sent as raw (structured or batch), read as the JSON format says (cloudevent.Unmarshal: the
// SDK's own reader takes the data of a +json type for a string), or a binary-mode request as the SDK reads it.
func sdkEvent(raw []byte, h http.Header, body []byte) (*ce.Event, error) {
	if h == nil {
		return cloudevent.Unmarshal(raw)
	}
	req := &http.Request{Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
	for k, vs := range h {
		for _, v := range vs {
			if strings.HasPrefix(strings.ToLower(k), "ce-") {
				d, err := percentDecode(v) // the SDK (2.16) does not percent-decode
				if err != nil {
					return nil, err
				}
				v = d
			}
			req.Header.Add(k, v)
		}
	}
	return cehttp.NewEventFromHTTPRequest(req)
}

// sameEvent returns what differs between the event that was put and the one that was delivered, "" when nothing.
// Extensions are compared by value and type as the SDK reads them; data byte for byte, except JSON data put in
// binary mode and delivered structured, compared as JSON (the JSON format embeds it).
func sameEvent(want, got *ce.Event, jsonLoose bool) string {
	var diffs []string
	for _, a := range [][3]string{{"id", want.ID(), got.ID()}, {"source", want.Source(), got.Source()},
		{"type", want.Type(), got.Type()}, {"subject", want.Subject(), got.Subject()},
		{"dataschema", want.DataSchema(), got.DataSchema()}, {"datacontenttype", want.DataContentType(), got.DataContentType()}} {
		if a[1] != a[2] && !(a[0] == "datacontenttype" && a[1] == "" && (a[2] == "application/json" || a[2] == "application/octet-stream")) {
			diffs = append(diffs, fmt.Sprintf("%s %.80q, want %.80q", a[0], a[2], a[1]))
		}
	}
	if !want.Time().Equal(got.Time()) {
		diffs = append(diffs, fmt.Sprintf("time %s, want %s", got.Time().Format(time.RFC3339Nano), want.Time().Format(time.RFC3339Nano)))
	}
	if w, g := want.Extensions(), got.Extensions(); !reflect.DeepEqual(w, g) && !(len(w) == 0 && len(g) == 0) {
		for k, v := range w {
			if !reflect.DeepEqual(v, g[k]) {
				diffs = append(diffs, fmt.Sprintf("extension %s %T(%.60v), want %T(%.60v)", k, g[k], g[k], v, v))
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				diffs = append(diffs, "extension "+k+" added")
			}
		}
	}
	if wd, gd := want.Data(), got.Data(); !bytes.Equal(wd, gd) {
		if !(jsonLoose && json.Valid(wd) && jsonEqual(wd, gd)) {
			diffs = append(diffs, fmt.Sprintf("data %d bytes %.60q, want %d bytes %.60q", len(gd), gd, len(wd), wd))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	return da.Decode(&x) == nil && db.Decode(&y) == nil && reflect.DeepEqual(x, y)
}

// propEntry is one entry of a PutEvents answer.
type propEntry struct {
	EventID   string `json:"eventId"`
	Duplicate bool   `json:"duplicate"`
	ErrorCode string `json:"errorCode"`
	ErrorMsg  string `json:"errorMessage"`
}

// ackedVersion is an event acknowledged under a key (source and id) that an earlier event of another call had.
type ackedVersion struct {
	e *ce.Event
	c propCase
}

// putCases sends cases in their modes and returns, by key, the event the store acknowledged first (the SDK's
// reading of it) with its case; the events acknowledged later under the same key in other calls (stored again, or
// answered as duplicates of their call); and each case's outcome (acknowledged or the status and code of its
// refusal).
func putCases(t testing.TB, a api, bus string, cases []propCase) (map[string]*ce.Event, map[string]propCase, map[string][]ackedVersion, []string) {
	acked, ackedCase, later := map[string]*ce.Event{}, map[string]propCase{}, map[string][]ackedVersion{}
	outcome := make([]string, len(cases))
	record := func(i int, e *ce.Event, ok bool, why string) {
		c := cases[i]
		outcome[i] = why
		if !ok {
			if c.expect == "ok" {
				t.Errorf("case %d (%s, %s) refused: %s: %.300s", i, c.kind, c.mode, why, c.raw)
			}
			return
		}
		if c.expect == "refused" {
			t.Errorf("case %d (%s, %s) acknowledged, the invariant should refuse it: %.300s", i, c.kind, c.mode, c.raw)
		}
		if e == nil {
			t.Errorf("case %d (%s, %s): acknowledged, but the SDK cannot read what was sent: %.300s", i, c.kind, c.mode, c.raw)
			return
		}
		key := e.Source() + "\x00" + e.ID()
		if _, dup := acked[key]; !dup {
			acked[key], ackedCase[key] = e, c
		} else {
			later[key] = append(later[key], ackedVersion{e: e, c: c})
		}
	}
	status := func(st int, body []byte) (bool, string) {
		if st >= 500 {
			t.Errorf("answered %d: %s", st, body)
		}
		if st == http.StatusOK {
			return true, ""
		}
		var p struct{ Code, Detail string }
		_ = json.Unmarshal(body, &p)
		return false, fmt.Sprintf("%d %s %s", st, p.Code, p.Detail)
	}
	var batch []int
	size := 0
	flush := func() {
		if len(batch) == 0 {
			return
		}
		var buf bytes.Buffer
		buf.WriteByte('[')
		for j, i := range batch {
			if j > 0 {
				buf.WriteByte(',')
			}
			buf.Write(cases[i].raw)
		}
		buf.WriteByte(']')
		st, body := a.do("POST", "/api/v1/buses/"+bus+"/events", "application/cloudevents-batch+json", buf.Bytes())
		require.Equalf(t, http.StatusOK, st, "batch: %.500s", body)
		var res struct{ Entries []propEntry }
		require.NoError(t, json.Unmarshal(body, &res))
		require.Len(t, res.Entries, len(batch))
		for j, i := range batch {
			en := res.Entries[j]
			e, _ := sdkEvent(cases[i].raw, nil, nil)
			if en.ErrorCode != "" {
				e = nil
			}
			why := ""
			if en.ErrorCode != "" {
				why = en.ErrorCode + " " + en.ErrorMsg
			}
			record(i, e, why == "", why)
		}
		batch, size = batch[:0], 0
	}
	for i, c := range cases {
		switch c.mode {
		case "batch":
			if size+len(c.raw) > 900<<10 {
				flush()
			}
			batch = append(batch, i)
			size += len(c.raw) + 1
		case "binary":
			if h, body := binaryRequest(c.raw); h != nil {
				req, err := http.NewRequest("POST", a.base+"/api/v1/buses/"+bus+"/events", bytes.NewReader(body))
				require.NoError(t, err)
				req.Header = h.Clone()
				req.Header.Set("Authorization", "Bearer "+a.key)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				out, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				ok, why := status(resp.StatusCode, out)
				e, err := sdkEvent(nil, h, body)
				if err != nil {
					e = nil
				}
				record(i, e, ok, why)
				continue
			}
			cases[i].mode = "structured" // not representable in binary mode as the SDK reads it
			fallthrough
		case "structured":
			st, body := a.do("POST", "/api/v1/buses/"+bus+"/events", "application/cloudevents+json", c.raw)
			ok, why := status(st, body)
			e, err := sdkEvent(c.raw, nil, nil)
			if err != nil {
				e = nil
			}
			record(i, e, ok, why)
		}
	}
	flush()
	return acked, ackedCase, later, outcome
}

// putEarlierForm publishes n events on the bus in the stored form of the previous release (every attribute a
// header's text, extensions untyped, the data as the body, no eb-* header) as that release's PutEvents did, and
// returns them by key as the new codec should deliver them: extensions as strings.
func putEarlierForm(t testing.TB, js jetstream.JetStream, subject string, n int) map[string]*ce.Event {
	out := map[string]*ce.Event{}
	for i := range n {
		m := nats.NewMsg(subject)
		id, source := fmt.Sprintf("old-%d", i), "/earlier-release"
		for k, v := range map[string]string{"ce-specversion": "1.0", "ce-id": id, "ce-source": source,
			"ce-type": "property.t0", "ce-subject": "Zoë " + strconv.Itoa(i), "ce-time": "2026-11-30T10:11:12.123456789Z",
			"content-type": "application/json", "ce-count": strconv.Itoa(i), "ce-region": "eu"} {
			m.Header.Set(k, v)
		}
		m.Header.Set(nats.MsgIdHdr, stream.PutMsgID(source, id))
		m.Data = []byte(fmt.Sprintf(`{"i": %d, "big": 9007199254740993}`, i))
		_, err := js.PublishMsg(context.Background(), m)
		require.NoError(t, err)
		e := ce.New()
		e.SetID(id)
		e.SetSource(source)
		e.SetType("property.t0")
		e.SetSubject("Zoë " + strconv.Itoa(i))
		e.SetTime(time.Date(2026, 11, 30, 10, 11, 12, 123456789, time.UTC))
		e.SetExtension("count", strconv.Itoa(i))
		e.SetExtension("region", "eu")
		require.NoError(t, e.SetData("application/json", m.Data))
		out[source+"\x00"+id] = &e
	}
	return out
}

// runProperty puts n generated cases (and a few messages in the earlier stored form) and checks the property.
func runProperty(t *testing.T, seed uint64, n int) {
	if s := os.Getenv("EB_PROPERTY_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		seed = v
	}
	t.Logf("seed %d (EB_PROPERTY_SEED reproduces a run), %d cases", seed, n)
	// The property is about what is stored and delivered, not the account's rate: 12,300 events may come faster
	// than the default 10,000 a second.
	m := startMain(t, t.TempDir(), "--put-events-rate", "1000000")
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	recv := newPropReceiver(t)

	a.must("POST", "/api/v1/buses", map[string]any{"name": "prop"}, 201)
	a.must("POST", "/api/v1/buses/prop/rules", map[string]any{"name": "all",
		"eventPattern": map[string]any{"id": []any{map[string]any{"exists": true}}}}, 201)
	for _, pt := range propTargets {
		cfg := map[string]any{"url": recv.srv.URL + "/" + pt.name}
		if pt.structured {
			cfg["mode"] = "structured"
		}
		tg := map[string]any{"type": "http", "config": cfg,
			"retryPolicy": map[string]any{"maximumRetryAttempts": pt.retries, "maximumEventAgeInSeconds": 86400}}
		if pt.transform {
			tg["inputTransformer"] = map[string]any{"inputPathsMap": map[string]any{"t": "$.type", "n": "$.data.n", "s": "$.subject"},
				"inputTemplate": `{"type": <t>, "n": <n>, "subject": <s>}`}
		}
		a.must("PUT", "/api/v1/buses/prop/rules/all/targets/"+pt.name, tg, 201)
	}
	for _, pt := range propTargets {
		a.waitState("eb.default.prop.all."+pt.name, "RUNNING")
	}

	g := &propGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	cases := make([]propCase, n)
	for i := range cases {
		cases[i] = g.next()
	}
	acked, ackedCase, later, outcome := putCases(t, a, "prop", cases)
	kinds := map[string][2]int{}
	for i, c := range cases {
		k := kinds[c.kind]
		k[0]++
		if outcome[i] == "" {
			k[1]++
		}
		kinds[c.kind] = k
	}
	t.Logf("cases by kind (sent, acknowledged): %v; %d distinct events acknowledged", kinds, len(acked))

	js, err := jetstream.New(m.nc)
	require.NoError(t, err)
	names := stream.Names{Cluster: m.Config.ClusterID}
	var busID string // the only bus: its stream is the only one of its kind
	for name := range js.StreamNames(context.Background()).Name() {
		if id, ok := strings.CutPrefix(name, names.BusStream("")); ok {
			busID = id
		}
	}
	require.NotEmpty(t, busID)
	earlier := putEarlierForm(t, js, names.BusIn(busID), 20)
	for k, e := range earlier {
		acked[k], ackedCase[k] = e, propCase{kind: "earlier-stored-form", mode: "nats"}
	}

	// Every acknowledged event is accounted for at every target, then every consumer of the bus settles.
	deadLettered := func() map[string]map[string]int {
		out := map[string]map[string]int{}
		for token := ""; ; {
			l := a.deadLetters("?bus=prop&limit=500&nextToken=" + url.QueryEscape(token))
			for _, d := range l.DeadLetters {
				if out[d.Target] == nil {
					out[d.Target] = map[string]int{}
				}
				out[d.Target][d.Event.Source+"\x00"+d.Event.ID]++
				if d.Reason == "" {
					t.Errorf("dead letter %s of %s has no reason", d.ID, d.Target)
				}
			}
			if token = l.NextToken; token == "" {
				return out
			}
		}
	}
	accounted := func() (int, map[string]map[string]int) {
		dl := deadLettered()
		recv.mu.Lock()
		defer recv.mu.Unlock()
		missing := 0
		for k := range acked {
			for _, pt := range propTargets {
				if recv.accepted[pt.name][k] == 0 && dl[pt.name][k] == 0 && dl[""][k] == 0 {
					missing++
				}
			}
		}
		return missing, dl
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		missing, _ := accounted()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries neither delivered nor dead-lettered after 3 minutes", missing)
		}
		time.Sleep(200 * time.Millisecond)
	}
	ctx := context.Background()
	st, err := js.Stream(ctx, names.BusStream(busID))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		for info := range st.ListConsumers(ctx).Info() {
			if info.NumPending != 0 || info.NumAckPending != 0 {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond, "every consumer of the bus settles")
	_, dl := accounted()

	// One of delivered and dead-lettered for every acknowledged event and every target; nothing else. Delivery is at
	// least once: a task that loses its lease (a renewal that timed out under load) hands its records to its next
	// run, which may deliver a record again; such copies are counted, not violations. A key acknowledged n times in
	// different calls (stored again, not answered as a duplicate of its call) may be routed up to n times, since the
	// router stores a call's copies as one record batch: it may then be delivered and dead-lettered, and dead-lettered
	// up to n times, but never neither.
	recv.mu.Lock()
	defer recv.mu.Unlock()
	require.Empty(t, recv.problems)
	var violations []string
	duplicates := 0
	for k, e := range acked {
		c := ackedCase[k]
		n := 1 + len(later[k]) // the times k was acknowledged
		for _, pt := range propTargets {
			d, l := recv.accepted[pt.name][k], dl[pt.name][k]+dl[""][k]
			if d == 0 && l == 0 || d > 0 && l > 0 && n == 1 || l > n {
				violations = append(violations, fmt.Sprintf("%s: %s (%s, %s) delivered %d and dead-lettered %d times",
					pt.name, strings.ReplaceAll(k, "\x00", " "), c.kind, c.mode, d, l))
				continue
			}
			duplicates += max(d-1, 0)
			f := fate(pt.name, k)
			switch {
			case d > 0 && (f == fateReject || f == fateReject+1 || f == fateFail || f == fateFailOne && pt.retries == 0 && n == 1):
				violations = append(violations, fmt.Sprintf("%s: %s delivered, its receiver never accepts it", pt.name, k))
			case (f == fateReject || f == fateReject+1) && pt.retries > 0 && recv.attempts[pt.name+"\x00"+k] > pt.retries+n-1:
				// Retried as its policy allows a temporary failure: a 400 is permanent (a redelivery may add one try,
				// and so may each time the key was stored again).
				violations = append(violations, fmt.Sprintf("%s: %s answered 400, a permanent failure, but tried %d times",
					pt.name, k, recv.attempts[pt.name+"\x00"+k]))
			case d > 0 && pt.structured:
				got, err := sdkEvent(recv.bodies[pt.name][k], nil, nil)
				if err != nil {
					violations = append(violations, fmt.Sprintf("%s: %s: %v", pt.name, k, err))
				} else if diff := anyVersion(e, c, later[k], func(e *ce.Event, c propCase) string {
					return sameEvent(e, got, c.mode == "binary" || c.mode == "nats")
				}); diff != "" {
					violations = append(violations, fmt.Sprintf("%s: %s (%s, %s) delivered altered: %s", pt.name, k, c.kind, c.mode, diff))
				}
			case d > 0 && !pt.transform:
				got, err := sdkEvent(nil, recv.requests[pt.name][k].Header, recv.bodies[pt.name][k])
				if err != nil {
					violations = append(violations, fmt.Sprintf("%s: %s: %v", pt.name, k, err))
				} else if diff := anyVersion(e, c, later[k], func(e *ce.Event, _ propCase) string {
					return sameEvent(binaryView(e), got, false)
				}); diff != "" {
					violations = append(violations, fmt.Sprintf("%s: %s (%s, %s) delivered altered: %s", pt.name, k, c.kind, c.mode, diff))
				}
			}
		}
	}
	for _, pt := range append(propTargets, propTarget{name: ""}) {
		for k := range recv.accepted[pt.name] {
			if acked[k] == nil {
				violations = append(violations, fmt.Sprintf("%s: %q delivered, never acknowledged", pt.name, k))
			}
		}
		for k := range dl[pt.name] {
			if acked[k] == nil {
				violations = append(violations, fmt.Sprintf("%s: %q dead-lettered, never acknowledged", pt.name, k))
			}
		}
	}
	sort.Strings(violations)
	if len(violations) > 30 {
		violations = append(violations[:30], fmt.Sprintf("… and %d more", len(violations)-30))
	}
	require.Empty(t, violations, "acknowledged = delivered + dead-lettered, exactly, and delivered unaltered")
	delivered, dead := 0, 0
	for _, pt := range propTargets {
		delivered += len(recv.accepted[pt.name])
		dead += len(dl[pt.name])
	}
	t.Logf("%d events acknowledged × %d targets: %d delivered, %d dead-lettered (%d by the router); %d delivered again",
		len(acked), len(propTargets), delivered, dead, len(dl[""]), duplicates)
}

// anyVersion is "" when diff finds no difference between what was delivered and the event first acknowledged under
// its key (e, of case c) or one acknowledged later in another call, else the difference from the first.
func anyVersion(e *ce.Event, c propCase, later []ackedVersion, diff func(*ce.Event, propCase) string) string {
	first := diff(e, c)
	if first == "" {
		return ""
	}
	for _, v := range later {
		if diff(v.e, v.c) == "" {
			return ""
		}
	}
	return first
}

// binaryView is e as binary mode carries it: every extension a string (headers have no types), the SDK's reading.
func binaryView(e *ce.Event) *ce.Event {
	out := e.Clone()
	for k, v := range e.Extensions() {
		s, _ := types.Format(v)
		out.SetExtension(k, s)
	}
	return &out
}

// TestAcknowledgedIsDeliveredOrDeadLettered is the property, bounded for `make test`; TestSlowProperty… runs it on
// 10,000 and more generated events.
func TestAcknowledgedIsDeliveredOrDeadLettered(t *testing.T) {
	runProperty(t, 1, 400)
}
