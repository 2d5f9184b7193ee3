package schedule

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/connector/connectortest"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// fakeClock is a clock whose time only the test moves.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	changed chan struct{} // closed and replaced whenever now moves
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, changed: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) WaitUntil(ctx context.Context, t time.Time) error {
	for {
		c.mu.Lock()
		now, changed := c.now, c.changed
		c.mu.Unlock()
		if !now.Before(t) {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Set moves the clock to t.
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *fakeClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

const (
	outStream  = "SCHED_OUT"
	outSubject = "sched.bus.in"
	keyPeer    = "test.peer" // names the suite's peer in the config; not a key of the plugin
)

var suiteStart = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// clockPeer is the suite's peer: a fake clock that the source fires on, every minute from suiteStart, catching
// up with every missed firing. Emit advances the clock one minute per id and names that firing's event with the
// id (the suite identifies records by the ids it emits; a firing's own id is a hash of the connector and the
// time, see TestFiringEvent). A clock cannot fail: Stop and Start do nothing, and the source keeps firing.
type clockPeer struct {
	name  string
	clock *fakeClock

	mu  sync.Mutex
	ids map[time.Time]string
}

func (p *clockPeer) Config() map[string]string {
	return map[string]string{KeyExpression: "rate(1 minute)", KeyStart: suiteStart.Format(time.RFC3339),
		KeyCatchup: CatchupAll, keyPeer: p.name}
}

func (p *clockPeer) Emit(_ *testing.T, ids ...string) {
	for _, id := range ids {
		next := p.clock.Now().Add(time.Minute)
		p.mu.Lock()
		p.ids[next.UTC()] = id
		p.mu.Unlock()
		p.clock.Set(next)
	}
}

func (p *clockPeer) Stop()  {}
func (p *clockPeer) Start() {}

// named renames the events of a source's firings with the ids the peer emitted for them.
type named struct {
	connector.Source
	p *clockPeer
}

func (n named) Read(ctx context.Context) ([]connector.SourceRecord, error) {
	recs, err := n.Source.Read(ctx)
	n.p.mu.Lock()
	defer n.p.mu.Unlock()
	for _, r := range recs {
		if id, ok := n.p.ids[r.Event.Time().UTC()]; ok {
			r.Event.SetID(id)
		}
	}
	return recs, err
}

func TestSourceSuite(t *testing.T) {
	var (
		mu    sync.Mutex
		peers = map[string]*clockPeer{}
	)
	plugin := newPlugin(nil)
	plugin.NewSource = func(cfg connector.Values, env connector.Env) (connector.Source, error) {
		mu.Lock()
		p := peers[cfg.Raw()[keyPeer]]
		mu.Unlock()
		src, err := newSource(cfg, env, p.clock)
		if err != nil {
			return nil, err
		}
		return named{Source: src, p: p}, nil
	}
	connectortest.RunSourceSuite(t, connectortest.SourceSuite{
		Plugin: plugin,
		NewPeer: func(t *testing.T, _ *jetstreamtest.Env) connectortest.SourcePeer {
			p := &clockPeer{name: t.Name(), clock: newFakeClock(suiteStart), ids: map[time.Time]string{}}
			mu.Lock()
			peers[p.name] = p
			mu.Unlock()
			return p
		},
	})
}

// harness runs schedule sources through the real runtime: a source task storing on a bus stream of an embedded
// NATS server, its offsets in a KV bucket, on a fake clock.
type harness struct {
	env   *jetstreamtest.Env
	kv    jetstream.KeyValue
	clock *fakeClock
	cfg   map[string]string
	task  *delivery.SourceTask
}

func newHarness(t *testing.T, now time.Time, cfg map[string]string) *harness {
	env := jetstreamtest.Start(t)
	env.Stream(t, outStream, outSubject)
	kv, err := env.JS.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: "offsets"})
	require.NoError(t, err)
	full := map[string]string{connector.KeyClass: Name, connector.KeyOutputSubject: outSubject,
		connector.KeyOutputStream: outStream}
	for k, v := range cfg {
		full[k] = v
	}
	h := &harness{env: env, kv: kv, clock: newFakeClock(now), cfg: full}
	t.Cleanup(func() {
		if h.task != nil {
			_ = h.task.Stop(context.Background())
		}
	})
	return h
}

// start starts a task from the offsets stored so far.
func (h *harness) start(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	p := newPlugin(h.clock)
	spec := p.FullSpec()
	require.Empty(t, spec.Validate(h.cfg))
	offsets, err := delivery.LoadOffsets(ctx, h.kv, "eb.acc.bus.source.tick")
	require.NoError(t, err)
	src, err := p.NewSource(spec.Values(h.cfg), connector.Env{JetStream: h.env.JS, Connector: "eb.acc.bus.source.tick",
		Tasks: 1, Offsets: offsets})
	require.NoError(t, err)
	h.task, err = delivery.StartSource(ctx, delivery.SourceTaskConfig{Source: src, JetStream: h.env.JS,
		Subject: outSubject, Stream: outStream, Tolerance: connector.ToleranceNone, Offsets: offsets})
	require.NoError(t, err)
}

func (h *harness) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, h.task.Stop(context.Background()))
	h.task = nil
}

// fired returns the scheduled times of the stored events, in order, as RFC 3339 in UTC.
func (h *harness) fired(t *testing.T) []string {
	var out []string
	for _, m := range h.env.Messages(t, outStream, outSubject) {
		out = append(out, m.Event.Time().UTC().Format(time.RFC3339))
	}
	return out
}

// advanceTo moves the clock to at and waits until n events are stored.
func (h *harness) advanceTo(t *testing.T, at string, n int) {
	t.Helper()
	h.clock.Set(utc(at))
	require.Eventually(t, func() bool { return len(h.fired(t)) >= n }, 20*time.Second, 5*time.Millisecond,
		"%d events stored after the clock reached %s; have %v", n, at, h.fired(t))
}

// A rate and a cron source fire exactly the expected scheduled times across a task restart: the task stops, the
// clock passes several firings, a new task starts from the stored offset and catches up as configured, then
// fires on time.
func TestFiresExactlyAcrossRestart(t *testing.T) {
	t.Parallel()
	type step struct {
		at   string // the clock moves there
		want int    // events stored by then
	}
	type restartCase struct {
		name   string
		cfg    map[string]string
		now    string // the first task starts then
		before []step // while the first task runs
		down   string // the clock while no task runs
		after  []step // once the second task runs
		want   []string
	}
	var cases []restartCase
	rate := map[string]string{KeyExpression: "rate(5 minutes)"}
	cron := map[string]string{KeyExpression: "cron(0/15 * ? * MON-FRI *)", KeyTimezone: "Europe/Berlin"}
	for _, c := range []struct {
		catchup string
		wantMid []string // what the second task emits at once
	}{
		{"", []string{"2026-03-02T08:35:00Z"}},
		{CatchupLast, []string{"2026-03-02T08:35:00Z"}},
		{"true", []string{"2026-03-02T08:35:00Z"}},
		{CatchupAll, []string{"2026-03-02T08:20:00Z", "2026-03-02T08:25:00Z", "2026-03-02T08:30:00Z", "2026-03-02T08:35:00Z"}},
		{CatchupNone, nil},
		{"false", nil},
	} {
		cfg := map[string]string{KeyCatchup: c.catchup}
		for k, v := range rate {
			cfg[k] = v
		}
		// The rate counts from the first task's start (no schedule.start): 08:00.
		want := append([]string{"2026-03-02T08:05:00Z", "2026-03-02T08:10:00Z", "2026-03-02T08:15:00Z"}, c.wantMid...)
		cases = append(cases, restartCase{name: "rate catchup=" + c.catchup, cfg: cfg, now: "2026-03-02T08:00:00Z",
			before: []step{{"2026-03-02T08:05:00Z", 1}, {"2026-03-02T08:10:00Z", 2}, {"2026-03-02T08:15:00Z", 3}},
			down:   "2026-03-02T08:38:00Z",
			after:  []step{{"2026-03-02T08:40:00Z", len(want) + 1}, {"2026-03-02T08:45:00Z", len(want) + 2}},
			want:   append(want, "2026-03-02T08:40:00Z", "2026-03-02T08:45:00Z")})
	}
	// Cron: weekdays every 15 minutes in Berlin. The first task runs on Friday 2026-03-27 at 23:30 Berlin time
	// (22:30Z); no task runs over the weekend, which has no firings, and the worker returns on Monday 00:20 Berlin
	// (daylight-saving time since Sunday: 22:20Z), so the missed firing is Monday 00:15 Berlin, 22:15Z on Sunday.
	for _, c := range []struct {
		catchup string
		wantMid []string
	}{
		{"", []string{"2026-03-29T22:15:00Z"}},
		{CatchupAll, []string{"2026-03-29T22:00:00Z", "2026-03-29T22:15:00Z"}},
		{CatchupNone, nil},
	} {
		cfg := map[string]string{KeyCatchup: c.catchup}
		for k, v := range cron {
			cfg[k] = v
		}
		want := append([]string{"2026-03-27T22:45:00Z"}, c.wantMid...)
		cases = append(cases, restartCase{name: "cron catchup=" + c.catchup, cfg: cfg, now: "2026-03-27T22:30:00Z",
			before: []step{{"2026-03-27T22:45:00Z", 1}},
			down:   "2026-03-29T22:20:00Z",
			after:  []step{{"2026-03-29T22:30:00Z", len(want) + 1}},
			want:   append(want, "2026-03-29T22:30:00Z")})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, utc(c.now), c.cfg)
			h.start(t)
			for _, s := range c.before {
				h.advanceTo(t, s.at, s.want)
			}
			h.stop(t)
			h.clock.Set(utc(c.down))
			h.start(t)
			for _, s := range c.after {
				h.advanceTo(t, s.at, s.want)
			}
			require.NoError(t, h.task.Stop(context.Background()))
			h.task = nil
			assert.Equal(t, c.want, h.fired(t), "every firing once, missed ones as schedule.catchup says")
			offsets, err := delivery.LoadOffsets(context.Background(), h.kv, "eb.acc.bus.source.tick")
			require.NoError(t, err)
			off, ok := offsets.Offset(map[string]any{PartitionSchedule: "eb.acc.bus.source.tick"})
			require.True(t, ok)
			assert.Equal(t, c.want[len(c.want)-1], off[OffsetLastFired], "the offset is the last fired time")
		})
	}
}

// A firing is one CloudEvent: the scheduled time, a type and source naming the connector, an id that depends only
// on the connector and the time, and schedule.data as its JSON data. A second task that fires the same time again
// (a failover before the offset was stored) is stored once by the bus's duplicate window.
func TestFiringEvent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, utc("2026-05-01T09:59:00Z"), map[string]string{KeyExpression: "cron(0 10 * * ? *)",
		KeyData: `{"job": "report", "n": 1}`})
	h.start(t)
	h.advanceTo(t, "2026-05-01T10:00:30Z", 1)
	msgs := h.env.Messages(t, outStream, outSubject)
	require.Len(t, msgs, 1)
	e := msgs[0].Event
	assert.Equal(t, EventType, e.Type())
	assert.Equal(t, SourcePrefix+"eb.acc.bus.source.tick", e.Source())
	assert.True(t, utc("2026-05-01T10:00:00Z").Equal(e.Time()), "time is the scheduled time, not now: %v", e.Time())
	assert.Equal(t, EventID("eb.acc.bus.source.tick", utc("2026-05-01T10:00:00Z")), e.ID())
	assert.Equal(t, event.ApplicationJSON, e.DataContentType())
	assert.JSONEq(t, `{"job": "report", "n": 1}`, string(e.Data()))
	assert.Equal(t, msgs[0].MsgID, stream.PutMsgID(e.Source(), e.ID()))

	assert.Equal(t, e.ID(), EventID("eb.acc.bus.source.tick", utc("2026-05-01T12:00:00+02:00")),
		"the id depends on the instant, not on how it is written")
	assert.NotEqual(t, e.ID(), EventID("eb.acc.bus.source.other", utc("2026-05-01T10:00:00Z")))
	assert.NotEqual(t, e.ID(), EventID("eb.acc.bus.source.tick", utc("2026-05-02T10:00:00Z")))

	// A task that did not see the stored offset fires 10:00 again: the bus keeps one copy.
	h.stop(t)
	require.NoError(t, h.kv.Purge(context.Background(), mustOffsetKey(t, h)))
	h.clock.Set(utc("2026-05-01T10:00:40Z"))
	h.cfg[KeyStart] = "2026-05-01T09:59:00Z"
	h.start(t)
	require.Eventually(t, func() bool { return h.task.Counters().Written >= 1 }, 20*time.Second, 5*time.Millisecond)
	assert.Equal(t, []string{"2026-05-01T10:00:00Z"}, h.fired(t), "stored once")
}

// mustOffsetKey returns the KV key of the harness's only stored offset.
func mustOffsetKey(t *testing.T, h *harness) string {
	keys, err := h.kv.Keys(context.Background())
	require.NoError(t, err)
	require.Len(t, keys, 1)
	return keys[0]
}

// Tasks other than 0 never fire.
func TestOnlyTaskZeroFires(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(suiteStart)
	p := newPlugin(clock)
	cfg := map[string]string{connector.KeyClass: Name, KeyExpression: "rate(1 minute)"}
	src, err := p.NewSource(p.FullSpec().Values(cfg), connector.Env{Connector: "c", Task: 1, Tasks: 2})
	require.NoError(t, err)
	require.NoError(t, src.Connect(context.Background()))
	clock.Advance(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	recs, err := src.Read(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, recs)

	src0, err := p.NewSource(p.FullSpec().Values(cfg), connector.Env{Connector: "c", Task: 0, Tasks: 2})
	require.NoError(t, err)
	require.NoError(t, src0.Connect(context.Background()))
	clock.Advance(time.Minute)
	recs, err = src0.Read(context.Background())
	require.NoError(t, err)
	assert.Len(t, recs, 1)
}

// A bad config is refused through the runtime's validation, each problem naming its key.
func TestConfigProblems(t *testing.T) {
	t.Parallel()
	reg := connector.NewRegistry()
	require.NoError(t, reg.Register(Plugin()))
	base := func(kv ...string) map[string]string {
		cfg := map[string]string{connector.KeyClass: Name, connector.KeyOutputSubject: "x.bus.b.in",
			connector.KeyOutputStream: "X_BUS_b", KeyExpression: "rate(5 minutes)"}
		for i := 0; i+1 < len(kv); i += 2 {
			cfg[kv[i]] = kv[i+1]
		}
		return cfg
	}
	cases := []struct {
		name string
		cfg  map[string]string
		key  string
		want string
	}{
		{"no expression", base(KeyExpression, ""), KeyExpression, "is required"},
		{"both days", base(KeyExpression, "cron(0 12 * * * *)"), KeyExpression,
			"cron(0 12 * * * *): day-of-month and day-of-week cannot both be specified; use ? in one"},
		{"plural for 1", base(KeyExpression, "rate(1 minutes)"), KeyExpression, "rate(1 minute)"},
		{"unknown zone", base(KeyTimezone, "Europe/Atlantis"), KeyTimezone, `"Europe/Atlantis" is not an IANA time zone name`},
		{"Local zone", base(KeyTimezone, "Local"), KeyTimezone, "not an IANA time zone name"},
		{"catchup", base(KeyCatchup, "some"), KeyCatchup, `"some" is not one of last, all, none, true, false`},
		{"data", base(KeyData, "{nope"), KeyData, "is not valid JSON"},
		{"start", base(KeyStart, "yesterday"), KeyStart, `"yesterday" is not an RFC 3339 time`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, errs := reg.Validate(c.cfg, connector.Env{})
			require.Len(t, errs, 1, "%v", errs)
			assert.Equal(t, c.key, errs[0].Key)
			assert.Contains(t, errs[0].Message, c.want)
		})
	}
	_, errs := reg.Validate(base(KeyTimezone, "Europe/Berlin", KeyCatchup, "false", KeyData, `{"a": [1]}`,
		KeyStart, "2026-01-01T00:00:00+01:00", KeyExpression, "cron(0 0 ? * 6L *)"), connector.Env{})
	assert.Empty(t, errs)
}

// A stored offset that is not a time fails the task rather than firing from an unknown point.
func TestBadStoredOffset(t *testing.T) {
	t.Parallel()
	p := newPlugin(newFakeClock(suiteStart))
	cfg := map[string]string{connector.KeyClass: Name, KeyExpression: "rate(1 minute)"}
	src, err := p.NewSource(p.FullSpec().Values(cfg), connector.Env{Connector: "c",
		Offsets: fixedOffsets{OffsetLastFired: "soon"}})
	require.NoError(t, err)
	err = src.Connect(context.Background())
	require.Error(t, err)
	assert.True(t, connector.IsPermanent(err))
	assert.Contains(t, err.Error(), "soon")
}

type fixedOffsets map[string]any

func (f fixedOffsets) Offset(map[string]any) (map[string]any, bool) { return f, true }
