// Package attribute holds two small generic transform plugins on the attributes of the CloudEvent:
// set-attribute sets an attribute or extension to a constant, remove-attribute removes an optional attribute or an
// extension. They are used as Kafka Connect single message transforms are:
//
//	transforms=tenant,nosubject
//	transforms.tenant.type=set-attribute
//	transforms.tenant.name=tenant
//	transforms.tenant.value=acme
//	transforms.nosubject.type=remove-attribute
//	transforms.nosubject.name=subject
//
// Neither touches specversion or id (the identity of the event, which de-duplication relies on); remove-attribute
// refuses the other required attributes, source and type, as well.
package attribute

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// Names of the plugins, the values of transforms.<name>.type.
const (
	SetName    = "set-attribute"
	RemoveName = "remove-attribute"
)

// Config keys.
const (
	KeyName  = "name"  // the attribute or extension
	KeyValue = "value" // set-attribute: its constant value
)

func init() {
	connector.RegisterTransform(SetPlugin())
	connector.RegisterTransform(RemovePlugin())
}

// SetPlugin returns the set-attribute plugin.
func SetPlugin() connector.TransformPlugin {
	return connector.TransformPlugin{
		Name:    SetName,
		Version: "1.0.0",
		Doc:     "Sets an attribute (source, type, subject, time, dataschema, datacontenttype) or an extension of each event to a constant.",
		Spec: connector.Spec{
			{Name: KeyName, Title: "Attribute", Type: connector.TypeString, Required: true,
				Example: "tenant",
				Doc:     "The attribute or extension: source, type, subject, time, dataschema, datacontenttype, or an extension name (lower-case letters and digits). specversion and id cannot be set."},
			{Name: KeyValue, Title: "Value", Type: connector.TypeString, Required: true,
				Example: "acme",
				Doc:     "The constant value; a time is RFC 3339, a source or dataschema a URI reference. Use remove-attribute to remove an attribute."},
		},
		New: NewSet,
	}
}

// RemovePlugin returns the remove-attribute plugin.
func RemovePlugin() connector.TransformPlugin {
	return connector.TransformPlugin{
		Name:    RemoveName,
		Version: "1.0.0",
		Doc:     "Removes an optional attribute (subject, time, dataschema, datacontenttype) or an extension of each event.",
		Spec: connector.Spec{
			{Name: KeyName, Title: "Attribute", Type: connector.TypeString, Required: true,
				Example: "subject",
				Doc:     "The optional attribute or extension: subject, time, dataschema, datacontenttype, or an extension name. The required attributes (specversion, id, source, type) cannot be removed."},
		},
		New: NewRemove,
	}
}

// The attributes of CloudEvents 1.0.
var (
	identity = map[string]bool{"specversion": true, "id": true}
	required = map[string]bool{"specversion": true, "id": true, "source": true, "type": true}
	optional = map[string]bool{"subject": true, "time": true, "dataschema": true, "datacontenttype": true}
	// reserved names are members of the JSON format that are not attributes.
	reserved = map[string]bool{"data": true, "data_base64": true}
)

// extensionRe is a CloudEvents attribute name: lower-case ASCII letters and digits. The spec advises at most 20
// characters; 64 are accepted.
var extensionRe = regexp.MustCompile(`^[a-z0-9]{1,64}$`)

// checkName returns what is wrong with name as an attribute or extension name, or "".
func checkName(name string) string {
	switch {
	case reserved[name]:
		return fmt.Sprintf("%q is not an attribute", name)
	case required[name], optional[name], extensionRe.MatchString(name):
		return ""
	}
	return fmt.Sprintf("%q is not an attribute name (an extension name is 1 to 64 lower-case letters and digits)", name)
}

// Set sets one attribute to a constant. Safe for concurrent use.
type Set struct {
	name  string
	set   func(e *event.Event)
	value string
}

var _ connector.Transform = (*Set)(nil)

// NewSet checks the name and the value once; problems are connector.FieldErrors of name or value.
func NewSet(cfg connector.Values, _ connector.Env) (connector.Transform, error) {
	name, value := cfg.String(KeyName), cfg.String(KeyValue)
	if msg := checkName(name); msg != "" {
		return nil, connector.FieldErrors{{Key: KeyName, Message: msg}}
	}
	if identity[name] {
		return nil, connector.FieldErrors{{Key: KeyName, Message: fmt.Sprintf("%s identifies the event and cannot be set", name)}}
	}
	t := &Set{name: name, value: value}
	switch name {
	case "source":
		t.set = func(e *event.Event) { e.SetSource(value) }
	case "type":
		t.set = func(e *event.Event) { e.SetType(value) }
	case "subject":
		t.set = func(e *event.Event) { e.SetSubject(value) }
	case "dataschema":
		t.set = func(e *event.Event) { e.SetDataSchema(value) }
	case "datacontenttype":
		t.set = func(e *event.Event) { e.SetDataContentType(value) }
	case "time":
		ts, err := time.Parse(time.RFC3339Nano, value)
		if err != nil {
			return nil, connector.FieldErrors{{Key: KeyValue, Message: fmt.Sprintf("%q is not an RFC 3339 time", value)}}
		}
		t.set = func(e *event.Event) { e.SetTime(ts) }
	default:
		t.set = func(e *event.Event) { e.SetExtension(name, value) }
	}
	// The value must make a valid event: a source or a dataschema that is not a URI reference is refused here,
	// not on every record.
	probe := event.New()
	probe.SetID("probe")
	probe.SetSource("probe")
	probe.SetType("probe")
	t.set(&probe)
	if err := probe.Validate(); err != nil {
		return nil, connector.FieldErrors{{Key: KeyValue, Message: fmt.Sprintf("not a valid value of %s: %v", name, err)}}
	}
	return t, nil
}

// Apply returns a copy of e with the attribute set. A copy that is not a valid event is an error (the record is
// given up); NewSet makes sure this does not happen.
func (t *Set) Apply(_ context.Context, e *event.Event) ([]*event.Event, error) {
	out := e.Clone()
	t.set(&out)
	if err := cloudevent.Validate(&out); err != nil {
		return nil, fmt.Errorf("setting %s: %w", t.name, err)
	}
	return []*event.Event{&out}, nil
}

// Remove removes one optional attribute or extension. Safe for concurrent use.
type Remove struct {
	name   string
	has    func(e *event.Event) bool
	remove func(e *event.Event)
}

var _ connector.Transform = (*Remove)(nil)

// NewRemove checks the name once; problems are connector.FieldErrors of name.
func NewRemove(cfg connector.Values, _ connector.Env) (connector.Transform, error) {
	name := cfg.String(KeyName)
	if msg := checkName(name); msg != "" {
		return nil, connector.FieldErrors{{Key: KeyName, Message: msg}}
	}
	if required[name] {
		return nil, connector.FieldErrors{{Key: KeyName, Message: fmt.Sprintf("%s is a required attribute and cannot be removed", name)}}
	}
	t := &Remove{name: name}
	switch name {
	case "subject":
		t.has = func(e *event.Event) bool { return e.Subject() != "" }
		t.remove = func(e *event.Event) { e.SetSubject("") }
	case "dataschema":
		t.has = func(e *event.Event) bool { return e.DataSchema() != "" }
		t.remove = func(e *event.Event) { e.SetDataSchema("") }
	case "datacontenttype":
		t.has = func(e *event.Event) bool { return e.DataContentType() != "" }
		t.remove = func(e *event.Event) { e.SetDataContentType("") }
	case "time":
		t.has = func(e *event.Event) bool { return !e.Time().IsZero() }
		t.remove = func(e *event.Event) { e.SetTime(time.Time{}) }
	default:
		t.has = func(e *event.Event) bool { _, ok := e.Extensions()[name]; return ok }
		t.remove = func(e *event.Event) { e.SetExtension(name, nil) }
	}
	return t, nil
}

// Apply returns e without the attribute: a copy when e has it, e itself otherwise.
func (t *Remove) Apply(_ context.Context, e *event.Event) ([]*event.Event, error) {
	if !t.has(e) {
		return []*event.Event{e}, nil
	}
	out := e.Clone()
	t.remove(&out)
	if t.has(&out) {
		return nil, errors.New("removing " + t.name + ": the attribute stayed")
	}
	return []*event.Event{&out}, nil
}
