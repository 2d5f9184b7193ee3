package herder

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
)

// Changes go through the connectors bucket, compare-and-set on the connector's revision, so the answer is the
// same whichever worker is asked; each answers once the tasks, wherever they run, apply the change (await).

// awaitPoll is how often a change looks at the tasks' statuses while it waits for them.
const awaitPoll = 5 * time.Millisecond

// lockOp serializes the changes of one connector made through this worker.
func (h *Herder) lockOp(name string) func() {
	h.opsMu.Lock()
	m, ok := h.ops[name]
	if !ok {
		m = &sync.Mutex{}
		h.ops[name] = m
	}
	h.opsMu.Unlock()
	m.Lock()
	return m.Unlock
}

// ready fails when the herder cannot take changes.
func (h *Herder) ready() error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	switch {
	case h.closed:
		return ErrClosed
	case !h.started:
		return ErrNotStarted
	}
	return nil
}

// remember makes a record this worker wrote the cache's, ahead of the watcher.
func (h *Herder) remember(rec record, rev uint64) {
	h.mu.Lock()
	if cur, ok := h.records[rec.Name]; !ok || cur.rev < rev {
		h.records[rec.Name] = newEntry(rec, rev)
		h.fresh[rec.Name] = true
		h.changes++
	}
	h.mu.Unlock()
	h.poke()
}

// Create creates a connector in initialState (RUNNING when empty, PAUSED or STOPPED) and answers once it runs:
// its consumer exists and, when RUNNING, its tasks read. Errors: ErrInvalid (name, state), connector.FieldErrors
// (config), ErrExists, *StartError (stored, but FAILED), ErrClosed, or a KV error.
func (h *Herder) Create(ctx context.Context, name string, cfg map[string]string, initialState string) (rpc.ConnectorInfo, error) {
	if initialState == "" {
		initialState = rpc.StateRunning
	}
	if initialState != rpc.StateRunning && initialState != rpc.StatePaused && initialState != rpc.StateStopped {
		return rpc.ConnectorInfo{}, fmt.Errorf("%w: initial_state %q must be RUNNING, PAUSED or STOPPED", ErrInvalid, initialState)
	}
	if err := h.check(name, cfg); err != nil {
		return rpc.ConnectorInfo{}, err
	}
	if err := h.ready(); err != nil {
		return rpc.ConnectorInfo{}, err
	}
	cfg, err := h.seal(name, cfg, nil)
	if err != nil {
		return rpc.ConnectorInfo{}, err
	}
	ctx, cancel := h.opContext(ctx)
	defer cancel()
	defer h.lockOp(name)()
	if _, err := h.get(name); err == nil {
		return rpc.ConnectorInfo{}, fmt.Errorf("%w: %s", ErrExists, name)
	}
	rec := record{Name: name, Config: maps.Clone(cfg), TargetState: initialState}
	rev, err := h.kv.Create(ctx, name, mustJSON(rec))
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return rpc.ConnectorInfo{}, fmt.Errorf("%w: %s", ErrExists, name)
		}
		return rpc.ConnectorInfo{}, fmt.Errorf("storing connector %s: %w", name, err)
	}
	h.remember(rec, rev)
	err = h.applied(ctx, newEntry(rec, rev), nil)
	info, _ := h.Info(name)
	return info, err
}

// applied does the connector-level work of a stored record (its consumer, its task configs), records a failure
// as the connector's status, and waits until the tasks apply the record. restarts are the restart requests the
// tasks must honour.
func (h *Herder) applied(ctx context.Context, e entry, restarts map[int]uint64) error {
	name := e.rec.Name
	pr, err := h.prepare(e.rec.Config, connector.Env{Connector: name})
	if err == nil {
		_, err = h.ensureInput(ctx, pr)
	}
	if err != nil {
		if werr := h.state.writeConnector(ctx, name, rpc.ConnectorState{State: rpc.StateFailed, Trace: err.Error(),
			WorkerID: h.cfg.WorkerID}, e.rev); werr != nil {
			h.log.Warn("storing the status of a connector", "connector", name, "err", werr)
		}
		return &StartError{Connector: name, Err: err}
	}
	if err := h.state.writeConnector(ctx, name, rpc.ConnectorState{State: rpc.StateRunning}, e.rev); err != nil {
		return fmt.Errorf("storing the status of connector %s: %w", name, err)
	}
	if err := h.state.writeTaskConfigs(ctx, name, e.rec.Config, tasksOf(e.rec.Config)); err != nil {
		return err
	}
	return h.await(ctx, e, restarts)
}

// await waits until the tasks apply record e: when RUNNING, every task runs (or FAILED) at revision e.rev or
// later, having honoured restarts; otherwise no task of the connector holds a lease any more. A task that FAILED
// at that revision is a *StartError.
func (h *Herder) await(ctx context.Context, e entry, restarts map[int]uint64) error {
	name := e.rec.Name
	ctx, cancel := context.WithTimeout(ctx, h.cfg.StopTimeout+15*time.Second)
	defer cancel()
	t := time.NewTicker(awaitPoll)
	defer t.Stop()
	for {
		done, err := h.isApplied(ctx, e, restarts)
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("connector %s: no worker applied its change in time: %w", name, ctx.Err())
		case <-t.C:
		}
	}
}

func (h *Herder) isApplied(ctx context.Context, e entry, restarts map[int]uint64) (bool, error) {
	name := e.rec.Name
	if e.rec.TargetState != rpc.StateRunning {
		holders, err := h.leases.Holders(ctx)
		if err != nil {
			return false, nil
		}
		for id := range holders {
			if id.Connector == name {
				return false, nil
			}
		}
		return true, nil
	}
	stored, err := h.state.read(ctx, name, tasksOf(e.rec.Config))
	if err != nil {
		return false, nil
	}
	live := h.liveIDs()
	var failed []error
	for i := range tasksOf(e.rec.Config) {
		st, ok := stored.tasks[i]
		if !ok || st.Rev < e.rev || st.Gen < restarts[i] || !live[st.WorkerID] {
			return false, nil
		}
		switch st.State {
		case rpc.StateRunning:
		case rpc.StateFailed:
			failed = append(failed, fmt.Errorf("task %d: %s", i, st.Trace))
		default:
			return false, nil
		}
	}
	if len(failed) > 0 {
		return true, &StartError{Connector: name, Err: errors.Join(failed...)}
	}
	return true, nil
}

// PutConfig creates a connector (RUNNING) or replaces its config, and answers once it runs the config; created
// says which. Replacing restarts the tasks with the new config (their records in flight are finished or handed
// back); an unchanged config is a no-op unless the connector or a task FAILED, which restarts them. Errors as
// Create, and ErrConflict.
func (h *Herder) PutConfig(ctx context.Context, name string, cfg map[string]string) (info rpc.ConnectorInfo, created bool, err error) {
	if err := h.check(name, cfg); err != nil {
		return rpc.ConnectorInfo{}, false, err
	}
	if err := h.ready(); err != nil {
		return rpc.ConnectorInfo{}, false, err
	}
	ctx, cancel := h.opContext(ctx)
	defer cancel()
	for attempt := 0; attempt < 2; attempt++ {
		if _, err := h.get(name); errors.Is(err, ErrNotFound) {
			info, err := h.Create(ctx, name, cfg, "")
			if errors.Is(err, ErrExists) {
				continue // created meanwhile: update it
			}
			return info, err == nil || isStartError(err), err
		}
		err := h.update(ctx, name, cfg)
		info, _ := h.Info(name)
		return info, false, err
	}
	return rpc.ConnectorInfo{}, false, ErrConflict
}

func isStartError(err error) bool {
	var se *StartError
	return errors.As(err, &se)
}

// PatchConfig merges patch into a connector's config, as Kafka Connect's PATCH /connectors/{c}/config does: a key
// with a nil value is removed, the others are set; the result is checked and applied as PutConfig applies a config.
// A config another call changed between the read and the write is read again (ErrConflict after three tries).
// Errors: ErrNotFound, and those of PutConfig.
func (h *Herder) PatchConfig(ctx context.Context, name string, patch map[string]*string) (rpc.ConnectorInfo, error) {
	for range 3 {
		base, err := h.Config(name)
		if err != nil {
			return rpc.ConnectorInfo{}, err
		}
		merged := maps.Clone(base)
		for k, v := range patch {
			if v == nil {
				delete(merged, k)
			} else {
				merged[k] = *v
			}
		}
		if err := h.check(name, merged); err != nil {
			return rpc.ConnectorInfo{}, err
		}
		if err := h.ready(); err != nil {
			return rpc.ConnectorInfo{}, err
		}
		opCtx, cancel := h.opContext(ctx)
		err = h.updateFrom(opCtx, name, base, merged)
		cancel()
		if errors.Is(err, errStale) {
			continue
		}
		info, _ := h.Info(name)
		return info, err
	}
	return rpc.ConnectorInfo{}, ErrConflict
}

// errStale tells PatchConfig that the config changed after it read it.
var errStale = errors.New("the config changed meanwhile")

func (h *Herder) update(ctx context.Context, name string, cfg map[string]string) error {
	return h.updateFrom(ctx, name, nil, cfg)
}

// updateFrom stores cfg as the connector's config; with a base, only while the stored config is still base
// (errStale otherwise).
func (h *Herder) updateFrom(ctx context.Context, name string, base, cfg map[string]string) error {
	defer h.lockOp(name)()
	return h.change(ctx, name, func(old record) (record, map[int]uint64, error) {
		if base != nil && !maps.Equal(old.Config, base) {
			return record{}, nil, errStale
		}
		sealed, err := h.seal(name, cfg, old.Config)
		if err != nil {
			return record{}, nil, err
		}
		rec := old
		rec.Config = maps.Clone(sealed)
		if maps.Equal(old.Config, sealed) {
			// Unchanged: restart what FAILED, if anything. When the connector FAILED, every task restarts: one
			// whose start is under way now fails for the same reason, and that failure must not answer this call.
			failed := h.connectorFailed(ctx, name)
			rec.Restarts = h.failedRestarts(ctx, name, old, failed)
			if maps.Equal(rec.Restarts, old.Restarts) && !failed {
				return old, nil, errUnchanged
			}
		}
		return rec, rec.Restarts, nil
	}, func(old, rec record) {
		oldStream, oldDurable := old.Config[connector.KeyStream], old.Config[connector.KeyDurable]
		if oldDurable != "" && (oldStream != rec.Config[connector.KeyStream] || oldDurable != rec.Config[connector.KeyDurable]) {
			if derr := delivery.DeleteConsumer(ctx, h.cfg.JetStream, oldStream, oldDurable); derr != nil {
				h.log.Warn("deleting the replaced consumer", "connector", name, "err", derr)
			}
		}
	})
}

// errUnchanged tells change that there is nothing to store.
var errUnchanged = errors.New("unchanged")

// change stores the record that mutate makes of the connector's current one, compare-and-set, then applies it
// and waits; after runs once the tasks applied it, with the old and new records.
func (h *Herder) change(ctx context.Context, name string, mutate func(record) (record, map[int]uint64, error),
	after func(old, rec record)) error {
	for attempt := 0; ; attempt++ {
		cur, err := h.get(name)
		if err != nil {
			return err
		}
		rec, restarts, err := mutate(cur.rec)
		if errors.Is(err, errUnchanged) {
			return nil
		}
		if err != nil {
			return err
		}
		rev, err := h.kv.Update(ctx, name, mustJSON(rec), cur.rev)
		if err != nil {
			if ebjs.IsRevisionConflict(err) && attempt < 5 {
				h.refresh(ctx, name)
				continue
			}
			if ebjs.IsRevisionConflict(err) {
				return fmt.Errorf("%w: %s", ErrConflict, name)
			}
			return fmt.Errorf("storing connector %s: %w", name, err)
		}
		h.remember(rec, rev)
		err = h.applied(ctx, newEntry(rec, rev), restarts)
		if after != nil {
			after(cur.rec, rec)
		}
		return err
	}
}

// refresh reads a connector's record from KV into the cache.
func (h *Herder) refresh(ctx context.Context, name string) {
	e, err := h.kv.Get(ctx, name)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			h.mu.Lock()
			h.dropRecord(name)
			h.mu.Unlock()
		}
		return
	}
	h.observe(e)
}

// failedRestarts returns rec's restart requests with one more for every task that is FAILED now, or for every
// task when all.
func (h *Herder) failedRestarts(ctx context.Context, name string, rec record, all bool) map[int]uint64 {
	out := maps.Clone(rec.Restarts)
	if out == nil {
		out = map[int]uint64{}
	}
	if all {
		for i := range tasksOf(rec.Config) {
			out[i]++
		}
		return out
	}
	st, err := h.Status(name)
	if err != nil {
		return out
	}
	for _, t := range st.Tasks {
		if t.State == rpc.StateFailed {
			out[t.ID]++
		}
	}
	return out
}

// connectorFailed reports whether the connector's status is FAILED.
func (h *Herder) connectorFailed(ctx context.Context, name string) bool {
	st, err := h.Status(name)
	return err == nil && st.Connector.State == rpc.StateFailed
}

// Pause stops the tasks of a connector and keeps its consumer: records wait in the stream. Errors: ErrNotFound,
// ErrClosed, or a KV error.
func (h *Herder) Pause(ctx context.Context, name string) error {
	return h.setTarget(ctx, name, rpc.StatePaused)
}

// Resume brings a paused or stopped connector back to RUNNING and answers once its tasks read. Errors: as Pause,
// and *StartError.
func (h *Herder) Resume(ctx context.Context, name string) error {
	return h.setTarget(ctx, name, rpc.StateRunning)
}

// Stop stops the tasks of a connector, which keeps its config and consumer and lists no tasks. Errors: as Pause.
func (h *Herder) Stop(ctx context.Context, name string) error {
	return h.setTarget(ctx, name, rpc.StateStopped)
}

func (h *Herder) setTarget(ctx context.Context, name, target string) error {
	if err := h.ready(); err != nil {
		return err
	}
	ctx, cancel := h.opContext(ctx)
	defer cancel()
	defer h.lockOp(name)()
	return h.change(ctx, name, func(old record) (record, map[int]uint64, error) {
		if old.TargetState == target && !h.connectorFailed(ctx, name) {
			return old, nil, errUnchanged
		}
		rec := old
		rec.TargetState = target
		return rec, rec.Restarts, nil
	}, nil)
}

// Delete deletes a connector: its tasks stop wherever they run, then its durable consumer, statuses and task
// configs are removed (a source's offsets are kept, as Kafka Connect keeps them). Errors: ErrNotFound,
// ErrClosed, or a JetStream error.
func (h *Herder) Delete(ctx context.Context, name string) error {
	if err := h.ready(); err != nil {
		return err
	}
	ctx, cancel := h.opContext(ctx)
	defer cancel()
	defer h.lockOp(name)()
	cur, err := h.get(name)
	if err != nil {
		return err
	}
	if err := h.kv.Delete(ctx, name, jetstream.LastRevision(cur.rev)); err != nil {
		if ebjs.IsRevisionConflict(err) {
			return fmt.Errorf("%w: %s", ErrConflict, name)
		}
		return fmt.Errorf("deleting connector %s: %w", name, err)
	}
	h.mu.Lock()
	h.dropRecord(name)
	h.mu.Unlock()
	h.poke()
	gone := cur
	gone.rec.TargetState = rpc.StateStopped
	if err := h.await(ctx, gone, nil); err != nil {
		return err
	}
	cfg := cur.rec.Config
	if stream, durable := cfg[connector.KeyStream], cfg[connector.KeyDurable]; stream != "" && durable != "" {
		if err := delivery.DeleteConsumer(ctx, h.cfg.JetStream, stream, durable); err != nil {
			return err
		}
	}
	// A deleted connector's active topics go with it, as in Kafka Connect.
	if err := h.forgetTopics(ctx, name); err != nil {
		h.log.Warn("deleting the active topics of a deleted connector", "connector", name, "err", err)
	}
	return h.state.forget(ctx, name)
}
