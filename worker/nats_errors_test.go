package worker_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

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

	jetstreamtest.SlowConsumers(t, nc, "busy", "parked")
	const report = `msg="NATS asynchronous error" connection="w1 tasks"`
	const slow = ` err="nats: slow consumer, messages dropped"`
	logged(`level=WARN ` + report + ` subject=busy` + slow)
	logged(`level=DEBUG ` + report + ` subject=parked` + slow)
	assert.Equal(t, 2, strings.Count(out.String(), "NATS asynchronous error"), "one report of each: %s", &out)
}
