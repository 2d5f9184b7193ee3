package herder

import (
	"context"
	"fmt"
	"time"

	"github.com/eventbridge-go/eventbridge/rpc"
)

// Defaults of the automatic restart of FAILED tasks (Config.RestartBackoff*).
const (
	DefaultRestartBackoffInitial = time.Second
	DefaultRestartBackoffMax     = time.Minute
	DefaultRestartResetAfter     = 5 * time.Minute
)

// taskSup is the automatic-restart state of one task. Guarded by Herder.mu.
type taskSup struct {
	startedAt time.Time // when the task last started
	attempts  int       // automatic restarts since the task last ran long enough
	nextAt    time.Time // when the next automatic restart is due; zero until the failure is seen
	lastErr   string    // why the last automatic restart did not start the task
}

// describe is what /status adds to the trace of a FAILED task.
func (s taskSup) describe() string {
	out := ""
	if s.lastErr != "" {
		out += fmt.Sprintf("\n\nautomatic restart %d did not start the task: %s", s.attempts, s.lastErr)
	}
	if !s.nextAt.IsZero() {
		out += fmt.Sprintf("\n\nnext automatic restart (%d) at %s", s.attempts+1, s.nextAt.UTC().Format(time.RFC3339Nano))
	}
	return out
}

// backoff is the delay before automatic restart n+1: initial doubling, capped at max.
func (h *Herder) backoff(n int) time.Duration {
	d := h.cfg.RestartBackoffInitial
	for range n {
		if d >= h.cfg.RestartBackoffMax/2 {
			return h.cfg.RestartBackoffMax
		}
		d *= 2
	}
	return min(d, h.cfg.RestartBackoffMax)
}

// supervise schedules the restart of newly FAILED local tasks and restarts those that are due, with the config
// of their connector's current record, each in a step of its own. It returns when the next restart not yet due
// comes due (zero: none). Called from the loop. It reads only the suspects (a task that failed reports it, one that
// did not start is one): reading the state of every local task every second was most of an idle worker's loop at
// thousands of tasks. A suspect stays one until it is seen in another state than FAILED, or is no longer local.
func (h *Herder) supervise(now time.Time) (next time.Time) {
	type due struct {
		lt *localTask
		e  entry
	}
	var todo []due
	h.mu.Lock()
	h.suspectsMu.Lock() // held while states are read: a task that fails after its read reports after the unlock
	for id := range h.suspects {
		lt := h.local[id]
		if lt == nil {
			delete(h.suspects, id)
			continue
		}
		if lt.lost || lt.releasing || lt.busy {
			continue
		}
		if s, _ := lt.state(); s != rpc.StateFailed {
			delete(h.suspects, id)
			continue
		}
		sp := &lt.sup
		if sp.nextAt.IsZero() {
			if now.Sub(sp.startedAt) >= h.cfg.RestartResetAfter {
				sp.attempts = 0
			}
			sp.nextAt = now.Add(h.backoff(sp.attempts))
			h.log.Warn("task failed; restarting it automatically", "connector", id.Connector, "task", id.Task,
				"in", sp.nextAt.Sub(now), "attempt", sp.attempts+1)
		}
		e, ok := h.records[id.Connector]
		switch {
		case ok && !now.Before(sp.nextAt):
			sp.attempts++
			lt.busy = true
			todo = append(todo, due{lt, e})
		case next.IsZero() || sp.nextAt.Before(next):
			next = sp.nextAt
		}
	}
	h.suspectsMu.Unlock()
	h.mu.Unlock()
	for _, d := range todo {
		h.step(nil, h.cfg.StopTimeout+30*time.Second, func(ctx context.Context) {
			h.restartLocal(ctx, d.lt, d.e, true)
			h.log.Info("task restarted automatically", "connector", d.lt.id.Connector, "task", d.lt.id.Task)
		}, func() {
			h.mu.Lock()
			d.lt.busy = false
			h.mu.Unlock()
		})
	}
	return next
}
