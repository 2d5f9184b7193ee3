package aws

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/archive"
	"github.com/eventbridge-go/eventbridge/domain/replay"
	"github.com/eventbridge-go/eventbridge/web"
)

// Replays are the replays of /api/v1 (domain/replay), whose states are AWS's: STARTING, RUNNING, CANCELLING,
// COMPLETED, CANCELLED, FAILED. A replay puts the events its archive holds from [EventStartTime, EventEndTime) on
// the archive's bus again (Destination.Arn, which must be that bus: AWS permits no other), to every rule or to the
// rules of Destination.FilterArns. The window is of the time the bus stored the events. A replay made through
// /api/v1 to one target of one rule shows that rule in FilterArns.

var replayStates = []string{string(replay.Starting), string(replay.Running), string(replay.Cancelling), string(replay.Completed),
	string(replay.Cancelled), string(replay.Failed)}

// ReplayDestination is where a replay puts its events: its archive's bus, and the rules that receive them (all
// when there are none).
type ReplayDestination struct {
	Arn        string   `json:"Arn,omitempty"`
	FilterArns []string `json:"FilterArns,omitempty"`
}

// Replay is a replay as ListReplays answers it (DescribeReplay adds its ARN, description and destination).
type Replay struct {
	ReplayName            string `json:"ReplayName"`
	EventSourceArn        string `json:"EventSourceArn"`
	State                 string `json:"State"`
	StateReason           string `json:"StateReason,omitempty"`
	EventStartTime        epoch  `json:"EventStartTime"`
	EventEndTime          epoch  `json:"EventEndTime"`
	EventLastReplayedTime *epoch `json:"EventLastReplayedTime,omitempty"`
	ReplayStartTime       epoch  `json:"ReplayStartTime"`
	ReplayEndTime         *epoch `json:"ReplayEndTime,omitempty"`
}

func optionalEpoch(t time.Time) *epoch {
	if t.IsZero() {
		return nil
	}
	e := epoch(t)
	return &e
}

func (a *api) replayOut(c *gin.Context, r *replay.Replay) Replay {
	return Replay{ReplayName: r.Name, EventSourceArn: a.archiveARN(c, r.ArchiveName), State: string(r.State), StateReason: r.StateReason,
		EventStartTime: epoch(r.EventStartTime), EventEndTime: epoch(r.EventEndTime),
		EventLastReplayedTime: optionalEpoch(r.Progress.LastReplayedTime), ReplayStartTime: epoch(r.StartedAt),
		ReplayEndTime: optionalEpoch(r.EndedAt)}
}

func replayNotFound(name string) error {
	return &Error{Type: excNotFound, Message: "Replay " + name + " does not exist."}
}

type startReplayIn struct {
	ReplayName     string
	Description    string
	EventSourceArn string
	EventStartTime *epoch
	EventEndTime   *epoch
	Destination    *struct {
		Arn        string
		FilterArns []string
	}
}

// startReplay starts a replay of an archive of the account to the archive's bus; it answers STARTING, and the
// replay runs on (DescribeReplay follows it).
func (a *api) startReplay(c *gin.Context, in *startReplayIn) (any, error) {
	if err := checkName("ReplayName", in.ReplayName); err != nil {
		return nil, err
	}
	src, err := a.refOf(c, "EventSourceArn", kindArchive, in.EventSourceArn)
	if err != nil {
		return nil, err
	}
	switch {
	case in.EventStartTime == nil:
		return nil, validation("Parameter EventStartTime is required.")
	case in.EventEndTime == nil:
		return nil, validation("Parameter EventEndTime is required.")
	case !time.Time(*in.EventStartTime).Before(time.Time(*in.EventEndTime)):
		return nil, validation("Parameter EventEndTime is not valid. Reason: EventStartTime must be before EventEndTime.")
	case in.Destination == nil || in.Destination.Arn == "":
		return nil, validation("Parameter Destination.Arn is required.")
	case src.foreign:
		return nil, archiveNotFound(src.name)
	}
	ctx, account := c.Request.Context(), web.AccountOf(c)
	arch, err := a.s.Archives.Get(ctx, account, "", src.name)
	if errors.Is(err, archive.ErrNotFound) {
		return nil, archiveNotFound(src.name)
	}
	if err != nil {
		return nil, err
	}
	dest, err := a.busName(c, "Destination.Arn", in.Destination.Arn)
	if err != nil {
		return nil, err
	}
	if dest != arch.BusName {
		if _, err := a.lookupBus(c, dest); err != nil {
			return nil, err
		}
		return nil, validation("Parameter Destination.Arn is not valid. Reason: Cross event bus replay is not permitted.")
	}
	// The SDKs send milliseconds; epoch reads them through a float, which may fall a nanosecond short.
	spec := replay.Spec{Name: in.ReplayName, Description: in.Description, Archive: arch.Name(),
		EventStartTime: time.Time(*in.EventStartTime).Round(time.Microsecond), EventEndTime: time.Time(*in.EventEndTime).Round(time.Microsecond)}
	for _, v := range in.Destination.FilterArns {
		name, err := a.ruleOfReplay(c, arch.BusName, v)
		if err != nil {
			return nil, err
		}
		spec.Rules = append(spec.Rules, name)
	}
	r, err := a.s.Replays.Start(ctx, account, spec)
	if errors.Is(err, replay.ErrAlreadyExists) {
		return nil, &Error{Type: excAlreadyExists, Message: "Replay " + in.ReplayName + " already exists."}
	}
	if err != nil {
		return nil, err
	}
	return struct {
		ReplayArn       string `json:"ReplayArn"`
		State           string `json:"State"`
		StateReason     string `json:"StateReason,omitempty"`
		ReplayStartTime epoch  `json:"ReplayStartTime"`
	}{ReplayArn: a.replayARN(c, r.Name), State: string(r.State), StateReason: r.StateReason, ReplayStartTime: epoch(r.StartedAt)}, nil
}

// ruleOfReplay is the name of the rule that v, an ARN of Destination.FilterArns, names on the bus busName:
// rule/<rule> on the bus default, rule/<bus>/<rule> on another (a bus's name may hold slashes, a rule's not).
func (a *api) ruleOfReplay(c *gin.Context, busName, v string) (string, error) {
	n, ok := parseARN(v)
	rest, isRule := strings.CutPrefix(n.resource, "rule/")
	if !ok || n.service != Service || !isRule || rest == "" {
		return "", validation("Parameter Destination.FilterArns is not valid. Reason: %q is not the ARN of a rule "+
			"(arn:aws:events:<region>:<account>:rule/[<bus>/]<rule>).", strings.ToValidUTF8(v, "?"))
	}
	ruleBus, name := DefaultBus, rest
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		ruleBus, name = rest[:i], rest[i+1:]
	}
	if n.region != a.region || n.account != accountNumber(c) {
		return "", &Error{Type: excNotFound, Message: "Rule " + name + " does not exist on EventBus " + ruleBus + "."}
	}
	if ruleBus != busName {
		return "", validation("Parameter Destination.FilterArns is not valid. Reason: rule %s is on event bus %s, not on "+
			"the archive's event bus %s.", name, ruleBus, busName)
	}
	_, err := a.s.Rules.Get(c.Request.Context(), web.AccountOf(c), busName, name)
	return name, a.ruleError(busName, name, err)
}

type replayNameIn struct{ ReplayName string }

// lookupReplay reads the account's replay of that name, answering AWS's message when it does not exist.
func (a *api) lookupReplay(c *gin.Context, name string) (*replay.Replay, error) {
	if err := checkName("ReplayName", name); err != nil {
		return nil, err
	}
	r, err := a.s.Replays.Get(c.Request.Context(), web.AccountOf(c), name)
	if errors.Is(err, replay.ErrNotFound) {
		return nil, replayNotFound(name)
	}
	return r, err
}

// cancelReplay cancels a replay that has not ended: CANCELLING while its connector is removed, then CANCELLED.
// What it replayed stays replayed. A replay that ended is IllegalStatusException, as in AWS.
func (a *api) cancelReplay(c *gin.Context, in *replayNameIn) (any, error) {
	if err := checkName("ReplayName", in.ReplayName); err != nil {
		return nil, err
	}
	r, err := a.s.Replays.Cancel(c.Request.Context(), web.AccountOf(c), in.ReplayName)
	switch {
	case errors.Is(err, replay.ErrNotFound):
		return nil, replayNotFound(in.ReplayName)
	case errors.Is(err, replay.ErrInvalidState):
		de, _ := domain.As(err)
		return nil, &Error{Type: excIllegalStatus, Message: web.MessageOf(de)}
	case err != nil:
		return nil, err
	}
	return struct {
		ReplayArn   string `json:"ReplayArn"`
		State       string `json:"State"`
		StateReason string `json:"StateReason,omitempty"`
	}{ReplayArn: a.replayARN(c, r.Name), State: string(r.State), StateReason: r.StateReason}, nil
}

// ReplayDescription is what DescribeReplay answers.
type ReplayDescription struct {
	Replay
	ReplayArn   string            `json:"ReplayArn"`
	Description string            `json:"Description,omitempty"`
	Destination ReplayDestination `json:"Destination"`
}

func (a *api) describeReplay(c *gin.Context, in *replayNameIn) (any, error) {
	r, err := a.lookupReplay(c, in.ReplayName)
	if err != nil {
		return nil, err
	}
	out := ReplayDescription{Replay: a.replayOut(c, r), ReplayArn: a.replayARN(c, r.Name), Description: r.Description}
	if busName := a.s.Replays.BusName(c.Request.Context(), r); busName != "" {
		out.Destination.Arn = a.busARN(c, busName)
		rules := r.Destination.RuleNames
		if r.Destination.TargetRuleName != "" {
			rules = []string{r.Destination.TargetRuleName}
		}
		for _, name := range rules {
			out.Destination.FilterArns = append(out.Destination.FilterArns, a.ruleARN(c, busName, name))
		}
	}
	return out, nil
}

type listReplaysIn struct {
	NamePrefix     string
	State          string
	EventSourceArn string
	NextToken      string
	Limit          *int
}

func (a *api) listReplays(c *gin.Context, in *listReplaysIn) (any, error) {
	if in.State != "" && !slices.Contains(replayStates, in.State) {
		return nil, validation("Parameter State is not valid: %q is not one of %v.", in.State, replayStates)
	}
	f := replay.Filter{State: replay.State(in.State)}
	if in.EventSourceArn != "" {
		src, err := a.refOf(c, "EventSourceArn", kindArchive, in.EventSourceArn)
		if err != nil {
			return nil, err
		}
		if src.foreign { // another account's archive has no replays here
			return a.replaysOut(c, nil, in)
		}
		f.ArchiveName = src.name
	}
	all, err := domain.AllPages(c.Request.Context(), func(ctx context.Context, p domain.Page) ([]*replay.Replay, string, error) {
		return a.s.Replays.List(ctx, web.AccountOf(c), f, p)
	})
	if err != nil {
		return nil, err
	}
	return a.replaysOut(c, all, in)
}

func (a *api) replaysOut(c *gin.Context, all []*replay.Replay, in *listReplaysIn) (any, error) {
	page, next, err := pageOf(prefixed(all, in.NamePrefix, func(r *replay.Replay) string { return r.Name }), in.NextToken, in.Limit)
	if err != nil {
		return nil, err
	}
	out := struct {
		Replays   []Replay `json:"Replays"`
		NextToken string   `json:"NextToken,omitempty"`
	}{Replays: make([]Replay, 0, len(page)), NextToken: next}
	for _, r := range page {
		out.Replays = append(out.Replays, a.replayOut(c, r))
	}
	return out, nil
}
