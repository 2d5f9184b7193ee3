package rocketmq

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/eventbridge-go/eventbridge/web"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/rule"
)

// Rules in RocketMQ EventBridge's shapes: dto/rule/CreateRuleRequest.java, CreateRuleResponse.java,
// GetRuleRequest.java, GetRuleResponse.java, UpdateRuleRequest.java, ListRulesRequest.java, ListRulesResponse.java
// and EventRuleDTO.java of apache/rocketmq-eventbridge's adapter/api. filterPattern is a JSON string; status is
// ENABLE or DISABLE (its EventRuleStatus) where /api/v1 says ENABLED or DISABLED; gmtCreate and gmtModify are
// java.util.Date, which Spring Boot's Jackson writes as ISO 8601 text.

// Rule states as RocketMQ EventBridge names them.
const (
	rmqRuleEnable  = "ENABLE"
	rmqRuleDisable = "DISABLE"
)

// RocketMQCreateEventRuleRequest asks to create an enabled rule on a bus.
type RocketMQCreateEventRuleRequest struct {
	EventBusName  string `json:"eventBusName" example:"demo-bus"`
	EventRuleName string `json:"eventRuleName" example:"demo-rule"`
	Description   string `json:"description" example:"A demo rule."`
	// FilterPattern is the event pattern written as a JSON string; "{}" matches every event (stored as
	// {"specversion":[{"exists":true}]}, which /api/v1 shows).
	FilterPattern string `json:"filterPattern" example:"{\"source\":[\"shop\"]}"`
} //@name RocketMQCreateEventRuleRequest

// RocketMQCreateEventRuleResponse names the rule created.
type RocketMQCreateEventRuleResponse struct {
	RequestID     string `json:"requestId"`
	EventRuleName string `json:"eventRuleName" example:"demo-rule"`
} //@name RocketMQCreateEventRuleResponse

// RocketMQEventRuleRequest names a rule (getEventRule, deleteEventRule, enableEventRule, disableEventRule).
type RocketMQEventRuleRequest struct {
	EventBusName  string `json:"eventBusName" example:"demo-bus"`
	EventRuleName string `json:"eventRuleName" example:"demo-rule"`
} //@name RocketMQEventRuleRequest

// RocketMQUpdateEventRuleRequest replaces the description and the pattern of a rule; an absent field keeps its
// value, and the state stays.
type RocketMQUpdateEventRuleRequest struct {
	EventBusName  string  `json:"eventBusName" example:"demo-bus"`
	EventRuleName string  `json:"eventRuleName" example:"demo-rule"`
	Description   *string `json:"description" example:"A demo rule."`
	FilterPattern *string `json:"filterPattern" example:"{\"source\":[\"shop\"]}"`
} //@name RocketMQUpdateEventRuleRequest

// RocketMQEventRule is a rule in a list.
type RocketMQEventRule struct {
	EventBusName  string `json:"eventBusName" example:"demo-bus"`
	EventRuleName string `json:"eventRuleName" example:"demo-rule"`
	Description   string `json:"description" example:"A demo rule."`
	// FilterPattern is the event pattern as a JSON string (compact).
	FilterPattern string    `json:"filterPattern" example:"{\"source\":[\"shop\"]}"`
	Status        string    `json:"status" enums:"ENABLE,DISABLE" example:"ENABLE"`
	GmtCreate     time.Time `json:"gmtCreate"`
	GmtModify     time.Time `json:"gmtModify"`
} //@name RocketMQEventRule

// RocketMQGetEventRuleResponse is one rule with its targets.
type RocketMQGetEventRuleResponse struct {
	RequestID     string                `json:"requestId"`
	EventBusName  string                `json:"eventBusName" example:"demo-bus"`
	EventRuleName string                `json:"eventRuleName" example:"demo-rule"`
	Description   string                `json:"description" example:"A demo rule."`
	FilterPattern string                `json:"filterPattern" example:"{\"source\":[\"shop\"]}"`
	Status        string                `json:"status" enums:"ENABLE,DISABLE" example:"ENABLE"`
	GmtCreate     time.Time             `json:"gmtCreate"`
	GmtModify     time.Time             `json:"gmtModify"`
	EventTargets  []RocketMQEventTarget `json:"eventTargets"`
} //@name RocketMQGetEventRuleResponse

// RocketMQListEventRulesRequest asks for a page of a bus's rules, ordered by name.
type RocketMQListEventRulesRequest struct {
	EventBusName string `json:"eventBusName" example:"demo-bus"`
	// NextToken is the decimal offset of the page's first rule; absent for the first page.
	NextToken string `json:"nextToken" example:"50"`
	// MaxResults is the page size, 1 to 100 (0 or absent: 50).
	MaxResults int `json:"maxResults" example:"50"`
} //@name RocketMQListEventRulesRequest

// RocketMQListEventRulesResponse is one page of rules.
type RocketMQListEventRulesResponse struct {
	RequestID  string              `json:"requestId"`
	EventRules []RocketMQEventRule `json:"eventRules"`
	// NextToken asks for the next page; absent on the last page.
	NextToken string `json:"nextToken,omitempty" example:"50"`
	// Total is the number of the bus's rules.
	Total      int `json:"total" example:"1"`
	MaxResults int `json:"maxResults" example:"50"`
} //@name RocketMQListEventRulesResponse

// rmqMatchAll is the pattern that stands for RocketMQ EventBridge's "{}" (every event; its documentation's
// examples use it), which our patterns refuse, as Amazon EventBridge's do: every CloudEvent has a specversion.
// It is stored in its compact form, and read back as "{}".
const rmqMatchAll = `{"specversion":[{"exists":true}]}`

// rmqPatternIn returns the pattern to store for a filterPattern.
func rmqPatternIn(filterPattern string) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(filterPattern)) == nil && buf.String() == "{}" {
		return []byte(rmqMatchAll)
	}
	return []byte(filterPattern)
}

// rmqPatternOut returns the filterPattern of a stored pattern.
func rmqPatternOut(p []byte) string {
	if string(p) == rmqMatchAll {
		return "{}"
	}
	return string(p)
}

func rmqRuleStatus(s rule.State) string {
	if s == rule.Disabled {
		return rmqRuleDisable
	}
	return rmqRuleEnable
}

func rmqRuleOf(busName string, r *rule.Rule) RocketMQEventRule {
	return RocketMQEventRule{
		EventBusName: busName, EventRuleName: r.Name(), Description: r.Description(),
		FilterPattern: rmqPatternOut(r.EventPattern()), Status: rmqRuleStatus(r.State()),
		GmtCreate: r.CreatedAt(), GmtModify: r.UpdatedAt(),
	}
}

// rmqRuleError names the pattern as this API does (filterPattern, not eventPattern).
func rmqRuleError(err error) error {
	return renameField(err, "eventPattern", "filterPattern")
}

// rmqCreateEventRule creates an enabled rule.
//
//	@Summary	Create an event rule (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string							false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQCreateEventRuleRequest	true	"the rule"
//	@Success	200						{object}	RocketMQCreateEventRuleResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid (an invalid filterPattern too)"
//	@Failure	409						{object}	RocketMQError	"EventBusNotExist, EventRuleAlreadyExist, EventRuleNameInvalid"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/rule/createEventRule [post]
func (a *api) rmqCreateEventRule(c *gin.Context, in *RocketMQCreateEventRuleRequest) (any, error) {
	if err := required("eventBusName", in.EventBusName); err != nil {
		return nil, err
	}
	if err := domain.ValidateName("eventRuleName", in.EventRuleName); err != nil {
		return nil, recode(errRMQRuleNameInvalid, err)
	}
	spec := rule.Spec{Name: in.EventRuleName, Description: in.Description, EventPattern: rmqPatternIn(in.FilterPattern), State: rule.Enabled}
	r, err := a.s.Rules.Create(c.Request.Context(), web.AccountOf(c), in.EventBusName, spec)
	if err != nil {
		return nil, rmqRuleError(err)
	}
	return RocketMQCreateEventRuleResponse{RequestID: requestIDOf(c), EventRuleName: r.Name()}, nil
}

// validate checks what a request that names a rule.
func (in *RocketMQEventRuleRequest) validate() error {
	if err := required("eventBusName", in.EventBusName); err != nil {
		return err
	}
	return required("eventRuleName", in.EventRuleName)
}

// rmqGetEventRule answers one rule with its targets.
//
//	@Summary	Get an event rule and its targets (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string						false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQEventRuleRequest	true	"the rule"
//	@Success	200						{object}	RocketMQGetEventRuleResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"EventBusNotExist, EventRuleNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/rule/getEventRule [post]
func (a *api) rmqGetEventRule(c *gin.Context, in *RocketMQEventRuleRequest) (any, error) {
	ctx := c.Request.Context()
	r, err := a.s.Rules.Get(ctx, web.AccountOf(c), in.EventBusName, in.EventRuleName)
	if err != nil {
		return nil, err
	}
	ts, err := a.s.Targets.List(ctx, web.AccountOf(c), in.EventBusName, in.EventRuleName)
	if err != nil {
		return nil, err
	}
	dto := rmqRuleOf(in.EventBusName, r)
	out := RocketMQGetEventRuleResponse{
		RequestID: requestIDOf(c), EventBusName: dto.EventBusName, EventRuleName: dto.EventRuleName,
		Description: dto.Description, FilterPattern: dto.FilterPattern, Status: dto.Status,
		GmtCreate: dto.GmtCreate, GmtModify: dto.GmtModify, EventTargets: make([]RocketMQEventTarget, 0, len(ts)),
	}
	for _, t := range ts {
		out.EventTargets = append(out.EventTargets, rmqTargetOf(t))
	}
	return pure{out}, nil // templates hold < and >: not escaped, so they read as written
}

// rmqUpdateEventRule replaces the description and the pattern of a rule; its state stays.
//
//	@Summary	Update an event rule (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string							false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQUpdateEventRuleRequest	true	"the rule; an absent description or filterPattern stays as it is"
//	@Success	200						{object}	RocketMQResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid (an invalid filterPattern too)"
//	@Failure	409						{object}	RocketMQError	"EventBusNotExist, EventRuleNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/rule/updateEventRule [post]
func (a *api) rmqUpdateEventRule(c *gin.Context, in *RocketMQUpdateEventRuleRequest) (any, error) {
	if err := required("eventBusName", in.EventBusName); err != nil {
		return nil, err
	}
	if err := required("eventRuleName", in.EventRuleName); err != nil {
		return nil, err
	}
	ctx := c.Request.Context()
	// The domain offers create-or-replace (Put) only; reading first makes an unknown rule EventRuleNotExist
	// instead of creating it. A rule deleted between the two calls is created again (see the report).
	r, err := a.s.Rules.Get(ctx, web.AccountOf(c), in.EventBusName, in.EventRuleName)
	if err != nil {
		return nil, err
	}
	spec := rule.Spec{Name: r.Name(), Description: r.Description(), EventPattern: r.EventPattern(), State: r.State()}
	if in.Description != nil {
		spec.Description = *in.Description
	}
	if in.FilterPattern != nil {
		spec.EventPattern = rmqPatternIn(*in.FilterPattern)
	}
	if _, _, err := a.s.Rules.Put(ctx, web.AccountOf(c), in.EventBusName, spec); err != nil {
		return nil, rmqRuleError(err)
	}
	return RocketMQResponse{RequestID: requestIDOf(c)}, nil
}

// rmqDeleteEventRule deletes a rule and its targets.
//
//	@Summary	Delete an event rule and its targets (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string						false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQEventRuleRequest	true	"the rule"
//	@Success	200						{object}	RocketMQResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"EventBusNotExist, EventRuleNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/rule/deleteEventRule [post]
func (a *api) rmqDeleteEventRule(c *gin.Context, in *RocketMQEventRuleRequest) (any, error) {
	if err := a.s.Rules.Delete(c.Request.Context(), web.AccountOf(c), in.EventBusName, in.EventRuleName); err != nil {
		return nil, err
	}
	return RocketMQResponse{RequestID: requestIDOf(c)}, nil
}

// rmqListEventRules answers a page of a bus's rules, ordered by name.
//
//	@Summary	List the event rules of a bus (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string							false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQListEventRulesRequest	true	"the bus and the page"
//	@Success	200						{object}	RocketMQListEventRulesResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"EventBusNotExist, LimitSizeInvalid, NextTokenInvalid"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/rule/listEventRules [post]
func (a *api) rmqListEventRules(c *gin.Context, in *RocketMQListEventRulesRequest) (any, error) {
	if err := required("eventBusName", in.EventBusName); err != nil {
		return nil, err
	}
	offset, limit, err := rmqPage(in.NextToken, in.MaxResults)
	if err != nil {
		return nil, err
	}
	all, err := domain.AllPages(c.Request.Context(), func(ctx context.Context, p domain.Page) ([]*rule.Rule, string, error) {
		return a.s.Rules.List(ctx, web.AccountOf(c), in.EventBusName, p)
	})
	if err != nil {
		return nil, err
	}
	page, next := pageOfAll(all, offset, limit)
	out := RocketMQListEventRulesResponse{
		RequestID: requestIDOf(c), EventRules: make([]RocketMQEventRule, 0, len(page)),
		NextToken: next, Total: len(all), MaxResults: limit,
	}
	for _, r := range page {
		out.EventRules = append(out.EventRules, rmqRuleOf(in.EventBusName, r))
	}
	return out, nil
}

// rmqEnableEventRule makes the router route to the rule again.
//
//	@Summary		Enable an event rule (RocketMQ EventBridge API)
//	@Description	The rule receives every matching event stored after the call answered, none stored while it was disabled.
//	@Tags			rocketmq
//	@Accept			json
//	@Produce		json
//	@Param			resourceOwnerAccountId	header		string						false	"account (default: the caller's own)"
//	@Param			body					body		RocketMQEventRuleRequest	true	"the rule"
//	@Success		200						{object}	RocketMQResponse
//	@Failure		400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure		409						{object}	RocketMQError	"EventBusNotExist, EventRuleNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/rule/enableEventRule [post]
func (a *api) rmqEnableEventRule(c *gin.Context) {
	a.rmqSetRuleState(c, a.s.Rules.Enable)
}

// rmqDisableEventRule stops routing to the rule.
//
//	@Summary		Disable an event rule (RocketMQ EventBridge API)
//	@Description	Events put while the rule is disabled are never delivered to its targets.
//	@Tags			rocketmq
//	@Accept			json
//	@Produce		json
//	@Param			resourceOwnerAccountId	header		string						false	"account (default: the caller's own)"
//	@Param			body					body		RocketMQEventRuleRequest	true	"the rule"
//	@Success		200						{object}	RocketMQResponse
//	@Failure		400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure		409						{object}	RocketMQError	"EventBusNotExist, EventRuleNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/rule/disableEventRule [post]
func (a *api) rmqDisableEventRule(c *gin.Context) {
	a.rmqSetRuleState(c, a.s.Rules.Disable)
}

func (a *api) rmqSetRuleState(c *gin.Context, set func(ctx context.Context, accountID, busName, name string) (*rule.Rule, error)) {
	in, err := read[RocketMQEventRuleRequest](c)
	if err != nil {
		a.writeRocketMQError(c, err)
		return
	}
	if _, err := set(c.Request.Context(), web.AccountOf(c), in.EventBusName, in.EventRuleName); err != nil {
		a.writeRocketMQError(c, rmqRuleError(err))
		return
	}
	c.JSON(http.StatusOK, RocketMQResponse{RequestID: requestIDOf(c)})
}
