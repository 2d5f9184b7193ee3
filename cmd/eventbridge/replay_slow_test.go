//go:build slow

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlowReplayResumesAfterKill: a replay of 2,000 archived events at 250 events/s is interrupted by SIGKILL of
// the process (the control plane and its embedded worker together) half-way; after a restart on the same data
// directory it resumes from its offset and completes: every archived event of the window reached the target with
// its replayname, none missing; what was put twice is counted (the replay's duplicates, the target's extra
// deliveries).
func TestSlowReplayResumesAfterKill(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	recv := newReplayReceiver(t)
	p := startProcess(t, bin, dir)
	key, err := os.ReadFile(filepath.Join(dir, AdminAPIKeyFile))
	require.NoError(t, err)
	a := api{t: t, base: "http://" + p.addr, key: strings.TrimSpace(string(key))}
	a.must("POST", "/api/v1/buses", map[string]any{"name": "rk"}, 201)
	a.must("POST", "/api/v1/buses/rk/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"k"}}}, 201)
	a.must("PUT", "/api/v1/buses/rk/rules/all/targets/t", httpTarget(recv.srv.URL), 201)
	a.must("POST", "/api/v1/buses/rk/archives", map[string]any{"name": "ka"}, 201)

	const total = 2000
	start := time.Now().UTC()
	for b := 0; b < total/100; b++ {
		var batch []map[string]any
		for i := range 100 {
			batch = append(batch, event(fmt.Sprintf("k%d", b*100+i), "k", "t", map[string]any{"i": i}))
		}
		a.putBatch("rk", batch)
	}
	require.Eventually(t, func() bool {
		return decodeArchive(t, a.must("GET", "/api/v1/buses/rk/archives/ka", nil, 200)).EventCount == total
	}, 60*time.Second, 100*time.Millisecond, "archived")
	time.Sleep(10 * time.Millisecond)
	a.must("POST", "/api/v1/replays", map[string]any{"name": "again", "archive": "ka", "eventStartTime": start.Add(-time.Second),
		"eventEndTime": time.Now().UTC(), "rate": 250}, 201)

	require.Eventually(t, func() bool { n, _ := recv.count("again"); return n >= total/3 }, 60*time.Second, 20*time.Millisecond,
		"the replay is under way")
	before, _ := recv.count("again")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	_, _ = p.cmd.Process.Wait()
	t.Logf("killed with %d of %d events replayed to the target", before, total)

	p = startProcess(t, bin, dir)
	a.base = "http://" + p.addr
	var r replayAnswer
	require.Eventually(t, func() bool {
		require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/replays/again", nil, 200), &r))
		return r.State == "COMPLETED" || r.State == "FAILED"
	}, 120*time.Second, 200*time.Millisecond, "the replay ends after the restart")
	require.Equal(t, "COMPLETED", r.State, r.StateReason)
	require.Eventually(t, func() bool { n, _ := recv.count("again"); return n == total }, 60*time.Second, 100*time.Millisecond,
		"every archived event of the window reached the target")
	events, deliveries := recv.count("again")
	assert.Equal(t, total, events, "0 missing")
	assert.GreaterOrEqual(t, int(r.EventsReplayed), total, "the replay counted every event")
	t.Logf("replay completed after the kill: %d events, %d deliveries (%d twice at the target), replay duplicates %d, eventsReplayed %d",
		events, deliveries, deliveries-events, r.Duplicates, r.EventsReplayed)
	// Bounded: what the target's task had in flight (64) and delivered without its acknowledgement reaching the
	// server yet (acks are not awaited: at most as many again), and one read of the replay (half a second at 250/s)
	// when killed.
	assert.LessOrEqual(t, deliveries-events+int(r.Duplicates), 2*64+125, "duplicates are bounded by what was in flight")
	live, _ := recv.count("")
	assert.Equal(t, total, live, "and the live events were delivered once each at least")
}
