package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/archive"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/target"
)

// DefaultMaxUnfinished is how many replays an account may have that have not ended, as Amazon EventBridge's
// concurrent replays quota.
const DefaultMaxUnfinished = 10

// Report is what the runtime says of a replay's connector.
type Report struct {
	// Found: the connector exists. Running: its task runs.
	Found, Running bool
	// Done: it replayed the whole window (its offset says so).
	Done bool
	// Failed is why its task failed ("" when it did not).
	Failed   string
	Progress Progress
}

// Runtime runs replays: a replay is a source connector of its bus, created and removed with the bus's other
// connectors (SyncBus applies the bus's active replays).
type Runtime interface {
	SyncBus(ctx context.Context, b *bus.Bus) error
	// ReplayReport reads the connector of a replay.
	ReplayReport(ctx context.Context, r *Replay) (Report, error)
}

// Log records replays in the log of their bus (when it logs).
type Log interface {
	// Replayed records that r started (ended "") or ended in state ended.
	Replayed(ctx context.Context, b *bus.Bus, r *Replay, ended State) error
}

// Archives reads the archives replays replay.
type Archives interface {
	Get(ctx context.Context, accountID, name string) (*archive.Archive, error)
}

// ArchiveStore tells what an archive holds.
type ArchiveStore interface {
	ArchiveStats(ctx context.Context, a *archive.Archive) (archive.Stats, error)
}

// Service holds the use cases of replays.
type Service struct {
	Replays  Repository
	Archives Archives
	Store    ArchiveStore
	Buses    bus.Repository
	Rules    rule.Repository
	Targets  target.Repository
	Runtime  Runtime
	// Log, when set, records each replay's start and end in its bus's log: at INFO and TRACE, and a failure at
	// ERROR too.
	Log    Log
	Logger *slog.Logger
	Clock  domain.Clock
	// MaxUnfinished is the quota of replays per account that have not ended; 0 means DefaultMaxUnfinished.
	MaxUnfinished int

	wakeOnce sync.Once
	wake     chan struct{}
}

// woken receives a value when Start or Cancel on this replica asks Watch to look now.
func (s *Service) woken() chan struct{} {
	s.wakeOnce.Do(func() { s.wake = make(chan struct{}, 1) })
	return s.wake
}

// poke makes a waiting Watch check at once.
func (s *Service) poke() {
	select {
	case s.woken() <- struct{}{}:
	default:
	}
}

// Spec is what a caller asks of a replay.
type Spec struct {
	Name           string
	Description    string
	Archive        string
	EventStartTime time.Time
	EventEndTime   time.Time
	// Rules are names of rules of the archive's bus (empty: every rule); Target names one target of one rule.
	Rules      []string
	TargetRule string
	Target     string
	Rate       int
}

// Start starts a replay of the archived events the bus stored within [EventStartTime, EventEndTime) and answers
// STARTING: the replay's connector is created on the archive's bus at once (or by the next reconciliation while
// the runtime is unreachable). Errors: archive.ErrNotFound, rule.ErrNotFound, target.ErrNotFound, ErrAlreadyExists,
// ErrQuotaExceeded, validation.
func (s *Service) Start(ctx context.Context, accountID string, spec Spec) (*Replay, error) {
	a, err := s.Archives.Get(ctx, accountID, spec.Archive)
	if err != nil {
		return nil, err
	}
	b, err := s.Buses.GetByID(ctx, a.BusID())
	if err != nil {
		return nil, err
	}
	r, err := New(accountID, spec.Name, spec.Description, spec.EventStartTime, spec.EventEndTime, spec.Rate, a.CreatedAt(), s.Clock.Now())
	if err != nil {
		return nil, err
	}
	r.ArchiveID, r.ArchiveName, r.BusID = a.ID(), a.Name(), b.ID()
	if r.Destination, err = s.destination(ctx, b, spec); err != nil {
		return nil, err
	}
	quota := s.MaxUnfinished
	if quota <= 0 {
		quota = DefaultMaxUnfinished
	}
	n, err := s.Replays.CountUnfinished(ctx, accountID)
	if err != nil {
		return nil, err
	}
	if n >= quota {
		return nil, ErrQuotaExceeded.With("quota exceeded: replays that have not ended (%d); account %q has %d", quota, accountID, n)
	}
	st, err := s.Store.ArchiveStats(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("reading the archive's last event: %w", err)
	}
	r.EndSequence = st.LastSequence
	if err := s.Replays.Create(ctx, r); err != nil {
		return nil, err
	}
	s.log(ctx, r, "")
	s.sync(ctx, b)
	s.poke()
	return r, nil
}

// destination resolves the rule and target names of spec on bus b.
func (s *Service) destination(ctx context.Context, b *bus.Bus, spec Spec) (Destination, error) {
	var d Destination
	if spec.Target != "" || spec.TargetRule != "" {
		if len(spec.Rules) > 0 {
			return d, domain.Invalid("destination", "destination names either rules or one target, not both")
		}
		if spec.Target == "" || spec.TargetRule == "" {
			return d, domain.Invalid("destination.target", "a target is named with its rule: {\"rule\": ..., \"target\": ...}")
		}
		ru, err := s.Rules.Get(ctx, b.ID(), spec.TargetRule)
		if err != nil {
			return d, err
		}
		t, err := s.Targets.Get(ctx, ru.ID(), spec.Target)
		if err != nil {
			return d, err
		}
		d.TargetRuleID, d.TargetRuleName, d.TargetID, d.TargetName = ru.ID(), ru.Name(), t.ID(), t.Name()
		return d, nil
	}
	seen := map[string]bool{}
	for _, name := range spec.Rules {
		if seen[name] {
			continue
		}
		seen[name] = true
		ru, err := s.Rules.Get(ctx, b.ID(), name)
		if err != nil {
			return d, err
		}
		d.RuleIDs, d.RuleNames = append(d.RuleIDs, ru.ID()), append(d.RuleNames, ru.Name())
	}
	return d, nil
}

// BusName is the name of the replay's bus ("" when it is gone).
func (s *Service) BusName(ctx context.Context, r *Replay) string {
	b, err := s.Buses.GetByID(ctx, r.BusID)
	if err != nil {
		return ""
	}
	return b.Name()
}

// Get returns the replay; ErrNotFound when the account has none of that name.
func (s *Service) Get(ctx context.Context, accountID, name string) (*Replay, error) {
	return s.Replays.Get(ctx, accountID, name)
}

// List returns a page of the account's replays that f selects.
func (s *Service) List(ctx context.Context, accountID string, f Filter, page domain.Page) ([]*Replay, string, error) {
	return s.Replays.List(ctx, accountID, f, page)
}

// Cancel stops a replay that has not ended: CANCELLING while its connector is removed, then CANCELLED (at once
// when the runtime answers; else by Watch). What it replayed stays replayed. Errors: ErrNotFound, ErrInvalidState.
func (s *Service) Cancel(ctx context.Context, accountID, name string) (*Replay, error) {
	r, err := s.Replays.Update(ctx, accountID, name, func(r *Replay) error {
		if r.State.Ended() {
			return ErrInvalidState.With("replay %q is %s: only a replay that has not ended can be cancelled", name, r.State)
		}
		r.State, r.UpdatedAt = Cancelling, s.Clock.Now()
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer s.poke() // a cancel the runtime did not settle is retried by Watch
	return s.settleCancel(context.WithoutCancel(ctx), r), nil
}

// settleCancel removes a cancelling replay's connector and marks it CANCELLED once removed.
func (s *Service) settleCancel(ctx context.Context, r *Replay) *Replay {
	b, err := s.Buses.GetByID(ctx, r.BusID)
	if err == nil {
		err = s.Runtime.SyncBus(ctx, b)
	}
	if err != nil && !errors.Is(err, bus.ErrNotFound) {
		s.Logger.Warn("removing a cancelled replay's connector; retried", "replay", r.ID, "err", err)
		return r
	}
	return s.end(ctx, r, Cancelled, "", nil)
}

// end puts a replay in a final state (with its last progress when p is set), and records it in the bus's log when
// this call ended it. A replay being cancelled ends CANCELLED only: a check that read it before the cancel and
// found it completed (or failed) does not end it otherwise, since the cancel was acknowledged as CANCELLING.
func (s *Service) end(ctx context.Context, r *Replay, st State, reason string, p *Progress) *Replay {
	ended := false
	out, err := s.Replays.Update(ctx, r.AccountID, r.Name, func(cur *Replay) error {
		if cur.State.Ended() || (cur.State == Cancelling && st != Cancelled) {
			return nil
		}
		if p != nil {
			cur.Progress = *p
		}
		cur.End(st, reason, s.Clock.Now())
		ended = true
		return nil
	})
	if err != nil {
		s.Logger.Warn("recording the end of a replay", "replay", r.ID, "state", st, "err", err)
		return r
	}
	if ended {
		s.log(ctx, out, st)
	}
	return out
}

// log records a replay's start (ended "") or end in its bus's log when the bus logs at that record's level; a
// failure is logged, not returned.
func (s *Service) log(ctx context.Context, r *Replay, ended State) {
	if s.Log == nil {
		return
	}
	b, err := s.Buses.GetByID(ctx, r.BusID)
	if err != nil {
		return
	}
	switch b.Log().Level {
	case bus.LogInfo, bus.LogTrace:
	case bus.LogError:
		if ended != Failed {
			return
		}
	default:
		return
	}
	if err := s.Log.Replayed(ctx, b, r, ended); err != nil {
		s.Logger.Warn("recording a replay in the bus log", "replay", r.ID, "err", err)
	}
}

// Watch follows every replay that has not ended until ctx ends, every interval: it records their progress, marks
// them RUNNING, COMPLETED (their connector replayed the whole window; it is removed) or FAILED (their task failed,
// or their archive or bus is gone), and finishes cancelling those a cancel could not. Every replica may watch: what it writes
// is what the runtime says.
//
// While no replay is unfinished it checks every idle instead (a read of the replays every second was a tenth of
// an idle installation's CPU), and at once when Start or Cancel on this replica asks it to: a replay started on
// another replica is followed by that replica's Watch, and by this one within idle.
func (s *Service) Watch(ctx context.Context, interval, idle time.Duration) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.woken():
		}
		n, err := s.check(ctx)
		if err != nil && ctx.Err() == nil {
			s.Logger.Warn("following replays", "err", err)
		}
		wait := interval
		if err == nil && n == 0 {
			wait = idle
		}
		t.Reset(wait)
	}
}

// Check is one pass of Watch.
func (s *Service) Check(ctx context.Context) error {
	_, err := s.check(ctx)
	return err
}

// check is Check; it returns how many replays were unfinished.
func (s *Service) check(ctx context.Context) (int, error) {
	rs, err := s.Replays.ListUnfinished(ctx)
	if err != nil {
		return 0, err
	}
	for _, r := range rs {
		if r.State == Cancelling {
			s.settleCancel(ctx, r)
			continue
		}
		b, err := s.Buses.GetByID(ctx, r.BusID)
		if errors.Is(err, bus.ErrNotFound) {
			s.end(ctx, r, Failed, "the archive's bus was deleted", nil)
			continue
		}
		if err != nil {
			return len(rs), err
		}
		if a, err := s.Archives.Get(ctx, r.AccountID, r.ArchiveName); errors.Is(err, archive.ErrNotFound) || (err == nil && a.ID() != r.ArchiveID) {
			s.end(ctx, r, Failed, "the archive "+r.ArchiveName+" was deleted", nil)
			s.sync(ctx, b)
			continue
		}
		rep, err := s.Runtime.ReplayReport(ctx, r)
		if err != nil {
			s.Logger.Warn("reading a replay's connector", "replay", r.ID, "err", err)
			continue
		}
		switch {
		case rep.Done:
			s.end(ctx, r, Completed, "", &rep.Progress)
			s.sync(ctx, b)
		case rep.Failed != "":
			s.end(ctx, r, Failed, rep.Failed, &rep.Progress)
			s.sync(ctx, b)
		case !rep.Found:
			s.sync(ctx, b) // created by the next pass of the runtime's reconciliation, or now
		default:
			if _, err := s.Replays.Update(ctx, r.AccountID, r.Name, func(cur *Replay) error {
				if cur.State.Ended() || cur.State == Cancelling {
					return nil
				}
				if rep.Running {
					cur.State = Running
				}
				cur.Progress, cur.UpdatedAt = rep.Progress, s.Clock.Now()
				return nil
			}); err != nil {
				s.Logger.Warn("recording a replay's progress", "replay", r.ID, "err", err)
			}
		}
	}
	return len(rs), nil
}

func (s *Service) sync(ctx context.Context, b *bus.Bus) {
	if err := s.Runtime.SyncBus(ctx, b); err != nil {
		s.Logger.Warn("runtime not in step yet; the reconciler will retry", "bus", b.ID(), "err", err)
	}
}

// PurgeAccount deletes every replay of the account (account.Purger); their connectors go with the account's buses.
func (s *Service) PurgeAccount(ctx context.Context, accountID string) error {
	return s.Replays.DeleteByAccount(ctx, accountID)
}
