// Package herder manages the connectors of a cluster of workers. Every worker runs one herder; they share the
// installation's JetStream KV buckets:
//
//   - connectors: the config, target state and restart requests of every connector (any worker changes them, on
//     behalf of any REST request, compare-and-set on the key's revision);
//   - members, leases (worker/cluster): the live workers, and which worker runs each task;
//   - status, tasks: each task's state as written by its owner, and task configs;
//   - offsets: the offsets of source connectors.
//
// Every worker watches the connectors, computes the same assignment of tasks to the live workers
// (cluster.Assign), takes the lease of each task assigned to it before starting it, renews its leases, stops a
// task on its own when its lease's local deadline passes, and hands its tasks over when it leaves. A change
// answers only once the tasks run the new configuration, wherever they run.
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/cluster"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/egress"
)

// Version is the version of the worker runtime reported by GET /.
const Version = "0.2.0"

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
	// ErrConflict is returned when a connector changed under a request too often to apply it.
	ErrConflict = errors.New("the connector was changed concurrently; try again")
)

// StartError is returned by a change whose config was stored but whose connector or tasks did not start; the
// status shows the same trace.
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
	// LeaseJetStream, when set, is where the worker's lease is renewed and its membership heartbeat written: a
	// JetStream on a connection of its own (see worker.Config.LeaseNATS). Default: JetStream.
	LeaseJetStream jetstream.JetStream
	Names          stream.Names
	WorkerID       string
	// URL is the worker's REST URL, announced to the other members.
	URL      string
	Registry *connector.Registry
	Logger   *slog.Logger
	// PluginLogger, when set, is the logger of the tasks of a plugin (by its connector.class); Logger otherwise.
	PluginLogger func(class string) *slog.Logger
	// Egress is the egress policy passed to plugins (connector.Env).
	Egress egress.Config
	// Replicas of the KV buckets (default 1).
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
	// ObserveDelivery, when set, is asked once per task started for what receives the put-to-delivery latency of
	// every record the task writes (nil: nothing).
	ObserveDelivery func(connector string, task int) func(latency time.Duration)
	// ForgetConnector, when set, is told the name of every connector this worker's cache of configs no longer
	// holds (deleted, here or by another worker), so that what was kept per connector can go.
	ForgetConnector func(name string)
	// Tracer, when set, is given to every task (delivery.TaskConfig.Tracer, SourceTaskConfig.Tracer).
	Tracer trace.Tracer
	// MasterKey (32 bytes) encrypts the secret values of configs (rpc.EncryptSecret) before they are stored or
	// returned, and decrypts them when a task starts. Without it, a config with a plaintext secret is refused.
	MasterKey []byte
	// Heartbeat, MemberExpiry, LeaseTTL and LeaseLocal tune membership and leases (defaults 500ms, 2s, 2.5s,
	// 2s; see worker/cluster).
	Heartbeat    time.Duration
	MemberExpiry time.Duration
	LeaseTTL     time.Duration
	LeaseLocal   time.Duration
	// SoleWorker: no other worker can reach the NATS server, so this one may change the cluster's lease TTL
	// (cluster.LeaseConfig.Sole).
	SoleWorker bool
}

// record is the value stored in KV under the connector's name.
type record struct {
	Name        string            `json:"name"`
	Config      map[string]string `json:"config"`
	TargetState string            `json:"target_state"`
	// Restarts asks the owners of tasks to restart them: task i restarts when Restarts[i] grows.
	Restarts map[int]uint64 `json:"restarts,omitempty"`
}

// entry is a connector as the herder last read or wrote it.
type entry struct {
	rec record
	rev uint64
	// tasks is tasksOf(rec.Config), read once.
	tasks int
}

func newEntry(rec record, rev uint64) entry {
	return entry{rec: rec, rev: rev, tasks: tasksOf(rec.Config)}
}

// tasksOf returns the number of tasks of a config (tasks.max, default 1; 1 when unreadable).
func tasksOf(cfg map[string]string) int {
	n, err := strconv.Atoi(cfg[connector.KeyTasksMax])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// Herder manages connectors. Methods are safe for concurrent use.
type Herder struct {
	cfg Config
	log *slog.Logger

	kv       jetstream.KeyValue // connectors
	offsets  jetstream.KeyValue // source offsets
	state    *stateKV           // status and task configs
	topics   jetstream.KeyValue // active topics
	attempts *delivery.Attempts // failed attempts of records waiting for a retry
	members  *cluster.Membership
	leases   *cluster.Leases
	// wakes wakes the parked tasks (set by Start, stopped by Close).
	wakes *delivery.Wakes
	// gate bounds how many of the worker's tasks park or wake at the same time.
	gate delivery.Gate
	// waking bounds how many of the worker's woken tasks handle their first record at the same time.
	waking delivery.Gate

	// used remembers when this worker last recorded that a connector used a subject (topicsRemembered).
	used sync.Map

	mu      sync.RWMutex
	records map[string]entry // every connector, from the watcher and this worker's own writes
	live    []cluster.Member // the live members, as last read
	local   map[rpc.TaskID]*localTask
	// taking holds the tasks a step is claiming (until they are local or the claim failed).
	taking map[rpc.TaskID]bool
	// fresh holds the connectors stored since the last full round (see takeFresh).
	fresh map[string]bool
	// The last full round's assignment: its members (sorted), the owner of every task and each member's load, and
	// the tasks takeFresh placed since (see takeFresh).
	assignedTo []string
	assigned   map[rpc.TaskID]string
	load       map[string]int
	placed     map[rpc.TaskID]string
	lease      *cluster.Lease // this worker's lease, nil while it has none
	changes    uint64         // counts the changes of records and of local tasks: a round must look again
	// The runtime loop's own: what its last full round saw, when it ran (fullAt and fullTook are written under mu),
	// and whether it must run again.
	swept  time.Time // when the loop last swept the claims of dead workers
	seen   roundSeen
	fullAt time.Time
	// fullTook is how long the last full round took (see fullRoundDue), without the steps it started.
	fullTook time.Duration
	// steps are the runners of the takes and restarts waiting in queued (step), at most startsAtOnce of them.
	steps   sync.WaitGroup
	stepsMu sync.Mutex
	queued  []func()
	runners int
	again   atomic.Bool
	// lightAt is when the loop next looks at the local tasks in a round with nothing new to see, unless a task
	// failed or a step ended meanwhile (look).
	lightAt time.Time
	look    atomic.Bool
	// lookedAt is when a round last looked at the local tasks because of look (see lookGap); lookLater pokes the
	// loop when the gap after it ends, for a look asked for within it. Only the loop uses them.
	lookedAt  time.Time
	lookLater *time.Timer
	closed    bool
	started   bool

	// lists keeps the last encoding of the listings of every connector (see ExpandedJSON).
	lists listings
	// stampMu keeps two listing stamps apart: they keep the digests of parked runners (localTask.stamped).
	stampMu sync.Mutex

	// suspects are the local tasks the supervisor reads: those that reported a failure (taskFailed) or did not
	// start, until it sees them running again. Taken after mu when both are held; a task reports without holding
	// either.
	suspectsMu sync.Mutex
	suspects   map[rpc.TaskID]bool

	// ops serializes the changes made through this worker, per connector.
	opsMu sync.Mutex
	ops   map[string]*sync.Mutex

	wake      chan struct{} // pokes the runtime loop
	quit      chan struct{}
	renewQuit chan struct{} // closed when Close handed every task over
	// leaseTaken tells the watchdog that the renewal loop took a new lease.
	leaseTaken chan struct{}
	loopDone   chan struct{}
	closeOnce  sync.Once
	renewOnce  sync.Once
}

// New returns a herder; Start joins the cluster and runs its share of the tasks.
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
	if cfg.LeaseJetStream == nil {
		cfg.LeaseJetStream = cfg.JetStream
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
	return &Herder{cfg: cfg, log: log, records: map[string]entry{}, local: map[rpc.TaskID]*localTask{},
		taking: map[rpc.TaskID]bool{}, fresh: map[string]bool{}, placed: map[rpc.TaskID]string{},
		ops: map[string]*sync.Mutex{}, wake: make(chan struct{}, 1), quit: make(chan struct{}), renewQuit: make(chan struct{}),
		leaseTaken: make(chan struct{}, 1),
		gate:       delivery.NewGate(delivery.DefaultGate), waking: delivery.NewGate(delivery.DefaultWaking)}, nil
}

// SetURL sets the REST URL the worker announces to the other members; call it before Start.
func (h *Herder) SetURL(url string) { h.cfg.URL = url }

// Start ensures the KV buckets, reads every connector, joins the cluster and starts the runtime loop, which
// takes this worker's share of the tasks. Only failures to reach the buckets are errors.
func (h *Herder) Start(ctx context.Context) error {
	bucket := func(purpose, doc string) (jetstream.KeyValue, error) {
		kv, err := h.cfg.JetStream.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: h.cfg.Names.Bucket(purpose), Description: doc, History: 1, Storage: jetstream.FileStorage,
			Replicas: h.cfg.Replicas,
		})
		if err != nil {
			return nil, fmt.Errorf("herder: ensuring KV bucket %s: %w", h.cfg.Names.Bucket(purpose), err)
		}
		return kv, nil
	}
	kv, err := bucket(BucketPurpose, "connector configs and target states")
	if err != nil {
		return err
	}
	offsets, err := bucket(delivery.OffsetsBucketPurpose, "offsets of source connectors")
	if err != nil {
		return err
	}
	state, err := ensureStateKV(ctx, h.cfg.JetStream, h.cfg.Names.Bucket, h.cfg.Replicas)
	if err != nil {
		return fmt.Errorf("herder: ensuring the KV buckets of status and task configs: %w", err)
	}
	leases, err := cluster.OpenLeases(ctx, cluster.LeaseConfig{JetStream: h.cfg.JetStream,
		LeaseJetStream: h.cfg.LeaseJetStream, Names: h.cfg.Names,
		WorkerID: h.cfg.WorkerID, TTL: h.cfg.LeaseTTL, Local: h.cfg.LeaseLocal, Replicas: h.cfg.Replicas,
		Sole: h.cfg.SoleWorker})
	if err != nil {
		return fmt.Errorf("herder: %w", err)
	}
	topics, err := bucket(TopicsBucketPurpose, "the subjects each connector read or wrote (active topics)")
	if err != nil {
		return err
	}
	attempts, err := delivery.OpenAttempts(ctx, h.cfg.JetStream, h.cfg.Names.Bucket(delivery.AttemptsBucketPurpose), h.cfg.Replicas)
	if err != nil {
		return fmt.Errorf("herder: %w", err)
	}
	h.mu.Lock()
	h.kv, h.offsets, h.state, h.leases, h.topics, h.attempts = kv, offsets, state, leases, topics, attempts
	h.wakes = delivery.WatchWakes(h.cfg.JetStream.Conn())
	h.mu.Unlock()
	watcher, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("herder: reading connectors: %w", err)
	}
	// A watcher hands every current entry, then nil; later updates keep the cache current.
	for loaded := false; !loaded; {
		select {
		case e := <-watcher.Updates():
			if e == nil {
				loaded = true
			} else {
				h.observe(e)
			}
		case <-ctx.Done():
			_ = watcher.Stop()
			return fmt.Errorf("herder: reading connectors: %w", ctx.Err())
		}
	}
	h.migrateSecrets(ctx)
	members, err := cluster.Join(ctx, cluster.MembershipConfig{JetStream: h.cfg.LeaseJetStream, Names: h.cfg.Names,
		Self:      cluster.Member{ID: h.cfg.WorkerID, URL: h.cfg.URL, Version: Version, Started: time.Now().UTC()},
		Heartbeat: h.cfg.Heartbeat, Expiry: h.cfg.MemberExpiry, Replicas: h.cfg.Replicas, Logger: h.log})
	if err != nil {
		_ = watcher.Stop()
		return fmt.Errorf("herder: joining the cluster: %w", err)
	}
	lease, err := h.acquireLease(ctx)
	if err != nil {
		_ = watcher.Stop()
		_ = members.Leave(context.WithoutCancel(ctx))
		return fmt.Errorf("herder: acquiring the worker's lease: %w", err)
	}
	h.mu.Lock()
	h.members, h.started, h.lease = members, true, lease
	h.loopDone = make(chan struct{})
	h.mu.Unlock()

	go h.watch(watcher)
	go h.renew()
	// The first round and its steps run before Start returns: the tasks this worker takes are running (or FAILED),
	// with their statuses written, then.
	h.reconcile()
	h.steps.Wait()
	h.writeStatuses(ctx)
	go h.loop(h.loopDone)
	return nil
}

// acquireLease takes the worker's first lease. The key of an earlier run that was just released or expired may be
// in flux: it retries until ctx ends.
func (h *Herder) acquireLease(ctx context.Context) (*cluster.Lease, error) {
	for {
		lease, err := h.leases.Acquire(ctx)
		if err == nil || !errors.Is(err, cluster.ErrLeaseHeld) {
			return lease, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// watch applies the updates of the connectors bucket to the cache until Close.
func (h *Herder) watch(w jetstream.KeyWatcher) {
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-h.quit:
			return
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e != nil {
				h.observe(e)
				h.poke()
			}
		}
	}
}

// observe takes a KV entry of the connectors bucket into the cache, unless the cache already holds a later
// revision (this worker's own write).
func (h *Herder) observe(e jetstream.KeyValueEntry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := e.Key()
	if cur, ok := h.records[k]; ok && cur.rev >= e.Revision() {
		return
	}
	if e.Operation() != jetstream.KeyValuePut {
		h.dropRecord(k)
		return
	}
	var rec record
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		h.log.Error("stored connector cannot be read; ignored", "connector", k, "err", err)
		return
	}
	rec.Name = k
	h.records[k] = newEntry(rec, e.Revision())
	h.fresh[k] = true
	h.changes++
}

// taskFailed is called by local task id when it failed: the loop writes its status and supervises it at once.
func (h *Herder) taskFailed(id rpc.TaskID) {
	h.suspect(id)
	h.look.Store(true)
	h.poke()
}

// failedFunc is the Failed callback of local task i of connector name.
func (h *Herder) failedFunc(name string, i int) func() {
	id := rpc.TaskID{Connector: name, Task: i}
	return func() { h.taskFailed(id) }
}

// suspect has the supervisor read task id at its next look.
func (h *Herder) suspect(id rpc.TaskID) {
	h.suspectsMu.Lock()
	defer h.suspectsMu.Unlock()
	if h.suspects == nil {
		h.suspects = map[rpc.TaskID]bool{}
	}
	h.suspects[id] = true
}

// poke wakes the runtime loop.
func (h *Herder) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Close leaves the cluster and hands this worker's tasks over: it stops them (in parallel, each within
// StopTimeout or ctx), releases their claims, then the worker's lease, so that other workers take them at once.
// Later changes fail with ErrClosed.
func (h *Herder) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	done, members := h.loopDone, h.members
	h.mu.Unlock()
	h.closeOnce.Do(func() { close(h.quit) })
	if done != nil {
		<-done
	}
	h.steps.Wait() // a task being started is local once its step ends, and handed over below
	if members != nil {
		if err := members.Leave(ctx); err != nil {
			h.log.Warn("leaving the cluster", "err", err)
		}
	}
	defer func() {
		h.mu.RLock()
		state, leases, wakes := h.state, h.leases, h.wakes
		h.mu.RUnlock()
		if state != nil {
			state.close()
		}
		if leases != nil {
			leases.Close()
		}
		if wakes != nil {
			wakes.Stop()
		}
	}()
	h.mu.Lock()
	local := slices.Collect(maps.Values(h.local))
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, lt := range local {
		wg.Go(func() { h.release(ctx, lt, rpc.StateUnassigned) })
	}
	wg.Wait()
	h.renewOnce.Do(func() { close(h.renewQuit) })
	h.mu.Lock()
	lease, leases := h.lease, h.leases
	h.lease = nil
	h.mu.Unlock()
	if lease != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
		defer cancel()
		if err := leases.Release(rctx, lease); err != nil {
			h.log.Warn("releasing the worker's lease", "err", err)
		}
	}
	return nil
}

// ServerInfo describes the worker.
func (h *Herder) ServerInfo() rpc.ServerInfo {
	return rpc.ServerInfo{Version: Version, ClusterID: h.cfg.Names.Cluster, WorkerID: h.cfg.WorkerID}
}

// PluginTypeTransformation is the type of a transform plugin in GET /connector-plugins?connectorsOnly=false, as
// Kafka Connect names single message transforms.
const PluginTypeTransformation = "transformation"

// Plugins lists the connector plugins of the registry and, unless connectorsOnly, its transform plugins too (Kafka
// Connect's GET /connector-plugins?connectorsOnly=false; there are no predicates nor converters to list).
func (h *Herder) Plugins(connectorsOnly bool) []rpc.PluginInfo {
	out := []rpc.PluginInfo{}
	for _, p := range h.cfg.Registry.Plugins() {
		out = append(out, rpc.PluginInfo{Class: p.Name, Type: string(p.Type), Version: p.Version})
	}
	if !connectorsOnly {
		for _, p := range h.cfg.Registry.TransformPlugins() {
			out = append(out, rpc.PluginInfo{Class: p.Name, Type: PluginTypeTransformation, Version: p.Version})
		}
	}
	return out
}

// Connectors returns the names of every connector, sorted.
func (h *Herder) Connectors() []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return append([]string{}, slices.Sorted(maps.Keys(h.records))...) // [] when there are none, never null
}

func (h *Herder) get(name string) (entry, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	e, ok := h.records[name]
	if !ok {
		return entry{}, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return e, nil
}

// Info returns the config and tasks of a connector; ErrNotFound when it does not exist.
func (h *Herder) Info(name string) (rpc.ConnectorInfo, error) {
	e, err := h.get(name)
	if err != nil {
		return rpc.ConnectorInfo{}, err
	}
	return h.info(e), nil
}

func (h *Herder) info(e entry) rpc.ConnectorInfo {
	info := rpc.ConnectorInfo{Name: e.rec.Name, Config: maps.Clone(e.rec.Config), Tasks: []rpc.TaskID{}, Type: h.typeOf(e.rec.Config)}
	if e.rec.TargetState == rpc.StateRunning || e.rec.TargetState == rpc.StatePaused {
		for i := range tasksOf(e.rec.Config) {
			info.Tasks = append(info.Tasks, rpc.TaskID{Connector: e.rec.Name, Task: i})
		}
	}
	return info
}

func (h *Herder) typeOf(cfg map[string]string) string {
	if p, ok := h.cfg.Registry.Lookup(cfg[connector.KeyClass]); ok {
		return string(p.Type)
	}
	return rpc.TypeSink
}

// Config returns the config of a connector; ErrNotFound when it does not exist.
func (h *Herder) Config(name string) (map[string]string, error) {
	info, err := h.Info(name)
	return info.Config, err
}

// Status returns the state of a connector and its tasks, wherever they run; ErrNotFound when it does not exist.
func (h *Herder) Status(name string) (rpc.ConnectorStatus, error) {
	e, err := h.get(name)
	if err != nil {
		return rpc.ConnectorStatus{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stored, err := h.state.read(ctx, name, tasksOf(e.rec.Config))
	if err != nil {
		h.log.Warn("reading the status of a connector", "connector", name, "err", err)
	}
	return h.status(e, stored, h.liveIDs()), nil
}

// status combines a connector's record with the statuses its tasks' owners stored, of which those of the live
// workers (liveIDs) count.
func (h *Herder) status(e entry, stored connectorState, live map[string]bool) rpc.ConnectorStatus {
	st := rpc.ConnectorStatus{Name: e.rec.Name, Tasks: []rpc.TaskState{}, Type: h.typeOf(e.rec.Config),
		Connector: rpc.ConnectorState{State: e.rec.TargetState, WorkerID: h.cfg.WorkerID}}
	// A connector is FAILED when its config could not be applied at its last revision (by the worker that
	// stored it, or by a task's owner that could not prepare it).
	if c := stored.connector; c != nil && c.Rev == e.rev && c.State == rpc.StateFailed {
		st.Connector.State, st.Connector.Trace, st.Connector.WorkerID = c.State, c.Trace, c.WorkerID
	}
	switch e.rec.TargetState {
	case rpc.StateRunning:
		for i := range tasksOf(e.rec.Config) {
			ts := rpc.TaskState{ID: i, State: rpc.StateUnassigned, Totals: stored.tasks[i].Totals}
			if own, ok := h.localStatus(rpc.TaskID{Connector: e.rec.Name, Task: i}); ok {
				ts = own
				if ts.Totals == nil { // taken a moment ago: its totals so far are not read yet
					ts.Totals = stored.tasks[i].Totals
				}
			} else if s, ok := stored.tasks[i]; ok && s.State != rpc.StateUnassigned && live[s.WorkerID] {
				ts = s.TaskState
				ts.ID = i
			}
			st.Tasks = append(st.Tasks, ts)
		}
	case rpc.StatePaused:
		for i := range tasksOf(e.rec.Config) {
			st.Tasks = append(st.Tasks, rpc.TaskState{ID: i, State: rpc.StatePaused, WorkerID: h.cfg.WorkerID,
				Totals: stored.tasks[i].Totals})
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
func (h *Herder) Expanded(info, status bool, prefix string) map[string]rpc.ConnectorExpanded {
	h.mu.RLock()
	entries := make(map[string]entry)
	for name, e := range h.records {
		if strings.HasPrefix(name, prefix) {
			entries[name] = e
		}
	}
	h.mu.RUnlock()
	var all map[string]connectorState
	if status {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		if all, err = h.state.readAll(ctx, prefix); err != nil {
			h.log.Warn("reading the status of connectors", "err", err)
		}
	}
	out := make(map[string]rpc.ConnectorExpanded, len(entries))
	var live map[string]bool
	if status {
		live = h.liveIDs()
	}
	for name, e := range entries {
		var x rpc.ConnectorExpanded
		if info {
			i := h.info(e)
			x.Info = &i
		}
		if status {
			s := h.status(e, all[name], live)
			x.Status = &s
		}
		out[name] = x
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

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // records and statuses of strings and numbers always marshal
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
	_, err := h.prepare(cfg, connector.Env{Connector: name})
	return err
}

// prepared is a config checked and read for running.
type prepared struct {
	// cfg is the config with its secret values decrypted: only tasks see it.
	cfg    map[string]string
	plugin connector.Plugin
	values connector.Values
	dc     delivery.Config
}

// prepare decrypts the secret values of cfg, validates it against the plugin's full spec and builds one sink or
// source with it (constructors find what specs cannot say). Config problems are connector.FieldErrors; no error
// contains a secret value.
func (h *Herder) prepare(cfg map[string]string, env connector.Env) (prepared, error) {
	env.JetStream, env.Names, env.Egress = h.cfg.JetStream, h.cfg.Names, h.cfg.Egress
	cfg, secrets, oerrs := h.open(env.Connector, cfg)
	if len(oerrs) > 0 {
		return prepared{}, oerrs
	}
	p, errs := h.cfg.Registry.Validate(cfg, env)
	if len(errs) > 0 {
		return prepared{}, redact(errs, secrets)
	}
	values := p.FullSpec().Values(cfg)
	if _, err := p.Probe(values, env); err != nil {
		return prepared{}, redact(err, secrets)
	}
	return prepared{cfg: cfg, plugin: p, values: values, dc: delivery.ParseConfig(values)}, nil
}

// ensureInput ensures the durable consumer a sink reads (nil for a source).
func (h *Herder) ensureInput(ctx context.Context, pr prepared) (jetstream.Consumer, error) {
	if pr.plugin.Type == connector.TypeSource {
		return nil, nil
	}
	return delivery.EnsureConsumer(ctx, h.cfg.JetStream, pr.dc, delivery.AckWait)
}

// deliveredFunc is what receives task i's delivery latencies, from Config.ObserveDelivery (nil when not set).
func (h *Herder) deliveredFunc(connector string, i int) func(time.Duration) {
	if h.cfg.ObserveDelivery == nil {
		return nil
	}
	return h.cfg.ObserveDelivery(connector, i)
}

// dropRecord removes name's record from the cache, with h.mu held, and tells Config.ForgetConnector when there was
// one (a watch replays the tombstones of connectors deleted long ago: nothing of them is kept).
func (h *Herder) dropRecord(name string) {
	_, held := h.records[name]
	delete(h.records, name)
	h.changes++
	if held && h.cfg.ForgetConnector != nil {
		h.cfg.ForgetConnector(name)
	}
}

// startTask starts task i of a connector: a sink task reading its consumer, or a source task.
func (h *Herder) startTask(ctx context.Context, name string, pr prepared, i int) (runner, error) {
	base := h.log
	if h.cfg.PluginLogger != nil {
		base = h.cfg.PluginLogger(pr.plugin.Name)
	}
	log := base.With("connector", name, "task", i)
	env := connector.Env{JetStream: h.cfg.JetStream, Names: h.cfg.Names, Logger: log,
		Egress: h.cfg.Egress, Connector: name, Task: i, Tasks: pr.dc.Tasks}
	// Each task compiles its own transforms, once; a config that passed prepare builds them.
	transforms, terrs := h.cfg.Registry.Transforms(pr.cfg, env)
	if len(terrs) > 0 {
		return nil, fmt.Errorf("starting task %d: %w", i, h.redact(terrs, pr.cfg))
	}
	if pr.plugin.Type == connector.TypeSource {
		return h.startSourceTask(ctx, name, pr, env, transforms)
	}
	cons, err := h.ensureInput(ctx, pr)
	if err != nil {
		return nil, fmt.Errorf("starting task %d: %w", i, err)
	}
	sink, err := pr.plugin.NewSink(pr.values, env)
	var t *delivery.Task
	if err == nil {
		t, err = delivery.Start(ctx, delivery.TaskConfig{
			Consumer: cons, Sink: sink, Handler: pr.dc.ChainDLQ(h.cfg.JetStream, name, sink, transforms...),
			AckWait: delivery.AckWait, Attempts: h.attempts, Logger: log, Conn: h.cfg.JetStream.Conn(),
			Wakes: h.wakes, Gate: h.gate, Waking: h.waking,
			Delivered: h.deliveredFunc(name, i), Used: h.topicUsed(name), Failed: h.failedFunc(name, i),
			Redact: h.redactor(pr.cfg), EventLog: pr.dc.EventLog(h.cfg.JetStream, name, log),
			Tracer: h.cfg.Tracer, SpanName: spanName(sink, name),
		})
	}
	if err != nil {
		return nil, fmt.Errorf("starting task %d: %w", i, h.redact(err, pr.cfg))
	}
	return t, nil
}

// opContext detaches a change from its caller (a REST client that goes away must not leave a connector half
// changed) and bounds it.
func (h *Herder) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), h.cfg.StopTimeout+30*time.Second)
}

// liveIDs returns the ids of the live members as last read.
func (h *Herder) liveIDs() map[string]bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make(map[string]bool, len(h.live))
	for _, m := range h.live {
		out[m.ID] = true
	}
	return out
}

// spanName names the span of each attempt of a sink task: "<verb> <connector>", the verb the sink gives
// (connector.SpanNamer: the router's is "route"), else "deliver".
func spanName(s connector.Sink, connectorName string) string {
	verb := "deliver"
	if n, ok := s.(connector.SpanNamer); ok {
		verb = n.SpanName()
	}
	return verb + " " + connectorName
}
