package herder

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	logsink "github.com/eventbridge-go/eventbridge/worker/plugins/log"
)

// startHerder starts a herder on a fresh JetStream with the log plugin and a bus stream b1.
func startHerder(t *testing.T, names stream.Names, id string, env *jetstreamtest.Env) *Herder {
	t.Helper()
	reg := connector.NewRegistry()
	require.NoError(t, reg.Register(logsink.Plugin()))
	h, err := New(Config{JetStream: env.JS, Names: names, WorkerID: id, Registry: reg, StopTimeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, h.Start(context.Background()))
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

func logConfig(names stream.Names, rule string) map[string]string {
	return map[string]string{
		connector.KeyClass:   logsink.Name,
		connector.KeyTopics:  names.RuleSubject("b1", rule),
		connector.KeyStream:  names.BusStream("b1"),
		connector.KeyDurable: names.TargetConsumer(rule, "t"),
	}
}

// pace makes the next full round of h due in an hour at the earliest, as if the last one had been that slow.
func pace(h *Herder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fullAt, h.fullTook = time.Now(), time.Hour
}

// unpace lets h's next full round come as soon as something changed.
func unpace(h *Herder) {
	h.mu.Lock()
	h.fullTook = 0
	h.mu.Unlock()
	h.poke()
}

// A worker takes a new connector's tasks at once, between full rounds however far the pace puts the next one:
// alone in its cluster, every task; with another live member, the tasks the last full round's loads place on it,
// on which both members agree. While the members differ from those of the last full round, only a full round
// assigns.
func TestFreshTasksDoNotWaitForTheNextFullRound(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	names := stream.Names{Cluster: "fr"}
	require.NoError(t, names.EnsureBusStream(context.Background(), env.JS, "b1", time.Hour, -1, 1))
	h := startHerder(t, names, "w1", env)
	pace(h)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := h.Create(ctx, "fr.r1", logConfig(names, "r1"), "")
	require.NoError(t, err, "created and running while full rounds wait")
	assertRunsOn(t, h, "fr.r1", "w1")

	// A second member. Once both ran a full round with both members, w1 holds one task and w2 none: the next new
	// connector's task is w2's, and w2 takes it while both wait for their next full round.
	h2 := startHerder(t, names, "w2", env)
	unpace(h)
	require.Eventually(t, func() bool { return assignedTo(h, "w1", "w2") && assignedTo(h2, "w1", "w2") },
		10*time.Second, 10*time.Millisecond, "a full round of each saw both members")
	pace(h)
	pace(h2)
	_, err = h.Create(ctx, "fr.r2", logConfig(names, "r2"), "")
	require.NoError(t, err, "created and running while full rounds wait")
	assertRunsOn(t, h, "fr.r2", "w2")
	r2 := rpc.TaskID{Connector: "fr.r2"}
	h.mu.RLock()
	_, onW1 := h.local[r2]
	placed := h.placed[r2]
	h.mu.RUnlock()
	assert.False(t, onW1, "w1 runs fr.r2 too")
	assert.Equal(t, "w2", placed, "w1 placed fr.r2 where w2 did")

	// A third member, which w1 and w2 have not seen in a full round: they leave the new task to one (w3, whose first
	// round saw all three, may take it).
	h3 := startHerder(t, names, "w3", env)
	pace(h3)
	require.Eventually(t, func() bool {
		h.mu.RLock()
		defer h.mu.RUnlock()
		h2.mu.RLock()
		defer h2.mu.RUnlock()
		return len(h.live) == 3 && len(h2.live) == 3
	}, 10*time.Second, 10*time.Millisecond)
	pace(h)
	pace(h2)
	created := make(chan error, 1)
	go func() {
		_, err := h.Create(ctx, "fr.r3", logConfig(names, "r3"), "")
		created <- err
	}()
	hs := []*Herder{h, h2, h3}
	require.Eventually(t, func() bool {
		for _, w := range hs {
			if _, err := w.get("fr.r3"); err != nil {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond)
	time.Sleep(time.Second) // ten rounds of each loop
	r3 := rpc.TaskID{Connector: "fr.r3"}
	for _, w := range hs[:2] {
		w.mu.RLock()
		_, local := w.local[r3]
		_, placed := w.placed[r3]
		w.mu.RUnlock()
		assert.False(t, local || placed, "%s placed a task without a full round that saw the cluster's members", w.cfg.WorkerID)
	}
	// Unpaced, the next full round assigns it.
	for _, w := range hs {
		unpace(w)
	}
	require.NoError(t, <-created)
}

// assignedTo reports whether the last full round of h assigned the tasks to exactly these members.
func assignedTo(h *Herder, members ...string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return slices.Equal(h.assignedTo, members)
}

// assertRunsOn checks that the only task of connector is RUNNING on worker.
func assertRunsOn(t *testing.T, h *Herder, connector, worker string) {
	t.Helper()
	st, err := h.Status(connector)
	require.NoError(t, err)
	require.Len(t, st.Tasks, 1)
	assert.Equal(t, rpc.StateRunning, st.Tasks[0].State)
	assert.Equal(t, worker, st.Tasks[0].WorkerID)
}
