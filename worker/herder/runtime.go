package herder

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker/cluster"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
)

// Timing of the runtime loop.
const (
	// loopInterval is how often the loop reads the members and leases and reconciles this worker's tasks (it
	// also runs at once after a change of a connector).
	loopInterval = 100 * time.Millisecond
	// countersInterval bounds how often a task's counters alone are written to its status; it is also how often
	// the loop looks at its local tasks when nothing changed (a failing task pokes it at once).
	countersInterval = time.Second
	// lookGap is the least time between two rounds over the local tasks that a failed task or an ended step asks
	// for: when thousands of tasks start at once, each step that ends would otherwise make a round over all of them.
	lookGap = 50 * time.Millisecond
	// fullRoundInterval is how often the loop reassesses everything when nothing it sees changed. What a full round
	// is computed from is all in what the loop sees (the connectors' change count, the live members, the claims'
	// version, the lease) or makes it look again (the again flag), so this round is only a safety net; at 2,000
	// buses each one allocated 5 MB for an assignment equal to the last, a fifth of an idle worker's garbage when
	// it came every 10 s.
	fullRoundInterval = time.Minute
	// sweepInterval is how often the first member deletes the claims dead workers left on deleted tasks (in a full
	// round: at most every fullRoundInterval while nothing changes).
	sweepInterval = 10 * time.Second
	// callTimeout bounds each call to KV of the loop.
	callTimeout = 2 * time.Second
	// startsAtOnce bounds how many tasks a round takes, restarts or writes the status of at the same time. Each
	// such step is a few calls to NATS; thousands at once (a worker taking over a lost lease's tasks, or another
	// worker's) made each of them wait past its timeout, fail, and come back the next round, and never converged.
	startsAtOnce = 16
)

// runner is a running task: a sink task (delivery.Task) or a source task (delivery.SourceTask).
type runner interface {
	State() (state, trace string)
	Counters() delivery.Counters
	Health() delivery.Health
	RoutedTo() map[string]uint64
	// Asleep reports whether the task is parked now, and how many times it parked: while a task stays parked
	// (the same count, asleep), nothing it counts or reports of its writes changes.
	Asleep() (parks uint64, asleep bool)
	// Abort stops the task at once: no effect after it returns, even without NATS.
	Abort()
	Stop(ctx context.Context) error
}

// sleep is a runner's Asleep at one moment.
type sleep struct {
	run    runner
	parks  uint64
	asleep bool
}

// localTask is a task this worker holds the claim of. Its fields are guarded by Herder.mu; the loop goroutine
// and the one step it started for the task (busy) are the only ones that change them, apart from the lease
// watchdog marking it lost.
type localTask struct {
	id    rpc.TaskID
	claim *cluster.Claim

	// busy: a step is starting or restarting it; rounds, the supervisor and status writes leave it alone until
	// the step ends.
	busy bool
	// stopping is the runner a restart is stopping (a lost lease aborts it like the running one).
	stopping runner

	run    runner            // nil while not running (its start failed, or a restart is under way)
	trace  string            // why it did not start
	config map[string]string // the config it runs
	rev    uint64            // the record revision it applied
	gen    uint64            // the restart request it honoured
	sup    taskSup

	lost      bool // the worker's lease lapsed or was taken: stopped, not to be released
	releasing bool // being stopped and released
	released  bool // its claim was released (or is being)

	statusRev uint64            // revision of its status key as last written
	written   StoredTask        // the status last written, without counters
	wroteN    delivery.Counters // the counters last written
	wroteH    delivery.Health   // the health last written
	wroteAt   time.Time         // when the status was last written
	// wroteSleep is the runner and what its Asleep said before counters equal to those last written were read.
	wroteSleep sleep
	// stamped is the digest of what the runner reported when a listing stamp last read it parked (guarded by
	// Herder.stampMu; see runDigest).
	stamped struct {
		sl  sleep
		sum uint64
	}

	// base is what the task did before this worker ran it, as its status key held it when this worker first wrote
	// it (nil until then); carried what the runners this worker stopped did (restarts). The task's totals are
	// base + carried + the running runner's counters.
	base    *rpc.TaskCounters
	carried rpc.TaskCounters
}

// state returns the task's state and trace. Called with Herder.mu held.
func (lt *localTask) state() (string, string) {
	if lt.run == nil && lt.busy {
		return rpc.StateRestarting, ""
	}
	if lt.run == nil {
		return rpc.StateFailed, lt.trace
	}
	s, trace := lt.run.State()
	if s == rpc.StateFailed {
		trace += lt.sup.describe()
	}
	return s, trace
}

// totals returns the task's totals with c as its runner's counters, from base when it was read (else from zero).
// Called with Herder.mu held.
func (lt *localTask) totals(c rpc.TaskCounters) *rpc.TaskCounters {
	var t rpc.TaskCounters
	if lt.base != nil {
		t = *lt.base
	}
	t = t.Add(lt.carried).Add(c)
	return &t
}

// countersOf returns what run did: its counters and the copies it routed per rule.
func countersOf(run runner) rpc.TaskCounters {
	c := counters(run.Counters())
	c.RoutedTo = run.RoutedTo()
	return *c
}

// totalsOf returns the totals a stored status holds (zero when none).
func totalsOf(st StoredTask) rpc.TaskCounters {
	if st.Totals == nil {
		return rpc.TaskCounters{}
	}
	return *st.Totals
}

func counters(n delivery.Counters) *rpc.TaskCounters {
	return &rpc.TaskCounters{Read: n.Read, Written: n.Written, Retried: n.Retried, Dropped: n.Dropped,
		Failed: n.Failed, Undecodable: n.Undecodable, Filtered: n.Filtered, TransformFailed: n.TransformFailed,
		DeadLettered: n.DeadLettered, Matched: n.Matched, Unmatched: n.Unmatched, Routed: n.Routed, LogDropped: n.LogDropped,
		LatencyMicros: n.LatencyMicros, Duplicates: n.Duplicates}
}

// healthOf is the wire form of a task's health.
func healthOf(x delivery.Health) *rpc.TaskHealth {
	at := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		u := t.UTC()
		return &u
	}
	out := &rpc.TaskHealth{LastSuccessAt: at(x.LastSuccessAt), FailuresSinceSuccess: x.FailuresSinceSuccess,
		FailingSince: at(x.FailingSince), RetryScheduled: x.RetryScheduled, LastDeadLetteredAt: at(x.LastDeadLetteredAt)}
	if f := x.LastFailure; f != nil {
		out.LastFailure = &rpc.TaskFailure{At: f.At.UTC(), Attempt: f.Attempt, Class: f.Class, Status: f.Status,
			Message: f.Message, Response: f.Response}
	}
	return out
}

// roundSeen is what a round of the loop sees that a full round is computed from: when it is the last full round's,
// a round only supervises and writes statuses (see reconcile). Comparable: the loop compares it ten times a second.
type roundSeen struct {
	changes uint64 // Herder.changes
	members string // the live members' ids, in order
	lease   bool   // whether the worker holds a lease
	claims  string // cluster.Leases.Version
}

// loop reconciles this worker's tasks with the assignment until Close.
func (h *Herder) loop(done chan struct{}) {
	defer close(done)
	t := time.NewTicker(loopInterval)
	defer t.Stop()
	defer func() {
		if h.lookLater != nil {
			h.lookLater.Stop()
		}
	}()
	for {
		select {
		case <-h.quit:
			return
		case <-t.C:
		case <-h.wake:
		}
		h.reconcile()
	}
}

// fullPace paces full rounds: the next one starts no sooner than fullPace times the last one's duration after that
// one started, so the loop takes at most about a third of a core whatever the number of tasks.
const fullPace = 3

// fullRoundDue reports whether a round at now is a full one: something changed (or the last round left work undone),
// or fullRoundInterval passed since the last; and in either case the last full round, which started at last and
// took took, is at least fullPace times took ago. A full round reads every claim and assigns every task of the
// cluster: at 15,000 tasks it took a tenth of a second and more, and rounds back to back while tasks restarted
// (each restart a change) kept more than a core busy, starved the worker's renewals and fed the restarts.
func fullRoundDue(now, last time.Time, took time.Duration, changed bool) bool {
	if !changed && now.Sub(last) < fullRoundInterval {
		return false
	}
	return !now.Before(last.Add(fullPace * took))
}

// step runs fn in the background in one of the worker's startsAtOnce runners, with a timeout of its own counted
// from when a runner took it, so that the loop goes on meanwhile: a restart waits up to StopTimeout for the records
// being written, and no other task waits on it. Steps wait their turn in a queue, in the order they came, rather
// than each in a goroutine of its own: a handover queued thousands at once. When lease is set and is no longer the
// worker's valid lease by then, fn does not run and a later round looks again; once the herder closes, queued
// steps do not run. done runs in any case, then the loop is poked: the task is the rounds' again. Only the loop
// (and Start, before it) queues steps; Close waits for the runners after the loop ended.
func (h *Herder) step(lease *cluster.Lease, timeout time.Duration, fn func(ctx context.Context), done func()) {
	h.stepsMu.Lock()
	defer h.stepsMu.Unlock()
	h.queued = append(h.queued, func() {
		defer func() {
			done()
			h.mu.Lock()
			h.changes++
			h.mu.Unlock()
			h.look.Store(true) // its status is written at once, even when the next full round is paced
			h.poke()
		}()
		select {
		case <-h.quit:
			return
		default:
		}
		if lease != nil && h.validLease() != lease {
			h.again.Store(true)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		fn(ctx)
	})
	if h.runners < startsAtOnce {
		h.runners++
		h.steps.Go(h.runSteps)
	}
}

// runSteps runs queued steps one after the other until none is left.
func (h *Herder) runSteps() {
	for {
		h.stepsMu.Lock()
		if len(h.queued) == 0 {
			h.queued = nil // what a handover queued is not kept
			h.runners--
			h.stepsMu.Unlock()
			return
		}
		next := h.queued[0]
		h.queued[0] = nil
		h.queued = h.queued[1:]
		h.stepsMu.Unlock()
		next()
	}
}

// takeFresh takes at once, between full rounds, the tasks of the connectors stored since the last full round that
// are this worker's, so that a new bus's router or a replay need not wait for the next full round, which the pace
// can put hundreds of milliseconds away at thousands of tasks. A task the last full round did not assign is placed
// by cluster.Place on the members of that round with their loads in it (alone in its cluster, on this worker):
// every worker that computed the same round places it on the same member, and the next full round keeps it there
// (TestPlaceAgreesWithTheNextAssignment). While the members differ from that round's, or views differ, nothing is
// lost: claims stay fenced (a task another worker holds is refused and left to the full round), and a task no
// worker takes waits for the full round as before. Called from the loop.
func (h *Herder) takeFresh(members []string) {
	h.mu.Lock()
	if len(h.fresh) == 0 || h.closed {
		h.mu.Unlock()
		return
	}
	me := h.cfg.WorkerID
	sorted := slices.Sorted(slices.Values(members))
	lease := h.lease
	if lease == nil || !lease.Valid(time.Now()) || !slices.Equal(sorted, h.assignedTo) {
		h.mu.Unlock()
		return // the full round takes them, once the lease is there or with the members it sees
	}
	type fresh struct {
		id rpc.TaskID
		e  entry
	}
	var todo []fresh
	var unplaced []rpc.TaskID
	for name := range h.fresh {
		e, ok := h.records[name]
		if !ok || e.rec.TargetState != rpc.StateRunning {
			continue
		}
		for i := range e.tasks {
			id := rpc.TaskID{Connector: name, Task: i}
			if _, ok := h.assigned[id]; ok {
				continue // the full round assigned it
			}
			if _, ok := h.placed[id]; !ok {
				unplaced = append(unplaced, id)
			}
		}
	}
	for id, w := range cluster.Place(sorted, h.load, unplaced) {
		h.placed[id] = w
		h.load[w]++
		if w == me && h.local[id] == nil && !h.taking[id] {
			h.taking[id] = true
			todo = append(todo, fresh{id, h.records[id.Connector]})
		}
	}
	clear(h.fresh)
	h.mu.Unlock()
	for _, f := range todo {
		h.step(lease, callTimeout, func(ctx context.Context) { h.take(ctx, lease, f.id, f.e) }, func() {
			h.mu.Lock()
			delete(h.taking, f.id)
			h.mu.Unlock()
		})
	}
}

// lookDue reports whether a round with nothing new to see looks at the local tasks at now: when lightAt has come,
// or when look asks for it (a task failed or a step ended) and lookGap has passed since lookedAt. A look asked for
// within the gap comes when the gap ends: later is how long until then (0 otherwise), for the loop to be poked,
// since nothing else may wake it before its next tick, which held a started task's status back, and a create or
// config call waiting for it, up to loopInterval (at 2,000 buses, most of the bus creations' p99).
func lookDue(now, lightAt, lookedAt time.Time, look bool) (due bool, later time.Duration) {
	if !now.Before(lightAt) || (look && now.Sub(lookedAt) >= lookGap) {
		return true, 0
	}
	if look {
		return false, lookedAt.Add(lookGap).Sub(now)
	}
	return false, 0
}

// pokeIn pokes the loop after d (a later call moves the poke). Called from the loop.
func (h *Herder) pokeIn(d time.Duration) {
	if h.lookLater == nil {
		h.lookLater = time.AfterFunc(d, h.poke)
		return
	}
	h.lookLater.Reset(d)
}

// desired returns the tasks that must run: those of RUNNING connectors.
func desired(records map[string]entry) []rpc.TaskID {
	var tasks []rpc.TaskID
	for name, e := range records {
		if e.rec.TargetState != rpc.StateRunning {
			continue
		}
		for i := range e.tasks {
			tasks = append(tasks, rpc.TaskID{Connector: name, Task: i})
		}
	}
	return tasks
}

// reconcile reads the live members and the claims, computes the assignment and brings this worker's tasks in
// line: it releases what is no longer its own, applies changed configs and restart requests, claims the tasks
// newly assigned to it and starts them, restarts failed tasks when due, and writes their statuses.
func (h *Herder) reconcile() {
	me := h.cfg.WorkerID
	if live, err := h.members.Live(context.Background()); err == nil {
		h.mu.Lock()
		h.live = live
		h.mu.Unlock()
	} else {
		h.log.Warn("reading the live workers", "err", err)
	}
	h.mu.RLock()
	var members []string
	for _, m := range h.live {
		members = append(members, m.ID)
	}
	seen := roundSeen{changes: h.changes, members: strings.Join(members, "\x00"), lease: h.lease != nil,
		claims: h.leases.Version()}
	fullAt, fullTook := h.fullAt, h.fullTook
	h.mu.RUnlock()
	// A round with nothing new to see only supervises the local tasks and writes their statuses; the rest runs when
	// the connectors, the local tasks, the members or the claims changed, when the last round left work undone, and
	// every fullRoundInterval.
	now := time.Now()
	if !fullRoundDue(now, fullAt, fullTook, seen != h.seen || h.again.Load()) {
		h.takeFresh(members)
		if due, later := lookDue(now, h.lightAt, h.lookedAt, h.look.Load()); !due {
			if later > 0 {
				h.pokeIn(later)
			}
			return
		}
		h.look.Store(false)
		h.lightAt, h.lookedAt = now.Add(countersInterval), now
		if next := h.supervise(now); !next.IsZero() && next.Before(h.lightAt) {
			h.lightAt = next // a restart comes due
		}
		h.writeStatuses(context.Background())
		return
	}
	h.mu.Lock()
	h.seen, h.fullAt = seen, now
	h.mu.Unlock()
	h.again.Store(false)
	h.look.Store(false) // this round writes the statuses
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	holders, holdersErr := h.leases.Holders(ctx)
	if holdersErr != nil {
		h.again.Store(true)
		h.log.Warn("reading the task claims", "err", holdersErr)
	}

	h.mu.Lock()
	records := maps.Clone(h.records)
	local := maps.Clone(h.local)
	current := map[rpc.TaskID]string{}
	for id := range h.taking {
		current[id] = me
	}
	clear(h.fresh)
	h.mu.Unlock()

	tasks := desired(records)
	for id, w := range holders {
		current[id] = w
	}
	for id, lt := range local {
		if !lt.lost {
			current[id] = me
		}
	}
	assign := cluster.Assign(members, tasks, current)
	load := make(map[string]int, len(members))
	for _, w := range assign {
		load[w]++
	}
	h.mu.Lock()
	h.assignedTo, h.assigned, h.load = slices.Sorted(slices.Values(members)), assign, load
	clear(h.placed)
	h.mu.Unlock()

	for id, lt := range local {
		h.mu.RLock()
		lost, releasing, busy, rev, gen, cfg := lt.lost, lt.releasing, lt.busy, lt.rev, lt.gen, lt.config
		h.mu.RUnlock()
		if releasing || busy {
			continue // its step, or its release, pokes the loop when it ends
		}
		e, ok := records[id.Connector]
		switch {
		case !lost && ok && rev == e.rev && e.rec.Restarts[id.Task] <= gen && assign[id] == me:
			// Unchanged since it started (or last saw its record): nothing to do.
		case lost:
			h.drop(lt)
		case !ok || e.rec.TargetState != rpc.StateRunning || id.Task >= e.tasks || assign[id] != me:
			h.mu.Lock()
			lt.releasing = true
			h.mu.Unlock()
			go h.release(context.Background(), lt, rpc.StateUnassigned)
		case !maps.Equal(cfg, e.rec.Config) || e.rec.Restarts[id.Task] > gen:
			h.mu.Lock()
			lt.busy = true
			h.mu.Unlock()
			h.step(nil, h.cfg.StopTimeout+callTimeout, func(ctx context.Context) { h.restartLocal(ctx, lt, e, false) }, func() {
				h.mu.Lock()
				lt.busy = false
				h.mu.Unlock()
			})
		case rev != e.rev:
			h.mu.Lock()
			lt.rev = e.rev
			h.mu.Unlock()
		}
	}
	lease := h.validLease()
	if lease == nil {
		h.again.Store(true) // no tasks are taken without a valid lease: look again once it is there
	}
	if holdersErr == nil && lease != nil {
		for _, id := range tasks {
			if assign[id] != me || local[id] != nil {
				continue
			}
			if w, held := holders[id]; held && w != me {
				h.again.Store(true)
				continue // its previous owner has not released it yet, or its lease has not expired
			}
			h.mu.Lock()
			skip := h.local[id] != nil || h.taking[id]
			if !skip {
				h.taking[id] = true
			}
			h.mu.Unlock()
			if skip {
				continue // taken since the round read the local tasks, or being taken
			}
			e := records[id.Connector]
			h.step(lease, callTimeout, func(ctx context.Context) { h.take(ctx, lease, id, e) }, func() {
				h.mu.Lock()
				delete(h.taking, id)
				h.mu.Unlock()
			})
		}
	}
	// The round's own cost, which paces the next full one: the steps it started run on their own, and a slow one
	// (a restart waits up to StopTimeout for the records being written) delays no other task.
	h.mu.Lock()
	h.fullTook = time.Since(now)
	h.mu.Unlock()
	if len(members) > 0 && members[0] == me && time.Since(h.swept) >= sweepInterval {
		h.swept = time.Now()
		h.sweep(ctx, tasks)
	}
	h.lightAt = time.Now().Add(countersInterval)
	if next := h.supervise(time.Now()); !next.IsZero() && next.Before(h.lightAt) {
		h.lightAt = next
	}
	h.writeStatuses(context.Background())
}

// sweep deletes the claims that dead incarnations left on tasks that no longer exist (a worker died, then its
// connector was deleted). The first live member does it, every sweepInterval.
func (h *Herder) sweep(ctx context.Context, tasks []rpc.TaskID) {
	wanted := make(map[rpc.TaskID]bool, len(tasks))
	for _, id := range tasks {
		wanted[id] = true
	}
	for id, rev := range h.leases.Orphans() {
		if wanted[id] {
			continue // the next owner takes it over
		}
		if _, err := h.leases.Drop(ctx, id, rev); err != nil {
			h.log.Warn("deleting a dead worker's claim", "connector", id.Connector, "task", id.Task, "err", err)
		}
	}
}

// take claims a task assigned to this worker under the worker's lease and starts the task.
func (h *Herder) take(ctx context.Context, lease *cluster.Lease, id rpc.TaskID, e entry) {
	claim, err := h.leases.Claim(ctx, lease, id)
	if err != nil {
		h.again.Store(true)
		// ErrLeaseHeld: its previous owner has not released it yet, or its lease has not expired: next round.
		if !errors.Is(err, cluster.ErrLeaseHeld) {
			h.log.Warn("claiming a task", "connector", id.Connector, "task", id.Task, "err", err)
		}
		return
	}
	lt := &localTask{id: id, claim: claim, busy: true}
	h.mu.Lock()
	if h.closed || h.lease != lease || !lease.Valid(time.Now()) {
		h.mu.Unlock()
		_ = h.leases.Unclaim(ctx, claim)
		return
	}
	h.local[id] = lt
	delete(h.taking, id)
	h.changes++
	h.mu.Unlock()
	h.start(ctx, lt, e)
	h.mu.Lock()
	lt.busy = false
	h.mu.Unlock()
	h.log.Info("task started", "connector", id.Connector, "task", id.Task)
}

// start runs lt with the config of e; a task that cannot start is FAILED with the reason. When the config itself
// cannot be applied, the connector is FAILED too.
func (h *Herder) start(ctx context.Context, lt *localTask, e entry) {
	var run runner
	pr, err := h.prepare(e.rec.Config, connector.Env{Connector: lt.id.Connector})
	if err != nil {
		werr := h.state.writeConnector(ctx, lt.id.Connector,
			rpc.ConnectorState{State: rpc.StateFailed, Trace: err.Error(), WorkerID: h.cfg.WorkerID}, e.rev)
		if werr != nil {
			h.log.Warn("storing the status of a connector", "connector", lt.id.Connector, "err", werr)
		}
	} else {
		run, err = h.startTask(ctx, lt.id.Connector, pr, lt.id.Task)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if lt.lost && run != nil {
		// The lease was lost while it started: another worker may own it now.
		abort(run)
		run, err = nil, errors.New("the worker's lease was lost while the task started")
	}
	lt.run, lt.trace, lt.config, lt.rev, lt.gen = run, "", e.rec.Config, e.rev, e.rec.Restarts[lt.id.Task]
	lt.sup.startedAt, lt.sup.nextAt, lt.sup.lastErr = time.Now(), time.Time{}, ""
	if err != nil {
		lt.trace = err.Error()
		h.suspect(lt.id) // FAILED: the supervisor restarts it
		h.log.Error("task did not start", "connector", lt.id.Connector, "task", lt.id.Task, "err", err)
	}
}

// restartLocal stops lt (within StopTimeout) and starts it again with e's config, the start within callTimeout from
// when the old task stopped, and within ctx; auto says a restart of a FAILED task by the
// supervisor, which keeps counting its attempts.
func (h *Herder) restartLocal(ctx context.Context, lt *localTask, e entry, auto bool) {
	h.mu.Lock()
	run, sup := lt.run, lt.sup
	lt.run, lt.stopping = nil, run
	h.mu.Unlock()
	if run != nil {
		if err := h.stopRunner(context.Background(), run); err != nil {
			h.log.Warn("closing a task's sink or source", "connector", lt.id.Connector, "task", lt.id.Task, "err", err)
		}
		h.mu.Lock()
		lt.carried, lt.stopping = lt.carried.Add(countersOf(run)), nil
		h.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	h.start(ctx, lt, e)
	if auto {
		h.mu.Lock()
		lt.sup.attempts = sup.attempts
		if lt.run == nil {
			lt.sup.lastErr = lt.trace
		}
		h.mu.Unlock()
	}
}

// stopRunner stops a task within StopTimeout or ctx, whichever ends first.
func (h *Herder) stopRunner(ctx context.Context, run runner) error {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.StopTimeout)
	defer cancel()
	return run.Stop(ctx)
}

// release stops a task, writes its final state and releases its claim, so that its next owner takes it at once.
func (h *Herder) release(ctx context.Context, lt *localTask, final string) {
	h.mu.Lock()
	lt.releasing = true
	run := lt.run
	h.mu.Unlock()
	if run != nil {
		if err := h.stopRunner(ctx, run); err != nil {
			h.log.Warn("closing a task's sink or source", "connector", lt.id.Connector, "task", lt.id.Task, "err", err)
		}
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	var c rpc.TaskCounters
	if run != nil {
		c = countersOf(run)
	}
	h.mu.RLock()
	st := StoredTask{TaskState: rpc.TaskState{ID: lt.id.Task, State: final, WorkerID: h.cfg.WorkerID}, Rev: lt.rev, Gen: lt.gen}
	rev, lost, known := lt.statusRev, lt.lost, lt.base != nil
	h.mu.RUnlock()
	skipWrite := false
	if !lost && !known {
		// Never written by this worker: its totals so far are in the key. Unread, the key is left as it is rather
		// than written without them.
		prev, prevRev, err := h.state.readTask(wctx, lt.id.Connector, lt.id.Task)
		if err != nil {
			h.log.Debug("reading the status of a task", "connector", lt.id.Connector, "task", lt.id.Task, "err", err)
			skipWrite = true
		} else {
			base := totalsOf(prev)
			h.mu.Lock()
			lt.base, rev = &base, prevRev
			h.mu.Unlock()
		}
	}
	h.mu.RLock()
	st.Totals = lt.totals(c)
	h.mu.RUnlock()
	if !lost {
		if !skipWrite {
			if _, err := h.state.writeTask(wctx, lt.id.Connector, st, rev); err != nil {
				h.log.Debug("storing the final status of a task", "connector", lt.id.Connector, "task", lt.id.Task, "err", err)
			}
		}
		h.mu.Lock()
		lt.released, lost = true, lt.lost
		h.mu.Unlock()
		if !lost {
			if err := h.leases.Unclaim(wctx, lt.claim); err != nil {
				h.log.Warn("releasing the claim of a task", "connector", lt.id.Connector, "task", lt.id.Task, "err", err)
			}
		}
	}
	h.mu.Lock()
	if h.local[lt.id] == lt {
		delete(h.local, lt.id)
	}
	h.changes++
	h.mu.Unlock()
	h.log.Info("task released", "connector", lt.id.Connector, "task", lt.id.Task)
	h.poke()
}

// drop forgets a task that was lost; the watchdog already stopped it.
func (h *Herder) drop(lt *localTask) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.local[lt.id] == lt {
		delete(h.local, lt.id)
	}
	h.changes++
}

// lose stops a task at once because the worker's lease lapsed or the task was taken: another worker may own it
// now, so its records in flight are handed back rather than finished.
func (h *Herder) lose(lt *localTask, why string) {
	h.mu.Lock()
	if lt.lost {
		h.mu.Unlock()
		return
	}
	lt.lost = true
	h.changes++
	run, stopping := lt.run, lt.stopping
	h.mu.Unlock()
	for _, r := range []runner{run, stopping} {
		if r != nil {
			abort(r)
		}
	}
	h.log.Warn("task stopped: "+why, "connector", lt.id.Connector, "task", lt.id.Task)
	h.poke()
}

// abort stops run without grace: reading stops and the writes in flight are cancelled now; what is left of
// stopping (handing records back, closing the sink) may need NATS and goes on in the background.
func abort(run runner) {
	run.Abort()
	go func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = run.Stop(ctx)
	}()
}

// renew renews the worker's lease every Heartbeat, one write whatever the number of tasks, and acquires a new
// incarnation when it has none. A watchdog stops every task at once when the lease's local deadline passes (even
// when NATS cannot be reached): the incarnation is then abandoned, and the tasks are claimed again under the next.
// Both run until Close has handed every task over: tasks finishing their records stay fenced.
func (h *Herder) renew() {
	every := h.cfg.Heartbeat
	if every <= 0 {
		every = cluster.DefaultHeartbeat
	}
	renewals := time.NewTicker(every)
	defer renewals.Stop()
	go h.watchdog()
	for {
		select {
		case <-h.renewQuit:
			return
		case <-renewals.C:
		}
		lease := h.currentLease()
		if lease == nil {
			// An acquire answered within the lease's local validity gives a valid lease: wait that long.
			local := h.cfg.LeaseLocal
			if local <= 0 {
				local = cluster.DefaultLeaseLocal
			}
			ctx, cancel := context.WithTimeout(context.Background(), max(every, local))
			next, err := h.leases.Acquire(ctx)
			cancel()
			if err != nil {
				h.log.Warn("acquiring the worker's lease", "err", err)
				continue
			}
			h.mu.Lock()
			if h.closed {
				h.mu.Unlock()
				continue
			}
			h.lease = next
			h.mu.Unlock()
			select {
			case h.leaseTaken <- struct{}{}: // the watchdog looks at its deadline
			default:
			}
			h.log.Info("worker's lease acquired", "incarnation", next.Incarnation)
			h.poke()
			continue
		}
		// A renewal waits for its answer as long as the lease stays valid, not just until the next tick: the
		// deadline moves by the send time of a renewal, so a late answer is as good as a prompt one, and on a
		// starved machine (a wake storm of thousands of tasks on 2 cores) answers come late for seconds while
		// every write still reaches the server. Giving up after one interval made every renewal of such a
		// spell fail and the watchdog stop every task of a worker whose key was never at risk.
		sent := time.Now()
		wait := lease.Deadline()
		if next := sent.Add(every); next.After(wait) {
			wait = next
		}
		ctx, cancel := context.WithDeadline(context.Background(), wait)
		err := h.leases.Renew(ctx, lease)
		cancel()
		took := time.Since(sent)
		var lost *cluster.LostError
		switch {
		case errors.As(err, &lost):
			h.abandon(lease, "the worker's lease "+lost.Why())
		case err != nil:
			h.log.Warn("renewing the worker's lease", "took", took.Round(time.Millisecond), "err", err)
		case took > every:
			h.log.Warn("renewing the worker's lease was slow: the worker or NATS is overloaded", "took",
				took.Round(time.Millisecond), "valid for", time.Until(lease.Deadline()).Round(time.Millisecond))
		}
	}
}

// watchdog stops every task at once (abandon) when the lease's local deadline passes. It sleeps until that
// deadline, and on waking sleeps again until the deadline a renewal moved it to; without a lease it sleeps until one
// is taken. (A ticker every 20 ms cost 50 wake-ups a second of an idle worker for the same check.)
func (h *Herder) watchdog() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := time.Hour // without a lease: until one is taken
		if lease := h.currentLease(); lease != nil {
			now := time.Now()
			if !lease.Valid(now) {
				h.abandon(lease, "the worker's lease expired (no renewal was answered in time)")
				continue
			}
			wait = lease.Deadline().Sub(now)
		}
		timer.Reset(wait)
		select {
		case <-h.renewQuit:
			return
		case <-h.leaseTaken:
		case <-timer.C:
		}
	}
}

// abandon stops every task claimed under lease and forgets the lease, so that the next renewal round acquires a new
// incarnation; the tasks are claimed again under it.
func (h *Herder) abandon(lease *cluster.Lease, why string) {
	h.mu.Lock()
	if h.lease != lease {
		h.mu.Unlock()
		return
	}
	h.lease = nil
	h.mu.Unlock()
	h.log.Warn("worker's lease lost: stopping every task", "incarnation", lease.Incarnation, "why", why)
	for _, lt := range h.held() {
		if lt.claim.Incarnation == lease.Incarnation && !h.isReleased(lt) {
			h.lose(lt, why)
		}
	}
}

// currentLease returns the worker's lease, nil when it has none.
func (h *Herder) currentLease() *cluster.Lease {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.lease
}

// validLease returns the worker's lease when it is valid now, else nil.
func (h *Herder) validLease() *cluster.Lease {
	if lease := h.currentLease(); lease != nil && lease.Valid(time.Now()) {
		return lease
	}
	return nil
}

// held returns the local tasks whose claim is held: not lost, not released.
func (h *Herder) held() []*localTask {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []*localTask
	for _, lt := range h.local {
		if !lt.lost && !lt.released {
			out = append(out, lt)
		}
	}
	return out
}

func (h *Herder) isReleased(lt *localTask) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return lt.released
}

// writeStatuses stores the status of every local task whose state changed, and its counters when they changed,
// at most every countersInterval: an idle task writes nothing. A write refused because another worker wrote the
// key means the task is lost.
func (h *Herder) writeStatuses(ctx context.Context) {
	now := time.Now()
	h.mu.RLock()
	type pending struct {
		lt   *localTask
		st   StoredTask
		base StoredTask
		n    delivery.Counters
		hl   delivery.Health
		sl   sleep
		rev  uint64
		// read: the task's totals so far are to be read from its key before the first write; c is what its runner
		// did, carried what the runners before it did.
		read       bool
		c, carried rpc.TaskCounters
	}
	var todo []pending
	type slept struct {
		lt *localTask
		sl sleep
	}
	var asleep []slept
	for _, lt := range h.local {
		if lt.lost || lt.releasing || lt.busy {
			continue // a busy task's status is written once its step ends
		}
		if lt.run != nil && !lt.wroteAt.IsZero() && lt.rev == lt.written.Rev && lt.gen == lt.written.Gen {
			// Parked since before its last write, with the same record: nothing of it changed, its state neither
			// (a task's failure wakes it first). Nothing of it is read: at thousands of idle tasks, its lock and
			// the dozen objects of its counters and health, every second, were most of the round.
			if parks, asleep := lt.run.Asleep(); asleep && (sleep{lt.run, parks, asleep}) == lt.wroteSleep {
				continue
			}
		}
		state, trace := lt.state()
		base := StoredTask{TaskState: rpc.TaskState{ID: lt.id.Task, State: state, WorkerID: h.cfg.WorkerID, Trace: trace},
			Rev: lt.rev, Gen: lt.gen}
		changed := lt.wroteAt.IsZero() || base.TaskState != lt.written.TaskState || base.Rev != lt.written.Rev ||
			base.Gen != lt.written.Gen // a change of state is written at once
		var n delivery.Counters
		var hl delivery.Health
		var sl sleep
		if lt.run != nil {
			sl.run = lt.run
			sl.parks, sl.asleep = lt.run.Asleep() // a task parked since its last write was skipped above
			n, hl = lt.run.Counters(), lt.run.Health()
		}
		if !changed && n == lt.wroteN && hl.Equal(lt.wroteH) {
			if sl != lt.wroteSleep {
				asleep = append(asleep, slept{lt, sl}) // what is written holds as of sl too
			}
			continue
		}
		if !changed && now.Sub(lt.wroteAt) < countersInterval {
			continue
		}
		st := base
		var c rpc.TaskCounters
		if lt.run != nil {
			c = countersOf(lt.run)
			st.Counters, st.Health = &c, healthOf(hl)
		}
		st.Totals = lt.totals(c)
		todo = append(todo, pending{lt, st, base, n, hl, sl, lt.statusRev, lt.base == nil, c, lt.carried})
	}
	h.mu.RUnlock()
	if len(asleep) > 0 {
		h.mu.Lock()
		for _, a := range asleep {
			a.lt.wroteSleep = a.sl
		}
		h.mu.Unlock()
	}
	// startsAtOnce writes at a time, within callTimeout for all: what is left, or failed, is written by a later
	// round (a task's status is written until it is stored), and a round logs one warning for its failures.
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var failed atomic.Int64
	var firstErr atomic.Value
	work := make(chan pending)
	var wg sync.WaitGroup
	for range min(startsAtOnce, len(todo)) {
		wg.Go(func() {
			for p := range work {
				var readBase *rpc.TaskCounters
				if p.read {
					prev, prevRev, err := h.state.readTask(ctx, p.lt.id.Connector, p.lt.id.Task)
					if err != nil {
						if failed.Add(1) == 1 {
							firstErr.Store(fmt.Sprintf("%s task %d: %v", p.lt.id.Connector, p.lt.id.Task, err))
						}
						continue
					}
					base := totalsOf(prev)
					readBase, p.rev = &base, prevRev
					t := base.Add(p.carried).Add(p.c)
					p.st.Totals = &t
				}
				rev, err := h.state.writeTask(ctx, p.lt.id.Connector, p.st, p.rev)
				if err != nil {
					if ebjs.IsRevisionConflict(err) {
						h.lose(p.lt, "was taken by another worker (its status was written by it)")
						continue
					}
					if failed.Add(1) == 1 {
						firstErr.Store(fmt.Sprintf("%s task %d: %v", p.lt.id.Connector, p.lt.id.Task, err))
					}
					continue
				}
				h.mu.Lock()
				p.lt.statusRev, p.lt.written, p.lt.wroteN, p.lt.wroteH, p.lt.wroteAt = rev, p.base, p.n, p.hl, now
				p.lt.wroteSleep = p.sl
				if readBase != nil && p.lt.base == nil {
					p.lt.base = readBase
				}
				h.mu.Unlock()
			}
		})
	}
	for _, p := range todo {
		if ctx.Err() != nil {
			break
		}
		work <- p
	}
	close(work)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		h.log.Warn("storing the status of tasks; a later round tries again", "failed", n, "of", len(todo),
			"first", firstErr.Load())
	}
}

// localStatus returns the live status of a local task, if this worker runs it.
func (h *Herder) localStatus(id rpc.TaskID) (rpc.TaskState, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	lt, ok := h.local[id]
	if !ok || lt.lost || lt.releasing {
		return rpc.TaskState{}, false
	}
	state, trace := lt.state()
	ts := rpc.TaskState{ID: id.Task, State: state, WorkerID: h.cfg.WorkerID, Trace: trace}
	var c rpc.TaskCounters
	if lt.run != nil {
		c = countersOf(lt.run)
		ts.Counters, ts.Health = &c, healthOf(lt.run.Health())
	}
	if lt.base != nil {
		ts.Totals = lt.totals(c)
	}
	return ts, true
}

// localTasks returns the tasks this worker runs, sorted.
func (h *Herder) localTasks() []rpc.TaskID {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []rpc.TaskID
	for id, lt := range h.local {
		if !lt.lost && !lt.releasing {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b rpc.TaskID) int {
		if a.Connector != b.Connector {
			if a.Connector < b.Connector {
				return -1
			}
			return 1
		}
		return a.Task - b.Task
	})
	return out
}
