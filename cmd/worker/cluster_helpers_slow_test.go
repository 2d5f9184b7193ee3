//go:build slow

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
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
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
	"github.com/eventbridge-go/eventbridge/worker/plugins/router"
)

// The cluster harness: one nats-server in the test process with a TCP listener, worker binaries as child
// processes, a router connector and seven http target connectors (eight tasks), and receivers that record every
// delivery.
const (
	clusterID  = "t"
	clusterBus = "b1"
	// loadRate is the number of events published per second by the load goroutine.
	loadRate = 300
	// waitLong bounds every wait of these tests.
	waitLong = 60 * time.Second
	// routerConnector is the name of the router connector.
	routerConnector = "router"
)

var clusterNames = stream.Names{Cluster: clusterID}

// eventTypes is how events are spread: event n has type eventTypes[n%len(eventTypes)].
var eventTypes = []string{"k0", "k1", "k2", "k3"}

// clusterRules are the rules of the bus: each matches a known set of types, so the events each receiver must get
// are known from their numbers.
var clusterRules = []struct {
	id    string
	types []string
}{
	{"r0", []string{"k0", "k1", "k2", "k3"}},
	{"r1", []string{"k0"}},
	{"r2", []string{"k1"}},
	{"r3", []string{"k0", "k1"}},
	{"r4", []string{"k2", "k3"}},
	{"r5", []string{"k3"}},
	{"r6", []string{"k1", "k2"}},
}

func targetConnector(ruleID string) string { return "hook-" + ruleID }

// ruleOf is the rule of a target connector.
func ruleOf(targetConnector string) string { return strings.TrimPrefix(targetConnector, "hook-") }

func eventID(n int) string { return fmt.Sprintf("e-%07d", n) }

func eventNumber(id string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "e-"))
	return n, err == nil && strings.HasPrefix(id, "e-")
}

func eventType(n int) string { return eventTypes[n%len(eventTypes)] }

// buildWorker builds the worker binary once per test binary run.
var buildWorker = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "eb-worker-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "worker")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w: %s", err, out)
	}
	return bin, nil
})

// workerProc is one worker process.
type workerProc struct {
	id   string
	addr string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed when the process exited; state and waitErr are set then
	err  error
}

func (w *workerProc) client() *rpc.Client { return tokenClient("http://" + w.addr) }

func (w *workerProc) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// wait waits for the process to exit and returns its exit error (nil for status 0).
func (w *workerProc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-w.done:
		return w.err
	case <-time.After(d):
		t.Fatalf("worker %s did not exit within %v", w.id, d)
		return nil
	}
}

// cluster is the test's NATS server, workers, receivers and load.
type cluster struct {
	t   *testing.T
	bin string
	// natsArgs reach the test's NATS with its credentials, and give the cluster token.
	natsArgs []string
	js       jetstream.JetStream

	mu      sync.Mutex
	workers []*workerProc // every worker ever started, in start order

	receivers map[string]*receiver // by rule id
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	bin, err := buildWorker()
	require.NoError(t, err)
	ns := startNATS(t)
	nc, err := ns.Server.Connect(t.Name())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	require.NoError(t, clusterNames.EnsureBusStream(context.Background(), js, clusterBus, time.Hour, -1, 1))
	c := &cluster{t: t, bin: bin, natsArgs: ns.args(t), js: js, receivers: map[string]*receiver{}}
	for _, r := range clusterRules {
		c.receivers[r.id] = newReceiver(t)
	}
	t.Cleanup(c.stopAll)
	t.Cleanup(c.dumpLogs)
	return c
}

// start starts worker id on a free port and waits until it serves and sees itself in the cluster.
func (c *cluster) start(id string) *workerProc {
	t := c.t
	t.Helper()
	w := &workerProc{id: id, addr: listenertest.Addr(t), out: &syncBuffer{}, done: make(chan struct{})}
	w.cmd = exec.Command(c.bin, append(slices.Clone(c.natsArgs), "--cluster-id", clusterID, "--worker-id", id,
		"--rest-addr", w.addr, "--allow-private-targets", "--log-level", "warn")...)
	w.cmd.Stdout, w.cmd.Stderr = w.out, w.out
	require.NoError(t, w.cmd.Start())
	go func() { w.err = w.cmd.Wait(); close(w.done) }()
	c.mu.Lock()
	c.workers = append(c.workers, w)
	c.mu.Unlock()
	require.Eventually(t, func() bool {
		info, err := w.client().ClusterInfo(context.Background())
		if err != nil {
			return false
		}
		return slices.ContainsFunc(info.Workers, func(wi rpc.WorkerInfo) bool { return wi.WorkerID == id })
	}, waitLong, 20*time.Millisecond, "worker %s serves and joined: %s", id, w.out)
	return w
}

// stopAll kills the workers still running.
func (c *cluster) stopAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.workers {
		if !w.exited() {
			_ = w.cmd.Process.Kill()
			<-w.done
		}
	}
}

// dumpLogs prints the workers' output when the test failed or runs verbosely.
func (c *cluster) dumpLogs() {
	if !c.t.Failed() && !testing.Verbose() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, w := range c.workers {
		if s := w.out.String(); s != "" {
			c.t.Logf("--- log of worker %s (process %d of %d started) ---\n%s", w.id, i+1, len(c.workers), s)
		}
	}
}

// live returns the workers not exited.
func (c *cluster) live() []*workerProc {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*workerProc
	for _, w := range c.workers {
		if !w.exited() {
			out = append(out, w)
		}
	}
	return out
}

// byID returns the most recently started worker with this id.
func (c *cluster) byID(id string) *workerProc {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.workers) - 1; i >= 0; i-- {
		if c.workers[i].id == id {
			return c.workers[i]
		}
	}
	return nil
}

// createConnectors creates the router and one http target per rule through w's REST API, each with one task,
// and waits until the eight tasks run.
func (c *cluster) createConnectors(w *workerProc) {
	t := c.t
	t.Helper()
	ctx := context.Background()
	var rules []router.Rule
	for _, r := range clusterRules {
		p, err := json.Marshal(map[string]any{"type": r.types})
		require.NoError(t, err)
		rules = append(rules, router.Rule{ID: r.id, Subject: clusterNames.RuleSubject(clusterBus, r.id), Pattern: p})
	}
	table, err := json.Marshal(rules)
	require.NoError(t, err)
	_, err = w.client().CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerConnector, Config: map[string]string{
		connector.KeyClass:             router.Name,
		connector.KeyTasksMax:          "1",
		connector.KeyTopics:            clusterNames.BusIn(clusterBus),
		connector.KeyStream:            clusterNames.BusStream(clusterBus),
		connector.KeyDurable:           clusterNames.RouterConsumer(clusterBus),
		connector.KeyRetryDelayInitial: "20",
		connector.KeyRetryDelayMax:     "100",
		router.KeyRules:                string(table),
	}})
	require.NoError(t, err)
	for _, r := range clusterRules {
		_, err := w.client().CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetConnector(r.id), Config: map[string]string{
			connector.KeyClass:             httpsink.Name,
			connector.KeyTasksMax:          "1",
			connector.KeyTopics:            clusterNames.RuleSubject(clusterBus, r.id),
			connector.KeyStream:            clusterNames.BusStream(clusterBus),
			connector.KeyDurable:           clusterNames.TargetConsumer(r.id, "t1"),
			connector.KeyRetryDelayInitial: "20",
			connector.KeyRetryDelayMax:     "100",
			httpsink.KeyURL:                c.receivers[r.id].srv.URL,
			httpsink.KeyTimeout:            "2s",
		}})
		require.NoError(t, err)
	}
	c.waitRunning(w, nil)
}

// allConnectors are the names of the connectors, router first.
func allConnectors() []string {
	out := []string{routerConnector}
	for _, r := range clusterRules {
		out = append(out, targetConnector(r.id))
	}
	return out
}

// owners returns the worker_id of task 0 of every connector as w reports it ("" with the state when not
// RUNNING, e.g. "UNASSIGNED").
func (c *cluster) owners(w *workerProc) (map[string]string, error) {
	all, err := w.client().ListConnectors(context.Background())
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, name := range allConnectors() {
		e, ok := all[name]
		if !ok || e.Status == nil || len(e.Status.Tasks) != 1 {
			out[name] = "MISSING"
			continue
		}
		ts := e.Status.Tasks[0]
		if ts.State != rpc.StateRunning {
			out[name] = ts.State
			continue
		}
		out[name] = ts.WorkerID
	}
	return out, nil
}

// waitRunning waits until every task is RUNNING on a live worker, none on the workers in not, and returns the
// owners.
func (c *cluster) waitRunning(w *workerProc, not []string) map[string]string {
	t := c.t
	t.Helper()
	var last map[string]string
	require.Eventually(t, func() bool {
		live := map[string]bool{}
		for _, lw := range c.live() {
			live[lw.id] = true
		}
		o, err := c.owners(w)
		if err != nil {
			return false
		}
		last = o
		for _, owner := range o {
			if !live[owner] || slices.Contains(not, owner) {
				return false
			}
		}
		return true
	}, waitLong, 50*time.Millisecond, "every task RUNNING on a live worker (not on %v); last seen %v", not, &last)
	return last
}

// tasksOf returns the connectors whose task owner is id.
func tasksOf(owners map[string]string, id string) []string {
	var out []string
	for name, o := range owners {
		if o == id {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// quiescent waits until every consumer has nothing pending and nothing unacknowledged.
func (c *cluster) quiescent() {
	t := c.t
	t.Helper()
	durables := []string{clusterNames.RouterConsumer(clusterBus)}
	for _, r := range clusterRules {
		durables = append(durables, clusterNames.TargetConsumer(r.id, "t1"))
	}
	var last string
	require.Eventually(t, func() bool {
		for _, d := range durables {
			cons, err := c.js.Consumer(context.Background(), clusterNames.BusStream(clusterBus), d)
			if err != nil {
				last = err.Error()
				return false
			}
			info, err := cons.Info(context.Background())
			if err != nil {
				last = err.Error()
				return false
			}
			if info.NumPending != 0 || info.NumAckPending != 0 {
				last = fmt.Sprintf("%s: pending %d, ack pending %d, redelivered %d", d, info.NumPending, info.NumAckPending, info.NumRedelivered)
				return false
			}
		}
		return true
	}, waitLong, 100*time.Millisecond, "consumers drained; last: %s", lazy(func() string { return last }))
}

// lastRouted returns the greatest event number stored on rule r0's subject (r0 matches every event), -1 when none.
func (c *cluster) lastRouted() int {
	s, err := c.js.Stream(context.Background(), clusterNames.BusStream(clusterBus))
	require.NoError(c.t, err)
	m, err := s.GetLastMsgForSubject(context.Background(), clusterNames.RuleSubject(clusterBus, "r0"))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return -1
	}
	require.NoError(c.t, err)
	ev, err := stream.Decode(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
	require.NoError(c.t, err)
	n, ok := eventNumber(ev.ID())
	require.True(c.t, ok, ev.ID())
	return n
}

// load publishes numbered events at loadRate until stopped.
type load struct {
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	next    int // events 0..next-1 were stored by JetStream
	failed  int // publish attempts that failed and were retried
	stopped time.Time
}

func (c *cluster) startLoad() *load {
	l := &load{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		perTick := loadRate / 100
		for {
			select {
			case <-l.stop:
				return
			case <-tick.C:
			}
			for range perTick {
				l.mu.Lock()
				n := l.next
				l.mu.Unlock()
				ev := jetstreamtest.Event(eventID(n), eventType(n), map[string]any{"n": n})
				m := stream.Encode(ev)
				m.Subject = clusterNames.BusIn(clusterBus)
				m.Header.Set(nats.MsgIdHdr, stream.PutMsgID(ev.Source(), ev.ID()))
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err := c.js.PublishMsg(ctx, m)
				cancel()
				l.mu.Lock()
				if err != nil {
					l.failed++ // the same id again next round: stored once thanks to Nats-Msg-Id
				} else {
					l.next++
				}
				l.mu.Unlock()
			}
		}
	}()
	return l
}

// halt stops the load and returns the number of events stored (0..n-1).
func (l *load) halt() int {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = time.Now()
	return l.next
}

func (l *load) published() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// delivery is one request a receiver got.
type delivery struct {
	at time.Time
	n  int
}

// receiver is an http target that records every ce-id with its arrival time.
type receiver struct {
	srv *httptest.Server

	mu    sync.Mutex
	count map[int]int
	log   []delivery
	bad   []string // ce-ids that are not ours
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{count: map[int]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		now := time.Now()
		id := req.Header.Get("Ce-Id")
		n, ok := eventNumber(id)
		r.mu.Lock()
		if ok {
			r.count[n]++
			r.log = append(r.log, delivery{at: now, n: n})
		} else {
			r.bad = append(r.bad, id)
		}
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// missing returns how many of the expected events r has not received, and the first few of them.
func (r *receiver) missing(expected []int) (int, []int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first []int
	n := 0
	for _, e := range expected {
		if r.count[e] == 0 {
			n++
			if len(first) < 10 {
				first = append(first, e)
			}
		}
	}
	return n, first
}

// completedAt returns when the last of the expected events was first delivered to r.
func (r *receiver) completedAt(expected []int) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	want := map[int]bool{}
	for _, e := range expected {
		want[e] = true
	}
	var last time.Time
	for _, d := range r.log {
		if want[d.n] {
			delete(want, d.n) // the log is in arrival order: the first delivery of d.n
			if d.at.After(last) {
				last = d.at
			}
		}
	}
	return last
}

// extra returns the duplicate deliveries (every delivery after the first of an event) and the unexpected events.
func (r *receiver) extra(expected map[int]bool) (dups int, unexpected []int, bad []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for n, k := range r.count {
		if k > 1 {
			dups += k - 1
		}
		if !expected[n] {
			unexpected = append(unexpected, n)
		}
	}
	sort.Ints(unexpected)
	return dups, unexpected, slices.Clone(r.bad)
}

// expectedFor returns the numbers of the events among 0..n-1 that rule id matches.
func expectedFor(ruleID string, n int) []int {
	var types []string
	for _, r := range clusterRules {
		if r.id == ruleID {
			types = r.types
		}
	}
	var out []int
	for i := range n {
		if slices.Contains(types, eventType(i)) {
			out = append(out, i)
		}
	}
	return out
}

// verifyDelivered waits until every receiver got every event among 0..n-1 its rule matches, then until every
// consumer is drained, and checks that no receiver got an event its rule does not match. It returns the
// duplicates per rule.
func (c *cluster) verifyDelivered(n int) map[string]int {
	t := c.t
	t.Helper()
	require.Positive(t, n)
	var report string
	require.Eventually(t, func() bool {
		var b strings.Builder
		ok := true
		for _, r := range clusterRules {
			if k, first := c.receivers[r.id].missing(expectedFor(r.id, n)); k > 0 {
				ok = false
				fmt.Fprintf(&b, "%s misses %d (first %v); ", r.id, k, first)
			}
		}
		report = b.String()
		return ok
	}, waitLong, 100*time.Millisecond, "events lost: %s", lazy(func() string { return report }))
	c.quiescent()
	dups := map[string]int{}
	for _, r := range clusterRules {
		exp := map[int]bool{}
		for _, e := range expectedFor(r.id, n) {
			exp[e] = true
		}
		d, unexpected, bad := c.receivers[r.id].extra(exp)
		require.Empty(t, unexpected, "receiver %s got events its rule does not match", r.id)
		require.Empty(t, bad, "receiver %s got foreign ce-ids", r.id)
		dups[r.id] = d
	}
	return dups
}

// firstAfter returns the first delivery at r after t0 (ok false when none), optionally only of events > minN.
func firstAfter(ds []delivery, t0 time.Time, minN int) (delivery, bool) {
	var best delivery
	found := false
	for _, d := range ds {
		if d.at.After(t0) && d.n > minN && (!found || d.at.Before(best.at)) {
			best, found = d, true
		}
	}
	return best, found
}

// longestGap returns the longest time without a delivery in [from, to] (the window's edges count as deliveries).
func longestGap(ds []delivery, from, to time.Time) time.Duration {
	times := []time.Time{from}
	for _, d := range ds {
		if d.at.After(from) && d.at.Before(to) {
			times = append(times, d.at)
		}
	}
	times = append(times, to)
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	var gap time.Duration
	for i := 1; i < len(times); i++ {
		gap = max(gap, times[i].Sub(times[i-1]))
	}
	return gap
}

// figure logs one measured figure as a Markdown table row (| test | figure | value |) and appends it to the file
// named by EB_SLOW_FIGURES when set, so runs can be pasted into the docs.
func figure(t *testing.T, name string, value any) {
	t.Helper()
	row := fmt.Sprintf("| %s | %s | %v |", t.Name(), name, value)
	t.Log("figure " + row)
	if path := os.Getenv("EB_SLOW_FIGURES"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		defer f.Close()
		_, err = fmt.Fprintln(f, row)
		require.NoError(t, err)
	}
}

// signal sends sig to w.
func (w *workerProc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, w.cmd.Process.Signal(sig))
}

func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

// lazy formats as the value its function returns when the message is printed (a failed wait shows what the
// last attempt saw).
type lazy func() string

func (f lazy) String() string { return f() }
