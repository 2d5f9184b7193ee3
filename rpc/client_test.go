package rpc_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
)

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

// TestListingsDecodeOnlyWhatChanged: a listing of every connector answered with the same bytes as the last one is
// not decoded again (its entries are the same values), a changed one is, and each caller owns its map.
func TestListingsDecodeOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	var state atomic.Value
	state.Store("RUNNING")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"a":{"status":{"name":"a","connector":{"state":%q,"worker_id":"w1"},"tasks":[],"type":"sink"}},
			"b":{"status":{"name":"b","connector":{"state":"RUNNING","worker_id":"w1"},"tasks":[],"type":"sink"}}}`, state.Load())
	}))
	t.Cleanup(srv.Close)
	c := rpc.NewClient(srv.URL)
	ctx := context.Background()
	first, err := c.ListConnectorStatuses(ctx)
	require.NoError(t, err)
	require.Len(t, first, 2)
	delete(first, "b")
	second, err := c.ListConnectorStatuses(ctx)
	require.NoError(t, err)
	require.Len(t, second, 2, "the caller's map is its own")
	assert.Same(t, first["a"].Status, second["a"].Status, "the same answer: not decoded again")

	_, same1, err := c.ListConnectorStatusesStamped(ctx)
	require.NoError(t, err)
	_, same2, err := c.ListConnectorStatusesStamped(ctx)
	require.NoError(t, err)
	assert.Equal(t, same1, same2, "the same bytes without a tag: the same stamp")

	state.Store("PAUSED")
	third, changed, err := c.ListConnectorStatusesStamped(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, same1, changed, "other bytes: another stamp")
	assert.Equal(t, rpc.StatePaused, third["a"].Status.Connector.State)
	assert.NotSame(t, second["b"].Status, third["b"].Status, "a changed answer is decoded whole")
	all, err := c.ListConnectors(ctx)
	require.NoError(t, err)
	assert.NotSame(t, third["a"].Status, all["a"].Status, "each listing has its own last answer")
}

// A listing of every connector sends the tag of its last answer, and a 304 answer is the last answer again, in a
// map of the caller's own; an answer with another tag is decoded.
func TestListingsSendTheirTag(t *testing.T) {
	t.Parallel()
	var version atomic.Int64
	var full, notModified atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		etag := fmt.Sprintf(`"v%d"`, version.Load())
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"a":{"status":{"name":"a","connector":{"state":"RUNNING","worker_id":"w%d"},"tasks":[],"type":"sink"}}}`,
			version.Load())
	}))
	t.Cleanup(srv.Close)
	c := rpc.NewClient(srv.URL)
	ctx := context.Background()
	first, err := c.ListConnectorStatuses(ctx)
	require.NoError(t, err)
	delete(first, "a")
	second, err := c.ListConnectorStatuses(ctx)
	require.NoError(t, err)
	require.Contains(t, second, "a", "the caller's map is its own")
	assert.Equal(t, "w0", second["a"].Status.Connector.WorkerID)
	assert.Equal(t, int64(1), full.Load())
	assert.Equal(t, int64(1), notModified.Load(), "the second listing sent the first one's tag")

	_, stamp1, err := c.ListConnectorStatusesStamped(ctx)
	require.NoError(t, err)
	_, stamp2, err := c.ListConnectorStatusesStamped(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), notModified.Load())
	assert.Equal(t, stamp1, stamp2, "a 304 answers the last answer's stamp")

	version.Store(1)
	third, stamp3, err := c.ListConnectorStatusesStamped(ctx)
	require.NoError(t, err)
	assert.Equal(t, "w1", third["a"].Status.Connector.WorkerID, "a new tag: the answer is decoded")
	assert.Equal(t, int64(2), full.Load())
	assert.NotEqual(t, stamp1, stamp3, "another answer, another stamp")

	_, err = c.ListConnectors(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), full.Load(), "each kind of listing has its own tag")
}
