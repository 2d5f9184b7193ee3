package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// withBusLog sets the bus-log keys of a connector's config, as the control plane does for a bus at level.
func withBusLog(cfg map[string]string, level string) map[string]string {
	cfg[connector.KeyLogTopic] = names.LogSubject("acct", bus)
	cfg[connector.KeyLogLevel] = level
	cfg[connector.KeyLogDetail] = stream.LogDetailNone
	return cfg
}

// busLog returns the types of the records of the bus log, in order, per connector.
func busLog(t *testing.T, env *jetstreamtest.Env) map[string][]string {
	t.Helper()
	ctx := context.Background()
	s, err := env.JS.Stream(ctx, names.LogStream("acct"))
	require.NoError(t, err)
	out := map[string][]string{}
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			return out
		}
		r, err := stream.DecodeLogRecord(m.Data)
		require.NoError(t, err)
		assert.Equal(t, "e1", r.EventID)
		out[r.Connector] = append(out[r.Connector], r.Type)
	}
}

// The worker gives the tasks of connectors whose config sets the bus log their writer: the router writes what it
// matched, the target each attempt, and the router's task adds no record of its successes.
func TestBusLogThroughTheWorker(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	require.NoError(t, names.EnsureLogStream(context.Background(), env.JS, "acct", 1, stream.LogLimits{}))
	_, client := startWorker(t, env)
	ctx := context.Background()
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(),
		Config: withBusLog(routerConfig(t, rule("r1", "t", 0)), stream.LogInfo)})
	require.NoError(t, err)
	tg := newTarget(t)
	tg.failFirst = 1
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r1"),
		Config: withBusLog(targetConfig("r1", tg.srv.URL), stream.LogInfo)})
	require.NoError(t, err)

	put(t, env, "e1", "t")
	require.Eventually(t, func() bool { return tg.has("e1") }, wait, tick)
	want := map[string][]string{
		routerName():     {stream.LogEventReceipt, stream.LogRuleMatch},
		targetName("r1"): {stream.LogAttemptRetryableFailure, stream.LogAttemptSuccess},
	}
	require.Eventually(t, func() bool { return len(busLog(t, env)) == 2 && len(busLog(t, env)[targetName("r1")]) == 2 },
		wait, tick)
	time.Sleep(300 * time.Millisecond) // records not expected would come by now
	assert.Equal(t, want, busLog(t, env))
}
