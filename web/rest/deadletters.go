package rest

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/domain/deadletter"
	"github.com/eventbridge-go/eventbridge/web"
)

// The dead letters of the request's account: the events its targets gave up (retries exhausted, a permanent
// error, refused by the input transformer) and stored in the account's dead-letter stream, because the target has
// no dead-letter bus. Dead letters of a target with a dead-letter bus are events on that bus instead.

// DeadLetter is one event a target gave up.
type DeadLetter struct {
	// ID is the dead letter's sequence in the account's dead-letter stream.
	ID string `json:"id" example:"42"`
	// Time is when the target gave the event up.
	Time time.Time `json:"time" example:"2026-11-30T12:00:00Z"`
	// Bus, Rule and Target name the target that gave the event up (absent when its connector is not a target's).
	Bus    string `json:"bus,omitempty" example:"orders"`
	Rule   string `json:"rule,omitempty" example:"created"`
	Target string `json:"target,omitempty" example:"hook"`
	// Connector is the runtime connector that gave the event up.
	Connector string `json:"connector" example:"eb.default.orders.created.hook"`
	// Reason is the last error.
	Reason string `json:"reason" example:"http: POST https://example.com/hook: 503 Service Unavailable"`
	// ErrorClass is permanent, retries-exhausted or transform.
	ErrorClass string `json:"errorClass" example:"retries-exhausted" enums:"permanent,retries-exhausted,transform"`
	// Attempts is the number of delivery attempts made.
	Attempts uint64 `json:"attempts" example:"3"`
	// Event is the original CloudEvent, in the structured JSON form.
	Event json.RawMessage `json:"event" swaggertype:"object"`
} //@name DeadLetter

// DeadLetterList is one page of dead letters, oldest first.
type DeadLetterList struct {
	DeadLetters []DeadLetter `json:"deadLetters"`
	// NextToken asks for the next page; absent on the last page. A page reads at most 10,000 dead letters, so a
	// page with a selective filter may hold fewer than limit, even none, and a nextToken.
	NextToken string `json:"nextToken,omitempty"`
} //@name DeadLetterList

// DeadLetterFilter selects dead letters: by the target that gave them up (a rule needs its bus, a target its
// rule), by the time they were stored (RFC 3339, both ends included), by their event's id, by a text their reason
// contains (ignoring case) and by error class. {} selects every dead letter.
type DeadLetterFilter struct {
	Bus    string `json:"bus,omitempty" example:"orders"`
	Rule   string `json:"rule,omitempty" example:"created"`
	Target string `json:"target,omitempty" example:"hook"`
	From   string `json:"from,omitempty" example:"2026-11-30T00:00:00Z"`
	To     string `json:"to,omitempty" example:"2026-11-30T23:59:59Z"`
	// EventID finds the dead letters of one event; a redriven event keeps its id, so the dead letter of a redrive
	// that failed again is found by it.
	EventID    string `json:"eventId,omitempty" example:"order-1"`
	Reason     string `json:"reason,omitempty" example:"503"`
	ErrorClass string `json:"errorClass,omitempty" enums:"permanent,retries-exhausted,transform"`
} //@name DeadLetterFilter

// DeadLetterSelection names the dead letters to redrive or discard: either ids (1 to 500), or a filter that
// selects every matching dead letter stored when the call starts.
type DeadLetterSelection struct {
	IDs    []string          `json:"ids,omitempty" example:"42,43"`
	Filter *DeadLetterFilter `json:"filter,omitempty"`
} //@name DeadLetterSelection

// DeadLetterEntryResult is the result of one dead letter: without errorCode it succeeded.
type DeadLetterEntryResult struct {
	ID           string `json:"id" example:"42"`
	ErrorCode    string `json:"errorCode,omitempty" example:"TargetNotFound"`
	ErrorMessage string `json:"errorMessage,omitempty" example:"target \"hook\" of rule \"created\" on bus \"orders\" no longer exists (target \"hook\" was deleted); dead letter 42 stays in the list"`
} //@name DeadLetterEntryResult

// RedriveResult answers a redrive, one entry per selected dead letter.
type RedriveResult struct {
	RedrivenCount int                     `json:"redrivenCount" example:"1"`
	FailedCount   int                     `json:"failedCount" example:"1"`
	Entries       []DeadLetterEntryResult `json:"entries"`
} //@name RedriveResult

// DiscardResult answers a discard, one entry per selected dead letter.
type DiscardResult struct {
	DeletedCount int                     `json:"deletedCount" example:"2"`
	FailedCount  int                     `json:"failedCount" example:"0"`
	Entries      []DeadLetterEntryResult `json:"entries"`
} //@name DiscardResult

func deadLetterOf(d *deadletter.DeadLetter) DeadLetter {
	ev, err := cloudevent.Marshal(d.Event())
	if err != nil {
		ev = []byte("null") // a stored event always marshals; never fail the whole list for one
	}
	return DeadLetter{ID: d.ID(), Time: d.Time(), Bus: d.Bus(), Rule: d.Rule(), Target: d.Target(), Connector: d.Connector(),
		Reason: d.Reason(), ErrorClass: d.ErrorClass(), Attempts: d.Attempts(), Event: ev}
}

// filter validates f; prefix names its fields in errors ("" for query parameters, "filter." in a body).
func (f DeadLetterFilter) filter(prefix string) (deadletter.Filter, error) {
	parse := func(field, v string) (time.Time, error) {
		if v == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, domain.Invalid(prefix+field, "%s%s %q is not an RFC 3339 time such as 2026-11-30T12:00:00Z", prefix, field, v)
		}
		return t, nil
	}
	from, err := parse("from", f.From)
	if err != nil {
		return deadletter.Filter{}, err
	}
	to, err := parse("to", f.To)
	if err != nil {
		return deadletter.Filter{}, err
	}
	out, err := deadletter.NewFilter(f.Bus, f.Rule, f.Target, from, to)
	if err == nil {
		out, err = out.Narrowed(f.EventID, f.Reason, f.ErrorClass)
	}
	if err != nil && prefix != "" {
		if de, ok := domain.As(err); ok {
			de = de.WithField(prefix + de.Field)
			de.Message = prefix + de.Message
			return deadletter.Filter{}, de
		}
	}
	return out, err
}

// listDeadLetters answers a page of the account's dead letters, oldest first.
//
//	@Summary		List dead letters
//	@Description	The events the account's targets gave up, with the reason, the attempts, the connector and the
//	@Description	original CloudEvent. Filters scan the dead-letter stream: a page reads at most 10,000 dead
//	@Description	letters, so it may hold fewer than limit, even none, and a nextToken. Targets with a dead-letter
//	@Description	bus send their dead letters to that bus instead; they are not listed here.
//	@Tags			dead-letters
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			bus				query		string	false	"the bus of the target that gave the event up"
//	@Param			rule			query		string	false	"its rule (needs bus)"
//	@Param			target			query		string	false	"the target (needs rule)"
//	@Param			from			query		string	false	"stored at or after this RFC 3339 time"
//	@Param			to				query		string	false	"stored at or before this RFC 3339 time"
//	@Param			eventId			query		string	false	"the id of the event (a redriven event keeps it)"
//	@Param			reason			query		string	false	"a text the reason contains, ignoring case"
//	@Param			errorClass		query		string	false	"permanent, retries-exhausted or transform"
//	@Param			limit			query		int		false	"page size, 1 to 500 (default 50)"
//	@Param			nextToken		query		string	false	"token of the next page from the previous answer"
//	@Success		200				{object}	DeadLetterList
//	@Failure		400				{object}	web.Problem	"ValidationError naming the parameter"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/dead-letters [get]
func (a *api) listDeadLetters(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	f, err := DeadLetterFilter{Bus: c.Query("bus"), Rule: c.Query("rule"), Target: c.Query("target"),
		From: c.Query("from"), To: c.Query("to"), EventID: c.Query("eventId"), Reason: c.Query("reason"),
		ErrorClass: c.Query("errorClass")}.filter("")
	if err != nil {
		return 0, nil, err
	}
	dls, next, err := a.s.DeadLetters.List(c.Request.Context(), web.AccountOf(c), f, page)
	if err != nil {
		return 0, nil, err
	}
	out := DeadLetterList{DeadLetters: make([]DeadLetter, 0, len(dls)), NextToken: next}
	for _, d := range dls {
		out.DeadLetters = append(out.DeadLetters, deadLetterOf(d))
	}
	return http.StatusOK, out, nil
}

// selectionOf reads and validates the body of a redrive or discard.
func selectionOf(c *gin.Context) (deadletter.Selection, error) {
	var in DeadLetterSelection
	if err := web.DecodeJSON(c, &in); err != nil {
		return deadletter.Selection{}, err
	}
	var f *deadletter.Filter
	if in.Filter != nil {
		df, err := in.Filter.filter("filter.")
		if err != nil {
			return deadletter.Selection{}, err
		}
		f = &df
	}
	return deadletter.NewSelection(in.IDs, f)
}

func entriesOf(r deadletter.Result) []DeadLetterEntryResult {
	out := make([]DeadLetterEntryResult, 0, len(r.Entries))
	for _, e := range r.Entries {
		er := DeadLetterEntryResult{ID: e.ID}
		if e.Err != nil {
			er.ErrorCode, er.ErrorMessage = e.Err.Code, web.MessageOf(e.Err)
		}
		out = append(out, er)
	}
	return out
}

// redriveDeadLetters sends the selected dead letters back to the target that gave each up (and to no other
// target of its rule), and removes each from the list once stored for that target.
//
//	@Summary		Redrive dead letters
//	@Description	Selected by ids, every id must exist (else 404 DeadLetterNotFound and nothing is redriven);
//	@Description	selected by filter, every matching dead letter stored when the call starts is redriven. Each is
//	@Description	reported in entries, in order: a dead letter whose target no longer exists fails alone
//	@Description	(TargetNotFound) and stays in the list. The redriven event is the original one; the target's
//	@Description	retry policy applies to it afresh, its age counted from the redrive.
//	@Tags			dead-letters
//	@Accept			json
//	@Produce		json
//	@Param			X-Account-Id	header		string				false	"account (default: the caller's own)"
//	@Param			selection		body		DeadLetterSelection	true	"ids, or a filter"
//	@Success		200				{object}	RedriveResult
//	@Failure		400				{object}	web.Problem	"ValidationError or MalformedRequest naming the field"
//	@Failure		404				{object}	web.Problem	"DeadLetterNotFound: an id the account does not have"
//	@Failure		413				{object}	web.Problem
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/dead-letters/redrive [post]
func (a *api) redriveDeadLetters(c *gin.Context) (int, any, error) {
	sel, err := selectionOf(c)
	if err != nil {
		return 0, nil, err
	}
	res, err := a.s.DeadLetters.Redrive(c.Request.Context(), web.AccountOf(c), sel)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, RedriveResult{RedrivenCount: res.Succeeded(), FailedCount: res.Failed(), Entries: entriesOf(res)}, nil
}

// deleteDeadLetters discards the selected dead letters.
//
//	@Summary		Discard dead letters
//	@Description	Selected by ids, every id must exist (else 404 DeadLetterNotFound and nothing is discarded);
//	@Description	selected by filter, every matching dead letter stored when the call starts is discarded
//	@Description	({"filter": {}} discards them all). Each is reported in entries, in order.
//	@Tags			dead-letters
//	@Accept			json
//	@Produce		json
//	@Param			X-Account-Id	header		string				false	"account (default: the caller's own)"
//	@Param			selection		body		DeadLetterSelection	true	"ids, or a filter"
//	@Success		200				{object}	DiscardResult
//	@Failure		400				{object}	web.Problem	"ValidationError or MalformedRequest naming the field"
//	@Failure		404				{object}	web.Problem	"DeadLetterNotFound: an id the account does not have"
//	@Failure		413				{object}	web.Problem
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/dead-letters [delete]
func (a *api) deleteDeadLetters(c *gin.Context) (int, any, error) {
	sel, err := selectionOf(c)
	if err != nil {
		return 0, nil, err
	}
	res, err := a.s.DeadLetters.Delete(c.Request.Context(), web.AccountOf(c), sel)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, DiscardResult{DeletedCount: res.Succeeded(), FailedCount: res.Failed(), Entries: entriesOf(res)}, nil
}
