package main

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What nats.go reports asynchronously on the process's connections reaches its log as a warning naming the
// connection, but for a parked task's dropped wake (a message dropped on a channel subscription), which loses nothing
// and is logged at debug: a wake storm at tens of thousands of parked tasks reported thousands.
func TestNATSAsynchronousErrorsAreLogged(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	m, err := startLogged(t, t.TempDir(), logs)
	require.NoError(t, err)

	hold := make(chan struct{})
	defer close(hold)
	busy, err := m.workerNC.Subscribe("test.busy", func(*nats.Msg) { <-hold })
	require.NoError(t, err)
	require.NoError(t, busy.SetPendingLimits(1, -1))
	parked, err := m.workerNC.ChanSubscribe("test.parked", make(chan *nats.Msg, 1))
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, m.workerNC.Publish("test.parked", nil))
		require.NoError(t, m.workerNC.Publish("test.busy", nil))
	}
	require.NoError(t, m.workerNC.Flush())
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), `level=WARN msg="NATS asynchronous error" connection=eventbridge-worker subject=test.busy`)
	}, 10*time.Second, 10*time.Millisecond, "%s", logs)
	dropped, err := parked.Dropped()
	require.NoError(t, err)
	assert.Positive(t, dropped, "the channel subscription dropped messages")
	// nats.go reports in the order it dropped: the parked subscription's drop (its second message) before the busy
	// one's (its third), so its report was handled by now.
	assert.NotContains(t, logs.String(), "test.parked", "a dropped wake is below the log's level (info)")
}
