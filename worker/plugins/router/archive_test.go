package router_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/router"
)

// The archive of the tests: account a1, archive arch1 of bus b1.
const (
	archiveAccount = "a1"
	archiveID      = "arch1"
)

// archiveRules are two rules and an archive of every event from shop*.
func archiveRules(t *testing.T) string {
	return rulesJSON(t,
		router.Rule{ID: "created", Subject: names.RuleSubject(bus, "created"), Pattern: json.RawMessage(`{"type": ["order.created"]}`)},
		router.Rule{ID: "paid", Subject: names.RuleSubject(bus, "paid"), Pattern: json.RawMessage(`{"type": ["order.paid"]}`)},
		router.Rule{ID: archiveID, Archive: true, Subject: names.ArchiveSubject(archiveAccount, archiveID),
			Stream: names.ArchiveStream(archiveAccount, archiveID), Pattern: json.RawMessage(`{"source": [{"prefix": "shop"}]}`)},
	)
}

// archiveEnv is a bus and its archive.
func archiveEnv(t *testing.T) *jetstreamtest.Env {
	env := busEnv(t)
	require.NoError(t, names.EnsureArchiveStream(context.Background(), env.JS, archiveAccount, archiveID, 0, 1))
	return env
}

// put stores e on the bus's .in subject with headers, as PutEvents or a replay does, and returns the metadata a
// task gives the router for it.
func put(t *testing.T, env *jetstreamtest.Env, e *event.Event, headers map[string]string) connector.Meta {
	t.Helper()
	ctx := context.Background()
	m := stream.Encode(e)
	m.Subject = names.BusIn(bus)
	m.Header.Set(nats.MsgIdHdr, stream.PutMsgID(e.Source(), e.ID()))
	for k, v := range headers {
		m.Header.Set(k, v)
	}
	ack, err := env.JS.PublishMsg(ctx, m)
	require.NoError(t, err)
	s, err := env.JS.Stream(ctx, names.BusStream(bus))
	require.NoError(t, err)
	raw, err := s.GetMsg(ctx, ack.Sequence)
	require.NoError(t, err)
	return connector.Meta{Stream: names.BusStream(bus), Subject: raw.Subject, Sequence: raw.Sequence, Attempt: 1,
		Timestamp: raw.Time, MsgID: raw.Header.Get(nats.MsgIdHdr), Header: raw.Header}
}

// storedHeaders returns the headers of the messages on subject of streamName, by event id.
func storedHeaders(t *testing.T, env *jetstreamtest.Env, streamName, subject string) map[string]nats.Header {
	t.Helper()
	ctx := context.Background()
	s, err := env.JS.Stream(ctx, streamName)
	require.NoError(t, err)
	out := map[string]nats.Header{}
	for _, m := range env.Messages(t, streamName, subject) {
		raw, err := s.GetMsg(ctx, m.Seq)
		require.NoError(t, err)
		out[m.Event.ID()] = raw.Header
	}
	return out
}

// The router copies to an archive every event its pattern matches, with the time the bus stored it, but not the
// events a replay put back; replay headers restrict the rules, or send the copy to one target's redrive subject;
// archive copies are not counted as routed.
func TestRouterArchivesAndReplays(t *testing.T) {
	t.Parallel()
	env := archiveEnv(t)
	s, err := router.New(router.Plugin().FullSpec().Values(map[string]string{router.KeyRules: archiveRules(t), router.KeyBusID: bus}),
		connector.Env{JetStream: env.JS, Names: names})
	require.NoError(t, err)

	var (
		created  = names.RuleSubject(bus, "created")
		paid     = names.RuleSubject(bus, "paid")
		archived = names.ArchiveSubject(archiveAccount, archiveID)
		redrive  = names.RedriveSubject(bus, "created", "t1")
	)
	replay := func(kv ...string) map[string]string {
		h := map[string]string{stream.HeaderReplay: "rp1"}
		for i := 0; i < len(kv); i += 2 {
			h[kv[i]] = kv[i+1]
		}
		return h
	}
	tests := []struct {
		name      string
		typ, src  string
		headers   map[string]string
		wantTo    []string // subjects that get a copy
		wantStats connector.RecordStats
		wantRules map[string]uint64
		permanent bool
	}{
		{name: "archived and routed", typ: "order.created", src: "shop/eu",
			wantTo: []string{created, archived}, wantStats: connector.RecordStats{Matched: 1, Routed: 1},
			wantRules: map[string]uint64{"created": 1}},
		{name: "matching only the archive is unmatched", typ: "order.seen", src: "shop/eu",
			wantTo: []string{archived}, wantStats: connector.RecordStats{Unmatched: 1}},
		{name: "matching nothing", typ: "order.seen", src: "crm",
			wantStats: connector.RecordStats{Unmatched: 1}},
		{name: "not archived: another source", typ: "order.paid", src: "crm",
			wantTo: []string{paid}, wantStats: connector.RecordStats{Matched: 1, Routed: 1}, wantRules: map[string]uint64{"paid": 1}},
		{name: "replayed: every rule, never archived", typ: "order.created", src: "shop/eu", headers: replay(),
			wantTo: []string{created}, wantStats: connector.RecordStats{Matched: 1, Routed: 1}, wantRules: map[string]uint64{"created": 1}},
		{name: "replayed to other rules", typ: "order.created", src: "shop/eu",
			headers:   replay(stream.HeaderReplayRules, "paid"),
			wantStats: connector.RecordStats{Unmatched: 1}},
		{name: "replayed to listed rules, unknown ids ignored", typ: "order.paid", src: "shop/eu",
			headers: replay(stream.HeaderReplayRules, "ghost,paid, created"),
			wantTo:  []string{paid}, wantStats: connector.RecordStats{Matched: 1, Routed: 1}, wantRules: map[string]uint64{"paid": 1}},
		{name: "replay rules never name an archive", typ: "order.seen", src: "shop/eu",
			headers:   replay(stream.HeaderReplayRules, archiveID),
			wantStats: connector.RecordStats{Unmatched: 1}},
		{name: "replayed to one target", typ: "order.created", src: "shop/eu",
			headers: replay(stream.HeaderReplayTarget, "created.t1"),
			wantTo:  []string{redrive}, wantStats: connector.RecordStats{Matched: 1, Routed: 1}, wantRules: map[string]uint64{"created": 1}},
		{name: "replayed to a target of a rule not matched", typ: "order.paid", src: "shop/eu",
			headers:   replay(stream.HeaderReplayTarget, "created.t1"),
			wantStats: connector.RecordStats{Unmatched: 1}},
		{name: "replayed to a target of a rule the table has not", typ: "order.created", src: "shop/eu",
			headers:   replay(stream.HeaderReplayTarget, "ghost.t1"),
			wantStats: connector.RecordStats{Unmatched: 1}},
		{name: "a target that is not rule.target", typ: "order.created", src: "shop/eu",
			headers: replay(stream.HeaderReplayTarget, "created"), permanent: true},
	}
	want := map[string][]string{} // event ids by subject
	storedAt := map[string]time.Time{}
	for i, tt := range tests {
		id := "e" + string(rune('a'+i))
		t.Run(tt.name, func(t *testing.T) {
			e := newEvent(id, tt.typ, tt.src, map[string]any{"n": i})
			meta := put(t, env, e, tt.headers)
			report := new(connector.Report)
			err := s.Write(connector.WithReport(connector.WithMeta(context.Background(), meta), report), e)
			if tt.permanent {
				require.Error(t, err)
				assert.True(t, connector.IsPermanent(err), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantStats, report.Stats())
			assert.Equal(t, tt.wantRules, report.RoutedTo())
			for _, subj := range tt.wantTo {
				want[subj] = append(want[subj], id)
			}
			storedAt[id] = meta.Timestamp
		})
	}
	for _, subj := range []string{created, paid, redrive} {
		assert.ElementsMatch(t, want[subj], ids(env.Messages(t, names.BusStream(bus), subj)), subj)
	}
	archive := names.ArchiveStream(archiveAccount, archiveID)
	assert.ElementsMatch(t, want[archived], ids(env.Messages(t, archive, archived)), "the archive")
	for id, h := range storedHeaders(t, env, archive, archived) {
		assert.Equal(t, stream.FormatStoredAt(storedAt[id]), h.Get(stream.HeaderStoredAt), "%s: when the bus stored it", id)
		at, err := stream.ParseStoredAt(h.Get(stream.HeaderStoredAt))
		require.NoError(t, err)
		assert.True(t, at.Equal(storedAt[id]), "nanoseconds kept")
		assert.Empty(t, h.Get(stream.HeaderReplay))
	}
	for id, h := range storedHeaders(t, env, names.BusStream(bus), created) {
		assert.Empty(t, h.Get(stream.HeaderStoredAt), "%s: only archive copies carry the stored time", id)
	}
}

// Archive copies are stored once per record however often it is written, like rules' copies.
func TestRouterArchiveCopiesAreDeduplicated(t *testing.T) {
	t.Parallel()
	env := archiveEnv(t)
	s := newRouter(t, env, archiveRules(t))
	e := newEvent("dup", "order.created", "shop/eu", nil)
	meta := put(t, env, e, nil)
	for attempt := uint64(1); attempt <= 3; attempt++ {
		meta.Attempt = attempt
		require.NoError(t, s.Write(connector.WithMeta(context.Background(), meta), e))
	}
	stored := env.Messages(t, names.ArchiveStream(archiveAccount, archiveID), names.ArchiveSubject(archiveAccount, archiveID))
	require.Len(t, stored, 1)
	assert.Equal(t, stream.HopMsgID(meta.ID(), "route", archiveID), stored[0].MsgID)
}

// Through a task, as the runtime runs the router: the record's headers reach it, and a replay to one target reaches
// that target's redrive subject of the bus the record was read from.
func TestRouterReplayThroughTask(t *testing.T) {
	t.Parallel()
	env := archiveEnv(t)
	r := startRouter(t, env, archiveRules(t)) // no eb.bus.id: the bus of the subject read
	put(t, env, newEvent("plain", "order.created", "shop/eu", nil), nil)
	put(t, env, newEvent("again", "order.created", "shop/eu", nil),
		map[string]string{stream.HeaderReplay: "rp1", stream.HeaderReplayTarget: "created.t9"})
	require.Eventually(t, func() bool { return r.task.Counters().Written == 2 }, 10*time.Second, 10*time.Millisecond)

	busStream := names.BusStream(bus)
	assert.Equal(t, []string{"plain"}, ids(env.Messages(t, busStream, names.RuleSubject(bus, "created"))))
	assert.Equal(t, []string{"again"}, ids(env.Messages(t, busStream, names.RedriveSubject(bus, "created", "t9"))))
	assert.Equal(t, []string{"plain"}, ids(env.Messages(t, names.ArchiveStream(archiveAccount, archiveID),
		names.ArchiveSubject(archiveAccount, archiveID))), "a replayed event is not archived again")
	n := r.task.Counters()
	assert.Equal(t, uint64(2), n.Matched)
	assert.Equal(t, uint64(2), n.Routed, "archive copies are not routed copies")
}

func TestArchiveRuleValidation(t *testing.T) {
	t.Parallel()
	rules := rulesJSON(t, router.Rule{ID: "a", Archive: true, Subject: names.ArchiveSubject("a1", "a"), Stream: "eb.ARCHIVE",
		Pattern: json.RawMessage(`{}`)})
	_, err := router.New(router.Plugin().FullSpec().Values(map[string]string{router.KeyRules: rules}), connector.Env{})
	var fe connector.FieldErrors
	require.ErrorAs(t, err, &fe)
	require.Len(t, fe, 1)
	assert.Contains(t, fe[0].Message, `stream "eb.ARCHIVE" is not a stream name`)
}
