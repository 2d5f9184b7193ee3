package stream_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

func TestArchiveNames(t *testing.T) {
	t.Parallel()
	n := stream.Names{Cluster: "eb"}
	assert.Equal(t, "eb_ARCHIVE_", n.ArchivePrefix())
	assert.Equal(t, "eb_ARCHIVE_acct1_abcdefghijklmnop", n.ArchiveStream("acct1", "abcdefghijklmnop"))
	assert.Equal(t, "eb.archive.acct1.abcdefghijklmnop", n.ArchiveSubject("acct1", "abcdefghijklmnop"))
	account, _, _ := strings.Cut(strings.TrimPrefix(n.ArchiveStream("acct1", "abcdefghijklmnop"), n.ArchivePrefix()), "_")
	assert.Equal(t, "acct1", account, "the meter reads the account up to the next '_'")

	c := n.ArchiveStreamConfig("acct1", "abcdefghijklmnop", 0, 0)
	assert.Equal(t, []string{"eb.archive.acct1.abcdefghijklmnop"}, c.Subjects)
	assert.Equal(t, time.Duration(0), c.MaxAge, "kept for ever")
	assert.EqualValues(t, -1, c.MaxBytes, "no size limit, nothing reserved")
	assert.Equal(t, jetstream.DiscardOld, c.Discard)
	assert.Equal(t, jetstream.FileStorage, c.Storage)
	assert.Equal(t, stream.DuplicateWindow, c.Duplicates)
	assert.Equal(t, 1, c.Replicas)
	assert.Equal(t, 24*time.Hour, n.ArchiveStreamConfig("a", "b", 24*time.Hour, 3).MaxAge)
}

func TestStoredAt(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 5, 6, 7, 80, time.FixedZone("x", 3600))
	v := stream.FormatStoredAt(at)
	assert.Equal(t, "2026-03-04T04:06:07.000000080Z", v, "UTC, every nanosecond digit")
	got, err := stream.ParseStoredAt(v)
	require.NoError(t, err)
	assert.True(t, got.Equal(at))
	assert.Less(t, stream.FormatStoredAt(at), stream.FormatStoredAt(at.Add(time.Microsecond)), "texts sort as times")
	_, err = stream.ParseStoredAt("yesterday")
	assert.ErrorContains(t, err, stream.HeaderStoredAt)
}

func TestArchiveStreamLifecycle(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	n := stream.Names{Cluster: "eb"}
	_, _, _, err := n.ArchiveInfo(ctx, env.JS, "a1", "arc")
	assert.True(t, errors.Is(err, jetstream.ErrStreamNotFound), "%v", err)

	require.NoError(t, n.EnsureArchiveStream(ctx, env.JS, "a1", "arc", time.Hour, 1))
	require.NoError(t, n.EnsureArchiveStream(ctx, env.JS, "a1", "arc", 2*time.Hour, 1), "idempotent; updates the retention")
	s, err := env.JS.Stream(ctx, n.ArchiveStream("a1", "arc"))
	require.NoError(t, err)
	assert.Equal(t, 2*time.Hour, s.CachedInfo().Config.MaxAge)

	events, size, last, err := n.ArchiveInfo(ctx, env.JS, "a1", "arc")
	require.NoError(t, err)
	assert.Equal(t, [3]uint64{0, 0, 0}, [3]uint64{events, size, last})
	for _, id := range []string{"x", "y", "x"} { // the second x is a duplicate
		m := nats.NewMsg(n.ArchiveSubject("a1", "arc"))
		m.Header.Set(nats.MsgIdHdr, id)
		m.Data = []byte("{}")
		_, err := env.JS.PublishMsg(ctx, m)
		require.NoError(t, err)
	}
	events, size, last, err = n.ArchiveInfo(ctx, env.JS, "a1", "arc")
	require.NoError(t, err)
	assert.Equal(t, uint64(2), events)
	assert.Positive(t, size)
	assert.Equal(t, uint64(2), last)

	require.NoError(t, n.DeleteArchiveStream(ctx, env.JS, "a1", "arc"))
	require.NoError(t, n.DeleteArchiveStream(ctx, env.JS, "a1", "arc"), "a missing stream is not an error")
	_, err = env.JS.Stream(ctx, n.ArchiveStream("a1", "arc"))
	assert.ErrorIs(t, err, jetstream.ErrStreamNotFound)
}

// TestArchiveRetentionExpires: events older than an archive stream's age limit are gone (JetStream enforces it;
// the control plane sets it from retentionDays, which TestArchives checks); an age of 0 keeps them.
func TestArchiveRetentionExpires(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	n := stream.Names{Cluster: "eb"}
	require.NoError(t, n.EnsureArchiveStream(ctx, env.JS, "a1", "short", time.Second, 1))
	require.NoError(t, n.EnsureArchiveStream(ctx, env.JS, "a1", "forever", 0, 1))
	for _, arc := range []string{"short", "forever"} {
		m := nats.NewMsg(n.ArchiveSubject("a1", arc))
		m.Data = []byte("{}")
		_, err := env.JS.PublishMsg(ctx, m)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		events, _, _, err := n.ArchiveInfo(ctx, env.JS, "a1", "short")
		return err == nil && events == 0
	}, 10*time.Second, 100*time.Millisecond, "the event older than the retention is gone")
	events, _, _, err := n.ArchiveInfo(ctx, env.JS, "a1", "forever")
	require.NoError(t, err)
	assert.EqualValues(t, 1, events, "retention 0 keeps it")
}
