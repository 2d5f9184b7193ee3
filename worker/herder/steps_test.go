package herder

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/cluster"
)

// A handover queues thousands of steps at once: they run in at most startsAtOnce runners, in the order they came,
// without a goroutine each waiting for its turn; done runs once for each, whether fn ran or not.
func TestStepsRunInAtMostStartsAtOnceRunners(t *testing.T) {
	h := &Herder{quit: make(chan struct{}), wake: make(chan struct{}, 1)}
	const n = 2000
	release := make(chan struct{})
	var running, most, ran, done atomic.Int64
	var mu sync.Mutex
	var order []int
	before := runtime.NumGoroutine()
	for i := range n {
		h.step(nil, time.Minute, func(ctx context.Context) {
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			now := running.Add(1)
			for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
			}
			_, deadline := ctx.Deadline()
			assert.True(t, deadline, "a step has a timeout of its own")
			<-release
			running.Add(-1)
			ran.Add(1)
		}, func() { done.Add(1) })
	}
	require.Eventually(t, func() bool { return running.Load() == startsAtOnce }, 5*time.Second, time.Millisecond)
	assert.LessOrEqual(t, runtime.NumGoroutine()-before, startsAtOnce+2,
		"steps waiting their turn hold no goroutine")
	close(release)
	h.steps.Wait()
	assert.Equal(t, int64(n), ran.Load(), "every step ran")
	assert.Equal(t, int64(n), done.Load(), "done ran once for each")
	assert.Equal(t, int64(startsAtOnce), most.Load(), "never more than startsAtOnce at once")
	assert.Zero(t, h.runners, "the runners ended with the queue")
	assert.Nil(t, h.queued, "the queue is not kept")

	mu.Lock()
	for i, got := range order[startsAtOnce:] {
		// the first startsAtOnce started together; each later one started after those before it
		assert.Less(t, got, i+2*startsAtOnce, "steps run in the order they came")
	}
	mu.Unlock()
}

// Once the herder closes, queued steps do not run, and a step whose lease is no longer the worker's valid lease
// does not run either and asks for another round; done runs for each.
func TestQueuedStepsDoNotRunOnceClosedOrWithoutTheirLease(t *testing.T) {
	h := &Herder{quit: make(chan struct{}), wake: make(chan struct{}, 1)}
	var ran, done atomic.Int64
	h.step(&cluster.Lease{}, time.Minute, func(context.Context) { ran.Add(1) }, func() { done.Add(1) })
	h.steps.Wait()
	assert.Zero(t, ran.Load(), "a step of a lease that is not the worker's does not run")
	assert.True(t, h.again.Load(), "a later round looks again")
	assert.Equal(t, int64(1), done.Load())

	release := make(chan struct{})
	var running atomic.Int64
	for range startsAtOnce {
		h.step(nil, time.Minute, func(context.Context) { running.Add(1); <-release; ran.Add(1) }, func() { done.Add(1) })
	}
	for range 100 {
		h.step(nil, time.Minute, func(context.Context) { ran.Add(1) }, func() { done.Add(1) })
	}
	require.Eventually(t, func() bool { return running.Load() == startsAtOnce }, 5*time.Second, time.Millisecond)
	close(h.quit)
	close(release)
	h.steps.Wait()
	assert.Equal(t, int64(startsAtOnce), ran.Load(), "only the steps running when it closed ran")
	assert.Equal(t, int64(1+startsAtOnce+100), done.Load(), "done ran for each")
}
