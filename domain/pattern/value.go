package pattern

import (
	"bytes"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
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

// alt is one alternative of a condition. Operands of the ignore-case kinds are stored folded (foldString). An
// exact number has its double in n and, from exactFrom on, its exact decimal value (decimalKey) in s.
type alt struct {
	kind altKind
	s    string
	n    float64
	rng  numRange
	cidr netip.Prefix
	wc   *wildcard
	ab   *anythingBut
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
		return l.kind == lString && foldHasPrefix(l.str, a.s)
	case altSuffixFold:
		return l.kind == lString && foldHasSuffix(l.str, a.s)
	case altFold:
		return l.kind == lString && foldEqual(l.str, a.s)
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
	folds     []string // folded
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
			if foldEqual(l.str, f) {
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

// foldRune maps every rune of a Unicode simple-folding orbit to the orbit's smallest member, so that
// strings.EqualFold(a, b) holds exactly when the folded forms are equal.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < m {
			m = f
		}
	}
	return m
}

func appendFold(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		dst = utf8.AppendRune(dst, foldRune(r))
		i += n
	}
	return dst
}

func foldString(s string) string { return string(appendFold(nil, []byte(s))) }

// foldEqual compares v, folded rune by rune, with an already folded f.
func foldEqual(v []byte, f string) bool {
	i, j := 0, 0
	for i < len(v) {
		r, n := utf8.DecodeRune(v[i:])
		i += n
		fr, fn := utf8.DecodeRuneInString(f[j:])
		if j >= len(f) || foldRune(r) != fr {
			return false
		}
		j += fn
	}
	return j == len(f)
}

func foldHasPrefix(v []byte, f string) bool {
	i, j := 0, 0
	for j < len(f) {
		if i >= len(v) {
			return false
		}
		r, n := utf8.DecodeRune(v[i:])
		fr, fn := utf8.DecodeRuneInString(f[j:])
		if foldRune(r) != fr {
			return false
		}
		i, j = i+n, j+fn
	}
	return true
}

func foldHasSuffix(v []byte, f string) bool {
	i, j := len(v), len(f)
	for j > 0 {
		if i <= 0 {
			return false
		}
		r, n := utf8.DecodeLastRune(v[:i])
		fr, fn := utf8.DecodeLastRuneInString(f[:j])
		if foldRune(r) != fr {
			return false
		}
		i, j = i-n, j-fn
	}
	return true
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
