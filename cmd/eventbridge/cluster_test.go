package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/listener/listenertest"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker"
)

// TestEmbeddedWorkerJoinsACluster: with --nats-listen, a worker process joins the embedded worker's cluster over
// the embedded NATS server; the two share the tasks of the channels declared through the API, and events flow
// whichever worker runs them.
func TestEmbeddedWorkerJoinsACluster(t *testing.T) {
	natsAddr := listenertest.Addr(t)
	m := startMain(t, t.TempDir(), "--nats-listen", natsAddr, "--worker-id", "cp")
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)

	nc, err := nats.Connect("nats://"+natsAddr, m.NATSCredentials().Option())
	require.NoError(t, err)
	defer nc.Close()
	w2, err := worker.New(worker.Config{NATS: nc, WorkerID: "w2", RESTAddr: "127.0.0.1:0", AllowPrivateTargets: true,
		MasterKey: m.masterKey, Token: m.ClusterToken()})
	require.NoError(t, err)
	require.NoError(t, w2.Start(context.Background()))
	defer func() { require.NoError(t, w2.Close(context.Background())) }()

	recv := newReceiver(t)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "orders"}, 201)
	want := map[string]bool{}
	for i := range 3 {
		rule := fmt.Sprintf("r%d", i)
		a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": rule,
			"eventPattern": map[string]any{"type": []any{rule}}}, 201)
		a.must("PUT", "/api/v1/buses/orders/rules/"+rule+"/targets/hook", httpTarget(recv.srv.URL), 201)
	}

	embedded := workerClient(m)
	remote := rpc.NewClient(w2.URL(), rpc.WithToken(m.ClusterToken()))
	require.Eventually(t, func() bool {
		ci, err := embedded.ClusterInfo(context.Background())
		if err != nil || len(ci.Workers) != 2 {
			return false
		}
		mine, err1 := embedded.AllocatedTasks(context.Background())
		theirs, err2 := remote.AllocatedTasks(context.Background())
		return err1 == nil && err2 == nil && len(mine) == 2 && len(theirs) == 2
	}, 30*time.Second, 50*time.Millisecond, "four tasks (a router and three targets), two on each worker")

	var batch []map[string]any
	for i := range 30 {
		id := fmt.Sprintf("e%d", i)
		want[id] = true
		batch = append(batch, event(id, "shop", fmt.Sprintf("r%d", i%3), map[string]any{"n": i}))
	}
	a.putBatch("orders", batch)
	recv.waitFor(t, want)

	st, err := remote.ConnectorStatus(context.Background(), "eb.default.orders.router")
	require.NoError(t, err)
	require.Len(t, st.Tasks, 1)
	assert.Contains(t, []string{"cp", "w2"}, st.Tasks[0].WorkerID, "the status names the router's worker")
}
