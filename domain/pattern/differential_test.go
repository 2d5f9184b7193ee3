package pattern

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// gen makes random events and patterns over small pools of keys and values, so that they often meet.
type gen struct {
	r *rand.Rand
	// arrays biases toward arrays of objects and few values, where array consistency decides.
	arrays bool
	// dots adds keys with dots, which name the same paths as nested keys.
	dots bool
}

func (g gen) keys() []string {
	k := genKeys
	if g.arrays {
		k = genKeys[:2]
	}
	if g.dots {
		k = append(append([]string{}, k...), "a.b", "b.a")
	}
	return k
}

var (
	genKeys    = []string{"a", "b", "c", "d"}
	genStrings = []string{"", "x", "X", "xy", "yx", "xyz", "a*c", "abc", "ABC", "k", "\u212a", "s", "\u017f",
		"10.0.0.1", "10.1.2.3", "2001:db8::1", "é", "É"}
	genNumbers = []string{"0", "-0", "1", "1.0", "1e0", "2.5", "-3", "100", "1e2", "7",
		"9007199254740992", "9007199254740993", "9.007199254740993e15", "-9007199254740993"}
	genCIDRs = []string{"10.0.0.0/8", "10.0.0.1", "10.1.0.0/16", "2001:db8::/32", "::/0"}
	genGlobs = []string{"*", "x*", "*y", "x*y", "a*c", "", "a\\*c", "*b*", "x*y*z"}
)

func (g gen) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g gen) scalar() any {
	if g.arrays && g.r.IntN(4) > 0 {
		return []any{"x", "y", json.Number("1"), json.Number("2")}[g.r.IntN(4)]
	}
	switch g.r.IntN(6) {
	case 0, 1, 2:
		return g.pick(genStrings)
	case 3:
		return json.Number(g.pick(genNumbers))
	case 4:
		return g.r.IntN(2) == 0
	default:
		return nil
	}
}

func (g gen) value(depth int) any {
	if g.arrays && depth < 3 {
		switch g.r.IntN(6) {
		case 0, 1, 2:
			arr := []any{}
			for range 1 + g.r.IntN(3) {
				if g.r.IntN(5) == 0 {
					arr = append(arr, g.value(depth+1))
				} else {
					arr = append(arr, g.object(depth+1))
				}
			}
			return arr
		case 3:
			return g.object(depth + 1)
		}
	}
	switch n := g.r.IntN(10); {
	case n < 5 || depth >= 3:
		return g.scalar()
	case n < 7:
		return g.object(depth + 1)
	default:
		arr := []any{}
		for range g.r.IntN(4) {
			arr = append(arr, g.value(depth+1))
		}
		return arr
	}
}

func (g gen) object(depth int) map[string]any {
	obj := map[string]any{}
	if g.arrays {
		for _, k := range g.keys() {
			if g.r.IntN(5) > 0 {
				obj[k] = g.value(depth)
			}
		}
		return obj
	}
	for range 1 + g.r.IntN(3) {
		obj[g.pick(g.keys())] = g.value(depth)
	}
	return obj
}

func (g gen) key() string { return g.pick(g.keys()) }

func (g gen) alternative() any {
	if g.arrays && g.r.IntN(3) > 0 {
		switch g.r.IntN(4) {
		case 0:
			return map[string]any{"exists": g.r.IntN(3) > 0}
		case 1:
			return map[string]any{"anything-but": "x"}
		default:
			return g.scalar()
		}
	}
	switch g.r.IntN(14) {
	case 0, 1:
		return g.scalar()
	case 2:
		return map[string]any{"prefix": g.pick(genStrings)}
	case 3:
		return map[string]any{"suffix": g.pick(genStrings)}
	case 4:
		op := []string{"prefix", "suffix"}[g.r.IntN(2)]
		return map[string]any{op: map[string]any{"equals-ignore-case": g.pick(genStrings)}}
	case 5:
		return map[string]any{"equals-ignore-case": g.pick(genStrings)}
	case 6:
		return map[string]any{"wildcard": g.pick(genGlobs)}
	case 7:
		return map[string]any{"exists": g.r.IntN(3) > 0}
	case 8:
		return map[string]any{"cidr": g.pick(genCIDRs)}
	case 9:
		lo, hi := json.Number(g.pick(genNumbers)), json.Number(g.pick(genNumbers))
		switch g.r.IntN(3) {
		case 0:
			return map[string]any{"numeric": []any{g.pick([]string{"=", "<", "<=", ">", ">="}), lo}}
		default:
			if refNumber(lo) > refNumber(hi) {
				lo, hi = hi, lo
			}
			return map[string]any{"numeric": []any{g.pick([]string{">", ">="}), lo, g.pick([]string{"<", "<="}), hi}}
		}
	default:
		return map[string]any{"anything-but": g.anythingBut()}
	}
}

func refNumber(n json.Number) float64 {
	f, _ := n.Float64()
	return f
}

func (g gen) anythingBut() any {
	list := func(pool []string) []any {
		var out []any
		for range 1 + g.r.IntN(3) {
			out = append(out, g.pick(pool))
		}
		return out
	}
	nonEmpty := genStrings[1:]
	switch g.r.IntN(8) {
	case 0:
		return g.pick(genStrings)
	case 1:
		return json.Number(g.pick(genNumbers))
	case 2:
		return list(genStrings)
	case 3:
		var out []any
		for _, n := range list(genNumbers) {
			out = append(out, json.Number(n.(string)))
		}
		return out
	case 4:
		return map[string]any{"prefix": list(nonEmpty)}
	case 5:
		return map[string]any{"suffix": g.pick(nonEmpty)}
	case 6:
		return map[string]any{"equals-ignore-case": list(genStrings)}
	default:
		return map[string]any{"wildcard": list(genGlobs)}
	}
}

// pattern makes a pattern object whose keys are not in used (so that no path repeats within a clause).
func (g gen) pattern(depth int, used map[string]bool) map[string]any {
	if g.arrays && used == nil && g.r.IntN(4) > 0 {
		return g.nested(depth)
	}
	obj := map[string]any{}
	taken := func(k string) bool { return used[k] || obj[k] != nil }
	fields := 1 + g.r.IntN(2)
	if g.arrays {
		fields = 2 + g.r.IntN(2)
	}
	for range fields {
		k := g.key()
		if taken(k) {
			continue
		}
		if depth < 3 && (g.r.IntN(3) == 0 || (g.arrays && depth < 2 && g.r.IntN(2) == 0)) {
			obj[k] = g.pattern(depth+1, nil)
			continue
		}
		var alts []any
		for range 1 + g.r.IntN(3) {
			alts = append(alts, g.alternative())
		}
		obj[k] = alts
	}
	if depth < 2 && g.r.IntN(6) == 0 {
		inner := map[string]bool{}
		for k := range obj {
			inner[k] = true
		}
		for k := range used {
			inner[k] = true
		}
		var branches []any
		for range 2 + g.r.IntN(2) {
			if b := g.pattern(depth+1, inner); len(b) > 0 {
				branches = append(branches, b)
			}
		}
		if len(branches) >= 2 {
			obj["$or"] = branches
		}
	}
	if len(obj) == 0 {
		obj[genKeys[0]] = []any{g.alternative()}
		if used[genKeys[0]] {
			delete(obj, genKeys[0])
			obj["z"] = []any{g.alternative()}
		}
	}
	return obj
}

// nested makes a small pattern of several fields below one key, where the event's arrays of objects decide.
func (g gen) nested(depth int) map[string]any {
	obj := map[string]any{}
	keys := g.keys()
	if depth == 0 {
		keys = keys[:1]
	}
	for _, k := range keys {
		if depth < 2 && g.r.IntN(3) == 0 || depth == 0 {
			obj[k] = g.nested(depth + 1)
			continue
		}
		var alts []any
		for range 1 + g.r.IntN(2) {
			alts = append(alts, g.alternative())
		}
		obj[k] = alts
	}
	return obj
}

func mustJSON(t testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDifferential compares the Matcher, Pattern.Match and the reference interpreters on random patterns and
// events (deterministic seed).
func TestDifferential(t *testing.T) {
	t.Parallel()
	differential(t, 3, 40)
}

func differential(t *testing.T, seed uint64, rounds int) {
	r := rand.New(rand.NewPCG(seed, 14))
	const perRound, events = 25, 40
	var compared, matched, brute, invalid, consistency int
	for round := range rounds {
		// Dotted keys are only known to the brute-force reference.
		g := gen{r: r, arrays: round%2 == 1, dots: round%4 >= 2}
		m := NewMatcher()
		var pats [][]byte
		var compiled []*Pattern
		for len(pats) < perRound {
			raw := mustJSON(t, g.pattern(0, nil))
			if repeatsPath(raw) {
				continue // the last occurrence wins in Compile; the references would require both
			}
			p, err := Compile(raw)
			if err != nil {
				invalid++
				continue
			}
			id := fmt.Sprintf("p%02d", len(pats))
			if err := m.Add(id, p); err != nil {
				t.Fatal(err)
			}
			pats, compiled = append(pats, raw), append(compiled, p)
		}
		for range events {
			ev := mustJSON(t, g.object(0))
			got, err := m.Match(ev)
			if err != nil {
				t.Fatalf("Match(%s): %v", ev, err)
			}
			var want []string
			for i, raw := range pats {
				id := fmt.Sprintf("p%02d", i)
				b, ok := refBrute(raw, ev)
				if ok {
					brute++
				}
				var ref bool
				if g.dots {
					if !ok {
						got = slices.DeleteFunc(got, func(s string) bool { return s == id })
						continue
					}
					ref = b
				} else {
					ref = refMatch(raw, ev)
					if ok && b != ref {
						t.Fatalf("round %d: the two references disagree on\npattern %s\nevent   %s\nrecursive %v, brute force %v", round, raw, ev, ref, b)
					}
				}
				if ref {
					want = append(want, id)
				}
				if naiveMatch(raw, ev) != ref {
					consistency++
				}
				single, err := compiled[i].Match(ev)
				if err != nil {
					t.Fatal(err)
				}
				if single != ref {
					t.Errorf("round %d: Pattern.Match = %v, reference %v\npattern %s\nevent   %s", round, single, ref, raw, ev)
				}
				x, err := Explain(compiled[i], ev)
				if err != nil {
					t.Fatal(err)
				}
				if (x == nil) != ref {
					t.Errorf("round %d: Explain = %+v, reference %v\npattern %s\nevent   %s", round, x, ref, raw, ev)
				}
				compared++
			}
			matched += len(want)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d: Matcher.Match = %v, reference %v\nevent %s\npatterns:\n%s", round, got, want, ev, describe(pats, got, want))
			}
		}
	}
	t.Logf("%d comparisons, %d matches, %d also checked by brute force, %d decided by array consistency, %d random patterns rejected",
		compared, matched, brute, consistency, invalid)
	if consistency < compared/200 {
		t.Fatalf("only %d comparisons depend on array consistency: the generator does not exercise it", consistency)
	}
	if matched < compared/50 || matched > compared*49/50 {
		t.Fatalf("%d matches in %d comparisons: the generator does not exercise both outcomes", matched, compared)
	}
	if invalid > compared/10 {
		t.Fatalf("%d random patterns were invalid: the generator is off", invalid)
	}
}

func describe(pats [][]byte, got, want []string) string {
	var b strings.Builder
	for i, p := range pats {
		id := fmt.Sprintf("p%02d", i)
		if slices.Contains(got, id) != slices.Contains(want, id) {
			fmt.Fprintf(&b, "  %s %s  (matcher %v, reference %v)\n", id, p, slices.Contains(got, id), slices.Contains(want, id))
		}
	}
	return b.String()
}

// naiveMatch checks every field on its own, ignoring arrays: where it differs from the reference, array
// consistency decided (used to show that the random cases exercise it).
func naiveMatch(pattern, event []byte) bool {
	var leaves []refLeaf
	arrays := 0
	refFlatten(refDecode(event), "", nil, &arrays, &leaves)
	for _, cl := range refExpand(refDecode(pattern).(map[string]any), nil) {
		ok := true
		for _, c := range cl {
			p := strings.Join(c.path, ".")
			kind := kindOf(c.alts)
			has, sat := false, false
			for _, l := range leaves {
				if l.path == p {
					has = true
					sat = sat || (kind != refAbsent && refAccepts(c.alts, l.value))
				}
			}
			switch kind {
			case refPositive:
				ok = ok && sat
			case refAbsent:
				ok = ok && !has
			default:
				ok = ok && (sat || !has)
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// repeatsPath: a clause of the pattern names a path twice, through dotted keys ({"a.b": ..., "a": {"b": ...}}).
func repeatsPath(pattern []byte) bool {
	for _, cl := range refExpand(refDecode(pattern).(map[string]any), nil) {
		seen := map[string]bool{}
		for _, c := range cl {
			p := strings.Join(c.path, ".")
			if seen[p] {
				return true
			}
			seen[p] = true
		}
	}
	return false
}

// TestMatcherAtScale checks the Matcher's index against Pattern.Match with thousands of patterns, so that the
// index's large structures (dense trie nodes, long anything-but lists and their complements, the numeric
// segment tree) are used.
func TestMatcherAtScale(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 7))
	const alphabet = "abcxyzABCXYZ-./0123456789é"
	word := func() string {
		b := make([]rune, r.IntN(5))
		runes := []rune(alphabet)
		for i := range b {
			b[i] = runes[r.IntN(len(runes))]
		}
		return string(b)
	}
	number := func() json.Number { return json.Number(fmt.Sprint(r.IntN(200) - 50)) }
	words := func() []any {
		var out []any
		for range 1 + r.IntN(3) {
			out = append(out, word())
		}
		return out
	}
	nonEmpty := func() string {
		for {
			if w := word(); w != "" {
				return w
			}
		}
	}
	alternative := func() any {
		switch r.IntN(12) {
		case 0:
			return word()
		case 1:
			return number()
		case 2:
			return map[string]any{"prefix": word()}
		case 3:
			return map[string]any{"suffix": word()}
		case 4:
			return map[string]any{"prefix": map[string]any{"equals-ignore-case": word()}}
		case 5:
			return map[string]any{"suffix": map[string]any{"equals-ignore-case": word()}}
		case 6:
			return map[string]any{"equals-ignore-case": word()}
		case 7:
			lo := r.IntN(200) - 50
			return map[string]any{"numeric": []any{">=", lo, "<", lo + 1 + r.IntN(60)}}
		case 8:
			return map[string]any{"anything-but": words()}
		case 9:
			return map[string]any{"anything-but": map[string]any{"prefix": nonEmpty()}}
		case 10:
			return map[string]any{"wildcard": word() + "*" + word()}
		default:
			return map[string]any{"anything-but": []any{"common", word()}}
		}
	}
	m := NewMatcher()
	var pats []*Pattern
	for i := range 1500 {
		obj := map[string]any{}
		for range 1 + r.IntN(2) {
			obj[genKeys[r.IntN(len(genKeys))]] = []any{alternative()}
		}
		p, err := Compile(mustJSON(t, obj))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Add(fmt.Sprintf("p%04d", i), p); err != nil {
			t.Fatal(err)
		}
		pats = append(pats, p)
	}
	total := 0
	for range 100 {
		ev := map[string]any{}
		for _, k := range genKeys {
			switch r.IntN(4) {
			case 0:
				ev[k] = word()
			case 1:
				ev[k] = number()
			case 2:
				ev[k] = "common"
			}
		}
		raw := mustJSON(t, ev)
		got, err := m.Match(raw)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i, p := range pats {
			if ok, _ := p.Match(raw); ok {
				want = append(want, fmt.Sprintf("p%04d", i))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("event %s: Matcher.Match = %v, Pattern.Match gives %v", raw, got, want)
		}
		total += len(want)
	}
	if total < 100 {
		t.Fatalf("only %d matches: the test does not exercise the index", total)
	}
	t.Logf("%d matches", total)
}
