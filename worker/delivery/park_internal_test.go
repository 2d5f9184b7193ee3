package delivery

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// woken waits for p's wake.
func woken(t *testing.T, p *parking, name string) {
	t.Helper()
	select {
	case <-p.woken:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s was not woken", name)
	}
}

// parkOnEach parks n tasks on w, task i on subject w.<i>.
func parkOnEach(t *testing.T, w *Wakes, n int) []*parking {
	t.Helper()
	ps := make([]*parking, n)
	for i := range ps {
		ps[i] = &parking{wakes: w, woken: make(chan struct{})}
		require.NoError(t, w.subscribe(ps[i], fmt.Sprintf("w.%d", i)))
	}
	require.NoError(t, w.nc.Flush())
	return ps
}

// dropped counts the messages nats.go dropped on the first subscriptions of ps.
func dropped(t *testing.T, ps []*parking) int {
	t.Helper()
	n := 0
	for _, p := range ps {
		d, err := p.subs[0].Dropped()
		require.NoError(t, err)
		n += d
	}
	return n
}

// When the connection's channel of parked subscriptions fills, nats.go drops messages, and the tasks of those
// messages would sleep on: the reader, finding the channel full, wakes every parked task, and unsubscribes them all.
func TestWakesWakesEveryParkedTaskWhenItsChannelFilled(t *testing.T) {
	env := jetstreamtest.Start(t)
	nc := env.Conn
	subsBefore := nc.NumSubscriptions()
	w := watchWakes(nc, 2)
	t.Cleanup(w.Stop)
	const tasks = 10
	ps := parkOnEach(t, w, tasks)

	// The reader takes at most one message and waits here: two more fill the channel, the rest are dropped.
	w.mu.Lock()
	for i := range ps {
		require.NoError(t, nc.Publish(fmt.Sprintf("w.%d", i), nil))
	}
	require.NoError(t, nc.Flush())
	// Flushed: the connection has read every message, so the drops are made.
	assert.Contains(t, []int{tasks - 3, tasks - 2}, dropped(t, ps),
		"two messages in the channel, one in the reader unless it had not taken the first yet, the rest dropped")
	w.mu.Unlock()
	for i, p := range ps {
		woken(t, p, fmt.Sprintf("task %d", i))
	}
	require.Eventually(t, func() bool { return nc.NumSubscriptions() == subsBefore }, 10*time.Second,
		10*time.Millisecond, "every subscription is gone")
	w.mu.Lock()
	assert.Empty(t, w.parked)
	w.mu.Unlock()
	w.Stop() // and again at cleanup: a herder may be closed twice
}

// What nats.go reports of the messages a full channel of parked subscriptions dropped is told apart from every
// other asynchronous error, so that the programs log the wakes, which lose nothing, below the others: a slow
// consumer of a subscription with a callback is not a dropped wake, and nor is another error on a parked
// subscription.
func TestWakeDroppedTellsTheDroppedWakesApart(t *testing.T) {
	env := jetstreamtest.Start(t)
	type report struct {
		sub *nats.Subscription
		err error
	}
	reports := make(chan report, 100)
	nc, err := env.Server.Connect(t.Name(), nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
		reports <- report{sub, err}
	}))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	w := watchWakes(nc, 2)
	t.Cleanup(w.Stop)
	const tasks = 10
	ps := parkOnEach(t, w, tasks)
	w.mu.Lock() // as above: the reader holds one message, the channel two, the rest are dropped
	for i := range ps {
		require.NoError(t, nc.Publish(fmt.Sprintf("w.%d", i), nil))
	}
	require.NoError(t, nc.Flush()) // answered once the connection read every message: the drops are made
	// The subscriptions that dropped their message: 7, or 8 when the reader had not taken the first yet.
	dropping := dropped(t, ps)
	require.GreaterOrEqual(t, dropping, tasks-3)
	var wakes []report
	for len(wakes) < dropping {
		select {
		case r := <-reports:
			wakes = append(wakes, r)
		case <-time.After(10 * time.Second):
			t.Fatalf("nats.go reported %d slow consumers of %d that dropped a wake", len(wakes), dropping)
		}
	}
	w.mu.Unlock()
	for _, r := range wakes {
		assert.ErrorIs(t, r.err, nats.ErrSlowConsumer)
		assert.True(t, WakeDropped(r.sub, r.err), "a dropped wake on %s", r.sub.Subject)
		assert.False(t, WakeDropped(r.sub, nats.ErrPermissionViolation), "another error on a parked subscription")
	}

	jetstreamtest.SlowConsumers(t, nc, "callback", "parked")
	for _, want := range []struct {
		subject string
		wake    bool
	}{{"parked", true}, {"callback", false}} {
		select {
		case r := <-reports:
			assert.Equal(t, want.subject, r.sub.Subject)
			assert.ErrorIs(t, r.err, nats.ErrSlowConsumer)
			assert.Equal(t, want.wake, WakeDropped(r.sub, r.err), "a slow consumer on %s", r.sub.Subject)
		case <-time.After(10 * time.Second):
			t.Fatalf("no slow consumer reported on %s", want.subject)
		}
	}
	assert.False(t, WakeDropped(nil, nats.ErrSlowConsumer), "an error of no subscription")
}

// A task is woken once by the first message on any of its subjects, which ends all its subscriptions; one it would
// make after that is not made, and releasing it then changes nothing. A task released unwoken is unsubscribed and
// forgotten.
func TestWakesWakesATaskOnceAndForgetsIt(t *testing.T) {
	env := jetstreamtest.Start(t)
	nc := env.Conn
	subsBefore := nc.NumSubscriptions()
	w := WatchWakes(nc)
	t.Cleanup(w.Stop)

	p := &parking{wakes: w, woken: make(chan struct{})}
	require.NoError(t, w.subscribe(p, "w.a"))
	require.NoError(t, w.subscribe(p, "w.b"))
	quiet := &parking{wakes: w, woken: make(chan struct{})}
	require.NoError(t, w.subscribe(quiet, "w.quiet"))
	require.NoError(t, nc.Flush())
	require.Equal(t, subsBefore+3, nc.NumSubscriptions())

	for range 3 {
		require.NoError(t, nc.Publish("w.a", nil))
		require.NoError(t, nc.Publish("w.b", nil))
	}
	require.NoError(t, nc.Flush())
	woken(t, p, "the task")
	require.Eventually(t, func() bool { return nc.NumSubscriptions() == subsBefore+1 }, 10*time.Second,
		10*time.Millisecond, "the woken task's subscriptions are gone, the other task's stays")
	require.NoError(t, w.subscribe(p, "w.c"))
	assert.Len(t, p.subs, 2, "no subscription after the wake")
	p.close()

	quiet.close()
	assert.Equal(t, subsBefore, nc.NumSubscriptions())
	select {
	case <-quiet.woken:
		t.Fatal("a released task is not woken")
	default:
	}
	w.mu.Lock()
	assert.Empty(t, w.parked)
	w.mu.Unlock()
	w.Stop() // and again at cleanup: a herder may be closed twice
}
