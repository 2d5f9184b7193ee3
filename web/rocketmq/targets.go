package rocketmq

import (
	"context"
	"errors"
	"fmt"
	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/web/rest"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/target"
)

// Targets in RocketMQ EventBridge's shapes: dto/target/CreateTargetsRequest.java, UpdateTargetsRequest.java,
// DeleteTargetsRequest.java, ListTargetsRequest.java, ListTargetsResponse.java, EventTargetDTO.java,
// RunOptionsDTO.java, RetryStrategyDTO.java and DeadLetterQueueDTO.java of apache/rocketmq-eventbridge's
// adapter/api; the values of pushRetryStrategy and errorsTolerance are its PushRetryStrategyEnum and
// ErrorToleranceEnum.
//
// className selects the target type. RocketMQ EventBridge registers its target classes as rows of its
// event_target_class table (adapter/persistence/.../db/migration: acs.eventbridge, acs.dingtalk, file). Our types
// are accepted by their names (http, api-destination, bus, log), and two classNames of the EventBridge family
// map to ours: acs.api.destination (Alibaba Cloud EventBridge's API-destination target, whose open-source
// counterpart RocketMQ EventBridge's API destinations are) is api-destination, and acs.eventbridge (delivery to
// an event bus) is bus, on a bus of the same account named by config.bus: its Alibaba Cloud keys (RegionId,
// AliyunAccountId, AliyunEventBus, AccessKeyId, AccessKeySecret) do not map and are ignored, so config.bus is
// required. acs.dingtalk and file have no equivalent; they and any other className are EventTargetClassNotExist
// naming the supported ones. Answers carry our type names. config holds the keys of the type as /api/v1 has them
// (http: url, method, headers, mode, timeout; api-destination: apiDestination, pathParameterValues; bus: bus;
// log: none) and the target's input transformer (inputTransformer, input, inputPath, transform in RocketMQ
// EventBridge's {form, value, template} form, attributes), so that every target reads back whole through this API.
// runOptions.retryStrategy maps to the retry policy and runOptions.deadLetterQueue {type: bus, config: {bus}} to
// the dead-letter bus (/api/v1's deadLetterConfig.bus); see rmqSpec for the rest.

// rmqClasses are the classNames this API supports, in the order error messages list them, and the target type
// each one is.
var (
	rmqClasses     = []string{"http", "api-destination", "bus", "log", rmqClassAPIDestination, rmqClassEventBridge}
	rmqClassTypeOf = map[string]target.Type{
		"http": target.HTTP, "api-destination": target.APIDestination, "bus": target.Bus, "log": target.Log,
		rmqClassAPIDestination: target.APIDestination, rmqClassEventBridge: target.Bus,
	}
)

// ClassNames of the EventBridge family that map to our types.
const (
	rmqClassAPIDestination = "acs.api.destination"
	rmqClassEventBridge    = "acs.eventbridge"
)

// rmqDLQBus is the deadLetterQueue type of a dead-letter bus.
const rmqDLQBus = "bus"

// Values of RocketMQ EventBridge's PushRetryStrategyEnum and ErrorToleranceEnum.
const (
	rmqBackoffRetry          = "BACKOFF_RETRY"
	rmqExponentialDecayRetry = "EXPONENTIAL_DECAY_RETRY"
	rmqTolerateAll           = "ALL"
	rmqTolerateNone          = "NONE"
	// Attempts of RocketMQ EventBridge's strategies (PushRetryStrategyEnum): 3 and 176.
	rmqBackoffRetryAttempts          = 3
	rmqExponentialDecayRetryAttempts = 176
)

// RocketMQEventTarget is a target as RocketMQ EventBridge describes it (its EventTargetDTO).
type RocketMQEventTarget struct {
	EventTargetName string `json:"eventTargetName" example:"demo-target"`
	// ClassName is the target type: http, api-destination, bus or log; acs.api.destination is read as
	// api-destination and acs.eventbridge as bus. Answers carry the type's name.
	ClassName string `json:"className" example:"http"`
	// Config holds the keys of the target type and the target's input transformer.
	Config     RocketMQTargetConfig `json:"config"`
	RunOptions *RocketMQRunOptions  `json:"runOptions,omitempty"`
} //@name RocketMQEventTarget

// RocketMQTargetConfig is the config of a target: the keys of /api/v1's TargetConfig for its type (http: url,
// method, headers, mode, timeout; api-destination: apiDestination; bus: bus; log: none), and at most one of
// inputTransformer, input, inputPath and transform (with attributes) as /api/v1's Target has them.
type RocketMQTargetConfig struct {
	// URL is an absolute http or https URL.
	URL string `json:"url,omitempty" example:"https://example.com/hook"`
	// Method is POST (default), PUT, PATCH, DELETE or GET.
	Method string `json:"method,omitempty" example:"POST"`
	// Headers are added to every request; the values of secret headers are write-only (answered as ***).
	Headers map[string]string `json:"headers,omitempty"`
	// SecretHeaders names more headers whose values are secret (Authorization, Cookie, Proxy-Authorization and
	// X-Api-Key always are).
	SecretHeaders []string `json:"secretHeaders,omitempty"`
	// Mode is binary (default) or structured.
	Mode string `json:"mode,omitempty" example:"binary"`
	// Timeout of one request, a Go duration between 100ms and 1m (default 5s).
	Timeout string `json:"timeout,omitempty" example:"5s"`
	// APIDestination names an API destination of the account (api-destination targets).
	APIDestination string `json:"apiDestination,omitempty" example:"crm"`
	// PathParameterValues fill the "*" path segments of the API destination's endpoint from each event: one JSON
	// path each, in order (api-destination targets).
	PathParameterValues []string `json:"pathParameterValues,omitempty" example:"$.data.customerId"`
	// Bus names another bus of the account (bus targets).
	Bus              string                 `json:"bus,omitempty" example:"audit"`
	InputTransformer *rest.InputTransformer `json:"inputTransformer,omitempty"`
	Input            *string                `json:"input,omitempty"`
	InputPath        *string                `json:"inputPath,omitempty" example:"$.data"`
	Transform        *rest.TransformParam   `json:"transform,omitempty"`
	Attributes       map[string]string      `json:"attributes,omitempty"`
} //@name RocketMQTargetConfig

// RocketMQRunOptions are the delivery options of a target (RocketMQ EventBridge's RunOptionsDTO).
type RocketMQRunOptions struct {
	// ErrorsTolerance is ALL: an event that still fails after its retries is dead-lettered and delivery goes on.
	// NONE (stop at the first such event) is not supported.
	ErrorsTolerance string                 `json:"errorsTolerance,omitempty" enums:"ALL,NONE" example:"ALL"`
	RetryStrategy   *RocketMQRetryStrategy `json:"retryStrategy,omitempty"`
	// DeadLetterQueue {type: bus, config: {bus: NAME}} sends the events the target gives up to a bus of the
	// account (not the target's own), with the reason, the attempts and the target; without it they go to the
	// account's dead-letter stream.
	DeadLetterQueue *RocketMQDeadLetterQueue `json:"deadLetterQueue,omitempty"`
} //@name RocketMQRunOptions

// RocketMQRetryStrategy bounds redelivery of a failed event (RocketMQ EventBridge's RetryStrategyDTO).
type RocketMQRetryStrategy struct {
	// PushRetryStrategy picks the default number of attempts when maximumRetryAttempts is absent: 3 for
	// BACKOFF_RETRY, 176 for EXPONENTIAL_DECAY_RETRY (absent: 185). Retries always back off exponentially with
	// jitter, so answers say EXPONENTIAL_DECAY_RETRY.
	PushRetryStrategy string `json:"pushRetryStrategy,omitempty" enums:"BACKOFF_RETRY,EXPONENTIAL_DECAY_RETRY" example:"EXPONENTIAL_DECAY_RETRY"`
	// MaximumRetryAttempts is between 0 and 185.
	MaximumRetryAttempts *int `json:"maximumRetryAttempts,omitempty" example:"185"`
	// MaximumEventAgeInSeconds is between 60 and 86400 (default 86400).
	MaximumEventAgeInSeconds *int `json:"maximumEventAgeInSeconds,omitempty" example:"86400"`
} //@name RocketMQRetryStrategy

// RocketMQDeadLetterQueue is RocketMQ EventBridge's DeadLetterQueueDTO. Type bus (the one supported) takes the
// bus's name in config.bus.
type RocketMQDeadLetterQueue struct {
	Type   string         `json:"type" enums:"bus" example:"bus"`
	Config map[string]any `json:"config" swaggertype:"object,string" example:"bus:orders-dlq"`
} //@name RocketMQDeadLetterQueue

// RocketMQEventTargetsRequest creates or updates targets of a rule.
type RocketMQEventTargetsRequest struct {
	EventBusName  string                `json:"eventBusName" example:"demo-bus"`
	EventRuleName string                `json:"eventRuleName" example:"demo-rule"`
	EventTargets  []RocketMQEventTarget `json:"eventTargets"`
} //@name RocketMQEventTargetsRequest

// RocketMQDeleteEventTargetsRequest deletes targets of a rule.
type RocketMQDeleteEventTargetsRequest struct {
	EventBusName     string   `json:"eventBusName" example:"demo-bus"`
	EventRuleName    string   `json:"eventRuleName" example:"demo-rule"`
	EventTargetNames []string `json:"eventTargetNames"`
} //@name RocketMQDeleteEventTargetsRequest

// RocketMQListEventTargetsResponse is the targets of a rule (at most 5, so unpaged).
type RocketMQListEventTargetsResponse struct {
	RequestID     string                `json:"requestId"`
	EventBusName  string                `json:"eventBusName" example:"demo-bus"`
	EventRuleName string                `json:"eventRuleName" example:"demo-rule"`
	EventTargets  []RocketMQEventTarget `json:"eventTargets"`
} //@name RocketMQListEventTargetsResponse

// rmqTargetOf describes a target in this API's shape.
func rmqTargetOf(t *target.Target) RocketMQEventTarget {
	h := t.HTTP()
	rp := t.RetryPolicy()
	out := RocketMQEventTarget{
		EventTargetName: t.Name(),
		ClassName:       string(t.Type()),
		Config: RocketMQTargetConfig{APIDestination: t.APIDestination(), PathParameterValues: t.PathParameterValues(),
			Bus: t.Bus()},
		RunOptions: &RocketMQRunOptions{
			ErrorsTolerance: rmqTolerateAll,
			RetryStrategy: &RocketMQRetryStrategy{
				PushRetryStrategy:        rmqExponentialDecayRetry,
				MaximumRetryAttempts:     &rp.MaximumRetryAttempts,
				MaximumEventAgeInSeconds: &rp.MaximumEventAgeInSeconds,
			},
		},
	}
	if t.Type() == target.HTTP {
		out.Config.URL, out.Config.Method, out.Config.Headers, out.Config.SecretHeaders = h.URL, h.Method, h.PublicHeaders(), h.SecretHeaders
		out.Config.Mode, out.Config.Timeout = string(h.Mode), h.Timeout.String()
	}
	if dl := t.DeadLetterBus(); dl != "" {
		out.RunOptions.DeadLetterQueue = &RocketMQDeadLetterQueue{Type: rmqDLQBus, Config: map[string]any{"bus": dl}}
	}
	cf := &out.Config
	cf.InputTransformer, cf.Input, cf.InputPath, cf.Transform, cf.Attributes = rest.TransformDTO(t.Transformer())
	return out
}

// rmqSpec returns the domain form of a target: className as its type (rmqClassTypeOf); config as /api/v1's config
// and transformer fields; runOptions.retryStrategy as the retry policy; runOptions.deadLetterQueue of type bus as
// the dead-letter bus. errorsTolerance ALL is what targets do; NONE and other deadLetterQueue types are refused,
// since the domain has neither. Errors name the field in this API's terms.
func rmqSpec(in RocketMQEventTarget) (target.Spec, error) {
	typ, ok := rmqClassTypeOf[in.ClassName]
	switch {
	case in.ClassName == "":
		return target.Spec{}, errRMQInvalid.WithField("className").With("className is required; supported: %s", strings.Join(rmqClasses, ", "))
	case !ok:
		return target.Spec{}, errRMQTargetClassNotExist.WithField("className").With("className %q is not supported; supported: %s",
			clip(in.ClassName, 64), strings.Join(rmqClasses, ", "))
	}
	cf := in.Config
	v1 := rest.Target{
		Name: in.EventTargetName,
		Type: string(typ),
		Config: rest.TargetConfig{URL: cf.URL, Method: cf.Method, Headers: cf.Headers, SecretHeaders: cf.SecretHeaders, Mode: cf.Mode, Timeout: cf.Timeout,
			APIDestination: cf.APIDestination, PathParameterValues: cf.PathParameterValues, Bus: cf.Bus},
		InputTransformer: cf.InputTransformer, Input: cf.Input, InputPath: cf.InputPath, Transform: cf.Transform,
		Attributes: cf.Attributes,
	}
	if ro := in.RunOptions; ro != nil {
		switch ro.ErrorsTolerance {
		case "", rmqTolerateAll:
		case rmqTolerateNone:
			return target.Spec{}, errRMQInvalid.WithField("runOptions.errorsTolerance").With("runOptions.errorsTolerance %s is not supported: "+
				"an event that still fails after its retries is dead-lettered and delivery goes on (%s)", rmqTolerateNone, rmqTolerateAll)
		default:
			return target.Spec{}, errRMQInvalid.WithField("runOptions.errorsTolerance").With("runOptions.errorsTolerance must be %s or %s, not %q",
				rmqTolerateAll, rmqTolerateNone, ro.ErrorsTolerance)
		}
		if dlq := ro.DeadLetterQueue; dlq != nil && (dlq.Type != "" || len(dlq.Config) > 0) {
			dl, err := rmqDeadLetterBus(dlq)
			if err != nil {
				return target.Spec{}, err
			}
			v1.DeadLetterConfig = &rest.DeadLetterConfig{Bus: dl}
		}
		if rs := ro.RetryStrategy; rs != nil {
			v1.RetryPolicy = rest.RetryPolicy{MaximumRetryAttempts: rs.MaximumRetryAttempts, MaximumEventAgeInSeconds: rs.MaximumEventAgeInSeconds}
			var attempts int
			switch rs.PushRetryStrategy {
			case "":
			case rmqBackoffRetry:
				attempts = rmqBackoffRetryAttempts
			case rmqExponentialDecayRetry:
				attempts = rmqExponentialDecayRetryAttempts
			default:
				return target.Spec{}, errRMQInvalid.WithField("runOptions.retryStrategy.pushRetryStrategy").With(
					"runOptions.retryStrategy.pushRetryStrategy must be %s or %s, not %q", rmqBackoffRetry, rmqExponentialDecayRetry, rs.PushRetryStrategy)
			}
			if attempts > 0 && v1.RetryPolicy.MaximumRetryAttempts == nil {
				v1.RetryPolicy.MaximumRetryAttempts = &attempts
			}
		}
	}
	spec, err := v1.Spec()
	if err != nil {
		return target.Spec{}, rmqTargetError(err)
	}
	return spec, nil
}

// rmqDeadLetterBus returns the bus that a deadLetterQueue names: type bus with the bus's name in config.bus.
// RocketMQ EventBridge's other dead-letter queues (a RocketMQ topic or a queue of another product) do not map.
func rmqDeadLetterBus(dlq *RocketMQDeadLetterQueue) (string, error) {
	const f = "runOptions.deadLetterQueue"
	if dlq.Type != rmqDLQBus {
		return "", errRMQInvalid.WithField(f+".type").With("%s.type must be %s (a bus of the account, named in %s.config.bus), not %q; "+
			"other dead-letter queues are not supported", f, rmqDLQBus, f, clip(dlq.Type, 64))
	}
	name, ok := dlq.Config["bus"].(string)
	if !ok || name == "" {
		return "", errRMQInvalid.WithField(f+".config.bus").With("%s.config.bus is required: the name of a bus of the account", f)
	}
	for k := range dlq.Config {
		if k != "bus" {
			return "", errRMQInvalid.WithField(f+".config").With("%s.config takes only bus, not %q", f, clip(k, 64))
		}
	}
	return name, nil
}

// rmqTargetError names the fields of a target as this API does.
func rmqTargetError(err error) error {
	err = renameField(err, "deadLetterConfig.bus", "runOptions.deadLetterQueue.config.bus")
	return renameField(err, "retryPolicy.", "runOptions.retryStrategy.")
}

// prefixed returns err with its message and field prefixed by the target it is about.
func prefixed(i int, name string, err error) error {
	de, ok := domain.As(err)
	if !ok {
		return err
	}
	c := *de
	p := fmt.Sprintf("eventTargets[%d]", i)
	if c.Field != "" {
		c.Field = p + "." + c.Field
	}
	c.Message = fmt.Sprintf("%s (%q): %s", p, name, web.MessageOf(de))
	return &c
}

// decodeTargetsRequest reads a createEventTargets or updateEventTargets request and returns the domain form of its
// targets, validated, before anything is stored.
func (a *api) decodeTargetsRequest(c *gin.Context) (RocketMQEventTargetsRequest, []target.Spec, error) {
	var in RocketMQEventTargetsRequest
	if err := decodeRocketMQ(c, &in); err != nil {
		return in, nil, err
	}
	if err := required("eventBusName", in.EventBusName); err != nil {
		return in, nil, err
	}
	if err := required("eventRuleName", in.EventRuleName); err != nil {
		return in, nil, err
	}
	if len(in.EventTargets) == 0 {
		return in, nil, errRMQInvalid.WithField("eventTargets").With("eventTargets is required: at least one target")
	}
	if len(in.EventTargets) > target.MaxPerRule {
		return in, nil, errRMQInvalid.WithField("eventTargets").With("eventTargets has %d targets; a rule has at most %d", len(in.EventTargets), target.MaxPerRule)
	}
	specs := make([]target.Spec, len(in.EventTargets))
	seen := map[string]bool{}
	for i, t := range in.EventTargets {
		if err := domain.ValidateName("eventTargetName", t.EventTargetName); err != nil {
			return in, nil, prefixed(i, t.EventTargetName, recode(errRMQInvalid, err))
		}
		if seen[t.EventTargetName] {
			return in, nil, prefixed(i, t.EventTargetName, errRMQInvalid.WithField("eventTargetName").With("eventTargetName appears twice in eventTargets"))
		}
		seen[t.EventTargetName] = true
		spec, err := rmqSpec(t)
		if err == nil {
			// Validates the whole target (config, transformer, retry policy) before any of them is stored.
			_, err = target.New(web.AccountOf(c), "", "", spec, a.s.Targets.Sealer, time.Now())
			err = rmqTargetError(err)
		}
		if err != nil {
			return in, nil, prefixed(i, t.EventTargetName, err)
		}
		specs[i] = spec
	}
	return in, specs, nil
}

// targetNames returns the names of the rule's targets (its errors: the bus or the rule does not exist).
func (a *api) targetNames(ctx context.Context, accountID, busName, ruleName string) ([]string, error) {
	ts, err := a.s.Targets.List(ctx, accountID, busName, ruleName)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ts))
	for _, t := range ts {
		names = append(names, t.Name())
	}
	return names, nil
}

// rmqPutTargets stores targets after checking that each exists (update) or does not (create). A failure of the
// store after the first target leaves the ones before it stored: the domain has no call that stores several
// targets in one transaction.
func (a *api) rmqPutTargets(c *gin.Context, update bool) {
	in, specs, err := a.decodeTargetsRequest(c)
	if err != nil {
		a.writeRocketMQError(c, err)
		return
	}
	ctx := c.Request.Context()
	existing, err := a.targetNames(ctx, web.AccountOf(c), in.EventBusName, in.EventRuleName)
	if err != nil {
		a.writeRocketMQError(c, err)
		return
	}
	for _, s := range specs {
		exists := slices.Contains(existing, s.Name)
		if update && !exists {
			a.writeRocketMQError(c, errRMQTargetNotExist.With("the event target %q of event rule %q on event bus %q does not exist",
				s.Name, in.EventRuleName, in.EventBusName))
			return
		}
		if !update && exists {
			a.writeRocketMQError(c, errRMQTargetAlreadyExist.With("the event target %q of event rule %q on event bus %q already exists",
				s.Name, in.EventRuleName, in.EventBusName))
			return
		}
	}
	if !update && len(existing)+len(specs) > target.MaxPerRule {
		a.writeRocketMQError(c, target.ErrLimitExceeded.With("the event rule %q has %d targets; %d more would exceed the limit of %d",
			in.EventRuleName, len(existing), len(specs), target.MaxPerRule))
		return
	}
	for i, s := range specs {
		if _, _, err := a.s.Targets.Put(ctx, web.AccountOf(c), in.EventBusName, in.EventRuleName, s); err != nil {
			a.writeRocketMQError(c, prefixed(i, s.Name, rmqTargetError(err)))
			return
		}
	}
	c.JSON(http.StatusOK, RocketMQResponse{RequestID: requestIDOf(c)})
}

// rmqCreateEventTargets adds targets to a rule.
//
//	@Summary		Create event targets (RocketMQ EventBridge API)
//	@Description	Adds targets to a rule; none may exist already. className is the target type: http (config: url,
//	@Description	method, headers, mode, timeout), api-destination or acs.api.destination (config.apiDestination), bus or
//	@Description	acs.eventbridge (config.bus, another bus of the account) or log; config also holds an input transformer
//	@Description	(inputTransformer, input, inputPath, transform, attributes). runOptions.retryStrategy sets the retry
//	@Description	policy, runOptions.deadLetterQueue {type: bus, config: {bus}} the dead-letter bus. Other classNames are
//	@Description	EventTargetClassNotExist. A new target receives every event routed to its rule after the call answered.
//	@Tags			rocketmq
//	@Accept			json
//	@Produce		json
//	@Param			resourceOwnerAccountId	header		string						false	"account (default: the caller's own)"
//	@Param			body					body		RocketMQEventTargetsRequest	true	"the targets"
//	@Success		200						{object}	RocketMQResponse
//	@Failure		400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure		409						{object}	RocketMQError	"EventBusNotExist, EventRuleNotExist, EventTargetAlreadyExist, EventTargetClassNotExist, LimitExceeded"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/target/createEventTargets [post]
func (a *api) rmqCreateEventTargets(c *gin.Context) {
	a.rmqPutTargets(c, false)
}

// rmqUpdateEventTargets replaces the configuration of targets of a rule.
//
//	@Summary		Update event targets (RocketMQ EventBridge API)
//	@Description	Replaces the className, config and runOptions of existing targets of a rule (see createEventTargets).
//	@Tags			rocketmq
//	@Accept			json
//	@Produce		json
//	@Param			resourceOwnerAccountId	header		string						false	"account (default: the caller's own)"
//	@Param			body					body		RocketMQEventTargetsRequest	true	"the targets"
//	@Success		200						{object}	RocketMQResponse
//	@Failure		400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure		409						{object}	RocketMQError	"EventBusNotExist, EventRuleNotExist, EventTargetNotExist, EventTargetClassNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/target/updateEventTargets [post]
func (a *api) rmqUpdateEventTargets(c *gin.Context) {
	a.rmqPutTargets(c, true)
}

// rmqDeleteEventTargets deletes targets of a rule; every one must exist.
//
//	@Summary	Delete event targets (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string								false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQDeleteEventTargetsRequest	true	"the targets"
//	@Success	200						{object}	RocketMQResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"EventBusNotExist, EventRuleNotExist, EventTargetNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/target/deleteEventTargets [post]
func (a *api) rmqDeleteEventTargets(c *gin.Context) {
	var in RocketMQDeleteEventTargetsRequest
	if err := decodeRocketMQ(c, &in); err != nil {
		a.writeRocketMQError(c, err)
		return
	}
	for _, f := range [][2]string{{"eventBusName", in.EventBusName}, {"eventRuleName", in.EventRuleName}} {
		if err := required(f[0], f[1]); err != nil {
			a.writeRocketMQError(c, err)
			return
		}
	}
	if len(in.EventTargetNames) == 0 {
		a.writeRocketMQError(c, errRMQInvalid.WithField("eventTargetNames").With("eventTargetNames is required: at least one target name"))
		return
	}
	ctx := c.Request.Context()
	existing, err := a.targetNames(ctx, web.AccountOf(c), in.EventBusName, in.EventRuleName)
	if err != nil {
		a.writeRocketMQError(c, err)
		return
	}
	for _, name := range in.EventTargetNames {
		if !slices.Contains(existing, name) {
			a.writeRocketMQError(c, errRMQTargetNotExist.With("the event target %q of event rule %q on event bus %q does not exist",
				name, in.EventRuleName, in.EventBusName))
			return
		}
	}
	for _, name := range in.EventTargetNames {
		err := a.s.Targets.Delete(ctx, web.AccountOf(c), in.EventBusName, in.EventRuleName, name)
		if err != nil && !errors.Is(err, target.ErrNotFound) { // a name given twice is deleted once
			a.writeRocketMQError(c, err)
			return
		}
	}
	c.JSON(http.StatusOK, RocketMQResponse{RequestID: requestIDOf(c)})
}

// rmqListEventTargets answers the targets of a rule, ordered by name.
//
//	@Summary	List the event targets of a rule (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string						false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQEventRuleRequest	true	"the rule"
//	@Success	200						{object}	RocketMQListEventTargetsResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"EventBusNotExist, EventRuleNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/target/listEventTargets [post]
func (a *api) rmqListEventTargets(c *gin.Context, in *RocketMQEventRuleRequest) (any, error) {
	ts, err := a.s.Targets.List(c.Request.Context(), web.AccountOf(c), in.EventBusName, in.EventRuleName)
	if err != nil {
		return nil, err
	}
	out := RocketMQListEventTargetsResponse{
		RequestID: requestIDOf(c), EventBusName: in.EventBusName, EventRuleName: in.EventRuleName,
		EventTargets: make([]RocketMQEventTarget, 0, len(ts)),
	}
	for _, t := range ts {
		out.EventTargets = append(out.EventTargets, rmqTargetOf(t))
	}
	return pure{out}, nil // templates hold < and >: not escaped, so they read as written
}
