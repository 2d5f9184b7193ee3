package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replayReceiver is an HTTP target that counts what it gets by event id, live and per replay name.
type replayReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	// got counts deliveries by "<replayname>/<id>" ("" for live events).
	got map[string]int
}

func newReplayReceiver(t *testing.T) *replayReceiver {
	r := &replayReceiver{got: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.got[req.Header.Get("ce-replayname")+"/"+req.Header.Get("ce-id")]++
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// count returns how many distinct events of a replay ("" live) arrived, and how many deliveries in all.
func (r *replayReceiver) count(replay string) (events, deliveries int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, n := range r.got {
		if len(k) > len(replay) && k[:len(replay)+1] == replay+"/" {
			events++
			deliveries += n
		}
	}
	return events, deliveries
}

type replayAnswer struct {
	Name           string `json:"name"`
	State          string `json:"state"`
	StateReason    string `json:"stateReason"`
	EventsReplayed uint64 `json:"eventsReplayed"`
	Duplicates     uint64 `json:"duplicates"`
	Destination    struct {
		Bus    string   `json:"bus"`
		Rules  []string `json:"rules"`
		Target *struct {
			Rule   string `json:"rule"`
			Target string `json:"target"`
		} `json:"target"`
	} `json:"destination"`
}

func getReplay(t *testing.T, a api, name string) replayAnswer {
	t.Helper()
	var r replayAnswer
	require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/replays/"+name, nil, 200), &r))
	return r
}

// waitReplay waits for a replay to reach state.
func waitReplay(t *testing.T, a api, name, state string) replayAnswer {
	t.Helper()
	var r replayAnswer
	if !assert.Eventually(t, func() bool {
		r = getReplay(t, a, name)
		return r.State == state
	}, 30*time.Second, 50*time.Millisecond, "replay %s reaches %s", name, state) {
		t.Fatalf("replay %s is %s (%s), %d events replayed", name, r.State, r.StateReason, r.EventsReplayed)
	}
	return r
}

// TestReplays: a replay puts exactly the archived events of its window on the bus again, with the extension
// replayname, to the rules it names (a rule whose pattern excludes replayed events gets none) or to one target of
// one rule; events put by a replay are not archived again; events after the window are not replayed; a replay
// reaches COMPLETED with its count; cancel stops a running one.
func TestReplays(t *testing.T) {
	t.Parallel()
	m := startMain(t, t.TempDir())
	t.Cleanup(func() { _ = m.Close() })
	a := apiOf(t, m)
	all, liveOnly, other := newReplayReceiver(t), newReplayReceiver(t), newReplayReceiver(t)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "rp", "logConfig": map[string]any{"level": "INFO"}}, 201)
	a.must("POST", "/api/v1/buses/rp/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
	a.must("PUT", "/api/v1/buses/rp/rules/all/targets/t", httpTarget(all.srv.URL), 201)
	a.must("POST", "/api/v1/buses/rp/rules", map[string]any{"name": "live-only", "eventPattern": map[string]any{
		"source": []any{"shop"}, "replayname": []any{map[string]any{"exists": false}}}}, 201)
	a.must("PUT", "/api/v1/buses/rp/rules/live-only/targets/t", httpTarget(liveOnly.srv.URL), 201)
	a.must("POST", "/api/v1/buses/rp/rules", map[string]any{"name": "other", "eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
	a.must("PUT", "/api/v1/buses/rp/rules/other/targets/c", httpTarget(other.srv.URL), 201)
	a.must("POST", "/api/v1/buses/rp/archives", map[string]any{"name": "arch"}, 201)

	start := time.Now().UTC()
	var batch []map[string]any
	for i := range 20 {
		batch = append(batch, event(fmt.Sprintf("e%d", i), "shop", "order.created", map[string]any{"i": i}))
	}
	a.putBatch("rp", batch)
	require.Eventually(t, func() bool {
		n, _ := all.count("")
		return n == 20 && decodeArchive(t, a.must("GET", "/api/v1/buses/rp/archives/arch", nil, 200)).EventCount == 20
	}, 20*time.Second, 50*time.Millisecond, "delivered live and archived")
	time.Sleep(5 * time.Millisecond)
	end := time.Now().UTC()
	time.Sleep(5 * time.Millisecond)
	var later []map[string]any
	for i := range 5 {
		later = append(later, event(fmt.Sprintf("late%d", i), "shop", "order.created", map[string]any{"i": i}))
	}
	a.putBatch("rp", later) // after the window: never replayed

	window := map[string]any{"archive": "arch", "eventStartTime": start.Add(-time.Second), "eventEndTime": end}
	body := func(name string, dest map[string]any, extra ...any) map[string]any {
		out := map[string]any{"name": name, "destination": dest}
		for k, v := range window {
			out[k] = v
		}
		for i := 0; i+1 < len(extra); i += 2 {
			out[extra[i].(string)] = extra[i+1]
		}
		return out
	}

	var started replayAnswer
	require.NoError(t, json.Unmarshal(a.must("POST", "/api/v1/replays",
		body("r1", map[string]any{"rules": []any{"all", "live-only"}}), 201), &started))
	assert.Equal(t, "STARTING", started.State)
	assert.Equal(t, "rp", started.Destination.Bus)
	done := waitReplay(t, a, "r1", "COMPLETED")
	assert.EqualValues(t, 20, done.EventsReplayed)
	require.Eventually(t, func() bool { n, _ := all.count("r1"); return n == 20 }, 20*time.Second, 50*time.Millisecond)
	n, deliveries := all.count("r1")
	assert.Equal(t, 20, n, "exactly the window's events")
	assert.Equal(t, 20, deliveries, "each once")
	n, _ = liveOnly.count("r1")
	assert.Zero(t, n, "a rule whose pattern excludes replayed events gets none")
	n, _ = other.count("r1")
	assert.Zero(t, n, "a rule the replay does not name gets none")

	// One target of one rule.
	a.must("POST", "/api/v1/replays", body("r2", map[string]any{"target": map[string]any{"rule": "other", "target": "c"}}), 201)
	waitReplay(t, a, "r2", "COMPLETED")
	require.Eventually(t, func() bool { n, _ := other.count("r2"); return n == 20 }, 20*time.Second, 50*time.Millisecond)
	n, _ = all.count("r2")
	assert.Zero(t, n)

	// Replayed events are not archived again: the archive holds the 20 and the 5 put later.
	assert.EqualValues(t, 25, decodeArchive(t, a.must("GET", "/api/v1/buses/rp/archives/arch", nil, 200)).EventCount)

	// Cancel a slow replay while it runs.
	a.must("POST", "/api/v1/replays", body("slow", map[string]any{"rules": []any{"all"}}, "rate", 2), 201)
	waitReplay(t, a, "slow", "RUNNING")
	var cancelled replayAnswer
	require.NoError(t, json.Unmarshal(a.must("POST", "/api/v1/replays/slow/cancel", nil, 200), &cancelled))
	assert.Contains(t, []string{"CANCELLING", "CANCELLED"}, cancelled.State)
	cancelled = waitReplay(t, a, "slow", "CANCELLED")
	time.Sleep(time.Second)
	n, _ = all.count("slow")
	assert.Less(t, n, 20, "cancelled before its end")
	status, out := a.do("POST", "/api/v1/replays/slow/cancel", "", nil)
	assert.Equal(t, 409, status, "an ended replay cannot be cancelled: %s", out)

	// The bus log records each replay's start and end.
	require.Eventually(t, func() bool {
		started := string(a.must("GET", "/api/v1/buses/rp/log?type=REPLAY_STARTED", nil, 200))
		completed := string(a.must("GET", "/api/v1/buses/rp/log?type=REPLAY_COMPLETED", nil, 200))
		cancelledLog := string(a.must("GET", "/api/v1/buses/rp/log?type=REPLAY_CANCELLED", nil, 200))
		return strings.Contains(started, `"replay":"r1"`) && strings.Contains(started, "rules all, live-only") &&
			strings.Contains(completed, `"replay":"r1"`) && strings.Contains(completed, "20 events replayed") &&
			strings.Contains(cancelledLog, `"replay":"slow"`)
	}, 10*time.Second, 100*time.Millisecond, "REPLAY_STARTED, REPLAY_COMPLETED and REPLAY_CANCELLED in the bus log")

	list := a.must("GET", "/api/v1/replays?state=COMPLETED", nil, 200)
	assert.Contains(t, string(list), `"name":"r1"`)
	assert.NotContains(t, string(list), `"name":"slow"`)
}

// TestReplayFailsWithItsArchive: deleting the archive of a running replay fails the replay, with a reason, and its
// connector is removed; starting a replay validates its window and destination, naming the field.
func TestReplayFailsWithItsArchive(t *testing.T) {
	t.Parallel()
	m := startMain(t, t.TempDir())
	t.Cleanup(func() { _ = m.Close() })
	a := apiOf(t, m)
	recv := newReplayReceiver(t)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "rf"}, 201)
	a.must("POST", "/api/v1/buses/rf/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
	a.must("PUT", "/api/v1/buses/rf/rules/all/targets/t", httpTarget(recv.srv.URL), 201)
	a.must("POST", "/api/v1/buses/rf/archives", map[string]any{"name": "gone"}, 201)
	start := time.Now().UTC()
	var batch []map[string]any
	for i := range 50 {
		batch = append(batch, event(fmt.Sprintf("f%d", i), "shop", "t", map[string]any{"i": i}))
	}
	a.putBatch("rf", batch)
	require.Eventually(t, func() bool {
		return decodeArchive(t, a.must("GET", "/api/v1/buses/rf/archives/gone", nil, 200)).EventCount == 50
	}, 20*time.Second, 50*time.Millisecond)
	end := time.Now().UTC()

	for _, bad := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "x", "archive": "gone", "eventStartTime": end, "eventEndTime": start}, "eventEndTime"},
		{map[string]any{"name": "x", "archive": "gone", "eventStartTime": start, "eventEndTime": end.Add(time.Hour)}, "eventEndTime"},
		{map[string]any{"name": "x", "archive": "gone", "eventStartTime": start, "eventEndTime": end, "rate": -1}, "rate"},
		{map[string]any{"name": "x", "archive": "gone", "eventEndTime": end}, "eventStartTime"},
		{map[string]any{"name": "x.y", "archive": "gone", "eventStartTime": start, "eventEndTime": end}, "name"},
		{map[string]any{"name": "x", "eventStartTime": start, "eventEndTime": end}, "archive"},
	} {
		status, out := a.do("POST", "/api/v1/replays", "application/json", jsonBody(t, bad.body))
		assert.Equal(t, 400, status, "%v: %s", bad.body, out)
		assert.Contains(t, string(out), `"field":"`+bad.field+`"`, "%v: %s", bad.body, out)
	}
	status, out := a.do("POST", "/api/v1/replays", "application/json", jsonBody(t, map[string]any{"name": "x", "archive": "gone",
		"eventStartTime": start, "eventEndTime": end, "destination": map[string]any{"rules": []any{"nope"}}}))
	assert.Equal(t, 404, status, string(out))
	assert.Contains(t, string(out), "RuleNotFound")
	status, out = a.do("POST", "/api/v1/replays", "application/json", jsonBody(t, map[string]any{"name": "x", "archive": "gone",
		"eventStartTime": start, "eventEndTime": end, "destination": map[string]any{"target": map[string]any{"rule": "all", "target": "nope"}}}))
	assert.Equal(t, 404, status, string(out))
	assert.Contains(t, string(out), "TargetNotFound")

	a.must("POST", "/api/v1/replays", map[string]any{"name": "doomed", "archive": "gone", "eventStartTime": start.Add(-time.Second),
		"eventEndTime": end, "rate": 5}, 201)
	waitReplay(t, a, "doomed", "RUNNING")
	a.must("DELETE", "/api/v1/buses/rf/archives/gone", nil, 204)
	failed := waitReplay(t, a, "doomed", "FAILED")
	assert.NotEmpty(t, failed.StateReason, "a failed replay says why")
	n, _ := recv.count("doomed")
	assert.Less(t, n, 50)
	require.Eventually(t, func() bool {
		return !strings.Contains(string(a.must("GET", "/api/v1/runtime/connectors", nil, 200)), "=replay.doomed")
	}, 20*time.Second, 100*time.Millisecond, "the failed replay's connector is removed")
}

func jsonBody(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
