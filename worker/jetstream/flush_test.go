package jetstream

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With a flush interval under nats-server's default, the server flushes the store's file system itself, every
// interval and once more at shutdown, and nats-server keeps its own default interval; with none, with SyncAlways or
// with a longer interval, nats-server flushes as configured and the server does not.
func TestServerFlushesTheStoreItself(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("syncfs(2) is Linux's")
	}
	srv := startServer(t, ServerConfig{SyncInterval: 20 * time.Millisecond})
	assert.Equal(t, serverSyncInterval, srv.server().JetStreamConfig().SyncInterval)
	require.Eventually(t, func() bool { return srv.Flushes() >= 3 }, 10*time.Second, 10*time.Millisecond)
	srv.Shutdown()
	after := srv.Flushes()
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, after, srv.Flushes(), "flushes went on after the server stopped")
	srv.Shutdown() // twice is safe

	for name, cfg := range map[string]ServerConfig{
		"default":      {},
		"always":       {SyncAlways: true, SyncInterval: time.Second},
		"two minutes":  {SyncInterval: 2 * time.Minute},
		"five minutes": {SyncInterval: 5 * time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			srv := startServer(t, cfg)
			want := cfg.SyncInterval
			if want == 0 {
				want = serverSyncInterval // nats-server's default
			}
			assert.Equal(t, want, srv.server().JetStreamConfig().SyncInterval)
			assert.Nil(t, srv.flusher)
			assert.Zero(t, srv.Flushes())
		})
	}
}

// A flush that fails is reported and not counted; the next one tries again.
func TestFlusherReportsFailures(t *testing.T) {
	var calls atomic.Int64
	failures := make(chan error, 16)
	f := newFlusher(5*time.Millisecond, func() error {
		if calls.Add(1) <= 2 {
			return errors.New("disk gone")
		}
		return nil
	}, func(err error) {
		select {
		case failures <- err:
		default:
		}
	})
	require.Eventually(t, func() bool { return f.flushes.Load() >= 2 }, 10*time.Second, time.Millisecond)
	f.stop()
	assert.Len(t, failures, 2)
	assert.EqualError(t, <-failures, "disk gone")
	assert.Equal(t, uint64(calls.Load()-2), f.flushes.Load(), "a failed flush was counted")
}
