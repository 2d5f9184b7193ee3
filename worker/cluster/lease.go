package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
)

// Bucket purposes: Names.Bucket(LeasesBucketPurpose) holds one lease per worker, Names.Bucket(ClaimsBucketPurpose)
// one claim per task.
const (
	LeasesBucketPurpose = "leases"
	ClaimsBucketPurpose = "claims"
)

// Defaults of LeaseConfig.
const (
	DefaultLeaseTTL   = 2500 * time.Millisecond
	DefaultLeaseLocal = 2 * time.Second
)

// leaseHistory is the number of revisions kept per lease and claim key, so operators and tests can read recent
// holders.
const leaseHistory = 5

var (
	// ErrLeaseHeld is returned by Claim when a live incarnation of a worker holds the task, and by Acquire when the
	// worker's lease key is held by something that is not a run of this worker.
	ErrLeaseHeld = errors.New("lease held by another worker")
	// ErrLeaseLost is returned by Renew and Release when the worker's lease key is no longer at the lease's
	// revision (it expired on the server, or another run of the worker took it over; Renew tells which with a
	// *LostError), and by Unclaim when the claim key moved.
	ErrLeaseLost = errors.New("lease lost")
)

// LostError says why Renew found the worker's lease lost: the key expired on the server before the renewal arrived
// (Holder empty), or another run of a worker holds it now (Holder names it). It matches ErrLeaseLost.
type LostError struct {
	Key    string
	Holder string
}

func (e *LostError) Error() string {
	if e.Holder == "" {
		return fmt.Sprintf("cluster: renewing %s: %v: it expired before the renewal arrived", e.Key, ErrLeaseLost)
	}
	return fmt.Sprintf("cluster: renewing %s: %v: another run of worker %s holds it now", e.Key, ErrLeaseLost, e.Holder)
}

func (e *LostError) Unwrap() error { return ErrLeaseLost }

// Why is the reason for logs: "expired before it was renewed" or "was taken over by another run of worker <id>".
func (e *LostError) Why() string {
	if e.Holder == "" {
		return "expired before it was renewed (its renewals came too late: the worker or NATS was slow)"
	}
	return "was taken over by another run of worker " + e.Holder + " (two processes with one worker id?)"
}

// ClaimKey is the key of a task's claim: <connector>.<task>. Connector names may contain dots; the task number is
// always after the last one. The connector name must itself be valid in a KV key.
func ClaimKey(id rpc.TaskID) string { return id.Connector + "." + strconv.Itoa(id.Task) }

// ParseClaimKey is the inverse of ClaimKey: it splits key at its last dot. It reports false for anything ClaimKey
// does not produce (no dot, empty connector, a task that is not a canonical non-negative integer).
func ParseClaimKey(key string) (rpc.TaskID, bool) {
	i := strings.LastIndexByte(key, '.')
	if i <= 0 {
		return rpc.TaskID{}, false
	}
	n, err := strconv.Atoi(key[i+1:])
	if err != nil || n < 0 || strconv.Itoa(n) != key[i+1:] {
		return rpc.TaskID{}, false
	}
	return rpc.TaskID{Connector: key[:i], Task: n}, true
}

// LeaseConfig configures OpenLeases.
type LeaseConfig struct {
	JetStream jetstream.JetStream
	// LeaseJetStream, when set, is the JetStream of the leases bucket (the worker's lease is acquired, renewed and
	// read on it): one on a connection that the tasks' traffic does not crowd. Default: JetStream (claims always).
	LeaseJetStream jetstream.JetStream
	Names          stream.Names
	// WorkerID is the key of this worker's lease and is written into every claim; it must be a valid KV key.
	WorkerID string
	// TTL is the max age of the leases bucket (default 2.5s): the server removes a worker's lease TTL after its
	// last write. It is a bucket setting: every worker of a cluster must use the same value, and OpenLeases refuses
	// a bucket that exists with another.
	TTL time.Duration
	// Local is how long the lease stays valid on this worker after its last acquire or renewal was sent (default
	// 2s). It must be shorter than TTL: the margin covers the server's expiry being at most late, never early, and
	// the clock rates of the two machines.
	Local time.Duration
	// Replicas of the buckets (default 1).
	Replicas int
	// Sole says that no other worker can reach the NATS server (a server in this process with no listener): the
	// worker may then change the TTL of an existing leases bucket, which a worker of a cluster may not (see
	// ensureBucket).
	Sole bool
}

func (c LeaseConfig) withDefaults() LeaseConfig {
	if c.TTL == 0 {
		c.TTL = DefaultLeaseTTL
	}
	if c.Local == 0 {
		c.Local = DefaultLeaseLocal
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	return c
}

// Validate reports the first invalid field; zero durations and replicas stand for their defaults.
func (c LeaseConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.JetStream == nil:
		return errors.New("cluster: leases: JetStream is required")
	case c.WorkerID == "":
		return errors.New("cluster: leases: WorkerID is required")
	case !validKey(c.WorkerID):
		return fmt.Errorf("cluster: leases: worker id %q is not a valid KV key", c.WorkerID)
	case c.TTL < 100*time.Millisecond:
		return fmt.Errorf("cluster: leases: TTL %v is below the server's minimum max age of 100ms", c.TTL)
	case c.Local <= 0 || c.Local >= c.TTL:
		return fmt.Errorf("cluster: leases: Local %v must be positive and shorter than TTL %v", c.Local, c.TTL)
	case c.Replicas < 1:
		return errors.New("cluster: leases: Replicas must be positive")
	}
	return nil
}

// Leases is one worker's side of the fencing of tasks: its own lease, renewed as one key whatever the number of
// its tasks, and the claims of the tasks it runs. A claim names the worker and the incarnation (one run of its
// lease) that took it; it stays valid exactly as long as that incarnation's lease, and another worker takes it over
// only after reading on the server that the incarnation's lease is gone. Safe for concurrent use.
//
// The properties kept (docs/ARCHITECTURE.md, "Fencing"):
//
//   - A worker runs a task only while its lease is valid locally (Lease.Valid) and it holds the task's claim.
//   - A lease's key vanishes on the server no earlier than TTL after its last write, and the worker's local deadline
//     is Local (< TTL) after that write was sent: a worker whose lease vanished has stopped its tasks.
//   - Claim takes over another incarnation's claim only when the server no longer holds that incarnation's lease,
//     with a compare-and-set on the claim: no two incarnations run one task at the same time.
//   - Incarnations are never reused: a worker that lost its lease acquires a new one and claims its tasks again.
type Leases struct {
	cfg    LeaseConfig
	kv     jetstream.KeyValue // worker leases, max age TTL
	claims jetstream.KeyValue // task claims, no max age
	live   *view              // worker leases seen written within TTL
	held   *view              // every claim

	mu   sync.Mutex
	dead map[string]bool // incarnations read gone on the server: they never come back
}

// OpenLeases ensures the leases bucket (max age cfg.TTL, enforced by the server) and the claims bucket (no max age),
// both with history 5 and file storage, so a restarted server still knows who holds what, and follows both. Errors:
// an invalid cfg, a leases bucket that exists with another TTL (ensureBucket), or a bucket could not be ensured or
// read.
func OpenLeases(ctx context.Context, cfg LeaseConfig) (*Leases, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	open := func(js jetstream.JetStream, purpose, doc string, ttl time.Duration, parse func(string, []byte) any) (jetstream.KeyValue, *view, error) {
		bucket := cfg.Names.Bucket(purpose)
		kv, err := ensureBucket(ctx, js, jetstream.KeyValueConfig{
			Bucket: bucket, Description: doc, History: leaseHistory, TTL: ttl, Storage: jetstream.FileStorage,
			Replicas: cfg.Replicas,
		}, cfg.Sole || ttl == 0) // the claims bucket has no max age to keep
		if err != nil {
			return nil, nil, err
		}
		v, err := watchView(ctx, kv, ttl, parse)
		if err != nil {
			return nil, nil, fmt.Errorf("cluster: following KV bucket %s: %w", bucket, err)
		}
		if err := v.wait(ctx); err != nil {
			v.stop()
			return nil, nil, fmt.Errorf("cluster: reading KV bucket %s: %w", bucket, err)
		}
		return kv, v, nil
	}
	leaseJS := cfg.LeaseJetStream
	if leaseJS == nil {
		leaseJS = cfg.JetStream
	}
	kv, live, err := open(leaseJS, LeasesBucketPurpose, "one lease per worker; a key expires when its worker stops renewing", cfg.TTL,
		parseLease)
	if err != nil {
		return nil, err
	}
	claims, held, err := open(cfg.JetStream, ClaimsBucketPurpose, "which incarnation of which worker runs each task", 0, parseClaim)
	if err != nil {
		live.stop()
		return nil, err
	}
	return &Leases{cfg: cfg, kv: kv, claims: claims, live: live, held: held, dead: map[string]bool{}}, nil
}

// ensureBucket creates the bucket of kvc, or updates it (its description and replicas) when it exists with the same
// max age; it refuses one that exists with another max age. The leases bucket's max age is what every worker's
// local deadline is shorter than: were a worker to shorten it, the lease of a worker started with a longer one would
// vanish on the server while that worker still ran its tasks, and another would take them. So no worker changes
// it: to change the lease TTL of a cluster, every worker stops and the bucket is deleted. With update (a sole
// worker, which no other runs beside with the TTL it replaces, or a bucket without max age) it creates or updates
// the bucket in one call.
func ensureBucket(ctx context.Context, js jetstream.JetStream, kvc jetstream.KeyValueConfig, update bool) (jetstream.KeyValue, error) {
	if update {
		kv, err := js.CreateOrUpdateKeyValue(ctx, kvc)
		if err != nil {
			return nil, fmt.Errorf("cluster: ensuring KV bucket %s: %w", kvc.Bucket, err)
		}
		return kv, nil
	}
	// The bucket's stream (named KV_<bucket> by the key-value store's design, ADR-8), read once: its max age is
	// the keys' TTL.
	name := "KV_" + kvc.Bucket
	s, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		kv, cerr := js.CreateKeyValue(ctx, kvc)
		if cerr == nil {
			return kv, nil
		}
		if !errors.Is(cerr, jetstream.ErrBucketExists) {
			return nil, fmt.Errorf("cluster: ensuring KV bucket %s: %w", kvc.Bucket, cerr)
		}
		s, err = js.Stream(ctx, name) // another worker created it meanwhile, with another config
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: reading KV bucket %s: %w", kvc.Bucket, err)
	}
	if ttl := s.CachedInfo().Config.MaxAge; ttl != kvc.TTL {
		return nil, fmt.Errorf("cluster: KV bucket %s keeps a key %v after its last write, and this worker is configured "+
			"for %v (the lease TTL): every worker of a cluster must use the same lease TTL; to change it, stop every "+
			"worker and delete the bucket", kvc.Bucket, ttl, kvc.TTL)
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, kvc)
	if err != nil {
		return nil, fmt.Errorf("cluster: ensuring KV bucket %s: %w", kvc.Bucket, err)
	}
	return kv, nil
}

// Close stops following the buckets.
func (l *Leases) Close() {
	l.live.stop()
	l.held.stop()
}

// Lease is this worker's lease: one incarnation of it. Its methods are safe for concurrent use: one goroutine may
// renew while others check Valid.
type Lease struct {
	Worker      string
	Incarnation string

	mu       sync.Mutex
	acquired time.Time
	revision uint64
	// deadline is the send time of the last successful acquire or renewal plus Local. It keeps the monotonic
	// reading of time.Now, so wall-clock jumps on this machine do not move it.
	deadline time.Time
}

// leaseValue is the JSON value of a worker's lease key.
type leaseValue struct {
	Worker      string `json:"worker"`
	Incarnation string `json:"incarnation"`
	Acquired    string `json:"acquired"`
	Renewed     string `json:"renewed"`
}

// claimValue is the JSON value of a task's claim key.
type claimValue struct {
	Worker      string `json:"worker"`
	Incarnation string `json:"incarnation"`
	Claimed     string `json:"claimed"`
}

func (l *Leases) encode(incarnation string, acquired, renewed time.Time) []byte {
	b, _ := json.Marshal(leaseValue{
		Worker:      l.cfg.WorkerID,
		Incarnation: incarnation,
		Acquired:    stamp(acquired),
		Renewed:     stamp(renewed),
	})
	return b
}

// stampLayout is RFC 3339 with nine digits of fraction always: a renewal's value is as long as the one it
// replaces, so the bytes the leases bucket stores stay the same while a worker only renews (RFC3339Nano drops
// trailing zeros, and the storage meter read every installation stream whenever the bytes stored changed: every
// other second of an idle worker). time.RFC3339Nano parses it.
const stampLayout = "2006-01-02T15:04:05.000000000Z07:00"

func stamp(t time.Time) string { return t.UTC().Format(stampLayout) }

func newIncarnation() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Acquire takes a new incarnation of this worker's lease: a compare-and-set create of its key, or, when the key
// holds an earlier run of this worker (a restart within TTL, or a lease this process lost), a compare-and-set
// update at the revision read, so the restart need not wait for the key to expire. The claims of the earlier
// incarnation become free to take at once, by this worker or another. The lease is valid for Local from the moment
// the request was sent. Errors: ErrLeaseHeld when the key changed meanwhile or names another worker, or the request
// failed. Worker ids must be unique among running workers: a second process with a running worker's id takes its
// lease over, and the first stops its tasks at its next renewal.
func (l *Leases) Acquire(ctx context.Context) (*Lease, error) {
	key := l.cfg.WorkerID
	inc := newIncarnation()
	sent := time.Now()
	rev, err := l.kv.Create(ctx, key, l.encode(inc, sent, sent))
	if ebjs.IsRevisionConflict(err) {
		e, gerr := l.kv.Get(ctx, key)
		switch {
		case errors.Is(gerr, jetstream.ErrKeyNotFound):
			return nil, fmt.Errorf("cluster: acquiring %s: %w", key, ErrLeaseHeld) // it just expired: try again
		case gerr != nil:
			return nil, fmt.Errorf("cluster: acquiring %s: %w", key, gerr)
		}
		var v leaseValue
		if json.Unmarshal(e.Value(), &v) != nil || v.Worker != l.cfg.WorkerID {
			return nil, fmt.Errorf("cluster: acquiring %s: %w", key, ErrLeaseHeld)
		}
		sent = time.Now()
		rev, err = l.kv.Update(ctx, key, l.encode(inc, sent, sent), e.Revision())
		if err == nil {
			l.markDead(v.Incarnation)
		}
	}
	if err != nil {
		if ebjs.IsRevisionConflict(err) {
			return nil, fmt.Errorf("cluster: acquiring %s: %w", key, ErrLeaseHeld)
		}
		return nil, fmt.Errorf("cluster: acquiring %s: %w", key, err)
	}
	return &Lease{Worker: key, Incarnation: inc, acquired: sent, revision: rev, deadline: sent.Add(l.cfg.Local)}, nil
}

// Renew extends lease with a compare-and-set update at its last revision, which also restarts the server's expiry of
// the key. On success the local deadline moves to the send time of this request plus Local; on any error it stays.
// Errors: a *LostError (matching ErrLeaseLost) when the key is not at the lease's revision any more, saying whether
// it expired or another run holds it now, after which the lease can never be renewed again (Acquire a new one);
// other errors (timeouts, no connection) may be retried while Valid holds. A lease whose local deadline passed is
// still renewed if the key is still ours: nobody else can have taken its claims meanwhile.
func (l *Leases) Renew(ctx context.Context, lease *Lease) error {
	key := lease.Worker
	lease.mu.Lock()
	rev, acquired := lease.revision, lease.acquired
	lease.mu.Unlock()
	sent := time.Now()
	next, err := l.kv.Update(ctx, key, l.encode(lease.Incarnation, acquired, sent), rev)
	if ebjs.IsRevisionConflict(err) {
		// An earlier renewal of this lease may have been stored after its caller gave up waiting (a starved
		// worker): the key then holds this incarnation at a later revision. It is still ours; renew at that
		// revision. The deadline moves only by what this call sent.
		if later, ok := l.ownRevision(ctx, key, lease.Incarnation); ok && later > rev {
			sent = time.Now()
			next, err = l.kv.Update(ctx, key, l.encode(lease.Incarnation, acquired, sent), later)
		}
	}
	if err != nil {
		if ebjs.IsRevisionConflict(err) {
			l.markDead(lease.Incarnation)
			return &LostError{Key: key, Holder: l.holder(ctx, key)}
		}
		return fmt.Errorf("cluster: renewing %s: %w", key, err)
	}
	lease.mu.Lock()
	defer lease.mu.Unlock()
	// Two concurrent renewals of one lease: one of them fails on the revision; never move the deadline back.
	if next > lease.revision {
		lease.revision = next
	}
	if d := sent.Add(l.cfg.Local); d.After(lease.deadline) {
		lease.deadline = d
	}
	return nil
}

// ownRevision returns the revision of the lease key when it holds incarnation of this worker.
func (l *Leases) ownRevision(ctx context.Context, key, incarnation string) (uint64, bool) {
	e, err := l.kv.Get(ctx, key)
	if err != nil {
		return 0, false
	}
	var v leaseValue
	if json.Unmarshal(e.Value(), &v) != nil || v.Worker != l.cfg.WorkerID || v.Incarnation != incarnation {
		return 0, false
	}
	return e.Revision(), true
}

// holder returns the worker that holds the lease key now, "" when nobody does (the key expired or was released)
// or it cannot be read.
func (l *Leases) holder(ctx context.Context, key string) string {
	e, err := l.kv.Get(ctx, key)
	if err != nil {
		return ""
	}
	var v leaseValue
	if json.Unmarshal(e.Value(), &v) != nil {
		return ""
	}
	return v.Worker
}

// Release deletes the lease key if it is still at the lease's revision, so the claims of this incarnation that are
// left become free at once. The lease is invalid afterwards, whatever the outcome. Call it after the tasks stopped.
// Errors: ErrLeaseLost when the key is not ours any more (nothing is deleted), or the request failed (the key then
// expires within TTL).
func (l *Leases) Release(ctx context.Context, lease *Lease) error {
	key := lease.Worker
	lease.mu.Lock()
	rev := lease.revision
	lease.deadline = time.Time{}
	lease.mu.Unlock()
	if err := l.kv.Delete(ctx, key, jetstream.LastRevision(rev)); err != nil {
		if ebjs.IsRevisionConflict(err) {
			return fmt.Errorf("cluster: releasing %s: %w", key, ErrLeaseLost)
		}
		return fmt.Errorf("cluster: releasing %s: %w", key, err)
	}
	l.markDead(lease.Incarnation)
	l.live.forget(key)
	return nil
}

// Valid reports whether now is before the lease's local deadline. Pass time.Now(): with its monotonic reading the
// comparison ignores wall-clock changes. A worker must stop its tasks once Valid is false; this needs no NATS.
func (lease *Lease) Valid(now time.Time) bool {
	lease.mu.Lock()
	defer lease.mu.Unlock()
	return now.Before(lease.deadline)
}

// Deadline is the local deadline: the send time of the last successful acquire or renewal plus Local (zero after
// Release).
func (lease *Lease) Deadline() time.Time {
	lease.mu.Lock()
	defer lease.mu.Unlock()
	return lease.deadline
}

// Claim is this worker's claim of a task, taken under one incarnation of its lease.
type Claim struct {
	Task        rpc.TaskID
	Incarnation string
	revision    uint64
}

func (l *Leases) markDead(incarnation string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dead[incarnation] = true
}

// gone reports whether the server no longer holds the lease incarnation of worker: its key is absent or holds
// another incarnation. Incarnations read gone are remembered, so a takeover of many claims reads the lease once.
func (l *Leases) gone(ctx context.Context, worker, incarnation string) (bool, error) {
	if worker == "" || incarnation == "" || !validKey(worker) {
		return true, nil // not a claim any incarnation can hold
	}
	l.mu.Lock()
	dead := l.dead[incarnation]
	l.mu.Unlock()
	if dead {
		return true, nil
	}
	e, err := l.kv.Get(ctx, worker)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
	case err != nil:
		return false, err
	default:
		var v leaseValue
		if json.Unmarshal(e.Value(), &v) == nil && v.Incarnation == incarnation {
			return false, nil
		}
	}
	l.markDead(incarnation)
	return true, nil
}

// Claim takes task under lease: a compare-and-set create of its claim key, or, when the key names an incarnation
// whose lease the server no longer holds (a dead or restarted worker, or an earlier run of this one), a
// compare-and-set update at the revision read. A claim this incarnation already holds is returned as it is. Errors:
// ErrLeaseHeld when another live incarnation holds the claim, or the request failed; the caller must then assume it
// does not hold it.
func (l *Leases) Claim(ctx context.Context, lease *Lease, task rpc.TaskID) (*Claim, error) {
	key := ClaimKey(task)
	val, _ := json.Marshal(claimValue{Worker: lease.Worker, Incarnation: lease.Incarnation,
		Claimed: stamp(time.Now())})
	rev, err := l.claims.Create(ctx, key, val)
	if ebjs.IsRevisionConflict(err) {
		var e jetstream.KeyValueEntry
		e, err = l.claims.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil, fmt.Errorf("cluster: claiming %s: %w", key, ErrLeaseHeld) // just released: next round
		}
		if err != nil {
			return nil, fmt.Errorf("cluster: claiming %s: %w", key, err)
		}
		var v claimValue
		_ = json.Unmarshal(e.Value(), &v)
		if v.Incarnation == lease.Incarnation {
			// Claimed earlier under this very incarnation (its task was stopped without releasing it): still ours.
			return &Claim{Task: task, Incarnation: lease.Incarnation, revision: e.Revision()}, nil
		}
		dead, gerr := l.gone(ctx, v.Worker, v.Incarnation)
		if gerr != nil {
			return nil, fmt.Errorf("cluster: claiming %s: reading the lease of %s: %w", key, v.Worker, gerr)
		}
		if !dead {
			return nil, fmt.Errorf("cluster: claiming %s: %w", key, ErrLeaseHeld)
		}
		rev, err = l.claims.Update(ctx, key, val, e.Revision())
	}
	if err != nil {
		if ebjs.IsRevisionConflict(err) {
			return nil, fmt.Errorf("cluster: claiming %s: %w", key, ErrLeaseHeld)
		}
		return nil, fmt.Errorf("cluster: claiming %s: %w", key, err)
	}
	return &Claim{Task: task, Incarnation: lease.Incarnation, revision: rev}, nil
}

// Unclaim deletes a claim if it is still at its revision, so another worker can take the task at once. Call it
// after the task stopped. Errors: ErrLeaseLost when the claim moved (nothing is deleted), or the request failed;
// the claim then stays until its incarnation's lease is gone.
func (l *Leases) Unclaim(ctx context.Context, c *Claim) error {
	key := ClaimKey(c.Task)
	if err := l.claims.Delete(ctx, key, jetstream.LastRevision(c.revision)); err != nil {
		if ebjs.IsRevisionConflict(err) {
			return fmt.Errorf("cluster: releasing %s: %w", key, ErrLeaseLost)
		}
		return fmt.Errorf("cluster: releasing %s: %w", key, err)
	}
	l.held.forget(key)
	return nil
}

// parsedClaim is a claim key and value as the claims view decodes them once; ok is false for anything else.
type parsedClaim struct {
	id rpc.TaskID
	v  claimValue
	ok bool
}

func parseClaim(key string, value []byte) any {
	id, ok := ParseClaimKey(key)
	var v claimValue
	if !ok || json.Unmarshal(value, &v) != nil || v.Worker == "" {
		return parsedClaim{}
	}
	return parsedClaim{id: id, v: v, ok: true}
}

// parseLease returns the incarnation of a lease value, "" when it does not decode.
func parseLease(_ string, value []byte) any {
	var v leaseValue
	if json.Unmarshal(value, &v) != nil {
		return ""
	}
	return v.Incarnation
}

// liveIncarnations returns the incarnations whose lease this worker saw written within TTL.
func (l *Leases) liveIncarnations() map[string]bool {
	live := map[string]bool{}
	l.live.each(func(_ string, e viewEntry) {
		if inc, _ := e.parsed.(string); inc != "" {
			live[inc] = true
		}
	})
	return live
}

// Holders returns the holder (worker id) of every claim whose incarnation's lease this worker saw written within
// TTL, from watchers of both buckets. A worker that stopped renewing its lease stays listed until TTL after its last
// renewal was seen; then its claims are not listed, and Claim takes them after checking the server. Keys that are
// not claim keys or whose value does not decode are skipped.
func (l *Leases) Holders(ctx context.Context) (map[rpc.TaskID]string, error) {
	live := l.liveIncarnations()
	out := make(map[rpc.TaskID]string, l.held.size())
	l.held.each(func(_ string, e viewEntry) {
		if c, _ := e.parsed.(parsedClaim); c.ok && live[c.v.Incarnation] {
			out[c.id] = c.v.Worker
		}
	})
	return out, ctx.Err()
}

// Version changes whenever Holders may answer differently: a claim was written or deleted, or the set of live
// incarnations changed. A caller that saw the same version before need not read Holders again.
func (l *Leases) Version() string {
	live := slices.Sorted(maps.Keys(l.liveIncarnations()))
	return strconv.FormatUint(l.held.version(), 10) + ":" + strings.Join(live, ",")
}

// Orphans returns the claims of incarnations this worker has not seen alive within TTL, with their revisions, for
// a sweep of claims whose tasks no longer exist (Drop).
func (l *Leases) Orphans() map[rpc.TaskID]uint64 {
	live := l.liveIncarnations()
	out := map[rpc.TaskID]uint64{}
	l.held.each(func(_ string, e viewEntry) {
		if c, _ := e.parsed.(parsedClaim); c.ok && !live[c.v.Incarnation] {
			out[c.id] = e.revision
		}
	})
	return out
}

// Drop deletes the claim of task at revision rev once the server no longer holds its incarnation's lease: the
// task no longer exists and its holder died. It reports whether it deleted the claim.
func (l *Leases) Drop(ctx context.Context, task rpc.TaskID, rev uint64) (bool, error) {
	key := ClaimKey(task)
	e, err := l.claims.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if e.Revision() != rev {
		return false, nil
	}
	var v claimValue
	_ = json.Unmarshal(e.Value(), &v)
	if dead, err := l.gone(ctx, v.Worker, v.Incarnation); err != nil || !dead {
		return false, err
	}
	if err := l.claims.Delete(ctx, key, jetstream.LastRevision(rev)); err != nil {
		if ebjs.IsRevisionConflict(err) {
			return false, nil
		}
		return false, err
	}
	l.held.forget(key)
	return true, nil
}
