package pattern

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// conformanceDir is the shared corpus of Amazon EventBridge cases, beside the repository's root.
const conformanceDir = "../../../shared/conformance/event-patterns"

// minConformanceCases guards against a corpus that went missing or was cut short.
const minConformanceCases = 150

type conformanceCase struct {
	name    string
	event   []byte
	pattern []byte
	want    string // "match", "nomatch" or "invalid"
}

// loadConformance reads every case: x.json5 matches, x_NEG.json5 does not, x_EXC.json5 is rejected, and the
// plain JSON pair complex_multi_key_event(.json|_pattern.json) matches.
func loadConformance(t testing.TB) []conformanceCase {
	t.Helper()
	entries, err := os.ReadDir(conformanceDir)
	if err != nil {
		t.Fatalf("conformance corpus: %v (it is expected at %s, beside the repository)", err, conformanceDir)
	}
	var cases []conformanceCase
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json5") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(conformanceDir, name))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Event        json.RawMessage
			EventPattern json.RawMessage
		}
		if err := json.Unmarshal(json5ToJSON(raw), &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if doc.Event == nil || doc.EventPattern == nil {
			t.Fatalf("%s: want Event and EventPattern", name)
		}
		c := conformanceCase{name: strings.TrimSuffix(name, ".json5"), event: doc.Event, pattern: doc.EventPattern, want: "match"}
		switch {
		case strings.HasSuffix(c.name, "_NEG"):
			c.want = "nomatch"
		case strings.HasSuffix(c.name, "_EXC"):
			c.want = "invalid"
		}
		cases = append(cases, c)
	}
	ev, err1 := os.ReadFile(filepath.Join(conformanceDir, "complex_multi_key_event.json"))
	pat, err2 := os.ReadFile(filepath.Join(conformanceDir, "complex_multi_key_event_pattern.json"))
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, conformanceCase{name: "complex_multi_key_event", event: ev, pattern: pat, want: "match"})
	if len(cases) < minConformanceCases {
		t.Fatalf("conformance corpus has %d cases; want at least %d", len(cases), minConformanceCases)
	}
	return cases
}

// json5ToJSON turns the JSON5 of the corpus (comments, trailing commas) into JSON. Strings are copied as they are.
func json5ToJSON(src []byte) []byte {
	var out []byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '"':
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			out = append(out, src[i:j+1]...)
			i = j
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				return append(out, src[i:]...) // let the JSON decoder report it
			}
			i += end + 3
		case c == ']' || c == '}':
			// drop a trailing comma before the closing bracket
			k := len(out) - 1
			for k >= 0 && (out[k] == ' ' || out[k] == '\n' || out[k] == '\t' || out[k] == '\r') {
				k--
			}
			if k >= 0 && out[k] == ',' {
				out = append(out[:k], out[k+1:]...)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

// asCloudEvent renames the EventBridge envelope's detail-type and detail to a CloudEvent's type and data, in the
// pattern and in the event alike, and gives the event a specversion.
func asCloudEvent(event, pattern []byte) (ce, cp []byte) {
	r := strings.NewReplacer(`"detail-type"`, `"type"`, `"detail"`, `"data"`)
	ce = []byte(r.Replace(string(event)))
	if i := bytes.IndexByte(ce, '{'); i >= 0 {
		ce = slices.Concat(ce[:i+1], []byte(`"specversion":"1.0",`), ce[i+1:])
	}
	return ce, []byte(r.Replace(string(pattern)))
}

func TestConformance(t *testing.T) {
	t.Parallel()
	cases := loadConformance(t)
	t.Logf("%d conformance cases", len(cases))
	// One matcher holds every valid pattern of the corpus, as a bus would, in both shapes.
	all := NewMatcher()
	for _, c := range cases {
		if p, err := Compile(c.pattern); err == nil {
			if err := all.Add(c.name, p); err != nil {
				t.Fatal(err)
			}
			_, cp := asCloudEvent(c.event, c.pattern)
			if p, err := Compile(cp); err == nil {
				if err := all.Add("ce:"+c.name, p); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, err := Compile(c.pattern)
			if c.want == "invalid" {
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("Compile = %v, want a *pattern.Error", err)
				}
				t.Logf("rejected: %v", err)
				return
			}
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			ce, cp := asCloudEvent(c.event, c.pattern)
			cep, err := Compile(cp)
			if err != nil {
				t.Fatalf("Compile of the CloudEvents form: %v", err)
			}
			for _, shape := range []struct {
				name  string
				id    string
				p     *Pattern
				event []byte
			}{{"EventBridge", c.name, p, c.event}, {"CloudEvents", "ce:" + c.name, cep, ce}} {
				want := c.want == "match"
				got, err := shape.p.Match(shape.event)
				if err != nil {
					t.Fatalf("%s: Match: %v", shape.name, err)
				}
				if got != want {
					t.Errorf("%s: Pattern.Match = %v, want %v", shape.name, got, want)
				}
				one := NewMatcher()
				if err := one.Add(shape.id, shape.p); err != nil {
					t.Fatal(err)
				}
				ids, err := one.Match(shape.event)
				if err != nil {
					t.Fatalf("%s: Matcher.Match: %v", shape.name, err)
				}
				if (len(ids) == 1) != want {
					t.Errorf("%s: Matcher.Match = %v, want match %v", shape.name, ids, want)
				}
				ids, err = all.Match(shape.event)
				if err != nil {
					t.Fatal(err)
				}
				if slices.Contains(ids, shape.id) != want {
					t.Errorf("%s: the corpus-wide Matcher gives %v: contains %s = %v, want %v", shape.name, ids, shape.id, !want, want)
				}
				x, err := Explain(shape.p, shape.event)
				if err != nil {
					t.Fatal(err)
				}
				if (x == nil) != want {
					t.Errorf("%s: Explain = %+v, want nil: %v", shape.name, x, want)
				}
				if x != nil && (x.Path == "" || x.Reason == "" || !json.Valid(x.Expected)) {
					t.Errorf("%s: incomplete explanation %+v", shape.name, x)
				}
			}
		})
	}
}

// TestConformanceCorpusShape guards the reader: the corpus has cases of every outcome.
func TestConformanceCorpusShape(t *testing.T) {
	t.Parallel()
	n := map[string]int{}
	for _, c := range loadConformance(t) {
		n[c.want]++
	}
	for _, want := range []string{"match", "nomatch", "invalid"} {
		if n[want] < 20 {
			t.Errorf("only %d %s cases: %v", n[want], want, n)
		}
	}
	t.Log(fmt.Sprint(n))
}
