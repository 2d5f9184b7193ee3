package rest

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/channel"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/web"
)

// Channel is a rule with all its targets and the sources of its bus, as one document: what the console's channel
// builder draws. A PUT checks all of it (plugin configs through the runtime, the pattern, transformers, names,
// references) before changing anything, and stores all of it or nothing; its problems are answered together, each
// with the JSON pointer of its place in the document (the problem's errors).
type Channel struct {
	// Bus is the bus of the path; read-only.
	Bus string `json:"bus" readonly:"true" example:"orders"`
	// CreateBus, in a PUT, creates the bus (with the default retention) when it does not exist, once the document
	// passed its checks; without it a missing bus is BusNotFound.
	CreateBus bool `json:"createBus,omitempty"`
	// Sources are the bus's sources. In a PUT each one listed is created or replaced (a secret value sent back as
	// *** keeps the stored one); the bus's other sources are kept, since they feed its other rules too (delete one
	// at /buses/{bus}/sources/{source}). Answers hold every source of the bus, http sources with their webhook.
	Sources []Source `json:"sources"`
	// Rule is the rule, without targets; its name may be absent (the path's).
	Rule Rule `json:"rule"`
	// Targets are every target of the rule: a PUT creates or replaces those listed and deletes the others.
	Targets []Target `json:"targets"`
} //@name Channel

// spec returns the domain form of the document, or every problem its parts have on their own.
func (in Channel) spec() (channel.Spec, error) {
	var ds []domain.Detail
	problem := func(prefix string, flat bool, err error) error {
		more, ok := channel.DetailsOf(prefix, flat, err)
		if !ok {
			return err
		}
		ds = append(ds, more...)
		return nil
	}
	out := channel.Spec{CreateBus: in.CreateBus}
	for i, s := range in.Sources {
		ss, err := s.spec()
		if err != nil {
			if err := problem(fmt.Sprintf("/sources/%d", i), true, err); err != nil {
				return channel.Spec{}, err
			}
			continue
		}
		out.Sources = append(out.Sources, ss)
	}
	if len(in.Rule.Targets) > 0 {
		ds = append(ds, domain.Detail{Pointer: "/rule/targets", Code: domain.ErrValidation.Code,
			Message: "a channel's targets are its own member, targets, not the rule's"})
	}
	rs, err := in.Rule.spec()
	if err != nil {
		if err := problem("/rule", false, err); err != nil {
			return channel.Spec{}, err
		}
	}
	out.Rule = rs
	for i, t := range in.Targets {
		ts, err := t.Spec()
		if err != nil {
			if err := problem(fmt.Sprintf("/targets/%d", i), target.Type(t.Type).IsPlugin(), err); err != nil {
				return channel.Spec{}, err
			}
			continue
		}
		out.Targets = append(out.Targets, ts)
	}
	if len(ds) > 0 {
		return channel.Spec{}, channel.Invalid(ds)
	}
	return out, nil
}

func (a *api) channelOf(c *gin.Context, ch *channel.Channel) Channel {
	out := Channel{Bus: ch.Bus.Name(), Sources: make([]Source, 0, len(ch.Sources)), Rule: ruleOf(ch.Rule),
		Targets: make([]Target, 0, len(ch.Targets))}
	for _, s := range ch.Sources {
		out.Sources = append(out.Sources, a.sourceOf(c, s))
	}
	for _, t := range ch.Targets {
		out.Targets = append(out.Targets, a.targetOf(c, t))
	}
	return out
}

// getChannel answers a rule with its targets and its bus's sources, read at one moment.
//
//	@Summary	Get a channel: a rule, its targets and its bus's sources
//	@Tags		channels
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		rule			path		string	true	"rule name"
//	@Success	200				{object}	Channel
//	@Failure	404				{object}	web.Problem	"BusNotFound, RuleNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/channels/{rule} [get]
func (a *api) getChannel(c *gin.Context) {
	ch, err := a.s.Channels.Get(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("rule"))
	if err != nil {
		a.writeError(c, err)
		return
	}
	c.PureJSON(http.StatusOK, a.channelOf(c, ch)) // templates hold < and >: not escaped, so they read as written
}

// putChannel creates or replaces a channel, all of it or nothing.
//
//	@Summary		Create or replace a channel: a rule, all its targets and sources of its bus, in one transaction
//	@Description	Every part is checked first: names, the event pattern, transformers, references (buses, API
//	@Description	destinations) and the configs of plugin targets and sources, by their plugins in the runtime. A
//	@Description	document with problems changes nothing and is answered 400 InvalidChannel with every problem in
//	@Description	errors, each with the JSON pointer of its place (/targets/0/config/url). A valid one is stored in one
//	@Description	transaction: no reader, on this replica or another, sees part of it. Targets not listed are deleted;
//	@Description	sources not listed are kept. It answers once the runtime applied it, with the channel as stored.
//	@Tags			channels
//	@Accept			json
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			bus				path		string	true	"bus name"
//	@Param			rule			path		string	true	"rule name"
//	@Param			body			body		Channel	true	"the channel; read-only fields are ignored"
//	@Success		200				{object}	Channel	"replaced"
//	@Success		201				{object}	Channel	"created (the rule is new)"
//	@Failure		400				{object}	web.Problem	"InvalidChannel (errors lists every problem), MalformedRequest"
//	@Failure		404				{object}	web.Problem	"BusNotFound"
//	@Failure		409				{object}	web.Problem	"ChannelChanged (another request changed it meanwhile), RuleQuotaExceeded, SourceQuotaExceeded, BusQuotaExceeded"
//	@Failure		503				{object}	web.Problem	"ServiceUnavailable: the runtime could not check a plugin's config"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/buses/{bus}/channels/{rule} [put]
func (a *api) putChannel(c *gin.Context) {
	var in Channel
	if err := web.DecodeJSON(c, &in); err != nil {
		a.writeError(c, err)
		return
	}
	spec, err := in.spec()
	if err != nil {
		a.writeError(c, err)
		return
	}
	ch, created, err := a.s.Channels.Put(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("rule"), spec)
	if err != nil {
		a.writeError(c, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	c.PureJSON(status, a.channelOf(c, ch))
}
