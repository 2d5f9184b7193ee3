package replay_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/replay"
)

var names = stream.Names{Cluster: "eb"}

const (
	account   = "a1"
	archiveID = "arc"
	wait      = 20 * time.Second
	tick      = 20 * time.Millisecond
)

// base is when the bus stored the first archived event of the tests.
var base = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)

var busCount atomic.Int64

// harness is an archive and a bus on one server, with the offsets bucket of the replays.
type harness struct {
	env *jetstreamtest.Env
	kv  jetstream.KeyValue
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	require.NoError(t, names.EnsureArchiveStream(ctx, env.JS, account, archiveID, 0, 1))
	kv, err := env.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "replay_offsets"})
	require.NoError(t, err)
	return &harness{env: env, kv: kv}
}

// archived is one event the archive holds.
type archived struct {
	seq   uint64
	msgID string
	event *event.Event
}

// archive stores an archived copy of an event with id, as the router makes it: stored by the bus at storedAt
// (no stream.HeaderStoredAt when zero).
func (h *harness) archive(t *testing.T, id string, storedAt time.Time) archived {
	t.Helper()
	e := jetstreamtest.Event(id, "order.created", map[string]any{"id": id})
	e.SetExtension("tenant", "acme")
	m := stream.Encode(e)
	m.Subject = names.ArchiveSubject(account, archiveID)
	msgID := stream.HopMsgID(stream.PutMsgID(e.Source(), e.ID()), "route", archiveID)
	m.Header.Set(nats.MsgIdHdr, msgID)
	if !storedAt.IsZero() {
		m.Header.Set(stream.HeaderStoredAt, stream.FormatStoredAt(storedAt))
	}
	ack, err := h.env.JS.PublishMsg(context.Background(), m)
	require.NoError(t, err)
	return archived{seq: ack.Sequence, msgID: msgID, event: e}
}

// archiveMinutes archives events prefix-0..prefix-(n-1), stored by the bus a minute apart from base.
func (h *harness) archiveMinutes(t *testing.T, prefix string, n int) []archived {
	t.Helper()
	out := make([]archived, n)
	for i := range out {
		out[i] = h.archive(t, prefix+"-"+strconv.Itoa(i), base.Add(time.Duration(i)*time.Minute))
	}
	return out
}

// run is one replay connector: its bus, its config, and its current task.
type run struct {
	h    *harness
	bus  string
	name string // connector
	cfg  map[string]string
	task *delivery.SourceTask
}

// newRun configures a replay rp1 of the archive to a bus of its own; keys overrides the window, end sequence and
// the rest.
func (h *harness) newRun(t *testing.T, keys map[string]string) *run {
	t.Helper()
	bus := "b" + strconv.FormatInt(busCount.Add(1), 10)
	require.NoError(t, names.EnsureBusStream(context.Background(), h.env.JS, bus, time.Hour, -1, 1))
	cfg := map[string]string{
		connector.KeyClass:         replay.Name,
		connector.KeyOutputSubject: names.BusIn(bus),
		connector.KeyOutputStream:  names.BusStream(bus),
		replay.KeyName:             "rp1",
		replay.KeyArchiveStream:    names.ArchiveStream(account, archiveID),
		replay.KeyArchiveSubject:   names.ArchiveSubject(account, archiveID),
		replay.KeyStart:            base.Format(time.RFC3339),
		replay.KeyEnd:              base.Add(time.Hour).Format(time.RFC3339),
	}
	for k, v := range keys {
		cfg[k] = v
	}
	require.Empty(t, replay.Plugin().FullSpec().Validate(cfg), "a valid config")
	return &run{h: h, bus: bus, name: "eb.a1." + bus + ".replay.rp1", cfg: cfg}
}

// start starts a task of the replay with the offsets stored so far; it is stopped when the test ends.
func (r *run) start(t *testing.T) *delivery.SourceTask {
	t.Helper()
	ctx := context.Background()
	offsets, err := delivery.LoadOffsets(ctx, r.h.kv, r.name)
	require.NoError(t, err)
	spec := replay.Plugin().FullSpec()
	src, err := replay.New(spec.Values(r.cfg), connector.Env{JetStream: r.h.env.JS, Names: names, Connector: r.name,
		Tasks: 1, Offsets: offsets})
	require.NoError(t, err)
	task, err := delivery.StartSource(ctx, delivery.SourceTaskConfig{Source: src, JetStream: r.h.env.JS,
		Subject: names.BusIn(r.bus), Stream: names.BusStream(r.bus), Tolerance: connector.ToleranceNone, Offsets: offsets})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })
	r.task = task
	return task
}

// offset is the replay's stored offset (nil when none).
func (r *run) offset(t *testing.T) map[string]any {
	t.Helper()
	offsets, err := delivery.LoadOffsets(context.Background(), r.h.kv, r.name)
	require.NoError(t, err)
	off, _ := offsets.Offset(map[string]any{replay.PartitionArchive: names.ArchiveStream(account, archiveID)})
	return off
}

func (r *run) done(t *testing.T) bool {
	done, _ := r.offset(t)[replay.OffsetDone].(bool)
	return done
}

// onBus is one message the replay stored on its bus.
type onBus struct {
	event  *event.Event
	header nats.Header
}

func (r *run) onBus(t *testing.T) []onBus {
	t.Helper()
	ctx := context.Background()
	s, err := r.h.env.JS.Stream(ctx, names.BusStream(r.bus))
	require.NoError(t, err)
	var out []onBus
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out
		}
		require.NoError(t, err)
		require.Equal(t, names.BusIn(r.bus), m.Subject)
		e, err := stream.Decode(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
		require.NoError(t, err)
		out = append(out, onBus{event: e, header: m.Header})
	}
}

func idsOf(msgs []onBus) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.event.ID())
	}
	return out
}

func sequence(t *testing.T, v any) uint64 {
	t.Helper()
	n, err := rpc.SequenceOf(v)
	require.NoError(t, err)
	return n
}

// A replay puts back on the bus exactly the archived events the bus stored in its window, up to the end sequence,
// in order, each unchanged but for replayname, with the replay's headers and message id; then its offset says done.
func TestReplayWindow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	events := h.archiveMinutes(t, "e", 10)              // stored at base, base+1m, ... base+9m
	unstamped := h.archive(t, "unstamped", time.Time{}) // no stored time: the archive's own (now)
	endSeq := unstamped.seq
	h.archive(t, "late", base.Add(5*time.Minute)) // archived after the replay started: not replayed
	byID := map[string]archived{"unstamped": unstamped}
	raw, err := mustStream(t, h).GetMsg(context.Background(), unstamped.seq)
	require.NoError(t, err)
	unstampedAt := raw.Time
	for _, a := range events {
		byID[a.event.ID()] = a
	}
	now := time.Now().UTC()
	tests := []struct {
		name       string
		start, end time.Time
		keys       map[string]string
		want       []string
		wantLast   time.Time         // stored time of the last event replayed
		wantHeader map[string]string // besides eb-replay
	}{
		{name: "a window of stored times", start: base.Add(3 * time.Minute), end: base.Add(7 * time.Minute),
			want: []string{"e-3", "e-4", "e-5", "e-6"}, wantLast: base.Add(6 * time.Minute)},
		{name: "to some rules", start: base, end: base.Add(2 * time.Minute), keys: map[string]string{replay.KeyRules: "r1, r2"},
			want: []string{"e-0", "e-1"}, wantLast: base.Add(time.Minute), wantHeader: map[string]string{stream.HeaderReplayRules: "r1,r2"}},
		{name: "to one target", start: base.Add(9 * time.Minute), end: base.Add(10 * time.Minute),
			keys: map[string]string{replay.KeyTarget: "r1.t1"}, want: []string{"e-9"}, wantLast: base.Add(9 * time.Minute),
			wantHeader: map[string]string{stream.HeaderReplayTarget: "r1.t1"}},
		{name: "the archive's time when the stored time is absent", start: now.Add(-time.Hour), end: now.Add(time.Hour),
			want: []string{"unstamped"}, wantLast: unstampedAt},
		{name: "nothing in the window", start: base.Add(-time.Hour), end: base, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			keys := map[string]string{replay.KeyStart: tt.start.Format(time.RFC3339Nano), replay.KeyEnd: tt.end.Format(time.RFC3339Nano),
				replay.KeyEndSequence: strconv.FormatUint(endSeq, 10)}
			for k, v := range tt.keys {
				keys[k] = v
			}
			r := h.newRun(t, keys)
			task := r.start(t)
			require.Eventually(t, func() bool { return r.done(t) }, wait, tick, "the replay ends")

			got := r.onBus(t)
			assert.Equal(t, tt.want, idsOf(got))
			for _, m := range got {
				a := byID[m.event.ID()]
				assert.Equal(t, "rp1", m.event.Extensions()[replay.ExtReplayName])
				// The event is the archived one with replayname.
				assert.Equal(t, a.event.Source(), m.event.Source())
				assert.Equal(t, a.event.Type(), m.event.Type())
				assert.True(t, a.event.Time().Equal(m.event.Time()))
				assert.JSONEq(t, string(a.event.Data()), string(m.event.Data()))
				assert.Equal(t, "acme", m.event.Extensions()["tenant"])
				assert.Len(t, m.event.Extensions(), 2, "tenant and replayname")
				assert.Equal(t, "rp1", m.header.Get(stream.HeaderReplay))
				for _, k := range []string{stream.HeaderReplayRules, stream.HeaderReplayTarget} {
					assert.Equal(t, tt.wantHeader[k], m.header.Get(k), k)
				}
				assert.Equal(t, stream.HopMsgID(a.msgID, "replay", "rp1"), m.header.Get(nats.MsgIdHdr))
			}

			off := r.offset(t)
			assert.Equal(t, endSeq, sequence(t, off[replay.OffsetSequence]), "read up to the end sequence")
			assert.Equal(t, uint64(len(tt.want)), sequence(t, off[replay.OffsetReplayed]))
			if tt.wantLast.IsZero() {
				assert.NotContains(t, off, replay.OffsetLastStoredAt)
			} else {
				assert.Equal(t, stream.FormatStoredAt(tt.wantLast), off[replay.OffsetLastStoredAt])
			}
			state, trace := task.State()
			assert.Equal(t, rpc.StateRunning, state, "a done replay idles: %s", trace)
			assert.Equal(t, uint64(len(tt.want)), task.Counters().Written)
		})
	}
}

func mustStream(t *testing.T, h *harness) jetstream.Stream {
	t.Helper()
	s, err := h.env.JS.Stream(context.Background(), names.ArchiveStream(account, archiveID))
	require.NoError(t, err)
	return s
}

// Events are replayed no faster than replay.rate: N events at R per second take at least (N-R)/R seconds (the
// limiter may let up to a second's worth through at once).
func TestReplayPacing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const n, rate = 60, 20
	events := h.archiveMinutes(t, "p", n)
	r := h.newRun(t, map[string]string{replay.KeyRate: strconv.Itoa(rate),
		replay.KeyEndSequence: strconv.FormatUint(events[n-1].seq, 10)})
	began := time.Now()
	r.start(t)
	require.Eventually(t, func() bool { return r.done(t) }, wait, tick)
	took := time.Since(began)
	assert.Len(t, r.onBus(t), n)
	assert.GreaterOrEqual(t, took, time.Duration(n-rate)*time.Second/rate, "paced at %d events per second", rate)
}

// A replay stopped midway and resumed by another task from its stored offset neither misses nor repeats an
// event: the second task reads exactly the events the first did not store.
func TestReplayResumesFromItsOffset(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const n = 60
	events := h.archiveMinutes(t, "r", n)
	r := h.newRun(t, map[string]string{replay.KeyRate: "30", replay.KeyEndSequence: strconv.FormatUint(events[n-1].seq, 10)})
	first := r.start(t)
	require.Eventually(t, func() bool { return len(r.onBus(t)) >= 10 }, wait, tick)
	require.NoError(t, first.Stop(context.Background()))
	readFirst := first.Counters().Read
	require.Less(t, readFirst, uint64(n), "stopped midway")
	assert.Equal(t, readFirst, sequence(t, r.offset(t)[replay.OffsetReplayed]), "the offset counts what was stored")

	second := r.start(t)
	require.Eventually(t, func() bool { return r.done(t) }, wait, tick)
	want := make([]string, n)
	for i, a := range events {
		want[i] = a.event.ID()
	}
	assert.Equal(t, want, idsOf(r.onBus(t)), "every event once, in order")
	assert.Equal(t, uint64(n)-readFirst, second.Counters().Read, "the second task read what the first did not store")
	assert.Zero(t, second.Duplicates(), "and nothing the bus had already")
	assert.Equal(t, uint64(n), sequence(t, r.offset(t)[replay.OffsetReplayed]))

	// A task started after the replay is done replays nothing.
	require.NoError(t, second.Stop(context.Background()))
	third := r.start(t)
	time.Sleep(300 * time.Millisecond)
	assert.Zero(t, third.Counters().Read)
	assert.Len(t, r.onBus(t), n)
}

// The replay is done at once when the archive was empty when it started, and once everything is read when the
// archive's last sequence is below the end sequence (the archive was recreated).
func TestReplayDoneWithoutReachingTheEndSequence(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tests := []struct {
		name   string
		before int // events archived
		endSeq uint64
	}{
		{"empty archive", 0, 0},
		{"archive below the end sequence", 3, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before > 0 {
				h.archiveMinutes(t, "d", tt.before)
			}
			r := h.newRun(t, map[string]string{replay.KeyEndSequence: strconv.FormatUint(tt.endSeq, 10)})
			r.start(t)
			require.Eventually(t, func() bool { return r.done(t) }, wait, tick)
			assert.Len(t, r.onBus(t), tt.before)
			assert.Equal(t, uint64(tt.before), sequence(t, r.offset(t)[replay.OffsetReplayed]))
		})
	}
}

// A replay of an archive that does not exist fails its task.
func TestReplayOfAMissingArchiveFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.newRun(t, map[string]string{replay.KeyEndSequence: "5", replay.KeyArchiveStream: "eb_ARCHIVE_a1_gone"})
	task := r.start(t)
	require.Eventually(t, func() bool { s, _ := task.State(); return s == rpc.StateFailed }, wait, tick)
	_, trace := task.State()
	assert.Contains(t, trace, "eb_ARCHIVE_a1_gone")
}

func TestReplayConfig(t *testing.T) {
	t.Parallel()
	valid := map[string]string{
		connector.KeyClass: replay.Name, connector.KeyOutputSubject: "eb.bus.b1.in", connector.KeyOutputStream: "eb_BUS_b1",
		replay.KeyName: "rp-1.x", replay.KeyArchiveStream: "eb_ARCHIVE_a1_arc", replay.KeyArchiveSubject: "eb.archive.a1.arc",
		replay.KeyStart: "2026-01-01T00:00:00Z", replay.KeyEnd: "2026-01-02T00:00:00Z", replay.KeyEndSequence: "42",
	}
	tests := []struct {
		name    string
		change  map[string]string
		wantKey string // "" when valid
	}{
		{"valid", nil, ""},
		{"rules and target", map[string]string{replay.KeyRules: "r1,r2", replay.KeyTarget: "r1.t1"}, ""},
		{"name missing", map[string]string{replay.KeyName: ""}, replay.KeyName},
		{"name with a space", map[string]string{replay.KeyName: "my replay"}, replay.KeyName},
		{"stream with a dot", map[string]string{replay.KeyArchiveStream: "eb.ARCHIVE"}, replay.KeyArchiveStream},
		{"subject with a wildcard", map[string]string{replay.KeyArchiveSubject: "eb.archive.*"}, replay.KeyArchiveSubject},
		{"start not a time", map[string]string{replay.KeyStart: "yesterday"}, replay.KeyStart},
		{"end before start", map[string]string{replay.KeyEnd: "2025-12-31T00:00:00Z"}, replay.KeyEnd},
		{"end equal to start", map[string]string{replay.KeyEnd: "2026-01-01T00:00:00Z"}, replay.KeyEnd},
		{"end sequence negative", map[string]string{replay.KeyEndSequence: "-1"}, replay.KeyEndSequence},
		{"end sequence missing", map[string]string{replay.KeyEndSequence: ""}, replay.KeyEndSequence},
		{"rules with an empty id", map[string]string{replay.KeyRules: "r1,,r2"}, replay.KeyRules},
		{"target without a target", map[string]string{replay.KeyTarget: "r1"}, replay.KeyTarget},
		{"rate zero", map[string]string{replay.KeyRate: "0"}, replay.KeyRate},
	}
	spec := replay.Plugin().FullSpec()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := map[string]string{}
			for k, v := range valid {
				cfg[k] = v
			}
			for k, v := range tt.change {
				cfg[k] = v
			}
			errs := spec.Validate(cfg)
			var err error = errs
			if len(errs) == 0 {
				_, err = replay.New(spec.Values(cfg), connector.Env{})
			}
			if tt.wantKey == "" {
				assert.Empty(t, errs)
				require.NoError(t, err)
				return
			}
			var fe connector.FieldErrors
			require.ErrorAs(t, err, &fe, "%v", err)
			require.Len(t, fe, 1, "%v", fe)
			assert.Equal(t, tt.wantKey, fe[0].Key, fmt.Sprint(fe))
		})
	}
}
