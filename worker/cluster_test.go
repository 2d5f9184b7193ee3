package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/cluster"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// startMember starts a worker of the cluster on nc.
func startMember(t *testing.T, nc *nats.Conn, id string) *worker.Worker {
	t.Helper()
	return startMemberWithLease(t, nc, id, 0)
}

// startMemberWithLease starts a worker of the cluster on nc with a lease TTL (0: the default).
func startMemberWithLease(t *testing.T, nc *nats.Conn, id string, leaseTTL time.Duration) *worker.Worker {
	t.Helper()
	w, err := worker.New(worker.Config{Token: testToken, NATS: nc, WorkerID: id, RESTAddr: "127.0.0.1:0", AllowPrivateTargets: true,
		Registry: registry(t), StopTimeout: 5 * time.Second, LeaseTTL: leaseTTL})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	return w
}

// owners returns the worker of every task, from the allocated tasks of each worker.
func owners(t *testing.T, ws ...*worker.Worker) map[rpc.TaskID]string {
	out := map[rpc.TaskID]string{}
	for _, w := range ws {
		tasks, err := rpc.NewClient(w.URL(), rpc.WithToken(testToken)).AllocatedTasks(context.Background())
		require.NoError(t, err)
		for _, task := range tasks {
			out[task.ID] = w.ID()
		}
	}
	return out
}

// Three workers share the tasks evenly; any of them answers any request, with the same answer.
func TestClusterSharesTasksAndAnswersAnywhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := busEnv(t)
	w1, w2, w3 := startMember(t, env.Conn, "w1"), startMember(t, env.Conn, "w2"), startMember(t, env.Conn, "w3")
	c2 := rpc.NewClient(w2.URL(), rpc.WithToken(testToken))
	var targets []*target
	for i := range 5 {
		id := fmt.Sprintf("r%d", i)
		tg := newTarget(t)
		targets = append(targets, tg)
		_, err := c2.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName(id), Config: targetConfig(id, tg.srv.URL)})
		require.NoError(t, err)
	}
	_, err := c2.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(),
		Config: routerConfig(t, rule("r0", "t0", 0), rule("r1", "t1", 0), rule("r2", "t2", 0), rule("r3", "t3", 0), rule("r4", "t4", 0))})
	require.NoError(t, err)

	// Six tasks: two each.
	var own map[rpc.TaskID]string
	require.Eventually(t, func() bool {
		own = owners(t, w1, w2, w3)
		n := map[string]int{}
		for _, w := range own {
			n[w]++
		}
		return len(own) == 6 && n["w1"] == 2 && n["w2"] == 2 && n["w3"] == 2
	}, wait, tick, "six tasks, two on each worker")

	// Every worker gives the same status, naming each task's worker.
	for _, w := range []*worker.Worker{w1, w2, w3} {
		st, err := rpc.NewClient(w.URL(), rpc.WithToken(testToken)).ConnectorStatus(ctx, targetName("r3"))
		require.NoError(t, err)
		require.Len(t, st.Tasks, 1)
		assert.Equal(t, own[rpc.TaskID{Connector: targetName("r3"), Task: 0}], st.Tasks[0].WorkerID, "asked %s", w.ID())
		assert.Equal(t, rpc.StateRunning, st.Tasks[0].State)
		ci, err := rpc.NewClient(w.URL(), rpc.WithToken(testToken)).ClusterInfo(ctx)
		require.NoError(t, err)
		assert.Len(t, ci.Workers, 3)
	}

	for i := range 5 {
		put(t, env, fmt.Sprintf("e%d", i), fmt.Sprintf("t%d", i))
	}
	for i, tg := range targets {
		id := fmt.Sprintf("e%d", i)
		require.Eventually(t, func() bool { return tg.has(id) }, wait, tick)
	}

	// A change through w3 answers once the owner, wherever it is, runs it: here a new rule table.
	c3 := rpc.NewClient(w3.URL(), rpc.WithToken(testToken))
	_, err = c3.PutConnectorConfig(ctx, routerName(), routerConfig(t, rule("r0", "t9", 0)))
	require.NoError(t, err)
	put(t, env, "e9", "t9")
	put(t, env, "e0-again", "t0")
	require.Eventually(t, func() bool { return targets[0].has("e9") }, wait, tick)
	assert.False(t, targets[0].has("e0-again"), "the new rule table applied before the change answered")
}

// A worker that closes hands its tasks over: the others take them at once, and nothing is lost or delivered twice.
func TestClusterCloseHandsTasksOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := busEnv(t)
	w1, w2 := startMember(t, env.Conn, "w1"), startMember(t, env.Conn, "w2")
	c := rpc.NewClient(w1.URL(), rpc.WithToken(testToken))
	tg := newTarget(t)
	for _, id := range []string{"r1", "r2", "r3", "r4"} {
		_, err := c.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName(id), Config: targetConfig(id, tg.srv.URL)})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return len(owners(t, w1, w2)) == 4 }, wait, tick)

	stop := make(chan struct{})
	var sent []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			id := fmt.Sprintf("e%d", n)
			env.Publish(t, names.RuleSubject(bus, fmt.Sprintf("r%d", n%4+1)), jetstreamtest.Event(id, "t", nil))
			sent = append(sent, id)
		}
	}()
	time.Sleep(300 * time.Millisecond)
	closed := time.Now()
	require.NoError(t, w1.Close(ctx))
	require.Eventually(t, func() bool { return len(owners(t, w2)) == 4 }, wait, tick, "w2 runs every task")
	t.Logf("handover: w2 ran all four tasks %v after w1's Close began", time.Since(closed).Round(time.Millisecond))
	time.Sleep(300 * time.Millisecond)
	close(stop)
	<-done
	require.Eventually(t, func() bool { return len(tg.Got()) >= len(sent) }, wait, tick)
	assert.ElementsMatch(t, sent, tg.Got(), "every event delivered once")
}

// blockableProxy forwards TCP connections to a NATS server until blocked, after which it forwards nothing (the
// connections stay open: the client sees a silent network, not a closed one). With a slow answer time, what the
// server sends reaches the client that much later (a constant latency: a delay line, not a queue of sleeps).
type blockableProxy struct {
	ln      net.Listener
	blocked atomic.Bool
	slow    atomic.Int64 // nanoseconds added to the server's answers
}

func newBlockableProxy(t *testing.T, upstream string) *blockableProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &blockableProxy{ln: ln}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				_ = c.Close()
				continue
			}
			t.Cleanup(func() { _ = c.Close(); _ = u.Close() })
			go p.pipe(c, u)
			go p.delayed(u, c)
		}
	}()
	return p
}

func (p *blockableProxy) pipe(from, to net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if err != nil {
			return
		}
		for p.blocked.Load() {
			time.Sleep(5 * time.Millisecond) // hold the data: the network is silent
		}
		if _, err := to.Write(buf[:n]); err != nil {
			return
		}
	}
}

// delayed forwards like pipe, each chunk p.slow after it was read.
func (p *blockableProxy) delayed(from, to net.Conn) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	line := make(chan chunk, 4096)
	go func() {
		defer close(line)
		for {
			buf := make([]byte, 32<<10)
			n, err := from.Read(buf)
			if err != nil {
				return
			}
			line <- chunk{buf[:n], time.Now().Add(time.Duration(p.slow.Load()))}
		}
	}()
	for c := range line {
		time.Sleep(time.Until(c.at))
		for p.blocked.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		if _, err := to.Write(c.b); err != nil {
			return
		}
	}
}

func (p *blockableProxy) url() string { return "nats://" + p.ln.Addr().String() }

// proxiedEnv starts a JetStream on TCP with the test bus, and a connection to it through a blockableProxy.
func proxiedEnv(t *testing.T, timeout time.Duration) (*jetstreamtest.Env, *blockableProxy, *nats.Conn) {
	t.Helper()
	env := jetstreamtest.StartWith(t, jetstreamOnTCP())
	require.NoError(t, names.EnsureBusStream(context.Background(), env.JS, bus, time.Hour, -1, 1))
	proxy := newBlockableProxy(t, env.Server.ClientURL()[len("nats://"):])
	nc, err := nats.Connect(proxy.url(), env.Credentials.Option(), nats.MaxReconnects(-1), nats.Timeout(timeout))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return env, proxy, nc
}

// A worker cut off from NATS stops its tasks on its own, at its lease's local deadline, before another worker can
// take them: the claim history never shows a task owned twice. So with the default lease TTL and a longer one:
// the worker keeps its task until four fifths of the TTL after its last renewal, which it sent at most a
// heartbeat (500 ms) before the cut.
func TestClusterCutOffWorkerStopsBeforeTakeover(t *testing.T) {
	t.Parallel()
	for _, ttl := range []time.Duration{worker.DefaultLeaseTTL, 5 * time.Second} {
		t.Run("lease TTL "+ttl.String(), func(t *testing.T) {
			t.Parallel()
			testCutOffWorkerStopsBeforeTakeover(t, ttl)
		})
	}
}

func testCutOffWorkerStopsBeforeTakeover(t *testing.T, ttl time.Duration) {
	ctx := context.Background()
	env, proxy, nc1 := proxiedEnv(t, time.Second)
	w1 := startMemberWithLease(t, nc1, "w1", ttl)
	c1 := rpc.NewClient(w1.URL(), rpc.WithToken(testToken))
	tg := newTarget(t)
	for _, id := range []string{"r1", "r2"} {
		_, err := c1.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName(id), Config: targetConfig(id, tg.srv.URL)})
		require.NoError(t, err)
	}
	w2 := startMemberWithLease(t, env.Conn, "w2", ttl)
	require.Eventually(t, func() bool {
		own := owners(t, w1, w2)
		return len(own) == 2 && own[rpc.TaskID{Connector: targetName("r1")}] != own[rpc.TaskID{Connector: targetName("r2")}]
	}, wait, tick)
	cut := ownedBy(owners(t, w1, w2), "w1")
	require.Len(t, cut, 1)

	// Record every claim write as the server sees it.
	claims, err := env.JS.KeyValue(ctx, names.Bucket(cluster.ClaimsBucketPurpose))
	require.NoError(t, err)
	watcher, err := claims.WatchAll(ctx, jetstream.UpdatesOnly())
	require.NoError(t, err)
	defer func() { _ = watcher.Stop() }()
	type taken struct {
		worker string
		at     time.Time
	}
	var mu sync.Mutex
	var history []taken
	go func() {
		for e := range watcher.Updates() {
			if e == nil || e.Operation() != jetstream.KeyValuePut || e.Key() != cluster.ClaimKey(cut[0]) {
				continue
			}
			var v struct{ Worker string }
			_ = json.Unmarshal(e.Value(), &v)
			mu.Lock()
			history = append(history, taken{v.Worker, time.Now()})
			mu.Unlock()
		}
	}()

	blocked := time.Now()
	proxy.blocked.Store(true)
	var stopped time.Time
	require.Eventually(t, func() bool {
		tasks := w1.Herder().AllocatedTasks()
		if len(tasks) == 0 && stopped.IsZero() {
			stopped = time.Now()
		}
		return !stopped.IsZero()
	}, wait, time.Millisecond, "w1 stops its task without NATS")
	var takenAt time.Time
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, h := range history {
			if h.worker == "w2" {
				takenAt = h.at
				return true
			}
		}
		return false
	}, wait, tick, "w2 takes the task over")
	t.Logf("cut off at 0: w1 stopped its task at %v, w2 took its claim at %v",
		stopped.Sub(blocked).Round(time.Millisecond), takenAt.Sub(blocked).Round(time.Millisecond))
	assert.True(t, stopped.Before(takenAt), "the cut-off worker stopped before the task was taken over")
	assert.GreaterOrEqual(t, stopped.Sub(blocked), ttl*4/5-500*time.Millisecond,
		"the cut-off worker kept its task until its lease's local deadline")

	// Events reach the target through w2 (an event the server handed to w1's last pull request before it expired
	// is redelivered after the consumer's AckWait); back online, w1 rejoins.
	put := func(id string) {
		env.Publish(t, names.RuleSubject(bus, cut[0].Connector[len("eb.acct.orders."):len(cut[0].Connector)-len(".hook")]),
			jetstreamtest.Event(id, "t", nil))
	}
	put("after-cut")
	require.Eventually(t, func() bool { return tg.has("after-cut") }, wait, tick)
	proxy.blocked.Store(false)
	unblocked := time.Now()
	defer func() {
		t.Logf("rejoined %v after the network came back", time.Since(unblocked).Round(time.Millisecond))
	}()
	require.Eventually(t, func() bool {
		ci, err := rpc.NewClient(w2.URL(), rpc.WithToken(testToken)).ClusterInfo(ctx)
		return err == nil && len(ci.Workers) == 2
	}, wait, tick, "w1 rejoins")
}

func jetstreamOnTCP() ebjs.ServerConfig { return ebjs.ServerConfig{Listen: "127.0.0.1:-1"} }

func ownedBy(own map[rpc.TaskID]string, w string) []rpc.TaskID {
	var out []rpc.TaskID
	for id, o := range own {
		if o == w {
			out = append(out, id)
		}
	}
	return out
}

// A worker whose NATS answers slowly, but within its lease's local validity (2 s), keeps its lease and its tasks:
// the deadline moves by the send time of a renewal, so a renewal answered after more than one heartbeat (500 ms)
// still counts. (On a starved machine answers come late while every write reaches the server; a worker that gave
// a renewal one heartbeat stopped every task there.)
func TestClusterSlowNATSKeepsTheLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env, proxy, nc := proxiedEnv(t, 5*time.Second)
	log := &logBuffer{}
	w, err := worker.New(worker.Config{Token: testToken, NATS: nc, WorkerID: "w1", RESTAddr: "127.0.0.1:0",
		AllowPrivateTargets: true, Registry: registry(t), StopTimeout: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	tg := newTarget(t)
	_, err = rpc.NewClient(w.URL(), rpc.WithToken(testToken)).CreateConnector(ctx,
		rpc.CreateConnectorRequest{Name: targetName("r1"), Config: targetConfig("r1", tg.srv.URL)})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(w.Herder().AllocatedTasks()) == 1 }, wait, tick)

	proxy.slow.Store(int64(900 * time.Millisecond))
	time.Sleep(6 * time.Second) // three local validities
	assert.Len(t, w.Herder().AllocatedTasks(), 1, "the task still runs")
	assert.NotContains(t, log.String(), "lease lost", "the worker kept its lease")
	assert.Contains(t, log.String(), "renewing the worker's lease was slow", "slow renewals are reported")

	proxy.slow.Store(0)
	env.Publish(t, names.RuleSubject(bus, "r1"), jetstreamtest.Event("after-slow", "t", nil))
	require.Eventually(t, func() bool { return tg.has("after-slow") }, wait, tick)
}
