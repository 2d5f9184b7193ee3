package transform

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// Paths are JSON paths over the JSON form of a CloudEvent, compiled once, whose values are read as text: the
// path parameters of an API destination, filled from each event.
type Paths struct {
	paths []*path
}

// CompilePaths compiles exprs (see the JSON paths of input transformers); an error names the position of the
// path that does not compile.
func CompilePaths(exprs []string) (Paths, error) {
	out := Paths{}
	for i, s := range exprs {
		p, err := compilePath(s)
		if err != nil {
			return Paths{}, fmt.Errorf("path %d: %w", i, err)
		}
		out.paths = append(out.paths, p)
	}
	return out, nil
}

// Len is the number of paths.
func (p Paths) Len() int { return len(p.paths) }

// Texts returns the value of each path in e as text: strings as they are, other values as their JSON. A path
// with no value (or null) is an error naming it.
func (p Paths) Texts(e *event.Event) ([]string, error) {
	if len(p.paths) == 0 {
		return nil, nil
	}
	raw, err := cloudevent.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("the event's JSON form cannot be built: %w", err)
	}
	doc, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("reading the event's JSON form: %w", err)
	}
	out := make([]string, len(p.paths))
	for i, q := range p.paths {
		v, ok := q.lookup(doc)
		if !ok || v == nil {
			return nil, fmt.Errorf("%s has no value in the event", q.text)
		}
		switch x := v.(type) {
		case string:
			out[i] = x
		case json.Number:
			out[i] = x.String()
		case float64:
			out[i] = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			b, err := json.Marshal(x)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", q.text, err)
			}
			out[i] = string(b)
		}
	}
	return out, nil
}
