package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/cluster"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// A worker's lease TTL is the max age of the leases bucket, and four fifths of it that of the members bucket; a
// worker configured for another TTL than the cluster's does not start, and the cluster's workers keep theirs.
func TestLeaseTTL(t *testing.T) {
	t.Parallel()
	for _, ttl := range []time.Duration{500 * time.Millisecond, 6 * time.Minute} {
		_, err := worker.New(worker.Config{Token: testToken, NATS: jetstreamtest.Start(t).Conn, LeaseTTL: ttl})
		require.Error(t, err, "a lease TTL of %v", ttl)
		assert.Contains(t, err.Error(), "the lease TTL must be between 1s and 5m0s, not "+ttl.String())
	}

	env := jetstreamtest.Start(t)
	ctx := context.Background()
	start := func(id string, ttl time.Duration) (*worker.Worker, error) {
		w, err := worker.New(worker.Config{Token: testToken, NATS: env.Conn, WorkerID: id, RESTAddr: "127.0.0.1:0",
			Registry: registry(t), LeaseTTL: ttl})
		require.NoError(t, err)
		if err := w.Start(ctx); err != nil {
			return nil, err
		}
		t.Cleanup(func() { _ = w.Close(context.Background()) })
		return w, nil
	}
	_, err := start("w1", 3*time.Second)
	require.NoError(t, err)
	names := stream.Names{Cluster: worker.DefaultClusterID}
	ttlOf := func(purpose string) time.Duration {
		kv, err := env.JS.KeyValue(ctx, names.Bucket(purpose))
		require.NoError(t, err)
		st, err := kv.Status(ctx)
		require.NoError(t, err)
		return st.TTL()
	}
	assert.Equal(t, 3*time.Second, ttlOf(cluster.LeasesBucketPurpose))
	assert.Equal(t, 2400*time.Millisecond, ttlOf(cluster.MembersBucketPurpose))

	_, err = start("w2", 0) // the default, 2.5s
	require.Error(t, err)
	assert.Contains(t, err.Error(), "keeps a key 3s after its last write, and this worker is configured for 2.5s")
	assert.Equal(t, 3*time.Second, ttlOf(cluster.LeasesBucketPurpose), "the cluster keeps its lease TTL")
	assert.Equal(t, 2400*time.Millisecond, ttlOf(cluster.MembersBucketPurpose))

	_, err = start("w3", 3*time.Second)
	require.NoError(t, err, "a worker configured as the cluster joins it")
	kv, err := env.JS.KeyValue(ctx, names.Bucket(cluster.LeasesBucketPurpose))
	require.NoError(t, err)
	keys, err := kv.Keys(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"w1", "w3"}, keys, "the leases of the workers that started")
}
