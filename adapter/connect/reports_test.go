package connect

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
)

// TestNoteHealthLogsChangesOnce: reconciliation logs a target's change of health once, not at every pass, and a
// connector first seen healthy not at all.
func TestNoteHealthLogsChangesOnce(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	a := New(Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	now := time.Now()
	sink := func(h *rpc.TaskHealth) rpc.ConnectorExpanded {
		return rpc.ConnectorExpanded{Status: &rpc.ConnectorStatus{Type: rpc.TypeSink, Connector: rpc.ConnectorState{State: rpc.StateRunning},
			Tasks: []rpc.TaskState{{ID: 0, State: rpc.StateRunning, Health: h}}}}
	}
	healthy := sink(&rpc.TaskHealth{})
	failing := sink(&rpc.TaskHealth{FailuresSinceSuccess: 1, RetryScheduled: true, FailingSince: &now,
		LastFailure: &rpc.TaskFailure{At: now, Attempt: 1, Class: "dns", Message: "lookup crm.example.com: no such host"}})
	router := rpc.ConnectorExpanded{Status: &rpc.ConnectorStatus{Type: rpc.TypeSink, Connector: rpc.ConnectorState{State: rpc.StateRunning}}}

	a.noteHealth(map[string]rpc.ConnectorExpanded{"eb.acct.orders.created.crm": healthy, "eb.acct.orders.router": router}, now)
	assert.Empty(t, logs.String(), "first seen healthy: nothing to say")
	for range 3 {
		a.noteHealth(map[string]rpc.ConnectorExpanded{"eb.acct.orders.created.crm": failing}, now)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 1, logs.String())
	for _, want := range []string{"level=INFO", `msg="target health changed"`, "target=eb.acct.orders.created.crm",
		"health=RETRYING", "was=HEALTHY", "class=dns", "no such host"} {
		assert.Contains(t, lines[0], want)
	}
	a.noteHealth(map[string]rpc.ConnectorExpanded{"eb.acct.orders.created.crm": healthy}, now)
	lines = strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[1], "health=HEALTHY")
	assert.NotContains(t, lines[1], "class=", "a recovery names no failure")
}
