//go:build slow

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/listener/listenertest"
	"github.com/eventbridge-go/eventbridge/rpc"
)

// buildWorkerBinary builds cmd/worker once per test binary run.
var buildWorkerBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "eb-worker-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "worker")
	out, err := exec.Command("go", "build", "-o", bin, "../worker").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w: %s", err, out)
	}
	return bin, nil
})

// workerProcess is one cmd/worker child process of the test.
type workerProcess struct {
	id, addr string
	cmd      *exec.Cmd
	out      bytes.Buffer
	done     chan struct{}
}

// remoteCluster is the workers of a control plane started with --runtime.
type remoteCluster struct {
	t       *testing.T
	bin     string
	natsURL string
	keyFile string
	// tokenFile and credsFile are the cluster token and NATS credentials the workers start with.
	tokenFile, credsFile string
	mu                   sync.Mutex
	procs                map[string]*workerProcess
	finished             []*workerProcess
}

func (c *remoteCluster) start(id, addr string) {
	c.t.Helper()
	p := &workerProcess{id: id, addr: addr, done: make(chan struct{})}
	p.cmd = exec.Command(c.bin, "--nats", c.natsURL, "--rest-addr", addr, "--worker-id", id, "--cluster-id", "eb",
		"--master-key", c.keyFile, "--cluster-token-file", c.tokenFile, "--nats-credentials-file", c.credsFile,
		"--allow-private-targets", "--log-level", "warn")
	p.cmd.Stdout, p.cmd.Stderr = &lockedWriter{mu: &c.mu, w: &p.out}, &lockedWriter{mu: &c.mu, w: &p.out}
	require.NoError(c.t, p.cmd.Start())
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	c.mu.Lock()
	c.procs[id] = p
	c.mu.Unlock()
	require.Eventuallyf(c.t, func() bool {
		_, err := c.client(addr).ListConnectorNames(context.Background())
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "worker %s never answered on %s", id, addr)
}

// client is a client of the worker at addr with the cluster token.
func (c *remoteCluster) client(addr string) *rpc.Client {
	token, err := rpc.ReadTokenFile(c.tokenFile)
	require.NoError(c.t, err)
	return rpc.NewClient("http://"+addr, rpc.WithToken(token))
}

// kill SIGKILLs a worker and waits for it to be gone.
func (c *remoteCluster) kill(id string) {
	c.t.Helper()
	c.mu.Lock()
	p := c.procs[id]
	delete(c.procs, id)
	c.finished = append(c.finished, p)
	c.mu.Unlock()
	require.NoError(c.t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
}

func (c *remoteCluster) close() {
	c.mu.Lock()
	procs := c.procs
	c.procs = nil
	c.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		c.finished = append(c.finished, p)
	}
	if c.t.Failed() {
		for _, p := range c.finished {
			c.t.Logf("worker %s output:\n%s", p.id, p.out.String())
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// taskOwner is the worker of the connector's task 0 while it runs ("" otherwise).
func taskOwner(a api, connector string) string {
	var list runtimeConnectors
	if err := json.Unmarshal(a.must("GET", "/api/v1/runtime/connectors", nil, 200), &list); err != nil {
		return ""
	}
	for _, c := range list.Connectors {
		if c.Name == connector && len(c.Tasks) > 0 && c.Tasks[0].State == "RUNNING" {
			return c.Tasks[0].WorkerID
		}
	}
	return ""
}

// putIDs puts one event per id on the bus (source shop) in batches of 100 and returns them as a set.
func putIDs(a api, bus string, ids []string) map[string]bool {
	set := map[string]bool{}
	for start := 0; start < len(ids); start += 100 {
		var batch []map[string]any
		for _, id := range ids[start:min(start+100, len(ids))] {
			batch = append(batch, event(id, "shop", "order.created", map[string]any{"n": id}))
			set[id] = true
		}
		a.putBatch(bus, batch)
	}
	return set
}

func seq(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return out
}

// waitDelivered waits until every id in want reached r at least once (a failover may deliver some twice: at least
// once, counted and logged, never hidden).
func waitDelivered(t *testing.T, r *receiver, want map[string]bool, what string) {
	t.Helper()
	require.Eventuallyf(t, func() bool {
		got := r.snapshot()
		for id := range want {
			if got[id] == 0 {
				return false
			}
		}
		return true
	}, 90*time.Second, 50*time.Millisecond, "waiting for %d events (%s)", len(want), what)
	dup := 0
	for id, n := range r.snapshot() {
		if want[id] && n > 1 {
			dup++
		}
	}
	if dup > 0 {
		t.Logf("%s: %d of %d events delivered more than once", what, dup, len(want))
	}
}

// TestSlowAdapterKeepsARemoteWorkerClusterInStep is the runtime adapter's acceptance: the control plane (its NATS
// server listening on TCP) with two cmd/worker processes as its --runtime. Rules created through the API run on the
// workers; killing a worker keeps every event flowing and the API shows the task move; a connector deleted on a
// worker comes back; a disabled rule receives nothing until enabled; deleting a rule removes its connector and its
// durable consumer; with every worker down the API answers and targets are PENDING, and when the workers return
// everything converges without a user action.
func TestSlowAdapterKeepsARemoteWorkerClusterInStep(t *testing.T) {
	bin, err := buildWorkerBinary()
	require.NoError(t, err)
	dataDir := t.TempDir()
	natsAddr, w1Addr, w2Addr := listenertest.Addr(t), listenertest.Addr(t), listenertest.Addr(t)
	tokenFile, _ := writeTokenFile(t)
	m := startMain(t, dataDir, "--nats-listen", natsAddr, "--runtime", "http://"+w1Addr+",http://"+w2Addr,
		"--reconcile-interval", "500ms", "--cluster-token-file", tokenFile)
	defer func() { require.NoError(t, m.Close()) }()
	c := &remoteCluster{t: t, bin: bin, natsURL: "nats://" + natsAddr, keyFile: filepath.Join(dataDir, "master.key"),
		tokenFile: tokenFile, credsFile: filepath.Join(dataDir, "nats-credentials"), procs: map[string]*workerProcess{}}
	defer c.close()
	addrs := map[string]string{"w1": w1Addr, "w2": w2Addr}
	c.start("w1", w1Addr)
	c.start("w2", w2Addr)

	a := apiOf(t, m)
	require.Eventually(t, func() bool {
		var ws struct {
			Workers []struct{ ID string } `json:"workers"`
		}
		return json.Unmarshal(a.must("GET", "/api/v1/runtime/workers", nil, 200), &ws) == nil && len(ws.Workers) == 2
	}, 30*time.Second, 50*time.Millisecond, "the API lists both workers")

	r, other := newReceiver(t), newReceiver(t)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "orders"}, 201)
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "all",
		"eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
	a.must("PUT", "/api/v1/buses/orders/rules/all/targets/hook", httpTarget(r.srv.URL), 201)
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "other",
		"eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
	a.must("PUT", "/api/v1/buses/orders/rules/other/targets/hook2", httpTarget(other.srv.URL), 201)
	const hook = "eb.default.orders.all.hook"

	// Rules created through the API run on the workers.
	waitDelivered(t, r, putIDs(a, "orders", seq("a", 100)), "before any failure")
	var owner string
	require.Eventually(t, func() bool { owner = taskOwner(a, hook); return owner != "" }, 30*time.Second, 50*time.Millisecond)
	survivor := map[string]string{"w1": "w2", "w2": "w1"}[owner]
	require.NotEmptyf(t, survivor, "the task runs on %q, not one of the test's workers", owner)

	// Killing the worker that runs the target keeps every event flowing, and the API shows the task move.
	c.kill(owner)
	want := putIDs(a, "orders", seq("b", 100))
	require.Eventually(t, func() bool { return taskOwner(a, hook) == survivor }, 60*time.Second, 50*time.Millisecond,
		"the API shows the task on the surviving worker")
	for id := range putIDs(a, "orders", seq("c", 100)) {
		want[id] = true
	}
	waitDelivered(t, r, want, "after killing "+owner)
	c.start(owner, addrs[owner])

	// A connector deleted directly on a worker comes back.
	require.NoError(t, c.client(addrs[survivor]).DeleteConnector(context.Background(), hook))
	require.Eventually(t, func() bool { return taskOwner(a, hook) != "" }, 30*time.Second, 50*time.Millisecond,
		"the reconciler recreates the deleted connector")
	waitDelivered(t, r, putIDs(a, "orders", seq("d", 50)), "after the connector came back")

	// A disabled rule receives nothing; enabled again, it receives what is put from then on.
	a.must("POST", "/api/v1/buses/orders/rules/all/disable", nil, 200)
	off := putIDs(a, "orders", seq("off", 50))
	a.must("POST", "/api/v1/buses/orders/rules/all/enable", nil, 200)
	waitDelivered(t, r, putIDs(a, "orders", seq("on", 50)), "after enabling")
	waitDelivered(t, other, off, "the other rule, enabled all along")
	for id := range r.snapshot() {
		require.Falsef(t, off[id], "event %s, put while the rule was disabled, was delivered", id)
	}

	// Deleting a rule removes its connector and its durable consumer.
	nc, err := nats.Connect("nats://"+natsAddr, m.NATSCredentials().Option())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	consumers := func() []string {
		var out []string
		for s := range js.StreamNames(context.Background()).Name() {
			if !strings.HasPrefix(s, "eb_BUS_") {
				continue
			}
			st, err := js.Stream(context.Background(), s)
			require.NoError(t, err)
			for n := range st.ConsumerNames(context.Background()).Name() {
				out = append(out, n)
			}
		}
		return out
	}
	before := consumers()
	require.Len(t, before, 3, "the router's consumer and one per target: %v", before)
	a.must("DELETE", "/api/v1/buses/orders/rules/other", nil, 204)
	states, _ := a.connectorStates()
	require.NotContains(t, states, "eb.default.orders.other.hook2")
	require.Len(t, consumers(), 2, "the deleted rule's consumer is gone")

	// Every worker down: the API answers, targets are PENDING, events are still accepted.
	c.kill("w1")
	c.kill("w2")
	a.must("GET", "/api/v1/buses/orders", nil, 200)
	late := newReceiver(t)
	a.must("PUT", "/api/v1/buses/orders/rules/all/targets/late", httpTarget(late.srv.URL), 201)
	for _, name := range []string{"hook", "late"} {
		var tg struct {
			Status struct{ State string } `json:"status"`
		}
		require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/buses/orders/rules/all/targets/"+name, nil, 200), &tg))
		require.Equal(t, "PENDING", tg.Status.State, name)
	}
	down := putIDs(a, "orders", seq("down", 50))

	// The workers return: everything converges without a user action.
	c.start("w1", w1Addr)
	c.start("w2", w2Addr)
	waitDelivered(t, r, down, "events put while the workers were down")
	require.Eventually(t, func() bool { return taskOwner(a, "eb.default.orders.all.late") != "" }, 60*time.Second,
		50*time.Millisecond, "the target added while the workers were down runs")
	waitDelivered(t, late, putIDs(a, "orders", seq("up", 50)), "the target added while the workers were down")
	require.Eventually(t, func() bool {
		var tg struct {
			Status struct{ State string } `json:"status"`
		}
		return json.Unmarshal(a.must("GET", "/api/v1/buses/orders/rules/all/targets/late", nil, 200), &tg) == nil &&
			tg.Status.State == "RUNNING"
	}, 30*time.Second, 50*time.Millisecond)
}
