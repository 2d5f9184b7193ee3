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
	// superviseInterval is how often the herder looks for FAILED tasks.
	superviseInterval = 100 * time.Millisecond
)

// taskSup is the automatic-restart state of one task. Guarded by Herder.mu.
type taskSup struct {
	startedAt time.Time // when the task last started
	attempts  int       // automatic restarts since the task last ran long enough
	nextAt    time.Time // when the next automatic restart is due; zero until the failure is seen
	lastErr   string    // why the last automatic restart did not start the task
}

func newSups(n int) []taskSup {
	now := time.Now()
	out := make([]taskSup, n)
	for i := range out {
		out[i].startedAt = now
	}
	return out
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

// monitor restarts FAILED tasks of RUNNING connectors with bounded exponential back-off, and writes the status
// and task configs that changed to KV, until Close.
func (h *Herder) monitor(done chan struct{}) {
	defer close(done)
	t := time.NewTicker(superviseInterval)
	defer t.Stop()
	for {
		select {
		case <-h.quit:
			return
		case now := <-t.C:
			h.supervise(now)
			h.syncState(context.Background())
		}
	}
}

type dueTask struct {
	c *conn
	i int
}

// supervise schedules the restart of newly FAILED tasks and restarts those that are due. A connector being
// changed is skipped; the next tick sees it again.
func (h *Herder) supervise(now time.Time) {
	var due []dueTask
	h.mu.Lock()
	for _, c := range h.conns {
		if c.state != rpc.StateRunning || len(c.sup) != len(c.tasks) {
			continue
		}
		for i, t := range c.tasks {
			if s, _ := t.State(); s != rpc.StateFailed {
				continue
			}
			sp := &c.sup[i]
			if sp.nextAt.IsZero() {
				if now.Sub(sp.startedAt) >= h.cfg.RestartResetAfter {
					sp.attempts = 0
				}
				sp.nextAt = now.Add(h.backoff(sp.attempts))
				h.log.Warn("task failed; restarting it automatically", "connector", c.name, "task", i,
					"in", sp.nextAt.Sub(now), "attempt", sp.attempts+1)
			}
			if !now.Before(sp.nextAt) {
				due = append(due, dueTask{c, i})
			}
		}
	}
	h.mu.Unlock()
	for _, d := range due {
		if !d.c.op.TryLock() {
			continue
		}
		h.autoRestart(d.c, d.i)
		d.c.op.Unlock()
	}
}

// autoRestart restarts task i of c if it is still FAILED and due; called with c.op held.
func (h *Herder) autoRestart(c *conn, i int) {
	h.mu.Lock()
	ok := !h.closed && !c.deleted && c.state == rpc.StateRunning && i < len(c.tasks) && len(c.sup) == len(c.tasks) &&
		!c.sup[i].nextAt.IsZero() && !time.Now().Before(c.sup[i].nextAt)
	if ok {
		s, _ := c.tasks[i].State()
		ok = s == rpc.StateFailed
	}
	if ok {
		c.sup[i].attempts++
	}
	h.mu.Unlock()
	if !ok {
		return
	}
	ctx, cancel := h.opContext(context.Background())
	defer cancel()
	if err := h.restartTaskLocked(ctx, c, i, true); err != nil {
		h.log.Error("automatic restart of a task failed", "connector", c.name, "task", i, "err", err)
		return
	}
	h.log.Info("task restarted automatically", "connector", c.name, "task", i)
}
