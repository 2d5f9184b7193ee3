package rest

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/replay"
	"github.com/eventbridge-go/eventbridge/web"
)

// Replay puts the events an archive holds from a window of time on the archive's bus again, with the extension
// replayname, to every rule of the bus, to some of them, or to one target of one rule.
type Replay struct {
	Name        string `json:"name" example:"fix-1234"`
	Description string `json:"description"`
	// Archive names the archive (of the caller's account) to replay.
	Archive string `json:"archive" example:"orders-2026"`
	// EventStartTime and EventEndTime bound the window [start, end) of when the bus stored the events (not the
	// events' own time attribute); the end may not be in the future.
	EventStartTime time.Time `json:"eventStartTime"`
	EventEndTime   time.Time `json:"eventEndTime"`
	// Destination is the archive's bus; rules or target narrow it.
	Destination ReplayDestination `json:"destination"`
	// Rate bounds the events per second the replay puts on the bus (default 1000), so live traffic keeps flowing.
	Rate int `json:"rate,omitempty" example:"1000"`
	// State is STARTING, RUNNING, CANCELLING, COMPLETED, CANCELLED or FAILED; StateReason says why it FAILED.
	State       string `json:"state" readonly:"true" enums:"STARTING,RUNNING,CANCELLING,COMPLETED,CANCELLED,FAILED"`
	StateReason string `json:"stateReason,omitempty" readonly:"true"`
	// EventsReplayed counts the events put on the bus so far; Duplicates those stored once already (replayed
	// again after a crash, within the bus's duplicate window).
	EventsReplayed uint64 `json:"eventsReplayed" readonly:"true"`
	Duplicates     uint64 `json:"duplicates" readonly:"true"`
	// EventLastReplayedTime is when the bus had stored the last event replayed.
	EventLastReplayedTime *time.Time `json:"eventLastReplayedTime,omitempty" readonly:"true"`
	ReplayStartTime       time.Time  `json:"replayStartTime" readonly:"true"`
	ReplayEndTime         *time.Time `json:"replayEndTime,omitempty" readonly:"true"`
} //@name Replay

// ReplayDestination is where a replay puts its events.
type ReplayDestination struct {
	// Bus is the archive's bus (answers only).
	Bus string `json:"bus,omitempty" readonly:"true"`
	// Rules names rules of the bus (Amazon EventBridge's FilterArns); absent: every rule.
	Rules []string `json:"rules,omitempty"`
	// Target names one target of one rule instead.
	Target *ReplayTarget `json:"target,omitempty"`
} //@name ReplayDestination

// ReplayTarget names one target of one rule.
type ReplayTarget struct {
	Rule   string `json:"rule"`
	Target string `json:"target"`
} //@name ReplayTarget

// ReplayList is one page of replays.
type ReplayList struct {
	Replays   []Replay `json:"replays"`
	NextToken string   `json:"nextToken,omitempty"`
} //@name ReplayList

func (r Replay) auditKey() string { return r.Name }

func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (a *api) replayOf(c *gin.Context, r *replay.Replay) Replay {
	out := Replay{Name: r.Name, Description: r.Description, Archive: r.ArchiveName, EventStartTime: r.EventStartTime,
		EventEndTime: r.EventEndTime, Rate: r.Rate, State: string(r.State), StateReason: r.StateReason,
		EventsReplayed: r.Progress.Replayed, Duplicates: r.Progress.Duplicates,
		EventLastReplayedTime: optionalTime(r.Progress.LastReplayedTime), ReplayStartTime: r.StartedAt,
		ReplayEndTime: optionalTime(r.EndedAt)}
	out.Destination.Bus = a.s.Replays.BusName(c.Request.Context(), r)
	out.Destination.Rules = r.Destination.RuleNames
	if r.Destination.TargetID != "" {
		out.Destination.Target = &ReplayTarget{Rule: r.Destination.TargetRuleName, Target: r.Destination.TargetName}
	}
	return out
}

// startReplay starts a replay; it answers STARTING once its connector is created on the archive's bus.
//
//	@Summary	Start a replay
//	@Tags		replays
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		replay			body		Replay	true	"the replay (name, description, archive, eventStartTime, eventEndTime, destination, rate)"
//	@Success	201				{object}	Replay
//	@Failure	400				{object}	web.Problem	"invalid input (ValidationError naming the field, MalformedRequest)"
//	@Failure	404				{object}	web.Problem	"ArchiveNotFound, RuleNotFound, TargetNotFound"
//	@Failure	409				{object}	web.Problem	"ReplayAlreadyExists, ReplayQuotaExceeded"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/replays [post]
func (a *api) startReplay(c *gin.Context, in *Replay) (int, any, error) {
	spec := replay.Spec{Name: in.Name, Description: in.Description, Archive: in.Archive, EventStartTime: in.EventStartTime,
		EventEndTime: in.EventEndTime, Rules: in.Destination.Rules, Rate: in.Rate}
	if in.Archive == "" {
		return 0, nil, domain.Invalid("archive", "archive is required")
	}
	if t := in.Destination.Target; t != nil {
		spec.TargetRule, spec.Target = t.Rule, t.Target
	}
	r, err := a.s.Replays.Start(c.Request.Context(), web.AccountOf(c), spec)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, a.replayOf(c, r), nil
}

// listReplays answers a page of the account's replays, ordered by name.
//
//	@Summary	List replays
//	@Tags		replays
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		state			query		string	false	"only replays in this state"	Enums(STARTING,RUNNING,CANCELLING,COMPLETED,CANCELLED,FAILED)
//	@Param		archive			query		string	false	"only replays of this archive"
//	@Param		namePrefix		query		string	false	"only replays whose name starts with this"
//	@Param		limit			query		int		false	"page size, 1 to 500 (default 50)"
//	@Param		nextToken		query		string	false	"token of the next page from the previous answer"
//	@Success	200				{object}	ReplayList
//	@Failure	400				{object}	web.Problem
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/replays [get]
func (a *api) listReplays(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	f := replay.Filter{State: replay.State(c.Query("state")), ArchiveName: c.Query("archive"), NamePrefix: c.Query("namePrefix")}
	switch f.State {
	case "", replay.Starting, replay.Running, replay.Cancelling, replay.Completed, replay.Cancelled, replay.Failed:
	default:
		return 0, nil, domain.Invalid("state", "state must be STARTING, RUNNING, CANCELLING, COMPLETED, CANCELLED or FAILED, not %q", f.State)
	}
	if f.NamePrefix != "" {
		if err := domain.ValidateName("namePrefix", f.NamePrefix); err != nil {
			return 0, nil, err
		}
	}
	rs, next, err := a.s.Replays.List(c.Request.Context(), web.AccountOf(c), f, page)
	if err != nil {
		return 0, nil, err
	}
	out := ReplayList{Replays: make([]Replay, 0, len(rs)), NextToken: next}
	for _, r := range rs {
		out.Replays = append(out.Replays, a.replayOf(c, r))
	}
	return http.StatusOK, out, nil
}

// getReplay answers a replay with its progress.
//
//	@Summary	Get a replay
//	@Tags		replays
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		replay			path		string	true	"replay name"
//	@Success	200				{object}	Replay
//	@Failure	404				{object}	web.Problem	"ReplayNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/replays/{replay} [get]
func (a *api) getReplay(c *gin.Context) (int, any, error) {
	r, err := a.s.Replays.Get(c.Request.Context(), web.AccountOf(c), c.Param("replay"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, a.replayOf(c, r), nil
}

// cancelReplay cancels a replay that has not ended; what it replayed stays replayed.
//
//	@Summary	Cancel a replay
//	@Tags		replays
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		replay			path		string	true	"replay name"
//	@Success	200				{object}	Replay	"CANCELLED, or CANCELLING while its connector is removed"
//	@Failure	404				{object}	web.Problem	"ReplayNotFound"
//	@Failure	409				{object}	web.Problem	"IllegalReplayState: the replay ended"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/replays/{replay}/cancel [post]
func (a *api) cancelReplay(c *gin.Context) (int, any, error) {
	r, err := a.s.Replays.Cancel(c.Request.Context(), web.AccountOf(c), c.Param("replay"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, a.replayOf(c, r), nil
}
