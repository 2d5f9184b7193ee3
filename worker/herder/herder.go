// Package herder manages the connectors of a standalone worker: it persists their configs and target states in
// a JetStream KV bucket, validates configs against the plugins' specs, owns the durable consumers of sinks, starts
// and stops their tasks, and reports their status. Every change answers only once the runtime runs the new
// configuration. (A later issue shares the tasks among a cluster of workers.)
package herder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
)

// Version is the version of the worker runtime reported by GET /.
const Version = "0.1.0"

// BucketPurpose names the KV bucket of connector configs: Names.Bucket(BucketPurpose).
const BucketPurpose = "connectors"

// Errors of Herder operations; REST maps them to statuses. Config problems are connector.FieldErrors.
var (
	ErrNotFound = errors.New("connector not found")
	ErrExists   = errors.New("connector already exists")
	ErrInvalid  = errors.New("invalid request")
	ErrClosed   = errors.New("worker is shutting down")
	// ErrNotStarted is returned by changes made before Start.
	ErrNotStarted = errors.New("worker is not started")
)

// StartError is returned by a change whose config was stored but whose tasks did not start; the connector's
// status is FAILED with the same trace.
type StartError struct {
	Connector string
	Err       error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("connector %s was stored but did not start: %v", e.Connector, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// Config configures a Herder.
type Config struct {
	JetStream jetstream.JetStream
	Names     ebjs.Names
	WorkerID  string
	Registry  *connector.Registry
	Logger    *slog.Logger
	// AllowPrivateTargets is passed to plugins (connector.Env).
	AllowPrivateTargets bool
	// Replicas of the KV bucket (default 1).
	Replicas int
	// StopTimeout bounds how long stopping a task waits for the records being written (default 30s); then their
	// writes are cancelled and the records nak'ed.
	StopTimeout time.Duration
	// A FAILED task restarts automatically after a back-off that starts at RestartBackoffInitial (default 1s)
	// and doubles with each failed run up to RestartBackoffMax (default 60s); a task that ran RestartResetAfter
	// (default 5m) before failing starts again from the initial back-off.
	RestartBackoffInitial time.Duration
	RestartBackoffMax     time.Duration
	RestartResetAfter     time.Duration
	// ObserveDelivery, when set, receives the put-to-delivery latency of every record a task writes.
	ObserveDelivery func(connector string, task int, latency time.Duration)
	// MasterKey (32 bytes) encrypts the secret values of configs (rpc.EncryptSecret) before they are stored or
	// returned, and decrypts them when a task starts. Without it, a config with a plaintext secret is refused.
	MasterKey []byte
}

// record is the value stored in KV under the connector's name.
type record struct {
	Name        string            `json:"name"`
	Config      map[string]string `json:"config"`
	TargetState string            `json:"target_state"`
}

// conn is the runtime of one connector.
type conn struct {
	name string
	// op serializes the lifecycle changes of this connector; the fields below are guarded by Herder.mu.
	op sync.Mutex

	rec     record
	rev     uint64
	kind    connector.Type
	state   string // RUNNING, PAUSED, STOPPED or FAILED
	trace   string
	nTasks  int
	tasks   []runner
	sup     []taskSup // one per task: its automatic restarts
	deleted bool
}

// runner is a running task: a sink task (delivery.Task) or a source task (delivery.SourceTask).
type runner interface {
	State() (state, trace string)
	Counters() delivery.Counters
	Stop(ctx context.Context) error
}

// Herder manages connectors. Methods are safe for concurrent use; changes of one connector are serialized.
type Herder struct {
	cfg     Config
	log     *slog.Logger
	kv      jetstream.KeyValue
	offsets jetstream.KeyValue // source offsets
	state   *stateKV           // status and task configs, written by the monitor

	mu     sync.RWMutex
	conns  map[string]*conn
	closed bool

	quit        chan struct{}
	monitorDone chan struct{}
	closeOnce   sync.Once
}

// New returns a herder; Start loads the stored connectors.
func New(cfg Config) (*Herder, error) {
	if cfg.JetStream == nil {
		return nil, errors.New("herder: JetStream is required")
	}
	if cfg.Registry == nil {
		return nil, errors.New("herder: Registry is required")
	}
	if n := len(cfg.MasterKey); n != 0 && n != rpc.MasterKeySize {
		return nil, fmt.Errorf("herder: the master key must be %d bytes, not %d", rpc.MasterKeySize, n)
	}
	if cfg.Replicas < 1 {
		cfg.Replicas = 1
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = 30 * time.Second
	}
	if cfg.RestartBackoffInitial <= 0 {
		cfg.RestartBackoffInitial = DefaultRestartBackoffInitial
	}
	if cfg.RestartBackoffMax < cfg.RestartBackoffInitial {
		cfg.RestartBackoffMax = max(DefaultRestartBackoffMax, cfg.RestartBackoffInitial)
	}
	if cfg.RestartResetAfter <= 0 {
		cfg.RestartResetAfter = DefaultRestartResetAfter
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Herder{cfg: cfg, log: log, conns: map[string]*conn{}, quit: make(chan struct{})}, nil
}

// Start ensures the KV bucket of connectors, then loads every stored connector and brings it to its target
// state. A connector that cannot start is reported FAILED; only a failure to read the bucket is an error.
func (h *Herder) Start(ctx context.Context) error {
	kv, err := h.cfg.JetStream.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      h.cfg.Names.Bucket(BucketPurpose),
		Description: "connector configs and target states",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    h.cfg.Replicas,
	})
	if err != nil {
		return fmt.Errorf("herder: ensuring KV bucket %s: %w", h.cfg.Names.Bucket(BucketPurpose), err)
	}
	offsets, err := h.cfg.JetStream.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      h.cfg.Names.Bucket(delivery.OffsetsBucketPurpose),
		Description: "offsets of source connectors",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    h.cfg.Replicas,
	})
	if err != nil {
		return fmt.Errorf("herder: ensuring KV bucket %s: %w", h.cfg.Names.Bucket(delivery.OffsetsBucketPurpose), err)
	}
	state, err := ensureStateKV(ctx, h.cfg.JetStream, h.cfg.Names.Bucket, h.cfg.Replicas)
	if err != nil {
		return fmt.Errorf("herder: ensuring the KV buckets of status and task configs: %w", err)
	}
	h.mu.Lock()
	h.kv, h.offsets, h.state = kv, offsets, state
	h.mu.Unlock()
	// A watcher hands every current entry, then nil: one pass reads every connector with its revision.
	watcher, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return fmt.Errorf("herder: reading connectors: %w", err)
	}
	var entries []jetstream.KeyValueEntry
	for loaded := false; !loaded; {
		select {
		case entry := <-watcher.Updates():
			if entry == nil {
				loaded = true
			} else {
				entries = append(entries, entry)
			}
		case <-ctx.Done():
			_ = watcher.Stop()
			return fmt.Errorf("herder: reading connectors: %w", ctx.Err())
		}
	}
	_ = watcher.Stop()
	for _, entry := range entries {
		k := entry.Key()
		var rec record
		if err := json.Unmarshal(entry.Value(), &rec); err != nil {
			h.log.Error("stored connector cannot be read; ignored", "connector", k, "err", err)
			continue
		}
		rec.Name = k
		c := &conn{name: k, rec: rec, rev: entry.Revision(), state: rpc.StateUnassigned}
		h.mu.Lock()
		h.conns[k] = c
		h.mu.Unlock()
		c.op.Lock()
		if err := h.apply(ctx, c); err != nil {
			h.log.Error("stored connector did not start", "connector", k, "err", err)
		} else {
			h.log.Info("connector started", "connector", k, "state", rec.TargetState)
		}
		c.op.Unlock()
	}
	h.mu.Lock()
	if !h.closed && h.monitorDone == nil {
		h.monitorDone = make(chan struct{})
		go h.monitor(h.monitorDone)
	}
	h.mu.Unlock()
	return nil
}

// Close stops every task (in parallel), each within StopTimeout or ctx, whichever ends first. Later changes fail
// with ErrClosed.
func (h *Herder) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	conns := slices.Collect(maps.Values(h.conns))
	done := h.monitorDone
	h.mu.Unlock()
	h.closeOnce.Do(func() { close(h.quit) })
	if done != nil {
		<-done
	}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			c.op.Lock()
			defer c.op.Unlock()
			h.stopTasks(ctx, c)
		})
	}
	wg.Wait()
	if done != nil {
		h.syncState(ctx) // the monitor has ended: the tasks' last states are written here
	}
	return nil
}

// ServerInfo describes the worker.
func (h *Herder) ServerInfo() rpc.ServerInfo {
	return rpc.ServerInfo{Version: Version, ClusterID: h.cfg.Names.Cluster, WorkerID: h.cfg.WorkerID}
}

// Plugins lists the plugins of the registry.
func (h *Herder) Plugins() []rpc.PluginInfo {
	out := []rpc.PluginInfo{}
	for _, p := range h.cfg.Registry.Plugins() {
		out = append(out, rpc.PluginInfo{Class: p.Name, Type: string(p.Type), Version: p.Version})
	}
	return out
}

// Connectors returns the names of every connector, sorted.
func (h *Herder) Connectors() []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	names := slices.Collect(maps.Keys(h.conns))
	slices.Sort(names)
	return names
}

// Info returns the config and tasks of a connector; ErrNotFound when it does not exist.
func (h *Herder) Info(name string) (rpc.ConnectorInfo, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	c, ok := h.conns[name]
	if !ok {
		return rpc.ConnectorInfo{}, ErrNotFound
	}
	return h.infoLocked(c), nil
}

func (h *Herder) infoLocked(c *conn) rpc.ConnectorInfo {
	info := rpc.ConnectorInfo{Name: c.name, Config: maps.Clone(c.rec.Config), Tasks: []rpc.TaskID{}, Type: typeOf(c)}
	if c.state == rpc.StateRunning || c.state == rpc.StatePaused {
		for i := range c.nTasks {
			info.Tasks = append(info.Tasks, rpc.TaskID{Connector: c.name, Task: i})
		}
	}
	return info
}

func typeOf(c *conn) string {
	if c.kind == "" {
		return rpc.TypeSink
	}
	return string(c.kind)
}

// Config returns the config of a connector; ErrNotFound when it does not exist.
func (h *Herder) Config(name string) (map[string]string, error) {
	info, err := h.Info(name)
	return info.Config, err
}

// Status returns the state of a connector and its tasks; ErrNotFound when it does not exist.
func (h *Herder) Status(name string) (rpc.ConnectorStatus, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	c, ok := h.conns[name]
	if !ok {
		return rpc.ConnectorStatus{}, ErrNotFound
	}
	return h.statusLocked(c), nil
}

func (h *Herder) statusLocked(c *conn) rpc.ConnectorStatus {
	st := rpc.ConnectorStatus{
		Name:      c.name,
		Connector: rpc.ConnectorState{State: c.state, WorkerID: h.cfg.WorkerID, Trace: c.trace},
		Tasks:     []rpc.TaskState{},
		Type:      typeOf(c),
	}
	switch c.state {
	case rpc.StateRunning:
		for i, t := range c.tasks {
			state, trace := t.State()
			n := t.Counters()
			if state == rpc.StateFailed && i < len(c.sup) {
				trace += c.sup[i].describe()
			}
			st.Tasks = append(st.Tasks, rpc.TaskState{ID: i, State: state, WorkerID: h.cfg.WorkerID, Trace: trace,
				Counters: &rpc.TaskCounters{Read: n.Read, Written: n.Written, Retried: n.Retried, Dropped: n.Dropped,
					Failed: n.Failed, Undecodable: n.Undecodable, Filtered: n.Filtered, TransformFailed: n.TransformFailed,
					DeadLettered: n.DeadLettered, Matched: n.Matched, Unmatched: n.Unmatched, Routed: n.Routed}})
		}
	case rpc.StatePaused:
		for i := range c.nTasks {
			st.Tasks = append(st.Tasks, rpc.TaskState{ID: i, State: rpc.StatePaused, WorkerID: h.cfg.WorkerID})
		}
	}
	return st
}

// TaskStatus returns the state of one task; ErrNotFound when the connector or the task does not exist.
func (h *Herder) TaskStatus(name string, task int) (rpc.TaskState, error) {
	st, err := h.Status(name)
	if err != nil {
		return rpc.TaskState{}, err
	}
	for _, t := range st.Tasks {
		if t.ID == task {
			return t, nil
		}
	}
	return rpc.TaskState{}, fmt.Errorf("task %d of connector %s: %w", task, name, ErrNotFound)
}

// Expanded returns the info and status of every connector, for GET /connectors?expand=...
func (h *Herder) Expanded(info, status bool) map[string]rpc.ConnectorExpanded {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make(map[string]rpc.ConnectorExpanded, len(h.conns))
	for name, c := range h.conns {
		var e rpc.ConnectorExpanded
		if info {
			i := h.infoLocked(c)
			e.Info = &i
		}
		if status {
			s := h.statusLocked(c)
			e.Status = &s
		}
		out[name] = e
	}
	return out
}

// validName: a connector name is a KV key and a URL path segment: letters, digits and -_=. , not starting or
// ending with a dot.
var validName = regexp.MustCompile(`^[-_=.a-zA-Z0-9]{1,255}$`)

func checkName(name string) error {
	if !validName.MatchString(name) || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
		return fmt.Errorf("%w: connector name %q must be 1 to 255 of letters, digits, '-', '_', '=', '.', "+
			"not starting or ending with '.'", ErrInvalid, name)
	}
	return nil
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
	cfg, err := h.seal(cfg, nil)
	if err != nil {
		return rpc.ConnectorInfo{}, err
	}
	ctx, cancel := h.opContext(ctx)
	defer cancel()
	c := &conn{name: name, rec: record{Name: name, Config: maps.Clone(cfg), TargetState: initialState},
		state: rpc.StateUnassigned}
	c.op.Lock()
	defer c.op.Unlock()
	h.mu.Lock()
	if h.closed || h.kv == nil {
		h.mu.Unlock()
		if h.kv == nil {
			return rpc.ConnectorInfo{}, ErrNotStarted
		}
		return rpc.ConnectorInfo{}, ErrClosed
	}
	if _, ok := h.conns[name]; ok {
		h.mu.Unlock()
		return rpc.ConnectorInfo{}, fmt.Errorf("%w: %s", ErrExists, name)
	}
	h.conns[name] = c
	h.mu.Unlock()

	rev, err := h.kv.Create(ctx, name, mustJSON(c.rec))
	if err != nil {
		h.forget(c)
		if errors.Is(err, jetstream.ErrKeyExists) {
			return rpc.ConnectorInfo{}, fmt.Errorf("%w: %s", ErrExists, name)
		}
		return rpc.ConnectorInfo{}, fmt.Errorf("storing connector %s: %w", name, err)
	}
	h.mu.Lock()
	c.rev = rev
	h.mu.Unlock()
	err = h.apply(ctx, c)
	info, _ := h.Info(name)
	return info, err
}

// PutConfig creates a connector (RUNNING) or replaces its config, and answers once it runs the config; created
// says which. Replacing stops the tasks (their records are finished or nak'ed) and starts them with the new
// config; an unchanged config is a no-op unless the connector or a task FAILED, which restarts it. Errors as Create.
func (h *Herder) PutConfig(ctx context.Context, name string, cfg map[string]string) (info rpc.ConnectorInfo, created bool, err error) {
	if err := h.check(name, cfg); err != nil {
		return rpc.ConnectorInfo{}, false, err
	}
	ctx, cancel := h.opContext(ctx)
	defer cancel()
	for attempt := 0; ; attempt++ {
		c, err := h.lock(name)
		if errors.Is(err, ErrNotFound) {
			info, err := h.Create(ctx, name, cfg, "")
			if errors.Is(err, ErrExists) && attempt == 0 {
				continue // created meanwhile: update it
			}
			return info, err == nil || isStartError(err), err
		}
		if err != nil {
			return rpc.ConnectorInfo{}, false, err
		}
		err = h.update(ctx, c, cfg)
		c.op.Unlock()
		info, _ := h.Info(name)
		return info, false, err
	}
}

func isStartError(err error) bool {
	var se *StartError
	return errors.As(err, &se)
}

func (h *Herder) update(ctx context.Context, c *conn, cfg map[string]string) error {
	h.mu.RLock()
	old := c.rec
	h.mu.RUnlock()
	cfg, err := h.seal(cfg, old.Config)
	if err != nil {
		return err
	}
	h.mu.RLock()
	unchanged := maps.Equal(old.Config, cfg) && c.state != rpc.StateFailed && !h.taskFailedLocked(c)
	h.mu.RUnlock()
	if unchanged {
		return nil
	}
	rec := record{Name: c.name, Config: maps.Clone(cfg), TargetState: old.TargetState}
	if err := h.store(ctx, c, rec); err != nil {
		return err
	}
	h.stopTasks(ctx, c)
	err = h.apply(ctx, c)
	oldStream, oldDurable := old.Config[connector.KeyStream], old.Config[connector.KeyDurable]
	if oldDurable != "" && (oldStream != cfg[connector.KeyStream] || oldDurable != cfg[connector.KeyDurable]) {
		if derr := delivery.DeleteConsumer(ctx, h.cfg.JetStream, oldStream, oldDurable); derr != nil {
			h.log.Warn("deleting the replaced consumer", "connector", c.name, "err", derr)
		}
	}
	return err
}

func (h *Herder) taskFailedLocked(c *conn) bool {
	for _, t := range c.tasks {
		if s, _ := t.State(); s == rpc.StateFailed {
			return true
		}
	}
	return false
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
	ctx, cancel := h.opContext(ctx)
	defer cancel()
	c, err := h.lock(name)
	if err != nil {
		return err
	}
	defer c.op.Unlock()
	h.mu.RLock()
	rec := c.rec
	same := rec.TargetState == target && c.state == target
	h.mu.RUnlock()
	if same {
		return nil
	}
	rec.TargetState = target
	if err := h.store(ctx, c, rec); err != nil {
		return err
	}
	h.stopTasks(ctx, c)
	return h.apply(ctx, c)
}

// Delete stops the tasks of a connector, deletes its durable consumer and its stored config. Errors: ErrNotFound,
// ErrClosed, or a JetStream error (then the connector is stopped but still stored).
func (h *Herder) Delete(ctx context.Context, name string) error {
	ctx, cancel := h.opContext(ctx)
	defer cancel()
	c, err := h.lock(name)
	if err != nil {
		return err
	}
	defer c.op.Unlock()
	h.stopTasks(ctx, c)
	h.mu.RLock()
	cfg := c.rec.Config
	h.mu.RUnlock()
	if stream, durable := cfg[connector.KeyStream], cfg[connector.KeyDurable]; stream != "" && durable != "" {
		if err := delivery.DeleteConsumer(ctx, h.cfg.JetStream, stream, durable); err != nil {
			h.markStopped(c)
			return err
		}
	}
	if err := h.kv.Delete(ctx, c.name); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		h.markStopped(c)
		return fmt.Errorf("deleting connector %s: %w", c.name, err)
	}
	h.forget(c)
	return nil
}

func (h *Herder) markStopped(c *conn) {
	h.mu.Lock()
	c.state, c.trace = rpc.StateStopped, ""
	h.mu.Unlock()
}

// lock returns the connector named name with its op lock held.
func (h *Herder) lock(name string) (*conn, error) {
	h.mu.RLock()
	c, ok := h.conns[name]
	closed := h.closed
	h.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	c.op.Lock()
	h.mu.RLock()
	deleted, closed := c.deleted, h.closed
	h.mu.RUnlock()
	if deleted || closed {
		c.op.Unlock()
		if closed {
			return nil, ErrClosed
		}
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return c, nil
}

func (h *Herder) forget(c *conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.deleted = true
	if h.conns[c.name] == c {
		delete(h.conns, c.name)
	}
}

// store writes rec under the connector's last revision and makes it the connector's record.
func (h *Herder) store(ctx context.Context, c *conn, rec record) error {
	h.mu.RLock()
	rev := c.rev
	h.mu.RUnlock()
	newRev, err := h.kv.Update(ctx, c.name, mustJSON(rec), rev)
	if err != nil {
		return fmt.Errorf("storing connector %s: %w", c.name, err)
	}
	h.mu.Lock()
	c.rec, c.rev = rec, newRev
	h.mu.Unlock()
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // a record of strings always marshals
	}
	return b
}

// check validates a name and a config before anything is stored.
func (h *Herder) check(name string, cfg map[string]string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if n, ok := cfg["name"]; ok && n != name {
		return fmt.Errorf("%w: config key name %q differs from the connector's name %q", ErrInvalid, n, name)
	}
	_, err := h.prepare(cfg, connector.Env{})
	return err
}

// prepared is a config checked and read for running.
type prepared struct {
	// cfg is the config with its secret values decrypted: only tasks see it.
	cfg     map[string]string
	plugin  connector.Plugin
	values  connector.Values
	dc      delivery.Config
	ackWait time.Duration
}

// prepare decrypts the secret values of cfg, validates it against the plugin's full spec and builds one sink or
// source with it (constructors find what specs cannot say). Config problems are connector.FieldErrors; no error contains a
// secret value.
func (h *Herder) prepare(cfg map[string]string, env connector.Env) (prepared, error) {
	env.JetStream, env.Names, env.AllowPrivateTargets = h.cfg.JetStream, h.cfg.Names, h.cfg.AllowPrivateTargets
	cfg, secrets, oerrs := h.open(cfg)
	if len(oerrs) > 0 {
		return prepared{}, oerrs
	}
	p, errs := h.cfg.Registry.Validate(cfg, env)
	if len(errs) > 0 {
		return prepared{}, redact(errs, secrets)
	}
	values := p.FullSpec().Values(cfg)
	timeout, err := p.Probe(values, env)
	if err != nil {
		return prepared{}, redact(err, secrets)
	}
	return prepared{cfg: cfg, plugin: p, values: values, dc: delivery.ParseConfig(values), ackWait: delivery.AckWait(timeout)}, nil
}

// apply brings a connector without running tasks to its target state: it ensures the durable consumer (in every
// state, so records routed to a paused or stopped connector wait for it) and, when RUNNING, starts the tasks. On
// failure the connector is FAILED with the error as trace and a *StartError is returned. Called with c.op held.
func (h *Herder) apply(ctx context.Context, c *conn) error {
	h.mu.RLock()
	rec := c.rec
	h.mu.RUnlock()
	fail := func(err error) error {
		h.mu.Lock()
		c.state, c.trace, c.tasks, c.sup = rpc.StateFailed, err.Error(), nil, nil
		h.mu.Unlock()
		return &StartError{Connector: c.name, Err: err}
	}
	pr, err := h.prepare(rec.Config, connector.Env{Connector: c.name})
	if err != nil {
		return fail(err)
	}
	h.mu.Lock()
	c.kind, c.nTasks = pr.plugin.Type, pr.dc.Tasks
	h.mu.Unlock()
	cons, err := h.ensureInput(ctx, pr)
	if err != nil {
		return fail(err)
	}
	var tasks []runner
	if rec.TargetState == rpc.StateRunning {
		for i := range pr.dc.Tasks {
			t, err := h.startTask(ctx, c.name, rec, pr, cons, i)
			if err != nil {
				for _, t := range tasks {
					_ = h.stopTask(ctx, t)
				}
				return fail(err)
			}
			tasks = append(tasks, t)
		}
	}
	h.mu.Lock()
	c.state, c.trace, c.tasks = rec.TargetState, "", tasks
	c.sup = newSups(len(tasks))
	h.mu.Unlock()
	return nil
}

// deliveredFunc reports task i's delivery latencies to Config.ObserveDelivery (nil when not set).
func (h *Herder) deliveredFunc(connector string, i int) func(time.Duration) {
	if h.cfg.ObserveDelivery == nil {
		return nil
	}
	return func(d time.Duration) { h.cfg.ObserveDelivery(connector, i, d) }
}

// ensureInput ensures the durable consumer a sink reads (nil for a source).
func (h *Herder) ensureInput(ctx context.Context, pr prepared) (jetstream.Consumer, error) {
	if pr.plugin.Type == connector.TypeSource {
		return nil, nil
	}
	return delivery.EnsureConsumer(ctx, h.cfg.JetStream, pr.dc, pr.ackWait)
}

// startTask starts task i of a connector: a sink task on cons, or a source task.
func (h *Herder) startTask(ctx context.Context, name string, rec record, pr prepared, cons jetstream.Consumer, i int) (runner, error) {
	log := h.log.With("connector", name, "task", i)
	env := connector.Env{JetStream: h.cfg.JetStream, Names: h.cfg.Names, Logger: log,
		AllowPrivateTargets: h.cfg.AllowPrivateTargets, Connector: name, Task: i, Tasks: pr.dc.Tasks}
	// Each task compiles its own transforms, once; a config that passed prepare builds them.
	transforms, terrs := h.cfg.Registry.Transforms(pr.cfg, env)
	if len(terrs) > 0 {
		return nil, fmt.Errorf("starting task %d: %w", i, h.redact(terrs, pr.cfg))
	}
	if pr.plugin.Type == connector.TypeSource {
		return h.startSourceTask(ctx, name, pr, env, transforms)
	}
	sink, err := pr.plugin.NewSink(pr.values, env)
	var t *delivery.Task
	if err == nil {
		t, err = delivery.Start(ctx, delivery.TaskConfig{
			Consumer: cons, Sink: sink, Handler: pr.dc.ChainDLQ(h.cfg.JetStream, name, sink, transforms...), AckWait: pr.ackWait, Logger: log,
			Delivered: h.deliveredFunc(name, i),
		})
	}
	if err != nil {
		return nil, fmt.Errorf("starting task %d: %w", i, h.redact(err, pr.cfg))
	}
	return t, nil
}

// stopTasks stops the running tasks of a connector, in parallel. Called with c.op held.
func (h *Herder) stopTasks(ctx context.Context, c *conn) {
	h.mu.Lock()
	tasks := c.tasks
	c.tasks, c.sup = nil, nil
	if c.state == rpc.StateRunning {
		c.state = rpc.StateUnassigned
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range tasks {
		wg.Go(func() {
			if err := h.stopTask(ctx, t); err != nil {
				h.log.Warn("closing a task's sink or source", "connector", c.name, "err", err)
			}
		})
	}
	wg.Wait()
}

// opContext detaches a change from its caller (a REST client that goes away must not leave a connector half
// changed) and bounds it.
func (h *Herder) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), h.cfg.StopTimeout+30*time.Second)
}

// stopTask stops t within StopTimeout or ctx, whichever ends first.
func (h *Herder) stopTask(ctx context.Context, t runner) error {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.StopTimeout)
	defer cancel()
	return t.Stop(ctx)
}
