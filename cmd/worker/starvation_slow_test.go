//go:build slow

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

// TestSlowClusterStarvedWorkerCountsAttempts starves a worker of CPU entirely (SIGSTOP for 4 s, longer than the
// consumers' ack wait and than its lease) while it retries a record its target refuses. JetStream hands the
// record out again meanwhile, and the worker, woken, finds its lease lost, stops its task and claims it again
// under a new lease: the record's delivery count grows well past its attempts. The target still gets all 4
// attempts (3 retries) and the dead letter says 4. A record that was not handed out again (its pull request
// expired during the stop) proves nothing either way: the test starves up to three.
func TestSlowClusterStarvedWorkerCountsAttempts(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	require.NoError(t, clusterNames.EnsureDLQStream(ctx, c.js, "acct", 1, stream.DLQLimits{}))
	var hits atomic.Int64
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	}))
	t.Cleanup(refuse.Close)
	w := c.start("w1")
	const name = "hook-starved"
	durable := clusterNames.TargetConsumer("starved", "t")
	_, err := w.client().CreateConnector(ctx, rpc.CreateConnectorRequest{Name: name, Config: map[string]string{
		connector.KeyClass:             httpsink.Name,
		connector.KeyTasksMax:          "1",
		connector.KeyTopics:            clusterNames.RuleSubject(clusterBus, "starved"),
		connector.KeyStream:            clusterNames.BusStream(clusterBus),
		connector.KeyDurable:           durable,
		connector.KeyRetryMaxAttempts:  "3",
		connector.KeyRetryDelayInitial: "1500",
		connector.KeyRetryDelayMax:     "1500",
		connector.KeyErrorsTolerance:   connector.ToleranceAll,
		connector.KeyDLQTopic:          clusterNames.DLQSubject("acct"),
		httpsink.KeyURL:                refuse.URL,
	}})
	require.NoError(t, err)
	dlq, err := c.js.Stream(ctx, clusterNames.DLQStream("acct"))
	require.NoError(t, err)
	cons, err := c.js.Consumer(ctx, clusterNames.BusStream(clusterBus), durable)
	require.NoError(t, err)
	delivered := func() int64 {
		info, err := cons.Info(ctx)
		require.NoError(t, err)
		return int64(info.Delivered.Consumer)
	}
	// Whether JetStream hands the record out again while the worker is stopped depends on where its pull request
	// stands when the stop comes (one that expires meanwhile is not renewed): up to three records are starved,
	// until one was handed out again.
	redelivered := false
	for trial := 1; trial <= 3 && !redelivered; trial++ {
		id := fmt.Sprintf("starved-%d", trial)
		deliveredBefore, hitsBefore := delivered(), hits.Load()
		m := stream.Encode(jetstreamtest.Event(id, "t", nil))
		m.Subject = clusterNames.RuleSubject(clusterBus, "starved")
		_, err = c.js.PublishMsg(ctx, m)
		require.NoError(t, err)

		require.Eventually(t, func() bool { return hits.Load() > hitsBefore }, waitLong, 10*time.Millisecond, "first attempt")
		w.signal(t, syscall.SIGSTOP)
		time.Sleep(4 * time.Second)
		w.signal(t, syscall.SIGCONT)

		var raw *nats.Msg
		require.Eventually(t, func() bool {
			sm, err := dlq.GetLastMsgForSubject(ctx, clusterNames.DLQSubject("acct"))
			if err != nil {
				return false
			}
			raw = &nats.Msg{Subject: sm.Subject, Header: sm.Header, Data: sm.Data}
			ev, _, err := stream.DecodeDeadLetter(raw)
			return err == nil && ev.ID() == id
		}, waitLong, 50*time.Millisecond, "the record is dead-lettered")
		_, dl, err := stream.DecodeDeadLetter(raw)
		require.NoError(t, err)
		assert.EqualValues(t, 4, dl.Attempts, "attempts, not deliveries: 1 + 3 retries")

		deliveries, requests := delivered()-deliveredBefore, hits.Load()-hitsBefore
		figure(t, "deliveries of the record / attempts counted / requests the target got",
			[]int64{deliveries, int64(dl.Attempts), requests})
		// Counting deliveries, the record would have been given up after 2 or 3 requests: redeliveries that were no
		// attempt would have used up its retries.
		assert.GreaterOrEqual(t, requests, int64(4), "the target got every attempt the retry policy allows")
		redelivered = deliveries > 4
	}
	assert.True(t, redelivered, "the starvation made JetStream hand a record out again")
	assert.Contains(t, w.out.String(), "worker's lease lost", "the starved worker found its lease lost")
}
