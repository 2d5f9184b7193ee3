package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/router"
)

var typesSubject = names.EventTypesSubject(bus)

// t0 is when the tests' events were stored, give or take a few seconds.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// typesEnv is a bus and the event-types stream.
func typesEnv(t *testing.T) *jetstreamtest.Env {
	t.Helper()
	env := busEnv(t)
	require.NoError(t, names.EnsureEventTypesStream(context.Background(), env.JS, 1))
	return env
}

// newReportingRouter is a router that reports its event types every interval (none when interval is 0), with the
// rules given, connected; the test closes it, or its cleanup does.
func newReportingRouter(t *testing.T, env *jetstreamtest.Env, interval time.Duration, log *slog.Logger, rules ...router.Rule) connector.Sink {
	t.Helper()
	cfg := map[string]string{router.KeyRules: rulesJSON(t, rules...)}
	if interval > 0 {
		cfg[router.KeyEventTypesSubject] = typesSubject
		cfg[router.KeyEventTypesInterval] = fmt.Sprint(interval.Milliseconds())
		cfg[router.KeyBusID] = bus
	}
	require.Empty(t, router.Plugin().Spec.Validate(cfg))
	s, err := router.New(router.Plugin().FullSpec().Values(cfg), connector.Env{JetStream: env.JS, Names: names, Logger: log})
	require.NoError(t, err)
	require.NoError(t, s.Connect(context.Background()))
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { _ = s.Close() }) })
	return closeOnce{Sink: s, once: &once}
}

// closeOnce lets a test close the router before its cleanup would.
type closeOnce struct {
	connector.Sink
	once *sync.Once
}

func (c closeOnce) Close() error {
	var err error
	c.once.Do(func() { err = c.Sink.Close() })
	return err
}

// writeAt stores e on the bus and has s write it as its task would, as if it had been stored at.
func writeAt(t *testing.T, env *jetstreamtest.Env, s connector.Sink, e *event.Event, at time.Time) error {
	t.Helper()
	in := names.BusIn(bus)
	meta := connector.Meta{Stream: names.BusStream(bus), Subject: in, Sequence: env.Publish(t, in, e), Attempt: 1,
		Timestamp: at, MsgID: stream.PutMsgID(e.Source(), e.ID())}
	return s.Write(connector.WithMeta(context.Background(), meta), e)
}

// typedEvent is an event of source and typ whose data is data, of datacontenttype contentType.
func typedEvent(t *testing.T, id, source, typ, contentType string, data []byte) *event.Event {
	t.Helper()
	e := event.New()
	e.SetID(id)
	e.SetSource(source)
	e.SetType(typ)
	if contentType != "" {
		e.SetDataContentType(contentType)
	}
	e.DataEncoded = data
	return &e
}

// reports returns the reports stored on the event-types stream, in order, checking that each message is at most
// router.ReportMaxBytes and names the bus.
func reports(t *testing.T, js jetstream.JetStream) []stream.EventTypesReport {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, names.EventTypesStream())
	require.NoError(t, err)
	var out []stream.EventTypesReport
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			require.ErrorIs(t, err, jetstream.ErrMsgNotFound)
			return out
		}
		require.Equal(t, typesSubject, m.Subject)
		assert.LessOrEqual(t, len(m.Data), router.ReportMaxBytes)
		r, err := stream.DecodeEventTypesReport(m.Data)
		require.NoError(t, err)
		assert.Equal(t, bus, r.BusID)
		for _, o := range r.Types {
			assert.LessOrEqual(t, len(o.Samples), stream.EventTypeSamples, "%s %s", o.Source, o.Type)
		}
		out = append(out, r)
	}
}

// merged adds up reports, as the control plane does: per "source type", counts add up, first and last seen
// widen, samples are appended.
func merged(rs []stream.EventTypesReport) (types map[string]stream.ObservedType, dropped int64) {
	types = map[string]stream.ObservedType{}
	for _, r := range rs {
		dropped += r.Dropped
		for _, o := range r.Types {
			k := o.Source + " " + o.Type
			m, ok := types[k]
			if !ok {
				types[k] = o
				continue
			}
			m.Count += o.Count
			if o.FirstSeen.Before(m.FirstSeen) {
				m.FirstSeen = o.FirstSeen
			}
			if o.LastSeen.After(m.LastSeen) {
				m.LastSeen = o.LastSeen
			}
			m.Samples = append(m.Samples, o.Samples...)
			types[k] = m
		}
	}
	return types, dropped
}

func samplesOf(o stream.ObservedType) []string {
	out := []string{}
	for _, s := range o.Samples {
		out = append(out, string(s))
	}
	return out
}

// traffic writes, through s, 12 events of (shop, order.created) with JSON data (two of a +json type), 2 of (iot,
// reading) with JSON data and no content type and 1 of them with JSON data over the sample limit, and 2 of (crm,
// note) whose text/plain data happen to be JSON. Events are not written in the order they were stored. It returns
// the data of the first 10 order.created written and the 2 small readings.
func traffic(t *testing.T, env *jetstreamtest.Env, s connector.Sink) (orders, readings []string) {
	t.Helper()
	for i, sec := range []int{5, 0, 1, 2, 3, 4, 6, 7, 8, 9, 11, 10} {
		ct := "application/json"
		if i%6 == 5 {
			ct = "application/vnd.shop+json; charset=utf-8"
		}
		data := fmt.Sprintf(`{"order":%d}`, i)
		require.NoError(t, writeAt(t, env, s, typedEvent(t, fmt.Sprint("o", i), "shop", "order.created", ct, []byte(data)),
			t0.Add(time.Duration(sec)*time.Second)))
		if len(orders) < stream.EventTypeSamples {
			orders = append(orders, data)
		}
	}
	big := fmt.Sprintf(`{"blob":%q}`, strings.Repeat("x", stream.EventTypeSampleMaxBytes))
	for i, data := range []string{`{"v":1}`, big, `{"v":2}`} {
		require.NoError(t, writeAt(t, env, s, typedEvent(t, fmt.Sprint("r", i), "iot", "reading", "", []byte(data)),
			t0.Add(time.Duration(20+i)*time.Second)))
	}
	for i := range 2 {
		require.NoError(t, writeAt(t, env, s, typedEvent(t, fmt.Sprint("n", i), "crm", "note", "text/plain", []byte(`{"n":1}`)),
			t0.Add(30*time.Second)))
	}
	return orders, []string{`{"v":1}`, `{"v":2}`}
}

// The router reports every interval what it routed: counts, first and last seen, samples of JSON data only, of at
// most the sample size; nothing for an interval without events.
func TestRouterReportsEventTypes(t *testing.T) {
	t.Parallel()
	env := typesEnv(t)
	s := newReportingRouter(t, env, 100*time.Millisecond, nil,
		router.Rule{ID: "orders", Subject: names.RuleSubject(bus, "orders"), Pattern: json.RawMessage(`{"type": ["order.created"]}`)})

	time.Sleep(500 * time.Millisecond)
	assert.Empty(t, reports(t, env.JS), "nothing routed, nothing reported")

	orders, readings := traffic(t, env, s)
	var rs []stream.EventTypesReport
	require.Eventually(t, func() bool {
		rs = reports(t, env.JS)
		types, _ := merged(rs)
		return types["shop order.created"].Count == 12 && types["iot reading"].Count == 3 && types["crm note"].Count == 2
	}, 10*time.Second, 10*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	assert.Equal(t, rs, reports(t, env.JS), "nothing routed since, nothing reported")

	types, dropped := merged(rs)
	assert.Zero(t, dropped)
	require.Len(t, types, 3)
	o := types["shop order.created"]
	assert.Equal(t, t0, o.FirstSeen.UTC())
	assert.Equal(t, t0.Add(11*time.Second), o.LastSeen.UTC())
	// The events of one interval have at most 10 samples (reports checks); the events may straddle two intervals.
	assert.Subset(t, append(orders, `{"order":10}`, `{"order":11}`), samplesOf(o))
	assert.GreaterOrEqual(t, len(o.Samples), stream.EventTypeSamples)
	r := types["iot reading"]
	assert.Equal(t, t0.Add(20*time.Second), r.FirstSeen.UTC())
	assert.Equal(t, t0.Add(22*time.Second), r.LastSeen.UTC())
	assert.Equal(t, readings, samplesOf(r), "no content type is JSON; data over the sample size is counted, not sampled")
	n := types["crm note"]
	assert.Equal(t, t0.Add(30*time.Second), n.FirstSeen.UTC())
	assert.Equal(t, t0.Add(30*time.Second), n.LastSeen.UTC())
	assert.Empty(t, n.Samples, "text/plain data is not sampled, even when it reads as JSON")
}

// Close publishes what was counted since the last report; a Write that failed is not counted, and the same
// record written again once it succeeds is counted once.
func TestRouterCloseReportsTheRest(t *testing.T) {
	t.Parallel()
	env := typesEnv(t)
	s := newReportingRouter(t, env, time.Hour, nil,
		// Nothing stores this subject until the test adds it to the bus's stream: the copies fail.
		router.Rule{ID: "lost", Subject: "nowhere.lost", Pattern: json.RawMessage(`{"type": ["order.lost"]}`)})

	orders, readings := traffic(t, env, s)
	lost := typedEvent(t, "l1", "shop", "order.lost", "application/json", []byte(`{"lost":1}`))
	in := names.BusIn(bus)
	meta := connector.Meta{Stream: names.BusStream(bus), Subject: in, Sequence: env.Publish(t, in, lost), Attempt: 1,
		Timestamp: t0.Add(40 * time.Second), MsgID: stream.PutMsgID(lost.Source(), lost.ID())}
	require.Error(t, s.Write(connector.WithMeta(context.Background(), meta), lost))
	require.Error(t, s.Write(connector.WithMeta(context.Background(), meta), lost))

	time.Sleep(300 * time.Millisecond)
	assert.Empty(t, reports(t, env.JS), "the interval has not passed")
	require.NoError(t, s.Close())
	rs := reports(t, env.JS)
	require.Len(t, rs, 1, "Close publishes one last report")
	types, dropped := merged(rs)
	assert.Zero(t, dropped)
	assert.NotContains(t, types, "shop order.lost", "a failed Write is not counted")
	assert.Equal(t, int64(12), types["shop order.created"].Count)
	assert.Equal(t, orders, samplesOf(types["shop order.created"]), "the first 10 of the report, in order")
	assert.Equal(t, readings, samplesOf(types["iot reading"]))
	assert.Equal(t, int64(3), types["iot reading"].Count)
	assert.Equal(t, int64(2), types["crm note"].Count)
	assert.Empty(t, types["crm note"].Samples)

	// The record written again once its copy can be stored counts once.
	s = newReportingRouter(t, env, time.Hour, nil,
		router.Rule{ID: "lost", Subject: "nowhere.lost", Pattern: json.RawMessage(`{"type": ["order.lost"]}`)})
	require.Error(t, s.Write(connector.WithMeta(context.Background(), meta), lost))
	addSubject(t, env, names.BusStream(bus), "nowhere.lost")
	meta.Attempt = 2
	require.NoError(t, s.Write(connector.WithMeta(context.Background(), meta), lost))
	require.NoError(t, s.Close())
	rs = reports(t, env.JS)
	require.Len(t, rs, 2)
	assert.Equal(t, []stream.ObservedType{{Source: "shop", Type: "order.lost", Count: 1,
		FirstSeen: t0.Add(40 * time.Second), LastSeen: t0.Add(40 * time.Second), Samples: []json.RawMessage{json.RawMessage(`{"lost":1}`)}}},
		utc(rs[1].Types))
}

// utc returns types with their times in UTC, for comparisons.
func utc(types []stream.ObservedType) []stream.ObservedType {
	for i := range types {
		types[i].FirstSeen, types[i].LastSeen = types[i].FirstSeen.UTC(), types[i].LastSeen.UTC()
	}
	return types
}

// addSubject adds subject to the stream's subjects.
func addSubject(t *testing.T, env *jetstreamtest.Env, name, subject string) {
	t.Helper()
	ctx := context.Background()
	st, err := env.JS.Stream(ctx, name)
	require.NoError(t, err)
	cfg := st.CachedInfo().Config
	cfg.Subjects = append(cfg.Subjects, subject)
	_, err = env.JS.UpdateStream(ctx, cfg)
	require.NoError(t, err)
}

// A router without router.eventtypes.subject reports nothing, not even when it closes.
func TestRouterWithoutSubjectReportsNothing(t *testing.T) {
	t.Parallel()
	env := typesEnv(t)
	s := newReportingRouter(t, env, 0, nil)
	traffic(t, env, s)
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, s.Close())
	st, err := env.JS.Stream(context.Background(), names.EventTypesStream())
	require.NoError(t, err)
	info, err := st.Info(context.Background())
	require.NoError(t, err)
	assert.Zero(t, info.State.Msgs)
}

// One report holds at most stream.EventTypesPerReport types; the events of further types are counted in Dropped.
// A report larger than router.ReportMaxBytes is published in several messages (reports checks their size).
func TestRouterReportBounds(t *testing.T) {
	t.Parallel()
	env := typesEnv(t)
	s := newReportingRouter(t, env, time.Hour, nil)
	in := names.BusIn(bus)
	ctx := context.Background()
	for i := range stream.EventTypesPerReport + 1 {
		// The router has no rule: it publishes nothing, and the record need not be on the bus.
		e := typedEvent(t, fmt.Sprint("e", i), "src", fmt.Sprintf("type.%05d", i), "application/json",
			[]byte(fmt.Sprintf(`{"i":%d}`, i)))
		meta := connector.Meta{Stream: names.BusStream(bus), Subject: in, Sequence: uint64(i + 1), Attempt: 1,
			Timestamp: t0, MsgID: stream.PutMsgID(e.Source(), e.ID())}
		require.NoError(t, s.Write(connector.WithMeta(ctx, meta), e))
	}
	require.NoError(t, s.Close())
	rs := reports(t, env.JS)
	assert.Greater(t, len(rs), 1, "10,000 types with a sample each take more than one message")
	types, dropped := merged(rs)
	assert.Len(t, types, stream.EventTypesPerReport)
	assert.Equal(t, int64(1), dropped)
	assert.Equal(t, int64(1), rs[0].Dropped, "the first message carries Dropped")
	assert.NotContains(t, types, fmt.Sprintf("src type.%05d", stream.EventTypesPerReport), "the last type came too late")
	for _, o := range types {
		require.Equal(t, int64(1), o.Count)
		require.Len(t, o.Samples, 1)
	}
}

// syncBuffer is an io.Writer safe for concurrent use, for a logger's output.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A report that could not be published is not lost: its counts go with the next report.
func TestRouterKeepsWhatItCouldNotReport(t *testing.T) {
	t.Parallel()
	env := busEnv(t) // no event-types stream yet: the reports find none
	logs := &syncBuffer{}
	s := newReportingRouter(t, env, 100*time.Millisecond, slog.New(slog.NewTextHandler(logs, nil)))
	for i := range 3 {
		require.NoError(t, writeAt(t, env, s, typedEvent(t, fmt.Sprint("a", i), "shop", "order.created", "",
			[]byte(fmt.Sprintf(`{"a":%d}`, i))), t0.Add(time.Duration(i)*time.Second)))
	}
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "publishing the router's report failed") },
		10*time.Second, 10*time.Millisecond)
	require.NoError(t, writeAt(t, env, s, typedEvent(t, "b", "shop", "order.created", "", []byte(`{"b":1}`)),
		t0.Add(-time.Second)))

	require.NoError(t, names.EnsureEventTypesStream(context.Background(), env.JS, 1))
	var types map[string]stream.ObservedType
	require.Eventually(t, func() bool {
		types, _ = merged(reports(t, env.JS))
		return types["shop order.created"].Count >= 4
	}, 10*time.Second, 10*time.Millisecond)
	o := types["shop order.created"]
	assert.Equal(t, int64(4), o.Count)
	assert.Equal(t, t0.Add(-time.Second), o.FirstSeen.UTC())
	assert.Equal(t, t0.Add(2*time.Second), o.LastSeen.UTC())
	assert.ElementsMatch(t, []string{`{"a":0}`, `{"a":1}`, `{"a":2}`, `{"b":1}`}, samplesOf(o))
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "reports are published again") },
		10*time.Second, 10*time.Millisecond)
	assert.Equal(t, 1, strings.Count(logs.String(), "publishing the router's report failed"),
		"a failure is logged once, not every interval")
}

// The keys of the event-types report are validated with the config.
func TestEventTypesConfigValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  map[string]string
		want []string // keys with a problem
	}{
		{"absent", map[string]string{}, nil},
		{"subject and interval", map[string]string{router.KeyEventTypesSubject: typesSubject, router.KeyEventTypesInterval: "100"}, nil},
		{"wildcard subject", map[string]string{router.KeyEventTypesSubject: "eb.eventtypes.*"}, []string{router.KeyEventTypesSubject}},
		{"interval too short", map[string]string{router.KeyEventTypesSubject: typesSubject, router.KeyEventTypesInterval: "99"},
			[]string{router.KeyEventTypesInterval}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var keys []string
			for _, e := range router.Plugin().Spec.Validate(tt.cfg) {
				keys = append(keys, e.Key)
			}
			assert.Equal(t, tt.want, keys)
		})
	}
}

// The events of a record batch routed with a connector.Batch are counted once their copies are stored: a flush that
// fails counts nothing, so the events routed again one at a time are counted once.
func TestEventTypesOfABatchAreCountedOnceStored(t *testing.T) {
	t.Parallel()
	env := typesEnv(t)
	s := newReportingRouter(t, env, time.Hour, nil,
		router.Rule{ID: "late", Subject: "late.copies", Stream: "LATE", Pattern: json.RawMessage(`{"source": ["shop"]}`)})
	events := []*event.Event{typedEvent(t, "b0", "shop", "order.created", "", nil), typedEvent(t, "b1", "shop", "order.paid", "", nil)}
	write := func(b *connector.Batch) {
		for i, e := range events {
			ctx := connector.WithMeta(context.Background(), connector.Meta{Stream: names.BusStream(bus), Subject: names.BusIn(bus),
				Sequence: 1, Attempt: 1, Index: i, Timestamp: t0, MsgID: stream.PutMsgID(e.Source(), e.ID())})
			if b != nil {
				ctx = connector.WithBatch(ctx, b)
			}
			require.NoError(t, s.Write(ctx, e))
		}
	}
	var b connector.Batch
	write(&b)
	require.Error(t, b.Flush(context.Background()), "the stream of rule late does not exist")
	env.Stream(t, "LATE", "late.>")
	write(nil) // routed again one at a time, as the task does after a failed flush
	require.NoError(t, s.Close())
	types, _ := merged(reports(t, env.JS))
	require.Len(t, types, 2)
	for k, o := range types {
		assert.EqualValues(t, 1, o.Count, k)
	}
}
