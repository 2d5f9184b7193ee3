package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/pattern"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/router"
)

// The bus log of the tests: account a1, the bus b1; the router's connector name.
const (
	account    = "a1"
	routerName = "eb.a1.b1.router"
)

var logSubject = names.LogSubject(account, bus)

// quiet is how long a test waits after the last record it expects for records it does not expect: the router
// publishes its records before Write returns, so they are stored within milliseconds.
const quiet = 300 * time.Millisecond

// logEnv is a bus and its account's bus-log stream.
func logEnv(t testing.TB) *jetstreamtest.Env {
	t.Helper()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	require.NoError(t, names.EnsureBusStream(ctx, env.JS, bus, time.Hour, -1, 1))
	require.NoError(t, names.EnsureLogStream(ctx, env.JS, account, 1, stream.LogLimits{}))
	return env
}

// newLoggingRouter is a router whose config sets the bus log at level with detail (no topic when level is "").
func newLoggingRouter(t testing.TB, env *jetstreamtest.Env, rules []router.Rule, level, detail string) connector.Sink {
	t.Helper()
	b, err := json.Marshal(rules)
	require.NoError(t, err)
	cfg := map[string]string{router.KeyRules: string(b)}
	if level != "" {
		cfg[connector.KeyLogTopic], cfg[connector.KeyLogLevel], cfg[connector.KeyLogDetail] = logSubject, level, detail
	}
	s, err := router.New(router.Plugin().FullSpec().Values(cfg), connector.Env{JetStream: env.JS, Names: names, Connector: routerName})
	require.NoError(t, err)
	return s
}

// logRecords returns the records of the bus log, in order.
func logRecords(t testing.TB, js jetstream.JetStream) []stream.LogRecord {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, names.LogStream(account))
	require.NoError(t, err)
	var out []stream.LogRecord
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			return out
		}
		require.Equal(t, logSubject, m.Subject)
		r, err := stream.DecodeLogRecord(m.Data)
		require.NoError(t, err)
		out = append(out, r)
	}
}

// waitRecords waits for n records, then for quiet, and returns every record.
func waitRecords(t *testing.T, js jetstream.JetStream, n int) []stream.LogRecord {
	t.Helper()
	require.Eventually(t, func() bool { return len(logRecords(t, js)) >= n }, 10*time.Second, 10*time.Millisecond)
	time.Sleep(quiet)
	return logRecords(t, js)
}

// write stores e on the bus and has s write it, as its task would.
func write(t testing.TB, env *jetstreamtest.Env, s connector.Sink, e *event.Event) connector.Meta {
	t.Helper()
	in := names.BusIn(bus)
	meta := connector.Meta{Stream: names.BusStream(bus), Subject: in, Sequence: env.Publish(t, in, e), Attempt: 1,
		Timestamp: time.Now().Add(-time.Second).UTC(), MsgID: stream.PutMsgID(e.Source(), e.ID())}
	require.NoError(t, s.Write(connector.WithMeta(context.Background(), meta), e))
	return meta
}

// manyRules is a table of n rules: rule i has id r<i>, matches the type t.<i>, and is named rule-<7i mod n>, so
// that the order of names is neither that of the table nor that of the ids.
func manyRules(n int) []router.Rule {
	rules := make([]router.Rule, n)
	for i := range rules {
		id := fmt.Sprintf("r%03d", i)
		rules[i] = router.Rule{ID: id, Name: fmt.Sprintf("rule-%03d", (i*7)%n), Subject: names.RuleSubject(bus, id),
			Pattern: json.RawMessage(fmt.Sprintf(`{"type": ["t.%d"]}`, i))}
	}
	return rules
}

func recordTypes(rs []stream.LogRecord) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Type)
	}
	return out
}

// An event matched by one rule of 300: what the router writes at each level and detail.
func TestRouterWritesBusLog(t *testing.T) {
	t.Parallel()
	rules := manyRules(300)
	const hit = 215 // named rule-005: among the first names, so TRACE lists the rules around it
	matchedName := rules[hit].Name
	require.Equal(t, "rule-005", matchedName)
	// The rules TRACE explains: the first 20 names but the matched rule's.
	var unmatched []string
	for _, r := range rules {
		if r.Name != matchedName {
			unmatched = append(unmatched, r.Name)
		}
	}
	slices.Sort(unmatched)
	tests := []struct {
		name, level, detail string
		typ                 string // of the event
		want                []string
	}{
		{"INFO", stream.LogInfo, stream.LogDetailNone, "t.215",
			[]string{stream.LogEventReceipt, stream.LogRuleMatch}},
		{"INFO, no rule matches", stream.LogInfo, stream.LogDetailFull, "nothing",
			[]string{stream.LogEventReceipt, stream.LogNoRulesMatched}},
		{"TRACE, FULL", stream.LogTrace, stream.LogDetailFull, "t.215",
			append(append([]string{stream.LogEventReceipt, stream.LogRuleMatch}, repeat(stream.LogRuleNoMatch, 20)...),
				stream.LogRuleNoMatchOmitted)},
		{"ERROR: no record of a success", stream.LogError, stream.LogDetailFull, "t.215", []string{}},
		{"OFF", stream.LogOff, stream.LogDetailFull, "t.215", []string{}},
		{"no topic", "", "", "t.215", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := logEnv(t)
			s := newLoggingRouter(t, env, rules, tt.level, tt.detail)
			e := newEvent("e1", tt.typ, "shop/eu", map[string]any{"size": "big"})
			meta := write(t, env, s, e)
			got := waitRecords(t, env.JS, len(tt.want))
			require.Equal(t, tt.want, recordTypes(got))
			if len(got) == 0 {
				return
			}
			for i, r := range got {
				assert.Equal(t, stream.LogLevelOf(r.Type), r.Level, "record %d", i)
				assert.Equal(t, "e1", r.EventID)
				assert.Equal(t, "shop/eu", r.EventSource)
				assert.Equal(t, tt.typ, r.EventType)
				assert.Equal(t, meta.Sequence, r.Sequence)
				assert.True(t, meta.Timestamp.Equal(r.StoredAt), "stored at %s, not %s", meta.Timestamp, r.StoredAt)
				assert.Equal(t, routerName, r.Connector)
				assert.Zero(t, r.Attempt, "the router's records are not about attempts")
			}
			receipt := got[0]
			if tt.detail == stream.LogDetailFull {
				var ev map[string]any
				require.NoError(t, json.Unmarshal(receipt.Event, &ev), "the event in its JSON form")
				assert.Equal(t, "e1", ev["id"])
				assert.Equal(t, map[string]any{"size": "big"}, ev["data"])
			} else {
				assert.Empty(t, receipt.Event, "the event only with FULL")
			}
			for _, r := range got[1:] {
				assert.Empty(t, r.Event, "only the receipt carries the event")
			}
			if tt.typ == "nothing" {
				return
			}
			assert.Equal(t, matchedName, got[1].Rule, "the rule's name")
			if tt.level != stream.LogTrace {
				return
			}
			for i, r := range got[2:22] {
				assert.Equal(t, unmatched[i], r.Rule, "rules not matched, in the order of their names")
				var x pattern.Explanation
				require.NoError(t, json.Unmarshal(r.Explanation, &x), "%s", r.Explanation)
				assert.Equal(t, "type", x.Path)
				assert.JSONEq(t, `"`+tt.typ+`"`, string(x.Actual))
				assert.NotEmpty(t, x.Reason)
			}
			omitted := got[22]
			assert.Equal(t, 279, omitted.Omitted, "300 rules, one matched, 20 explained")
			assert.Empty(t, omitted.Rule)
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// A rule whose pattern matches an event stored before the rule was enabled did not match it, and TRACE says why;
// rules without a name are named by their id.
func TestRouterBusLogFromSequence(t *testing.T) {
	t.Parallel()
	env := logEnv(t)
	rules := []router.Rule{
		{ID: "late", Subject: names.RuleSubject(bus, "late"), Pattern: json.RawMessage(`{"type": ["order.created"]}`),
			FromSequence: 1000},
		{ID: "b-paid", Name: "a paid", Subject: names.RuleSubject(bus, "b-paid"),
			Pattern: json.RawMessage(`{"type": ["order.paid"]}`)},
	}
	s := newLoggingRouter(t, env, rules, stream.LogTrace, stream.LogDetailNone)
	write(t, env, s, newEvent("e1", "order.created", "shop", nil))
	got := waitRecords(t, env.JS, 4)
	require.Equal(t, []string{stream.LogEventReceipt, stream.LogNoRulesMatched, stream.LogRuleNoMatch, stream.LogRuleNoMatch},
		recordTypes(got))
	assert.Equal(t, "a paid", got[2].Rule)
	assert.Equal(t, "late", got[3].Rule, "named by its id")
	var x pattern.Explanation
	require.NoError(t, json.Unmarshal(got[2].Explanation, &x))
	assert.Equal(t, "type", x.Path)
	assert.JSONEq(t, `{"reason": "the rule was enabled after the event was stored"}`, string(got[3].Explanation))
}

// Under its task, the router's records are its own: the task adds no INVOCATION_ATTEMPT_SUCCESS.
func TestRouterTaskWritesOwnRecords(t *testing.T) {
	t.Parallel()
	env := logEnv(t)
	rules := []router.Rule{{ID: "created", Name: "created", Subject: names.RuleSubject(bus, "created"),
		Pattern: json.RawMessage(`{"type": ["order.created"]}`)}}
	s := newLoggingRouter(t, env, rules, stream.LogInfo, stream.LogDetailNone)
	dc := delivery.Config{Stream: names.BusStream(bus), Subject: names.BusIn(bus), Durable: names.RouterConsumer(bus),
		Tasks: 1, Tolerance: connector.ToleranceAll,
		Retry: delivery.RetryPolicy{MaxRetries: 10, MaxAge: -1, InitialDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond},
		Log:   connector.LogConfig{Subject: logSubject, Level: stream.LogInfo}}
	cons, err := delivery.EnsureConsumer(context.Background(), env.JS, dc, delivery.AckWait)
	require.NoError(t, err)
	task, err := delivery.Start(context.Background(), delivery.TaskConfig{Consumer: cons, Sink: s, Handler: dc.Chain(s),
		EventLog: dc.EventLog(env.JS, routerName, nil)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })
	env.Publish(t, names.BusIn(bus), newEvent("e1", "order.created", "shop", nil))
	require.Eventually(t, func() bool { return task.Counters().Written == 1 }, 10*time.Second, 10*time.Millisecond)
	got := waitRecords(t, env.JS, 2)
	assert.Equal(t, []string{stream.LogEventReceipt, stream.LogRuleMatch}, recordTypes(got))
	assert.Zero(t, task.Counters().LogDropped)
}

// BenchmarkRouterBusLog measures Write of one event against a bus of 300 rules of which it matches one, at each
// log level: OFF (the cost must not be measurable), INFO (2 records) and TRACE (23 records, 20 of them explained).
// logdropped/op counts the records that could not be published (the connection's asynchronous publishes full).
func BenchmarkRouterBusLog(b *testing.B) {
	rules := manyRules(300)
	for _, level := range []string{stream.LogOff, stream.LogInfo, stream.LogTrace} {
		b.Run(level, func(b *testing.B) {
			env := logEnv(b)
			s := newLoggingRouter(b, env, rules, level, stream.LogDetailNone)
			e := newEvent("e1", "t.215", "shop/eu", map[string]any{"size": "big"})
			in := names.BusIn(bus)
			meta := connector.Meta{Stream: names.BusStream(bus), Subject: in, Sequence: env.Publish(b, in, e), Attempt: 1,
				Timestamp: time.Now().UTC(), MsgID: stream.PutMsgID(e.Source(), e.ID())}
			ctx := connector.WithMeta(context.Background(), meta)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := s.Write(ctx, e); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(s.(connector.SelfLogging).LogDropped())/float64(b.N), "logdropped/op")
		})
	}
}
