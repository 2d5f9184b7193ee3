package stream_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// Ensuring a stream that is as it should be changes nothing on the server: one create request, answered without
// error, and no update (which CreateOrUpdateStream tries first: it rewrites the stream's metadata and checks its
// subjects against every stream of the account; the server announces each on $JS.EVENT.ADVISORY.STREAM.UPDATED).
// Ensuring one whose limits changed updates it. For every stream the product ensures; a config the server would
// normalize differently from ours would show here as an update.
func TestEnsureAStreamAsItShouldBeIsOneRequest(t *testing.T) {
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	n := stream.Names{Cluster: "t"}
	var updates atomic.Int64
	sub, err := env.Conn.Subscribe("$JS.EVENT.ADVISORY.STREAM.UPDATED.>", func(*nats.Msg) { updates.Add(1) })
	require.NoError(t, err)
	defer sub.Unsubscribe()
	updated := func() int64 {
		require.NoError(t, env.Conn.Flush())
		time.Sleep(50 * time.Millisecond) // advisories are sent asynchronously
		return updates.Load()
	}
	for _, tc := range []struct {
		name   string
		ensure func(js jetstream.JetStream, age time.Duration) error
		stream string
	}{
		{"bus", func(js jetstream.JetStream, age time.Duration) error {
			return n.EnsureBusStream(ctx, js, "b1", age, 1<<20, 1)
		}, n.BusStream("b1")},
		{"bus without a size", func(js jetstream.JetStream, age time.Duration) error {
			return n.EnsureBusStream(ctx, js, "b2", age, 0, 1)
		}, n.BusStream("b2")},
		{"dead letters", func(js jetstream.JetStream, age time.Duration) error {
			return n.EnsureDLQStream(ctx, js, "acme", 1, stream.DLQLimits{MaxAge: age})
		}, n.DLQStream("acme")},
		{"bus log", func(js jetstream.JetStream, age time.Duration) error {
			return n.EnsureLogStream(ctx, js, "acme", 1, stream.LogLimits{MaxAge: age})
		}, n.LogStream("acme")},
		{"archive", func(js jetstream.JetStream, age time.Duration) error {
			return n.EnsureArchiveStream(ctx, js, "acme", "a1", age, 1)
		}, n.ArchiveStream("acme", "a1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, tc.ensure(env.JS, time.Hour))
			before, err := env.JS.AccountInfo(ctx)
			require.NoError(t, err)
			require.NoError(t, tc.ensure(env.JS, time.Hour))
			after, err := env.JS.AccountInfo(ctx)
			require.NoError(t, err)
			assert.Equal(t, before.API.Errors, after.API.Errors, "found as it should be: no refused create")
			assert.Equal(t, before.API.Total+2, after.API.Total, "one create (and the account info)")
			assert.Zero(t, updated(), "found as it should be: not updated")

			require.NoError(t, tc.ensure(env.JS, 2*time.Hour))
			assert.EqualValues(t, 1, updated(), "changed limits: updated")
			updates.Store(0)
			s, err := env.JS.Stream(ctx, tc.stream)
			require.NoError(t, err)
			assert.Equal(t, 2*time.Hour, s.CachedInfo().Config.MaxAge, "changed limits are applied")
		})
	}
	for name, ensure := range map[string]func() error{
		"metrics":     func() error { return n.EnsureMetricsStream(ctx, env.JS, 1) },
		"event types": func() error { return n.EnsureEventTypesStream(ctx, env.JS, 1) },
		"audit":       func() error { return n.EnsureAuditStream(ctx, env.JS, 1) },
		"ready":       func() error { return n.EnsureReadyStream(ctx, env.JS, 1) },
	} {
		require.NoError(t, ensure(), name)
		require.NoError(t, ensure(), name)
		assert.Zero(t, updated(), "%s: found as it should be: not updated", name)
	}
}
