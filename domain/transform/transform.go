// Package transform implements input transformers: what a target makes of an event before delivering it. A
// transformer computes new data for the CloudEvent from its JSON form (attributes at the top level, the payload
// under "data") and, where configured, sets some of its attributes (subject, type, source, dataschema and
// extensions) from text templates; the other attributes stay as they are.
//
// A transformer sees the CloudEvent's JSON form, or with Options.Envelope the event as Amazon EventBridge delivers it
// (awsevent.Envelope: $.detail, $.detail-type, $.resources), the view of targets in AWS's format; Amazon
// EventBridge's predefined variables (<aws.events.rule-name>, <aws.events.event.json>, ...) are known in both.
//
// It accepts Amazon EventBridge's forms (inputTransformer with inputPathsMap and inputTemplate, input, inputPath)
// and Apache RocketMQ EventBridge's TransformParam forms ({"form": "ORIGINAL" | "CONSTANT" | "JSONPATH" |
// "TEMPLATE", "value": ..., "template": ...}). It imports the standard library, the domain's error model, the
// CloudEvents data type and its JSON format (domain/cloudevent) only.
//
// Templates (inputTemplate with <name>, TEMPLATE with ${name}) are JSON templates when they are JSON once their
// placeholders are filled in, text templates otherwise. In a JSON template a value outside a string literal is
// written as JSON (a string quoted and escaped, a missing path as null) and a value inside one as the escaped
// content of the string (a missing path as nothing); in a text template a string is written as it is, another
// value as its JSON text, a missing path as nothing. A placeholder naming no variable stays as it is. The output
// is application/json for JSON templates, input, inputPath, ORIGINAL and JSON values that JSONPATH selects or
// CONSTANT holds; text/plain otherwise. Attribute templates are always text templates.
package transform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/awsevent"
	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// Limits of a transformer.
const (
	// MaxTemplateSize is the largest inputTemplate or TEMPLATE template, in bytes (Amazon EventBridge's limit).
	MaxTemplateSize = 8 << 10
	// MaxInputSize is the largest input or CONSTANT value, in bytes.
	MaxInputSize = 8 << 10
	// MaxVariables is the number of variables an inputPathsMap or a TEMPLATE value may define.
	MaxVariables = 100
	// MaxOutputSize is the largest output a transformer makes; beyond it Apply fails.
	MaxOutputSize = 256 << 10
	// MaxAttributes is the number of attributes a transformer may set.
	MaxAttributes = 20
	// MaxAttributeTemplateSize is the largest template of an attribute, in bytes.
	MaxAttributeTemplateSize = 1 << 10
	// MaxAttributeValueSize is the largest value an attribute's template makes, in bytes; beyond it Apply fails
	// (attributes travel as HTTP headers in binary mode).
	MaxAttributeValueSize = 4 << 10
	// MaxAttributeNameLength is the longest attribute name, as the CloudEvents specification advises.
	MaxAttributeNameLength = 20
)

// Content types of the outputs.
const (
	ContentTypeJSON = "application/json"
	ContentTypeText = "text/plain"
)

// Reserved variables: the CloudEvent itself, usable in every template without being declared. A variable of an
// absent optional attribute (subject, time, ...) is missing.
const (
	VarID              = "ce.id"
	VarType            = "ce.type"
	VarSource          = "ce.source"
	VarSubject         = "ce.subject"
	VarTime            = "ce.time"
	VarSpecVersion     = "ce.specversion"
	VarDataContentType = "ce.datacontenttype"
	VarDataSchema      = "ce.dataschema"
	// VarEventJSON is the whole event in its JSON form.
	VarEventJSON = "ce.event.json"
)

// Amazon EventBridge's predefined variables, reserved in every template: the rule (Options.RuleName, RuleARN;
// missing when not given), the event in AWS's envelope (awsevent.Envelope with Options.Account and Region) with and
// without its detail, and when EventBridge received it (here: the event's time).
const (
	VarAWSRuleARN       = "aws.events.rule-arn"
	VarAWSRuleName      = "aws.events.rule-name"
	VarAWSIngestionTime = "aws.events.event.ingestion-time"
	VarAWSEvent         = "aws.events.event"
	VarAWSEventJSON     = "aws.events.event.json"
)

var reserved = []string{VarID, VarType, VarSource, VarSubject, VarTime, VarSpecVersion, VarDataContentType, VarDataSchema,
	VarEventJSON, VarAWSRuleARN, VarAWSRuleName, VarAWSIngestionTime, VarAWSEvent, VarAWSEventJSON}

// Options are what a transformer knows besides its spec and the event: the rule that routed the event, the
// account and region of AWS's envelope for events that carry none, and whether it sees events in that envelope.
type Options struct {
	RuleName, RuleARN string
	Account, Region   string
	// Envelope makes the transformer see every event as AWS delivers it (awsevent.Envelope): its paths ($.detail,
	// $.detail-type, $.resources[0]), $, and the ORIGINAL form are over the envelope, and a spec with no data form
	// delivers the envelope. It is the view of targets in AWS's format.
	Envelope bool
}

// variableRe is the form of a variable that a user declares; reserved names have a dot, user names cannot.
var variableRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Form is an Apache RocketMQ EventBridge transform form.
type Form string

// RocketMQ EventBridge transform forms.
const (
	// Original delivers the whole event: the new data is the event's JSON form.
	Original Form = "ORIGINAL"
	// Constant delivers Value as the data.
	Constant Form = "CONSTANT"
	// JSONPath delivers the part of the event that the JSON path in Value selects; a string as its text.
	JSONPath Form = "JSONPATH"
	// Template fills Template's ${name} placeholders with the values of the JSON paths that Value maps names to.
	Template Form = "TEMPLATE"
)

// InputTransformer is Amazon EventBridge's input transformer: variables bound to JSON paths of the event, and a
// template with <name> placeholders.
type InputTransformer struct {
	InputPathsMap map[string]string `json:"inputPathsMap,omitempty"`
	InputTemplate string            `json:"inputTemplate"`
}

// Param is Apache RocketMQ EventBridge's transform parameter (TransformParam), with its field names. For TEMPLATE,
// Value is a JSON object of strings mapping variable names to JSON paths, as RocketMQ EventBridge writes it
// ("{\"content\":\"$.data.body\"}").
type Param struct {
	Form     Form   `json:"form"`
	Value    string `json:"value,omitempty"`
	Template string `json:"template,omitempty"`
}

// Spec declares a transformer: at most one of the data forms (InputTransformer, Input, InputPath, Transform),
// with or without Attributes; the zero Spec declares none. Its JSON form (encoding/json with these tags) is how
// specs are stored and passed to the worker runtime.
type Spec struct {
	InputTransformer *InputTransformer `json:"inputTransformer,omitempty"`
	// Input is constant JSON text that replaces the data.
	Input *string `json:"input,omitempty"`
	// InputPath is a JSON path that selects the part of the event that becomes the data.
	InputPath *string `json:"inputPath,omitempty"`
	// Transform is a RocketMQ EventBridge form.
	Transform *Param `json:"transform,omitempty"`
	// Attributes sets CloudEvent attributes: attribute name → text template (strings written as they are, other
	// values as their JSON text, missing values as nothing; leading and trailing white space dropped). The
	// templates see the variables of the data form beside them: with InputTransformer, its inputPathsMap
	// variables and the reserved <ce.*> ones, written <name>; with Transform, the reserved ones and, for
	// TEMPLATE, the variables of its value, written ${name} as in its template; with Input, InputPath or no
	// data form (Attributes alone, which keeps the data as it is), the reserved ones, written <name>.
	//
	// subject, type, source, dataschema and extension attributes (1 to MaxAttributeNameLength characters of a-z
	// and 0-9) may be set, at most MaxAttributes of them, each template at most MaxAttributeTemplateSize bytes;
	// specversion, id, time, datacontenttype, data and data_base64 may not. A template whose value is empty
	// removes its attribute, except type and source, which are required: then Apply fails, as it does for a value
	// that is not valid for its attribute (a control character, a dataschema that is not an absolute URI, more
	// than MaxAttributeValueSize bytes).
	Attributes map[string]string `json:"attributes,omitempty"`
}

// IsZero reports whether s declares no transformer: no data form and no attributes.
func (s Spec) IsZero() bool {
	return s.InputTransformer == nil && s.Input == nil && s.InputPath == nil && s.Transform == nil && len(s.Attributes) == 0
}

// Equal reports whether two specs declare the same transformer.
func (s Spec) Equal(o Spec) bool {
	a, errA := json.Marshal(s)
	b, errB := json.Marshal(o)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// ParseSpec reads the JSON form of a Spec, refusing unknown fields. It does not validate the transformer: Compile
// does.
func ParseSpec(b []byte) (Spec, error) {
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("reading a transformer spec: %w", err)
	}
	if dec.More() {
		return Spec{}, errors.New("reading a transformer spec: more than one JSON value")
	}
	return s, nil
}

// mode is what a compiled transformer does.
type mode int

const (
	modeConstant mode = iota
	modePath
	modeTemplate
	modeOriginal
	// modeKeep keeps the data as it is: a transformer of attributes only.
	modeKeep
)

// Transformer is a compiled Spec. It is immutable and safe for concurrent use.
type Transformer struct {
	opts     Options
	mode     mode
	constant Output
	path     *path
	// rawStrings writes a string that a path selects as its text (RocketMQ's JSONPATH) instead of as JSON.
	rawStrings bool
	tmpl       *template
	vars       map[string]*path
	// attrs are the attributes to set, ordered by name.
	attrs []attribute
}

// attribute is an attribute that a transformer sets, and the text template of its value.
type attribute struct {
	name string
	tmpl *template
}

// Output is what a transformer makes of an event: the new data and its content type (for a transformer of
// attributes only, the event's own data and datacontenttype), and the attributes it set.
type Output struct {
	Data        []byte
	ContentType string
	// Attributes holds, for each attribute the transformer sets, the value the new event carries: "" when the
	// attribute was removed. Nil when the transformer sets no attributes.
	Attributes map[string]string
}

// IsJSON reports whether the output is JSON: valid JSON whose content type is a JSON media type
// (application/json, text/json, ...+json) or absent (a CloudEvent's JSON form implies application/json then).
func (o Output) IsJSON() bool {
	if o.ContentType != ContentTypeJSON && o.ContentType != "" {
		mt, _, err := mime.ParseMediaType(o.ContentType)
		if err != nil || mt != ContentTypeJSON && mt != "text/json" && !strings.HasSuffix(mt, "+json") {
			return false
		}
	}
	return o.Data != nil && json.Valid(o.Data)
}

// Compile validates spec and compiles it. Validation errors are domain.ErrValidation errors whose field names the
// offending input as the API writes it: inputTransformer.inputTemplate, inputTransformer.inputPathsMap.<name>,
// input, inputPath, transform.form, transform.value, transform.template, attributes, attributes.<name>. A zero
// Spec is an error too.
func Compile(spec Spec) (*Transformer, error) { return CompileWith(spec, Options{}) }

// CompileWith is Compile with options. With Options.Envelope a zero Spec is valid: it delivers the envelope.
func CompileWith(spec Spec, opts Options) (*Transformer, error) {
	if opts.Envelope && spec.IsZero() {
		spec.Transform = &Param{Form: Original}
	}
	t, err := compileData(spec)
	if err != nil {
		return nil, err
	}
	t.opts = opts
	syn := angle
	if spec.Transform != nil {
		syn = dollar
	}
	if t.attrs, err = compileAttributes(spec.Attributes, syn, t.vars); err != nil {
		return nil, err
	}
	return t, nil
}

// compileData compiles the data form of spec; a spec without one keeps the data when it sets attributes.
func compileData(spec Spec) (*Transformer, error) {
	var set []string
	if spec.InputTransformer != nil {
		set = append(set, "inputTransformer")
	}
	if spec.Input != nil {
		set = append(set, "input")
	}
	if spec.InputPath != nil {
		set = append(set, "inputPath")
	}
	if spec.Transform != nil {
		set = append(set, "transform")
	}
	switch len(set) {
	case 0:
		if len(spec.Attributes) > 0 {
			return &Transformer{mode: modeKeep}, nil
		}
		return nil, domain.Invalid("inputTransformer", "one of inputTransformer, input, inputPath and transform is required, or attributes")
	case 1:
	default:
		return nil, domain.Invalid(set[1], "at most one of inputTransformer, input, inputPath and transform may be set; got %s",
			strings.Join(set, " and "))
	}
	switch {
	case spec.InputTransformer != nil:
		return compileInputTransformer(*spec.InputTransformer)
	case spec.Input != nil:
		if err := checkConstant("input", *spec.Input, true); err != nil {
			return nil, err
		}
		return &Transformer{mode: modeConstant, constant: Output{Data: []byte(*spec.Input), ContentType: ContentTypeJSON}}, nil
	case spec.InputPath != nil:
		p, err := compilePath(*spec.InputPath)
		if err != nil {
			return nil, domain.Invalid("inputPath", "inputPath %s", err)
		}
		return &Transformer{mode: modePath, path: p}, nil
	default:
		return compileParam(*spec.Transform)
	}
}

func checkConstant(field, v string, mustBeJSON bool) error {
	if len(v) > MaxInputSize {
		return domain.Invalid(field, "%s is %d bytes; at most %d are allowed", field, len(v), MaxInputSize)
	}
	if mustBeJSON && !json.Valid([]byte(v)) {
		return domain.Invalid(field, "%s must be valid JSON text, such as {\"status\": \"created\"} or \"text\"", field)
	}
	return nil
}

func compileInputTransformer(it InputTransformer) (*Transformer, error) {
	const field = "inputTransformer"
	vars, err := compileVariables(field+".inputPathsMap", it.InputPathsMap)
	if err != nil {
		return nil, err
	}
	tmpl, err := compileTemplate(field+".inputTemplate", it.InputTemplate, angle, vars)
	if err != nil {
		return nil, err
	}
	return &Transformer{mode: modeTemplate, tmpl: tmpl, vars: vars}, nil
}

func compileParam(p Param) (*Transformer, error) {
	noTemplate := func() error {
		if p.Template != "" {
			return domain.Invalid("transform.template", "transform.template applies to the TEMPLATE form only, not %s", p.Form)
		}
		return nil
	}
	switch p.Form {
	case Original:
		if p.Value != "" {
			return nil, domain.Invalid("transform.value", "the ORIGINAL form takes no transform.value")
		}
		if err := noTemplate(); err != nil {
			return nil, err
		}
		return &Transformer{mode: modeOriginal}, nil
	case Constant:
		if err := noTemplate(); err != nil {
			return nil, err
		}
		if err := checkConstant("transform.value", p.Value, false); err != nil {
			return nil, err
		}
		ct := ContentTypeText
		if json.Valid([]byte(p.Value)) {
			ct = ContentTypeJSON
		}
		return &Transformer{mode: modeConstant, constant: Output{Data: []byte(p.Value), ContentType: ct}}, nil
	case JSONPath:
		if err := noTemplate(); err != nil {
			return nil, err
		}
		path, err := compilePath(p.Value)
		if err != nil {
			return nil, domain.Invalid("transform.value", "transform.value %s", err)
		}
		return &Transformer{mode: modePath, path: path, rawStrings: true}, nil
	case Template:
		var paths map[string]string
		if strings.TrimSpace(p.Value) != "" {
			dec := json.NewDecoder(strings.NewReader(p.Value))
			if err := dec.Decode(&paths); err != nil || dec.More() {
				return nil, domain.Invalid("transform.value",
					`transform.value of the TEMPLATE form must be a JSON object of JSON paths, such as {"id": "$.data.orderId"}`)
			}
		}
		vars, err := compileVariables("transform.value", paths)
		if err != nil {
			return nil, err
		}
		tmpl, err := compileTemplate("transform.template", p.Template, dollar, vars)
		if err != nil {
			return nil, err
		}
		return &Transformer{mode: modeTemplate, tmpl: tmpl, vars: vars}, nil
	case "":
		return nil, domain.Invalid("transform.form", "transform.form is required: ORIGINAL, CONSTANT, JSONPATH or TEMPLATE")
	default:
		return nil, domain.Invalid("transform.form", "transform.form %q is not one of ORIGINAL, CONSTANT, JSONPATH and TEMPLATE", p.Form)
	}
}

// compileVariables compiles the JSON paths of declared variables; field names the map in errors.
func compileVariables(field string, paths map[string]string) (map[string]*path, error) {
	if len(paths) > MaxVariables {
		return nil, domain.Invalid(field, "%s declares %d variables; at most %d are allowed", field, len(paths), MaxVariables)
	}
	vars := make(map[string]*path, len(paths))
	for _, name := range slices.Sorted(maps.Keys(paths)) {
		f := field + "." + name
		if slices.Contains(reserved, name) || strings.HasPrefix(name, "ce.") {
			return nil, domain.Invalid(f, "%s: %q is a reserved variable (the CloudEvent's own); choose another name", f, name)
		}
		if !variableRe.MatchString(name) {
			return nil, domain.Invalid(f, "%s: variable name %q must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -", f, name)
		}
		p, err := compilePath(paths[name])
		if err != nil {
			return nil, domain.Invalid(f, "%s %s", f, err)
		}
		vars[name] = p
	}
	return vars, nil
}

func compileTemplate(field, s string, syn syntax, vars map[string]*path) (*template, error) {
	switch {
	case s == "":
		return nil, domain.Invalid(field, "%s is required", field)
	case len(s) > MaxTemplateSize:
		return nil, domain.Invalid(field, "%s is %d bytes; at most %d are allowed", field, len(s), MaxTemplateSize)
	case !utf8.ValidString(s):
		return nil, domain.Invalid(field, "%s is not valid UTF-8", field)
	}
	return parseTemplate(s, syn, func(name string) bool {
		_, ok := vars[name]
		return ok || slices.Contains(reserved, name)
	}), nil
}

// attributeNameRe is the form of a CloudEvents attribute name, with the length the specification advises.
var attributeNameRe = regexp.MustCompile(fmt.Sprintf(`^[a-z0-9]{1,%d}$`, MaxAttributeNameLength))

// unsettable are the attributes a transformer may not set, and why.
var unsettable = map[string]string{
	"specversion":     "it is the CloudEvents version of the event",
	"id":              "it identifies the event",
	"time":            "it is when the event occurred",
	"datacontenttype": "it follows the data, which inputTransformer, input, inputPath or transform makes",
	"data":            "the data is what inputTransformer, input, inputPath or transform makes",
	"data_base64":     "the data is what inputTransformer, input, inputPath or transform makes",
}

// requiredAttribute reports whether an attribute cannot be removed.
func requiredAttribute(name string) bool { return name == "type" || name == "source" }

// compileAttributes compiles the templates of the attributes to set; they know the reserved variables and vars.
func compileAttributes(attrs map[string]string, syn syntax, vars map[string]*path) ([]attribute, error) {
	const field = "attributes"
	if len(attrs) > MaxAttributes {
		return nil, domain.Invalid(field, "%s sets %d attributes; at most %d are allowed", field, len(attrs), MaxAttributes)
	}
	out := make([]attribute, 0, len(attrs))
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		f, s := field+"."+name, attrs[name]
		if why, ok := unsettable[name]; ok {
			return nil, domain.Invalid(f, "%s: a transformer cannot set %s: %s", f, name, why)
		}
		switch {
		case !attributeNameRe.MatchString(name):
			return nil, domain.Invalid(f, "%s: %q is not a CloudEvents attribute name: 1 to %d characters of a-z and 0-9",
				f, name, MaxAttributeNameLength)
		case len(s) > MaxAttributeTemplateSize:
			return nil, domain.Invalid(f, "%s is %d bytes; at most %d are allowed", f, len(s), MaxAttributeTemplateSize)
		case !utf8.ValidString(s):
			return nil, domain.Invalid(f, "%s is not valid UTF-8", f)
		case requiredAttribute(name) && strings.TrimSpace(s) == "":
			return nil, domain.Invalid(f, "%s: %s is a required attribute; its template cannot be empty", f, name)
		}
		tmpl := parseTemplate(s, syn, func(name string) bool {
			_, ok := vars[name]
			return ok || slices.Contains(reserved, name)
		})
		tmpl.json = false // attribute values are text
		if len(tmpl.variables()) == 0 {
			// A constant: what Apply would refuse is refused now.
			probe := event.New()
			probe.SetID("probe")
			probe.SetSource("probe")
			probe.SetType("probe")
			err := setAttribute(&probe, name, s)
			if err == nil {
				err = probe.Validate()
			}
			if err != nil {
				return nil, domain.Invalid(f, "%s: %s", f, err)
			}
		}
		out = append(out, attribute{name: name, tmpl: tmpl})
	}
	return out, nil
}

// setAttribute sets attribute name of e to the rendered value v: white space around it dropped, an empty value
// removing the attribute (an error for type and source). It checks what the attribute requires of v; the caller
// validates the event once every attribute is set.
func setAttribute(e *event.Event, name, v string) error {
	v = strings.TrimSpace(v)
	switch {
	case v == "" && requiredAttribute(name):
		return fmt.Errorf("%s is required, and its template made an empty value", name)
	case !utf8.ValidString(v):
		return errors.New("the value is not valid UTF-8")
	case strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }):
		return fmt.Errorf("the value %s holds a control character, which CloudEvents attribute values cannot", quote(v))
	}
	ctx := e.Context
	var err error
	switch name {
	case "subject":
		err = ctx.SetSubject(v)
	case "type":
		err = ctx.SetType(v)
	case "source":
		err = ctx.SetSource(v)
	case "dataschema":
		if err = ctx.SetDataSchema(v); err == nil && v != "" && !e.Context.AsV1().DataSchema.Validate() {
			err = errors.New("it must be an absolute URI")
		}
	default:
		if v == "" {
			err = ctx.SetExtension(name, nil)
		} else {
			err = ctx.SetExtension(name, v)
		}
	}
	if err != nil {
		return fmt.Errorf("the value %s is not a valid %s: %w", quote(v), name, err)
	}
	return nil
}

// quote quotes a value for an error message, shortened beyond 100 bytes.
func quote(v string) string {
	const limit = 100
	if len(v) <= limit {
		return strconv.Quote(v)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return strconv.Quote(v[:cut]) + "..."
}

// attributeOf returns the value of attribute name of e as a string; "" when e has none.
func attributeOf(e *event.Event, name string) string {
	switch name {
	case "subject":
		return e.Subject()
	case "type":
		return e.Type()
	case "source":
		return e.Source()
	case "dataschema":
		return e.DataSchema()
	}
	v, ok := e.Extensions()[name]
	if !ok {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// Apply returns a copy of e whose data is the transformer's output and whose datacontenttype is application/json
// when the output is JSON, text/plain otherwise (a transformer of attributes only keeps both as they are), with
// the attributes it sets set; e is not modified. It fails when the event's JSON form cannot be built (data that
// is not the JSON its datacontenttype says), when the output would exceed MaxOutputSize or an attribute's value
// MaxAttributeValueSize, or when an attribute's value is not valid for it (an empty type or source, a control
// character, a dataschema that is not an absolute URI); the error names the attribute. Such an error is about
// the event, so retrying it cannot help.
func (t *Transformer) Apply(e *event.Event) (*event.Event, error) {
	c, _, err := t.apply(e)
	return c, err
}

// Output computes the transformer's output for e without returning the new event; it fails when Apply would.
func (t *Transformer) Output(e *event.Event) (Output, error) {
	_, out, err := t.apply(e)
	return out, err
}

func (t *Transformer) apply(e *event.Event) (*event.Event, Output, error) {
	if e == nil || e.Context == nil {
		return nil, Output{}, errors.New("transform: no event")
	}
	ev := &evaluation{e: e, opts: &t.opts}
	c := e.Clone()
	var out Output
	if t.mode == modeKeep {
		out = Output{Data: c.Data(), ContentType: c.DataContentType()}
	} else {
		var err error
		if out, err = t.data(ev); err != nil {
			return nil, Output{}, err
		}
		c.DataEncoded = out.Data
		c.DataBase64 = false
		c.SetDataContentType(out.ContentType)
	}
	if len(t.attrs) == 0 {
		return &c, out, nil
	}
	// Every value is computed from e before any is set.
	values := make([][]byte, len(t.attrs))
	for i, a := range t.attrs {
		vars, err := ev.values(a.tmpl.variables(), t.vars)
		if err != nil {
			return nil, Output{}, err
		}
		if values[i], err = a.tmpl.render(vars, MaxAttributeValueSize); err != nil {
			return nil, Output{}, fmt.Errorf("transform: attributes.%s: %w", a.name, err)
		}
	}
	out.Attributes = make(map[string]string, len(t.attrs))
	for i, a := range t.attrs {
		if err := setAttribute(&c, a.name, string(values[i])); err != nil {
			return nil, Output{}, fmt.Errorf("transform: attributes.%s: %w", a.name, err)
		}
	}
	if err := c.Validate(); err != nil {
		return nil, Output{}, fmt.Errorf("transform: the event is not valid with its new attributes: %w", err)
	}
	for _, a := range t.attrs {
		out.Attributes[a.name] = attributeOf(&c, a.name)
	}
	return &c, out, nil
}

// data computes the new data of the event of ev.
func (t *Transformer) data(ev *evaluation) (Output, error) {
	switch t.mode {
	case modeConstant:
		return Output{Data: bytes.Clone(t.constant.Data), ContentType: t.constant.ContentType}, nil
	case modeOriginal:
		b, err := ev.eventJSON()
		if err != nil {
			return Output{}, err
		}
		return Output{Data: bytes.Clone(b), ContentType: ContentTypeJSON}, nil
	case modePath:
		v, err := ev.lookup(t.path)
		if err != nil {
			return Output{}, err
		}
		switch {
		case !v.found:
			return Output{Data: []byte("null"), ContentType: ContentTypeJSON}, nil
		case v.isString && t.rawStrings:
			return Output{Data: []byte(v.str), ContentType: ContentTypeText}, nil
		case v.isString:
			return Output{Data: append(appendEscaped([]byte{'"'}, v.str), '"'), ContentType: ContentTypeJSON}, nil
		default:
			return Output{Data: v.raw, ContentType: ContentTypeJSON}, nil
		}
	default:
		values, err := ev.values(t.tmpl.variables(), t.vars)
		if err != nil {
			return Output{}, err
		}
		data, err := t.tmpl.render(values, MaxOutputSize)
		if err != nil {
			return Output{}, fmt.Errorf("transform: %w", err)
		}
		if !t.tmpl.json {
			return Output{Data: data, ContentType: ContentTypeText}, nil
		}
		if !json.Valid(data) {
			// Cannot happen with valid values; checked so that a target never receives broken JSON as JSON.
			return Output{}, errors.New("transform: the template did not make valid JSON")
		}
		return Output{Data: data, ContentType: ContentTypeJSON}, nil
	}
}

// evaluation builds the JSON form of one event at most once, and only when a variable needs it; it computes each
// variable once.
type evaluation struct {
	e       *event.Event
	opts    *Options
	raw     []byte
	doc     any
	err     error
	encoded bool
	decoded bool
	vars    map[string]value
	// envRaw is the event in AWS's envelope, built once when needed.
	envRaw []byte
	envErr error
}

// values returns the values of the variables names, declared in vars or reserved.
func (ev *evaluation) values(names []string, vars map[string]*path) (map[string]value, error) {
	if ev.vars == nil {
		ev.vars = make(map[string]value, len(names))
	}
	for _, name := range names {
		if _, ok := ev.vars[name]; ok {
			continue
		}
		v, err := ev.variable(name, vars[name])
		if err != nil {
			return nil, err
		}
		ev.vars[name] = v
	}
	return ev.vars, nil
}

func (ev *evaluation) eventJSON() ([]byte, error) {
	if ev.opts.Envelope {
		return ev.envelope()
	}
	if !ev.encoded {
		ev.encoded = true
		ev.raw, ev.err = cloudevent.Marshal(ev.e)
		if ev.err == nil && !json.Valid(ev.raw) {
			ev.err = errors.New("its data is not the JSON its datacontenttype says")
		}
		if ev.err != nil {
			ev.err = fmt.Errorf("transform: the event's JSON form cannot be built: %w", ev.err)
		}
	}
	return ev.raw, ev.err
}

// envelope is the event in AWS's envelope.
func (ev *evaluation) envelope() ([]byte, error) {
	if ev.envRaw == nil && ev.envErr == nil {
		ev.envRaw, ev.envErr = awsevent.Envelope(ev.e, ev.opts.Account, ev.opts.Region)
		if ev.envErr != nil {
			ev.envErr = fmt.Errorf("transform: the event's envelope cannot be built: %w", ev.envErr)
		}
	}
	return ev.envRaw, ev.envErr
}

func (ev *evaluation) document() (any, error) {
	if !ev.decoded {
		ev.decoded = true
		raw, err := ev.eventJSON()
		if err != nil {
			return nil, err
		}
		ev.doc, ev.err = decode(raw)
		if ev.err != nil {
			ev.err = fmt.Errorf("transform: reading the event's JSON form: %w", ev.err)
		}
	}
	return ev.doc, ev.err
}

// lookup returns the value at p in the event's JSON form.
func (ev *evaluation) lookup(p *path) (value, error) {
	if p.root() {
		raw, err := ev.eventJSON()
		return value{found: true, raw: raw}, err
	}
	doc, err := ev.document()
	if err != nil {
		return value{}, err
	}
	v, ok := p.lookup(doc)
	if !ok {
		return value{}, nil
	}
	if s, ok := v.(string); ok {
		return value{found: true, isString: true, str: s}, nil
	}
	raw, err := encode(v)
	if err != nil {
		return value{}, fmt.Errorf("transform: %s: %w", p.text, err)
	}
	return value{found: true, raw: raw}, nil
}

// variable returns the value of a declared variable (p) or of a reserved one (p nil).
func (ev *evaluation) variable(name string, p *path) (value, error) {
	if p != nil {
		return ev.lookup(p)
	}
	str := func(s string) (value, error) {
		if s == "" {
			return value{}, nil
		}
		return value{found: true, isString: true, str: s}, nil
	}
	e := ev.e
	switch name {
	case VarID:
		return str(e.ID())
	case VarType:
		return str(e.Type())
	case VarSource:
		return str(e.Source())
	case VarSubject:
		return str(e.Subject())
	case VarSpecVersion:
		return str(e.SpecVersion())
	case VarDataContentType:
		return str(e.DataContentType())
	case VarDataSchema:
		return str(e.DataSchema())
	case VarTime:
		if e.Time().IsZero() {
			return value{}, nil
		}
		return str(e.Time().UTC().Format(time.RFC3339Nano))
	case VarEventJSON:
		raw, err := ev.eventJSON()
		return value{found: true, raw: raw}, err
	case VarAWSRuleName:
		return str(ev.opts.RuleName)
	case VarAWSRuleARN:
		return str(ev.opts.RuleARN)
	case VarAWSIngestionTime:
		if e.Time().IsZero() {
			return value{}, nil
		}
		return str(e.Time().UTC().Format(time.RFC3339))
	case VarAWSEventJSON:
		raw, err := ev.envelope()
		return value{found: true, raw: raw}, err
	case VarAWSEvent:
		raw, err := ev.envelope()
		if err != nil {
			return value{}, err
		}
		// The envelope's last member is detail; a string of the members before it cannot hold `,"detail":`
		// unescaped.
		if i := bytes.Index(raw, []byte(`,"detail":`)); i >= 0 {
			raw = append(raw[:i:i], '}')
		}
		return value{found: true, raw: raw}, nil
	}
	return value{}, nil
}

// encode writes a decoded JSON value back as JSON, without escaping <, > and & as encoding/json does by default.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
