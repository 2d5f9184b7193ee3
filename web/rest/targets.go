package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/health"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/domain/transform"
	"github.com/eventbridge-go/eventbridge/web"
)

// Target delivers the events its rule selects.
type Target struct {
	// Name may be absent in a PUT, which takes it from the path; when present it must equal the path's.
	Name string `json:"name" example:"hook"`
	// Type selects the sink that delivers: http (a URL), api-destination (an API destination of the account),
	// bus (another bus of the account) or log (the worker's log).
	Type   string       `json:"type" enums:"http,api-destination,bus,log" example:"http"`
	Config TargetConfig `json:"config"`
	// Format is what the target receives of each event: cloudevents (the CloudEvent, the default here) or aws
	// (Amazon EventBridge's envelope as the data, {"version": "0", "id": ..., "detail-type": ..., "detail": ...}, the
	// default of targets made through the AWS API); with aws, the input transformer sees that envelope
	// ($.detail...). A bus target forwards the event itself: cloudevents.
	Format string `json:"format,omitempty" enums:"cloudevents,aws" example:"cloudevents"`
	// RoleArn is the IAM role Amazon EventBridge would assume to call the target (at most 1600 bytes, an ARN).
	// Kept and answered for the AWS API's clients that declare one; it grants nothing here, where the roles of
	// API keys and access keys say who may do what.
	RoleArn string `json:"roleArn,omitempty" example:"arn:aws:iam::123456789012:role/invoke-api"`
	// DeadLetterConfig names a bus of the account that receives the events the target gives up, with the reason,
	// the attempts and the target in eb-dlq-* extensions; without it they go to the account's dead-letter stream.
	DeadLetterConfig *DeadLetterConfig `json:"deadLetterConfig,omitempty"`
	// InputTransformer, Input, InputPath and Transform are the target's input transformer, which makes the data
	// the target receives out of each event; at most one of them may be set, and without any (and without
	// attributes) the target receives the event as it is. Answers hold the one that is set.
	InputTransformer *InputTransformer `json:"inputTransformer,omitempty"`
	// Input is constant JSON text that replaces the data of every event.
	Input *string `json:"input,omitempty" example:"{\"status\": \"created\"}"`
	// InputPath is a JSON path selecting the part of the event that becomes the data ($ is the event, $.data its
	// payload).
	InputPath *string `json:"inputPath,omitempty" example:"$.data.order"`
	// Transform is an input transformer in Apache RocketMQ EventBridge's form.
	Transform *TransformParam `json:"transform,omitempty"`
	// Attributes sets CloudEvent attributes of the event the target receives: attribute name → text template of
	// its value. subject, type, source, dataschema and extensions (1 to 20 characters of a-z and 0-9) may be set,
	// at most 20, each template at most 1 KiB; specversion, id, time, datacontenttype, data and data_base64 may
	// not. The templates use the transformer's variables: with inputTransformer its inputPathsMap variables and
	// <ce.id>, <ce.type>, ...; with transform ${ce.id}, ... and TEMPLATE's variables, written ${name}; with
	// input, inputPath or alone <ce.id>, ... A template renders as text (strings as they are, other values as
	// JSON text, missing values as nothing, white space around the value dropped). An empty value removes the
	// attribute; for type and source it is an error, and the event is not delivered. Alone, attributes keep the
	// data as it is.
	Attributes  map[string]string `json:"attributes,omitempty" example:"subject:orders/<id>,orderid:<id>"`
	RetryPolicy RetryPolicy       `json:"retryPolicy"`
	// Status is the runtime state of the target's connector; read-only, ignored on input.
	Status    TargetStatus `json:"status" readonly:"true"`
	CreatedAt time.Time    `json:"createdAt" readonly:"true"`
	UpdatedAt time.Time    `json:"updatedAt" readonly:"true"`
} //@name Target

// DeadLetterConfig says where the events a target gives up go.
type DeadLetterConfig struct {
	// Bus is a bus of the same account, not the target's own.
	Bus string `json:"bus" example:"orders-dlq"`
} //@name DeadLetterConfig

// TargetConfig holds the keys of the target's type. For http: url (required), method (POST), headers, mode
// (binary) and timeout (5s). For api-destination: apiDestination. For bus: bus. For log: nothing. For a sink
// plugin of the runtime (type mqtt, ...): that plugin's own keys, as GET /api/v1/runtime/plugins/{p}/schema
// describes them (strings, numbers and booleans; secret values are answered as ***, which given back keeps
// the stored secret).
type TargetConfig struct {
	// URL is an absolute http or https URL.
	URL    string `json:"url,omitempty" example:"https://example.com/hook"`
	Method string `json:"method,omitempty" enums:"POST,PUT,PATCH,DELETE,GET" example:"POST"`
	// Headers are added to every request. The values of secret headers (Authorization, Cookie,
	// Proxy-Authorization, X-Api-Key and those of secretHeaders) are write-only: sealed when stored, answered as ***,
	// and *** given back keeps the stored value.
	Headers map[string]string `json:"headers,omitempty"`
	// SecretHeaders names more headers whose values are secret.
	SecretHeaders []string `json:"secretHeaders,omitempty" example:"X-Signature"`
	// APIDestination names an API destination of the account (api-destination targets).
	APIDestination string `json:"apiDestination,omitempty" example:"crm"`
	// PathParameterValues fill the "*" path segments of the API destination's endpoint from each event: one JSON
	// path each, in order (api-destination targets).
	PathParameterValues []string `json:"pathParameterValues,omitempty" example:"$.data.customerId"`
	// Bus names another bus of the account (bus targets); events are put on it as if with PutEvents.
	Bus string `json:"bus,omitempty" example:"audit"`
	// Mode is how the CloudEvent is encoded: binary (ce-* headers) or structured (application/cloudevents+json).
	Mode string `json:"mode,omitempty" enums:"binary,structured" example:"binary"`
	// Timeout of one request, a Go duration between 100ms and 1m.
	Timeout string `json:"timeout,omitempty" example:"5s"`
	// Keys are every key of the config as given (values as strings), the whole config of a plugin target.
	Keys map[string]string `json:"-" swaggerignore:"true"`
	// fieldsErr is why the keys could not be read as the fields (a built-in type's problem only).
	fieldsErr error
} //@name TargetConfig

// targetConfigFields are the keys TargetConfig has fields for.
var targetConfigFields = map[string]bool{"url": true, "method": true, "headers": true, "secretHeaders": true, "apiDestination": true,
	"pathParameterValues": true, "bus": true, "mode": true, "timeout": true}

// UnmarshalJSON reads the fields of the built-in types, and every key as a string into Keys (objects and arrays
// as their JSON text).
func (c *TargetConfig) UnmarshalJSON(b []byte) error {
	type fields TargetConfig
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	keys := make(map[string]string, len(raw))
	for k, v := range raw {
		var str string
		switch {
		case bytes.Equal(bytes.TrimSpace(v), []byte("null")):
			return fmt.Errorf("config.%s is null: give a string, a number or a boolean", k)
		case json.Unmarshal(v, &str) == nil:
		default:
			var buf bytes.Buffer
			if err := json.Compact(&buf, v); err != nil {
				return err
			}
			str = buf.String()
		}
		keys[k] = str
	}
	var f fields
	err := json.Unmarshal(b, &f)
	*c = TargetConfig(f)
	c.Keys, c.fieldsErr = keys, err
	return nil
}

// MarshalJSON writes Keys when they are set (a plugin target), else the fields.
func (c TargetConfig) MarshalJSON() ([]byte, error) {
	if c.Keys != nil {
		return json.Marshal(c.Keys)
	}
	type fields TargetConfig
	return json.Marshal(fields(c))
}

// InputTransformer is Amazon EventBridge's input transformer: variables bound to JSON paths of the event, and a
// template that uses them.
type InputTransformer struct {
	// InputPathsMap binds up to 100 variables (A-Z, a-z, 0-9, _ and -) to JSON paths of the event's JSON form:
	// $.data.orderId, $.data.items[0].sku, $.source, $['odd.key']. A path that does not exist gives null.
	InputPathsMap map[string]string `json:"inputPathsMap,omitempty"`
	// InputTemplate (at most 8 KiB) holds <variable> placeholders; <ce.id>, <ce.type>, <ce.source>,
	// <ce.subject>, <ce.time>, <ce.specversion>, <ce.datacontenttype>, <ce.dataschema> and <ce.event.json> (the
	// whole event) need no declaring. In a JSON template a string is inserted as a JSON string (escaped inside a
	// string literal) and a missing value as null; a template that is not JSON is text, where strings are
	// inserted as they are and missing values as nothing.
	InputTemplate string `json:"inputTemplate" example:"{\"order\": <id>, \"text\": \"Order <id> created\"}"`
} //@name InputTransformer

// TransformParam is an input transformer in Apache RocketMQ EventBridge's form (its TransformParam). ORIGINAL
// delivers the whole event as the data; CONSTANT delivers value; JSONPATH delivers the part of the event that the
// JSON path in value selects (a string as text); TEMPLATE fills template's ${variable} placeholders from value, a
// JSON object mapping variables to JSON paths written as a string.
type TransformParam struct {
	Form     string `json:"form" enums:"ORIGINAL,CONSTANT,JSONPATH,TEMPLATE" example:"TEMPLATE"`
	Value    string `json:"value,omitempty" example:"{\"content\": \"$.data.body\"}"`
	Template string `json:"template,omitempty" example:"{\"msgtype\": \"text\", \"text\": {\"content\": \"${content}\"}}"`
} //@name TransformParam

// transformSpec returns the domain form of the transformer fields of a DTO.
func transformSpec(it *InputTransformer, input, inputPath *string, tp *TransformParam, attrs map[string]string) transform.Spec {
	s := transform.Spec{Input: input, InputPath: inputPath, Attributes: attrs}
	if it != nil {
		s.InputTransformer = &transform.InputTransformer{InputPathsMap: it.InputPathsMap, InputTemplate: it.InputTemplate}
	}
	if tp != nil {
		s.Transform = &transform.Param{Form: transform.Form(tp.Form), Value: tp.Value, Template: tp.Template}
	}
	return s
}

// TransformDTO returns the transformer fields of a DTO for a domain transformer.
func TransformDTO(s transform.Spec) (it *InputTransformer, input, inputPath *string, tp *TransformParam, attrs map[string]string) {
	if s.InputTransformer != nil {
		it = &InputTransformer{InputPathsMap: s.InputTransformer.InputPathsMap, InputTemplate: s.InputTransformer.InputTemplate}
	}
	if s.Transform != nil {
		tp = &TransformParam{Form: string(s.Transform.Form), Value: s.Transform.Value, Template: s.Transform.Template}
	}
	return it, s.Input, s.InputPath, tp, s.Attributes
}

// RetryPolicy bounds redelivery of an event that failed; an absent field takes its default.
type RetryPolicy struct {
	// MaximumRetryAttempts is between 0 and 185 (default 185).
	MaximumRetryAttempts *int `json:"maximumRetryAttempts,omitempty" example:"185"`
	// MaximumEventAgeInSeconds is between 60 and 86400 (default 86400).
	MaximumEventAgeInSeconds *int `json:"maximumEventAgeInSeconds,omitempty" example:"86400"`
} //@name RetryPolicy

// TargetStatus is the runtime state of a target: PENDING until the runtime runs its connector, then the
// worker's state (RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED); its health, decided from what its tasks report of
// their deliveries (docs/health.md); the last failed delivery attempt and the last success.
type TargetStatus struct {
	State string       `json:"state" example:"RUNNING"`
	Tasks []TaskStatus `json:"tasks"`
	// LastError is why a task failed, else the error of the last failed attempt while no attempt succeeded since.
	LastError *string `json:"lastError"`
	// Health is PENDING, HEALTHY, RETRYING, FAILING, DEAD_LETTERING, PAUSED, STOPPED or FAILED.
	Health        string           `json:"health" example:"HEALTHY"`
	LastFailure   *DeliveryFailure `json:"lastFailure"`
	LastSuccessAt *time.Time       `json:"lastSuccessAt"`
	// Counters are what the target did since it was created, over pauses, restarts and moves to other workers
	// (the tasks' counters are since each started); absent until its runtime reported any.
	Counters *TaskCounters `json:"counters,omitempty"`
} //@name TargetStatus

// DeliveryFailure is a failed attempt of a target's delivery (or of a source's read or store).
type DeliveryFailure struct {
	At time.Time `json:"at"`
	// Attempt is the attempt of its record (1 for the first); absent for sources.
	Attempt uint64 `json:"attempt,omitempty" example:"3"`
	// ErrorClass is connection-refused, dns, timeout, tls, egress-refused, http-4xx, http-5xx, connection-reset,
	// unreachable, transform, refused (another status) or error.
	ErrorClass string `json:"errorClass" example:"connection-refused"`
	// HTTPStatus is the target's answer when it answered.
	HTTPStatus int    `json:"httpStatus,omitempty" example:"503"`
	Message    string `json:"message"`
	// Response is the start of the target's answer (at most 256 bytes), without secret values.
	Response string `json:"response,omitempty"`
} //@name DeliveryFailure

func taskCountersOf(n *target.Counters) *TaskCounters {
	if n == nil {
		return nil
	}
	return &TaskCounters{Read: n.Read, Delivered: n.Delivered, Retried: n.Retried, DeadLettered: n.DeadLettered,
		Dropped: n.Dropped, Failed: n.Failed, Filtered: n.Filtered}
}

func failureOf(f *health.Failure) *DeliveryFailure {
	if f == nil {
		return nil
	}
	return &DeliveryFailure{At: f.At, Attempt: f.Attempt, ErrorClass: f.Class, HTTPStatus: f.Status, Message: f.Message,
		Response: f.Response}
}

// timeOrNil is t, or nil when t is zero.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// TaskStatus is the runtime state of one task of a target's connector.
type TaskStatus struct {
	ID       int    `json:"id" example:"0"`
	State    string `json:"state" example:"RUNNING"`
	WorkerID string `json:"workerId" example:"w1"`
	// Counters are what the task did with records since it started on its worker; absent when it does not run.
	Counters *TaskCounters `json:"counters,omitempty"`
} //@name TaskStatus

// TaskCounters count what a target, or one of its tasks, did with records.
type TaskCounters struct {
	Read         uint64 `json:"read"`
	Delivered    uint64 `json:"delivered"`
	Retried      uint64 `json:"retried"`
	DeadLettered uint64 `json:"deadLettered"`
	Dropped      uint64 `json:"dropped"`
	Failed       uint64 `json:"failed"`
	Filtered     uint64 `json:"filtered"`
} //@name TaskCounters

// TargetList is the targets of a rule (at most 5, so unpaged).
type TargetList struct {
	Targets []Target `json:"targets"`
} //@name TargetList

func (a *api) targetOf(c *gin.Context, t *target.Target) Target {
	h := t.HTTP()
	rp := t.RetryPolicy()
	out := Target{
		Name:        t.Name(),
		Type:        string(t.Type()),
		Format:      string(t.Format()),
		RoleArn:     t.RoleARN(),
		Config:      TargetConfig{APIDestination: t.APIDestination(), PathParameterValues: t.PathParameterValues(), Bus: t.Bus()},
		RetryPolicy: RetryPolicy{MaximumRetryAttempts: &rp.MaximumRetryAttempts, MaximumEventAgeInSeconds: &rp.MaximumEventAgeInSeconds},
		Status:      targetStatusOf(a.s.Targets.Status(c.Request.Context(), t)),
		CreatedAt:   t.CreatedAt(),
		UpdatedAt:   t.UpdatedAt(),
	}
	if t.Type() == target.HTTP {
		out.Config = TargetConfig{URL: h.URL, Method: h.Method, Headers: h.PublicHeaders(), SecretHeaders: h.SecretHeaders,
			Mode: string(h.Mode), Timeout: h.Timeout.String()}
	}
	if t.Type().IsPlugin() {
		out.Config = TargetConfig{Keys: t.PublicConfig()}
	}
	if dl := t.DeadLetterBus(); dl != "" {
		out.DeadLetterConfig = &DeadLetterConfig{Bus: dl}
	}
	out.InputTransformer, out.Input, out.InputPath, out.Transform, out.Attributes = TransformDTO(t.Transformer())
	return out
}

func targetStatusOf(st *target.Status) TargetStatus {
	out := TargetStatus{State: st.State, Tasks: make([]TaskStatus, 0, len(st.Tasks)), Health: st.Health,
		LastFailure: failureOf(st.LastFailure), LastSuccessAt: timeOrNil(st.LastSuccessAt)}
	for _, ts := range st.Tasks {
		out.Tasks = append(out.Tasks, TaskStatus{ID: ts.ID, State: ts.State, WorkerID: ts.WorkerID, Counters: taskCountersOf(ts.Counters)})
	}
	out.Counters = taskCountersOf(st.Counters)
	if st.LastError != "" {
		out.LastError = &st.LastError
	}
	return out
}

// Spec returns the domain form of the target; absent retry policy fields take their defaults.
func (t Target) Spec() (target.Spec, error) {
	spec := target.Spec{
		Name:    t.Name,
		Type:    target.Type(t.Type),
		Format:  target.Format(t.Format),
		RoleARN: t.RoleArn,
		HTTP: target.HTTPConfig{
			URL: t.Config.URL, Method: t.Config.Method, Headers: t.Config.Headers, SecretHeaders: t.Config.SecretHeaders,
			Mode: target.Mode(t.Config.Mode),
		},
		APIDestination:      t.Config.APIDestination,
		PathParameterValues: t.Config.PathParameterValues,
		Bus:                 t.Config.Bus,
		Transformer:         transformSpec(t.InputTransformer, t.Input, t.InputPath, t.Transform, t.Attributes),
		RetryPolicy:         target.DefaultRetryPolicy(),
	}
	if spec.Type.IsPlugin() {
		spec.HTTP, spec.APIDestination, spec.PathParameterValues, spec.Bus = target.HTTPConfig{}, "", nil, ""
		spec.Config = t.Config.Keys
		if spec.Config == nil {
			spec.Config = map[string]string{}
		}
	} else {
		if err := t.Config.fieldsErr; err != nil {
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) && typ.Field != "" {
				return target.Spec{}, web.Malformed("config."+typ.Field, "config.%s must be %s, not a JSON %s", typ.Field, web.JSONKind(typ.Type), typ.Value)
			}
			return target.Spec{}, web.Malformed("config", "config cannot be read: %s", err)
		}
		for k := range t.Config.Keys {
			if !targetConfigFields[k] {
				return target.Spec{}, web.Malformed("config."+k, "unknown field %q: %s targets have no such config key", "config."+k, spec.Type)
			}
		}
	}
	if t.DeadLetterConfig != nil {
		if t.DeadLetterConfig.Bus == "" {
			return target.Spec{}, domain.Invalid("deadLetterConfig.bus", "deadLetterConfig.bus is required (or leave deadLetterConfig out)")
		}
		spec.DeadLetterBus = t.DeadLetterConfig.Bus
	}
	if p := t.RetryPolicy.MaximumRetryAttempts; p != nil {
		spec.RetryPolicy.MaximumRetryAttempts = *p
	}
	if p := t.RetryPolicy.MaximumEventAgeInSeconds; p != nil {
		spec.RetryPolicy.MaximumEventAgeInSeconds = *p
	}
	if spec.Type.IsPlugin() {
		return spec, nil
	}
	if spec.Type == target.APIDestination || spec.Type == target.Bus || spec.Type == target.Log {
		c := t.Config
		if c.URL != "" || c.Method != "" || len(c.Headers) > 0 || len(c.SecretHeaders) > 0 || c.Mode != "" || c.Timeout != "" {
			return target.Spec{}, domain.Invalid("config", "config of a %s target takes no url, method, headers, secretHeaders, mode or timeout", spec.Type)
		}
	}
	if spec.Type != target.APIDestination && (t.Config.APIDestination != "" || len(t.Config.PathParameterValues) > 0) {
		return target.Spec{}, domain.Invalid("config.apiDestination", "config.apiDestination is for api-destination targets")
	}
	if spec.Type != target.Bus && t.Config.Bus != "" {
		return target.Spec{}, domain.Invalid("config.bus", "config.bus is for bus targets")
	}
	if t.Config.Timeout != "" {
		d, err := time.ParseDuration(t.Config.Timeout)
		if err != nil {
			return target.Spec{}, domain.Invalid("config.timeout", "config.timeout %q is not a duration such as \"5s\"", t.Config.Timeout)
		}
		if d == 0 {
			return target.Spec{}, domain.Invalid("config.timeout", "config.timeout must be between 100ms and %s", target.MaxTimeout)
		}
		spec.HTTP.Timeout = d
	}
	return spec, nil
}

// listTargets answers the targets of a rule, ordered by name.
//
//	@Summary	List the targets of a rule
//	@Tags		targets
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		rule			path		string	true	"rule name"
//	@Success	200				{object}	TargetList
//	@Failure	404				{object}	web.Problem	"BusNotFound, RuleNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/rules/{rule}/targets [get]
func (a *api) listTargets(c *gin.Context) {
	ts, err := a.s.Targets.List(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("rule"))
	if err != nil {
		a.writeError(c, err)
		return
	}
	out := TargetList{Targets: make([]Target, 0, len(ts))}
	for _, t := range ts {
		out.Targets = append(out.Targets, a.targetOf(c, t))
	}
	c.PureJSON(http.StatusOK, out) // templates hold < and >: not escaped, so they read as written
}

// getTarget answers one target with its runtime status.
//
//	@Summary	Get a target
//	@Tags		targets
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		rule			path		string	true	"rule name"
//	@Param		target			path		string	true	"target name"
//	@Success	200				{object}	Target
//	@Failure	404				{object}	web.Problem	"BusNotFound, RuleNotFound, TargetNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/rules/{rule}/targets/{target} [get]
func (a *api) getTarget(c *gin.Context) {
	t, err := a.s.Targets.Get(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("rule"), c.Param("target"))
	if err != nil {
		a.writeError(c, err)
		return
	}
	c.PureJSON(http.StatusOK, a.targetOf(c, t))
}

// putTarget creates the target (201) or replaces its configuration (200).
//
//	@Summary		Create or replace a target
//	@Description	A new target receives every event routed to its rule after the call answered. A rule has at most 5 targets.
//	@Description	An input transformer (one of inputTransformer, input, inputPath and transform) shapes the data the
//	@Description	target receives, and attributes sets CloudEvent attributes (subject, type, source, dataschema,
//	@Description	extensions) of the event it receives; try them with POST /api/v1/test-input-transformer.
//	@Tags			targets
//	@Accept			json
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			bus				path		string	true	"bus name"
//	@Param			rule			path		string	true	"rule name"
//	@Param			target			path		string	true	"target name"
//	@Param			body			body		Target	true	"the target; its name may be absent, its status is ignored"
//	@Success		200				{object}	Target	"replaced"
//	@Success		201				{object}	Target	"created"
//	@Failure		400				{object}	web.Problem	"invalid input (ValidationError, MalformedRequest)"
//	@Failure		404				{object}	web.Problem	"BusNotFound, RuleNotFound"
//	@Failure		409				{object}	web.Problem	"LimitExceeded: the rule has 5 targets already"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/buses/{bus}/rules/{rule}/targets/{target} [put]
func (a *api) putTarget(c *gin.Context) {
	var in Target
	if err := web.DecodeJSON(c, &in); err != nil {
		a.writeError(c, err)
		return
	}
	name := c.Param("target")
	if in.Name != "" && in.Name != name {
		a.writeError(c, domain.Invalid("name", "name %q differs from the target %q of the path; targets cannot be renamed", in.Name, name))
		return
	}
	in.Name = name
	spec, err := in.Spec()
	if err != nil {
		a.writeError(c, err)
		return
	}
	t, created, err := a.s.Targets.Put(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("rule"), spec)
	if err != nil {
		a.writeError(c, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	c.PureJSON(status, a.targetOf(c, t))
}

// deleteTarget deletes a target and its connector.
//
//	@Summary	Delete a target
//	@Tags		targets
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's own)"
//	@Param		bus				path	string	true	"bus name"
//	@Param		rule			path	string	true	"rule name"
//	@Param		target			path	string	true	"target name"
//	@Success	204
//	@Failure	404	{object}	web.Problem	"BusNotFound, RuleNotFound, TargetNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/rules/{rule}/targets/{target} [delete]
func (a *api) deleteTarget(c *gin.Context) (int, any, error) {
	if err := a.s.Targets.Delete(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("rule"), c.Param("target")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
