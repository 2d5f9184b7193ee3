package worker_test

import (
	"context"
	"encoding/json"
	"errors"
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
	assert.Equal(t, []rpc.TaskState{{ID: 0, State: rpc.StatePaused, WorkerID: "w1"}, {ID: 1, State: rpc.StatePaused, WorkerID: "w1"}}, st.Tasks)

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
