package pattern

// A reference interpreter, written apart from the package's code and kept simple rather than fast: it works on
// the pattern and the event as encoding/json decodes them. It knows no dotted keys (the random tests use none).
//
// The specification it follows, for one clause (a combination of the $or branches):
//   - the clause's fields form a tree (refNode) that follows the nesting of the event;
//   - at an array of the event, either one element is used, and every field below the array looks inside that
//     element only, or no element is used, and then no field below may need a value (exists:false fields look at
//     the whole array); an element is only used when a field below takes a value from it; a scalar directly in the
//     array is in no element and goes with every choice (refSat need not model it: without dotted keys no field
//     has fields below it, so only that field's own values lie in the array);
//   - a field matches a scalar that one of its alternatives accepts; exists:false holds where there is no scalar.
// refBrute checks the same definition on the flattened leaves by trying every choice.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

type refNode struct {
	children map[string]*refNode
	alts     []any // the field's alternatives at this exact path; nil when none
}

type refCond struct {
	path []string
	alts []any
}

// refDecode decodes JSON as the reference sees it.
func refDecode(b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		panic(err)
	}
	return v
}

// refExpand lists the clauses of a pattern object: the conditions of every combination of $or branches.
func refExpand(obj map[string]any, prefix []string) [][]refCond {
	clauses := [][]refCond{nil}
	for k, v := range obj {
		var sub [][]refCond
		switch v := v.(type) {
		case []any:
			if k == "$or" {
				for _, b := range v {
					sub = append(sub, refExpand(b.(map[string]any), prefix)...)
				}
			} else {
				sub = [][]refCond{{{path: append(append([]string{}, prefix...), k), alts: v}}}
			}
		case map[string]any:
			sub = refExpand(v, append(append([]string{}, prefix...), k))
		}
		var next [][]refCond
		for _, c := range clauses {
			for _, s := range sub {
				next = append(next, append(append([]refCond{}, c...), s...))
			}
		}
		clauses = next
	}
	return clauses
}

func refTree(conds []refCond) *refNode {
	root := &refNode{}
	for _, c := range conds {
		n := root
		for _, k := range c.path {
			if n.children == nil {
				n.children = map[string]*refNode{}
			}
			if n.children[k] == nil {
				n.children[k] = &refNode{}
			}
			n = n.children[k]
		}
		n.alts = c.alts
	}
	return root
}

// refMatch is the reference's answer for a pattern and an event.
func refMatch(pattern, event []byte) bool {
	ev := refDecode(event)
	for _, cl := range refExpand(refDecode(pattern).(map[string]any), nil) {
		if ok, _ := refSat(refTree(cl), ev, true); ok {
			return true
		}
	}
	return false
}

type refKind int

const (
	refPositive refKind = iota
	refAbsent
	refMixed
)

func kindOf(alts []any) refKind {
	abs, pos := false, false
	for _, a := range alts {
		if m, ok := a.(map[string]any); ok && m["exists"] == false {
			abs = true
		} else {
			pos = true
		}
	}
	switch {
	case abs && pos:
		return refMixed
	case abs:
		return refAbsent
	}
	return refPositive
}

func isScalar(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return false
	}
	return true
}

// refSat tells whether the fields at and below n can hold for the value v found at n's place (present is false
// when there is none), and whether they take a value from v.
func refSat(n *refNode, v any, present bool) (sat, pos bool) {
	if arr, ok := v.([]any); ok && present {
		for _, e := range arr {
			if s, p := refSat(n, e, true); s && p {
				return true, true
			}
		}
		return !refNeedsValue(n) && !refHasValueFor(n, v), false
	}
	if n.alts != nil {
		scalar := present && isScalar(v)
		kind := kindOf(n.alts)
		switch {
		case scalar && kind != refAbsent && refAccepts(n.alts, v):
			pos = true
		case scalar || kind == refPositive:
			return false, false
		}
	}
	obj, _ := v.(map[string]any)
	for k, c := range n.children {
		cv, ok := obj[k]
		s, p := refSat(c, cv, ok && present)
		if !s {
			return false, false
		}
		pos = pos || p
	}
	return true, pos
}

// refNeedsValue: a field at or below n has no exists:false alternative.
func refNeedsValue(n *refNode) bool {
	if n.alts != nil && kindOf(n.alts) == refPositive {
		return true
	}
	for _, c := range n.children {
		if refNeedsValue(c) {
			return true
		}
	}
	return false
}

// refHasValueFor: v holds a scalar at the place of a field at or below n.
func refHasValueFor(n *refNode, v any) bool {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			if refHasValueFor(n, e) {
				return true
			}
		}
		return false
	case map[string]any:
		for k, c := range n.children {
			if cv, ok := v[k]; ok && refHasValueFor(c, cv) {
				return true
			}
		}
		return false
	default:
		return n.alts != nil
	}
}

func refAccepts(alts []any, v any) bool {
	for _, a := range alts {
		if refAlt(a, v) {
			return true
		}
	}
	return false
}

func refNum(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil || math.IsInf(f, 0)
}

func refAlt(a, v any) bool {
	s, isStr := v.(string)
	switch a := a.(type) {
	case string:
		return isStr && s == a
	case json.Number:
		x, ok1 := refNum(a)
		y, ok2 := refNum(v)
		if !ok1 || !ok2 || x != y {
			return false
		}
		if math.Abs(x) < 1<<53 {
			return true
		}
		// Beyond 2^53 an exact value is compared exactly.
		p, ok1 := new(big.Rat).SetString(string(a))
		q, ok2 := new(big.Rat).SetString(string(v.(json.Number)))
		return ok1 && ok2 && p.Cmp(q) == 0
	case bool:
		b, ok := v.(bool)
		return ok && b == a
	case nil:
		return v == nil
	}
	op := a.(map[string]any)
	for name, arg := range op {
		switch name {
		case "exists":
			return arg == true
		case "prefix", "suffix":
			if !isStr {
				return false
			}
			if p, ok := arg.(string); ok {
				if name == "prefix" {
					return strings.HasPrefix(s, p)
				}
				return strings.HasSuffix(s, p)
			}
			return refIgnoreCase(arg.(map[string]any)["equals-ignore-case"].(string), s, name)
		case "equals-ignore-case":
			return isStr && refIgnoreCase(arg.(string), s, "")
		case "wildcard":
			return isStr && refGlob(arg.(string), s)
		case "numeric":
			x, ok := refNum(v)
			if !ok {
				return false
			}
			terms := arg.([]any)
			for i := 0; i < len(terms); i += 2 {
				y, _ := refNum(terms[i+1])
				var hold bool
				switch terms[i].(string) {
				case "=":
					hold = x == y
				case "<":
					hold = x < y
				case "<=":
					hold = x <= y
				case ">":
					hold = x > y
				case ">=":
					hold = x >= y
				}
				if !hold {
					return false
				}
			}
			return true
		case "cidr":
			ip, err := netip.ParseAddr(s)
			if !isStr || err != nil || ip.Zone() != "" {
				return false
			}
			c := arg.(string)
			if !strings.Contains(c, "/") {
				want, _ := netip.ParseAddr(c)
				return ip == want
			}
			p, _ := netip.ParsePrefix(c)
			return p.Masked().Contains(ip)
		case "anything-but":
			return !refExcluded(arg, v)
		}
	}
	panic("unknown operator")
}

func refExcluded(arg, v any) bool {
	s, isStr := v.(string)
	switch arg := arg.(type) {
	case string, json.Number:
		return refAlt(arg, v)
	case []any:
		for _, a := range arg {
			if refAlt(a, v) {
				return true
			}
		}
		return false
	case map[string]any:
		for name, sub := range arg {
			list, ok := sub.([]any)
			if !ok {
				list = []any{sub}
			}
			for _, x := range list {
				x := x.(string)
				switch {
				case !isStr:
				case name == "prefix" && strings.HasPrefix(s, x),
					name == "suffix" && strings.HasSuffix(s, x),
					name == "equals-ignore-case" && refIgnoreCase(x, s, ""),
					name == "wildcard" && refGlob(x, s):
					return true
				}
			}
		}
	}
	return false
}

// refIgnoreCase matches an equals-ignore-case operand (in a prefix or suffix when at says so) as event-ruler's
// EqualsIgnoreCaseParser builds it: each character of the operand stands for itself, its lower case or its upper
// case, with full mappings ("ß" for "ß" or "SS"). It builds a regular expression of those alternatives.
func refIgnoreCase(operand, s, at string) bool {
	type key struct{ operand, at string }
	if re, ok := refIgnoreCaseCache.Load(key{operand, at}); ok {
		return re.(*regexp.Regexp).MatchString(s)
	}
	var b strings.Builder
	if at != "suffix" {
		b.WriteString("^")
	}
	for _, r := range operand {
		c := string(r)
		lower, upper := cases.Lower(language.Und).String(c), cases.Upper(language.Und).String(c)
		fmt.Fprintf(&b, "(?:%s|%s|%s)", regexp.QuoteMeta(c), regexp.QuoteMeta(lower), regexp.QuoteMeta(upper))
	}
	if at != "prefix" {
		b.WriteString("$")
	}
	re := regexp.MustCompile(b.String())
	refIgnoreCaseCache.Store(key{operand, at}, re)
	return re.MatchString(s)
}

var refIgnoreCaseCache sync.Map // of *regexp.Regexp

// refGlob matches a wildcard by dynamic programming over (pattern position, text position).
func refGlob(pattern, text string) bool {
	type tok struct {
		star bool
		c    byte
	}
	var toks []tok
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
			toks = append(toks, tok{c: pattern[i]})
		case '*':
			toks = append(toks, tok{star: true})
		default:
			toks = append(toks, tok{c: pattern[i]})
		}
	}
	// ok[j] after reading i bytes: the first j tokens can match text[:i].
	ok := make([]bool, len(toks)+1)
	ok[0] = true
	for j := 1; j <= len(toks) && toks[j-1].star; j++ {
		ok[j] = true
	}
	for i := 0; i < len(text); i++ {
		next := make([]bool, len(toks)+1)
		for j := 1; j <= len(toks); j++ {
			t := toks[j-1]
			if t.star {
				next[j] = next[j-1] || ok[j]
			} else {
				next[j] = ok[j-1] && t.c == text[i]
			}
		}
		ok = next
	}
	return ok[len(toks)]
}

// refLeaf is a scalar of the event with the array elements it lies in.
type refLeaf struct {
	path  string
	value any
	trail map[int]int // array number → element
}

func refFlatten(v any, path string, trail map[int]int, arrays *int, out *[]refLeaf) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			refFlatten(c, p, trail, arrays, out)
		}
	case []any:
		id := *arrays
		*arrays++
		for i, e := range v {
			if isScalar(e) {
				// A scalar element is in no element of the array: it combines with every element.
				refFlatten(e, path, trail, arrays, out)
				continue
			}
			t := map[int]int{id: i}
			for a, j := range trail {
				t[a] = j
			}
			refFlatten(e, path, t, arrays, out)
		}
	default:
		*out = append(*out, refLeaf{path: path, value: v, trail: trail})
	}
}

func refConsistent(a, b refLeaf) bool {
	for arr, i := range a.trail {
		if j, ok := b.trail[arr]; ok && i != j {
			return false
		}
	}
	return true
}

// refBrute checks the definition directly: some choice of one accepted leaf per field that needs one (or none,
// for a field that allows absence), pairwise consistent, such that no leaf at a field taken as absent is
// consistent with every chosen leaf. ok is false when there are too many choices to try.
func refBrute(pattern, event []byte) (match, ok bool) {
	var leaves []refLeaf
	arrays := 0
	refFlatten(refDecode(event), "", nil, &arrays, &leaves)
	for _, cl := range refExpand(refDecode(pattern).(map[string]any), nil) {
		// options[i]: the leaves condition i may take; -1 stands for "absent".
		options := make([][]int, len(cl))
		total := 1
		for i, c := range cl {
			p := strings.Join(c.path, ".")
			kind := kindOf(c.alts)
			if kind != refPositive {
				options[i] = append(options[i], -1)
			}
			if kind != refAbsent {
				for li, l := range leaves {
					if l.path == p && refAccepts(c.alts, l.value) {
						options[i] = append(options[i], li)
					}
				}
			}
			total *= len(options[i])
		}
		if total > 200000 {
			return false, false
		}
		pick := make([]int, len(cl))
		for total > 0 {
			if refBruteHolds(cl, options, pick, leaves) {
				return true, true
			}
			i := 0
			for ; i < len(pick); i++ {
				if pick[i]++; pick[i] < len(options[i]) {
					break
				}
				pick[i] = 0
			}
			if i == len(pick) {
				break
			}
		}
	}
	return false, true
}

func refBruteHolds(cl []refCond, options [][]int, pick []int, leaves []refLeaf) bool {
	var chosen []refLeaf
	for i := range cl {
		if li := options[i][pick[i]]; li >= 0 {
			chosen = append(chosen, leaves[li])
		}
	}
	for i := range chosen {
		for j := range chosen {
			if !refConsistent(chosen[i], chosen[j]) {
				return false
			}
		}
	}
	for i, c := range cl {
		if options[i][pick[i]] >= 0 {
			continue
		}
		p := strings.Join(c.path, ".")
	leaves:
		for _, l := range leaves {
			if l.path != p {
				continue
			}
			for _, ch := range chosen {
				if !refConsistent(l, ch) {
					continue leaves
				}
			}
			return false
		}
	}
	return true
}
