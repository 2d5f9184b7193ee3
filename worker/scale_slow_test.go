//go:build slow

package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
	"github.com/eventbridge-go/eventbridge/worker/plugins/router"
)

// TestSlowScaleCluster simulates a cluster past this machine: three workers (each with its own NATS connection, as
// three processes would have) in this process on one embedded JetStream flushing every second (the default), with
// EB_SCALE_CLUSTER_BUSES buses (200 by default, as `make test-slow` runs it; `make bench-scale` runs 10,000), each a stream of 1 MiB with
// a router of three rules and an http target per rule (three targets per bus: 4 connectors, tasks and durable
// consumers per bus). It measures, and logs as `figure | ...` lines: the create latency of a bus (its stream, its
// router and its targets, each call answering once its task runs), how long until every task runs, the idle CPU
// and memory of the whole process (the NATS server and the three workers) once the tasks parked, how long the two
// other workers take to run every task after one worker closes (handover) and after one loses NATS (failover: its
// lease expires), and how long the last worker's Close takes. It asserts what must hold at any scale: every event
// put on every bus is delivered to its three targets, before and after the handover and the failover (none lost,
// duplicates counted); no lease is lost while the workers are healthy. EB_SCALE_CLUSTER_CREATE_S caps the time spent
// creating buses (the run goes on with those made), EB_SCALE_CPUPROFILE profiles the idle window, EB_SCALE_CREATE_CPUPROFILE the creation, EB_SCALE_ROUND_CPUPROFILE and
// EB_SCALE_ROUND_TRACE the first round, EB_SCALE_ONE_CONN=1 leaves each worker's lease on its tasks' connection, EB_SCALE_LOG
// writes the workers' log (EB_SCALE_LOG_LEVEL, warnings by default) to a file, EB_SCALE_CLUSTER_LEASE_TTL (a
// duration) sets the workers' lease TTL (worker.Config.LeaseTTL).
func TestSlowScaleCluster(t *testing.T) {
	buses := scaleEnv(t, "EB_SCALE_CLUSTER_BUSES", 200)
	idle := time.Duration(scaleEnv(t, "EB_SCALE_CLUSTER_IDLE_S", 30)) * time.Second
	const rulesPerBus = 3
	tasks := buses * (1 + rulesPerBus)
	var leaseTTL time.Duration
	workers := "3 workers"
	if v := os.Getenv("EB_SCALE_CLUSTER_LEASE_TTL"); v != "" {
		var err error
		leaseTTL, err = time.ParseDuration(v)
		require.NoError(t, err, "EB_SCALE_CLUSTER_LEASE_TTL")
		workers += ", lease TTL " + leaseTTL.String()
	}
	fig := func(what, format string, args ...any) {
		line := fmt.Sprintf("figure | scale cluster %d buses, %d targets, %s | %s | %s |", buses,
			buses*rulesPerBus, workers, what, fmt.Sprintf(format, args...))
		t.Log(line)
		if path := os.Getenv("EB_SLOW_FIGURES"); path != "" {
			if fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				_, _ = fmt.Fprintln(fh, line)
				_ = fh.Close()
			}
		}
	}
	ctx := context.Background()
	// The server's store is a folder of its own, not the test's: nats-server stops consumers one at a time, about
	// 10 ms each (ebjs.Server.ShutdownWithin), so the 40,000 of 10,000 buses would take 7 minutes after the last
	// figure. The cleanup waits a minute at most, then leaves the rest to the process's exit and the store on disk.
	storeDir, err := os.MkdirTemp("", "scale-cluster-")
	require.NoError(t, err)
	srv, err := ebjs.StartServer(ebjs.ServerConfig{SyncInterval: time.Second, StoreDir: storeDir, ServerName: "test",
		MaxStore: 1 << 40})
	require.NoError(t, err)
	t.Cleanup(func() { // registered before the workers' and connections': runs after they closed
		began := time.Now()
		if !srv.ShutdownWithin(time.Minute) {
			fig("NATS server shutdown", "not ended after %s (%d consumers); store left in %s", time.Minute, tasks, storeDir)
			return
		}
		fig("NATS server shutdown", "%s (%d consumers)", time.Since(began).Round(100*time.Millisecond), tasks)
		_ = os.RemoveAll(storeDir)
	})
	js, err := jetstream.New(jetstreamtest.Connect(t, srv))
	require.NoError(t, err)
	warnings := &logBuffer{}
	t.Cleanup(func() { // registered first: runs last, after the workers closed, on a failure too
		if path := os.Getenv("EB_SCALE_LOG"); path != "" {
			_ = os.WriteFile(path, []byte(warnings.String()), 0o644)
		} else if t.Failed() {
			// A lost lease stops every task of its worker with a warning each: thousands of lines that would hide
			// the few that say why. The lease's own lines come first: a storm's other warnings (consumers read
			// again, thousands of them) filled the 16 KiB before them in the thirty-fifth session's run.
			var lease, rest []string
			stopped := 0
			for line := range strings.Lines(warnings.String()) {
				switch {
				case strings.Contains(line, `msg="task stopped`):
					stopped++
				case strings.Contains(line, "lease"):
					lease = append(lease, line)
				default:
					rest = append(rest, line)
				}
			}
			out := strings.Join(append(lease, rest...), "")
			t.Logf("workers' warnings but %d of stopped tasks (first 16 KiB):\n%s", stopped, out[:min(16<<10, len(out))])
		}
	})
	var ws []*worker.Worker
	var conns, leaseConns []*nats.Conn
	for i := range 3 {
		// The connections report NATS's asynchronous errors to the worker's log, as cmd/worker's do (dropped wakes
		// at debug), rather than nats.go printing them on stderr.
		log := slog.New(slog.NewTextHandler(warnings, &slog.HandlerOptions{Level: scaleLogLevel()})).With(
			"worker", fmt.Sprintf("w%d", i+1))
		nc := jetstreamtest.Connect(t, srv, worker.LogNATSErrors(log))
		conns = append(conns, nc)
		var leaseNC *nats.Conn
		if os.Getenv("EB_SCALE_ONE_CONN") == "" {
			leaseNC = jetstreamtest.Connect(t, srv, worker.LogNATSErrors(log))
			leaseConns = append(leaseConns, leaseNC)
		}
		w, err := worker.New(worker.Config{Token: testToken, NATS: nc, LeaseNATS: leaseNC,
			WorkerID: fmt.Sprintf("w%d", i+1), RESTAddr: "127.0.0.1:0", AllowPrivateTargets: true,
			Registry: registry(t), StopTimeout: 5 * time.Second, LeaseTTL: leaseTTL, Logger: log})
		require.NoError(t, err)
		require.NoError(t, w.Start(ctx))
		t.Cleanup(func() { _ = w.Close(context.Background()) })
		ws = append(ws, w)
	}
	recv := newCountingReceiver(t)
	stall := stallsOf(t, srv)
	const stallWhat = "what holds a renewal up %s: most goroutines runnable / longest timer lateness, NATS request, lease read"

	// Eight callers create the buses, each through the next worker's REST API: the stream, the router, then the
	// three targets; a bus's latency runs from its stream's creation to its last target's answer.
	busID := func(i int) string { return fmt.Sprintf("s%05d", i) }
	var mu sync.Mutex
	var latencies []time.Duration
	var failure error
	work := make(chan int)
	var wg sync.WaitGroup
	began := time.Now()
	stall.start()
	if path := os.Getenv("EB_SCALE_CREATE_CPUPROFILE"); path != "" {
		fh, err := os.Create(path)
		require.NoError(t, err)
		require.NoError(t, pprof.StartCPUProfile(fh))
		defer func() { _ = fh.Close() }()
		defer pprof.StopCPUProfile() // stopped after the creation, below; again here on a failure
	}
	for c := range 8 {
		client := rpc.NewClient(ws[c%3].URL(), rpc.WithToken(testToken))
		wg.Go(func() {
			for i := range work {
				start := time.Now()
				err := createScaleBus(ctx, js, client, busID(i), recv.srv.URL, rulesPerBus)
				mu.Lock()
				latencies = append(latencies, time.Since(start))
				if err != nil && failure == nil {
					failure = err
				}
				mu.Unlock()
			}
		})
	}
	// EB_SCALE_CLUSTER_CREATE_S caps the creation: past it no bus is started, and the run goes on with those made.
	capAt := time.Duration(scaleEnv(t, "EB_SCALE_CLUSTER_CREATE_S", 0)) * time.Second
	report := 1000
	for i := range buses {
		mu.Lock()
		failed, done := failure != nil, len(latencies)
		mu.Unlock()
		if failed || (capAt > 0 && time.Since(began) > capAt) {
			buses = i
			break
		}
		if done >= report {
			fig("buses created so far", "%d after %s", done, time.Since(began).Round(time.Second))
			report += 1000
		}
		work <- i
	}
	close(work)
	wg.Wait()
	require.NoError(t, failure)
	tasks = buses * (1 + rulesPerBus)
	created := time.Since(began)
	pprof.StopCPUProfile()
	slices.Sort(latencies)
	pct := func(q float64) time.Duration {
		return latencies[int(q*float64(len(latencies)-1))].Round(time.Millisecond)
	}
	fig("buses created (stream, router, 3 targets each; 8 callers)", "%d in %s", buses, created.Round(time.Second))
	fig("bus create latency p50 / p99 / max", "%s / %s / %s", pct(0.5), pct(0.99), latencies[len(latencies)-1].Round(time.Millisecond))
	fig(fmt.Sprintf(stallWhat, "while buses were created"), "%s", stall.stop())
	spread := scaleAwaitOwners(t, ws, tasks, 10*time.Minute)
	fig("tasks per worker after creation", "%v", spread)

	// One event per bus, delivered to its three targets.
	round := func(name string) {
		if path := os.Getenv("EB_SCALE_ROUND_CPUPROFILE"); path != "" && name == "after creation" {
			fh, err := os.Create(path)
			require.NoError(t, err)
			require.NoError(t, pprof.StartCPUProfile(fh))
			defer func() { pprof.StopCPUProfile(); _ = fh.Close() }()
		}
		if path := os.Getenv("EB_SCALE_ROUND_TRACE"); path != "" && name == "after creation" {
			fh, err := os.Create(path)
			require.NoError(t, err)
			require.NoError(t, trace.Start(fh))
			defer func() { trace.Stop(); _ = fh.Close() }()
		}
		stall.start()
		start := time.Now()
		peak, stop := make(chan int, 1), make(chan struct{})
		end := sync.OnceFunc(func() { close(stop) })
		defer end() // a round that fails stops its watcher too
		go func() { // the most files open at once during the round
			most := 0
			for {
				select {
				case <-stop:
					peak <- most
					return
				case <-time.After(100 * time.Millisecond):
					most = max(most, openFiles())
				}
			}
		}()
		want := scalePutRound(t, js, buses, busID, name)
		missing := recv.await(want, rulesPerBus, 5*time.Minute)
		end()
		assert.Zero(t, missing, "%s: events not delivered to all three targets", name)
		fig("one event per bus delivered to its 3 targets: "+name, "%d deliveries in %s, %d duplicates so far, at most %d files open",
			buses*rulesPerBus, time.Since(start).Round(time.Millisecond), recv.duplicates(), <-peak)
		fig(fmt.Sprintf(stallWhat, "in the round "+name), "%s", stall.stop())
	}
	round("after creation")

	// Idle, once the tasks parked (10 s without a record).
	time.Sleep(15 * time.Second)
	runtime.GC()
	cpu0, t0 := processCPU(t), time.Now()
	if path := os.Getenv("EB_SCALE_CPUPROFILE"); path != "" {
		fh, err := os.Create(path)
		require.NoError(t, err)
		require.NoError(t, pprof.StartCPUProfile(fh))
		time.Sleep(idle)
		pprof.StopCPUProfile()
		require.NoError(t, fh.Close())
	} else {
		time.Sleep(idle)
	}
	busy := float64(processCPU(t)-cpu0) / float64(time.Since(t0))
	fig("idle CPU of the process (NATS server and 3 workers)", "%.1f%% of one core over %s", 100*busy, idle)
	fig("resident memory of the process / Go heap in use / goroutines / open files", "%d MiB / %d MiB / %d / %d",
		residentMiB(t), heapInUseMiB(), runtime.NumGoroutine(), openFiles())

	// Handover: w3 closes; w1 and w2 run every task.
	start := time.Now()
	require.NoError(t, ws[2].Close(ctx))
	closeTook := time.Since(start)
	spread = scaleAwaitOwners(t, ws[:2], tasks, 5*time.Minute)
	fig("handover: w3 closes (Close took) → w1 and w2 run every task", "%s → %s, %v",
		closeTook.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), spread)
	round("after the handover")

	// One warning per lease lost (the herder's); a release of a claim that moved says "lease lost" too.
	const leaseLost = `msg="worker's lease lost: stopping every task"`
	lost := logCount(warnings, leaseLost)
	fig("leases lost while healthy (before the failover)", "%d", lost)
	assert.Zero(t, lost, "a healthy worker lost its lease (before the failover)")

	// Failover: w2 loses NATS (its connection closes); its lease expires and w1 runs every task.
	start = time.Now()
	conns[1].Close()
	if len(leaseConns) > 1 {
		leaseConns[1].Close()
	}
	spread = scaleAwaitOwners(t, ws[:1], tasks, 5*time.Minute)
	fig("failover: w2 loses NATS → w1 runs every task", "%s, %v", time.Since(start).Round(time.Millisecond), spread)
	round("after the failover")
	// w1 alone runs every task now, and took w2's at once: the heaviest load of the run on one worker. Counted, not
	// asserted: at 10,000 buses on one 2-core machine it is past what a lease of the default TTL survives.
	fig("leases w1 lost after the failover", "%d", logCount(warnings, leaseLost+" worker=w1"))

	start = time.Now()
	require.NoError(t, ws[0].Close(ctx))
	fig("Close of the last worker (every task)", "%s", time.Since(start).Round(time.Millisecond))
	fig("duplicates delivered in all", "%d of %d deliveries", recv.duplicates(), 3*buses*rulesPerBus)
}

// createScaleBus creates bus id's stream (1 MiB), its router (rulesPerBus rules matching source "scale") and an
// http target per rule delivering to url, through client.
func createScaleBus(ctx context.Context, js jetstream.JetStream, client *rpc.Client, id, url string, rulesPerBus int) error {
	if err := names.EnsureBusStream(ctx, js, id, time.Hour, 1<<20, 1); err != nil {
		return err
	}
	var rules []router.Rule
	for r := range rulesPerBus {
		rid := fmt.Sprintf("r%d", r)
		rules = append(rules, router.Rule{ID: rid, Subject: names.RuleSubject(id, rid),
			Pattern: json.RawMessage(`{"source": ["scale"]}`)})
	}
	table, _ := json.Marshal(rules)
	prefix := "eb.acct." + id + "."
	if _, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: prefix + "router", Config: map[string]string{
		connector.KeyClass: router.Name, connector.KeyTopics: names.BusIn(id), connector.KeyStream: names.BusStream(id),
		connector.KeyDurable: names.RouterConsumer(id), router.KeyRules: string(table),
	}}); err != nil {
		return fmt.Errorf("router of %s: %w", id, err)
	}
	for _, r := range rules {
		if _, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: prefix + r.ID + ".hook", Config: map[string]string{
			connector.KeyClass: httpsink.Name, connector.KeyTopics: r.Subject, connector.KeyStream: names.BusStream(id),
			connector.KeyDurable: names.TargetConsumer(r.ID, "hook"), httpsink.KeyURL: url + "/" + id + "/" + r.ID,
			httpsink.KeyTimeout: "5s",
		}}); err != nil {
			return fmt.Errorf("target %s of %s: %w", r.ID, id, err)
		}
	}
	return nil
}

// scaleAwaitOwners waits until the workers ws run every one of tasks tasks between them, and returns how many each
// runs.
func scaleAwaitOwners(t *testing.T, ws []*worker.Worker, tasks int, within time.Duration) []int {
	t.Helper()
	var spread []int
	deadline := time.Now().Add(within)
	for {
		spread = spread[:0]
		total := 0
		for _, w := range ws {
			n := len(w.Herder().AllocatedTasks())
			spread = append(spread, n)
			total += n
		}
		if total == tasks {
			return spread
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s the workers run %v tasks of %d", within, spread, tasks)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scalePutRound publishes one event per bus (id <name>-<bus>, source "scale") and returns their ids.
func scalePutRound(t *testing.T, js jetstream.JetStream, buses int, busID func(int) string, name string) []string {
	t.Helper()
	ids := make([]string, buses)
	futures := make([]jetstream.PubAckFuture, buses)
	for i := range buses {
		ids[i] = strings.ReplaceAll(name, " ", "-") + "-" + busID(i)
		m := jetstreamtest.Event(ids[i], "t", nil)
		m.SetSource("scale")
		msg := stream.Encode(m)
		msg.Subject = names.BusIn(busID(i))
		f, err := js.PublishMsgAsync(msg)
		require.NoError(t, err)
		futures[i] = f
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			t.Fatal(err)
		case <-time.After(time.Minute):
			t.Fatal("no acknowledgement of a put within a minute")
		}
	}
	return ids
}

// countingReceiver counts the deliveries of each event id (all targets deliver to it).
type countingReceiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen map[string]map[string]bool // event id → target path → delivered
	dups int
}

func newCountingReceiver(t *testing.T) *countingReceiver {
	r := &countingReceiver{seen: map[string]map[string]bool{}}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id := req.Header.Get("Ce-Id")
		r.mu.Lock()
		if r.seen[id] == nil {
			r.seen[id] = map[string]bool{}
		}
		if r.seen[id][req.URL.Path] {
			r.dups++
		}
		r.seen[id][req.URL.Path] = true
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	// Every answer closes its connection. The targets' client side and the receiver share this process, whose
	// descriptors this machine caps at 20,000 (hard limit): with connections kept alive, a round to 30,000 targets
	// held two descriptors per target and stopped at the limit (accept4: too many open files). A worker of a real
	// cluster holds only its own side of its targets' connections. Closed, the connections open at once are the
	// deliveries in flight.
	r.srv.Config.SetKeepAlivesEnabled(false)
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	return r
}

// await waits until every id reached perID targets, and returns how many did not within the time given.
func (r *countingReceiver) await(ids []string, perID int, within time.Duration) (missing int) {
	deadline := time.Now().Add(within)
	for {
		missing = 0
		r.mu.Lock()
		for _, id := range ids {
			if len(r.seen[id]) < perID {
				missing++
			}
		}
		r.mu.Unlock()
		if missing == 0 || time.Now().After(deadline) {
			return missing
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (r *countingReceiver) duplicates() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dups
}

// logCount counts the occurrences of s in the workers' log.
func logCount(b *logBuffer, s string) int { return strings.Count(b.String(), s) }

// scaleLogLevel is the workers' log level: warnings, or EB_SCALE_LOG_LEVEL (debug, info) to see what they did.
func scaleLogLevel() slog.Level {
	var l slog.Level
	if l.UnmarshalText([]byte(os.Getenv("EB_SCALE_LOG_LEVEL"))) != nil {
		return slog.LevelWarn
	}
	return l
}

func scaleEnv(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, name)
	return n
}

// processCPU is the CPU time (user and system) this process used so far.
func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// residentMiB is this process's resident memory.
func residentMiB(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	require.NoError(t, err)
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize()) >> 20
}

// openFiles counts the process's open file descriptors (0 where /proc cannot tell).
func openFiles() int {
	fds, _ := os.ReadDir("/proc/self/fd")
	return len(fds)
}

func heapInUseMiB() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse >> 20
}
