package pattern

import (
	"bytes"
	"errors"
	"net/netip"
	"slices"
	"strings"
)

// condition is what a clause requires of one path: a leaf there that satisfies one of the alternatives, or, for
// exists:false alternatives, no leaf there.
type condition struct {
	path     string
	alts     []alt
	kind     condKind
	expected []byte // the pattern's array of alternatives, as JSON, for Explain
}

type condKind uint8

const (
	condPositive condKind = iota // needs a leaf that satisfies an alternative
	condAbsent                   // only exists:false: needs no leaf
	condMixed                    // exists:false or an alternative: needs either
)

func (c *condition) classify() {
	var pos, abs bool
	for _, a := range c.alts {
		if a.kind == altAbsent {
			abs = true
		} else {
			pos = true
		}
	}
	switch {
	case abs && pos:
		c.kind = condMixed
	case abs:
		c.kind = condAbsent
	default:
		c.kind = condPositive
	}
}

// matches reports whether one of the positive alternatives accepts the leaf.
func (c *condition) matches(l *leaf) bool {
	for i := range c.alts {
		if c.alts[i].match(l) {
			return true
		}
	}
	return false
}

type altKind uint8

const (
	altString altKind = iota
	altNumber
	altTrue
	altFalse
	altNull
	altExists
	altAbsent
	altPrefix
	altPrefixFold
	altSuffix
	altSuffixFold
	altFold
	altWildcard
	altNumeric
	altCIDR
	altAnythingBut
)

// alt is one alternative of a condition. The ignore-case kinds keep their operand in cs and its case key in s.
// An exact number has its double in n and, from exactFrom on, its exact decimal value (decimalKey) in s.
type alt struct {
	kind altKind
	s    string
	n    float64
	rng  numRange
	cidr netip.Prefix
	wc   *wildcard
	ab   *anythingBut
	cs   *caseSeq
}

// match reports whether the leaf satisfies the alternative; exists:false never does (it is about absence).
func (a *alt) match(l *leaf) bool {
	switch a.kind {
	case altString:
		return l.kind == lString && string(l.str) == a.s
	case altNumber:
		return l.kind == lNumber && l.num == a.n && (a.s == "" || decimalKey(string(l.str)) == a.s)
	case altTrue:
		return l.kind == lTrue
	case altFalse:
		return l.kind == lFalse
	case altNull:
		return l.kind == lNull
	case altExists:
		return true
	case altAbsent:
		return false
	case altPrefix:
		return l.kind == lString && hasPrefix(l.str, a.s)
	case altSuffix:
		return l.kind == lString && hasSuffix(l.str, a.s)
	case altPrefixFold:
		return l.kind == lString && a.cs.prefixOf(l.str)
	case altSuffixFold:
		return l.kind == lString && a.cs.suffixOf(l.str)
	case altFold:
		return l.kind == lString && a.cs.equal(l.str)
	case altWildcard:
		return l.kind == lString && a.wc.match(l.str)
	case altNumeric:
		return l.kind == lNumber && a.rng.contains(l.num)
	case altCIDR:
		if l.kind != lString {
			return false
		}
		ip, ok := parseIP(l.str)
		return ok && a.cidr.Contains(ip)
	case altAnythingBut:
		return !a.ab.excludes(l)
	}
	return false
}

func hasPrefix(v []byte, p string) bool { return len(v) >= len(p) && string(v[:len(p)]) == p }
func hasSuffix(v []byte, s string) bool { return len(v) >= len(s) && string(v[len(v)-len(s):]) == s }

// anythingBut matches every leaf that none of its operands excludes. Strings exclude strings, numbers numbers
// (exactly from exactFrom on).
type anythingBut struct {
	strs      []string
	nums      []numKey
	prefixes  []string
	suffixes  []string
	folds     []*caseSeq
	wildcards []*wildcard
}

func (ab *anythingBut) excludes(l *leaf) bool {
	switch l.kind {
	case lNumber:
		k := l.numberKey()
		for _, n := range ab.nums {
			if k == n {
				return true
			}
		}
	case lString:
		for _, s := range ab.strs {
			if string(l.str) == s {
				return true
			}
		}
		for _, p := range ab.prefixes {
			if hasPrefix(l.str, p) {
				return true
			}
		}
		for _, s := range ab.suffixes {
			if hasSuffix(l.str, s) {
				return true
			}
		}
		for _, f := range ab.folds {
			if f.equal(l.str) {
				return true
			}
		}
		for _, w := range ab.wildcards {
			if w.match(l.str) {
				return true
			}
		}
	}
	return false
}

// numRange is an interval of numbers; an infinite end is unbounded.
type numRange struct {
	lo, hi         float64
	loOpen, hiOpen bool
}

func (r numRange) contains(x float64) bool {
	return (x > r.lo || (!r.loOpen && x == r.lo)) && (x < r.hi || (!r.hiOpen && x == r.hi))
}

// parseCIDR accepts a network ("10.0.0.0/24", "2001:db8::/32") or a single address, without a zone.
func parseCIDR(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	if a.Zone() != "" {
		return netip.Prefix{}, errors.New("zones are not supported")
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// parseIP reads an event's address; addresses with a zone never match.
func parseIP(b []byte) (netip.Addr, bool) {
	a, err := netip.ParseAddr(string(b))
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a, true
}

// wildcard is a pattern of literal pieces separated by *. It matches in linear time: the first piece is a prefix,
// the last a suffix and the others are found left to right, each at its leftmost place, which is all a * needs.
type wildcard struct {
	raw    string
	pieces [][]byte
}

func parseWildcard(s string) (*wildcard, error) {
	w := &wildcard{raw: s}
	var cur []byte
	star := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 >= len(s) || (s[i+1] != '*' && s[i+1] != '\\') {
				return nil, errors.New(`escapes only * and \ with \`)
			}
			i++
			cur = append(cur, s[i])
			star = false
		case '*':
			if star {
				return nil, errors.New("must not have consecutive * characters")
			}
			w.pieces = append(w.pieces, cur)
			cur = nil
			star = true
		default:
			cur = append(cur, c)
			star = false
		}
	}
	w.pieces = append(w.pieces, cur)
	return w, nil
}

func (w *wildcard) match(v []byte) bool {
	n := len(w.pieces)
	if n == 1 {
		return bytes.Equal(v, w.pieces[0])
	}
	first, last := w.pieces[0], w.pieces[n-1]
	if len(v) < len(first)+len(last) || !bytes.HasPrefix(v, first) || !bytes.HasSuffix(v, last) {
		return false
	}
	mid := v[len(first) : len(v)-len(last)]
	for _, p := range w.pieces[1 : n-1] {
		i := bytes.Index(mid, p)
		if i < 0 {
			return false
		}
		mid = mid[i+len(p):]
	}
	return true
}

// literalPrefix is the part before the first *.
func (w *wildcard) literalPrefix() []byte { return w.pieces[0] }

// complexity is the largest number of positions of the wildcard's automaton (one per literal byte and per *)
// that can be active together after some input, as Amazon EventBridge measures wildcard rules; it stops counting
// above limit. The sets of positions that some input reaches are explored breadth first from the first *; from a
// set, only the bytes its literal positions expect (and one byte that none expects) lead anywhere new.
func (w *wildcard) complexity(limit int) int {
	if len(w.pieces) == 1 {
		return 1
	}
	const star, other = -1, -2
	var toks []int
	for i, p := range w.pieces {
		if i > 0 {
			toks = append(toks, star)
		}
		for _, c := range p {
			toks = append(toks, int(c))
		}
	}
	// closure adds the position after every active *, which may match nothing; sets stay sorted.
	closure := func(set []int) []int {
		out := set[:0:0]
		for k, i := range set {
			if k > 0 && set[k-1] == i {
				continue
			}
			out = append(out, i)
			for i < len(toks) && toks[i] == star {
				i++
				out = append(out, i)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	key := func(set []int) string {
		b := make([]byte, 0, len(set)*3)
		for _, i := range set {
			b = append(b, byte(i), byte(i>>8), byte(i>>16))
		}
		return string(b)
	}
	start := closure([]int{len(w.pieces[0])})
	queue := [][]int{start}
	seen := map[string]bool{key(start): true}
	most := len(start)
	const maxSets = 100000
	for len(queue) > 0 && most <= limit {
		set := queue[0]
		queue = queue[1:]
		inputs := []int{other}
		for _, i := range set {
			if i < len(toks) && toks[i] != star && !slices.Contains(inputs, toks[i]) {
				inputs = append(inputs, toks[i])
			}
		}
		for _, c := range inputs {
			var next []int
			for _, i := range set {
				if i >= len(toks) {
					continue
				}
				if toks[i] == star {
					next = append(next, i)
				} else if toks[i] == c {
					next = append(next, i+1)
				}
			}
			slices.Sort(next)
			next = closure(next)
			most = max(most, len(next))
			if k := key(next); !seen[k] {
				if len(seen) >= maxSets {
					return limit + 1
				}
				seen[k] = true
				queue = append(queue, next)
			}
		}
	}
	return most
}
