package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker"
)

// TestEgressPolicyReachesPlugins: the worker's egress policy (--allow-private-targets, --egress-allow) is what its
// plugins apply. With an exception for one target's address and port, that target receives its events and another
// target on the same address, another port, receives nothing: its record is given up at once.
func TestEgressPolicyReachesPlugins(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	allowed, denied := newTarget(t), newTarget(t)
	w, err := worker.New(worker.Config{
		Token: testToken, NATS: env.Conn, WorkerID: "w1", RESTAddr: "127.0.0.1:0",
		EgressAllow: []string{allowed.srv.Listener.Addr().String()},
		Registry:    registry(t), StopTimeout: 5 * time.Second,
	})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	client := rpc.NewClient(w.URL(), rpc.WithToken(testToken))
	ctx := context.Background()
	for id, url := range map[string]string{"r1": allowed.srv.URL, "r2": denied.srv.URL} {
		_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName(id), Config: targetConfig(id, url)})
		require.NoError(t, err)
	}
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(),
		Config: routerConfig(t, rule("r1", "order.created", 0), rule("r2", "order.created", 0))})
	require.NoError(t, err)
	put(t, env, "e1", "order.created")
	require.Eventually(t, func() bool { return allowed.has("e1") }, wait, tick)
	require.Eventually(t, func() bool {
		st, err := client.ConnectorStatus(ctx, targetName("r2"))
		return err == nil && len(st.Tasks) == 1 && st.Tasks[0].Counters.Dropped == 1
	}, wait, tick, "the denied target's record is given up")
	st, err := client.ConnectorStatus(ctx, targetName("r2"))
	require.NoError(t, err)
	assert.Zero(t, st.Tasks[0].Counters.Retried, "a refused address is not retried")
	denied.mu.Lock()
	assert.Zero(t, denied.requests, "no request reached the denied target")
	denied.mu.Unlock()
}

// A worker refuses an exception that is not an address, a prefix or a host, naming the flag.
func TestEgressAllowIsValidated(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	_, err := worker.New(worker.Config{Token: testToken, NATS: env.Conn, EgressAllow: []string{"10.0.0.0/33"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--egress-allow")
}
