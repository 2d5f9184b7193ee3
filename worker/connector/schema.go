package connector

import (
	"strconv"

	"github.com/eventbridge-go/eventbridge/rpc"
)

// JSONSchemaDialect is the JSON Schema draft JSONSchema renders.
const JSONSchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// JSONSchema renders the spec as a JSON Schema (draft 2020-12) of the connector config it accepts. A config is
// a flat map of strings on the wire, so every property is a string; its Spec type is said by a pattern or an
// enum (int, bool), a content media type (json) and "x-type". A field's Title is the property's title, its Doc
// the description and its Example the one value of examples. Secrets are writeOnly with format password. Keys
// the spec does not know are allowed (transforms and the runtime own them).
func (s Spec) JSONSchema(title, description string) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, f := range s {
		p := map[string]any{"type": "string", "x-type": string(typeOr(f.Type))}
		if f.Title != "" {
			p["title"] = f.Title
		}
		if f.Doc != "" {
			p["description"] = f.Doc
		}
		if f.Example != "" {
			p["examples"] = []string{f.Example}
		}
		if f.Default != "" {
			p["default"] = f.Default
		}
		switch f.Type {
		case TypeInt:
			p["pattern"] = `^-?[0-9]+$`
			if f.Min != nil {
				p["x-minimum"] = *f.Min
			}
		case TypeBool:
			p["enum"] = []string{"true", "false"}
		case TypeDuration:
			p["pattern"] = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$|^0$`
		case TypeJSON:
			p["contentMediaType"] = "application/json"
		case TypeEnum:
			p["enum"] = append([]string{}, f.Enum...)
		}
		if f.Secret {
			p["writeOnly"] = true
			p["format"] = "password"
		}
		if f.Required {
			required = append(required, f.Name)
			p["minLength"] = 1
		}
		props[f.Name] = p
	}
	out := map[string]any{
		"$schema":              JSONSchemaDialect,
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": map[string]any{"type": "string"},
	}
	if title != "" {
		out["title"] = title
	}
	if description != "" {
		out["description"] = description
	}
	return out
}

func typeOr(t FieldType) FieldType {
	if t == "" {
		return TypeString
	}
	return t
}

// ConfigKeys describes the spec's fields as Kafka Connect describes config keys, in spec order.
func (s Spec) ConfigKeys() []rpc.ConfigKeyInfo {
	out := make([]rpc.ConfigKeyInfo, 0, len(s))
	for i, f := range s {
		out = append(out, f.ConfigKey(i+1))
	}
	return out
}

// ConfigKey describes f as Kafka Connect describes a config key; order is its position (from 1). The display
// name is the field's Title, or its name when it has none.
func (f Field) ConfigKey(order int) rpc.ConfigKeyInfo {
	k := rpc.ConfigKeyInfo{
		Name: f.Name, Type: f.kafkaType(), Required: f.Required, Importance: "MEDIUM", Documentation: f.Doc,
		Width: "NONE", DisplayName: f.Name, Dependents: []string{}, OrderInGroup: -1, Order: order,
	}
	if f.Title != "" {
		k.DisplayName = f.Title
	}
	if f.Required {
		k.Importance = "HIGH"
	}
	if f.Default != "" {
		d := f.Default
		k.DefaultValue = &d
	}
	return k
}

// kafkaType is the Kafka Connect ConfigDef type of f.
func (f Field) kafkaType() string {
	if f.Secret {
		return "PASSWORD"
	}
	switch f.Type {
	case TypeInt:
		return "LONG"
	case TypeBool:
		return "BOOLEAN"
	}
	return "STRING"
}

// RecommendedValues are the values a form may offer for f.
func (f Field) RecommendedValues() []string {
	switch f.Type {
	case TypeEnum:
		return append([]string{}, f.Enum...)
	case TypeBool:
		return []string{strconv.FormatBool(true), strconv.FormatBool(false)}
	}
	return []string{}
}
