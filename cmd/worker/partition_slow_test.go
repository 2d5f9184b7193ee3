//go:build slow

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/listener/listenertest"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	wcluster "github.com/eventbridge-go/eventbridge/worker/cluster"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

// netns is a network namespace joined to this one by a veth pair: host address hostIP, namespace address nsIP.
type netns struct {
	name, hostIf, hostIP, nsIP string
}

func run(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	require.NoError(t, err, "%s: %s", strings.Join(args, " "), out)
}

// newNetns creates the namespace and the link (it needs root, as CI and this machine's sessions have).
func newNetns(t *testing.T) netns {
	id := os.Getpid() % 10000
	n := netns{name: fmt.Sprintf("ebpart%d", id), hostIf: fmt.Sprintf("ebh%d", id),
		hostIP: fmt.Sprintf("10.213.%d.1", id%250), nsIP: fmt.Sprintf("10.213.%d.2", id%250)}
	nsIf := fmt.Sprintf("ebn%d", id)
	_ = exec.Command("ip", "netns", "del", n.name).Run() // left by an earlier run killed before its cleanup
	run(t, "ip", "netns", "add", n.name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", n.name).Run() })
	run(t, "ip", "link", "add", n.hostIf, "type", "veth", "peer", "name", nsIf)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", n.hostIf).Run() })
	run(t, "ip", "link", "set", nsIf, "netns", n.name)
	run(t, "ip", "addr", "add", n.hostIP+"/30", "dev", n.hostIf)
	run(t, "ip", "link", "set", n.hostIf, "up")
	run(t, "ip", "netns", "exec", n.name, "ip", "addr", "add", n.nsIP+"/30", "dev", nsIf)
	run(t, "ip", "netns", "exec", n.name, "ip", "link", "set", nsIf, "up")
	run(t, "ip", "netns", "exec", n.name, "ip", "link", "set", "lo", "up")
	return n
}

// TestSlowClusterPartitionFencing runs worker w1 in a network namespace and w2 beside the test's NATS, then takes
// the namespace's link down: w1, cut off from NATS, stops its task on its own before w2 claims it (the claim
// history, read from the server, never shows the task taken while w1 may still run it). Back online, w1 rejoins
// and the tasks are shared again.
func TestSlowClusterPartitionFencing(t *testing.T) {
	n := newNetns(t)
	bin, err := buildWorker()
	require.NoError(t, err)
	creds, err := ebjs.NewCredentials()
	require.NoError(t, err)
	srv, err := ebjs.StartServer(ebjs.ServerConfig{StoreDir: t.TempDir(), Listen: n.hostIP + ":-1", Credentials: &creds})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	credsFile := t.TempDir() + "/nats-credentials"
	require.NoError(t, os.WriteFile(credsFile, []byte(creds.FileLine()), 0o600))
	natsArgs := []string{"--nats", srv.ClientURL(), "--nats-credentials-file", credsFile, "--cluster-token-file", writeToken(t)}
	nc, err := srv.Connect(t.Name())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	require.NoError(t, clusterNames.EnsureBusStream(context.Background(), js, clusterBus, time.Hour, -1, 1))

	// A receiver both workers reach.
	ln, err := net.Listen("tcp", n.hostIP+":0")
	require.NoError(t, err)
	var mu sync.Mutex
	got := map[string]int{}
	rcv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		got[req.Header.Get("Ce-Id")]++
		mu.Unlock()
	}))
	rcv.Listener = ln
	rcv.Start()
	t.Cleanup(rcv.Close)

	start := func(id, addr string, prefix ...string) *workerProc {
		w := &workerProc{id: id, addr: addr, out: &syncBuffer{}, done: make(chan struct{})}
		args := append(append(prefix, bin), append(natsArgs, "--cluster-id", clusterID, "--worker-id", id,
			"--rest-addr", addr, "--allow-private-targets", "--log-level", "warn")...)
		w.cmd = exec.Command(args[0], args[1:]...)
		w.cmd.Stdout, w.cmd.Stderr = w.out, w.out
		require.NoError(t, w.cmd.Start())
		go func() { w.err = w.cmd.Wait(); close(w.done) }()
		t.Cleanup(func() {
			_ = w.cmd.Process.Kill()
			<-w.done
			if t.Failed() || testing.Verbose() {
				t.Logf("--- log of %s ---\n%s", id, w.out.String())
			}
		})
		return w
	}
	w1 := start("w1", n.nsIP+":8083", "ip", "netns", "exec", n.name)
	w2 := start("w2", listenertest.Addr(t))
	require.Eventually(t, func() bool {
		info, err := w2.client().ClusterInfo(context.Background())
		return err == nil && len(info.Workers) == 2
	}, waitLong, 50*time.Millisecond, "both workers joined")

	// Two targets of one task each: one lands on each worker.
	for _, name := range []string{"hook-a", "hook-b"} {
		_, err := w2.client().CreateConnector(context.Background(), rpc.CreateConnectorRequest{Name: name, Config: map[string]string{
			connector.KeyClass:    httpsink.Name,
			connector.KeyTasksMax: "1",
			connector.KeyTopics:   clusterNames.RuleSubject(clusterBus, name),
			connector.KeyStream:   clusterNames.BusStream(clusterBus),
			connector.KeyDurable:  clusterNames.TargetConsumer(name, "t"),
			httpsink.KeyURL:       rcv.URL,
		}})
		require.NoError(t, err)
	}
	var cut rpc.TaskID
	require.Eventually(t, func() bool {
		tasks, err := w1.client().AllocatedTasks(context.Background())
		if err != nil || len(tasks) != 1 {
			return false
		}
		cut = tasks[0].ID
		return true
	}, waitLong, 50*time.Millisecond, "w1 runs one task")

	claims, err := js.KeyValue(context.Background(), clusterNames.Bucket(wcluster.ClaimsBucketPurpose))
	require.NoError(t, err)
	watcher, err := claims.WatchAll(context.Background(), jetstream.UpdatesOnly())
	require.NoError(t, err)
	defer func() { _ = watcher.Stop() }()
	takenAt := make(chan time.Time, 1)
	go func() {
		for e := range watcher.Updates() {
			if e == nil || e.Operation() != jetstream.KeyValuePut || e.Key() != wcluster.ClaimKey(cut) {
				continue
			}
			var v struct{ Worker string }
			_ = json.Unmarshal(e.Value(), &v)
			if v.Worker == "w2" {
				takenAt <- time.Now()
				return
			}
		}
	}()

	cutAt := time.Now()
	run(t, "ip", "link", "set", n.hostIf, "down")
	var stoppedAt time.Time
	require.Eventually(t, func() bool {
		if strings.Contains(w1.out.String(), "task stopped") {
			stoppedAt = time.Now()
			return true
		}
		return false
	}, waitLong, time.Millisecond, "w1 stops its task without NATS")
	var taken time.Time
	select {
	case taken = <-takenAt:
	case <-time.After(waitLong):
		t.Fatal("w2 did not claim the task of the cut-off worker")
	}
	figure(t, "link down → the cut-off worker stopped its task", ms(stoppedAt.Sub(cutAt)))
	figure(t, "link down → the other worker claimed it", ms(taken.Sub(cutAt)))
	assert.True(t, stoppedAt.Before(taken), "the cut-off worker stopped before its task was claimed by another")

	// Events reach the receiver through w2 alone; back online, w1 rejoins and takes a task again.
	m := stream.Encode(jetstreamtest.Event("after-cut", "t", nil))
	m.Subject = clusterNames.RuleSubject(clusterBus, cut.Connector)
	_, err = js.PublishMsg(context.Background(), m)
	require.NoError(t, err)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return got["after-cut"] == 1 }, waitLong, 10*time.Millisecond)
	healed := time.Now()
	run(t, "ip", "link", "set", n.hostIf, "up")
	require.Eventually(t, func() bool {
		tasks, err := w1.client().AllocatedTasks(context.Background())
		return err == nil && len(tasks) == 1
	}, waitLong, 50*time.Millisecond, "w1 rejoins and runs a task again")
	figure(t, "link up → the worker runs a task again", ms(time.Since(healed)))
	assert.Contains(t, w1.out.String(), "worker's lease lost", "w1 abandoned its lease's incarnation")
}
