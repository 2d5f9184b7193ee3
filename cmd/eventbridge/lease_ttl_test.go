package main

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/listener/listenertest"
)

// The embedded worker's lease TTL is --lease-ttl. Alone on an in-process NATS server, the worker may change it from
// one start to the next; once the server listens, other workers may have joined with the TTL the bucket keeps, and
// a start with another is refused, naming both.
func TestEmbeddedLeaseTTL(t *testing.T) {
	dir := t.TempDir()
	leasesTTL := func(m *Main) time.Duration {
		js, err := jetstream.New(m.nc)
		require.NoError(t, err)
		kv, err := js.KeyValue(context.Background(), "eb_leases")
		require.NoError(t, err)
		st, err := kv.Status(context.Background())
		require.NoError(t, err)
		return st.TTL()
	}
	m := startMain(t, dir, "--lease-ttl", "3s")
	assert.Equal(t, 3*time.Second, leasesTTL(m))
	require.NoError(t, m.Close())

	m = startMain(t, dir, "--lease-ttl", "4s")
	assert.Equal(t, 4*time.Second, leasesTTL(m), "a sole worker changes it")
	require.NoError(t, m.Close())

	m = NewMain()
	require.NoError(t, m.ParseFlags([]string{"--http-addr", "127.0.0.1:0", "--worker-addr", "127.0.0.1:0",
		"--data-dir", dir, "--nats-listen", listenertest.Addr(t), "--log-level", "warn"}, func(string) string { return "" }))
	err := m.Run(context.Background())
	_ = m.Close()
	require.Error(t, err, "a server that listens may have other workers")
	assert.Contains(t, err.Error(), "keeps a key 4s after its last write, and this worker is configured for 2.5s")
}
