package pattern

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// caseSeq is the operand of equals-ignore-case (alone, in prefix and suffix, or in anything-but) as Amazon's
// event-ruler reads it: each character of the operand stands for itself, its lower-case form or its upper-case
// form, with Unicode's full mappings in no particular language. So "ß" matches "ß" and "SS" (but not "ss", whose
// characters are not cases of "ß"), "ﬃ" matches "FFI", the Kelvin sign "K" matches "k", "ſ" matches "S", "ı"
// matches "I" and "İ" matches "i̇" (i and a combining dot); "SS" matches no "ß". The relation is therefore not
// symmetric, and matching compares the event's value with the operand's forms rather than folding both sides.
type caseSeq struct {
	units []caseUnit
	// key is the case key of the operand, which every value the operand matches has too (see appendCaseKey).
	key string
}

// caseUnit is a run of characters that match in the ASCII sense (ASCII letters in either case, other characters
// without case for themselves; stored with ASCII letters in lower case), or, when forms is not nil, one character
// with case beyond ASCII and its forms.
type caseUnit struct {
	run   string
	forms []string
}

// newCaseSeq reads an equals-ignore-case operand.
func newCaseSeq(s string) *caseSeq {
	q := &caseSeq{key: string(appendCaseKey(nil, []byte(s)))}
	var lower, upper cases.Caser // made for the first character that needs them; a Caser is not safe to share
	casers := false
	var run []byte
	for _, r := range s {
		if r < utf8.RuneSelf {
			run = append(run, byte(unicode.ToLower(r)))
			continue
		}
		if !casers {
			lower, upper, casers = cases.Lower(language.Und), cases.Upper(language.Und), true
		}
		self := string(r)
		lo, up := lower.String(self), upper.String(self)
		if lo == self && up == self {
			run = append(run, self...)
			continue
		}
		if len(run) > 0 {
			q.units = append(q.units, caseUnit{run: string(run)})
			run = run[:0]
		}
		// The character itself is a form too, which event-ruler leaves out: a title-case letter such as "ǅ" has
		// other lower- and upper-case forms ("ǆ", "Ǆ") and should still match itself.
		forms := []string{self}
		for _, f := range []string{lo, up} {
			if !slices.Contains(forms, f) {
				forms = append(forms, f)
			}
		}
		q.units = append(q.units, caseUnit{forms: forms})
	}
	if len(run) > 0 {
		q.units = append(q.units, caseUnit{run: string(run)})
	}
	return q
}

// runAt reports whether v holds the run r at offset p, ASCII letters in either case.
func runAt(v []byte, p int, r string) bool {
	if len(v)-p < len(r) {
		return false
	}
	for i := 0; i < len(r); i++ {
		c := v[p+i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != r[i] {
			return false
		}
	}
	return true
}

// equal reports whether the whole of v is the operand in some choice of its characters' forms.
func (q *caseSeq) equal(v []byte) bool {
	if len(q.units) == 1 && q.units[0].forms == nil {
		return len(v) == len(q.units[0].run) && runAt(v, 0, q.units[0].run)
	}
	return q.forward(v, true)
}

// prefixOf reports whether v starts with the operand in some choice of its characters' forms.
func (q *caseSeq) prefixOf(v []byte) bool {
	return q.forward(v, false)
}

// forward follows the units from the start of v, keeping every offset that a choice of forms reaches (the forms
// of one character may differ in length, so several can be).
func (q *caseSeq) forward(v []byte, whole bool) bool {
	var b0, b1 [4]int
	cur, next := append(b0[:0], 0), b1[:0]
	for _, u := range q.units {
		next = next[:0]
		for _, p := range cur {
			if u.forms == nil {
				if runAt(v, p, u.run) {
					next = addOffset(next, p+len(u.run))
				}
				continue
			}
			for _, f := range u.forms {
				if len(v)-p >= len(f) && string(v[p:p+len(f)]) == f {
					next = addOffset(next, p+len(f))
				}
			}
		}
		if len(next) == 0 {
			return false
		}
		cur, next = next, cur
	}
	return !whole || slices.Contains(cur, len(v))
}

// suffixOf reports whether v ends with the operand in some choice of its characters' forms.
func (q *caseSeq) suffixOf(v []byte) bool {
	var b0, b1 [4]int
	cur, next := append(b0[:0], len(v)), b1[:0]
	for i := len(q.units) - 1; i >= 0; i-- {
		u := &q.units[i]
		next = next[:0]
		for _, p := range cur {
			if u.forms == nil {
				if p >= len(u.run) && runAt(v, p-len(u.run), u.run) {
					next = addOffset(next, p-len(u.run))
				}
				continue
			}
			for _, f := range u.forms {
				if p >= len(f) && string(v[p-len(f):p]) == f {
					next = addOffset(next, p-len(f))
				}
			}
		}
		if len(next) == 0 {
			return false
		}
		cur, next = next, cur
	}
	return true
}

func addOffset(set []int, i int) []int {
	if slices.Contains(set, i) {
		return set
	}
	return append(set, i)
}

// appendCaseKey appends the case key of s: each character replaced by a canonical string, the same for the
// character and each of its lower- and upper-case forms (so "ß", "ẞ", "SS" and "ss" all give "SS"). When an
// operand matches a value, both have the same key, which the matcher's index looks up; a value with the operand's
// key is only a candidate, checked with caseSeq. Keys are made character by character, so the key of a prefix of
// a value is a prefix of the value's key.
func appendCaseKey(dst, s []byte) []byte {
	var special map[rune]string
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
		i += n
		if special == nil {
			special = caseKeys()
		}
		if k, ok := special[r]; ok {
			dst = append(dst, k...)
			continue
		}
		dst = utf8.AppendRune(dst, orbitMin(r))
	}
	return dst
}

// orbitMin maps every rune of a Unicode simple case-folding orbit ("k", "K" and the Kelvin sign) to the orbit's
// smallest member.
func orbitMin(r rune) rune {
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < m {
			m = f
		}
	}
	return m
}

// caseKeys holds the runes whose key is not orbitMin: those whose full case folding is several characters ("ß"
// folds to "ss") or leaves their simple orbit, and the few ("ı", whose upper case is "I") whose forms would
// otherwise get another key. It is computed once, from Unicode's tables, over the runes that have a case.
var caseKeys = sync.OnceValue(func() map[rune]string {
	fold := cases.Fold()
	lower, upper := cases.Lower(language.Und), cases.Upper(language.Und)
	keys := map[rune]string{}
	key := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			if k, ok := keys[r]; ok {
				b.WriteString(k)
			} else {
				b.WriteRune(orbitMin(r))
			}
		}
		return b.String()
	}
	type cased struct {
		r     rune
		forms [2]string
	}
	var all []cased
	forEachCased(func(r rune) {
		s := string(r)
		if f := fold.String(s); f != s {
			if fr, n := utf8.DecodeRuneInString(f); n != len(f) || orbitMin(fr) != orbitMin(r) {
				keys[r] = key(f)
			}
		}
		if lo, up := lower.String(s), upper.String(s); lo != s || up != s {
			all = append(all, cased{r, [2]string{lo, up}})
		}
	})
	// Give a rune the key of its forms where they differ, until nothing changes (with Unicode 15 one pass does:
	// "ı" takes the key of "I").
	for range 8 {
		changed := false
		for _, c := range all {
			k := key(string(c.r))
			for _, f := range c.forms {
				if fk := key(f); fk != k {
					keys[c.r], k, changed = fk, fk, true
				}
			}
		}
		if !changed {
			break
		}
	}
	return keys
})

// forEachCased calls f for every rune that has the Unicode property Cased, the only runes with case mappings.
func forEachCased(f func(rune)) {
	seen := map[rune]bool{}
	for _, t := range []*unicode.RangeTable{unicode.Upper, unicode.Lower, unicode.Title, unicode.Other_Lowercase,
		unicode.Other_Uppercase} {
		for _, r16 := range t.R16 {
			for r := rune(r16.Lo); r <= rune(r16.Hi); r += rune(r16.Stride) {
				if !seen[r] {
					seen[r] = true
					f(r)
				}
			}
		}
		for _, r32 := range t.R32 {
			for r := rune(r32.Lo); r <= rune(r32.Hi); r += rune(r32.Stride) {
				if !seen[r] {
					seen[r] = true
					f(r)
				}
			}
		}
	}
}
