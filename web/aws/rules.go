package aws

import (
	"context"
	"errors"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/web"
)

// Rule is a rule as DescribeRule and ListRules answer it. EventPattern is the pattern as it was written: through
// this API as given; through /api/v1 in the CloudEvents form it matches (docs/aws-api.md).
type Rule struct {
	Name         string `json:"Name"`
	Arn          string `json:"Arn"`
	EventPattern string `json:"EventPattern,omitempty"`
	State        string `json:"State"`
	Description  string `json:"Description,omitempty"`
	EventBusName string `json:"EventBusName"`
	CreatedBy    string `json:"CreatedBy,omitempty"`
}

func (a *api) ruleOut(c *gin.Context, busName string, r *rule.Rule) Rule {
	return Rule{Name: r.Name(), Arn: a.ruleARN(c, busName, r.Name()), EventPattern: string(r.EventPattern()),
		State: string(r.State()), Description: r.Description(), EventBusName: busName, CreatedBy: accountNumber(c)}
}

type putRuleIn struct {
	Name               string
	ScheduleExpression string
	EventPattern       string
	State              string
	Description        *string
	RoleArn            string
	Tags               []Tag
	EventBusName       string
}

// putRule creates the rule or replaces it with what the call gives: as AWS documents PutRule, what it leaves out is
// not kept (no Description is none, no State is ENABLED). The rule's layout, which the console keeps, stays.
func (a *api) putRule(c *gin.Context, in *putRuleIn) (any, error) {
	switch {
	case in.Name == "":
		return nil, validation("Parameter Name is required.")
	case in.ScheduleExpression != "":
		return nil, refuseUnsupported("ScheduleExpression", "scheduled rules are not supported; a schedule source on the bus puts events on a timetable")
	case in.EventPattern == "":
		return nil, validation("Parameter(s) EventPattern or ScheduleExpression must be specified.")
	}
	if err := checkTags(in.Tags); err != nil {
		return nil, err
	}
	busName, err := a.busName(c, "EventBusName", in.EventBusName)
	if err != nil {
		return nil, err
	}
	state := rule.State(in.State)
	switch state {
	case "", rule.Enabled, rule.Disabled:
	default:
		return nil, validation("Parameter State is not valid: it must be ENABLED or DISABLED, not %q.", in.State)
	}
	ctx, account := c.Request.Context(), web.AccountOf(c)
	spec := rule.Spec{Name: in.Name, EventPattern: []byte(in.EventPattern), Syntax: rule.AWS, State: state}
	if in.Description != nil {
		spec.Description = *in.Description
	}
	old, err := a.s.Rules.Get(ctx, account, busName, in.Name)
	switch {
	case errors.Is(err, bus.ErrNotFound):
		return nil, &Error{Type: excNotFound, Message: "Event bus " + busName + " does not exist."}
	case err == nil:
		spec.Layout = old.Layout()
	case !errors.Is(err, rule.ErrNotFound):
		return nil, err
	}
	r, _, err := a.s.Rules.Put(ctx, account, busName, spec)
	if err != nil {
		return nil, err
	}
	if err := a.tagCreated(c, r.ID(), in.Tags); err != nil {
		return nil, err
	}
	return struct {
		RuleArn string `json:"RuleArn"`
	}{RuleArn: a.ruleARN(c, busName, r.Name())}, nil
}

type ruleIn struct {
	Name         string
	EventBusName string
	Force        bool
}

// lookupRule resolves the bus and reads the rule, answering AWS's messages for a bus or rule that does not exist.
func (a *api) lookupRule(c *gin.Context, busField, busRef, name string) (string, *rule.Rule, error) {
	if name == "" {
		return "", nil, validation("Parameter Name is required.")
	}
	busName, err := a.busName(c, busField, busRef)
	if err != nil {
		return "", nil, err
	}
	r, err := a.s.Rules.Get(c.Request.Context(), web.AccountOf(c), busName, name)
	return busName, r, a.ruleError(busName, name, err)
}

// ruleError is err with AWS's message when the bus or the rule does not exist.
func (a *api) ruleError(busName, name string, err error) error {
	switch {
	case errors.Is(err, bus.ErrNotFound):
		return &Error{Type: excNotFound, Message: "Event bus " + busName + " does not exist."}
	case errors.Is(err, rule.ErrNotFound):
		return &Error{Type: excNotFound, Message: "Rule " + name + " does not exist on EventBus " + busName + "."}
	}
	return err
}

// deleteRule deletes a rule that has no targets (with Force, its targets too); a rule that does not exist is
// deleted already, as in AWS.
func (a *api) deleteRule(c *gin.Context, in *ruleIn) (any, error) {
	busName, _, err := a.lookupRule(c, "EventBusName", in.EventBusName, in.Name)
	var ae *Error
	if errors.As(err, &ae) && strings.HasPrefix(ae.Message, "Rule ") {
		return struct{}{}, nil
	}
	if err != nil {
		return nil, err
	}
	ctx, account := c.Request.Context(), web.AccountOf(c)
	if !in.Force {
		ts, err := a.s.Targets.List(ctx, account, busName, in.Name)
		if err != nil {
			return nil, a.ruleError(busName, in.Name, err)
		}
		if len(ts) > 0 {
			return nil, validation("Rule can't be deleted since it has targets.")
		}
	}
	if err := a.s.Rules.Delete(ctx, account, busName, in.Name); err != nil && !errors.Is(err, rule.ErrNotFound) {
		return nil, a.ruleError(busName, in.Name, err)
	}
	return struct{}{}, nil
}

func (a *api) describeRule(c *gin.Context, in *ruleIn) (any, error) {
	busName, r, err := a.lookupRule(c, "EventBusName", in.EventBusName, in.Name)
	if err != nil {
		return nil, err
	}
	return a.ruleOut(c, busName, r), nil
}

func (a *api) enableRule(c *gin.Context, in *ruleIn) (any, error) {
	return a.setState(c, in, (*rule.Service).Enable)
}

func (a *api) disableRule(c *gin.Context, in *ruleIn) (any, error) {
	return a.setState(c, in, (*rule.Service).Disable)
}

func (a *api) setState(c *gin.Context, in *ruleIn,
	set func(*rule.Service, context.Context, string, string, string) (*rule.Rule, error)) (any, error) {
	if in.Name == "" {
		return nil, validation("Parameter Name is required.")
	}
	busName, err := a.busName(c, "EventBusName", in.EventBusName)
	if err != nil {
		return nil, err
	}
	if _, err := set(a.s.Rules, c.Request.Context(), web.AccountOf(c), busName, in.Name); err != nil {
		return nil, a.ruleError(busName, in.Name, err)
	}
	return struct{}{}, nil
}

type listRulesIn struct {
	NamePrefix   string
	EventBusName string
	NextToken    string
	Limit        *int
}

// busRules resolves the bus a request names (EventBusName) and reads every rule of it, sorted by name.
func (a *api) busRules(c *gin.Context, ref string) (string, []*rule.Rule, error) {
	busName, err := a.busName(c, "EventBusName", ref)
	if err != nil {
		return "", nil, err
	}
	all, err := domain.AllPages(c.Request.Context(), func(ctx context.Context, p domain.Page) ([]*rule.Rule, string, error) {
		return a.s.Rules.List(ctx, web.AccountOf(c), busName, p)
	})
	return busName, all, a.ruleError(busName, "", err)
}

func (a *api) listRules(c *gin.Context, in *listRulesIn) (any, error) {
	busName, all, err := a.busRules(c, in.EventBusName)
	if err != nil {
		return nil, err
	}
	page, next, err := pageOf(prefixed(all, in.NamePrefix, (*rule.Rule).Name), in.NextToken, in.Limit)
	if err != nil {
		return nil, err
	}
	out := struct {
		Rules     []Rule `json:"Rules"`
		NextToken string `json:"NextToken,omitempty"`
	}{Rules: make([]Rule, 0, len(page)), NextToken: next}
	for _, r := range page {
		out.Rules = append(out.Rules, a.ruleOut(c, busName, r))
	}
	return out, nil
}

type listRuleNamesByTargetIn struct {
	TargetArn    string
	EventBusName string
	NextToken    string
	Limit        *int
}

// listRuleNamesByTarget names the rules of a bus that have a target with the ARN.
func (a *api) listRuleNamesByTarget(c *gin.Context, in *listRuleNamesByTargetIn) (any, error) {
	if in.TargetArn == "" {
		return nil, validation("Parameter TargetArn is required.")
	}
	busName, all, err := a.busRules(c, in.EventBusName)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range all {
		ts, err := a.s.Targets.List(c.Request.Context(), web.AccountOf(c), busName, r.Name())
		if errors.Is(err, rule.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			if a.targetARN(c, t) == in.TargetArn {
				names = append(names, r.Name())
				break
			}
		}
	}
	page, next, err := pageOf(names, in.NextToken, in.Limit)
	if err != nil {
		return nil, err
	}
	return struct {
		RuleNames []string `json:"RuleNames"`
		NextToken string   `json:"NextToken,omitempty"`
	}{RuleNames: append([]string{}, page...), NextToken: next}, nil
}

// targetsOf is the targets of a rule (nil error when the rule exists).
func (a *api) targetsOf(c *gin.Context, busName, ruleName string) ([]*target.Target, error) {
	ts, err := a.s.Targets.List(c.Request.Context(), web.AccountOf(c), busName, ruleName)
	return ts, a.ruleError(busName, ruleName, err)
}
