package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
)

// LeasesBucketPurpose names the KV bucket of task leases: Names.Bucket(LeasesBucketPurpose).
const LeasesBucketPurpose = "leases"

// Defaults of LeaseConfig.
const (
	DefaultLeaseTTL   = 2500 * time.Millisecond
	DefaultLeaseLocal = 2 * time.Second
)

// leaseHistory is the number of revisions kept per lease key, so operators and tests can read recent holders.
const leaseHistory = 5

var (
	// ErrLeaseHeld is returned by Acquire when another live lease exists for the task.
	ErrLeaseHeld = errors.New("lease held by another worker")
	// ErrLeaseLost is returned by Renew and Release when the lease key is no longer at the lease's revision: it
	// expired on the server, or another worker has taken it since. Renew tells which with a *LostError.
	ErrLeaseLost = errors.New("lease lost")
)

// LostError says why Renew found a lease lost: the key expired on the server before the renewal arrived (Holder
// empty), or another worker holds it now (Holder names it). It matches ErrLeaseLost.
type LostError struct {
	Key    string
	Holder string
}

func (e *LostError) Error() string {
	if e.Holder == "" {
		return fmt.Sprintf("cluster: renewing %s: %v: it expired before the renewal arrived", e.Key, ErrLeaseLost)
	}
	return fmt.Sprintf("cluster: renewing %s: %v: worker %s holds it now", e.Key, ErrLeaseLost, e.Holder)
}

func (e *LostError) Unwrap() error { return ErrLeaseLost }

// Why is the reason for logs: "expired before it was renewed" or "was taken by worker <id>".
func (e *LostError) Why() string {
	if e.Holder == "" {
		return "expired before it was renewed (its renewals came too late: the worker or NATS was slow)"
	}
	return "was taken by worker " + e.Holder
}

// LeaseKey is the key of a task's lease: <connector>.<task>. Connector names may contain dots; the task number is
// always after the last one. The connector name must itself be valid in a KV key.
func LeaseKey(id rpc.TaskID) string { return id.Connector + "." + strconv.Itoa(id.Task) }

// ParseLeaseKey is the inverse of LeaseKey: it splits key at its last dot. It reports false for anything LeaseKey
// does not produce (no dot, empty connector, a task that is not a canonical non-negative integer).
func ParseLeaseKey(key string) (rpc.TaskID, bool) {
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
	Names     stream.Names
	// WorkerID is written into every lease this worker takes; it must be non-empty.
	WorkerID string
	// TTL is the max age of the leases bucket (default 2.5s): the server removes a lease key TTL after its last
	// write. It is a bucket setting: every worker of a cluster must use the same value.
	TTL time.Duration
	// Local is how long a lease stays valid on this worker after its last acquire or renewal was sent (default 2s).
	// It must be shorter than TTL: the margin covers the server's expiry being at most late, never early, and the
	// clock rates of the two machines.
	Local time.Duration
	// Replicas of the bucket (default 1).
	Replicas int
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
	case c.TTL < 100*time.Millisecond:
		return fmt.Errorf("cluster: leases: TTL %v is below the server's minimum max age of 100ms", c.TTL)
	case c.Local <= 0 || c.Local >= c.TTL:
		return fmt.Errorf("cluster: leases: Local %v must be positive and shorter than TTL %v", c.Local, c.TTL)
	case c.Replicas < 1:
		return errors.New("cluster: leases: Replicas must be positive")
	}
	return nil
}

// Leases takes, renews and releases task leases of one worker. It is safe for concurrent use.
type Leases struct {
	cfg  LeaseConfig
	kv   jetstream.KeyValue
	view *view
}

// OpenLeases ensures the leases bucket (max age cfg.TTL, enforced by the server; history 5; file storage, so a
// restarted server still knows who holds what). Errors: an invalid cfg, or the bucket could not be ensured.
func OpenLeases(ctx context.Context, cfg LeaseConfig) (*Leases, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	bucket := cfg.Names.Bucket(LeasesBucketPurpose)
	kv, err := cfg.JetStream.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      bucket,
		Description: "task leases; a key expires when its holder stops renewing",
		History:     leaseHistory,
		TTL:         cfg.TTL,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: ensuring KV bucket %s: %w", bucket, err)
	}
	leases, err := watchView(ctx, kv, cfg.TTL)
	if err != nil {
		return nil, fmt.Errorf("cluster: following KV bucket %s: %w", bucket, err)
	}
	if err := leases.wait(ctx); err != nil {
		leases.stop()
		return nil, fmt.Errorf("cluster: reading KV bucket %s: %w", bucket, err)
	}
	return &Leases{cfg: cfg, kv: kv, view: leases}, nil
}

// Close stops following the bucket.
func (l *Leases) Close() { l.view.stop() }

// Lease is a task lease held by this worker. Its methods are safe for concurrent use: one goroutine may renew while
// another checks Valid.
type Lease struct {
	Task rpc.TaskID

	mu       sync.Mutex
	acquired time.Time
	revision uint64
	// deadline is the send time of the last successful acquire or renewal plus Local. It keeps the monotonic
	// reading of time.Now, so wall-clock jumps on this machine do not move it.
	deadline time.Time
}

// leaseValue is the JSON value of a lease key.
type leaseValue struct {
	Worker   string `json:"worker"`
	Acquired string `json:"acquired"`
	Renewed  string `json:"renewed"`
}

func (l *Leases) encode(acquired, renewed time.Time) []byte {
	b, _ := json.Marshal(leaseValue{
		Worker:   l.cfg.WorkerID,
		Acquired: acquired.UTC().Format(time.RFC3339Nano),
		Renewed:  renewed.UTC().Format(time.RFC3339Nano),
	})
	return b
}

// Acquire takes the lease of task with a compare-and-set create: it succeeds only when no live lease exists (the key
// is absent, deleted or expired). The lease is valid for Local from the moment the request was sent. Errors:
// ErrLeaseHeld when another lease is live (also when this worker already holds it under another *Lease), or the
// request failed (an invalid key included); the caller must then assume it does not hold the lease.
func (l *Leases) Acquire(ctx context.Context, task rpc.TaskID) (*Lease, error) {
	key := LeaseKey(task)
	sent := time.Now()
	rev, err := l.kv.Create(ctx, key, l.encode(sent, sent))
	if err != nil {
		if ebjs.IsRevisionConflict(err) {
			return nil, fmt.Errorf("cluster: acquiring %s: %w", key, ErrLeaseHeld)
		}
		return nil, fmt.Errorf("cluster: acquiring %s: %w", key, err)
	}
	return &Lease{Task: task, acquired: sent, revision: rev, deadline: sent.Add(l.cfg.Local)}, nil
}

// Renew extends lease with a compare-and-set update at its last revision, which also restarts the server's expiry of
// the key. On success the local deadline moves to the send time of this request plus Local; on any error it stays.
// Errors: a *LostError (matching ErrLeaseLost) when the key is not at the lease's revision any more, saying whether
// it expired or which worker holds it now, after which the lease can never be renewed again; other errors (timeouts, no connection) may be retried while
// Valid holds. A lease whose local deadline passed is still renewed if the key is still ours: nobody else can have
// held it meanwhile.
func (l *Leases) Renew(ctx context.Context, lease *Lease) error {
	key := LeaseKey(lease.Task)
	lease.mu.Lock()
	rev, acquired := lease.revision, lease.acquired
	lease.mu.Unlock()
	sent := time.Now()
	next, err := l.kv.Update(ctx, key, l.encode(acquired, sent), rev)
	if err != nil {
		if ebjs.IsRevisionConflict(err) {
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

// holder returns the worker that holds key now, "" when nobody does (the key expired or was released) or it cannot
// be read.
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

// Release deletes the lease key if it is still at the lease's revision, so another worker can take the task at once.
// The lease is invalid afterwards, whatever the outcome. Errors: ErrLeaseLost when the key is not ours any more
// (nothing is deleted), or the request failed (the key then expires within TTL).
func (l *Leases) Release(ctx context.Context, lease *Lease) error {
	key := LeaseKey(lease.Task)
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
	return nil
}

// Valid reports whether now is before the lease's local deadline. Pass time.Now(): with its monotonic reading the
// comparison ignores wall-clock changes. A worker must stop the task once Valid is false; this needs no NATS.
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

// Holders returns the holder (worker id) of every lease this worker saw written within TTL, from a watcher of the
// leases bucket that follows every acquire, renewal and release. A lease whose holder stopped renewing stays listed
// until TTL after its last renewal was seen. Keys that are not lease keys or whose value does not decode are skipped.
func (l *Leases) Holders(ctx context.Context) (map[rpc.TaskID]string, error) {
	out := map[rpc.TaskID]string{}
	for key, e := range l.view.present() {
		id, ok := ParseLeaseKey(key)
		if !ok {
			continue
		}
		var v leaseValue
		if json.Unmarshal(e.value, &v) != nil || v.Worker == "" {
			continue
		}
		out[id] = v.Worker
	}
	return out, ctx.Err()
}
