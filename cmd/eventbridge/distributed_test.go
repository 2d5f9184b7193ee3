package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/listener/listenertest"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
	"github.com/eventbridge-go/eventbridge/worker"
)

// TestEndToEndOnMySQLWithARemoteWorker runs the control plane on MariaDB, with its embedded NATS server listening
// on TCP and a worker of its own (as cmd/worker runs it) joined over that port as the remote runtime. The first
// --runtime URL is a worker that is down: the control plane fails over to the next.
func TestEndToEndOnMySQLWithARemoteWorker(t *testing.T) {
	dsn := persistencetest.NewMySQLDatabase(t)
	natsAddr, workerAddr := listenertest.Addr(t), listenertest.Addr(t)
	// A worker that is down: port 1 is below the range the system hands out for ":0", so no other test's server
	// takes it meanwhile (a port found free and closed again was once taken by another test's console, whose HTML
	// answer is no dial failure to fail over from).
	downAddr := "127.0.0.1:1"
	tokenFile, token := writeTokenFile(t)
	m := startMain(t, t.TempDir(), "--db", "mysql://"+dsn, "--nats-listen", natsAddr,
		"--runtime", "http://"+downAddr+",http://"+workerAddr, "--cluster-token-file", tokenFile)
	defer func() { require.NoError(t, m.Close()) }()
	require.Empty(t, m.WorkerAddr(), "no embedded worker with --runtime")

	nc, err := nats.Connect("nats://"+natsAddr, m.NATSCredentials().Option())
	require.NoError(t, err)
	defer nc.Close()
	w, err := worker.New(worker.Config{NATS: nc, ClusterID: "eb", WorkerID: "remote-1", RESTAddr: workerAddr, AllowPrivateTargets: true,
		Token: token})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	defer func() { require.NoError(t, w.Close(context.Background())) }()

	a := apiOf(t, m)
	r := newReceiver(t)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "orders"}, 201)
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "eu",
		"eventPattern": map[string]any{"data": map[string]any{"region": []any{"eu"}}}}, 201)
	a.must("PUT", "/api/v1/buses/orders/rules/eu/targets/hook", httpTarget(r.srv.URL), 201)

	want := map[string]bool{}
	var batch []map[string]any
	for i := 0; i < 200; i++ {
		id, region := fmt.Sprintf("m-%d", i), "us"
		if i%4 == 0 {
			region = "eu"
			want[id] = true
		}
		batch = append(batch, event(id, "shop", "order.created", map[string]any{"region": region}))
	}
	a.putBatch("orders", batch[:100])
	a.putBatch("orders", batch[100:])
	r.waitFor(t, want)

	require.Eventually(t, func() bool {
		out := a.must("GET", "/api/v1/buses/orders/rules/eu/targets/hook", nil, 200)
		return strings.Contains(string(out), `"RUNNING"`) && strings.Contains(string(out), `"remote-1"`)
	}, 10*time.Second, 50*time.Millisecond, "the target's status names the remote worker")
}
