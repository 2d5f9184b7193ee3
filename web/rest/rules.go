package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/web"
)

// Rule selects the events of its bus that its targets receive.
type Rule struct {
	// Name may be absent in a PUT, which takes it from the path; when present it must equal the path's.
	Name        string `json:"name" example:"created"`
	Description string `json:"description" example:"orders over 100"`
	// State is ENABLED (default) or DISABLED.
	State string `json:"state,omitempty" enums:"ENABLED,DISABLED" example:"ENABLED"`
	// EventPattern is a JSON object; a string holding that object is accepted too (Amazon's SDKs send one).
	// Answers always hold the object.
	EventPattern json.RawMessage `json:"eventPattern" swaggertype:"object"`
	// Layout is what a client stores about how the rule is drawn (the console keeps its node positions here): a
	// JSON object of at most 64 KiB, kept and answered as given; the control plane never reads it.
	Layout    json.RawMessage `json:"layout,omitempty" swaggertype:"object"`
	CreatedAt time.Time       `json:"createdAt" readonly:"true"`
	UpdatedAt time.Time       `json:"updatedAt" readonly:"true"`
	// Targets may be given when a rule is created (POST): the rule and its targets are created together, or
	// nothing is. The answer to that POST holds them; other answers do not (list them under .../targets).
	Targets []Target `json:"targets,omitempty"`
	// Counters are what the rule did since it was created (GET and list answers, once the runtime reported any).
	Counters *RuleCounters `json:"counters,omitempty" readonly:"true"`
} //@name Rule

// RuleCounters count what a rule did since it was created, over pauses, restarts and moves between workers:
// the events routed to it, and what its targets did with them, summed over its targets.
type RuleCounters struct {
	Matched      uint64 `json:"matched"`
	Read         uint64 `json:"read"`
	Delivered    uint64 `json:"delivered"`
	Retried      uint64 `json:"retried"`
	DeadLettered uint64 `json:"deadLettered"`
	Dropped      uint64 `json:"dropped"`
	Failed       uint64 `json:"failed"`
	Filtered     uint64 `json:"filtered"`
} //@name RuleCounters

// withCounters sets the counters of rules (answers, in order) from counters by rule id.
func withCounters(answers []Rule, rules []*rule.Rule, counters map[string]rule.Counters) {
	for i, r := range rules {
		if c, ok := counters[r.ID()]; ok {
			answers[i].Counters = &RuleCounters{Matched: c.Matched, Read: c.Read, Delivered: c.Delivered, Retried: c.Retried,
				DeadLettered: c.DeadLettered, Dropped: c.Dropped, Failed: c.Failed, Filtered: c.Filtered}
		}
	}
}

// RulePatch changes a rule: the fields given are replaced, the others kept.
type RulePatch struct {
	Description *string `json:"description,omitempty" example:"orders over 100"`
	// State is ENABLED or DISABLED.
	State *string `json:"state,omitempty" enums:"ENABLED,DISABLED"`
	// EventPattern is a JSON object, or a string holding one.
	EventPattern json.RawMessage `json:"eventPattern,omitempty" swaggertype:"object"`
	// Layout replaces the rule's layout (a JSON object); null removes it.
	Layout json.RawMessage `json:"layout,omitempty" swaggertype:"object"`
} //@name RulePatch

// RuleList is one page of rules.
type RuleList struct {
	Rules []Rule `json:"rules"`
	// NextToken asks for the next page; absent on the last page.
	NextToken string `json:"nextToken,omitempty"`
} //@name RuleList

func ruleOf(r *rule.Rule) Rule {
	return Rule{
		Name:         r.Name(),
		Description:  r.Description(),
		State:        string(r.State()),
		EventPattern: json.RawMessage(r.EventPattern()),
		Layout:       json.RawMessage(r.Layout()),
		CreatedAt:    r.CreatedAt(),
		UpdatedAt:    r.UpdatedAt(),
	}
}

// spec returns the domain form of the rule.
func (r Rule) spec() (rule.Spec, error) {
	p, err := unwrapPattern(r.EventPattern)
	if err != nil {
		return rule.Spec{}, err
	}
	return rule.Spec{Name: r.Name, Description: r.Description, EventPattern: p, State: rule.State(r.State), Layout: r.Layout}, nil
}

// unwrapPattern returns an event pattern given as a JSON object, or as a JSON string holding one (Amazon's SDKs
// send a string); nil when it is absent or null.
func unwrapPattern(raw json.RawMessage) ([]byte, error) {
	p := bytes.TrimSpace(raw)
	if len(p) > 0 && p[0] == '"' {
		var s string
		if err := json.Unmarshal(p, &s); err != nil {
			return nil, rule.ErrInvalidEventPattern.With("eventPattern is not a valid JSON string")
		}
		p = []byte(s)
	}
	if bytes.Equal(p, []byte("null")) {
		p = nil
	}
	return p, nil
}

// decodeRule reads a rule from the request body, and the targets to create with it.
func decodeRule(c *gin.Context) (rule.Spec, []target.Spec, error) {
	var in Rule
	if err := web.DecodeJSON(c, &in); err != nil {
		return rule.Spec{}, nil, err
	}
	spec, err := in.spec()
	if err != nil {
		return rule.Spec{}, nil, err
	}
	var targets []target.Spec
	for i, t := range in.Targets {
		ts, err := t.Spec()
		if err != nil {
			if de, ok := domain.As(err); ok && de.Field != "" {
				return rule.Spec{}, nil, domain.Invalid(fmt.Sprintf("targets[%d].%s", i, de.Field), "targets[%d]: %s", i, de.Message)
			}
			return rule.Spec{}, nil, err
		}
		targets = append(targets, ts)
	}
	return spec, targets, nil
}

// listRules answers a page of a bus's rules, ordered by name.
//
//	@Summary	List the rules of a bus
//	@Tags		rules
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		limit			query		int		false	"page size, 1 to 500 (default 50)"
//	@Param		nextToken		query		string	false	"token of the next page from the previous answer"
//	@Param		namePrefix		query		string	false	"only the rules whose name starts with this"
//	@Success	200				{object}	RuleList
//	@Failure	400				{object}	web.Problem
//	@Failure	404				{object}	web.Problem	"BusNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/rules [get]
func (a *api) listRules(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	if prefix := c.Query("namePrefix"); prefix != "" {
		if err := domain.ValidateRuleName("namePrefix", prefix); err != nil {
			return 0, nil, err
		}
		page.Prefix = prefix
	}
	rs, next, err := a.s.Rules.List(c.Request.Context(), web.AccountOf(c), c.Param("bus"), page)
	if err != nil {
		return 0, nil, err
	}
	out := RuleList{Rules: make([]Rule, 0, len(rs)), NextToken: next}
	for _, r := range rs {
		out.Rules = append(out.Rules, ruleOf(r))
	}
	withCounters(out.Rules, rs, a.s.Rules.CountersOf(c.Request.Context(), web.AccountOf(c), c.Param("bus"), rs))
	return http.StatusOK, out, nil
}

// createRule creates a rule; it answers once the bus's router routes to it.
//
//	@Summary	Create a rule
//	@Tags		rules
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		rule			body		Rule	true	"the rule"
//	@Success	201				{object}	Rule
//	@Failure	400				{object}	web.Problem	"invalid input (ValidationError, InvalidEventPattern, MalformedRequest)"
//	@Failure	404				{object}	web.Problem	"BusNotFound"
//	@Failure	409				{object}	web.Problem	"RuleAlreadyExists, RuleQuotaExceeded, LimitExceeded (more than 5 targets)"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/rules [post]
func (a *api) createRule(c *gin.Context) (int, any, error) {
	spec, targets, err := decodeRule(c)
	if err != nil {
		return 0, nil, err
	}
	if len(targets) == 0 {
		r, err := a.s.Rules.Create(c.Request.Context(), web.AccountOf(c), c.Param("bus"), spec)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusCreated, ruleOf(r), nil
	}
	r, ts, err := a.s.Channels.CreateRule(c.Request.Context(), web.AccountOf(c), c.Param("bus"), spec, targets)
	if err != nil {
		return 0, nil, err
	}
	out := ruleOf(r)
	for _, t := range ts {
		out.Targets = append(out.Targets, a.targetOf(c, t))
	}
	return http.StatusCreated, out, nil
}

// patchRule changes a rule's description, pattern or state; it answers once the bus's router applied it.
//
//	@Summary	Change a rule
//	@Tags		rules
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string		false	"account (default: the caller's own)"
//	@Param		bus				path		string		true	"bus name"
//	@Param		rule			path		string		true	"rule name"
//	@Param		patch			body		RulePatch	true	"the fields to change"
//	@Success	200				{object}	Rule
//	@Failure	400				{object}	web.Problem	"invalid input (ValidationError, InvalidEventPattern, MalformedRequest)"
//	@Failure	404				{object}	web.Problem	"BusNotFound, RuleNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/rules/{rule} [patch]
func (a *api) patchRule(c *gin.Context, in *RulePatch) (int, any, error) {
	p := rule.Patch{Description: in.Description, Layout: in.Layout}
	if in.State != nil {
		st := rule.State(*in.State)
		p.State = &st
	}
	if in.EventPattern != nil {
		pattern, err := unwrapPattern(in.EventPattern)
		if err != nil {
			return 0, nil, err
		}
		if pattern == nil {
			return 0, nil, rule.ErrInvalidEventPattern.With("eventPattern must be a JSON object, not null")
		}
		p.EventPattern = pattern
	}
	r, err := a.s.Rules.Patch(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("rule"), p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, ruleOf(r), nil
}

// getRule answers one rule.
//
//	@Summary	Get a rule
//	@Tags		rules
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		rule			path		string	true	"rule name"
//	@Success	200				{object}	Rule
//	@Failure	404				{object}	web.Problem	"BusNotFound, RuleNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/rules/{rule} [get]
func (a *api) getRule(c *gin.Context) (int, any, error) {
	r, err := a.s.Rules.Get(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("rule"))
	if err != nil {
		return 0, nil, err
	}
	out := []Rule{ruleOf(r)}
	withCounters(out, []*rule.Rule{r}, a.s.Rules.CountersOf(c.Request.Context(), web.AccountOf(c), c.Param("bus"), []*rule.Rule{r}))
	return http.StatusOK, out[0], nil
}

// putRule creates the rule (201) or replaces its description, pattern and state (200).
//
//	@Summary	Create or replace a rule
//	@Tags		rules
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		rule			path		string	true	"rule name"
//	@Param		body			body		Rule	true	"the rule; its name may be absent"
//	@Success	200				{object}	Rule	"replaced"
//	@Success	201				{object}	Rule	"created"
//	@Failure	400				{object}	web.Problem	"invalid input (ValidationError, InvalidEventPattern, MalformedRequest)"
//	@Failure	404				{object}	web.Problem	"BusNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/rules/{rule} [put]
func (a *api) putRule(c *gin.Context) (int, any, error) {
	spec, targets, err := decodeRule(c)
	if err != nil {
		return 0, nil, err
	}
	if len(targets) > 0 {
		return 0, nil, domain.Invalid("targets", "targets can be given only when a rule is created with POST; put them under .../targets/{target}")
	}
	name := c.Param("rule")
	if spec.Name != "" && spec.Name != name {
		return 0, nil, domain.Invalid("name", "name %q differs from the rule %q of the path; rules cannot be renamed", spec.Name, name)
	}
	spec.Name = name
	r, created, err := a.s.Rules.Put(c.Request.Context(), web.AccountOf(c), c.Param("bus"), spec)
	if err != nil {
		return 0, nil, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return status, ruleOf(r), nil
}

// deleteRule deletes a rule and its targets.
//
//	@Summary	Delete a rule and its targets
//	@Tags		rules
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's own)"
//	@Param		bus				path	string	true	"bus name"
//	@Param		rule			path	string	true	"rule name"
//	@Success	204
//	@Failure	404	{object}	web.Problem	"BusNotFound, RuleNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/rules/{rule} [delete]
func (a *api) deleteRule(c *gin.Context) (int, any, error) {
	if err := a.s.Rules.Delete(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("rule")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// enableRule makes the router route to the rule again.
//
//	@Summary	Enable a rule
//	@Description	The rule receives every matching event stored after the call answered, none stored while it was disabled.
//	@Tags		rules
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		rule			path		string	true	"rule name"
//	@Success	200				{object}	Rule
//	@Failure	404				{object}	web.Problem	"BusNotFound, RuleNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/rules/{rule}/enable [post]
func (a *api) enableRule(c *gin.Context) (int, any, error) {
	r, err := a.s.Rules.Enable(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("rule"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, ruleOf(r), nil
}

// disableRule stops routing to the rule.
//
//	@Summary	Disable a rule
//	@Description	Events put while the rule is disabled are never delivered to its targets.
//	@Tags		rules
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		rule			path		string	true	"rule name"
//	@Success	200				{object}	Rule
//	@Failure	404				{object}	web.Problem	"BusNotFound, RuleNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/rules/{rule}/disable [post]
func (a *api) disableRule(c *gin.Context) (int, any, error) {
	r, err := a.s.Rules.Disable(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("rule"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, ruleOf(r), nil
}
