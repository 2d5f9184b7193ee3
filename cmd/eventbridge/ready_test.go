package main

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
)

// TestReadinessFollowsTheStore: /readyz answers 503 while the event store does not take writes (here its probe's
// stream is gone, as a store that refuses writes), and 200 again once it does, without a restart.
func TestReadinessFollowsTheStore(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	ready := func() (int, string) {
		resp, err := http.Get(m.HTTPURL() + "/readyz")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := ready()
	require.Equal(t, http.StatusOK, status, body)

	js, err := jetstream.New(m.nc)
	require.NoError(t, err)
	names := stream.Names{Cluster: m.Config.ClusterID}
	ctx := context.Background()
	require.NoError(t, js.DeleteStream(ctx, names.ReadyStream()))
	require.Eventually(t, func() bool { s, _ := ready(); return s == http.StatusServiceUnavailable }, 10*time.Second,
		100*time.Millisecond, "/readyz while the store takes no writes")

	require.NoError(t, names.EnsureReadyStream(ctx, js, 1))
	require.Eventually(t, func() bool { s, _ := ready(); return s == http.StatusOK }, 10*time.Second, 100*time.Millisecond,
		"/readyz once the store takes writes again")
}
