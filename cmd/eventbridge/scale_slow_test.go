//go:build slow

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/listener/listenertest"
)

// scaleFigures are what TestSlowScaleIdle measures, logged as `figure | test | what | value |` lines.
type scaleFigures struct {
	t    *testing.T
	name string
}

func (f scaleFigures) log(what string, format string, args ...any) {
	line := fmt.Sprintf("figure | %s | %s | %s |", f.name, what, fmt.Sprintf(format, args...))
	f.t.Log(line)
	if path := os.Getenv("EB_SLOW_FIGURES"); path != "" {
		if fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			_, _ = fmt.Fprintln(fh, line)
			_ = fh.Close()
		}
	}
}

func envInt(t testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, name)
	return n
}

// procStat reads a process's CPU time (user + system) and resident memory from /proc.
func procStat(t testing.TB, pid int) (cpu time.Duration, rss int64, threads int) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	// The fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	threads, _ = strconv.Atoi(f[17])
	pages, _ := strconv.ParseInt(f[21], 10, 64)
	// USER_HZ is 100 on Linux.
	return time.Duration(utime+stime) * 10 * time.Millisecond, pages * int64(os.Getpagesize()), threads
}

// scaleProcess is the eventbridge binary, its output kept for counting.
type scaleProcess struct {
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func startScaleProcess(t *testing.T, bin, dir string, extra ...string) *scaleProcess {
	t.Helper()
	p := &scaleProcess{addr: listenertest.Addr(t), done: make(chan struct{})}
	args := append([]string{"--http-addr", p.addr, "--worker-addr", listenertest.Addr(t), "--data-dir", dir,
		"--allow-private-targets", "--log-level", "warn"}, extra...)
	p.cmd = exec.Command(bin, args...)
	w := &lockedWriter{mu: &p.mu, w: &p.out}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	require.NoError(t, p.cmd.Start())
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("eventbridge output (last 8 KiB):\n%s", p.tail(8<<10))
		}
	})
	waitReady(t, p.addr, 120*time.Second)
	return p
}

func (p *scaleProcess) tail(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.out.Bytes()
	return string(b[max(0, len(b)-n):])
}

// count returns the lines of the output holding s.
func (p *scaleProcess) count(s string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Count(p.out.String(), s)
}

// TestSlowScaleIdle creates buses (300 by default, EB_SCALE_BUSES for more, `make bench-scale`), each with a
// retention of 1 MiB, a rule and an http target, in accounts of 100 buses (the default quota) on the embedded
// worker; leaves them idle (60 s, EB_SCALE_IDLE_S) and counts the leases lost (0); puts one event on every bus and
// stops the process with SIGTERM: it exits cleanly, and after a restart every event is delivered, none twice.
// Create latency, idle CPU, memory and the time SIGTERM took are logged as figures, not asserted. EB_SCALE_FLAGS
// adds flags to the process.
func TestSlowScaleIdle(t *testing.T) {
	buses := envInt(t, "EB_SCALE_BUSES", 300)
	idle := time.Duration(envInt(t, "EB_SCALE_IDLE_S", 60)) * time.Second
	fig := scaleFigures{t: t, name: fmt.Sprintf("scale %d buses", buses)}
	bin := buildBinary(t)
	dir := t.TempDir()
	extra := strings.Fields(os.Getenv("EB_SCALE_FLAGS")) // e.g. --fsync 30s, to measure what a setting costs
	p := startScaleProcess(t, bin, dir, extra...)
	key, err := os.ReadFile(filepath.Join(dir, AdminAPIKeyFile))
	require.NoError(t, err)
	admin := api{t: t, base: "http://" + p.addr, key: strings.TrimSpace(string(key))}
	r := newReceiver(t)

	const perAccount = 100
	accounts := (buses + perAccount - 1) / perAccount
	clients := make([]api, accounts)
	for i := range clients {
		clients[i] = admin.newAccount(fmt.Sprintf("scale%03d", i))
	}
	type created struct {
		client api
		bus    string
	}
	var all []created
	for i := range buses {
		all = append(all, created{clients[i/perAccount], fmt.Sprintf("bus%03d", i%perAccount)})
	}
	// Four callers create at once, each a bus, its rule and its target, timing the bus creation. A failed call
	// stops the creation (no require outside the test's goroutine).
	call := func(c api, method, path string, body any, want int) error {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, c.base+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+c.key)
		req.Header.Set("X-Account-Id", c.account)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, out)
		}
		return nil
	}
	var mu sync.Mutex
	var latencies []time.Duration
	var failure error
	work := make(chan created)
	var wg sync.WaitGroup
	start := time.Now()
	for range 4 {
		wg.Go(func() {
			for c := range work {
				mu.Lock()
				failed := failure != nil
				mu.Unlock()
				if failed {
					continue
				}
				began := time.Now()
				err := call(c.client, "POST", "/api/v1/buses", map[string]any{"name": c.bus,
					"retention": map[string]any{"maxBytes": 1 << 20}}, 201)
				took := time.Since(began)
				if err == nil {
					err = call(c.client, "POST", "/api/v1/buses/"+c.bus+"/rules", map[string]any{"name": "all",
						"eventPattern": map[string]any{"source": []any{"scale"}}}, 201)
				}
				if err == nil {
					err = call(c.client, "PUT", "/api/v1/buses/"+c.bus+"/rules/all/targets/hook", httpTarget(r.srv.URL), 201)
				}
				mu.Lock()
				latencies = append(latencies, took)
				if err != nil && failure == nil {
					failure = err
				}
				mu.Unlock()
			}
		})
	}
	for _, c := range all {
		work <- c
	}
	close(work)
	wg.Wait()
	require.NoError(t, failure)
	slices.Sort(latencies)
	pct := func(q float64) time.Duration {
		return latencies[int(q*float64(len(latencies)-1))].Round(time.Millisecond)
	}
	fig.log("buses, rules and targets created", "%d each in %s", buses, time.Since(start).Round(time.Second))
	fig.log("bus create latency p50 / p99 / max", "%s / %s / %s", pct(0.5), pct(0.99), latencies[len(latencies)-1].Round(time.Millisecond))

	// Idle: no event, nothing changes. Let the last tasks settle first.
	time.Sleep(5 * time.Second)
	lostBefore := p.count("lease lost")
	cycles := func(m map[string]*dto.MetricFamily) (total, forced float64) {
		return value(m, "go_gc_cycles_total_gc_cycles_total", nil), value(m, "go_gc_cycles_forced_gc_cycles_total", nil)
	}
	total0, forced0 := cycles(admin.scrape())
	cpu0, _, _ := procStat(t, p.cmd.Process.Pid)
	t0 := time.Now()
	time.Sleep(idle)
	cpu1, rss, threads := procStat(t, p.cmd.Process.Pid)
	busy := float64(cpu1-cpu0) / float64(time.Since(t0))
	fig.log("idle CPU", "%.1f%% of one core over %s", 100*busy, idle)
	fig.log("resident memory", "%d MiB (%d threads)", rss>>20, threads)
	m := admin.scrape()
	mib := func(name string) int64 { return int64(value(m, name, nil)) >> 20 }
	fig.log("memory: heap in use / next collection at / free heap kept / stacks / goroutines",
		"%d / %d / %d / %d MiB / %d", mib("go_memstats_heap_inuse_bytes"), mib("go_memstats_next_gc_bytes"),
		int64(value(m, "go_memstats_heap_idle_bytes", nil)-value(m, "go_memstats_heap_released_bytes", nil))>>20,
		mib("go_memstats_stack_inuse_bytes"), int64(value(m, "go_goroutines", nil)))
	total1, forced1 := cycles(m)
	fig.log("collections while idle: all / forced (gcpace's releases)", "%.0f / %.0f", total1-total0, forced1-forced0)
	lost := p.count("lease lost") - lostBefore
	fig.log("leases lost while idle", "%d (%d since start)", lost, p.count("lease lost"))
	assert.Zero(t, p.count("lease lost"), "the worker lost its lease: its tasks stopped")
	assert.Zero(t, p.count("task stopped"), "tasks were stopped by their fencing")

	// One event per bus, then SIGTERM at once: stored events survive the stop and are delivered after a restart.
	want := map[string]bool{}
	for i, c := range all {
		id := fmt.Sprintf("ev-%d", i)
		c.client.putBatch(c.bus, []map[string]any{event(id, "scale", "t", nil)})
		want[id] = true
	}
	began := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatal("SIGTERM: the process did not exit within 60 s")
	}
	fig.log("SIGTERM → exit", "%s", time.Since(began).Round(time.Millisecond))
	assert.True(t, p.cmd.ProcessState.Success(), "SIGTERM: exited with %v", p.cmd.ProcessState)

	startScaleProcess(t, bin, dir, extra...)
	r.waitFor(t, want) // every event, none twice
	fig.log("events lost / delivered twice after SIGTERM and restart", "0 / 0 of %d", len(want))
}
