package pattern

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
)

// jvalue is a decoded JSON value that keeps the order of object members and repeated keys.
type jvalue struct {
	kind    jkind
	str     string // a string, or the text of a number
	b       bool
	members []jmember
	items   []jvalue
}

type jkind uint8

const (
	jObject jkind = iota
	jArray
	jString
	jNumber
	jBool
	jNull
)

type jmember struct {
	key string
	val jvalue
}

// maxPatternNesting stops a pathological pattern before it is validated against the configured depth.
const maxPatternNesting = 1000

func parseJSON(data []byte) (jvalue, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := parseValue(d, 0)
	if err != nil {
		return jvalue{}, err
	}
	if _, err := d.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("unexpected data after the JSON value")
		}
		return jvalue{}, err
	}
	return v, nil
}

func parseValue(d *json.Decoder, depth int) (jvalue, error) {
	if depth > maxPatternNesting {
		return jvalue{}, errors.New("nested too deeply")
	}
	tok, err := d.Token()
	if err == io.EOF {
		return jvalue{}, io.ErrUnexpectedEOF
	}
	if err != nil {
		return jvalue{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			v := jvalue{kind: jObject}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return jvalue{}, err
				}
				key, _ := k.(string)
				val, err := parseValue(d, depth+1)
				if err != nil {
					return jvalue{}, err
				}
				v.members = append(v.members, jmember{key: key, val: val})
			}
			_, err := d.Token()
			return v, err
		}
		v := jvalue{kind: jArray}
		for d.More() {
			item, err := parseValue(d, depth+1)
			if err != nil {
				return jvalue{}, err
			}
			v.items = append(v.items, item)
		}
		_, err := d.Token()
		return v, err
	case string:
		return jvalue{kind: jString, str: t}, nil
	case json.Number:
		return jvalue{kind: jNumber, str: string(t)}, nil
	case bool:
		return jvalue{kind: jBool, b: t}, nil
	default:
		return jvalue{kind: jNull}, nil
	}
}

// appendJSON writes v back as compact JSON.
func (v jvalue) appendJSON(dst []byte) []byte {
	switch v.kind {
	case jObject:
		dst = append(dst, '{')
		for i, m := range v.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, m.key)
			dst = append(dst, ':')
			dst = m.val.appendJSON(dst)
		}
		return append(dst, '}')
	case jArray:
		dst = append(dst, '[')
		for i, it := range v.items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = it.appendJSON(dst)
		}
		return append(dst, ']')
	case jString:
		return appendJSONString(dst, v.str)
	case jNumber:
		return append(dst, v.str...)
	case jBool:
		return strconv.AppendBool(dst, v.b)
	default:
		return append(dst, "null"...)
	}
}

// appendJSONString appends s as a JSON string, without json.Marshal's HTML escaping: explanations show
// operators such as ">" as written.
func appendJSONString(dst []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// clauseMap is a clause being built: the condition of each path; a later one replaces an earlier one.
type clauseMap map[string]*condition

func (m clauseMap) clone() clauseMap {
	c := make(clauseMap, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (m clauseMap) clause() *clause {
	cl := &clause{}
	for _, c := range m {
		cl.conds = append(cl.conds, c)
	}
	sort.Slice(cl.conds, func(i, j int) bool { return cl.conds[i].path < cl.conds[j].path })
	return cl
}

type compiler struct {
	lim      Limits
	values   int
	wildcard bool
}

// object compiles the members of a pattern object found at path (the event path, keys joined with ".") and
// display (the JSON path shown in errors), adding its conditions to every clause, and returns the clauses. inOr
// tells that the object is, or is inside, a branch of $or.
func (c *compiler) object(members []jmember, path, display string, depth int, inOr bool, clauses []clauseMap) ([]clauseMap, error) {
	if depth > c.lim.MaxDepth {
		return nil, &Error{Path: display, Reason: fmt.Sprintf("pattern is nested deeper than %d levels", c.lim.MaxDepth)}
	}
	for _, m := range members {
		shown := joinPath(display, m.key)
		if m.key == "$or" {
			var err error
			if clauses, err = c.or(m.val, path, shown, depth, clauses); err != nil {
				return nil, err
			}
			continue
		}
		if inOr && reservedInOr[m.key] {
			return nil, &Error{Path: shown, Reason: fmt.Sprintf(
				"%q is an operator name, which cannot be a field name inside $or", m.key)}
		}
		p := joinPath(path, m.key)
		switch m.val.kind {
		case jObject:
			if len(m.val.members) == 0 {
				return nil, &Error{Path: shown, Reason: "an object in a pattern must not be empty"}
			}
			var err error
			if clauses, err = c.object(m.val.members, p, shown, depth+1, inOr, clauses); err != nil {
				return nil, err
			}
		case jArray:
			cond, err := c.condition(m.val, p, shown)
			if err != nil {
				return nil, err
			}
			for _, cl := range clauses {
				cl[p] = cond
			}
		default:
			return nil, &Error{Path: shown, Reason: "a pattern value must be an object or an array of values"}
		}
	}
	return clauses, nil
}

// reservedInOr are the names that event-ruler refuses as field names anywhere inside a branch of $or
// (RESERVED_FIELD_NAMES_IN_OR_RELATIONSHIP): the operators, the numeric comparisons and names it keeps for
// operators to come. {"$or": [{"numeric": [">", 0]}, {"prefix": ["a"]}]} is a mistake for an operator, not two
// fields named "numeric" and "prefix".
var reservedInOr = map[string]bool{
	"exactly": true, "equals-ignore-case": true, "prefix": true, "suffix": true, "anything-but": true,
	"exists": true, "wildcard": true, "numeric": true, "cidr": true,
	"=": true, "<": true, "<=": true, ">": true, ">=": true,
	"regex": true, "not-wildcard": true, "not-equals-ignore-case": true,
	"date-after": true, "date-on-or-after": true, "date-before": true, "date-on-or-before": true,
	"in-date-range": true, "ip-address-in-range": true, "ip-address-not-in-range": true,
}

func (c *compiler) or(v jvalue, path, display string, depth int, clauses []clauseMap) ([]clauseMap, error) {
	const want = "$or takes an array of at least two objects"
	if v.kind != jArray || len(v.items) < 2 {
		return nil, &Error{Path: display, Reason: want}
	}
	var out []clauseMap
	for i, item := range v.items {
		shown := fmt.Sprintf("%s[%d]", display, i)
		if item.kind != jObject {
			return nil, &Error{Path: shown, Reason: want}
		}
		if len(item.members) == 0 {
			return nil, &Error{Path: shown, Reason: "an object in a pattern must not be empty"}
		}
		copies := make([]clauseMap, len(clauses))
		for j, cl := range clauses {
			copies[j] = cl.clone()
		}
		branch, err := c.object(item.members, path, shown, depth, true, copies)
		if err != nil {
			return nil, err
		}
		out = append(out, branch...)
		if len(out) > c.lim.MaxCombinations {
			return nil, &Error{Path: display, Reason: fmt.Sprintf(
				"pattern expands to more than %d combinations of $or branches", c.lim.MaxCombinations)}
		}
	}
	return out, nil
}

func (c *compiler) count(n int, display string) error {
	c.values += n
	if c.values > c.lim.MaxValues {
		return &Error{Path: display, Reason: fmt.Sprintf("pattern has more than %d values", c.lim.MaxValues)}
	}
	return nil
}

// condition compiles the array of alternatives of a field.
func (c *compiler) condition(v jvalue, path, display string) (*condition, error) {
	if len(v.items) == 0 {
		return nil, &Error{Path: display, Reason: "an array of values must not be empty"}
	}
	if err := c.count(len(v.items), display); err != nil {
		return nil, err
	}
	cond := &condition{path: path, expected: v.appendJSON(nil)}
	for i, it := range v.items {
		shown := fmt.Sprintf("%s[%d]", display, i)
		var a alt
		switch it.kind {
		case jString:
			a = alt{kind: altString, s: it.str}
		case jNumber:
			n, err := parseNumber(it.str, shown)
			if err != nil {
				return nil, err
			}
			a = alt{kind: altNumber, n: n, s: keyOfNumber(it.str, n).exact}
		case jBool:
			a = alt{kind: altFalse}
			if it.b {
				a.kind = altTrue
			}
		case jNull:
			a = alt{kind: altNull}
		case jObject:
			var err error
			if a, err = c.operator(it, shown); err != nil {
				return nil, err
			}
		default:
			return nil, &Error{Path: shown, Reason: "arrays cannot be nested in a pattern"}
		}
		cond.alts = append(cond.alts, a)
	}
	cond.classify()
	return cond, nil
}

// parseNumber reads a number of a pattern as a double. A number too large for a double is out of range; so is one
// too small, which a double would read as 0 (1e-400): event-ruler refuses both ("Cannot compare number").
func parseNumber(text, display string) (float64, error) {
	n, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(n, 0) {
		return 0, &Error{Path: display, Reason: "number out of range: " + text}
	}
	if n == 0 && decimalKey(text) != "0" {
		return 0, &Error{Path: display, Reason: "number out of range: " + text + " is too small to tell from 0"}
	}
	return n, nil
}

func (c *compiler) operator(v jvalue, display string) (alt, error) {
	if len(v.members) != 1 {
		return alt{}, &Error{Path: display, Reason: "an operator object must have exactly one key"}
	}
	name, arg := v.members[0].key, v.members[0].val
	op := joinPath(display, name)
	switch name {
	case "prefix", "suffix":
		plain, fold := altPrefix, altPrefixFold
		if name == "suffix" {
			plain, fold = altSuffix, altSuffixFold
		}
		if arg.kind == jString {
			return alt{kind: plain, s: arg.str}, nil
		}
		if arg.kind == jObject && len(arg.members) == 1 && arg.members[0].key == "equals-ignore-case" &&
			arg.members[0].val.kind == jString {
			cs := newCaseSeq(arg.members[0].val.str)
			return alt{kind: fold, s: cs.key, cs: cs}, nil
		}
		return alt{}, &Error{Path: op, Reason: name + ` takes a string or {"equals-ignore-case": "..."}`}
	case "equals-ignore-case":
		if arg.kind != jString {
			return alt{}, &Error{Path: op, Reason: "equals-ignore-case takes a string"}
		}
		cs := newCaseSeq(arg.str)
		return alt{kind: altFold, s: cs.key, cs: cs}, nil
	case "wildcard":
		if arg.kind != jString {
			return alt{}, &Error{Path: op, Reason: "wildcard takes a string"}
		}
		w, err := c.wildcardOperand(arg.str, op)
		if err != nil {
			return alt{}, err
		}
		return alt{kind: altWildcard, wc: w}, nil
	case "anything-but":
		ab, err := c.anythingBut(arg, op)
		if err != nil {
			return alt{}, err
		}
		return alt{kind: altAnythingBut, ab: ab}, nil
	case "numeric":
		r, err := numeric(arg, op)
		if err != nil {
			return alt{}, err
		}
		return alt{kind: altNumeric, rng: r}, nil
	case "exists":
		if arg.kind != jBool {
			return alt{}, &Error{Path: op, Reason: "exists takes true or false"}
		}
		if arg.b {
			return alt{kind: altExists}, nil
		}
		return alt{kind: altAbsent}, nil
	case "cidr":
		if arg.kind != jString {
			return alt{}, &Error{Path: op, Reason: `cidr takes a string such as "10.0.0.0/24"`}
		}
		p, err := parseCIDR(arg.str)
		if err != nil {
			return alt{}, &Error{Path: op, Reason: fmt.Sprintf("cidr %q is not an IPv4 or IPv6 network such as 10.0.0.0/24", arg.str)}
		}
		return alt{kind: altCIDR, cidr: p}, nil
	default:
		return alt{}, &Error{Path: op, Reason: fmt.Sprintf("unsupported operator %q", name)}
	}
}

func (c *compiler) wildcardOperand(s, display string) (*wildcard, error) {
	w, err := parseWildcard(s)
	if err != nil {
		return nil, &Error{Path: display, Reason: "wildcard " + err.Error()}
	}
	if n := w.complexity(c.lim.MaxWildcardComplexity); n > c.lim.MaxWildcardComplexity {
		return nil, &Error{Path: display, Reason: fmt.Sprintf("wildcard %q is too complex (limit %d): use fewer * or fewer "+
			"repeated character sequences after a *", s, c.lim.MaxWildcardComplexity)}
	}
	c.wildcard = true
	return w, nil
}

const anythingButUsage = "anything-but takes a string, a number, a list of strings or of numbers, " +
	"or an object with prefix, suffix, equals-ignore-case or wildcard"

func (c *compiler) anythingBut(arg jvalue, display string) (*anythingBut, error) {
	ab := &anythingBut{}
	switch arg.kind {
	case jString:
		ab.strs = []string{arg.str}
	case jNumber:
		n, err := parseNumber(arg.str, display)
		if err != nil {
			return nil, err
		}
		ab.nums = []numKey{keyOfNumber(arg.str, n)}
	case jArray:
		if len(arg.items) == 0 {
			return nil, &Error{Path: display, Reason: "an anything-but list must not be empty"}
		}
		if err := c.count(len(arg.items), display); err != nil {
			return nil, err
		}
		for i, it := range arg.items {
			shown := fmt.Sprintf("%s[%d]", display, i)
			switch it.kind {
			case jString:
				ab.strs = append(ab.strs, it.str)
			case jNumber:
				n, err := parseNumber(it.str, shown)
				if err != nil {
					return nil, err
				}
				ab.nums = append(ab.nums, keyOfNumber(it.str, n))
			default:
				return nil, &Error{Path: shown, Reason: "an anything-but list holds strings or numbers"}
			}
		}
		if len(ab.strs) > 0 && len(ab.nums) > 0 {
			return nil, &Error{Path: display, Reason: "an anything-but list holds only strings or only numbers"}
		}
	case jObject:
		if len(arg.members) != 1 {
			return nil, &Error{Path: display, Reason: "an operator object must have exactly one key"}
		}
		name, sub := arg.members[0].key, arg.members[0].val
		op := joinPath(display, name)
		switch name {
		case "prefix", "suffix", "equals-ignore-case", "wildcard":
		default:
			return nil, &Error{Path: op, Reason: fmt.Sprintf("unsupported anything-but operator %q", name)}
		}
		var list []string
		switch sub.kind {
		case jString:
			list = []string{sub.str}
		case jArray:
			if len(sub.items) == 0 {
				return nil, &Error{Path: op, Reason: "a list must not be empty"}
			}
			if err := c.count(len(sub.items), op); err != nil {
				return nil, err
			}
			for i, it := range sub.items {
				if it.kind != jString {
					return nil, &Error{Path: fmt.Sprintf("%s[%d]", op, i), Reason: "anything-but " + name + " takes strings"}
				}
				list = append(list, it.str)
			}
		default:
			return nil, &Error{Path: op, Reason: "anything-but " + name + " takes a string or a list of strings"}
		}
		for _, s := range list {
			switch name {
			case "prefix", "suffix":
				if s == "" {
					return nil, &Error{Path: op, Reason: "anything-but " + name + " must not be empty"}
				}
				if name == "prefix" {
					ab.prefixes = append(ab.prefixes, s)
				} else {
					ab.suffixes = append(ab.suffixes, s)
				}
			case "equals-ignore-case":
				ab.folds = append(ab.folds, newCaseSeq(s))
			case "wildcard":
				w, err := c.wildcardOperand(s, op)
				if err != nil {
					return nil, err
				}
				ab.wildcards = append(ab.wildcards, w)
			}
		}
	default:
		return nil, &Error{Path: display, Reason: anythingButUsage}
	}
	return ab, nil
}

// numeric compiles [op, n] or [lower-op, n, upper-op, m].
func numeric(arg jvalue, display string) (numRange, error) {
	const usage = `numeric takes an array such as ["<", 10], ["=", 5] or [">", 0, "<=", 5]`
	if arg.kind != jArray || (len(arg.items) != 2 && len(arg.items) != 4) {
		return numRange{}, &Error{Path: display, Reason: usage}
	}
	r := numRange{lo: math.Inf(-1), hi: math.Inf(1)}
	var lower, upper bool
	var loText, hiText string
	for i := 0; i < len(arg.items); i += 2 {
		opv, nv := arg.items[i], arg.items[i+1]
		shown := fmt.Sprintf("%s[%d]", display, i)
		if opv.kind != jString {
			return numRange{}, &Error{Path: shown, Reason: usage}
		}
		if nv.kind != jNumber {
			return numRange{}, &Error{Path: fmt.Sprintf("%s[%d]", display, i+1), Reason: "numeric compares with numbers only"}
		}
		n, err := parseNumber(nv.str, fmt.Sprintf("%s[%d]", display, i+1))
		if err != nil {
			return numRange{}, err
		}
		switch opv.str {
		case "=":
			if len(arg.items) != 2 {
				return numRange{}, &Error{Path: shown, Reason: `"=" cannot be combined with another comparison`}
			}
			return numRange{lo: n, hi: n}, nil
		case ">", ">=":
			if lower {
				return numRange{}, &Error{Path: shown, Reason: "numeric takes at most one lower bound (> or >=) and one upper bound (< or <=)"}
			}
			lower, r.lo, r.loOpen, loText = true, n, opv.str == ">", nv.str
		case "<", "<=":
			if upper {
				return numRange{}, &Error{Path: shown, Reason: "numeric takes at most one lower bound (> or >=) and one upper bound (< or <=)"}
			}
			upper, r.hi, r.hiOpen, hiText = true, n, opv.str == "<", nv.str
		default:
			return numRange{}, &Error{Path: shown, Reason: fmt.Sprintf("unsupported numeric operator %q (use =, <, <=, > or >=)", opv.str)}
		}
	}
	// event-ruler wants the lower bound strictly below the upper one ("Bottom must be less than top").
	switch {
	case r.lo > r.hi || (r.lo == r.hi && (r.loOpen || r.hiOpen)):
		return numRange{}, &Error{Path: display, Reason: fmt.Sprintf(
			"numeric range is empty: its lower bound %s is not below its upper bound %s", loText, hiText)}
	case r.lo == r.hi:
		return numRange{}, &Error{Path: display, Reason: fmt.Sprintf(
			`numeric range has the same lower and upper bound %s: use ["=", %s]`, loText, loText)}
	}
	return r, nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
