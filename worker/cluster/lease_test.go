package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/cluster"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// Short durations keep the tests fast; the margin TTL-Local is the one the defaults have (500ms) scaled down.
const (
	testTTL   = 700 * time.Millisecond
	testLocal = 500 * time.Millisecond
)

var testNames = stream.Names{Cluster: "t"}

func openLeases(t *testing.T, js jetstream.JetStream, worker string) *cluster.Leases {
	t.Helper()
	l, err := cluster.OpenLeases(context.Background(), cluster.LeaseConfig{
		JetStream: js, Names: testNames, WorkerID: worker, TTL: testTTL, Local: testLocal,
	})
	require.NoError(t, err)
	return l
}

// keepRenewing renews lease every quarter of the TTL until the test ends, as a live worker does.
func keepRenewing(t *testing.T, l *cluster.Leases, lease *cluster.Lease) {
	t.Helper()
	done := make(chan struct{})
	stopped := make(chan struct{})
	t.Cleanup(func() { close(done); <-stopped })
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-time.After(testTTL / 4):
				_ = l.Renew(context.Background(), lease)
			}
		}
	}()
}

func bucket(t *testing.T, js jetstream.JetStream, purpose string) jetstream.KeyValue {
	t.Helper()
	kv, err := js.KeyValue(context.Background(), testNames.Bucket(purpose))
	require.NoError(t, err)
	return kv
}

// poll is one read of a key: when it started and ended, and whether the key was there.
type poll struct {
	start, end time.Time
	present    bool
}

// pollUntilGone reads key every 10ms until it is absent and returns every read; it fails the test if the key is
// still there at limit.
func pollUntilGone(t *testing.T, kv jetstream.KeyValue, key string, limit time.Time) []poll {
	t.Helper()
	var polls []poll
	for {
		p := poll{start: time.Now()}
		_, err := kv.Get(context.Background(), key)
		p.end = time.Now()
		switch {
		case err == nil:
			p.present = true
		case errors.Is(err, jetstream.ErrKeyNotFound):
		default:
			t.Fatalf("reading %s: %v", key, err)
		}
		polls = append(polls, p)
		if !p.present {
			return polls
		}
		if p.start.After(limit) {
			t.Fatalf("key %s still present %v after the limit", key, p.start.Sub(limit))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkExpiry asserts that key, last written at written (server time), was read present by every poll that started
// before written+ttl-200ms (there must be one), and vanished by written+ttl+1s. It returns the bounds of the
// vanishing instant measured from the write: after the last present read started, before the absent read ended.
func checkExpiry(t *testing.T, kv jetstream.KeyValue, key string, written time.Time, ttl time.Duration) (lo, hi time.Duration) {
	t.Helper()
	polls := pollUntilGone(t, kv, key, written.Add(ttl+time.Second))
	early := written.Add(ttl - 200*time.Millisecond)
	checked := 0
	for _, p := range polls {
		if p.start.Before(early) {
			checked++
			assert.True(t, p.present, "key %s vanished %v after its last write, before ttl-200ms", key, p.start.Sub(written))
		}
	}
	require.NotZero(t, checked, "no read of %s before ttl-200ms; the test ran too slowly to check", key)
	gone := polls[len(polls)-1]
	lo, hi = 0, gone.end.Sub(written)
	if len(polls) > 1 {
		lo = polls[len(polls)-2].start.Sub(written)
	}
	return lo, hi
}

func TestClaimKey(t *testing.T) {
	t.Parallel()
	valid := []struct {
		name string
		id   rpc.TaskID
		key  string
	}{
		{"plain", rpc.TaskID{Connector: "router", Task: 0}, "router.0"},
		{"dotted connector", rpc.TaskID{Connector: "eb.acc.bus.rule.target", Task: 12}, "eb.acc.bus.rule.target.12"},
		{"connector ending in digits", rpc.TaskID{Connector: "eb.7", Task: 3}, "eb.7.3"},
	}
	for _, tc := range valid {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.key, cluster.ClaimKey(tc.id))
			id, ok := cluster.ParseClaimKey(tc.key)
			require.True(t, ok)
			assert.Equal(t, tc.id, id)
		})
	}
	for _, key := range []string{"", "router", "router.", ".3", "router.x", "router.-1", "router.01", "router.+1", "a.b.1.5x"} {
		t.Run("invalid "+key, func(t *testing.T) {
			t.Parallel()
			_, ok := cluster.ParseClaimKey(key)
			assert.False(t, ok, "ParseClaimKey(%q)", key)
		})
	}
}

func TestLeaseConfigValidate(t *testing.T) {
	t.Parallel()
	js := jetstreamtest.Start(t).JS
	cases := []struct {
		name string
		cfg  cluster.LeaseConfig
		ok   bool
	}{
		{"defaults", cluster.LeaseConfig{JetStream: js, WorkerID: "w"}, true},
		{"no worker", cluster.LeaseConfig{JetStream: js}, false},
		{"no JetStream", cluster.LeaseConfig{WorkerID: "w"}, false},
		{"worker id not a key", cluster.LeaseConfig{JetStream: js, WorkerID: "w 1"}, false},
		{"local equals TTL", cluster.LeaseConfig{JetStream: js, WorkerID: "w", TTL: time.Second, Local: time.Second}, false},
		{"local over default TTL", cluster.LeaseConfig{JetStream: js, WorkerID: "w", Local: 3 * time.Second}, false},
		{"TTL under the server minimum", cluster.LeaseConfig{JetStream: js, WorkerID: "w", TTL: 50 * time.Millisecond, Local: 10 * time.Millisecond}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

func TestOpenLeasesBucketConfig(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	openLeases(t, env.JS, "a")
	st, err := bucket(t, env.JS, cluster.LeasesBucketPurpose).Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, testTTL, st.TTL(), "max age of the leases bucket")
	assert.GreaterOrEqual(t, st.History(), int64(5))
	st, err = bucket(t, env.JS, cluster.ClaimsBucketPurpose).Status(ctx)
	require.NoError(t, err)
	assert.Zero(t, st.TTL(), "claims live as long as their incarnation's lease, not by age")

	// Defaults: TTL 2.5s. The server keeps the max age exactly as given (no rounding).
	_, err = cluster.OpenLeases(ctx, cluster.LeaseConfig{JetStream: env.JS, Names: stream.Names{Cluster: "d"}, WorkerID: "a"})
	require.NoError(t, err)
	kv, err := env.JS.KeyValue(ctx, "d_leases")
	require.NoError(t, err)
	st, err = kv.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, cluster.DefaultLeaseTTL, st.TTL())
}

// The server, not the client, enforces the minimum max age: it refuses a bucket with TTL under 100ms.
func TestServerRefusesMaxAgeUnder100ms(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	_, err := env.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "tiny", TTL: 99 * time.Millisecond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "max age needs to be >= 100ms")
	kv, err := env.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "small", TTL: 100 * time.Millisecond})
	require.NoError(t, err)
	st, err := kv.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 100*time.Millisecond, st.TTL())
}

// Renewals are updates of the worker's one key, whatever the number of its claims; the server keeps expiring the
// key after each of them, and the key vanishes about TTL after the last one. The claims stay written, but count for
// nothing once their incarnation's lease is gone: another worker takes them.
func TestLeaseRenewalsKeepTheKeyAndTheServerExpiresItAfterTheLast(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	a, b := openLeases(t, env.JS, "a"), openLeases(t, env.JS, "b")
	kv := bucket(t, env.JS, cluster.LeasesBucketPurpose)

	lease, err := a.Acquire(ctx)
	require.NoError(t, err)
	var tasks []rpc.TaskID
	for i := range 50 {
		task := rpc.TaskID{Connector: "eb.acc.bus.router", Task: i}
		_, err := a.Claim(ctx, lease, task)
		require.NoError(t, err)
		tasks = append(tasks, task)
	}
	writes := func(purpose string) uint64 {
		st, err := env.JS.Stream(ctx, "KV_"+testNames.Bucket(purpose))
		require.NoError(t, err)
		info, err := st.Info(ctx)
		require.NoError(t, err)
		return info.State.LastSeq
	}
	before := writes(cluster.LeasesBucketPurpose)
	start := time.Now()
	renewals := 0
	for time.Since(start) < 3*testTTL {
		time.Sleep(testTTL / 4)
		require.NoError(t, a.Renew(ctx, lease))
		renewals++
		_, err := kv.Get(ctx, "a")
		require.NoError(t, err, "lease key gone %v after acquiring, while renewed", time.Since(start))
	}
	require.True(t, lease.Valid(time.Now()))
	assert.EqualValues(t, renewals, writes(cluster.LeasesBucketPurpose)-before, "one write per renewal, not one per claim")
	assert.EqualValues(t, len(tasks), writes(cluster.ClaimsBucketPurpose), "claims are written once")

	// The value and the history: same holder, incarnation and acquisition time, renewal times moving on.
	hist, err := kv.History(ctx, "a")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(hist), 2)
	var prev struct{ Worker, Incarnation, Acquired, Renewed string }
	for i, e := range hist {
		var v struct{ Worker, Incarnation, Acquired, Renewed string }
		require.NoError(t, json.Unmarshal(e.Value(), &v))
		assert.Equal(t, "a", v.Worker)
		assert.Equal(t, lease.Incarnation, v.Incarnation)
		_, err := time.Parse(time.RFC3339Nano, v.Renewed)
		require.NoError(t, err)
		if i > 0 {
			assert.Equal(t, prev.Acquired, v.Acquired)
			assert.Greater(t, v.Renewed, prev.Renewed)
		}
		prev = v
	}
	lb, err := b.Acquire(ctx)
	require.NoError(t, err)
	keepRenewing(t, b, lb)
	_, err = b.Claim(ctx, lb, tasks[0])
	require.ErrorIs(t, err, cluster.ErrLeaseHeld, "a's lease is live")

	last, err := kv.Get(ctx, "a")
	require.NoError(t, err)
	lo, hi := checkExpiry(t, kv, "a", last.Created(), testTTL)
	t.Logf("lease key (TTL %v) vanished between %v and %v after its last update, %d renewals before", testTTL, lo, hi, renewals)
	assert.False(t, lease.Valid(time.Now()))

	for _, task := range tasks {
		c, err := b.Claim(ctx, lb, task)
		require.NoError(t, err, "another worker takes the claims of an expired lease")
		assert.Equal(t, lb.Incarnation, c.Incarnation)
	}
	require.ErrorIs(t, a.Renew(ctx, lease), cluster.ErrLeaseLost)
}

func TestClaimContention(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// lose ends a's hold of the claim: a released it, a's lease expired, was released, or a restarted.
		lose func(t *testing.T, env *jetstreamtest.Env, a *cluster.Leases, lease *cluster.Lease, c *cluster.Claim) *cluster.Leases
		// takeOver: b claims the task after a lost it.
		takeOver bool
		// renewFails: a's lease cannot be renewed afterwards.
		renewFails bool
	}{
		{name: "unclaimed, taken by b", lose: unclaim, takeOver: true},
		{name: "lease expired, taken by b", lose: expire, takeOver: true, renewFails: true},
		{name: "lease released, taken by b", lose: release, takeOver: true, renewFails: true},
		{name: "a restarted, taken by b", lose: restart, takeOver: true, renewFails: true},
		{name: "lease expired, nobody took it", lose: expire, renewFails: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := jetstreamtest.Start(t)
			ctx := context.Background()
			a, b := openLeases(t, env.JS, "a"), openLeases(t, env.JS, "b")
			la, err := a.Acquire(ctx)
			require.NoError(t, err)
			lb, err := b.Acquire(ctx)
			require.NoError(t, err)
			keepRenewing(t, b, lb)
			task := rpc.TaskID{Connector: "eb.acc.bus.rule.target", Task: 2}

			ca, err := a.Claim(ctx, la, task)
			require.NoError(t, err)
			_, err = b.Claim(ctx, lb, task)
			require.ErrorIs(t, err, cluster.ErrLeaseHeld)
			again, err := a.Claim(ctx, la, task)
			require.NoError(t, err, "a claim of the same incarnation is its own")
			assert.Equal(t, ca.Incarnation, again.Incarnation)
			eventuallyHolders(t, b, map[rpc.TaskID]string{task: "a"})

			tc.lose(t, env, a, la, ca)
			if tc.renewFails {
				require.ErrorIs(t, a.Renew(ctx, la), cluster.ErrLeaseLost)
			} else {
				require.NoError(t, a.Renew(ctx, la))
			}
			if !tc.takeOver {
				eventuallyHolders(t, b, map[rpc.TaskID]string{})
				return
			}
			cb, err := b.Claim(ctx, lb, task)
			require.NoError(t, err)
			assert.ErrorIs(t, a.Unclaim(ctx, ca), cluster.ErrLeaseLost, "a stale release deletes nothing")
			eventuallyHolders(t, a, map[rpc.TaskID]string{task: "b"})
			require.NoError(t, b.Unclaim(ctx, cb))
			eventuallyHolders(t, a, map[rpc.TaskID]string{})
		})
	}
}

func unclaim(t *testing.T, _ *jetstreamtest.Env, a *cluster.Leases, _ *cluster.Lease, c *cluster.Claim) *cluster.Leases {
	t.Helper()
	require.NoError(t, a.Unclaim(context.Background(), c))
	return a
}

func expire(t *testing.T, env *jetstreamtest.Env, a *cluster.Leases, lease *cluster.Lease, _ *cluster.Claim) *cluster.Leases {
	t.Helper()
	kv := bucket(t, env.JS, cluster.LeasesBucketPurpose)
	e, err := kv.Get(context.Background(), lease.Worker)
	require.NoError(t, err)
	checkExpiry(t, kv, lease.Worker, e.Created(), testTTL)
	return a
}

func release(t *testing.T, env *jetstreamtest.Env, a *cluster.Leases, lease *cluster.Lease, _ *cluster.Claim) *cluster.Leases {
	t.Helper()
	require.NoError(t, a.Release(context.Background(), lease))
	_, err := bucket(t, env.JS, cluster.LeasesBucketPurpose).Get(context.Background(), lease.Worker)
	require.ErrorIs(t, err, jetstream.ErrKeyNotFound, "released at once")
	assert.False(t, lease.Valid(time.Now()))
	return a
}

// restart: a new run of worker a takes its key over at once, with a new incarnation.
func restart(t *testing.T, env *jetstreamtest.Env, _ *cluster.Leases, lease *cluster.Lease, _ *cluster.Claim) *cluster.Leases {
	t.Helper()
	a2 := openLeases(t, env.JS, "a")
	next, err := a2.Acquire(context.Background())
	require.NoError(t, err, "a restart need not wait for the key to expire")
	assert.NotEqual(t, lease.Incarnation, next.Incarnation)
	return a2
}

func TestLeaseValidEndsAtTheLocalDeadline(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// serverDown stops NATS right after the lease was taken.
		serverDown bool
	}{
		{name: "not renewed"},
		{name: "NATS shut down", serverDown: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := jetstreamtest.Start(t)
			ctx := context.Background()
			a := openLeases(t, env.JS, "a")
			kv := bucket(t, env.JS, cluster.LeasesBucketPurpose)

			before := time.Now()
			lease, err := a.Acquire(ctx)
			after := time.Now()
			require.NoError(t, err)
			deadline := lease.Deadline()
			// The deadline counts from before the request was sent, on the monotonic clock.
			assert.False(t, deadline.Before(before.Add(testLocal)), "deadline %v before send+Local", deadline)
			assert.False(t, deadline.After(after.Add(testLocal)), "deadline taken after the response")
			assert.Contains(t, deadline.String(), "m=+", "deadline lost its monotonic reading")
			assert.True(t, lease.Valid(time.Now()))
			assert.True(t, lease.Valid(deadline.Add(-time.Nanosecond)))
			assert.False(t, lease.Valid(deadline))

			if tc.serverDown {
				env.Server.Shutdown()
				rctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				err := a.Renew(rctx, lease)
				cancel()
				require.Error(t, err, "renewing without NATS")
				assert.Equal(t, deadline, lease.Deadline(), "a failed renewal moved the deadline")
				for lease.Valid(time.Now()) {
					time.Sleep(5 * time.Millisecond)
				}
				assert.False(t, time.Now().Before(deadline), "Valid turned false at the deadline, not before")
				return
			}

			e, err := kv.Get(ctx, "a")
			require.NoError(t, err)
			polls := pollUntilGone(t, kv, "a", e.Created().Add(testTTL+time.Second))
			require.Greater(t, len(polls), 1)
			lastPresent := polls[len(polls)-2]
			assert.True(t, deadline.Before(lastPresent.start),
				"local deadline %v is not before the key vanished (last seen %v)", deadline, lastPresent.start)
			assert.False(t, lease.Valid(lastPresent.start), "lease valid while its key was about to vanish")
			t.Logf("local deadline came %v before the key was last seen, %v before it was seen gone",
				lastPresent.start.Sub(deadline), polls[len(polls)-1].end.Sub(deadline))
		})
	}
}

// Holders lists the claims of live incarnations only; Orphans lists the others, and Drop deletes one once the
// server confirms its incarnation is gone.
func TestHolders(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	a, b := openLeases(t, env.JS, "a"), openLeases(t, env.JS, "b")
	claims := bucket(t, env.JS, cluster.ClaimsBucketPurpose)
	la, err := a.Acquire(ctx)
	require.NoError(t, err)
	lb, err := b.Acquire(ctx)
	require.NoError(t, err)
	keepRenewing(t, b, lb)

	holders, err := a.Holders(ctx)
	require.NoError(t, err)
	assert.Empty(t, holders, "empty bucket")

	t1 := rpc.TaskID{Connector: "eb.acc.bus.router", Task: 0}
	t2 := rpc.TaskID{Connector: "eb.acc.bus.router", Task: 1}
	t3 := rpc.TaskID{Connector: "sink", Task: 0}
	t4 := rpc.TaskID{Connector: "sink", Task: 1}
	for _, tc := range []struct {
		l     *cluster.Leases
		lease *cluster.Lease
		task  rpc.TaskID
	}{{a, la, t1}, {b, lb, t2}, {a, la, t3}} {
		_, err := tc.l.Claim(ctx, tc.lease, tc.task)
		require.NoError(t, err)
	}
	released, err := b.Claim(ctx, lb, t4)
	require.NoError(t, err)
	require.NoError(t, b.Unclaim(ctx, released))
	_, err = claims.PutString(ctx, "not-a-claim", "{}")
	require.NoError(t, err)
	eventuallyHolders(t, b, map[rpc.TaskID]string{t1: "a", t2: "b", t3: "a"})
	assert.Empty(t, b.Orphans())

	// a dies without releasing: its claims leave Holders once its lease is gone, and become orphans.
	eventuallyHolders(t, b, map[rpc.TaskID]string{t2: "b"})
	orphans := b.Orphans()
	require.Len(t, orphans, 2)
	// The view counts a lease gone TTL after it last saw it written; the server removes it a little later, and Drop
	// waits for the server.
	require.Eventually(t, func() bool {
		dropped, err := b.Drop(ctx, t1, orphans[t1])
		require.NoError(t, err)
		return dropped
	}, 5*time.Second, 20*time.Millisecond)
	_, err = claims.Get(ctx, cluster.ClaimKey(t1))
	assert.ErrorIs(t, err, jetstream.ErrKeyNotFound)
	dropped, err := b.Drop(ctx, t3, orphans[t3]+1)
	require.NoError(t, err)
	assert.False(t, dropped, "a claim at another revision is not dropped")
}

// eventuallyHolders waits until l's view of the holders is want: it follows the buckets through watchers.
func eventuallyHolders(t *testing.T, l *cluster.Leases, want map[rpc.TaskID]string) {
	t.Helper()
	var holders map[rpc.TaskID]string
	ok := assert.Eventually(t, func() bool {
		var err error
		holders, err = l.Holders(context.Background())
		return err == nil && reflect.DeepEqual(holders, want)
	}, 5*time.Second, 5*time.Millisecond)
	if !ok {
		t.Logf("holders: %v, want %v", holders, want)
	}
}

// Keys written one after the other, at different phases of the server's age check: how late after max age does
// the server remove them? The server never removes one early.
func TestServerExpiryPrecision(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	openLeases(t, env.JS, "a")
	kv := bucket(t, env.JS, cluster.LeasesBucketPurpose)

	var worst time.Duration
	var lates []string
	for i := range 5 {
		time.Sleep(time.Duration(i) * 53 * time.Millisecond)
		key := "precision." + string(rune('a'+i))
		rev, err := kv.PutString(ctx, key, "x")
		require.NoError(t, err)
		e, err := kv.Get(ctx, key)
		require.NoError(t, err)
		require.Equal(t, rev, e.Revision())
		lo, hi := checkExpiry(t, kv, key, e.Created(), testTTL)
		assert.GreaterOrEqual(t, hi, testTTL, "key %s expired early", key)
		worst = max(worst, hi-testTTL)
		lates = append(lates, (lo-testTTL).Round(time.Millisecond).String()+".."+(hi-testTTL).Round(time.Millisecond).String())
	}
	t.Logf("max age %v: keys vanished after max age + [%s]; worst observed lateness %v",
		testTTL, strings.Join(lates, ", "), worst.Round(time.Millisecond))
}

// TestRenewTellsExpiredFromTaken: a renewal that finds the worker's lease lost says why, so that the log does not
// claim another worker took a lease that only expired: the key expired on the server (no holder), or another run of
// the worker holds it now (named). Both match ErrLeaseLost.
func TestRenewTellsExpiredFromTaken(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	a := openLeases(t, env.JS, "a")
	kv := bucket(t, env.JS, cluster.LeasesBucketPurpose)

	lease, err := a.Acquire(ctx)
	require.NoError(t, err)
	pollUntilGone(t, kv, "a", time.Now().Add(5*testTTL))
	err = a.Renew(ctx, lease)
	require.ErrorIs(t, err, cluster.ErrLeaseLost)
	var lost *cluster.LostError
	require.ErrorAs(t, err, &lost)
	assert.Empty(t, lost.Holder)
	assert.Contains(t, lost.Why(), "expired before it was renewed")

	lease, err = a.Acquire(ctx)
	require.NoError(t, err)
	_, err = openLeases(t, env.JS, "a").Acquire(ctx)
	require.NoError(t, err)
	err = a.Renew(ctx, lease)
	require.ErrorIs(t, err, cluster.ErrLeaseLost)
	require.ErrorAs(t, err, &lost)
	assert.Equal(t, "a", lost.Holder)
	assert.Contains(t, lost.Why(), "taken over by another run of worker a")
}

// A renewal that was stored after its caller stopped waiting (a starved worker) leaves the key at a later revision
// than the lease knows, still holding its incarnation: the next renewal renews at that revision instead of taking
// the lease for lost. A key holding another incarnation is still lost.
func TestRenewAfterARenewalStoredLate(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	a := openLeases(t, env.JS, "a")
	kv := bucket(t, env.JS, cluster.LeasesBucketPurpose)

	lease, err := a.Acquire(ctx)
	require.NoError(t, err)
	// What a late renewal does: the same incarnation, stored at the next revision behind the lease's back.
	e, err := kv.Get(ctx, "a")
	require.NoError(t, err)
	_, err = kv.Update(ctx, "a", e.Value(), e.Revision())
	require.NoError(t, err)
	require.NoError(t, a.Renew(ctx, lease), "the key still holds this incarnation")
	require.NoError(t, a.Renew(ctx, lease), "and the lease knows its revision now")
	assert.True(t, lease.Valid(time.Now()))

	// Another run of worker a took the key over: lost.
	_, err = openLeases(t, env.JS, "a").Acquire(ctx)
	require.NoError(t, err)
	require.ErrorIs(t, a.Renew(ctx, lease), cluster.ErrLeaseLost)
}

// A renewal's value is as long as the one it replaces whatever the time, so the bytes the leases bucket stores do
// not change while a worker only renews (the storage meter reads every installation stream when they change), and
// its times read back as written.
func TestLeaseValueHasOneLengthWhateverTheTime(t *testing.T) {
	acquired := time.Date(2026, 12, 5, 22, 0, 0, 123456789, time.UTC)
	want := len(cluster.LeaseValue("w1", "inc", acquired, acquired))
	for _, renewed := range []time.Time{
		acquired.Add(time.Second), acquired.Truncate(time.Second), acquired.Truncate(time.Millisecond),
		acquired.Add(-3 * time.Nanosecond), time.Date(2026, 12, 5, 22, 0, 0, 0, time.FixedZone("CET", 3600)),
	} {
		v := cluster.LeaseValue("w1", "inc", acquired, renewed)
		assert.Equal(t, want, len(v), "%s", v)
		var got struct{ Acquired, Renewed string }
		require.NoError(t, json.Unmarshal(v, &got))
		at, err := time.Parse(time.RFC3339Nano, got.Renewed)
		require.NoError(t, err)
		assert.True(t, at.Equal(renewed), "%s read back as %s", renewed, at)
		at, err = time.Parse(time.RFC3339Nano, got.Acquired)
		require.NoError(t, err)
		assert.True(t, at.Equal(acquired))
	}
}

// The leases bucket keeps the TTL it was created with: a worker configured for another is refused with an error that
// names both, and leaves the bucket as it was (shortening it would make a running worker's lease vanish on the
// server while that worker still ran its tasks); one configured for the same opens it.
func TestLeasesBucketKeepsItsTTL(t *testing.T) {
	js := jetstreamtest.Start(t).JS
	ctx := context.Background()
	l := openLeases(t, js, "w1")
	defer l.Close()
	for _, ttl := range []time.Duration{testTTL / 2, 2 * testTTL} {
		_, err := cluster.OpenLeases(ctx, cluster.LeaseConfig{
			JetStream: js, Names: testNames, WorkerID: "w2", TTL: ttl, Local: testLocal / 2,
		})
		require.Error(t, err, "a TTL of %v", ttl)
		assert.Contains(t, err.Error(), testNames.Bucket(cluster.LeasesBucketPurpose))
		assert.Contains(t, err.Error(), testTTL.String(), "names the bucket's TTL")
		assert.Contains(t, err.Error(), ttl.String(), "names the worker's")
		assert.Contains(t, err.Error(), "every worker of a cluster must use the same lease TTL")
		st, err := bucket(t, js, cluster.LeasesBucketPurpose).Status(ctx)
		require.NoError(t, err)
		assert.Equal(t, testTTL, st.TTL(), "the bucket is left as it was")
	}
	same := openLeases(t, js, "w2")
	same.Close()
}

// Workers starting together on a new cluster with different TTLs: the bucket gets one of them, and every worker
// configured otherwise is refused.
func TestLeasesBucketCreatedOnceByWorkersStartingTogether(t *testing.T) {
	js := jetstreamtest.Start(t).JS
	ctx := context.Background()
	ttls := []time.Duration{testTTL, 2 * testTTL, testTTL, 2 * testTTL, testTTL, 2 * testTTL}
	errs := make([]error, len(ttls))
	opened := make([]*cluster.Leases, len(ttls))
	start := make(chan struct{})
	done := make(chan int)
	for i, ttl := range ttls {
		go func() {
			<-start
			opened[i], errs[i] = cluster.OpenLeases(ctx, cluster.LeaseConfig{
				JetStream: js, Names: testNames, WorkerID: "w" + strconv.Itoa(i), TTL: ttl, Local: testLocal,
			})
			done <- i
		}()
	}
	close(start)
	for range ttls {
		<-done
	}
	st, err := bucket(t, js, cluster.LeasesBucketPurpose).Status(ctx)
	require.NoError(t, err)
	for i, ttl := range ttls {
		if ttl == st.TTL() {
			assert.NoError(t, errs[i], "w%d, configured as the bucket", i)
			if opened[i] != nil {
				opened[i].Close()
			}
		} else {
			assert.ErrorContains(t, errs[i], "every worker of a cluster must use the same lease TTL",
				"w%d, configured for %v, the bucket keeps %v", i, ttl, st.TTL())
		}
	}
}

// A sole worker (no other can reach the server) makes the leases bucket take its TTL: none runs with the old one.
func TestSoleWorkerChangesTheLeasesTTL(t *testing.T) {
	js := jetstreamtest.Start(t).JS
	ctx := context.Background()
	openLeases(t, js, "w1").Close()
	l, err := cluster.OpenLeases(ctx, cluster.LeaseConfig{
		JetStream: js, Names: testNames, WorkerID: "w1", TTL: 2 * testTTL, Local: testLocal, Sole: true,
	})
	require.NoError(t, err)
	defer l.Close()
	st, err := bucket(t, js, cluster.LeasesBucketPurpose).Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2*testTTL, st.TTL())
}

// A worker joining a cluster reads the leases bucket's config once (its max age against the worker's TTL) before
// updating it; each read is a request to the JetStream API that every worker's start makes.
func TestJoiningReadsTheLeasesBucketOnce(t *testing.T) {
	env := jetstreamtest.Start(t)
	first := openLeases(t, env.JS, "w1")
	defer first.Close()
	// The connection's reader puts each request in seen as it reads it; a flush's answer comes after them all.
	seen := make(chan *nats.Msg, 1000)
	sub, err := env.Conn.ChanSubscribe("$JS.API.>", seen)
	require.NoError(t, err)
	require.NoError(t, env.Conn.Flush())
	joined := openLeases(t, env.JS, "w2")
	joined.Close()
	require.NoError(t, env.Conn.Flush())
	require.NoError(t, sub.Unsubscribe())
	requests := map[string]int{}
	for len(seen) > 0 {
		requests[(<-seen).Subject]++
	}
	leases := "KV_" + testNames.Bucket(cluster.LeasesBucketPurpose)
	claims := "KV_" + testNames.Bucket(cluster.ClaimsBucketPurpose)
	t.Log(requests)
	assert.Equal(t, 1, requests["$JS.API.STREAM.INFO."+leases], "the leases bucket is read once")
	assert.Equal(t, 1, requests["$JS.API.STREAM.UPDATE."+leases], "and updated once")
	assert.Zero(t, requests["$JS.API.STREAM.INFO."+claims], "the claims bucket, without a max age to keep, is not read")
	assert.Equal(t, 1, requests["$JS.API.STREAM.UPDATE."+claims], "but updated once")
}
