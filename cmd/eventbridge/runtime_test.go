package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runtimeConnectors is the answer of GET /api/v1/runtime/connectors.
type runtimeConnectors struct {
	Connectors []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		State    string `json:"state"`
		WorkerID string `json:"workerId"`
		Tasks    []struct {
			ID       int    `json:"id"`
			State    string `json:"state"`
			WorkerID string `json:"workerId"`
		} `json:"tasks"`
	} `json:"connectors"`
}

// asAccount sends a request without a body as account and returns the status and the answer.
func (a api) asAccount(account, method, path string) (int, []byte) {
	a.t.Helper()
	req, err := http.NewRequest(method, a.base+path, nil)
	require.NoError(a.t, err)
	req.Header.Set("X-Account-Id", account)
	req.Header.Set("Authorization", "Bearer "+a.key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(a.t, err)
	return resp.StatusCode, b
}

// connectorStates reads the states of the default account's connectors: connector state and task states, by name.
func (a api) connectorStates() (map[string]string, map[string][]string) {
	a.t.Helper()
	var list runtimeConnectors
	require.NoError(a.t, json.Unmarshal(a.must("GET", "/api/v1/runtime/connectors", nil, 200), &list))
	states, tasks := map[string]string{}, map[string][]string{}
	for _, c := range list.Connectors {
		states[c.Name] = c.State
		for _, t := range c.Tasks {
			tasks[c.Name] = append(tasks[c.Name], t.State)
		}
	}
	return states, tasks
}

// waitState waits until the connector and every one of its tasks (at least one) are in state.
func (a api) waitState(connector, state string) {
	a.t.Helper()
	require.Eventuallyf(a.t, func() bool {
		states, tasks := a.connectorStates()
		if states[connector] != state || len(tasks[connector]) == 0 {
			return false
		}
		for _, s := range tasks[connector] {
			if s != state {
				return false
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "waiting for %s to be %s", connector, state)
}

// problemCode is the code of a problem document.
func problemCode(t *testing.T, body []byte) string {
	t.Helper()
	var p struct{ Code string }
	require.NoErrorf(t, json.Unmarshal(body, &p), "answer: %s", body)
	return p.Code
}

// TestRuntimeFromTheControlPlane drives the embedded worker through /api/v1/runtime: workers, the account's
// connectors and their states, pause (events put meanwhile wait), resume (they arrive), restarts, plugins and
// their schemas, and account isolation.
func TestRuntimeFromTheControlPlane(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	r := newReceiver(t)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "orders"}, 201)
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "all",
		"eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
	a.must("PUT", "/api/v1/buses/orders/rules/all/targets/hook", httpTarget(r.srv.URL), 201)
	const router, hook = "eb.default.orders.router", "eb.default.orders.all.hook"

	want := map[string]bool{}
	put := func(prefix string, n int) map[string]bool {
		var evs []map[string]any
		ids := map[string]bool{}
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("%s-%d", prefix, i)
			evs = append(evs, event(id, "shop", "order.created", map[string]any{"i": i}))
			ids[id], want[id] = true, true
		}
		a.putBatch("orders", evs)
		return ids
	}
	put("before", 20)
	r.waitFor(t, want)

	// Workers: the embedded one.
	var workers struct {
		Workers []struct {
			ID, Version            string
			Started, LastHeartbeat time.Time
		} `json:"workers"`
	}
	require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/runtime/workers", nil, 200), &workers))
	require.Len(t, workers.Workers, 1)
	require.Equal(t, "embedded", workers.Workers[0].ID)
	w := workers.Workers[0]
	require.False(t, w.Started.IsZero(), "the worker's start is shown")
	require.False(t, w.LastHeartbeat.Before(w.Started), "its last heartbeat (%v) follows its start (%v)", w.LastHeartbeat, w.Started)
	seen := w.LastHeartbeat
	require.Eventually(t, func() bool {
		require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/runtime/workers", nil, 200), &workers))
		return len(workers.Workers) == 1 && workers.Workers[0].LastHeartbeat.After(seen)
	}, 10*time.Second, 100*time.Millisecond, "the heartbeat moves on")

	// Connectors: the bus's router and the target's sink, running on the embedded worker.
	var list runtimeConnectors
	require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/runtime/connectors", nil, 200), &list))
	require.Len(t, list.Connectors, 2, "the router and the target: %+v", list)
	require.Equal(t, router, list.Connectors[1].Name)
	require.Equal(t, hook, list.Connectors[0].Name)
	for _, c := range list.Connectors {
		require.Equal(t, "sink", c.Type)
		require.Equal(t, "RUNNING", c.State)
		require.Equal(t, "embedded", c.WorkerID)
		require.NotEmpty(t, c.Tasks)
		for _, task := range c.Tasks {
			require.Equal(t, "embedded", task.WorkerID)
		}
	}

	// Pause: events put meanwhile wait in the stream.
	a.must("POST", "/api/v1/runtime/connectors/"+hook+"/pause", nil, 202)
	a.waitState(hook, "PAUSED")
	before := r.snapshot()
	during := put("during", 20)
	time.Sleep(2 * time.Second)
	got := r.snapshot()
	for id := range during {
		require.Zerof(t, got[id], "event %s was delivered while the target connector was paused", id)
	}
	require.Equal(t, before, got, "nothing is delivered while paused")

	// Resume: they arrive, each once.
	a.must("POST", "/api/v1/runtime/connectors/"+hook+"/resume", nil, 202)
	a.waitState(hook, "RUNNING")
	r.waitFor(t, want)

	// Restart the connector with its tasks, then one task; it keeps delivering.
	a.must("POST", "/api/v1/runtime/connectors/"+hook+"/restart?includeTasks=true&onlyFailed=false", nil, 202)
	a.waitState(hook, "RUNNING")
	a.must("POST", "/api/v1/runtime/connectors/"+hook+"/tasks/0/restart", nil, 202)
	a.waitState(hook, "RUNNING")
	put("after", 20)
	r.waitFor(t, want)

	status, body := a.do("POST", "/api/v1/runtime/connectors/"+hook+"/tasks/7/restart", "", nil)
	require.Equal(t, 404, status, string(body))
	require.Equal(t, "TaskNotFound", problemCode(t, body))
	status, body = a.do("POST", "/api/v1/runtime/connectors/"+hook+"/restart?includeTasks=maybe", "", nil)
	require.Equal(t, 400, status, string(body))
	status, body = a.do("POST", "/api/v1/runtime/connectors/eb.default.orders.nope.hook/pause", "", nil)
	require.Equal(t, 404, status, string(body))
	require.Equal(t, "ConnectorNotFound", problemCode(t, body))

	// Plugins and a plugin's schema.
	var plugins struct {
		Plugins []struct{ Class, Type string } `json:"plugins"`
	}
	require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/runtime/plugins", nil, 200), &plugins))
	classes := map[string]string{}
	for _, p := range plugins.Plugins {
		classes[p.Class] = p.Type
	}
	require.Equal(t, "sink", classes["http"], "plugins: %+v", plugins)
	require.Equal(t, "sink", classes["router"], "plugins: %+v", plugins)
	var schema map[string]any
	require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/runtime/plugins/http/schema", nil, 200), &schema))
	require.Contains(t, schema, "properties")
	require.Contains(t, schema["properties"], "url", "the http plugin's config has a url")
	status, body = a.do("GET", "/api/v1/runtime/plugins/nope/schema", "", nil)
	require.Equal(t, 404, status, string(body))
	require.Equal(t, "PluginNotFound", problemCode(t, body))

	// Another account sees none of default's connectors and cannot act on them.
	a.must("POST", "/api/v1/accounts", map[string]any{"id": "other"}, 201)
	status, body = a.asAccount("other", "GET", "/api/v1/runtime/connectors")
	require.Equal(t, 200, status, string(body))
	require.JSONEq(t, `{"connectors": []}`, string(body))
	for _, action := range []string{"pause", "resume", "stop", "restart", "tasks/0/restart"} {
		status, body = a.asAccount("other", "POST", "/api/v1/runtime/connectors/"+hook+"/"+action)
		require.Equalf(t, 404, status, "%s: %s", action, body)
		require.Equal(t, "ConnectorNotFound", problemCode(t, body))
	}
	a.waitState(hook, "RUNNING")
	put("last", 5)
	r.waitFor(t, want)
}
