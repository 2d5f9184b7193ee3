package pattern

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Explanation tells why an event does not match a pattern: the first condition, in the order of the pattern's
// paths, that fails.
type Explanation struct {
	// Path is the field's path, keys joined with "." ("data.items.sku").
	Path string `json:"path"`
	// Expected is the pattern's array of alternatives for the field.
	Expected json.RawMessage `json:"expected"`
	// Actual is the event's value at the path (an array when there are several), absent when there is none.
	Actual json.RawMessage `json:"actual,omitempty"`
	// Reason says how the condition fails.
	Reason string `json:"reason"`
}

// Explain returns nil when the event matches p, else the condition that fails first: conditions are taken in the
// order of their paths and the first one that cannot hold together with those before it is reported. For a
// pattern with $or, the branch that holds the most conditions is reported. The error is for a nil pattern or an
// event that is not a JSON object.
func Explain(p *Pattern, event []byte) (*Explanation, error) {
	if p == nil {
		return nil, errors.New("pattern: Explain of a nil pattern")
	}
	var ev flatEvent
	var sv solver
	if err := ev.scan(event, p.prog.root, p.prog.npaths()); err != nil {
		return nil, err
	}
	best, bestAt := -1, -1
	for i, b := range p.bound {
		if sv.verify(&ev, b.conds, b.paths) {
			return nil, nil
		}
		// The first condition that fails with those before it.
		at := len(b.conds) - 1
		for j := range b.conds {
			if !sv.verify(&ev, b.conds[:j+1], b.paths[:j+1]) {
				at = j
				break
			}
		}
		if at > bestAt {
			best, bestAt = i, at
		}
	}
	b := p.bound[best]
	c, path := b.conds[bestAt], b.paths[bestAt]
	x := &Explanation{Path: c.path, Expected: json.RawMessage(c.expected), Actual: actual(&ev, path)}
	hasLeaf, hasSat := false, false
	for li := ev.first(path); li >= 0; li = ev.leaves[li].next {
		hasLeaf = true
		hasSat = hasSat || (c.kind != condAbsent && c.matches(&ev.leaves[li]))
	}
	alone := sv.verify(&ev, b.conds[bestAt:bestAt+1], b.paths[bestAt:bestAt+1])
	switch {
	case alone:
		x.Reason = "the values that match are not in the array elements that the fields before it match"
	case c.kind == condAbsent:
		x.Reason = "the field exists; the pattern requires it to be absent"
	case !hasLeaf:
		x.Reason = "the event has no value at this path"
	case c.kind == condMixed && !hasSat:
		x.Reason = "the field exists and no value matches"
	case !hasSat:
		x.Reason = "no value matches"
	default:
		x.Reason = "the values that match are in array elements where the field also has values that do not match"
	}
	if len(p.bound) > 1 {
		x.Reason = fmt.Sprintf("no $or branch matches; in the closest (%d of %d): %s", best+1, len(p.bound), x.Reason)
	}
	return x, nil
}

// actual is the JSON of the event's values at path, in document order; nil for none.
func actual(ev *flatEvent, path int32) json.RawMessage {
	var vals []json.RawMessage
	for li := ev.first(path); li >= 0; li = ev.leaves[li].next {
		vals = append(vals, leafJSON(&ev.leaves[li]))
	}
	slices.Reverse(vals)
	switch len(vals) {
	case 0:
		return nil
	case 1:
		return vals[0]
	}
	b, _ := json.Marshal(vals) // raw messages that are valid JSON
	return b
}

func leafJSON(l *leaf) json.RawMessage {
	switch l.kind {
	case lString:
		b, _ := json.Marshal(string(l.str))
		return b
	case lNumber:
		return json.RawMessage(string(l.str))
	case lTrue:
		return json.RawMessage("true")
	case lFalse:
		return json.RawMessage("false")
	default:
		return json.RawMessage("null")
	}
}
