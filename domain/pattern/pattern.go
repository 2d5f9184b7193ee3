// Package pattern compiles Amazon-EventBridge-style event patterns and matches them against the JSON form of a
// CloudEvent (attributes at the top level, the payload under "data"). It imports the standard library only.
//
// Supported so far: exact strings, numbers (compared by value), booleans and null, and {"prefix": "..."}; a pattern
// follows the nesting of the event, keys are ANDed, the values of a leaf array are ORed, and an array in the event
// matches when any of its elements does.
package pattern

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Limits that keep patterns cheap to match.
const (
	MaxDepth  = 16
	MaxValues = 1000
)

// Pattern is a compiled event pattern, safe for concurrent use.
type Pattern struct {
	root *node
}

// node is one object level of a pattern: every field must match (AND).
type node struct {
	fields []field
}

type field struct {
	key   string
	child *node     // set when the pattern nests further
	leaf  []matcher // set at a leaf: any matcher may match (OR)
}

type matcher interface {
	match(v any) bool
}

type exactString string

func (m exactString) match(v any) bool { s, ok := v.(string); return ok && s == string(m) }

type exactNumber float64

func (m exactNumber) match(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return err == nil && f == float64(m)
}

type exactBool bool

func (m exactBool) match(v any) bool { b, ok := v.(bool); return ok && b == bool(m) }

type exactNull struct{}

func (exactNull) match(v any) bool { return v == nil }

type prefix string

func (m prefix) match(v any) bool { s, ok := v.(string); return ok && strings.HasPrefix(s, string(m)) }

// Error is a compile error that names the JSON path of the problem.
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

// Compile parses a pattern. Errors are *Error and name the JSON path and the reason.
func Compile(pattern []byte) (*Pattern, error) {
	v, err := decode(pattern)
	if err != nil {
		return nil, &Error{Reason: "pattern is not valid JSON: " + err.Error()}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Reason: "pattern must be a JSON object"}
	}
	c := compiler{}
	root, err := c.object(obj, "", 1)
	if err != nil {
		return nil, err
	}
	if len(root.fields) == 0 {
		return nil, &Error{Reason: "pattern must name at least one field"}
	}
	return &Pattern{root: root}, nil
}

type compiler struct{ values int }

func (c *compiler) object(obj map[string]any, path string, depth int) (*node, error) {
	if depth > MaxDepth {
		return nil, &Error{Path: path, Reason: fmt.Sprintf("pattern is nested deeper than %d levels", MaxDepth)}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	n := &node{}
	for _, k := range keys {
		p := join(path, k)
		switch v := obj[k].(type) {
		case map[string]any:
			child, err := c.object(v, p, depth+1)
			if err != nil {
				return nil, err
			}
			n.fields = append(n.fields, field{key: k, child: child})
		case []any:
			leaf, err := c.leaf(v, p)
			if err != nil {
				return nil, err
			}
			n.fields = append(n.fields, field{key: k, leaf: leaf})
		default:
			return nil, &Error{Path: p, Reason: "a pattern value must be an object or an array of values"}
		}
	}
	return n, nil
}

func (c *compiler) leaf(values []any, path string) ([]matcher, error) {
	if len(values) == 0 {
		return nil, &Error{Path: path, Reason: "an array of values must not be empty"}
	}
	c.values += len(values)
	if c.values > MaxValues {
		return nil, &Error{Path: path, Reason: fmt.Sprintf("pattern has more than %d values", MaxValues)}
	}
	out := make([]matcher, 0, len(values))
	for i, v := range values {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch v := v.(type) {
		case string:
			out = append(out, exactString(v))
		case json.Number:
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				return nil, &Error{Path: p, Reason: "number out of range: " + string(v)}
			}
			out = append(out, exactNumber(f))
		case bool:
			out = append(out, exactBool(v))
		case nil:
			out = append(out, exactNull{})
		case map[string]any:
			m, err := c.operator(v, p)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		default:
			return nil, &Error{Path: p, Reason: "arrays cannot be nested in a pattern"}
		}
	}
	return out, nil
}

func (c *compiler) operator(op map[string]any, path string) (matcher, error) {
	if len(op) != 1 {
		return nil, &Error{Path: path, Reason: "an operator object must have exactly one key"}
	}
	for name, arg := range op {
		switch name {
		case "prefix":
			s, ok := arg.(string)
			if !ok {
				return nil, &Error{Path: join(path, name), Reason: "prefix takes a string"}
			}
			return prefix(s), nil
		default:
			return nil, &Error{Path: join(path, name), Reason: fmt.Sprintf("unsupported operator %q", name)}
		}
	}
	panic("unreachable")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// Match reports whether the event (its JSON form) matches. The error is for an event that is not a JSON object.
func (p *Pattern) Match(event []byte) (bool, error) {
	v, err := decodeEvent(event)
	if err != nil {
		return false, err
	}
	return p.root.match(v), nil
}

func decodeEvent(event []byte) (map[string]any, error) {
	v, err := decode(event)
	if err != nil {
		return nil, fmt.Errorf("event is not valid JSON: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("event must be a JSON object")
	}
	return obj, nil
}

func (n *node) match(obj map[string]any) bool {
	for _, f := range n.fields {
		v, ok := obj[f.key]
		if !ok {
			return false
		}
		if !f.match(v) {
			return false
		}
	}
	return true
}

func (f *field) match(v any) bool {
	if arr, ok := v.([]any); ok {
		for _, e := range arr {
			if f.match(e) {
				return true
			}
		}
		return false
	}
	if f.child != nil {
		obj, ok := v.(map[string]any)
		return ok && f.child.match(obj)
	}
	for _, m := range f.leaf {
		if m.match(v) {
			return true
		}
	}
	return false
}
