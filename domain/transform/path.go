package transform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// MaxPathLength is the longest JSON path accepted, in bytes (Amazon EventBridge's limit for InputPath).
const MaxPathLength = 256

// step is one step of a JSON path: an object member (key) or an array element (index >= 0).
type step struct {
	key   string
	index int // -1 for a member step
}

// path is a compiled JSON path over the JSON form of a CloudEvent.
type path struct {
	text  string
	steps []step
}

// compilePath compiles the JSON paths Amazon EventBridge accepts in input transformers: "$" followed by member
// steps (.name, or ['name'] and ["name"] for names with dots, brackets or spaces) and array indices ([0]).
// Wildcards, slices, filters and recursive descent are refused.
func compilePath(s string) (*path, error) {
	if s == "" {
		return nil, fmt.Errorf("is empty; a JSON path such as $.data.orderId is required")
	}
	if len(s) > MaxPathLength {
		return nil, fmt.Errorf("is %d bytes; at most %d are allowed", len(s), MaxPathLength)
	}
	if s[0] != '$' {
		return nil, fmt.Errorf("%q must start with $ (the event), as in $.data.orderId", s)
	}
	p := &path{text: s}
	for i := 1; i < len(s); {
		switch s[i] {
		case '.':
			j := i + 1
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				j++
			}
			name := s[i+1 : j]
			switch {
			case name == "":
				return nil, fmt.Errorf("%q has an empty member name at byte %d", s, i)
			case name == "*":
				return nil, fmt.Errorf("%q: wildcards are not supported", s)
			case strings.ContainsAny(name, "]'\"() \t\r\n"):
				return nil, fmt.Errorf("%q: member name %q must be written as ['%s']", s, name, name)
			}
			p.steps = append(p.steps, step{key: name, index: -1})
			i = j
		case '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("%q has an unclosed [ at byte %d", s, i)
			}
			inner := s[i+1 : i+end]
			if len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0] {
				name := inner[1 : len(inner)-1]
				if name == "" || strings.ContainsRune(name, rune(inner[0])) {
					return nil, fmt.Errorf("%q has an invalid quoted member name at byte %d", s, i)
				}
				p.steps = append(p.steps, step{key: name, index: -1})
				i += end + 1
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 || inner == "" || inner[0] == '+' {
				if inner == "*" || strings.ContainsAny(inner, ":?@,") {
					return nil, fmt.Errorf("%q: wildcards, slices and filters are not supported", s)
				}
				return nil, fmt.Errorf("%q: [%s] is neither an array index nor a quoted member name", s, inner)
			}
			p.steps = append(p.steps, step{index: n})
			i += end + 1
		default:
			return nil, fmt.Errorf("%q: unexpected %q at byte %d; use .name, ['name'] or [index]", s, s[i], i)
		}
	}
	return p, nil
}

// root reports whether the path selects the whole event ("$").
func (p *path) root() bool { return len(p.steps) == 0 }

// lookup returns the value at the path in doc, a JSON document decoded with json.Number for numbers. found is
// false when a step does not exist (a missing member, an index out of range, a step into a scalar).
func (p *path) lookup(doc any) (v any, found bool) {
	v = doc
	for _, st := range p.steps {
		switch c := v.(type) {
		case map[string]any:
			if st.index >= 0 {
				return nil, false
			}
			next, ok := c[st.key]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			if st.index < 0 || st.index >= len(c) {
				return nil, false
			}
			v = c[st.index]
		default:
			return nil, false
		}
	}
	return v, true
}

// decode parses a JSON document keeping numbers exact (json.Number), so that they are written back as they were.
func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
