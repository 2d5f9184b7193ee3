// Package replay holds replays: the events an archive holds from a window of time, put on the archive's bus again
// (for every rule, some of them, or one target of one rule), with Amazon EventBridge's states and semantics.
package replay

import (
	"context"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

// State is where a replay is.
type State string

// States, as Amazon EventBridge names them.
const (
	// Starting: declared; its connector is being created.
	Starting State = "STARTING"
	// Running: its connector replays.
	Running State = "RUNNING"
	// Cancelling: cancel was asked; its connector is being removed.
	Cancelling State = "CANCELLING"
	Completed  State = "COMPLETED"
	Cancelled  State = "CANCELLED"
	// Failed: its connector failed (StateReason says why) or its archive, bus, rule or target was deleted.
	Failed State = "FAILED"
)

// Active reports whether a replay in s has a connector that runs (or is to run).
func (s State) Active() bool { return s == Starting || s == Running }

// Ended reports whether s is final.
func (s State) Ended() bool { return s == Completed || s == Cancelled || s == Failed }

// DefaultRate is the events per second a replay puts on its bus unless it says.
const DefaultRate = 1000

// MaxRate bounds a replay's rate.
const MaxRate = 100000

// Errors returned by this package and its repository.
var (
	ErrNotFound      = &domain.Error{Kind: domain.KindNotFound, Code: "ReplayNotFound"}
	ErrAlreadyExists = &domain.Error{Kind: domain.KindConflict, Code: "ReplayAlreadyExists"}
	// ErrInvalidState: cancel of a replay that ended.
	ErrInvalidState = &domain.Error{Kind: domain.KindConflict, Code: "IllegalReplayState"}
	// ErrQuotaExceeded: the account runs as many replays as allowed.
	ErrQuotaExceeded = &domain.Error{Kind: domain.KindLimitExceeded, Code: "ReplayQuotaExceeded"}
)

// Destination is where a replay puts its events: the archive's bus, for every rule (no RuleIDs, no target), the
// rules named, or one target of one rule.
type Destination struct {
	// RuleIDs and RuleNames are the rules the events are routed to; empty: every rule of the bus.
	RuleIDs   []string
	RuleNames []string
	// TargetRuleID and TargetID name one target of one rule (through its redrive subject); empty: none.
	TargetRuleID, TargetRuleName string
	TargetID, TargetName         string
}

// Progress is how far a replay got, as its connector reported it.
type Progress struct {
	// Replayed counts the events put on the bus so far; Duplicates those stored once already (a batch
	// replayed again after a crash, within the bus's duplicate window).
	Replayed   uint64
	Duplicates uint64
	// LastReplayedTime is when the bus had stored the last event replayed (zero before the first).
	LastReplayedTime time.Time
}

// Replay is one replay of an archive's window.
type Replay struct {
	ID          string
	AccountID   string
	Name        string
	Description string
	ArchiveID   string
	ArchiveName string
	BusID       string
	// EventStartTime and EventEndTime bound the window [start, end) of the time the bus stored the events (not the
	// events' own time attribute, which clients set as they like).
	EventStartTime time.Time
	EventEndTime   time.Time
	Destination    Destination
	// Rate is the events per second the replay puts on the bus at most.
	Rate int
	// EndSequence is the archive's last sequence when the replay started: events archived later are not replayed.
	EndSequence uint64
	State       State
	StateReason string
	Progress    Progress
	// StartedAt is when the replay was asked; EndedAt when it reached a final state.
	StartedAt time.Time
	EndedAt   time.Time
	UpdatedAt time.Time
}

// New validates a replay of an archive created at archiveCreated: a name, a window with start before end and end
// not after now, a rate between 1 and MaxRate (0: DefaultRate). Destination and the archive are the service's.
func New(accountID, name, description string, start, end time.Time, rate int, archiveCreated, now time.Time) (*Replay, error) {
	if err := domain.ValidateName("name", name); err != nil {
		return nil, err
	}
	if err := domain.ValidateDescription(description); err != nil {
		return nil, err
	}
	if start.IsZero() {
		return nil, domain.Invalid("eventStartTime", "eventStartTime is required")
	}
	if end.IsZero() {
		return nil, domain.Invalid("eventEndTime", "eventEndTime is required")
	}
	if !start.Before(end) {
		return nil, domain.Invalid("eventEndTime", "eventEndTime (%s) must be after eventStartTime (%s)",
			end.UTC().Format(time.RFC3339Nano), start.UTC().Format(time.RFC3339Nano))
	}
	if end.After(now) {
		return nil, domain.Invalid("eventEndTime", "eventEndTime (%s) must not be in the future (now %s): events stored "+
			"later are not archived yet", end.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
	}
	if !end.After(archiveCreated) {
		return nil, domain.Invalid("eventEndTime", "eventEndTime (%s) is before the archive was created (%s): it holds "+
			"no event of that window", end.UTC().Format(time.RFC3339Nano), archiveCreated.UTC().Format(time.RFC3339Nano))
	}
	if rate == 0 {
		rate = DefaultRate
	}
	if rate < 1 || rate > MaxRate {
		return nil, domain.Invalid("rate", "rate must be between 1 and %d events per second, not %d", MaxRate, rate)
	}
	return &Replay{ID: domain.NewID(), AccountID: accountID, Name: name, Description: description,
		EventStartTime: start.UTC(), EventEndTime: end.UTC(), Rate: rate, State: Starting,
		StartedAt: now.UTC(), UpdatedAt: now.UTC()}, nil
}

// End puts r in a final state with a reason (for FAILED) at now.
func (r *Replay) End(s State, reason string, now time.Time) {
	r.State, r.StateReason, r.EndedAt, r.UpdatedAt = s, reason, now.UTC(), now.UTC()
}

// Filter selects replays in List.
type Filter struct {
	// State, ArchiveName and NamePrefix select when not empty.
	State       State
	ArchiveName string
	NamePrefix  string
}

// Repository stores replays. Names are unique per account.
type Repository interface {
	// Create stores a new replay; ErrAlreadyExists when the account has one of that name.
	Create(ctx context.Context, r *Replay) error
	// Get returns ErrNotFound when the account has no replay of that name.
	Get(ctx context.Context, accountID, name string) (*Replay, error)
	// List returns one page of the account's replays that f selects, ordered by name.
	List(ctx context.Context, accountID string, f Filter, page domain.Page) ([]*Replay, string, error)
	// ListActiveByBus returns the replays of a bus whose connector runs or is to run (STARTING, RUNNING).
	ListActiveByBus(ctx context.Context, busID string) ([]*Replay, error)
	// ListUnfinished returns the replays of every account that have not ended (STARTING, RUNNING, CANCELLING).
	ListUnfinished(ctx context.Context) ([]*Replay, error)
	// CountUnfinished counts the account's replays that have not ended.
	CountUnfinished(ctx context.Context, accountID string) (int, error)
	// Update loads the replay, lets fn change it and stores it, in one transaction; ErrNotFound when it does not
	// exist; fn's error is returned as is and nothing is stored.
	Update(ctx context.Context, accountID, name string, fn func(*Replay) error) (*Replay, error)
	// DeleteByAccount removes every replay of the account.
	DeleteByAccount(ctx context.Context, accountID string) error
}
