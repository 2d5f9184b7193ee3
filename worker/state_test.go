package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/herder"
)

// The status of connectors and tasks and the task configs live in KV, kept in step with the connector's life.
func TestStatusAndTaskConfigsInKV(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := busEnv(t)
	_, client := startWorker(t, env)
	tg := newTarget(t)
	name := targetName("r1")
	cfg := targetConfig("r1", tg.srv.URL)
	cfg[connector.KeyTasksMax] = "2"
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: name, Config: cfg})
	require.NoError(t, err)

	status, err := env.JS.KeyValue(ctx, names.Bucket(herder.StatusBucketPurpose))
	require.NoError(t, err)
	tasks, err := env.JS.KeyValue(ctx, names.Bucket(herder.TasksBucketPurpose))
	require.NoError(t, err)
	state := func(key string) string {
		e, err := status.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return ""
		}
		require.NoError(t, err)
		var s struct {
			State    string `json:"state"`
			WorkerID string `json:"worker_id"`
		}
		require.NoError(t, json.Unmarshal(e.Value(), &s))
		assert.Equal(t, "w1", s.WorkerID)
		return s.State
	}
	require.Eventually(t, func() bool {
		return state(name+".0") == rpc.StateRunning && state(name+".1") == rpc.StateRunning
	}, wait, tick)
	assert.Empty(t, state(name+".connector"), "a connector has a status key only while its config cannot be applied")
	for i, id := range []string{"0", "1"} {
		e, err := tasks.Get(ctx, name+"."+id)
		require.NoError(t, err)
		var tc herder.TaskConfig
		require.NoError(t, json.Unmarshal(e.Value(), &tc))
		assert.Equal(t, rpc.TaskID{Connector: name, Task: i}, tc.ID)
		assert.Equal(t, id, tc.Config[herder.KeyTaskID])
		assert.Equal(t, cfg[connector.KeyTopics], tc.Config[connector.KeyTopics])
	}

	require.NoError(t, client.PauseConnector(ctx, name))
	// Paused: the tasks were stopped and their leases released; their last status says so.
	assert.Equal(t, rpc.StateUnassigned, state(name+".0"))
	assert.Equal(t, rpc.StateUnassigned, state(name+".1"))
	st, err := client.ConnectorStatus(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, rpc.StatePaused, st.Connector.State)
	zero := &rpc.TaskCounters{}
	assert.Equal(t, []rpc.TaskState{{ID: 0, State: rpc.StatePaused, WorkerID: "w1", Totals: zero},
		{ID: 1, State: rpc.StatePaused, WorkerID: "w1", Totals: zero}}, st.Tasks, "paused tasks keep their totals (none here)")

	// Fewer tasks: the extra task's keys go.
	cfg[connector.KeyTasksMax] = "1"
	require.NoError(t, client.ResumeConnector(ctx, name))
	_, err = client.PutConnectorConfig(ctx, name, cfg)
	require.NoError(t, err)
	assert.Equal(t, rpc.StateRunning, state(name+".0"), "the change answered once the task ran it")
	assert.Contains(t, []string{"", rpc.StateUnassigned}, state(name+".1"))
	require.Eventually(t, func() bool { _, err := tasks.Get(ctx, name+".1"); return errors.Is(err, jetstream.ErrKeyNotFound) }, wait, tick)

	require.NoError(t, client.DeleteConnector(ctx, name))
	assert.Empty(t, state(name+".0"), "statuses go with the connector")
	require.Eventually(t, func() bool { _, err := tasks.Get(ctx, name+".0"); return errors.Is(err, jetstream.ErrKeyNotFound) }, wait, tick)
}

// TestTaskHealthInStatusKV: what a running task knows of its failed attempts reaches its status key, where the
// other workers and the control plane read it, and its live status.
func TestTaskHealthInStatusKV(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := busEnv(t)
	_, client := startWorker(t, env)
	down := newTarget(t)
	down.srv.Close() // nothing listens at its address any more
	name := targetName("r1")
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: name, Config: targetConfig("r1", down.srv.URL)})
	require.NoError(t, err)
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(),
		Config: routerConfig(t, rule("r1", "order.created", 0))})
	require.NoError(t, err)
	put(t, env, "e1", "order.created")

	status, err := env.JS.KeyValue(ctx, names.Bucket(herder.StatusBucketPurpose))
	require.NoError(t, err)
	var stored rpc.TaskState
	require.Eventually(t, func() bool {
		e, err := status.Get(ctx, name+".0")
		if err != nil {
			return false
		}
		require.NoError(t, json.Unmarshal(e.Value(), &stored))
		return stored.Health != nil && stored.Health.FailuresSinceSuccess >= 2
	}, wait, tick, "the failures reach the status key")
	require.NotNil(t, stored.Health.LastFailure)
	assert.Equal(t, "connection-refused", stored.Health.LastFailure.Class)
	assert.True(t, stored.Health.RetryScheduled)
	assert.NotNil(t, stored.Health.FailingSince)
	assert.Nil(t, stored.Health.LastSuccessAt)

	st, err := client.ConnectorStatus(ctx, name)
	require.NoError(t, err)
	require.Len(t, st.Tasks, 1)
	require.NotNil(t, st.Tasks[0].Health)
	assert.Equal(t, "connection-refused", st.Tasks[0].Health.LastFailure.Class)
}

// TestTaskTotalsSurviveRuns: a task's totals count every record once over pause and resume, a restart of the task
// and a move to another worker (the worker that ran it closed), while its counters start again with each run.
func TestTaskTotalsSurviveRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := busEnv(t)
	w1 := startMember(t, env.Conn, "w1")
	client := rpc.NewClient(w1.URL(), rpc.WithToken(testToken))
	tg := newTarget(t)
	name := targetName("r1")
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: name, Config: targetConfig("r1", tg.srv.URL)})
	require.NoError(t, err)
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(),
		Config: routerConfig(t, rule("r1", "order.created", 0))})
	require.NoError(t, err)
	n := 0
	deliver := func(k int) {
		t.Helper()
		for range k {
			n++
			id := fmt.Sprintf("e%d", n)
			put(t, env, id, "order.created")
			require.Eventually(t, func() bool { return tg.has(id) }, wait, tick)
		}
	}
	totals := func(c *rpc.Client) (written, run uint64, state string) {
		st, err := c.ConnectorStatus(ctx, name)
		require.NoError(t, err)
		require.Len(t, st.Tasks, 1)
		ts := st.Tasks[0]
		if ts.Totals != nil {
			written = ts.Totals.Written
		}
		if ts.Counters != nil {
			run = ts.Counters.Written
		}
		return written, run, ts.State
	}
	waitTotals := func(c *rpc.Client, want uint64, why string) {
		t.Helper()
		require.Eventually(t, func() bool { w, _, _ := totals(c); return w == want }, wait, tick, why)
	}

	deliver(3)
	waitTotals(client, 3, "three delivered")

	require.NoError(t, client.PauseConnector(ctx, name))
	w, _, state := totals(client)
	assert.Equal(t, rpc.StatePaused, state)
	assert.EqualValues(t, 3, w, "a paused task keeps its totals")
	require.NoError(t, client.ResumeConnector(ctx, name))
	deliver(2)
	waitTotals(client, 5, "pause and resume lose nothing")
	_, run, _ := totals(client)
	assert.EqualValues(t, 2, run, "the task's own counters start with its run")

	require.NoError(t, client.RestartTask(ctx, name, 0))
	deliver(1)
	waitTotals(client, 6, "a restart loses nothing")

	w2 := startMember(t, env.Conn, "w2")
	c2 := rpc.NewClient(w2.URL(), rpc.WithToken(testToken))
	require.NoError(t, w1.Close(ctx))
	require.Eventually(t, func() bool {
		own := owners(t, w2)
		return own[rpc.TaskID{Connector: name, Task: 0}] == "w2"
	}, wait, tick, "w2 runs the task once w1 closed")
	waitTotals(c2, 6, "a move to another worker loses nothing")
	deliver(2)
	waitTotals(c2, 8, "and counts on")
	_, run, _ = totals(c2)
	assert.EqualValues(t, 2, run)
}
