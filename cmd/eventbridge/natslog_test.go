package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// What nats.go reports asynchronously on the process's connections reaches its log as a warning naming the
// connection, but for a parked task's dropped wake (a message dropped on a channel subscription), which loses nothing
// and is logged at debug: a wake storm at tens of thousands of parked tasks reported thousands.
func TestNATSAsynchronousErrorsAreLogged(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	m, err := startLogged(t, t.TempDir(), logs)
	require.NoError(t, err)

	jetstreamtest.SlowConsumers(t, m.workerNC, "test.busy", "test.parked")
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(),
			`level=WARN msg="NATS asynchronous error" connection=eventbridge-worker subject=test.busy`)
	}, 10*time.Second, 10*time.Millisecond, "%s", logs)
	// nats.go reported the parked subscription first: its report was handled by now.
	assert.NotContains(t, logs.String(), "test.parked", "a dropped wake is below the log's level (info)")
}
