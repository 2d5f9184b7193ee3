package target

import (
	"context"
	"time"

	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/health"
	"github.com/eventbridge-go/eventbridge/domain/rule"
)

// Runtime states of a target beyond the worker's own (RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED).
const (
	// StatePending means the runtime does not run the target's connector yet (being created, or unreachable).
	StatePending = "PENDING"
)

// TaskStatus is the runtime state of one task of a target's connector.
type TaskStatus struct {
	ID       int
	State    string
	WorkerID string
	// Counters are what the task did with records since it started on its worker; nil when it does not run.
	Counters *Counters
	// Health is what the task reported of its writes since it started; nil when it does not run.
	Health *health.Facts
	// Totals are what the task did since the target was created, over all its runs; nil when unknown.
	Totals *Counters
}

// Counters count what a task did with records since it started.
type Counters struct {
	// Read records; Delivered (accepted by the target); Retried attempts; DeadLettered, Dropped and Failed records
	// given up; Filtered records a transformer removed.
	Read, Delivered, Retried, DeadLettered, Dropped, Failed, Filtered uint64
}

// Add returns the sum of c and d.
func (c Counters) Add(d Counters) Counters {
	return Counters{Read: c.Read + d.Read, Delivered: c.Delivered + d.Delivered, Retried: c.Retried + d.Retried,
		DeadLettered: c.DeadLettered + d.DeadLettered, Dropped: c.Dropped + d.Dropped, Failed: c.Failed + d.Failed,
		Filtered: c.Filtered + d.Filtered}
}

// Status is the runtime state of a target, read from the worker runtime; read-only for users.
type Status struct {
	State string
	Tasks []TaskStatus
	// LastError is why a task failed, else the error of the last failed attempt when no attempt succeeded since.
	LastError string
	// Health is decided from the tasks' reports (package health); LastFailure and LastSuccessAt are the latest
	// of its tasks (nil and zero when none since they started).
	Health        string
	LastFailure   *health.Failure
	LastSuccessAt time.Time
	// Counters are what the target did since it was created, the totals of its tasks: they survive pauses,
	// restarts and moves to other workers (nil when the runtime reported none).
	Counters *Counters
}

// Summarize fills the health of st from its state and tasks, with rules, at now, and its counters from the
// tasks' totals; LastError becomes the last failure's message when no task failed and no attempt succeeded since.
func (st *Status) Summarize(rules health.Rules, now time.Time) {
	tasks, totals := make([]health.Task, len(st.Tasks)), make([]*Counters, len(st.Tasks))
	for i, t := range st.Tasks {
		tasks[i], totals[i] = health.Task{State: t.State, Facts: t.Health}, t.Totals
	}
	v := health.Judge(st.State, tasks, rules, now)
	st.Health, st.LastFailure, st.LastSuccessAt, st.LastError = v.State, v.LastFailure, v.LastSuccessAt, v.LastError(st.LastError)
	st.Counters = health.Sum(totals)
}

// StatusReader reads the runtime state of targets.
type StatusReader interface {
	// TargetStatus returns the state of the target's connector; a connector the runtime does not know is PENDING.
	TargetStatus(ctx context.Context, b *bus.Bus, r *rule.Rule, t *Target) (*Status, error)
}

// Status returns the runtime state of t. It never fails: when the runtime cannot be asked, the state is PENDING
// with the reason in LastError.
func (s *Service) Status(ctx context.Context, t *Target) *Status {
	pending := func(why string) *Status { return &Status{State: StatePending, Health: health.Pending, LastError: why} }
	if s.Statuses == nil {
		return pending("")
	}
	b, err := s.Buses.GetByID(ctx, t.BusID())
	if err != nil {
		return pending("the target's bus is gone")
	}
	r, err := s.Rules.GetByID(ctx, t.RuleID())
	if err != nil {
		return pending("the target's rule is gone")
	}
	st, err := s.Statuses.TargetStatus(ctx, b, r, t)
	if err != nil {
		s.Logger.Warn("reading target status", "target", t.ID(), "err", err)
		return pending("the worker runtime could not be reached")
	}
	st.Summarize(s.Health, s.Clock.Now())
	return st
}

// Report is the summarized runtime state of one target, named by its account, bus, rule and name (for metrics).
type Report struct {
	Account, Bus, Rule, Target string
	Status                     *Status
}
