// Package pattern compiles Amazon-EventBridge-style event patterns and matches them against JSON documents, in
// practice the JSON form of a CloudEvent (attributes at the top level, the payload under "data"). It imports the
// standard library and golang.org/x/text (Unicode's case mappings). Where Amazon's documentation leaves an edge open,
// it follows Amazon's open-source matcher, event-ruler.
//
// # Language
//
// A pattern is a JSON object that follows the nesting of the event. Its leaves are arrays of alternatives: the
// field matches when any alternative does (OR); all fields must match (AND). An alternative is an exact value
// (string, number, true, false, null) or an operator object with one key:
//
//	{"prefix": "a"}            {"prefix": {"equals-ignore-case": "a"}}
//	{"suffix": "a"}            {"suffix": {"equals-ignore-case": "a"}}
//	{"equals-ignore-case": "a"}
//	{"wildcard": "a*b"}        (* is any run of characters; \* and \\ stand for * and \)
//	{"anything-but": "a"}      also a number, a list of strings or of numbers, or an object with one of
//	                           prefix, suffix, equals-ignore-case, wildcard (each a string or a list of strings)
//	{"numeric": [">", 0, "<=", 5]}  operators =, <, <=, >, >=; at most one lower and one upper bound, the
//	                           lower below the upper
//	{"exists": true}           {"exists": false}
//	{"cidr": "10.0.0.0/24"}    IPv4 or IPv6
//
// "$or": [{...}, {...}] at any level matches when one of its objects does; a pattern expands into the
// combinations of its $or branches ("clauses"), each a set of conditions on field paths. Inside a branch, at any
// depth, an operator name ("numeric", "prefix", "=", ...) cannot be a field name, as in event-ruler.
//
// # Semantics
//
// The event is seen as a set of leaves: every string, number, true, false and null together with its path, the
// keys that lead to it joined with "." (so a key "a.b" and the nesting {"a": {"b": ...}} name the same path, on
// either side), and the array elements it sits in. Objects and arrays are not leaves: an empty array, or a field
// that holds an object, has no value at its path. Keys of the event that the pattern does not name are ignored;
// key and value comparisons are exact and case-sensitive unless an ignore-case operator says otherwise.
//
//   - A field with an alternative other than exists:false matches a leaf at its path that satisfies one of its
//     alternatives; numbers compare by value (300 = 300.0 = 3.0e2); strings never equal numbers; "" is not null.
//     prefix, suffix, equals-ignore-case, wildcard and cidr match strings only, numeric matches numbers only;
//     anything-but matches any leaf (null included) that none of its values, prefixes, suffixes or wildcards
//     excludes.
//   - equals-ignore-case (alone, in prefix or suffix, in anything-but) reads each character of its operand as
//     itself, its lower case or its upper case, with Unicode's full mappings as event-ruler does: "ß" matches
//     "SS", "ﬃ" matches "FFI", the Kelvin sign matches "k", "ı" matches "I"; "ss" and "SS" do not match "ß".
//   - An array in the event matches when one of its elements does: the leaves that a clause uses must come from
//     the same element of every array they share ("array consistency"). Only objects and arrays count as
//     elements here: a string, number, true, false or null directly in an array is in none of its elements and
//     combines with every one, as in event-ruler ({"a": ["x"], "a.b": [1]} matches {"a": ["x", {"b": 1}]}).
//   - {"exists": false} holds when no leaf at the path is consistent with the leaves the other fields of the
//     clause use: in {"items": {"sku": ["a"], "gift": [{"exists": false}]}} the item with sku "a" must have no
//     gift; with no other field inside the array, no element may have one.
//
// A key repeated in a pattern is accepted: a path named twice keeps its last condition, so
// {"x": [1], "x": [2]} means {"x": [2]}, as Amazon EventBridge does. A key repeated in an event contributes all
// its values. Numbers compare as IEEE 754 doubles, except exact values and anything-but numbers of magnitude 2^53
// or more, where doubles stop telling integers apart: those compare by their exact decimal value, so
// [9007199254740993] matches 9007199254740993 (and 9.007199254740993e15) but not 9007199254740992, its double, as
// Amazon EventBridge compares numbers beyond its numeric range by their text. numeric ranges compare doubles. A
// number of a pattern too large for a double, or so small that a double reads it as 0 (1e-400), is refused.
//
// Compile validates a pattern within Limits and reports the JSON path and the reason of the first problem.
// Pattern.Match and Matcher.Match scan an event once, skipping what no pattern names; their cost grows with the
// size of the event and with the number of clauses its values select, and wildcards match in linear time. The
// one search that can branch, for events whose dotted keys give a field values in several arrays at once, gives
// up after 4096 tries per clause and then reports no match.
package pattern

import (
	"fmt"
	"sync"
)

// Default limits of Compile.
const (
	// MaxDepth is how deeply objects may nest in a pattern.
	MaxDepth = 16
	// MaxValues is how many values (leaf alternatives and list operands) a pattern may hold.
	MaxValues = 1000
	// DefaultMaxSize is the largest pattern accepted, in bytes.
	DefaultMaxSize = 4096
	// DefaultMaxCombinations is how many clauses the $or of a pattern may expand to.
	DefaultMaxCombinations = 100
	// DefaultMaxWildcardComplexity bounds how many positions of a wildcard's automaton may be active at once
	// ("a*b" has 3, "/Users/*/dir/dir/dir/dir/dir/doc.txt" 8, "*:*:*:*:*:event-bus/*" 13). Amazon EventBridge
	// rejects wildcards with many * or with repeated sequences after a * as too complex; matching here is linear
	// whatever the wildcard.
	DefaultMaxWildcardComplexity = 10
)

// Limits bound what Compile accepts. A zero field means its default.
type Limits struct {
	// MaxSize is the largest pattern in bytes (DefaultMaxSize).
	MaxSize int
	// MaxDepth is how deeply objects may nest (MaxDepth).
	MaxDepth int
	// MaxValues is how many values a pattern may hold (MaxValues).
	MaxValues int
	// MaxCombinations is how many clauses the $or of a pattern may expand to (DefaultMaxCombinations).
	MaxCombinations int
	// MaxWildcardComplexity bounds each wildcard (DefaultMaxWildcardComplexity).
	MaxWildcardComplexity int
}

// DefaultLimits returns the limits Compile uses.
func DefaultLimits() Limits {
	return Limits{MaxSize: DefaultMaxSize, MaxDepth: MaxDepth, MaxValues: MaxValues,
		MaxCombinations: DefaultMaxCombinations, MaxWildcardComplexity: DefaultMaxWildcardComplexity}
}

// Validate reports a negative limit.
func (l Limits) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"MaxSize", l.MaxSize}, {"MaxDepth", l.MaxDepth}, {"MaxValues", l.MaxValues},
		{"MaxCombinations", l.MaxCombinations}, {"MaxWildcardComplexity", l.MaxWildcardComplexity}} {
		if f.v < 0 {
			return fmt.Errorf("pattern limits: %s must not be negative", f.name)
		}
	}
	return nil
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxSize == 0 {
		l.MaxSize = d.MaxSize
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxValues == 0 {
		l.MaxValues = d.MaxValues
	}
	if l.MaxCombinations == 0 {
		l.MaxCombinations = d.MaxCombinations
	}
	if l.MaxWildcardComplexity == 0 {
		l.MaxWildcardComplexity = d.MaxWildcardComplexity
	}
	return l
}

// Error is a compile error that names the JSON path of the problem ("detail.state[0].prefix") and the reason.
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Path + ": " + e.Reason
}

// Pattern is a compiled event pattern, safe for concurrent use.
type Pattern struct {
	clauses  []*clause
	wildcard bool
	// prog resolves the pattern's own paths when it matches alone (Match, Explain).
	prog  *program
	bound []boundClause
	pool  sync.Pool // *scratch
}

// clause is one combination of the $or branches: every condition must hold.
type clause struct {
	conds []*condition // sorted by path
}

// Compile parses and validates a pattern with the default limits. Errors are *Error and name the JSON path and
// the reason.
func Compile(pattern []byte) (*Pattern, error) {
	return DefaultLimits().Compile(pattern)
}

// Compile parses and validates a pattern within l. Errors are *Error and name the JSON path and the reason; a
// limit that is exceeded is named in the reason.
func (l Limits) Compile(pattern []byte) (*Pattern, error) {
	if err := l.Validate(); err != nil {
		return nil, &Error{Reason: err.Error()}
	}
	l = l.withDefaults()
	if len(pattern) > l.MaxSize {
		return nil, &Error{Reason: fmt.Sprintf("pattern is %d bytes; at most %d are allowed", len(pattern), l.MaxSize)}
	}
	v, err := parseJSON(pattern)
	if err != nil {
		return nil, &Error{Reason: "pattern is not valid JSON: " + err.Error()}
	}
	if v.kind != jObject {
		return nil, &Error{Reason: "pattern must be a JSON object"}
	}
	if len(v.members) == 0 {
		return nil, &Error{Reason: "pattern must name at least one field"}
	}
	c := compiler{lim: l}
	clauses, err := c.object(v.members, "", "", 1, false, []clauseMap{{}})
	if err != nil {
		return nil, err
	}
	p := &Pattern{wildcard: c.wildcard}
	for _, m := range clauses {
		p.clauses = append(p.clauses, m.clause())
	}
	p.prog = newProgram()
	for _, cl := range p.clauses {
		p.bound = append(p.bound, p.prog.bind(cl))
	}
	return p, nil
}

// UsesWildcard reports whether the pattern has a wildcard or an anything-but wildcard, which Amazon EventBridge
// limits per bus.
func (p *Pattern) UsesWildcard() bool { return p.wildcard }

// Match reports whether the event (a JSON object) matches. The error is for an event that is not a JSON object.
func (p *Pattern) Match(event []byte) (bool, error) {
	s := p.scratch()
	defer p.pool.Put(s)
	if err := s.ev.scan(event, p.prog.root, p.prog.npaths()); err != nil {
		return false, err
	}
	for i := range p.bound {
		if s.sv.verify(&s.ev, p.bound[i].conds, p.bound[i].paths) {
			return true, nil
		}
	}
	return false, nil
}

func (p *Pattern) scratch() *scratch {
	if s, ok := p.pool.Get().(*scratch); ok {
		return s
	}
	return &scratch{}
}

// scratch is the per-call working memory of Match and Explain.
type scratch struct {
	ev flatEvent
	sv solver
}
