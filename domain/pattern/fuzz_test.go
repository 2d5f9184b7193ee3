package pattern

import (
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
