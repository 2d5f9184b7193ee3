package delivery_test

import (
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/delivery"
)

// Parked tasks wait on channel subscriptions: no goroutine of nats.go's per parked task (one per subscription with a
// callback was 6,000 goroutines at 2,000 idle buses), and a burst on their subject wakes them without the
// connection reporting a slow consumer. Not parallel: it counts the process's goroutines.
func TestParkedTasksHoldNoSubscriptionGoroutine(t *testing.T) {
	f := newFixture(t)
	var slow atomic.Int32
	nc, err := f.env.Server.Connect(t.Name(), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrSlowConsumer) {
			slow.Add(1)
		}
	}))
	require.NoError(t, err)
	t.Cleanup(nc.Close)

	const tasks = 20
	sink := newSink()
	var all []*delivery.Task
	for range tasks {
		all = append(all, f.startParking(t, sink, 100*time.Millisecond, func(c *delivery.TaskConfig) { c.Conn = nc }))
	}
	asleep := func() bool {
		for _, task := range all {
			if _, ok := task.Asleep(); !ok {
				return false
			}
		}
		return true
	}
	require.Eventually(t, asleep, wait, tick, "every task parks")
	assert.Less(t, goroutinesIn("(*Conn).waitForMsgs"), tasks, "fewer subscription goroutines than parked tasks")

	ids := f.env.PublishN(t, "s.in", "burst", 200)
	require.Eventually(t, func() bool { return len(sink.Accepted()) == len(ids) }, wait, tick)
	assert.ElementsMatch(t, ids, sink.Accepted(), "each event once")
	require.Eventually(t, asleep, wait, tick, "every task parks again")
	assert.Zero(t, slow.Load(), "no slow consumer reported")
}

// goroutinesIn counts the goroutines whose stack holds fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			count++
		}
	}
	return count
}
