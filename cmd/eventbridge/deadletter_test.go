package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
)

// TestDeadLettersEndToEnd: the events of a target that always answers 500 land in the account's dead-letter
// stream <cluster>_DLQ_default after the target's retry attempts, those of a target that answers 400 at once, each
// with its reason, attempts, connector and the original event.
func TestDeadLettersEndToEnd(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)

	failing := func(status int, hits *atomic.Int64) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			http.Error(w, "target says no", status)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	var downHits, badHits atomic.Int64
	down, bad := failing(http.StatusInternalServerError, &downHits), failing(http.StatusBadRequest, &badHits)
	target := func(url string) map[string]any {
		return map[string]any{"type": "http", "config": map[string]any{"url": url},
			"retryPolicy": map[string]any{"maximumRetryAttempts": 2, "maximumEventAgeInSeconds": 86400}}
	}
	a.must("POST", "/api/v1/buses", map[string]any{"name": "orders"}, 201)
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "all",
		"eventPattern": map[string]any{"type": []any{"order.created"}}}, 201)
	a.must("PUT", "/api/v1/buses/orders/rules/all/targets/down", target(down.URL), 201)
	a.must("PUT", "/api/v1/buses/orders/rules/all/targets/bad", target(bad.URL), 201)

	const n = 10
	var batch []map[string]any
	for i := range n {
		batch = append(batch, event(fmt.Sprintf("evt-%d", i), "shop", "order.created", map[string]any{"n": i}))
	}
	a.putBatch("orders", batch)

	js, err := jetstream.New(m.nc)
	require.NoError(t, err)
	ctx := context.Background()
	names := stream.Names{Cluster: "eb"}
	dlq, err := js.Stream(ctx, names.DLQStream("default"))
	require.NoError(t, err, "creating a bus ensures its account's dead-letter stream")
	stored := func() uint64 {
		info, err := dlq.Info(ctx)
		if err != nil {
			return 0
		}
		return info.State.Msgs
	}
	require.Eventually(t, func() bool { return badHits.Load() >= n }, 60*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool { return stored() >= 2*n }, 60*time.Second, 50*time.Millisecond,
		"every event of both targets is dead-lettered")

	type key struct{ id, class string }
	seen := map[key]stream.DeadLetter{}
	for seq := uint64(1); seq <= 2*n; seq++ {
		raw, err := dlq.GetMsg(ctx, seq)
		require.NoError(t, err)
		require.Equal(t, names.DLQSubject("default"), raw.Subject)
		e, d, err := stream.DecodeDeadLetter(&nats.Msg{Subject: raw.Subject, Header: raw.Header, Data: raw.Data})
		require.NoError(t, err)
		require.Equal(t, "order.created", e.Type())
		require.Contains(t, string(e.Data()), `"n"`)
		require.Contains(t, d.Reason, "target says no")
		require.NotEmpty(t, d.Connector)
		seen[key{e.ID(), d.ErrorClass}] = d
	}
	require.Len(t, seen, 2*n, "each event once per target")
	for i := range n {
		id := fmt.Sprintf("evt-%d", i)
		ex, ok := seen[key{id, stream.DLQClassExhausted}]
		require.True(t, ok, id)
		require.EqualValues(t, 3, ex.Attempts, "maximumRetryAttempts 2: three attempts")
		require.True(t, strings.Contains(ex.Connector, "down"), ex.Connector)
		pe, ok := seen[key{id, stream.DLQClassPermanent}]
		require.True(t, ok, id)
		require.EqualValues(t, 1, pe.Attempts, "a 400 is dead-lettered at once")
		require.True(t, strings.Contains(pe.Connector, "bad"), pe.Connector)
	}
	require.EqualValues(t, 3*n, downHits.Load())
	require.EqualValues(t, n, badHits.Load())
}
