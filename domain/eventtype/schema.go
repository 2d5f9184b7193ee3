package eventtype

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// Schema is a JSON Schema (draft 2020-12) inferred from the data of events: the types seen at each place, the
// properties of objects with those present in every sample marked required, and the schema of array items.
// Inference is bounded: MaxDepth levels and MaxProperties properties per object; deeper or further values are
// described by their type only.
type Schema struct {
	Types      []string           `json:"type,omitempty"`
	Properties map[string]*Schema `json:"properties,omitempty"`
	Required   []string           `json:"required,omitempty"`
	Items      *Schema            `json:"items,omitempty"`
}

// Inference bounds.
const (
	MaxDepth      = 8
	MaxProperties = 100
)

// JSON types of a Schema.
const (
	typeObject  = "object"
	typeArray   = "array"
	typeString  = "string"
	typeInteger = "integer"
	typeNumber  = "number"
	typeBool    = "boolean"
	typeNull    = "null"
)

// Infer returns the schema of one JSON document; data that is not JSON gives nil.
func Infer(data []byte) *Schema {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	return infer(v, 0)
}

func infer(v any, depth int) *Schema {
	switch x := v.(type) {
	case map[string]any:
		s := &Schema{Types: []string{typeObject}}
		if depth >= MaxDepth {
			return s
		}
		s.Properties = map[string]*Schema{}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if len(s.Properties) == MaxProperties {
				break
			}
			s.Properties[k] = infer(x[k], depth+1)
			s.Required = append(s.Required, k)
		}
		return s
	case []any:
		s := &Schema{Types: []string{typeArray}}
		if depth >= MaxDepth {
			return s
		}
		for _, item := range x {
			s.Items = Merge(s.Items, infer(item, depth+1))
		}
		return s
	case string:
		return &Schema{Types: []string{typeString}}
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return &Schema{Types: []string{typeInteger}}
		}
		return &Schema{Types: []string{typeNumber}}
	case bool:
		return &Schema{Types: []string{typeBool}}
	default:
		return &Schema{Types: []string{typeNull}}
	}
}

// Merge returns a schema that describes every document a or b describes: the union of types and properties, the
// intersection of required properties, the merge of item schemas. Nil stands for no sample.
func Merge(a, b *Schema) *Schema {
	switch {
	case a == nil:
		return b.clone()
	case b == nil:
		return a.clone()
	}
	out := &Schema{Types: union(a.Types, b.Types)}
	// An integer is a number: the two together are number.
	if slices.Contains(out.Types, typeNumber) {
		out.Types = slices.DeleteFunc(out.Types, func(t string) bool { return t == typeInteger })
	}
	hasObject := func(s *Schema) bool { return slices.Contains(s.Types, typeObject) }
	if hasObject(a) || hasObject(b) {
		out.Properties = map[string]*Schema{}
		for _, s := range []*Schema{a, b} {
			for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
				if _, ok := out.Properties[k]; !ok && len(out.Properties) == MaxProperties {
					continue
				}
				out.Properties[k] = Merge(out.Properties[k], s.Properties[k])
			}
		}
		switch {
		case !hasObject(a):
			out.Required = slices.Clone(b.Required)
		case !hasObject(b):
			out.Required = slices.Clone(a.Required)
		default:
			for _, k := range a.Required {
				if slices.Contains(b.Required, k) {
					out.Required = append(out.Required, k)
				}
			}
		}
		if len(out.Properties) == 0 {
			out.Properties = nil
		}
	}
	if a.Items != nil || b.Items != nil {
		out.Items = Merge(a.Items, b.Items)
	}
	return out
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, t := range b {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

func (s *Schema) clone() *Schema {
	if s == nil {
		return nil
	}
	out := &Schema{Types: slices.Clone(s.Types), Required: slices.Clone(s.Required), Items: s.Items.clone()}
	if s.Properties != nil {
		out.Properties = make(map[string]*Schema, len(s.Properties))
		for k, v := range s.Properties {
			out.Properties[k] = v.clone()
		}
	}
	return out
}

// MarshalJSON writes the schema with "type" as a string when there is one type, as JSON Schema writers do.
func (s *Schema) MarshalJSON() ([]byte, error) {
	type plain Schema
	if len(s.Types) == 1 {
		return json.Marshal(struct {
			Type string `json:"type"`
			plain
			Types []string `json:"-"`
		}{Type: s.Types[0], plain: plain(*s)})
	}
	return json.Marshal(plain(*s))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Schema) UnmarshalJSON(b []byte) error {
	type plain Schema
	var raw struct {
		Type json.RawMessage `json:"type"`
		plain
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*s = Schema(raw.plain)
	s.Types = nil
	if len(raw.Type) > 0 {
		var one string
		if json.Unmarshal(raw.Type, &one) == nil {
			s.Types = []string{one}
		} else if err := json.Unmarshal(raw.Type, &s.Types); err != nil {
			return err
		}
	}
	return nil
}
