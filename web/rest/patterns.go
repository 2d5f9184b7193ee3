package rest

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/pattern"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/web"
)

// TestEventPatternInput is an event pattern and an event to match it against.
type TestEventPatternInput struct {
	// EventPattern is a JSON object; a string holding that object is accepted too.
	EventPattern json.RawMessage `json:"eventPattern" swaggertype:"object"`
	// Event is any JSON object: a CloudEvent in its JSON form (attributes at the top level, the payload under
	// "data"), as rules see it, or another envelope.
	Event json.RawMessage `json:"event" swaggertype:"object"`
} //@name TestEventPatternInput

// TestEventPatternOutput says whether the event matches and, when it does not, why.
type TestEventPatternOutput struct {
	Match bool `json:"match" example:"false"`
	// Explanation is the first condition of the pattern that the event fails; null on a match.
	Explanation *PatternExplanation `json:"explanation"`
} //@name TestEventPatternOutput

// PatternExplanation is a condition of an event pattern that an event fails.
type PatternExplanation struct {
	// Path is the field's path, keys joined with ".".
	Path string `json:"path" example:"data.amount"`
	// Expected is the pattern's array of alternatives for the field.
	Expected []any `json:"expected"`
	// Actual is the event's value at the path; absent when the event has none.
	Actual any `json:"actual,omitempty"`
	// Reason says how the condition fails.
	Reason string `json:"reason" example:"no value matches"`
} //@name PatternExplanation

// testEventPattern matches an event against an event pattern and explains a mismatch.
//
//	@Summary		Test an event pattern against an event
//	@Description	Compiles the pattern as a rule's is (an invalid one is a 400 InvalidEventPattern naming the
//	@Description	problem) and matches the event. On a mismatch, explanation names the first condition that fails:
//	@Description	its path, the pattern's alternatives, the event's value and the reason.
//	@Tags			rules
//	@Accept			json
//	@Produce		json
//	@Param			X-Account-Id	header		string					false	"account (default: the caller's own)"
//	@Param			body			body		TestEventPatternInput	true	"an event pattern and an event"
//	@Success		200				{object}	TestEventPatternOutput
//	@Failure		400				{object}	web.Problem	"InvalidEventPattern, ValidationError (event), MalformedRequest"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/test-event-pattern [post]
func (a *api) testEventPattern(c *gin.Context) {
	var in TestEventPatternInput
	if err := web.DecodeJSON(c, &in); err != nil {
		a.writeError(c, err)
		return
	}
	raw, err := unwrapPattern(in.EventPattern)
	if err != nil {
		a.writeError(c, err)
		return
	}
	compact, err := rule.CompilePattern(raw) // the same checks and limits as a rule's pattern
	if err != nil {
		a.writeError(c, err)
		return
	}
	p, err := pattern.Compile(compact)
	if err != nil {
		a.writeError(c, rule.ErrInvalidEventPattern.With("invalid eventPattern: %s", err))
		return
	}
	ev := bytes.TrimSpace(in.Event)
	if len(ev) == 0 || ev[0] != '{' {
		a.writeError(c, domain.Invalid("event", "event is required and must be a JSON object"))
		return
	}
	x, err := pattern.Explain(p, ev)
	if err != nil {
		a.writeError(c, domain.Invalid("event", "event: %s", err))
		return
	}
	out := TestEventPatternOutput{Match: x == nil}
	if x != nil {
		out.Explanation = explanationOf(x)
	}
	c.PureJSON(http.StatusOK, out) // patterns hold "<" and ">": keep them readable
}

// explanationOf answers a pattern's explanation; the pattern's alternatives keep their numbers as written.
func explanationOf(x *pattern.Explanation) *PatternExplanation {
	var expected []any
	d := json.NewDecoder(bytes.NewReader(x.Expected))
	d.UseNumber()
	if err := d.Decode(&expected); err != nil {
		expected = []any{string(x.Expected)} // the matcher writes a JSON array; never fail an answer for it
	}
	out := &PatternExplanation{Path: x.Path, Expected: expected, Reason: x.Reason}
	if len(x.Actual) > 0 {
		out.Actual = x.Actual // a JSON value as the event holds it
	}
	return out
}
