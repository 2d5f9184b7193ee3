package aws

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain/awsevent"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/domain/transform"
	"github.com/eventbridge-go/eventbridge/web"
)

// Target is a target as PutTargets takes it and ListTargetsByRule answers it. Its Arn says what it is (see
// specOf): an API destination, an event bus, or one of this product's own types (OwnService).
type Target struct {
	ID               string            `json:"Id"`
	Arn              string            `json:"Arn"`
	RoleArn          string            `json:"RoleArn,omitempty"`
	Input            *string           `json:"Input,omitempty"`
	InputPath        *string           `json:"InputPath,omitempty"`
	InputTransformer *InputTransformer `json:"InputTransformer,omitempty"`
	RetryPolicy      *RetryPolicy      `json:"RetryPolicy,omitempty"`
	DeadLetterConfig *DeadLetterConfig `json:"DeadLetterConfig,omitempty"`
	HTTPParameters   *HTTPParameters   `json:"HttpParameters,omitempty"`
}

// InputTransformer is AWS's input transformer.
type InputTransformer struct {
	InputPathsMap map[string]string `json:"InputPathsMap,omitempty"`
	InputTemplate string            `json:"InputTemplate"`
}

// RetryPolicy is AWS's retry policy of a target.
type RetryPolicy struct {
	MaximumRetryAttempts     *int `json:"MaximumRetryAttempts,omitempty"`
	MaximumEventAgeInSeconds *int `json:"MaximumEventAgeInSeconds,omitempty"`
}

// DeadLetterConfig names where the events a target gives up go: here, an event bus of the account.
type DeadLetterConfig struct {
	Arn string `json:"Arn,omitempty"`
}

// HTTPParameters are the path parameters of an API destination target and the headers of an http one.
type HTTPParameters struct {
	PathParameterValues   []string          `json:"PathParameterValues,omitempty"`
	HeaderParameters      map[string]string `json:"HeaderParameters,omitempty"`
	QueryStringParameters map[string]string `json:"QueryStringParameters,omitempty"`
}

// targetMembers are the members of a target this API reads; a target with another (KinesisParameters,
// SqsParameters, EcsParameters, ...) fails, naming it, rather than being stored without it.
var targetMembers = []string{"Id", "Arn", "RoleArn", "Input", "InputPath", "InputTransformer", "RetryPolicy",
	"DeadLetterConfig", "HttpParameters"}

// FailedEntry is a target that PutTargets or RemoveTargets could not put or remove.
type FailedEntry struct {
	TargetID     string `json:"TargetId"`
	ErrorCode    string `json:"ErrorCode"`
	ErrorMessage string `json:"ErrorMessage"`
}

// maxTargetsPerCall is how many targets one PutTargets call may put, as in AWS (a rule keeps target.MaxPerRule).
const maxTargetsPerCall = 10

type putTargetsIn struct {
	Rule         string
	EventBusName string
	Targets      []json.RawMessage
}

type failedEntries struct {
	FailedEntryCount int           `json:"FailedEntryCount"`
	FailedEntries    []FailedEntry `json:"FailedEntries"`
}

// putTargets puts each target on the rule, creating or replacing it by its Id; a target that fails is a failed
// entry with its error, the others are put.
func (a *api) putTargets(c *gin.Context, in *putTargetsIn) (any, error) {
	if len(in.Targets) == 0 || len(in.Targets) > maxTargetsPerCall {
		return nil, validation("Parameter Targets must have between 1 and %d members.", maxTargetsPerCall)
	}
	busName, _, err := a.lookupRule(c, "EventBusName", in.EventBusName, in.Rule)
	if err != nil {
		return nil, err
	}
	out := failedEntries{FailedEntries: []FailedEntry{}}
	for _, raw := range in.Targets {
		id, err := a.putTarget(c, busName, in.Rule, raw)
		if err != nil {
			_, e := a.errorOf(c, err)
			out.FailedEntries = append(out.FailedEntries, FailedEntry{TargetID: id, ErrorCode: e.Type, ErrorMessage: e.Message})
		}
	}
	out.FailedEntryCount = len(out.FailedEntries)
	return out, nil
}

// putTarget reads one target and puts it; it returns the target's Id (what could be read of it) and its error.
func (a *api) putTarget(c *gin.Context, busName, ruleName string, raw json.RawMessage) (string, error) {
	var members map[string]json.RawMessage
	var t Target
	if err := json.Unmarshal(raw, &members); err != nil {
		return "", &Error{Type: excSerialization, Message: "A target must be a JSON object."}
	}
	_ = json.Unmarshal(members["Id"], &t.ID) // a wrong type is reported below
	for k := range members {
		if !slices.Contains(targetMembers, k) {
			return t.ID, refuseUnsupported("Targets."+k, "this target parameter has no counterpart here")
		}
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return t.ID, &Error{Type: excSerialization, Message: "The target is not valid: " + err.Error()}
	}
	if t.ID == "" {
		return "", validation("Parameter Targets.Id is required.")
	}
	spec, err := a.specOf(c, t)
	if err != nil {
		return t.ID, err
	}
	_, _, err = a.s.Targets.Put(c.Request.Context(), web.AccountOf(c), busName, ruleName, spec)
	return t.ID, err
}

// specOf is the target that an AWS target declares.
func (a *api) specOf(c *gin.Context, t Target) (target.Spec, error) {
	spec := target.Spec{Name: t.ID, RetryPolicy: target.DefaultRetryPolicy(), RoleARN: t.RoleArn}
	n, ok := parseARN(t.Arn)
	if !ok {
		return spec, validation("Parameter Targets.Arn %q is not an ARN.", t.Arn)
	}
	if n.region != a.region || n.account != accountNumber(c) {
		return spec, validation("Parameter Targets.Arn %q is not in this account and region (%s, %s): targets in "+
			"other accounts are not supported.", t.Arn, accountNumber(c), a.region)
	}
	hp := t.HTTPParameters
	if hp == nil {
		hp = &HTTPParameters{}
	}
	if len(hp.QueryStringParameters) > 0 {
		return spec, refuseUnsupported("HttpParameters.QueryStringParameters", "targets here take no query parameters")
	}
	kind, rest, _ := strings.Cut(n.resource, "/")
	switch {
	case n.service == Service && kind == "api-destination" && rest != "":
		name, _, _ := strings.Cut(rest, "/") // AWS's ARN ends in the destination's id
		spec.Type, spec.APIDestination = target.APIDestination, name
		for _, v := range hp.PathParameterValues {
			spec.PathParameterValues = append(spec.PathParameterValues, deliveredPath(v))
		}
	case n.service == Service && kind == "event-bus" && rest != "":
		spec.Type, spec.Bus = target.Bus, rest
	case n.service == OwnService && kind == "http" && validURL(rest):
		spec.Type, spec.HTTP = target.HTTP, target.HTTPConfig{URL: rest, Headers: hp.HeaderParameters}
	case n.service == OwnService && n.resource == "log":
		spec.Type = target.Log
	default:
		return spec, validation("Parameter Targets.Arn %q names no target type of this API: an API destination "+
			"(arn:aws:events:<region>:<account>:api-destination/<name>), an event bus (...:event-bus/<name>), or "+
			"arn:aws:%s:<region>:<account>:http/<url> or ...:log (docs/aws-api.md).", t.Arn, OwnService)
	}
	if len(hp.PathParameterValues) > 0 && spec.Type != target.APIDestination {
		return spec, validation("Parameter HttpParameters.PathParameterValues applies to API destination targets only.")
	}
	if len(hp.PathParameterValues) > 0 && (t.Input != nil || t.InputPath != nil || t.InputTransformer != nil) {
		// Path parameters are read from the event the target delivers; AWS reads them from the event before.
		return spec, refuseUnsupported("HttpParameters.PathParameterValues", "with an input transformer, they would "+
			"be read from the transformed event; give them without one")
	}
	if len(hp.HeaderParameters) > 0 && spec.Type != target.HTTP {
		return spec, refuseUnsupported("HttpParameters.HeaderParameters", "headers are set on http targets here, "+
			"and on an API destination's connection")
	}
	if p := t.RetryPolicy; p != nil {
		if p.MaximumRetryAttempts != nil {
			spec.RetryPolicy.MaximumRetryAttempts = *p.MaximumRetryAttempts
		}
		if p.MaximumEventAgeInSeconds != nil {
			spec.RetryPolicy.MaximumEventAgeInSeconds = *p.MaximumEventAgeInSeconds
		}
	}
	if d := t.DeadLetterConfig; d != nil && d.Arn != "" {
		name, err := a.busName(c, "DeadLetterConfig.Arn", d.Arn)
		if err != nil || !strings.HasPrefix(d.Arn, "arn:") {
			return spec, validation("Parameter DeadLetterConfig.Arn %q is not the ARN of an event bus of this "+
				"account: dead letters go to a bus here (SQS queues do not exist).", d.Arn)
		}
		spec.DeadLetterBus = name
	}
	if spec.Type != target.Bus { // a bus target forwards the event itself
		spec.Format = target.FormatAWS
	}
	tr, err := transformerOf(t)
	spec.Transformer = tr
	return spec, err
}

// deliveredPath is a path over AWS's envelope ($.detail.id) as a path over the event an API destination target in
// AWS's format delivers, whose data is that envelope ($.data.detail.id): the http sink reads path parameters there.
func deliveredPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "$"); ok {
		return "$.data" + rest
	}
	return p
}

// writtenPath is deliveredPath the other way round.
func writtenPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "$.data"); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
		return "$" + rest
	}
	return p
}

// transformerOf is the input transformer of Input, InputPath or InputTransformer, kept as written: a target in
// AWS's format sees AWS's envelope ($.detail..., <aws.events.rule-name>, ...).
func transformerOf(t Target) (transform.Spec, error) {
	var s transform.Spec
	n := 0
	if t.Input != nil {
		n++
		s.Input = t.Input
	}
	if t.InputPath != nil {
		n++
		s.InputPath = t.InputPath
	}
	if it := t.InputTransformer; it != nil {
		n++
		s.InputTransformer = &transform.InputTransformer{InputPathsMap: it.InputPathsMap, InputTemplate: it.InputTemplate}
	}
	if n > 1 {
		return s, validation("Only one of Input, InputPath and InputTransformer may be given.")
	}
	return s, nil
}

// targetARN is the ARN that describes the target t (see specOf).
func (a *api) targetARN(c *gin.Context, t *target.Target) string {
	switch t.Type() {
	case target.APIDestination:
		return a.apiDestinationARN(c, t.APIDestination())
	case target.Bus:
		return a.busARN(c, t.Bus())
	case target.HTTP:
		return a.ownARN(c, "http/"+t.HTTP().URL)
	case target.Log:
		return a.ownARN(c, "log")
	}
	return a.ownARN(c, "plugin/"+string(t.Type()))
}

// targetOut is t as AWS describes targets; the parts a target of /api/v1 has beyond AWS's (a RocketMQ transform,
// attributes, a plugin's config) are not shown.
func (a *api) targetOut(c *gin.Context, t *target.Target) Target {
	out := Target{ID: t.Name(), Arn: a.targetARN(c, t), RoleArn: t.RoleARN()}
	// AWS answers a retry policy only when one was set; a target here always has one, so the default (AWS's
	// too) reads back as none, and Terraform sees what it wrote.
	if p := t.RetryPolicy(); p != target.DefaultRetryPolicy() {
		out.RetryPolicy = &RetryPolicy{MaximumRetryAttempts: &p.MaximumRetryAttempts, MaximumEventAgeInSeconds: &p.MaximumEventAgeInSeconds}
	}
	if b := t.DeadLetterBus(); b != "" {
		out.DeadLetterConfig = &DeadLetterConfig{Arn: a.busARN(c, b)}
	}
	switch t.Type() {
	case target.APIDestination:
		if pv := t.PathParameterValues(); len(pv) > 0 {
			out.HTTPParameters = &HTTPParameters{}
			for _, v := range pv {
				if t.Format() == target.FormatAWS {
					v = writtenPath(v)
				} else {
					v = awsevent.PathForAWS(v)
				}
				out.HTTPParameters.PathParameterValues = append(out.HTTPParameters.PathParameterValues, v)
			}
		}
	case target.HTTP:
		if h := t.HTTP().PublicHeaders(); len(h) > 0 {
			out.HTTPParameters = &HTTPParameters{HeaderParameters: h}
		}
	}
	// A target in AWS's format has its paths over AWS's envelope, as written; one in the CloudEvents format has
	// them over the CloudEvent, which AWS's clients read in the envelope's names.
	path := awsevent.PathForAWS
	if t.Format() == target.FormatAWS {
		path = func(p string) string { return p }
	}
	tr := t.Transformer()
	out.Input = tr.Input
	if tr.InputPath != nil {
		p := path(*tr.InputPath)
		out.InputPath = &p
	}
	if it := tr.InputTransformer; it != nil {
		paths := make(map[string]string, len(it.InputPathsMap))
		for k, v := range it.InputPathsMap {
			paths[k] = path(v)
		}
		out.InputTransformer = &InputTransformer{InputPathsMap: paths, InputTemplate: it.InputTemplate}
	}
	return out
}

type removeTargetsIn struct {
	Rule         string
	EventBusName string
	IDs          []string `json:"Ids"`
	Force        bool
}

// removeTargets removes the targets of the rule with the Ids; an Id that names no target is removed already.
func (a *api) removeTargets(c *gin.Context, in *removeTargetsIn) (any, error) {
	if len(in.IDs) == 0 {
		return nil, validation("Parameter Ids must have at least 1 member.")
	}
	busName, _, err := a.lookupRule(c, "EventBusName", in.EventBusName, in.Rule)
	if err != nil {
		return nil, err
	}
	out := failedEntries{FailedEntries: []FailedEntry{}}
	for _, id := range in.IDs {
		err := a.s.Targets.Delete(c.Request.Context(), web.AccountOf(c), busName, in.Rule, id)
		if err != nil && !errors.Is(err, target.ErrNotFound) {
			_, e := a.errorOf(c, a.ruleError(busName, in.Rule, err))
			out.FailedEntries = append(out.FailedEntries, FailedEntry{TargetID: id, ErrorCode: e.Type, ErrorMessage: e.Message})
		}
	}
	out.FailedEntryCount = len(out.FailedEntries)
	return out, nil
}

type listTargetsIn struct {
	Rule         string
	EventBusName string
	NextToken    string
	Limit        *int
}

func (a *api) listTargetsByRule(c *gin.Context, in *listTargetsIn) (any, error) {
	if in.Rule == "" {
		return nil, validation("Parameter Rule is required.")
	}
	busName, err := a.busName(c, "EventBusName", in.EventBusName)
	if err != nil {
		return nil, err
	}
	ts, err := a.targetsOf(c, busName, in.Rule)
	if err != nil {
		return nil, err
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name() < ts[j].Name() })
	page, next, err := pageOf(ts, in.NextToken, in.Limit)
	if err != nil {
		return nil, err
	}
	out := struct {
		Targets   []Target `json:"Targets"`
		NextToken string   `json:"NextToken,omitempty"`
	}{Targets: make([]Target, 0, len(page)), NextToken: next}
	for _, t := range page {
		out.Targets = append(out.Targets, a.targetOut(c, t))
	}
	return out, nil
}
