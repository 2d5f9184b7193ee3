package target

import (
	"context"

	"github.com/eventbridge-go/eventbridge/domain/bus"
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
}

// Counters count what a task did with records since it started.
type Counters struct {
	// Read records; Delivered (accepted by the target); Retried attempts; DeadLettered, Dropped and Failed records
	// given up; Filtered records a transformer removed.
	Read, Delivered, Retried, DeadLettered, Dropped, Failed, Filtered uint64
}

// Status is the runtime state of a target, read from the worker runtime; read-only for users.
type Status struct {
	State     string
	Tasks     []TaskStatus
	LastError string
}

// StatusReader reads the runtime state of targets.
type StatusReader interface {
	// TargetStatus returns the state of the target's connector; a connector the runtime does not know is PENDING.
	TargetStatus(ctx context.Context, b *bus.Bus, r *rule.Rule, t *Target) (*Status, error)
}

// Status returns the runtime state of t. It never fails: when the runtime cannot be asked, the state is PENDING
// with the reason in LastError.
func (s *Service) Status(ctx context.Context, t *Target) *Status {
	if s.Statuses == nil {
		return &Status{State: StatePending}
	}
	b, err := s.Buses.GetByID(ctx, t.BusID())
	if err != nil {
		return &Status{State: StatePending, LastError: "the target's bus is gone"}
	}
	r, err := s.Rules.GetByID(ctx, t.RuleID())
	if err != nil {
		return &Status{State: StatePending, LastError: "the target's rule is gone"}
	}
	st, err := s.Statuses.TargetStatus(ctx, b, r, t)
	if err != nil {
		s.Logger.Warn("reading target status", "target", t.ID(), "err", err)
		return &Status{State: StatePending, LastError: "the worker runtime could not be reached"}
	}
	return st
}
