// Package health decides the health of a target or a source from what its tasks report of their writes: one of a
// fixed set of states, by fixed rules with configurable thresholds (Rules), so that a target that fails looks
// failing wherever it is shown.
//
// The states, worst first for a connector that runs:
//
//   - FAILED: a task failed (the runtime stopped it; its error is the status's lastError).
//   - FAILING: a record waits for another attempt and the target has not accepted one for Rules.FailingAttempts
//     attempts or for Rules.FailingAfter.
//   - DEAD_LETTERING: a record was given up to the dead letters within the last Rules.DeadLetterWindow.
//   - RETRYING: the last attempt failed and its record is attempted again.
//   - HEALTHY: the last attempt succeeded, or none failed since the task started (idle).
//
// And for one that does not: PENDING (not running yet: being created, unassigned, or the runtime unreachable),
// PAUSED, STOPPED. Over several tasks, the worst state of any task is the connector's.
package health

import (
	"time"
)

// States.
const (
	Pending       = "PENDING"
	Healthy       = "HEALTHY"
	Retrying      = "RETRYING"
	Failing       = "FAILING"
	DeadLettering = "DEAD_LETTERING"
	Paused        = "PAUSED"
	Stopped       = "STOPPED"
	Failed        = "FAILED"
)

// Runtime states of connectors and tasks, as the worker runtime names them (Kafka Connect's).
const (
	running    = "RUNNING"
	paused     = "PAUSED"
	stopped    = "STOPPED"
	failed     = "FAILED"
	unassigned = "UNASSIGNED"
)

// Rules are the thresholds of the states.
type Rules struct {
	// FailingAttempts is the number of failed attempts without a success after which a target whose records wait
	// for another attempt is FAILING (default 10).
	FailingAttempts uint64
	// FailingAfter is how long a target may fail without a success while records wait before it is FAILING
	// (default 5 minutes).
	FailingAfter time.Duration
	// DeadLetterWindow is how long a target is DEAD_LETTERING after a record was given up (default 5 minutes).
	DeadLetterWindow time.Duration
}

// DefaultRules are the thresholds of the documented defaults.
func DefaultRules() Rules {
	return Rules{FailingAttempts: 10, FailingAfter: 5 * time.Minute, DeadLetterWindow: 5 * time.Minute}
}

// OrDefault fills the thresholds that are not set (0) with their defaults.
func (r Rules) OrDefault() Rules {
	d := DefaultRules()
	if r.FailingAttempts == 0 {
		r.FailingAttempts = d.FailingAttempts
	}
	if r.FailingAfter <= 0 {
		r.FailingAfter = d.FailingAfter
	}
	if r.DeadLetterWindow <= 0 {
		r.DeadLetterWindow = d.DeadLetterWindow
	}
	return r
}

// Failure is a failed attempt of a task.
type Failure struct {
	At      time.Time
	Attempt uint64
	// Class is the error class: connection-refused, dns, timeout, tls, egress-refused, http-4xx, http-5xx,
	// connection-reset, unreachable, transform, refused (another status), error (anything else).
	Class string
	// Status is the target's answer (an HTTP status) when it answered, else 0.
	Status int
	// Message is the error; Response the start of the target's answer. Neither holds a secret value.
	Message, Response string
}

// Facts are what a running task reports of its writes since it started.
type Facts struct {
	LastSuccessAt        time.Time
	LastFailure          *Failure
	FailuresSinceSuccess uint64
	FailingSince         time.Time
	RetryScheduled       bool
	LastDeadLetteredAt   time.Time
}

// Task is one task as the runtime reports it: its runtime state and, while it runs, its facts (nil when the task
// reported none).
type Task struct {
	State string
	Facts *Facts
}

// Verdict is the health of a connector.
type Verdict struct {
	State string
	// LastFailure is the latest failed attempt of any task (nil when none since they started); LastSuccessAt the
	// latest success (zero when none).
	LastFailure   *Failure
	LastSuccessAt time.Time
}

// Judge decides the health of a connector in the runtime state connectorState ("" or PENDING when the runtime
// does not run it) with tasks, at now.
func Judge(connectorState string, tasks []Task, rules Rules, now time.Time) Verdict {
	rules = rules.OrDefault()
	var v Verdict
	worst := -1
	for _, t := range tasks {
		f := t.Facts
		if f != nil {
			if f.LastFailure != nil && (v.LastFailure == nil || f.LastFailure.At.After(v.LastFailure.At)) {
				c := *f.LastFailure
				v.LastFailure = &c
			}
			if f.LastSuccessAt.After(v.LastSuccessAt) {
				v.LastSuccessAt = f.LastSuccessAt
			}
		}
		if r := rank(taskState(t, rules, now)); r > worst {
			worst = r
		}
	}
	switch connectorState {
	case "", Pending, unassigned:
		v.State = Pending
	case paused:
		v.State = Paused
	case stopped:
		v.State = Stopped
	case failed:
		v.State = Failed
	default:
		v.State = Pending // no task yet
		if worst >= 0 {
			v.State = order[worst]
		}
	}
	return v
}

// order lists the states of a running connector's tasks, best first.
var order = []string{Healthy, Pending, Retrying, DeadLettering, Failing, Paused, Stopped, Failed}

func rank(state string) int {
	for i, s := range order {
		if s == state {
			return i
		}
	}
	return 0
}

// taskState is the state of one task of a running connector.
func taskState(t Task, rules Rules, now time.Time) string {
	switch t.State {
	case failed:
		return Failed
	case running:
	case paused:
		return Paused
	case stopped:
		return Stopped
	default:
		return Pending
	}
	f := t.Facts
	switch {
	case f == nil:
		return Healthy
	case f.RetryScheduled && (f.FailuresSinceSuccess >= rules.FailingAttempts || now.Sub(f.FailingSince) >= rules.FailingAfter):
		return Failing
	case !f.LastDeadLetteredAt.IsZero() && now.Sub(f.LastDeadLetteredAt) < rules.DeadLetterWindow:
		return DeadLettering
	case f.RetryScheduled:
		return Retrying
	}
	return Healthy
}

// LastError is the error to show beside v: current (why a task failed, or why the connector does not run) when
// set, else the message of the last failure when no attempt succeeded after it, else "".
func (v Verdict) LastError(current string) string {
	if f := v.LastFailure; current == "" && f != nil && f.At.After(v.LastSuccessAt) {
		return f.Message
	}
	return current
}

// Sum returns the sum of the counters that are set, nil when none is: a connector's totals from its tasks'.
func Sum[C interface{ Add(C) C }](counters []*C) *C {
	var sum *C
	for _, c := range counters {
		switch {
		case c == nil:
		case sum == nil:
			v := *c
			sum = &v
		default:
			v := (*sum).Add(*c)
			sum = &v
		}
	}
	return sum
}
