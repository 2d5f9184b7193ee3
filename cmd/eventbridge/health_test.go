package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// targetHealth is the part of a target's answer these tests read.
type targetHealth struct {
	Status struct {
		State       string  `json:"state"`
		Health      string  `json:"health"`
		LastError   *string `json:"lastError"`
		LastFailure *struct {
			At         time.Time `json:"at"`
			Attempt    uint64    `json:"attempt"`
			ErrorClass string    `json:"errorClass"`
			HTTPStatus int       `json:"httpStatus"`
			Message    string    `json:"message"`
			Response   string    `json:"response"`
		} `json:"lastFailure"`
		LastSuccessAt *time.Time `json:"lastSuccessAt"`
	} `json:"status"`
}

// health reads the status of the target at path.
func (a api) health(path string) targetHealth {
	a.t.Helper()
	var th targetHealth
	require.NoError(a.t, json.Unmarshal(a.must("GET", path, nil, 200), &th))
	return th
}

// waitHealth waits until the target at path shows health want, and returns its status.
func (a api) waitHealth(path, want string, within time.Duration) targetHealth {
	a.t.Helper()
	var th targetHealth
	require.Eventuallyf(a.t, func() bool {
		th = a.health(path)
		return th.Status.Health == want
	}, within, 50*time.Millisecond, "%s never became %s", path, want)
	return th
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestTargetHealthFollowsDeliveries: a target at a closed port leaves HEALTHY at its first failed attempt
// (RETRYING, connection-refused, lastError set), becomes FAILING after --health-failing-attempts, and HEALTHY again
// with lastSuccessAt once the receiver listens; a target without retries dead-letters (DEAD_LETTERING); a target
// whose name does not resolve fails with the class dns.
func TestTargetHealthFollowsDeliveries(t *testing.T) {
	t.Parallel()
	m := startMain(t, t.TempDir(), "--health-failing-attempts", "3")
	t.Cleanup(func() { _ = m.Close() })
	a := apiOf(t, m)
	addr := closedPort(t)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "h"}, 201)
	a.must("POST", "/api/v1/buses/h/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"h"}}}, 201)
	down, dead, dns := "/api/v1/buses/h/rules/all/targets/down", "/api/v1/buses/h/rules/all/targets/dead",
		"/api/v1/buses/h/rules/all/targets/dns"
	a.must("PUT", down, httpTarget("http://"+addr+"/in"), 201)
	noRetry := httpTarget("http://" + addr + "/in")
	noRetry["retryPolicy"] = map[string]any{"maximumRetryAttempts": 0, "maximumEventAgeInSeconds": 86400}
	a.must("PUT", dead, noRetry, 201)
	a.must("PUT", dns, httpTarget("http://crm.example.invalid/in"), 201)
	for _, p := range []string{down, dead, dns} {
		a.waitHealth(p, "HEALTHY", 15*time.Second) // running, nothing attempted yet
		th := a.health(p)
		assert.Nil(t, th.Status.LastError, p)
		assert.Nil(t, th.Status.LastFailure, p)
		assert.Nil(t, th.Status.LastSuccessAt, p)
	}

	put := time.Now()
	a.putBatch("h", []map[string]any{event("e1", "h", "t", map[string]any{"n": 1})})

	th := a.waitHealth(down, "RETRYING", 10*time.Second)
	require.NotNil(t, th.Status.LastFailure)
	assert.Equal(t, "connection-refused", th.Status.LastFailure.ErrorClass)
	assert.EqualValues(t, 1, th.Status.LastFailure.Attempt)
	assert.True(t, th.Status.LastFailure.At.After(put.Add(-time.Second)), "failure at %s", th.Status.LastFailure.At)
	require.NotNil(t, th.Status.LastError, "lastError is set at the first failed attempt")
	assert.Equal(t, th.Status.LastFailure.Message, *th.Status.LastError)
	assert.Contains(t, *th.Status.LastError, "connection refused")
	assert.Equal(t, "RUNNING", th.Status.State, "the task itself runs")

	th = a.waitHealth(dead, "DEAD_LETTERING", 10*time.Second)
	require.NotNil(t, th.Status.LastFailure)
	assert.Equal(t, "connection-refused", th.Status.LastFailure.ErrorClass)

	// By now the name that does not resolve may have failed its third attempt too (FAILING with
	// --health-failing-attempts 3): on a loaded machine the waits above take seconds.
	require.Eventuallyf(t, func() bool {
		th = a.health(dns)
		return th.Status.Health == "RETRYING" || th.Status.Health == "FAILING"
	}, 10*time.Second, 50*time.Millisecond, "%s never left HEALTHY", dns)
	require.NotNil(t, th.Status.LastFailure)
	assert.Equal(t, "dns", th.Status.LastFailure.ErrorClass)

	// Attempts 2 and 3 come about 1 s and 3 s after the first (retry delays of 1 s, doubling).
	th = a.waitHealth(down, "FAILING", 15*time.Second)
	assert.GreaterOrEqual(t, th.Status.LastFailure.Attempt, uint64(3))

	// The runtime's list of connectors (the console's runtime page) judges it the same way.
	var rt struct {
		Connectors []struct {
			Name, Health string
			LastFailure  *struct{ ErrorClass, Message string }
		}
	}
	require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/runtime/connectors", nil, 200), &rt))
	seen := map[string]string{}
	for _, c := range rt.Connectors {
		seen[c.Name] = c.Health
		if c.Name == "eb.default.h.all.down" {
			require.NotNil(t, c.LastFailure)
			assert.Equal(t, "connection-refused", c.LastFailure.ErrorClass)
			assert.Contains(t, c.LastFailure.Message, "connection refused")
		}
	}
	assert.Equal(t, "FAILING", seen["eb.default.h.all.down"], "%v", seen)
	assert.Equal(t, "HEALTHY", seen["eb.default.h.router"], "a router reports no deliveries: healthy while it runs")

	// The receiver comes up at the address: the next attempt (about 4 s later) succeeds.
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	got := make(chan string, 4)
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("ce-id")
		w.WriteHeader(http.StatusNoContent)
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	th = a.waitHealth(down, "HEALTHY", 20*time.Second)
	require.NotNil(t, th.Status.LastSuccessAt)
	require.NotNil(t, th.Status.LastFailure, "the last failure stays visible, with its time")
	assert.True(t, th.Status.LastSuccessAt.After(th.Status.LastFailure.At))
	assert.Nil(t, th.Status.LastError, "no error while the last attempt succeeded")
	select {
	case id := <-got:
		assert.Equal(t, "e1", id)
	case <-time.After(5 * time.Second):
		t.Fatal("the receiver got nothing")
	}
}

// TestTargetHealthEgressRefused: a target at a private address that the egress guard refuses (no
// --allow-private-targets) gives its record up at once: DEAD_LETTERING with the class egress-refused and a message
// that says how to allow it.
func TestTargetHealthEgressRefused(t *testing.T) {
	t.Parallel()
	m := NewMain()
	require.NoError(t, m.ParseFlags([]string{"--http-addr", "127.0.0.1:0", "--worker-addr", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--log-level", "warn"}, func(string) string { return "" }))
	require.NoError(t, m.Run(context.Background()))
	t.Cleanup(func() { _ = m.Close() })
	a := apiOf(t, m)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "h"}, 201)
	a.must("POST", "/api/v1/buses/h/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"h"}}}, 201)
	path := "/api/v1/buses/h/rules/all/targets/private"
	a.must("PUT", path, httpTarget("http://10.1.2.3:8080/in"), 201)
	a.waitHealth(path, "HEALTHY", 15*time.Second)
	a.putBatch("h", []map[string]any{event("e1", "h", "t", map[string]any{"n": 1})})
	th := a.waitHealth(path, "DEAD_LETTERING", 10*time.Second)
	require.NotNil(t, th.Status.LastFailure)
	assert.Equal(t, "egress-refused", th.Status.LastFailure.ErrorClass)
	require.NotNil(t, th.Status.LastError)
	assert.Contains(t, *th.Status.LastError, "--egress-allow")
}

// TestTargetCountersSurvivePauseAndRestart: a target's counters count every event once over a pause and resume
// by an operator and a restart of the process, while its task's counters start again with each run.
func TestTargetCountersSurvivePauseAndRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := startMain(t, dir)
	a := apiOf(t, m)
	got := make(chan string, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("ce-id")
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "h"}, 201)
	a.must("POST", "/api/v1/buses/h/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"h"}}}, 201)
	path := "/api/v1/buses/h/rules/all/targets/t"
	a.must("PUT", path, httpTarget(srv.URL), 201)
	n := 0
	deliver := func(a api, k int) {
		t.Helper()
		for range k {
			n++
			a.putBatch("h", []map[string]any{event(fmt.Sprintf("e%d", n), "h", "t", map[string]any{"n": n})})
			select {
			case <-got:
			case <-time.After(10 * time.Second):
				t.Fatalf("event e%d was not delivered", n)
			}
		}
	}
	type counters struct{ Read, Delivered uint64 }
	read := func(a api) (total, task *counters, state string) {
		var tg struct {
			Status struct {
				State    string    `json:"state"`
				Counters *counters `json:"counters"`
				Tasks    []struct {
					Counters *counters `json:"counters"`
				} `json:"tasks"`
			} `json:"status"`
		}
		require.NoError(t, json.Unmarshal(a.must("GET", path, nil, 200), &tg))
		if len(tg.Status.Tasks) == 1 {
			task = tg.Status.Tasks[0].Counters
		}
		return tg.Status.Counters, task, tg.Status.State
	}
	waitDelivered := func(a api, want uint64, why string) {
		t.Helper()
		require.Eventually(t, func() bool { c, _, _ := read(a); return c != nil && c.Delivered == want }, 15*time.Second, 50*time.Millisecond, why)
	}

	a.waitHealth(path, "HEALTHY", 15*time.Second)
	deliver(a, 3)
	waitDelivered(a, 3, "three delivered")

	connector := "/api/v1/runtime/connectors/eb.default.h.all.t"
	a.must("POST", connector+"/pause", nil, 202)
	require.Eventually(t, func() bool { _, _, s := read(a); return s == "PAUSED" }, 15*time.Second, 50*time.Millisecond)
	total, _, _ := read(a)
	require.NotNil(t, total)
	assert.EqualValues(t, 3, total.Delivered, "a paused target keeps its counters")
	a.must("POST", connector+"/resume", nil, 202)
	deliver(a, 2)
	waitDelivered(a, 5, "pause and resume lose nothing")
	_, task, _ := read(a)
	require.NotNil(t, task)
	assert.EqualValues(t, 2, task.Delivered, "the task's own counters are since it started")

	require.NoError(t, m.Close())
	m = startMain(t, dir)
	t.Cleanup(func() { _ = m.Close() })
	a = apiOf(t, m)
	waitDelivered(a, 5, "a restart of the process loses nothing")
	deliver(a, 1)
	waitDelivered(a, 6, "and counts on")
	total, _, _ = read(a)
	assert.EqualValues(t, 6, total.Read)

	// The rule's counters: what the router routed to it, and its target's.
	type ruleCounters struct{ Matched, Read, Delivered uint64 }
	var rl struct{ Counters *ruleCounters }
	require.Eventually(t, func() bool {
		require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/buses/h/rules/all", nil, 200), &rl))
		return rl.Counters != nil && rl.Counters.Matched == 6
	}, 15*time.Second, 50*time.Millisecond, "the rule matched six events over the restart")
	assert.Equal(t, ruleCounters{Matched: 6, Read: 6, Delivered: 6}, *rl.Counters)
	var list struct {
		Rules []struct{ Counters *ruleCounters }
	}
	require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/buses/h/rules", nil, 200), &list))
	require.Len(t, list.Rules, 1)
	require.NotNil(t, list.Rules[0].Counters)
	assert.EqualValues(t, 6, list.Rules[0].Counters.Delivered)
}

// TestSourceHealth: an MQTT source whose broker refuses the connection leaves HEALTHY with the error in lastError
// and lastFailure; one reading the machine's Mosquitto is HEALTHY.
func TestSourceHealth(t *testing.T) {
	t.Parallel()
	m := startMain(t, t.TempDir())
	t.Cleanup(func() { _ = m.Close() })
	a := apiOf(t, m)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "h"}, 201)
	source := func(name, url string) {
		a.must("POST", "/api/v1/buses/h/sources", map[string]any{"name": name, "type": "mqtt",
			"config": map[string]any{"mqtt.url": url, "mqtt.topics": "eb-health-test/" + name}}, 201)
	}
	source("down", "tcp://"+closedPort(t))
	source("up", "tcp://127.0.0.1:1883")

	var down targetHealth
	require.Eventually(t, func() bool {
		down = a.health("/api/v1/buses/h/sources/down")
		return down.Status.Health != "PENDING" && down.Status.Health != "HEALTHY"
	}, 20*time.Second, 100*time.Millisecond, "a source whose broker refuses leaves HEALTHY")
	assert.Contains(t, []string{"RETRYING", "FAILING"}, down.Status.Health, "its reads are retried")
	require.NotNil(t, down.Status.LastError)
	assert.Contains(t, *down.Status.LastError, "refused")
	require.NotNil(t, down.Status.LastFailure)
	assert.Equal(t, "connection-refused", down.Status.LastFailure.ErrorClass)
	a.waitHealth("/api/v1/buses/h/sources/up", "HEALTHY", 20*time.Second)
}
