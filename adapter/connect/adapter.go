// Package connect is the runtime adapter: it turns the logical channels declared in the control plane (buses,
// rules, targets) into connectors of the worker runtime, applies them through the worker's REST API, keeps the
// two in step (reconciliation) and reads runtime state back for the API.
package connect

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/eventbridge-go/eventbridge/domain/archive"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/health"
	"github.com/eventbridge-go/eventbridge/domain/history"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/runtime"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
)

// Streams is what the adapter needs of the event store beyond the domain's port.
type Streams interface {
	// LastSequence is the sequence of the last message stored in the bus's stream.
	LastSequence(ctx context.Context, busID string) (uint64, error)
	// PurgeRule removes the events routed to a rule.
	PurgeRule(ctx context.Context, busID, ruleID string) error
}

// Physical names the adapter writes into connector configs; worker/jetstream owns them, cmd wires them in.
type Physical interface {
	BusStream(busID string) string
	BusIn(busID string) string
	RuleSubject(busID, ruleID string) string
	RedriveSubject(busID, ruleID, targetID string) string
	RouterConsumer(busID string) string
	TargetConsumer(ruleID, targetID string) string
	// DLQSubject is the subject of an account's dead letters.
	DLQSubject(accountID string) string
	// LogSubject is the subject of a bus's log records.
	LogSubject(accountID, busID string) string
	// EventTypesSubject is the subject of the reports of the event types a bus's router sees.
	EventTypesSubject(busID string) string
	// ArchiveStream and ArchiveSubject are where an archive's events are stored.
	ArchiveStream(accountID, archiveID string) string
	ArchiveSubject(accountID, archiveID string) string
}

// Archives lists the archives of a bus, each a pseudo-rule of its router.
type Archives interface {
	ListByBus(ctx context.Context, busID string) ([]*archive.Archive, error)
}

// Keys of the bus log in the router's and the targets' connectors (worker/connector's eventlog.*).
const (
	keyLogTopic  = "eventlog.topic.name"
	keyLogLevel  = "eventlog.level"
	keyLogDetail = "eventlog.include.detail"
)

// withLog adds the keys of the bus's log to a connector's config when the bus logs anything; a bus that does not
// log has none, so its connectors' configs are those of a version without the log.
func (a *Adapter) withLog(b *bus.Bus, cfg map[string]string) map[string]string {
	if l := b.Log(); l.On() {
		cfg[keyLogTopic] = a.cfg.Physical.LogSubject(b.AccountID(), b.ID())
		cfg[keyLogLevel] = l.Level
		cfg[keyLogDetail] = l.IncludeDetail
	}
	return cfg
}

// Config wires an Adapter.
type Config struct {
	Runtime  *rpc.Client
	Buses    bus.Repository
	Rules    rule.Repository
	Targets  target.Repository
	Streams  Streams
	Physical Physical
	// APIDestinations and Connections resolve api-destination targets; nil leaves them unapplied.
	APIDestinations APIDestinations
	Connections     Connections
	// Secrets opens and seals connection secrets under the master key (secret invocation headers are sealed
	// again as one value); nil refuses connections with secret headers.
	Secrets *Sealer
	Logger  *slog.Logger
	// Interval between periodic reconciliations (default 30s).
	Interval time.Duration
	// FullPassEvery makes every FullPassEvery-th periodic reconciliation a full pass, one that syncs every bus,
	// even when nothing it can see changed (default 10; 1: every pass is full). See Reconcile.
	FullPassEvery int
	// States holds the states operators set on connectors (paused, stopped), which the adapter keeps; nil runs
	// every connector.
	States runtime.DesiredStates
	// Lease, when set, makes periodic reconciliation (Reconcile, Run) happen only while this replica holds it,
	// so one control-plane replica at a time reconciles. Changes made through the API are applied by the replica
	// that served them either way.
	Lease Lease
	// Sources are the sources of buses, each run as a source connector; nil runs none.
	Sources source.Repository
	// Cluster is the installation's cluster id, which the secrets of connector configs are bound to (with the
	// connector and the key); empty takes Physical's when it is stream.Names.
	Cluster string
	// Passes, when set, is told the outcome of every periodic reconciliation this replica ran (for metrics).
	Passes func(err error)
	// Health holds the thresholds with which reconciliation judges the health of targets and sources, to log
	// its changes (zero fields: the defaults).
	Health health.Rules
	// EventTypesInterval is how often routers report the event types they routed (zero: the router's default,
	// 5 s).
	EventTypesInterval time.Duration
	// Archives are the archives of buses, each a pseudo-rule of its bus's router; nil archives nothing.
	Archives Archives
	// Replays are the replays of buses, each a source connector of its bus while it runs; nil runs none.
	Replays Replays
	// AWSRegion is the region of the Amazon EventBridge API (--aws-region): the region of the envelope and of the
	// rule ARNs that targets in AWS's format receive; empty is us-east-1.
	AWSRegion string
}

// cluster is the cluster id the secrets of connector configs are bound to.
func (a *Adapter) cluster() string {
	if a.cfg.Cluster != "" {
		return a.cfg.Cluster
	}
	if n, ok := a.cfg.Physical.(stream.Names); ok {
		return n.Cluster
	}
	return ""
}

// Lease is a lease shared by the control-plane replicas (persistence.Lease is one).
type Lease interface {
	// Acquire takes or renews the lease and reports whether this replica holds it now.
	Acquire(ctx context.Context) (bool, error)
}

// Adapter keeps the worker runtime in step with the declared state. Safe for concurrent use; the changes of one
// bus are applied one at a time, those of different buses side by side: a change reads and writes only its bus's
// connectors (GET /connectors?prefix=eb.<account>.<bus>.), so creating a bus does not wait on the others.
type Adapter struct {
	cfg Config

	mu    sync.Mutex
	buses map[string]*busLock // by busPrefix; an entry lives while a call holds or waits for it
	// changes counts the changes applied to single buses; changed holds, by bus prefix, the count after the last
	// one, so ReconcileAll knows which buses changed after its listing of every connector.
	changes uint64
	changed map[string]uint64
	// held holds, by bus prefix, the digest of what the runtime holds of the bus as its last successful sync left
	// it (heldDigest); a bus whose sync failed, or that a sync has not reached, has none.
	held map[string][sha256.Size]byte
	// reconcileMu keeps two ReconcileAll apart; the last complete pass is theirs.
	reconcileMu sync.Mutex
	last        passMark
	// synced holds, by bus id, the stamps of the bus's rows (busStamps) read before its last successful sync by a
	// full pass (guarded by reconcileMu).
	synced map[string]string
	// health is the health of each target and source connector at the last pass (guarded by reconcileMu).
	health map[string]string
	// listed is the digest of the connectors of the last pass's listing, by the listing's stamp (guarded by
	// reconcileMu): while the runtime answers the same listing, a pass does not digest thousands of configs again.
	listed struct {
		stamp  uint64
		digest [sha256.Size]byte
		ok     bool
	}
	// read is every bus as the last pass read it, with the stamp of the buses read before (guarded by
	// reconcileMu): while the stamp stays, a pass does not read thousands of buses again.
	read struct {
		stamp string
		all   []*bus.Bus
		ok    bool
	}
	// ruleNames holds the name of every rule id in a router's table or totals, "" for one that no table names (a
	// deleted rule): a rule's name never changes, so Counters reads statuses only and lists the routers' configs
	// only when it meets an id it has not seen; reconciliation renews it (learnRuleNames; guarded by namesMu).
	namesMu   sync.Mutex
	ruleNames map[string]string
	// namesFrom is the stamp of the listing ruleNames was learned from (when namesKnown), and namesGen counts the
	// times ruleNames was set.
	namesFrom  uint64
	namesKnown bool
	namesGen   uint64
	// counted is what Counters last answered, with the stamp of the listing of statuses and the namesGen it was
	// computed from (guarded by namesMu): the history samples every 10 s, and while nothing moves the answer is
	// the same.
	counted struct {
		stamp, names uint64
		out          map[string][]history.Counters
	}
}

// passMark is what a complete ReconcileAll saw: the fingerprint of the runtime's connectors, the operators' states
// and the buses, the count of changes applied through this adapter, and the stamps of the connections and API
// destinations; and how many periodic passes ran since the last full one.
type passMark struct {
	fingerprint [sha256.Size]byte
	changes     uint64
	stamps      string
	sinceFull   int
	complete    bool
	// checkedFulls counts the full passes since the last that synced every bus.
	checkedFulls int
}

// syncAllEvery makes every syncAllEvery-th full pass sync every bus, whatever the stamps of their rows say (an hour
// at the default interval and FullPassEvery). See Reconcile.
const syncAllEvery = 12

// BusStamper is a repository of the rows of buses (rules, targets, sources, archives, replays) that tells, for
// every bus at once and cheaply, which buses' rows changed: by bus id, a stamp that changes with every create,
// update and delete of one of the bus's rows (persistence's repositories of those rows are).
type BusStamper interface {
	StampsByBus(ctx context.Context) (map[string]string, error)
}

// busStamps reads the stamps by bus of every repository a sync of a bus reads; nil when one of them cannot tell.
func (a *Adapter) busStamps(ctx context.Context) (map[string]string, error) {
	repos := []any{a.cfg.Rules, a.cfg.Targets}
	if a.cfg.Sources != nil {
		repos = append(repos, a.cfg.Sources)
	}
	if a.cfg.Archives != nil {
		repos = append(repos, a.cfg.Archives)
	}
	if a.cfg.Replays != nil {
		repos = append(repos, a.cfg.Replays)
	}
	out := map[string]string{}
	for i, r := range repos {
		s, ok := r.(BusStamper)
		if !ok {
			return nil, nil
		}
		m, err := s.StampsByBus(ctx)
		if err != nil {
			return nil, err
		}
		for busID, st := range m {
			out[busID] += strconv.Itoa(i) + ":" + st + ";"
		}
	}
	return out, nil
}

// busLock serializes the calls that apply one bus.
type busLock struct {
	sync.Mutex
	users int
}

// lockBus takes the lock of one bus (by its connectors' prefix) and returns its unlock.
func (a *Adapter) lockBus(prefix string) (unlock func()) {
	a.mu.Lock()
	l := a.buses[prefix]
	if l == nil {
		l = &busLock{}
		a.buses[prefix] = l
	}
	l.users++
	a.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		a.mu.Lock()
		if l.users--; l.users == 0 {
			delete(a.buses, prefix)
		}
		a.mu.Unlock()
	}
}

// markChanged records that a bus's connectors were just changed (under its lock), and what the runtime holds of
// it now when the change was applied whole (held; nil when it failed or removed the bus).
func (a *Adapter) markChanged(prefix string, held *[sha256.Size]byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.changes++
	a.changed[prefix] = a.changes
	a.setHeld(prefix, held)
}

// setHeld records (or with nil forgets) what the runtime holds of a bus after a sync; under a.mu.
func (a *Adapter) setHeld(prefix string, held *[sha256.Size]byte) {
	if held == nil {
		delete(a.held, prefix)
		return
	}
	a.held[prefix] = *held
}

// holds reports whether the runtime holds of a bus what its last successful sync left (digest now).
func (a *Adapter) holds(prefix string, now [sha256.Size]byte) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	held, ok := a.held[prefix]
	return ok && held == now
}

// changedSince reports whether a bus's connectors were changed after the count was at n.
func (a *Adapter) changedSince(prefix string, n uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changed[prefix] > n
}

// changeCount returns the count of changes applied so far.
func (a *Adapter) changeCount() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changes
}

// busConnectors lists the connectors of one bus, with their configs and statuses.
func (a *Adapter) busConnectors(ctx context.Context, prefix string) (map[string]rpc.ConnectorExpanded, error) {
	actual, err := a.cfg.Runtime.ListConnectorsWithPrefix(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("listing connectors: %w", err)
	}
	return actual, nil
}

var (
	_ bus.Runtime         = (*Adapter)(nil)
	_ rule.Runtime        = (*Adapter)(nil)
	_ target.Runtime      = (*Adapter)(nil)
	_ target.StatusReader = (*Adapter)(nil)
)

// New returns an adapter.
func New(cfg Config) *Adapter {
	if cfg.Interval == 0 {
		cfg.Interval = 30 * time.Second
	}
	if cfg.FullPassEvery <= 0 {
		cfg.FullPassEvery = 10
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Adapter{cfg: cfg, buses: map[string]*busLock{}, changed: map[string]uint64{}, held: map[string][sha256.Size]byte{}}
}

// Desired is one connector as the declared state wants it: its config, and the state it should be in
// (rpc.StateRunning, rpc.StatePaused or rpc.StateStopped; "" is running).
type Desired struct {
	Config map[string]string
	State  string
}

// routeEntry is one rule in the router's rule table (the `router.rules` config key).
type routeEntry struct {
	ID           string          `json:"id"`
	Name         string          `json:"name,omitempty"`
	Subject      string          `json:"subject"`
	Pattern      json.RawMessage `json:"pattern"`
	FromSequence uint64          `json:"fromSequence"`
	// Stream and Archive make the entry an archive's: its copies go to the archive's own stream, and events put by
	// a replay are not archived again.
	Stream  string `json:"stream,omitempty"`
	Archive bool   `json:"archive,omitempty"`
}

// everyEvent is the pattern of an archive that has none: every CloudEvent has a specversion.
var everyEvent = json.RawMessage(`{"specversion":[{"exists":true}]}`)

// SyncBus applies the bus's declared state to the runtime and returns once the runtime applied it: target
// connectors (and their consumers) first, then the router's rule table, then removal of what no longer belongs.
func (a *Adapter) SyncBus(ctx context.Context, b *bus.Bus) error {
	prefix := busPrefix(b.AccountID(), b.Name())
	defer a.lockBus(prefix)()
	var held *[sha256.Size]byte
	defer func() { a.markChanged(prefix, held) }()
	actual, err := a.busConnectors(ctx, prefix)
	if err != nil {
		return err
	}
	states, err := a.desiredStates(ctx)
	if err != nil {
		return err
	}
	_, after, err := a.syncBus(ctx, b, actual, states)
	if err == nil {
		held = &after
	}
	return err
}

// desiredStates reads the states operators set (none without Config.States).
func (a *Adapter) desiredStates(ctx context.Context) (map[string]string, error) {
	if a.cfg.States == nil {
		return nil, nil
	}
	states, err := a.cfg.States.DesiredStates(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading desired connector states: %w", err)
	}
	return states, nil
}

// syncBus applies one bus and returns the connectors it wants, and the digest of what the runtime holds of the bus
// once they are applied (heldDigest; meaningful only without an error); actual holds at least the bus's
// connectors, read under its lock.
func (a *Adapter) syncBus(ctx context.Context, b *bus.Bus, actual map[string]rpc.ConnectorExpanded,
	states map[string]string) (desired map[string]Desired, held [sha256.Size]byte, err error) {
	rules, err := a.cfg.Rules.ListByBus(ctx, b.ID())
	if err != nil {
		return nil, held, err
	}
	targets, err := a.cfg.Targets.ListByBus(ctx, b.ID())
	if err != nil {
		return nil, held, err
	}
	rulesByID := make(map[string]*rule.Rule, len(rules))
	for _, r := range rules {
		rulesByID[r.ID()] = r
	}

	desired = map[string]Desired{}
	var unresolved []error
	for _, t := range targets {
		r, ok := rulesByID[t.RuleID()]
		if !ok {
			continue // deleted concurrently
		}
		name := TargetName(b.AccountID(), b.Name(), r.Name(), t.Name())
		cfg, err := a.targetConfig(ctx, b, r, t)
		if err != nil {
			// Its connector stays as it is (or missing): the reconciler retries.
			a.cfg.Logger.Warn("a target cannot be applied", "bus", b.ID(), "target", t.ID(), "err", err)
			unresolved = append(unresolved, err)
			if c, ok := actual[name]; ok && c.Info != nil {
				desired[name] = Desired{Config: c.Info.Config}
			}
			continue
		}
		desired[name] = Desired{Config: cfg}
	}
	sources, err := a.desiredSources(ctx, b, actual)
	if err != nil {
		return nil, held, err
	}
	maps.Copy(desired, sources)
	replays, err := a.desiredReplays(ctx, b)
	if err != nil {
		return nil, held, err
	}
	maps.Copy(desired, replays)
	routerName := RouterName(b.AccountID(), b.Name())
	oldTable := routerTable(actual[routerName])
	var archives []*archive.Archive
	if a.cfg.Archives != nil {
		if archives, err = a.cfg.Archives.ListByBus(ctx, b.ID()); err != nil {
			return nil, held, err
		}
	}
	routerCfg, err := a.routerConfig(ctx, b, rules, archives, oldTable)
	if err != nil {
		return nil, held, err
	}

	errs := unresolved
	prefix := busPrefix(b.AccountID(), b.Name())
	after := make(map[string]heldConnector, len(desired)+1) // what the runtime holds once all is applied
	for name, d := range desired {
		d.State = mostStopped(d.State, states[name])
		cfg, err := a.apply(ctx, name, d, actual[name])
		if err != nil {
			errs = append(errs, err)
		}
		after[name] = heldConnector{Config: cfg, State: mostStopped(d.State, ""), Operator: states[name]}
	}
	// The router last: target connectors (and their consumers) exist before events are routed to them.
	desired[routerName] = Desired{Config: routerCfg, State: states[routerName]}
	cfg, err := a.apply(ctx, routerName, desired[routerName], actual[routerName])
	if err != nil {
		errs = append(errs, err)
	}
	after[routerName] = heldConnector{Config: cfg, State: mostStopped(states[routerName], ""), Operator: states[routerName]}
	// Rules that existed before (in the old rule table or as a target's topic) and exist no more.
	gone := map[string]bool{}
	for id := range oldTable {
		gone[id] = true
	}
	for name, c := range actual {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		if _, ok := desired[name]; ok {
			continue
		}
		if c.Info != nil {
			if id := a.ruleOfTopic(b, c.Info.Config[rpc.ConfigTopics]); id != "" {
				gone[id] = true
			}
		}
		if err := a.cfg.Runtime.DeleteConnector(ctx, name); err != nil && !rpc.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting connector %s: %w", name, err))
		}
	}
	for id := range gone {
		if _, ok := rulesByID[id]; ok {
			continue
		}
		if err := a.cfg.Streams.PurgeRule(ctx, b.ID(), id); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return desired, held, err
	}
	held, err = heldDigest(b, after)
	return desired, held, err
}

// keepSealed returns desired with each sealed value that seals the same plaintext as the runtime's value of its key
// replaced by the runtime's: sealing gives a new ciphertext every time (a fresh nonce), so a config holding secrets
// would otherwise never equal the one the runtime runs, and every reconciliation would update it.
func (a *Adapter) keepSealed(name string, desired, actual map[string]string) map[string]string {
	if a.cfg.Secrets == nil {
		return desired
	}
	var out map[string]string
	for k, v := range desired {
		old, ok := actual[k]
		if !ok || old == v || !rpc.IsEncrypted(v) || !rpc.IsEncrypted(old) {
			continue
		}
		pv, err1 := a.cfg.Secrets.OpenFor(a.binding(name, k), v)
		po, err2 := a.cfg.Secrets.OpenFor(a.binding(name, k), old)
		if err1 != nil || err2 != nil || pv != po {
			continue
		}
		if out == nil {
			out = maps.Clone(desired)
		}
		out[k] = old
	}
	if out == nil {
		return desired
	}
	return out
}

// mostStopped is the state of a connector that two parties want in states x and y: stopped beats paused beats
// running ("").
func mostStopped(x, y string) string {
	rank := map[string]int{rpc.StatePaused: 1, rpc.StateStopped: 2}
	if rank[y] > rank[x] {
		return y
	}
	if x == rpc.StateRunning {
		return ""
	}
	return x
}

// apply creates the connector in its desired state, or updates its config when it differs and then its state
// (pause, stop, resume) when that differs, and returns the config the runtime holds then. The config calls answer
// once the worker applied that config.
func (a *Adapter) apply(ctx context.Context, name string, d Desired, actual rpc.ConnectorExpanded) (map[string]string, error) {
	if actual.Info == nil {
		_, err := a.cfg.Runtime.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: name, Config: d.Config, InitialState: d.State})
		if err == nil {
			return d.Config, nil
		}
		if !rpc.IsConflict(err) {
			return nil, fmt.Errorf("creating connector %s: %w", name, err)
		}
		// Created meanwhile (by another replica): update it below; its state is seen by the next reconciliation.
	}
	if actual.Info != nil {
		d.Config = a.keepSealed(name, d.Config, actual.Info.Config)
	}
	if actual.Info == nil || !maps.Equal(actual.Info.Config, d.Config) {
		if _, err := a.cfg.Runtime.PutConnectorConfig(ctx, name, d.Config); err != nil {
			return nil, fmt.Errorf("updating connector %s: %w", name, err)
		}
	}
	if actual.Status == nil {
		return d.Config, nil
	}
	var err error
	switch want, have := mostStopped(d.State, ""), actual.Status.Connector.State; {
	case want == rpc.StatePaused && have != rpc.StatePaused:
		err = a.cfg.Runtime.PauseConnector(ctx, name)
	case want == rpc.StateStopped && have != rpc.StateStopped:
		err = a.cfg.Runtime.StopConnector(ctx, name)
	case want == "" && (have == rpc.StatePaused || have == rpc.StateStopped):
		err = a.cfg.Runtime.ResumeConnector(ctx, name)
	}
	if err != nil {
		return nil, fmt.Errorf("changing the state of connector %s: %w", name, err)
	}
	return d.Config, nil
}

// routerTable reads the rule table of a router connector as the worker has it (nil when none).
func routerTable(c rpc.ConnectorExpanded) map[string]routeEntry {
	if c.Info == nil {
		return nil
	}
	var entries []routeEntry
	if err := json.Unmarshal([]byte(c.Info.Config["router.rules"]), &entries); err != nil {
		return nil
	}
	out := make(map[string]routeEntry, len(entries))
	for _, e := range entries {
		out[e.ID] = e
	}
	return out
}

// routerConfig builds the router of a bus. An enabled rule already in the router keeps its start sequence; a rule
// newly created or enabled starts after the last event stored now, so it receives every matching event stored
// after this call answers and none before. Archives are entries of the same table, with the same start.
func (a *Adapter) routerConfig(ctx context.Context, b *bus.Bus, rules []*rule.Rule, archives []*archive.Archive, old map[string]routeEntry) (map[string]string, error) {
	entries := []routeEntry{}
	var last *uint64
	start := func(e *routeEntry) error {
		if prev, ok := old[e.ID]; ok {
			e.FromSequence = prev.FromSequence
			return nil
		}
		if last == nil {
			seq, err := a.cfg.Streams.LastSequence(ctx, b.ID())
			if err != nil {
				return err
			}
			last = &seq
		}
		e.FromSequence = *last
		return nil
	}
	for _, r := range rules {
		if !r.Enabled() {
			continue
		}
		e := routeEntry{ID: r.ID(), Name: r.Name(), Subject: a.cfg.Physical.RuleSubject(b.ID(), r.ID()), Pattern: r.MatchPattern()}
		if err := start(&e); err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	for _, ar := range archives {
		e := routeEntry{ID: ar.ID(), Name: "archive:" + ar.Name(), Pattern: ar.EventPattern(), Archive: true,
			Subject: a.cfg.Physical.ArchiveSubject(ar.AccountID(), ar.ID()), Stream: a.cfg.Physical.ArchiveStream(ar.AccountID(), ar.ID())}
		if e.Pattern == nil {
			e.Pattern = everyEvent
		}
		if err := start(&e); err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	table, err := json.Marshal(entries)
	if err != nil {
		return nil, err
	}
	cfg := map[string]string{
		rpc.ConfigConnectorClass:    "router",
		rpc.ConfigTasksMax:          "1",
		rpc.ConfigTopics:            a.cfg.Physical.BusIn(b.ID()),
		"jetstream.stream":          a.cfg.Physical.BusStream(b.ID()),
		"jetstream.durable":         a.cfg.Physical.RouterConsumer(b.ID()),
		"jetstream.deliver.policy":  "all",
		"router.rules":              string(table),
		"router.eventtypes.subject": a.cfg.Physical.EventTypesSubject(b.ID()),
		"eb.bus.id":                 b.ID(),
		// What the router cannot route (an event stored by an earlier version that no longer passes the store's
		// checks) goes to the account's dead letters with its reason, never dropped; a copy it could not store is
		// retried as any sink's record, then dead-lettered.
		"errors.tolerance":                  "all",
		"errors.deadletterqueue.topic.name": a.cfg.Physical.DLQSubject(b.AccountID()),
	}
	if d := a.cfg.EventTypesInterval; d > 0 {
		cfg["router.eventtypes.interval.ms"] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	return a.withLog(b, cfg), nil
}

// Keys of the input transformer of a target connector: one transform, named input, of the worker's
// input-transformer plugin (worker/plugins/inputtransformer), whose spec is the JSON form of transform.Spec.
const (
	transformInput        = "input"
	transformInputType    = "input-transformer"
	keyTransforms         = "transforms"
	keyTransformInput     = keyTransforms + "." + transformInput + "."
	keyTransformInputType = keyTransformInput + "type"
	keyTransformInputSpec = keyTransformInput + "spec"
)

// awsRegion is the region of the AWS envelope and ARNs of targets in AWS's format.
func (a *Adapter) awsRegion() string {
	if a.cfg.AWSRegion == "" {
		return "us-east-1"
	}
	return a.cfg.AWSRegion
}

// ruleOfTopic returns the rule id of a target connector's topics on bus b: its rule subject, alone or first of a
// comma-separated list (the target's redrive subject follows it); "" when topics is not that.
func (a *Adapter) ruleOfTopic(b *bus.Bus, topics string) string {
	topic, _, _ := strings.Cut(topics, ",")
	base := a.cfg.Physical.RuleSubject(b.ID(), "")
	if !strings.HasPrefix(topic, base) {
		return ""
	}
	return strings.TrimPrefix(topic, base)
}

// RemoveBus deletes every connector of the bus.
func (a *Adapter) RemoveBus(ctx context.Context, b *bus.Bus) error {
	prefix := busPrefix(b.AccountID(), b.Name())
	defer a.lockBus(prefix)()
	defer a.markChanged(prefix, nil)
	actual, err := a.busConnectors(ctx, prefix)
	if err != nil {
		return err
	}
	var errs []error
	for name := range actual {
		if strings.HasPrefix(name, prefix) {
			if err := a.cfg.Runtime.DeleteConnector(ctx, name); err != nil && !rpc.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// ReconcileAll brings every bus in step, deletes "eb." connectors of buses that no longer exist and forgets the
// states operators set on connectors that no longer belong to anything.
func (a *Adapter) ReconcileAll(ctx context.Context) error { return a.reconcileAll(ctx, false) }

// reconcileAll is ReconcileAll; a periodic pass is skipped as Reconcile says.
func (a *Adapter) reconcileAll(ctx context.Context, periodic bool) error {
	a.reconcileMu.Lock()
	defer a.reconcileMu.Unlock()
	listed := a.changeCount()
	actual, stamp, err := a.cfg.Runtime.ListConnectorsStamped(ctx)
	if err != nil {
		return fmt.Errorf("listing connectors: %w", err)
	}
	a.noteHealth(actual, time.Now())
	a.learnRuleNames(actual, stamp)
	states, err := a.desiredStates(ctx)
	if err != nil {
		return err
	}
	buses, err := a.allBuses(ctx)
	if err != nil {
		return err
	}
	stamps, stamped, err := a.stamps(ctx)
	if err != nil {
		return err
	}
	if !a.listed.ok || a.listed.stamp != stamp {
		digest, err := connectorsDigest(actual)
		if err != nil {
			return err
		}
		a.listed.stamp, a.listed.digest, a.listed.ok = stamp, digest, true
	}
	fp, err := fingerprint(a.listed.digest, states, buses, stamps)
	if err != nil {
		return err
	}
	l := a.last
	// A periodic pass may skip what it saw unchanged unless it is due to be full: the whole pass when nothing it
	// can see changed, or else each bus whose connectors the runtime holds as its last sync left them. It syncs
	// the others. A full one may skip each bus that the runtime holds as its last sync left it and whose rows did
	// not change since that sync (their stamps), unless it is due to sync every bus.
	skippable := periodic && stamped && l.complete && l.stamps == strings.Join(stamps, "\n")
	partial := skippable && l.sinceFull+1 < a.cfg.FullPassEvery
	if partial && l.fingerprint == fp && l.changes == listed {
		a.last.sinceFull++
		return nil
	}
	var rows map[string]string // the stamps of every bus's rows, read before any bus is synced
	if !partial {
		if rows, err = a.busStamps(ctx); err != nil {
			return err
		}
	}
	checked := skippable && !partial && rows != nil && l.checkedFulls+1 < syncAllEvery
	if a.synced == nil || (!partial && !checked) {
		a.synced = map[string]string{}
	}
	a.last = passMark{}
	var errs []error
	known := map[string]bool{}
	wanted := map[string]bool{}
	var held map[string][]string // the runtime's connectors by bus prefix, for a partial or checked pass
	if partial || checked {
		held = map[string][]string{}
		for name := range actual {
			if acc, busPart, ok := ownerOf(name); ok {
				prefix := partsPrefix(acc, busPart)
				held[prefix] = append(held[prefix], name)
			}
		}
	}
	prefixes := make(map[string]bool, len(buses))
	ids := make(map[string]bool, len(buses))
	for _, b := range buses {
		known[b.AccountID()+"."+namePart(b.Name())] = true
		prefix := busPrefix(b.AccountID(), b.Name())
		prefixes[prefix], ids[b.ID()] = true, true
		if (partial || checked && a.rowsSynced(b.ID(), rows)) && !a.changedSince(prefix, listed) {
			names := held[prefix]
			if now, err := heldDigest(b, heldBy(actual, names, states)); err == nil && a.holds(prefix, now) {
				for _, name := range names {
					wanted[name] = true
				}
				continue
			}
		}
		// Each bus under its own lock: changes of other buses go on meanwhile. A bus changed since the listing
		// above has its connectors read again, so that none of its changes is undone.
		desired, err := a.reconcileBus(ctx, b, actual, listed, states)
		if err != nil {
			errs = append(errs, fmt.Errorf("bus %s/%s: %w", b.AccountID(), b.Name(), err))
			delete(a.synced, b.ID())
		} else if rows != nil {
			a.synced[b.ID()] = rows[b.ID()]
		}
		for name := range desired {
			wanted[name] = true
		}
	}
	for id := range a.synced {
		if !ids[id] {
			delete(a.synced, id) // a bus that is no more
		}
	}
	a.mu.Lock()
	for prefix, n := range a.changed {
		if n <= listed {
			delete(a.changed, prefix) // the next pass lists after it
		}
	}
	for prefix := range a.held {
		if !prefixes[prefix] {
			delete(a.held, prefix) // a bus that is no more
		}
	}
	a.mu.Unlock()
	for name := range actual {
		acc, busPart, ok := ownerOf(name)
		if !ok || known[acc+"."+busPart] {
			continue
		}
		if err := a.cfg.Runtime.DeleteConnector(ctx, name); err != nil && !rpc.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		// Only after a complete pass: a bus that failed half-way would lose its connectors' states.
		for name := range states {
			if wanted[name] {
				continue
			}
			if err := a.cfg.States.ForgetDesiredState(ctx, name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) == 0 {
		a.last = passMark{fingerprint: fp, changes: listed, stamps: strings.Join(stamps, "\n"), complete: true}
		switch {
		case partial:
			a.last.sinceFull, a.last.checkedFulls = l.sinceFull+1, l.checkedFulls
		case checked:
			a.last.checkedFulls = l.checkedFulls + 1
		}
	}
	return errors.Join(errs...)
}

// allBuses returns every bus: the last pass's when Config.Buses stamps its rows (Stamper) and the stamp did not
// change since. Called with reconcileMu held.
func (a *Adapter) allBuses(ctx context.Context) ([]*bus.Bus, error) {
	s, stamps := a.cfg.Buses.(Stamper)
	var st string
	if stamps {
		var err error
		if st, err = s.Stamp(ctx); err != nil {
			return nil, err
		}
		if a.read.ok && a.read.stamp == st {
			return a.read.all, nil
		}
	}
	all, err := a.cfg.Buses.ListAll(ctx)
	if err != nil {
		return nil, err
	}
	a.read.stamp, a.read.all, a.read.ok = st, all, stamps
	return all, nil
}

// rowsSynced reports whether the bus's rows have the stamps they had before its last sync by a full pass.
func (a *Adapter) rowsSynced(busID string, rows map[string]string) bool {
	st, ok := a.synced[busID]
	return ok && st == rows[busID]
}

// heldConnector is a connector of a bus as a sync sees it: its config, the state it acts on (rpc.StatePaused,
// rpc.StateStopped, or "" for any other) and the state operators set on it.
type heldConnector struct {
	Config   map[string]string
	State    string
	Operator string
}

// heldBy returns the named connectors of actual as a sync sees them.
func heldBy(actual map[string]rpc.ConnectorExpanded, names []string, states map[string]string) map[string]heldConnector {
	out := make(map[string]heldConnector, len(names))
	for _, name := range names {
		c := actual[name]
		var h heldConnector
		if c.Info != nil {
			h.Config = c.Info.Config
		}
		if c.Status != nil {
			if st := c.Status.Connector.State; st == rpc.StatePaused || st == rpc.StateStopped {
				h.State = st
			}
		}
		h.Operator = states[name]
		out[name] = h
	}
	return out
}

// heldDigest digests a bus and its connectors as the runtime holds them (heldBy), or as a successful sync left
// them. A bus with the same digest as after its last sync, whose rules, targets, sources, archives and replays
// were not changed since, needs no sync: the sync would want what the runtime holds.
func heldDigest(b *bus.Bus, connectors map[string]heldConnector) ([sha256.Size]byte, error) {
	data, err := json.Marshal(struct {
		ID, Account, Name, Description string
		Retention                      bus.Retention
		Log                            bus.LogConfig
		Connectors                     map[string]heldConnector
	}{b.ID(), b.AccountID(), b.Name(), b.Description(), b.Retention(), b.Log(), connectors})
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("digesting the connectors of bus %s: %w", b.ID(), err)
	}
	return sha256.Sum256(data), nil
}

// Stamper is a repository that tells, cheaply, whether anything in it changed: its stamp changes with every
// create, update and delete (persistence's ConnectionRepository and APIDestinationRepository are). Changes of
// connections and API destinations reach target connectors only through reconciliation, so a periodic pass is
// skipped only when both stamp.
type Stamper interface {
	Stamp(ctx context.Context) (string, error)
}

// stamps reads the stamps of the connections and API destinations; stamped is false when one of them (set) cannot
// tell, and no periodic pass may then be skipped.
func (a *Adapter) stamps(ctx context.Context) (stamps []string, stamped bool, err error) {
	stamped = true
	for _, r := range []any{a.cfg.Connections, a.cfg.APIDestinations} {
		if r == nil {
			continue
		}
		s, ok := r.(Stamper)
		if !ok {
			stamped = false
			continue
		}
		st, err := s.Stamp(ctx)
		if err != nil {
			return nil, false, err
		}
		stamps = append(stamps, st)
	}
	return stamps, stamped, nil
}

// connectorsDigest digests the runtime's connectors with their configs and states (not their tasks').
func connectorsDigest(actual map[string]rpc.ConnectorExpanded) ([sha256.Size]byte, error) {
	type connectorKey struct {
		Config map[string]string
		State  string
	}
	connectors := make(map[string]connectorKey, len(actual))
	for name, c := range actual {
		var k connectorKey
		if c.Info != nil {
			k.Config = c.Info.Config
		}
		if c.Status != nil {
			k.State = c.Status.Connector.State
		}
		connectors[name] = k
	}
	data, err := json.Marshal(connectors)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("digesting the runtime's connectors: %w", err)
	}
	return sha256.Sum256(data), nil
}

// fingerprint digests what a periodic pass reads before it looks at any bus's rules, targets and sources: the
// runtime's connectors (their connectorsDigest), the operators' states, the buses, and the stamps of the
// connections and API destinations.
func fingerprint(connectors [sha256.Size]byte, states map[string]string, buses []*bus.Bus,
	stamps []string) ([sha256.Size]byte, error) {
	type busKey struct {
		ID, Account, Name, Description string
		Retention                      bus.Retention
	}
	keys := make([]busKey, len(buses))
	for i, b := range buses {
		keys[i] = busKey{b.ID(), b.AccountID(), b.Name(), b.Description(), b.Retention()}
	}
	data, err := json.Marshal(struct {
		Connectors [sha256.Size]byte
		States     map[string]string
		Buses      []busKey
		Stamps     []string
	}{connectors, states, keys, stamps})
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("digesting the declared and actual state: %w", err)
	}
	return sha256.Sum256(data), nil
}

// reconcileBus applies one bus under its lock, as part of ReconcileAll: with the connectors of the listing made
// when the change count was listed, or read again if the bus changed since.
func (a *Adapter) reconcileBus(ctx context.Context, b *bus.Bus, all map[string]rpc.ConnectorExpanded, listed uint64,
	states map[string]string) (map[string]Desired, error) {
	prefix := busPrefix(b.AccountID(), b.Name())
	defer a.lockBus(prefix)()
	actual := all
	if a.changedSince(prefix, listed) {
		var err error
		if actual, err = a.busConnectors(ctx, prefix); err != nil {
			a.mu.Lock()
			a.setHeld(prefix, nil)
			a.mu.Unlock()
			return nil, err
		}
	}
	desired, held, err := a.syncBus(ctx, b, actual, states)
	a.mu.Lock()
	if err == nil {
		a.setHeld(prefix, &held)
	} else {
		a.setHeld(prefix, nil)
	}
	a.mu.Unlock()
	return desired, err
}

// Reconcile runs a periodic pass when this replica holds the lease (always without Config.Lease) and reports
// whether it did. A periodic pass is ReconcileAll, skipped when nothing it can see changed since the last complete
// pass: the runtime's connectors (configs and states), the operators' states, the buses, the connections and API
// destinations (their Stamper), and the changes applied through this adapter. When something did change but not
// the connections and API destinations, the pass syncs only the buses that the runtime does not hold as their last
// successful sync left them (a digest of each bus and its connectors' configs and states, kept per bus), or that
// were changed through this adapter since its listing. Every Config.FullPassEvery-th pass is full: it reads, in one
// query per table, a stamp of every bus's rules, targets, sources, archives and replays (BusStamper), and syncs
// the buses whose rows changed since their last sync by a full pass, besides those a partial pass syncs; every
// syncAllEvery-th full pass, and every one when a repository cannot stamp, syncs every bus. What a skipped or
// partial pass does not see is a rule, target or source changed by another control-plane replica that could not
// apply it (the runtime was unreachable from it): that waits for the next full pass (5 minutes by default). A full
// pass could miss such a change only if it left its bus's stamp as it was (a row deleted and another created in
// the same interval, stored with a clock behind the other rows'); the pass that syncs every bus, within an hour by
// default, repairs that. Skipping keeps an installation of thousands of buses from reading every bus's rows every
// Interval (a full pass that read them all took a second of CPU at 2,000 buses), and the pass after thousands of
// buses were created from syncing them all again.
func (a *Adapter) Reconcile(ctx context.Context) (bool, error) {
	if a.cfg.Lease != nil {
		held, err := a.cfg.Lease.Acquire(ctx)
		if err != nil {
			return false, fmt.Errorf("taking the reconciler lease: %w", err)
		}
		if !held {
			return false, nil
		}
	}
	return true, a.reconcileAll(ctx, true)
}

// LeaseTTL is the time to live of the reconciler lease for a reconciliation interval: the holder renews it every
// interval, so it lapses only after two missed renewals.
func LeaseTTL(interval time.Duration) time.Duration { return 2*interval + 5*time.Second }

// Run reconciles every Interval until ctx ends (callers reconcile once with Reconcile at start), retrying sooner
// with a bounded back-off (1s doubling up to Interval) while the runtime is unreachable. With a Lease, a replica
// that does not hold it only tries to take it every Interval. It blocks.
func (a *Adapter) Run(ctx context.Context) {
	wait, backoff := a.cfg.Interval, time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		held, err := a.Reconcile(ctx)
		if a.cfg.Passes != nil && (held || err != nil) && ctx.Err() == nil {
			a.cfg.Passes(err)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			a.cfg.Logger.Warn("reconciling with the worker runtime", "err", err, "retryIn", backoff)
			wait, backoff = backoff, min(backoff*2, a.cfg.Interval)
			continue
		}
		if !held {
			a.cfg.Logger.Debug("another control-plane replica reconciles")
		}
		wait, backoff = a.cfg.Interval, time.Second
	}
}

// TargetStatus reads the state of the target's connector; a connector the runtime does not know is PENDING.
func (a *Adapter) TargetStatus(ctx context.Context, b *bus.Bus, r *rule.Rule, t *target.Target) (*target.Status, error) {
	st, lastError, err := a.connectorStatus(ctx, TargetName(b.AccountID(), b.Name(), r.Name(), t.Name()))
	if err != nil {
		return nil, err
	}
	if st == nil {
		return &target.Status{State: target.StatePending}, nil
	}
	return targetStatusOf(st, lastError), nil
}

// targetStatusOf is the domain's form of a target connector's status.
func targetStatusOf(st *rpc.ConnectorStatus, lastError string) *target.Status {
	out := &target.Status{State: st.Connector.State, LastError: lastError}
	for _, ts := range st.Tasks {
		out.Tasks = append(out.Tasks, target.TaskStatus{ID: ts.ID, State: ts.State, WorkerID: ts.WorkerID,
			Health: factsOf(ts.Health), Counters: targetCounters(ts.Counters), Totals: targetCounters(ts.Totals)})
	}
	return out
}

// targetCounters is the domain's form of a target task's counters (nil for nil).
func targetCounters(n *rpc.TaskCounters) *target.Counters {
	if n == nil {
		return nil
	}
	return &target.Counters{Read: n.Read, Delivered: n.Written, Retried: n.Retried, DeadLettered: n.DeadLettered,
		Dropped: n.Dropped, Failed: n.Failed, Filtered: n.Filtered}
}

// factsOf is the domain's form of what a task reported of its writes (nil when it reported nothing).
func factsOf(h *rpc.TaskHealth) *health.Facts {
	if h == nil {
		return nil
	}
	at := func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	}
	out := &health.Facts{LastSuccessAt: at(h.LastSuccessAt), FailuresSinceSuccess: h.FailuresSinceSuccess,
		FailingSince: at(h.FailingSince), RetryScheduled: h.RetryScheduled, LastDeadLetteredAt: at(h.LastDeadLetteredAt)}
	if f := h.LastFailure; f != nil {
		out.LastFailure = &health.Failure{At: f.At, Attempt: f.Attempt, Class: f.Class, Status: f.Status,
			Message: f.Message, Response: f.Response}
	}
	return out
}

// connectorStatus reads a connector's status and its last error (the connector's trace, else the first task's);
// a nil status and no error when the runtime does not know the connector.
func (a *Adapter) connectorStatus(ctx context.Context, name string) (*rpc.ConnectorStatus, string, error) {
	st, err := a.cfg.Runtime.ConnectorStatus(ctx, name)
	if rpc.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	return st, lastErrorOf(st), nil
}

// lastErrorOf is the connector's trace, else the first task's.
func lastErrorOf(st *rpc.ConnectorStatus) string {
	lastError := st.Connector.Trace
	for _, ts := range st.Tasks {
		if lastError == "" {
			lastError = ts.Trace
		}
	}
	return lastError
}
