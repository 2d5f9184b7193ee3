package herder

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// A PUT of the unchanged config of a FAILED connector restarts every task, also one whose failing start is still
// under way when the call reads the statuses (a slow start under load): the call answers with the restarted
// task's state, not with the failure of the start that began before the cause was fixed.
func TestPutRestartsEveryTaskOfAFailedConnector(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	names := stream.Names{Cluster: "pf"}
	h := startHerder(t, names, "w1", env)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := logConfig(names, "r1")
	_, err := h.Create(ctx, "pf.r1", cfg, "")
	var se *StartError
	require.ErrorAs(t, err, &se, "no bus stream yet")

	// Its task failed too: hold it as if that start were still under way.
	id := rpc.TaskID{Connector: "pf.r1", Task: 0}
	var held *localTask
	require.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		lt := h.local[id]
		if lt == nil || lt.busy || lt.run != nil || lt.trace == "" {
			return false
		}
		lt.busy, held = true, lt
		return true
	}, 10*time.Second, 5*time.Millisecond, "the task failed to start")
	st, err := h.Status("pf.r1")
	require.NoError(t, err)
	require.Equal(t, rpc.StateRestarting, st.Tasks[0].State)

	require.NoError(t, names.EnsureBusStream(ctx, env.JS, "b1", time.Hour, -1, 1))
	go func() {
		time.Sleep(300 * time.Millisecond)
		h.mu.Lock()
		held.busy = false // its start ended: FAILED, as it began before the stream existed
		h.changes++       // and a full round follows, as when the new record's watch event comes after that
		h.mu.Unlock()
		h.poke()
	}()
	_, created, err := h.PutConfig(ctx, "pf.r1", cfg)
	require.NoError(t, err)
	assert.False(t, created)
	st, err = h.Status("pf.r1")
	require.NoError(t, err)
	assert.Equal(t, rpc.StateRunning, st.Connector.State)
	assert.Equal(t, rpc.StateRunning, st.Tasks[0].State)
}
