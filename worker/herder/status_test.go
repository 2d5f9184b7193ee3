package herder

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// sleepyRunner is a fakeRunner that says when it is parked, and counts the reads of its counters.
type sleepyRunner struct {
	fakeRunner
	parks  uint64
	asleep bool
	reads  atomic.Int64
	states atomic.Int64
}

func (r *sleepyRunner) Counters() delivery.Counters {
	r.reads.Add(1)
	return r.fakeRunner.Counters()
}
func (r *sleepyRunner) Asleep() (uint64, bool) { return r.parks, r.asleep }
func (r *sleepyRunner) State() (string, string) {
	r.states.Add(1)
	return r.fakeRunner.State()
}

// A task parked since its status was last written is not read again, not even its state: its counters and health
// cannot have changed, and a failure wakes it first. A task that woke (another count of parks), that is awake, or
// whose state changed is read, and written when its counters changed.
func TestStatusOfAParkedTaskIsNotReadAgain(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	names := stream.Names{Cluster: "st"}
	state, err := ensureStateKV(ctx, env.JS, names.Bucket, 1)
	require.NoError(t, err)
	t.Cleanup(state.close)
	run := &sleepyRunner{fakeRunner: fakeRunner{state: rpc.StateRunning}}
	lt := &localTask{id: rpc.TaskID{Connector: "c", Task: 0}, run: run}
	h := &Herder{cfg: Config{WorkerID: "w1"}, log: slog.New(slog.DiscardHandler), state: state,
		local: map[rpc.TaskID]*localTask{lt.id: lt}}
	stored := func() uint64 {
		t.Helper()
		st, _, err := state.readTask(ctx, "c", 0)
		require.NoError(t, err)
		require.NotNil(t, st.Counters)
		return st.Counters.Written
	}
	round := func() bool { // whether the round read the counters
		t.Helper()
		before := run.reads.Load()
		h.writeStatuses(ctx)
		return run.reads.Load() > before
	}
	backdate := func() { // the counters interval has passed since the last write
		h.mu.Lock()
		lt.wroteAt = lt.wroteAt.Add(-2 * countersInterval)
		h.mu.Unlock()
	}

	run.n.Written, run.parks, run.asleep = 1, 1, true
	assert.True(t, round(), "the first status is read and written")
	assert.Equal(t, uint64(1), stored())
	backdate()
	states := run.states.Load()
	assert.False(t, round(), "parked since: not read")
	assert.Equal(t, states, run.states.Load(), "parked since: its state is not read either")

	run.n.Written, run.parks = 2, 2 // woke, wrote, parked again
	assert.True(t, round())
	assert.Equal(t, uint64(2), stored(), "another count of parks: read and written")
	backdate()
	assert.False(t, round())

	run.asleep = false
	run.n.Written = 3
	backdate()
	assert.True(t, round(), "awake: read")
	assert.Equal(t, uint64(3), stored())
	assert.True(t, round(), "awake: read, and unchanged")
	run.asleep = true // parked again with the count it had when written: read once, to know it is unchanged
	assert.True(t, round())
	assert.False(t, round())

	run.state, run.asleep = rpc.StatePaused, false // a change of state wakes the task (delivery.Task.fail)
	assert.True(t, round(), "a change of state is read and written whatever else")
	run.asleep = true
	assert.True(t, round(), "parked again: read once")
	assert.False(t, round())

	other := &sleepyRunner{fakeRunner: fakeRunner{state: rpc.StatePaused}, parks: run.parks, asleep: true}
	other.n.Written = 7
	h.mu.Lock()
	lt.run = other // restarted: another runner, parked with the same count
	h.mu.Unlock()
	backdate()
	h.writeStatuses(ctx)
	assert.Positive(t, other.reads.Load(), "another runner is read")
	assert.Equal(t, uint64(7), stored())
}

// stateReads counts the reads of a runner's state.
type stateReads struct {
	sleepyRunner
	states atomic.Int64
}

func (r *stateReads) State() (string, string) {
	r.states.Add(1)
	return r.sleepyRunner.State()
}

// The supervisor reads only the tasks that reported a failure or did not start, not every local task every second.
func TestSupervisorReadsOnlySuspects(t *testing.T) {
	run := &stateReads{sleepyRunner: sleepyRunner{fakeRunner: fakeRunner{state: rpc.StateRunning}}}
	lt := &localTask{id: rpc.TaskID{Connector: "c", Task: 0}, run: run}
	notStarted := &localTask{id: rpc.TaskID{Connector: "c", Task: 1}, trace: "boom"} // no runner: FAILED
	h := &Herder{cfg: Config{RestartBackoffInitial: time.Minute, RestartBackoffMax: time.Hour},
		log: slog.New(slog.DiscardHandler), records: map[string]entry{},
		local: map[rpc.TaskID]*localTask{lt.id: lt, notStarted.id: notStarted}}
	now := time.Now()
	assert.True(t, h.supervise(now).IsZero())
	assert.Zero(t, run.states.Load(), "a task that reported nothing is not read")

	h.suspect(notStarted.id) // as start does when the task does not start
	assert.Equal(t, now.Add(time.Minute), h.supervise(now), "a task that did not start: its restart is scheduled")
	assert.Zero(t, run.states.Load())

	run.state = rpc.StateFailed
	assert.Equal(t, now.Add(time.Minute), h.supervise(now))
	assert.Zero(t, run.states.Load(), "failed without reporting (no task does): not read")
	h.failedFunc("c", 0)() // as the task reports it
	assert.Equal(t, now.Add(time.Minute), h.supervise(now), "failed: its restart is scheduled")
	assert.Positive(t, run.states.Load())
	assert.False(t, lt.sup.nextAt.IsZero())

	// Seen running again (restarted, or a failure that cleared): it is read no more.
	run.state = rpc.StateRunning
	h.supervise(now)
	reads := run.states.Load()
	h.supervise(now)
	assert.Equal(t, reads, run.states.Load(), "running again: no longer read")

	// A suspect that is no longer local is forgotten.
	delete(h.local, notStarted.id)
	h.supervise(now)
	h.suspectsMu.Lock()
	assert.Empty(t, h.suspects)
	h.suspectsMu.Unlock()
}
