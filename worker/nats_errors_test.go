package worker_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// What nats.go reports asynchronously reaches the program's log, naming the connection and the subject: a slow
// consumer with a callback as a warning, a message dropped on a channel subscription (a parked task's wake, which
// costs nothing: the worker wakes every parked task then) at debug.
func TestLogNATSErrors(t *testing.T) {
	t.Parallel()
	var out logBuffer
	log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	env := jetstreamtest.Start(t)
	nc, err := env.Server.Connect("w1 tasks", worker.LogNATSErrors(log))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	logged := func(want string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Contains(out.String(), want) }, 10*time.Second,
			10*time.Millisecond, "the log holds %q: %s", want, &out)
	}

	hold := make(chan struct{})
	defer close(hold)
	sub, err := nc.Subscribe("busy", func(*nats.Msg) { <-hold })
	require.NoError(t, err)
	require.NoError(t, sub.SetPendingLimits(1, -1))
	wakes, err := nc.ChanSubscribe("parked", make(chan *nats.Msg, 1))
	require.NoError(t, err)
	t.Cleanup(func() { _ = wakes.Unsubscribe() })
	for range 3 {
		require.NoError(t, nc.Publish("busy", nil))
		require.NoError(t, nc.Publish("parked", nil))
	}
	require.NoError(t, nc.Flush())
	logged(`level=WARN msg="NATS asynchronous error" connection="w1 tasks" subject=busy err="nats: slow consumer, messages dropped"`)
	logged(`level=DEBUG msg="NATS asynchronous error" connection="w1 tasks" subject=parked err="nats: slow consumer, messages dropped"`)
	assert.Equal(t, 2, strings.Count(out.String(), "NATS asynchronous error"), "one report of each: %s", &out)
}
