package connector

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FieldType is the type of a config value. Every value is a string on the wire; the type says how it is read.
type FieldType string

// Field types.
const (
	TypeString   FieldType = "string"
	TypeInt      FieldType = "int"      // a base-10 integer
	TypeDuration FieldType = "duration" // a Go duration: 500ms, 5s, 1m30s
	TypeBool     FieldType = "bool"     // true or false
	TypeJSON     FieldType = "json"     // a JSON document (objects and arrays nest in flat configs this way)
	TypeEnum     FieldType = "enum"     // one of Field.Enum
)

// Field describes one config key. It is data: the runtime validates configs with it and the console renders forms
// from it, so every rule a form should know (type, default, required, allowed values, minimum) is a field of its
// own; Check holds what cannot be said as data and is not serialized.
type Field struct {
	Name string `json:"name"`
	// Title is the field's label in a form: a few words in sentence case, without a trailing period ("Broker
	// URL"). Every field of a built-in plugin has one (worker/plugins tests it).
	Title    string    `json:"title,omitempty"`
	Type     FieldType `json:"type"`
	Default  string    `json:"default,omitempty"`
	Required bool      `json:"required,omitempty"`
	// Secret values are stored encrypted by the control plane (enc:v1:...) and never logged.
	Secret bool     `json:"secret,omitempty"`
	Enum   []string `json:"enum,omitempty"`
	// Min is the smallest accepted value of an int field.
	Min *int64 `json:"min,omitempty"`
	// Doc says what the key does: its effect, unit, default and how it depends on other keys.
	Doc string `json:"doc,omitempty"`
	// Example is one realistic value as it would be typed ("tcp://broker.example.com:1883"), shown by forms as a
	// hint; it passes the field's checks. Empty where the type says enough (enums, booleans).
	Example string `json:"example,omitempty"`
	// Check, when set, runs after the type check on a present value; its error becomes the field's message.
	Check func(value string) error `json:"-"`
}

// Min returns a pointer to n, for Field.Min.
func Min(n int64) *int64 { return &n }

// FieldError is one problem of a config, naming its key.
type FieldError struct {
	Key     string `json:"key"`
	Message string `json:"message"`
}

func (e FieldError) Error() string { return e.Key + ": " + e.Message }

// FieldErrors are every problem of one config. Constructors return it for problems found beyond the Spec (a
// pattern that does not compile); the runtime answers 400 with each of them.
type FieldErrors []FieldError

func (es FieldErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return fmt.Sprintf("connector configuration is invalid and contains %d error(s): %s", len(es), strings.Join(parts, "; "))
}

// Spec is the config spec of a plugin: an ordered list of fields.
type Spec []Field

// Field returns the field named name.
func (s Spec) Field(name string) (Field, bool) {
	for _, f := range s {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Merge returns s followed by the fields of o whose names s does not have.
func (s Spec) Merge(o Spec) Spec {
	out := slices.Clone(s)
	for _, f := range o {
		if _, ok := s.Field(f.Name); !ok {
			out = append(out, f)
		}
	}
	return out
}

// Validate checks cfg against the spec and returns every problem, in spec order, each naming its key. Keys the
// spec does not know are ignored (other layers own them: transforms, the runtime). An empty value counts as
// absent.
func (s Spec) Validate(cfg map[string]string) FieldErrors {
	var errs FieldErrors
	for _, f := range s {
		v, ok := cfg[f.Name]
		if !ok || v == "" {
			if f.Required {
				errs = append(errs, FieldError{Key: f.Name, Message: "is required"})
			}
			continue
		}
		if msg := f.check(v); msg != "" {
			errs = append(errs, FieldError{Key: f.Name, Message: msg})
		}
	}
	return errs
}

// check returns what is wrong with a present value, or "".
func (f Field) check(v string) string {
	switch f.Type {
	case TypeString, "":
	case TypeInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Sprintf("%q is not an integer", v)
		}
		if f.Min != nil && n < *f.Min {
			return fmt.Sprintf("%d is less than the minimum %d", n, *f.Min)
		}
	case TypeDuration:
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Sprintf("%q is not a duration (like 500ms, 5s, 1m)", v)
		}
		if d < 0 {
			return "must not be negative"
		}
	case TypeBool:
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Sprintf("%q is not true or false", v)
		}
	case TypeJSON:
		if !json.Valid([]byte(v)) {
			return "is not valid JSON"
		}
	case TypeEnum:
		if !slices.Contains(f.Enum, v) {
			return fmt.Sprintf("%q is not one of %s", v, strings.Join(f.Enum, ", "))
		}
	default:
		return fmt.Sprintf("field type %q is unknown", f.Type)
	}
	if f.Check != nil {
		if err := f.Check(v); err != nil {
			return err.Error()
		}
	}
	return ""
}

// Values reads a config through its spec: a getter returns the value of the key, or the field's default when the
// key is absent or empty. Getters assume the config passed Spec.Validate; a value that does not parse reads as the
// zero value. Keys the spec does not know read as their raw value.
type Values struct {
	spec Spec
	cfg  map[string]string
}

// Values returns the reader of cfg under s.
func (s Spec) Values(cfg map[string]string) Values { return Values{spec: s, cfg: cfg} }

// Raw returns the config as given, without defaults. Callers must not modify it.
func (v Values) Raw() map[string]string { return v.cfg }

// String returns the value of key, or its default.
func (v Values) String(key string) string {
	if s := v.cfg[key]; s != "" {
		return s
	}
	f, _ := v.spec.Field(key)
	return f.Default
}

// Int returns the value of key as an integer, or its default.
func (v Values) Int(key string) int64 {
	n, _ := strconv.ParseInt(v.String(key), 10, 64)
	return n
}

// Duration returns the value of key as a Go duration, or its default.
func (v Values) Duration(key string) time.Duration {
	d, _ := time.ParseDuration(v.String(key))
	return d
}

// Bool returns the value of key as a boolean, or its default.
func (v Values) Bool(key string) bool {
	b, _ := strconv.ParseBool(v.String(key))
	return b
}

// JSON decodes the value of key (or its default) into out. An absent key without a default leaves out unchanged.
func (v Values) JSON(key string, out any) error {
	s := v.String(key)
	if s == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(s), out); err != nil {
		return FieldErrors{{Key: key, Message: "cannot be read: " + err.Error()}}
	}
	return nil
}
