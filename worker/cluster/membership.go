// Package cluster holds what the workers of one cluster share over NATS JetStream KV: membership (who is alive),
// task leases (who runs a task) and the assignment of tasks to members.
//
// Expiry is always enforced by the server, through the bucket's max age (KeyValueConfig.TTL, the stream's MaxAge):
// every write, a heartbeat or a lease renewal, is a new message that the server removes max age after it stored it,
// whatever happens to the writer. Per-key TTLs are not used on purpose: jetstream.KeyValue.Update writes no TTL, so
// the first renewal of a key created with a TTL would make it immortal. The server refuses a max age under 100ms and
// checks ages at most every 250ms, so a key vanishes between max age and about max age + 350ms after its last write.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/stream"
)

// MembersBucketPurpose names the KV bucket of worker membership: Names.Bucket(MembersBucketPurpose).
const MembersBucketPurpose = "members"

// Defaults of MembershipConfig.
const (
	DefaultHeartbeat = 500 * time.Millisecond
	DefaultExpiry    = 2 * time.Second
)

// Member describes one live worker. Its key in the members bucket is ID.
type Member struct {
	ID string `json:"id"`
	// URL is the worker's REST URL.
	URL     string    `json:"url"`
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	// LastHeartbeat is when the server stored the member's last heartbeat (filled by Live; not stored).
	LastHeartbeat time.Time `json:"-"`
}

// MembershipConfig configures Join.
type MembershipConfig struct {
	JetStream jetstream.JetStream
	Names     stream.Names
	// Self is this worker; Self.ID must be a valid KV key (letters, digits, '-', '_', '=', '/', inner dots).
	Self Member
	// Heartbeat is the interval between two writes of Self (default 500ms); it must be shorter than Expiry.
	Heartbeat time.Duration
	// Expiry is the max age of the members bucket (default 2s): the server removes a member's key Expiry after its
	// last heartbeat. The server refuses less than 100ms. It is a bucket setting: every worker of a cluster must use
	// the same value, the last one to join wins.
	Expiry time.Duration
	// Replicas of the bucket (default 1).
	Replicas int
	// Logger receives heartbeat failures (default: discarded).
	Logger *slog.Logger
}

func (c MembershipConfig) withDefaults() MembershipConfig {
	if c.Heartbeat == 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.Expiry == 0 {
		c.Expiry = DefaultExpiry
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports the first invalid field; zero durations and replicas stand for their defaults.
func (c MembershipConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.JetStream == nil:
		return errors.New("cluster: membership: JetStream is required")
	case !validKey(c.Self.ID):
		return fmt.Errorf("cluster: membership: worker id %q is not a valid KV key", c.Self.ID)
	case c.Heartbeat < 0 || c.Expiry < 0:
		return errors.New("cluster: membership: Heartbeat and Expiry must be positive")
	case c.Expiry < 100*time.Millisecond:
		return fmt.Errorf("cluster: membership: Expiry %v is below the server's minimum max age of 100ms", c.Expiry)
	case c.Heartbeat >= c.Expiry:
		return fmt.Errorf("cluster: membership: Heartbeat %v must be shorter than Expiry %v", c.Heartbeat, c.Expiry)
	case c.Replicas < 1:
		return errors.New("cluster: membership: Replicas must be positive")
	}
	return nil
}

// Membership is this worker's entry in the members bucket, kept alive by a heartbeat goroutine until Leave.
type Membership struct {
	cfg MembershipConfig
	kv  jetstream.KeyValue
	val []byte

	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan struct{}
	view     *view
}

// Join ensures the members bucket (max age cfg.Expiry, enforced by the server), writes cfg.Self at once and then
// every cfg.Heartbeat in a goroutine until Leave. It blocks for the bucket and the first write only; ctx bounds
// those, not the heartbeats. It returns an error when cfg is invalid, the bucket cannot be ensured or the first write
// fails; later heartbeat failures are logged and retried at the next beat.
func Join(ctx context.Context, cfg MembershipConfig) (*Membership, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	bucket := cfg.Names.Bucket(MembersBucketPurpose)
	kv, err := cfg.JetStream.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      bucket,
		Description: "live workers; a key expires when its worker stops heartbeating",
		History:     1,
		TTL:         cfg.Expiry,
		// Membership is rebuilt by the next heartbeat after a server restart; no need to write it to disk.
		Storage:  jetstream.MemoryStorage,
		Replicas: cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: ensuring KV bucket %s: %w", bucket, err)
	}
	val, err := json.Marshal(cfg.Self)
	if err != nil {
		return nil, fmt.Errorf("cluster: encoding member %s: %w", cfg.Self.ID, err)
	}
	if _, err := kv.Put(ctx, cfg.Self.ID, val); err != nil {
		return nil, fmt.Errorf("cluster: joining as %s: %w", cfg.Self.ID, err)
	}
	members, err := watchView(ctx, kv, cfg.Expiry, parseMember)
	if err != nil {
		return nil, fmt.Errorf("cluster: following KV bucket %s: %w", bucket, err)
	}
	if err := members.wait(ctx); err != nil {
		members.stop()
		return nil, fmt.Errorf("cluster: reading KV bucket %s: %w", bucket, err)
	}
	hctx, cancel := context.WithCancel(context.Background())
	m := &Membership{cfg: cfg, kv: kv, val: val, cancel: cancel, done: make(chan struct{}), view: members}
	go m.heartbeat(hctx)
	return m, nil
}

// heartbeat writes Self every Heartbeat until ctx is cancelled. A write gets at most Expiry: after that the key is
// gone anyway and the next beat recreates it.
func (m *Membership) heartbeat(ctx context.Context) {
	defer close(m.done)
	tick := time.NewTicker(m.cfg.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		pctx, cancel := context.WithTimeout(ctx, m.cfg.Expiry)
		_, err := m.kv.Put(pctx, m.cfg.Self.ID, m.val)
		cancel()
		if err != nil && ctx.Err() == nil {
			m.cfg.Logger.Warn("cluster: heartbeat failed", "worker", m.cfg.Self.ID, "bucket", m.kv.Bucket(), "err", err)
		}
	}
}

// stop ends the heartbeat goroutine and waits for it, so no write of Self lands after it returns. Idempotent.
func (m *Membership) stop() {
	m.stopOnce.Do(m.cancel)
	<-m.done
}

// Live returns the members whose heartbeat this worker saw within Expiry, sorted by ID, from a watcher of the
// members bucket that follows every heartbeat; a member that leaves is removed at once. A member that stopped
// heartbeating stays listed until Expiry after its last beat was seen. Entries that do not decode are skipped.
// Each heartbeat is decoded once, when the watcher delivers it: the runtime loop asks ten times a second.
func (m *Membership) Live(ctx context.Context) ([]Member, error) {
	var out []Member
	var bad []string
	m.view.each(func(key string, e viewEntry) {
		mem, ok := e.parsed.(Member)
		if !ok {
			bad = append(bad, key)
			return
		}
		mem.LastHeartbeat = e.written
		out = append(out, mem)
	})
	for _, key := range bad {
		m.cfg.Logger.Warn("cluster: skipping an undecodable member", "key", key)
	}
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return out, ctx.Err()
}

// parseMember decodes a member's heartbeat (viewEntry.parsed): a Member, or nil when it does not decode or names
// another key.
func parseMember(key string, value []byte) any {
	var mem Member
	if json.Unmarshal(value, &mem) != nil || mem.ID != key {
		return nil
	}
	return mem
}

// Leave stops heartbeating and deletes this worker's key, so the other workers see the departure at once instead
// of after Expiry. It blocks until the heartbeat goroutine has ended. Calling it again only retries the delete. An
// error means the delete failed; the key then expires by itself within Expiry.
func (m *Membership) Leave(ctx context.Context) error {
	m.stop()
	defer m.view.stop()
	if err := m.kv.Delete(ctx, m.cfg.Self.ID); err != nil {
		return fmt.Errorf("cluster: leaving as %s: %w", m.cfg.Self.ID, err)
	}
	return nil
}

// validKey reports whether s is a valid KV key: the characters jetstream accepts, no empty dot-separated token.
func validKey(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '-' || r == '_' || r == '=' || r == '/' || r == '.':
		default:
			return false
		}
	}
	return true
}
