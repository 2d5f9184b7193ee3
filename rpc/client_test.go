package rpc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
)

// deadURL is the URL of a port nothing listens on.
// deadURL is a worker that cannot be reached: nothing listens on port 1, and the system never hands it out for ":0"
// to another test's server.
func deadURL(*testing.T) string { return "http://127.0.0.1:1" }

// A cluster client goes to the next worker when one cannot be reached, and keeps the one that answered; an
// error answer is not failed over.
func TestClusterClientFailsOver(t *testing.T) {
	var hits atomic.Int64
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/connectors/nope/status" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error_code":404,"message":"connector nope not found"}`))
			return
		}
		_, _ = w.Write([]byte(`{"version":"1","commit":"","kafka_cluster_id":"eb","worker_id":"w2"}`))
	}))
	t.Cleanup(live.Close)
	c := rpc.NewClusterClient([]string{deadURL(t), live.URL + "/"})
	info, err := c.ServerInfo(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "w2", info.WorkerID)
	_, err = c.ConnectorStatus(context.Background(), "nope")
	assert.True(t, rpc.IsNotFound(err), "an error answer comes back as it is: %v", err)
	assert.Equal(t, int64(2), hits.Load())

	// Every worker unreachable: the last transport error.
	down := rpc.NewClusterClient([]string{deadURL(t), deadURL(t)})
	_, err = down.ServerInfo(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connect")
}
