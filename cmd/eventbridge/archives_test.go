package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
)

type archiveAnswer struct {
	Name          string          `json:"name"`
	Bus           string          `json:"bus"`
	State         string          `json:"state"`
	EventPattern  json.RawMessage `json:"eventPattern"`
	RetentionDays int             `json:"retentionDays"`
	EventCount    uint64          `json:"eventCount"`
	SizeBytes     uint64          `json:"sizeBytes"`
}

func decodeArchive(t *testing.T, b []byte) archiveAnswer {
	t.Helper()
	var a archiveAnswer
	require.NoErrorf(t, json.Unmarshal(b, &a), "answer: %s", b)
	return a
}

// archivedIDs reads the ids of the events an archive's stream holds, in order, with their eb-stored-at headers.
func archivedIDs(t *testing.T, js jetstream.JetStream, streamName string) (ids []string, storedAt []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, streamName)
	require.NoError(t, err)
	info, err := s.Info(ctx)
	require.NoError(t, err)
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		raw, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		require.NoError(t, err)
		e, err := stream.Decode(&nats.Msg{Subject: raw.Subject, Header: raw.Header, Data: raw.Data})
		require.NoError(t, err)
		ids = append(ids, e.ID())
		storedAt = append(storedAt, raw.Header.Get(stream.HeaderStoredAt))
	}
	return ids, storedAt
}

// TestArchives: an archive keeps exactly the events of its bus stored after its creation that match its pattern
// (every event without one), in a stream of its own whose age limit is its retention (0: none); changing the
// retention changes the stream's; a bus with an archive cannot be deleted; deleting an archive deletes its events.
func TestArchives(t *testing.T) {
	t.Parallel()
	m := startMain(t, t.TempDir())
	t.Cleanup(func() { _ = m.Close() })
	a := apiOf(t, m)
	js, err := jetstream.New(m.nc)
	require.NoError(t, err)
	names := stream.Names{Cluster: m.Config.ClusterID}

	a.must("POST", "/api/v1/buses", map[string]any{"name": "ar"}, 201)
	a.putBatch("ar", []map[string]any{event("before", "shop", "order.created", map[string]any{"n": 0})})

	orders := decodeArchive(t, a.must("POST", "/api/v1/buses/ar/archives", map[string]any{"name": "orders",
		"description": "created orders", "eventPattern": map[string]any{"type": []any{"order.created"}}}, 201))
	assert.Equal(t, "ENABLED", orders.State)
	assert.Equal(t, "ar", orders.Bus)
	assert.Equal(t, 0, orders.RetentionDays)
	all := decodeArchive(t, a.must("POST", "/api/v1/buses/ar/archives", map[string]any{"name": "all", "retentionDays": 7}, 201))
	assert.Empty(t, all.EventPattern, "no pattern: every event")

	a.putBatch("ar", []map[string]any{
		event("c1", "shop", "order.created", map[string]any{"n": 1}),
		event("p1", "shop", "order.paid", map[string]any{"n": 2}),
		event("c2", "shop", "order.created", map[string]any{"n": 3}),
	})
	require.Eventually(t, func() bool {
		o := decodeArchive(t, a.must("GET", "/api/v1/buses/ar/archives/orders", nil, 200))
		l := decodeArchive(t, a.must("GET", "/api/v1/buses/ar/archives/all", nil, 200))
		return o.EventCount == 2 && l.EventCount == 3 && o.SizeBytes > 0
	}, 15*time.Second, 50*time.Millisecond, "the archives count what they hold")

	acct := "default"
	ordersStream := names.ArchiveStream(acct, archiveID(t, js, names, acct, "orders", 2))
	ids, storedAt := archivedIDs(t, js, ordersStream)
	assert.ElementsMatch(t, []string{"c1", "c2"}, ids, "only the matching events stored after the archive was created")
	for _, at := range storedAt {
		_, err := stream.ParseStoredAt(at)
		assert.NoError(t, err, "each copy says when the bus stored the event")
	}
	allStream := names.ArchiveStream(acct, archiveID(t, js, names, acct, "all", 3))
	ids, _ = archivedIDs(t, js, allStream)
	assert.ElementsMatch(t, []string{"c1", "p1", "c2"}, ids, "the router copies events side by side: in any order")

	maxAge := func(name string) time.Duration {
		s, err := js.Stream(context.Background(), name)
		require.NoError(t, err)
		return s.CachedInfo().Config.MaxAge
	}
	assert.Equal(t, time.Duration(0), maxAge(ordersStream), "retentionDays 0 keeps events indefinitely")
	assert.Equal(t, 7*24*time.Hour, maxAge(allStream))
	patched := decodeArchive(t, a.must("PATCH", "/api/v1/buses/ar/archives/orders", map[string]any{"retentionDays": 1}, 200))
	assert.Equal(t, 1, patched.RetentionDays)
	assert.Equal(t, 24*time.Hour, maxAge(ordersStream), "the stream's age limit follows the retention")

	list := a.must("GET", "/api/v1/buses/ar/archives", nil, 200)
	assert.Contains(t, string(list), `"name":"all"`)
	assert.Contains(t, string(list), `"name":"orders"`)

	status, out := a.do("DELETE", "/api/v1/buses/ar", "", nil)
	assert.Equal(t, 409, status, string(out))
	assert.Contains(t, string(out), "archive")

	a.must("DELETE", "/api/v1/buses/ar/archives/all", nil, 204)
	_, err = js.Stream(context.Background(), allStream)
	assert.ErrorIs(t, err, jetstream.ErrStreamNotFound, "deleting an archive deletes its events")
	a.must("GET", "/api/v1/buses/ar/archives/all", nil, 404)

	// Archiving stops with the archive: events put now reach only the remaining one.
	a.putBatch("ar", []map[string]any{event("c3", "shop", "order.created", map[string]any{"n": 4})})
	require.Eventually(t, func() bool {
		return decodeArchive(t, a.must("GET", "/api/v1/buses/ar/archives/orders", nil, 200)).EventCount == 3
	}, 15*time.Second, 50*time.Millisecond)
}

// archiveID finds the id of an account's archive from the streams JetStream lists: the archive stream whose
// subject holds want events (the tests' archives differ by count).
func archiveID(t *testing.T, js jetstream.JetStream, names stream.Names, accountID, name string, want uint64) string {
	t.Helper()
	prefix := names.ArchivePrefix() + accountID + "_"
	lister := js.ListStreams(context.Background())
	for info := range lister.Info() {
		if strings.HasPrefix(info.Config.Name, prefix) && info.State.Msgs == want {
			return strings.TrimPrefix(info.Config.Name, prefix)
		}
	}
	require.NoError(t, lister.Err())
	require.FailNow(t, "no archive stream holds the events", "%s: %d", name, want)
	return ""
}
