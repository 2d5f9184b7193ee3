package pattern

import (
	"testing"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// TestCaseKeysCoverForms checks, for every rune with a case, what the matcher's index relies on: the rune and its
// lower- and upper-case forms have one case key, and the rune's operand matches each form.
func TestCaseKeysCoverForms(t *testing.T) {
	t.Parallel()
	lower, upper := cases.Lower(language.Und), cases.Upper(language.Und)
	n := 0
	forEachCased(func(r rune) {
		n++
		s := string(r)
		q := newCaseSeq(s)
		for _, f := range []string{s, lower.String(s), upper.String(s)} {
			if k := string(appendCaseKey(nil, []byte(f))); k != q.key {
				t.Errorf("%U %q: form %q has key %q, the rune %q", r, s, f, k, q.key)
			}
			if !q.equal([]byte(f)) || !q.prefixOf([]byte(f+"x")) || !q.suffixOf([]byte("x"+f)) {
				t.Errorf("%U %q does not match its form %q", r, s, f)
			}
		}
	})
	if n < 4000 {
		t.Fatalf("only %d runes with a case", n)
	}
}
