package pattern

import (
	"encoding/json"
	"slices"
	"testing"
)

// fuzzEvents are matched against every pattern FuzzCompile accepts.
var fuzzEvents = [][]byte{
	[]byte(cloudEvent),
	[]byte(`{"a":[{"b":"x","c":1},{"b":"y","c":[2,null,true]}],"a.b":"x","d":{"e":{"f":"10.0.0.1"}}}`),
	[]byte(`{}`),
}

// addConformanceSeeds seeds a fuzz target with the corpus' patterns and events.
func addConformanceSeeds(f *testing.F, add func(c conformanceCase)) {
	for _, c := range loadConformance(f) {
		add(c)
	}
}

// FuzzCompile: Compile never panics or hangs, and what it accepts can be matched and explained.
func FuzzCompile(f *testing.F) {
	addConformanceSeeds(f, func(c conformanceCase) { f.Add(c.pattern) })
	f.Add([]byte(`{"a":{"$or":[{"b":[{"wildcard":"*x*y"}]},{"c":[{"numeric":[">",0,"<=",5]}]}]}}`))
	f.Fuzz(func(t *testing.T, pattern []byte) {
		p, err := Compile(pattern)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Compile error %T is not a *pattern.Error: %v", err, err)
			}
			return
		}
		m := NewMatcher()
		if err := m.Add("p", p); err != nil {
			t.Fatal(err)
		}
		for _, ev := range fuzzEvents {
			ok, err := p.Match(ev)
			if err != nil {
				t.Fatal(err)
			}
			ids, err := m.Match(ev)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (len(ids) == 1) {
				t.Fatalf("Pattern.Match = %v, Matcher.Match = %v on %s", ok, ids, ev)
			}
			x, err := Explain(p, ev)
			if err != nil || (x == nil) != ok {
				t.Fatalf("Explain = %+v, %v; Match = %v", x, err, ok)
			}
		}
	})
}

// FuzzMatcherMatch: matching never panics or hangs, a Matcher agrees with Pattern.Match, and both agree on
// which events are errors.
func FuzzMatcherMatch(f *testing.F) {
	addConformanceSeeds(f, func(c conformanceCase) { f.Add(c.pattern, c.event) })
	f.Add([]byte(`{"a":{"b":["x"],"c":[{"exists":false}]}}`), []byte(`{"a":[{"b":"x","c":1},{"b":"x"}]}`))
	f.Add([]byte(`{"a.b":{"c":["x"]}}`), []byte(`{"a":{"b.c":"x"},"a.b":[{"c":"y"}]}`))
	others := []string{
		`{"source":[{"prefix":"test"}]}`,
		`{"detail":{"state":[{"anything-but":["stopped","x"]}]}}`,
		`{"detail":{"c-count":[{"numeric":[">",0]}]}}`,
		`{"id":[{"exists":false}]}`,
	}
	f.Fuzz(func(t *testing.T, pattern, event []byte) {
		p, err := Compile(pattern)
		if err != nil {
			return
		}
		m := NewMatcher()
		if err := m.Add("fuzz", p); err != nil {
			t.Fatal(err)
		}
		for i, o := range others {
			if err := m.Add(string(rune('a'+i)), mustCompile(t, o)); err != nil {
				t.Fatal(err)
			}
		}
		ids, merr := m.Match(event)
		ok, perr := p.Match(event)
		if (merr == nil) != (perr == nil) {
			t.Fatalf("Matcher.Match error %v, Pattern.Match error %v", merr, perr)
		}
		if merr != nil {
			return
		}
		if slices.Contains(ids, "fuzz") != ok {
			t.Fatalf("Matcher.Match = %v, Pattern.Match = %v", ids, ok)
		}
		if !slices.IsSorted(ids) {
			t.Fatalf("ids not sorted: %v", ids)
		}
	})
}

// FuzzScanString: the event scanner reads a string as encoding/json does, eight bytes at a time or one: it refuses
// exactly the strings json.Valid refuses, whether a condition names the string (its text decoded, held to
// json.Unmarshal's) or not (skipped), and finds where each ends.
func FuzzScanString(f *testing.F) {
	for _, s := range []string{"", "x", "0123456789abcdef0123", `a\"b`, `\\`, `tab\there`, "\u00e9t\u00c9", `\ud83d\ude00`,
		"caf\xc3\xa9 au lait, quite long", "bad\xff utf-8 and more than eight", "ctl\x01after eight bytes", `\q`, `\u12`,
		"\x7f\x80\x20\x1f\"", "unterminated and long enough"} {
		f.Add([]byte(s))
	}
	pr := newProgram()
	a := pr.add("a")
	f.Fuzz(func(t *testing.T, text []byte) {
		named := append(append([]byte(`{"a":"`), text...), `","b":1}`...)
		skipped := append(append([]byte(`{"b":"`), text...), `","a":"x"}`...)
		valid := json.Valid(named)
		var e flatEvent
		err := e.scan(named, pr.root, pr.npaths())
		if (err == nil) != valid {
			t.Fatalf("scan of %q: error %v, json.Valid %v", named, err, valid)
		}
		if err == nil {
			var want struct{ A string }
			if uerr := json.Unmarshal(named, &want); uerr != nil {
				t.Fatal(uerr)
			}
			if l := e.first(a); l < 0 || string(e.leaves[l].str) != want.A {
				t.Fatalf("scan of %q: leaf %d, want %q", named, l, want.A)
			}
		}
		if err := e.scan(skipped, pr.root, pr.npaths()); (err == nil) != json.Valid(skipped) {
			t.Fatalf("scan of %q: error %v, json.Valid %v", skipped, err, !valid)
		}
	})
}
