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
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/router"
)

var names = stream.Names{Cluster: "eb"}

const bus = "b1"

func rulesJSON(t *testing.T, rules ...router.Rule) string {
	b, err := json.Marshal(rules)
	require.NoError(t, err)
	return string(b)
}

func newRouter(t *testing.T, env *jetstreamtest.Env, rules string) connector.Sink {
	t.Helper()
	spec := router.Plugin().FullSpec()
	s, err := router.New(spec.Values(map[string]string{router.KeyRules: rules}), connector.Env{JetStream: env.JS, Names: names})
	require.NoError(t, err)
	return s
}

func TestRulesValidation(t *testing.T) {
	t.Parallel()
	pat := json.RawMessage(`{"type": ["a"]}`)
	subj := names.RuleSubject(bus, "r1")
	tests := []struct {
		name    string
		rules   string
		wantMsg []string // one per problem
	}{
		{"empty table", `[]`, nil},
		{"default", ``, nil},
		{"valid", rulesJSON(t, router.Rule{ID: "r1", Subject: subj, Pattern: pat}), nil},
		{"not an array", `{"id": "r1"}`, []string{"cannot be read"}},
		{"id missing", rulesJSON(t, router.Rule{Subject: subj, Pattern: pat}), []string{`rule 0 (id ""): id is required`}},
		{"id twice", rulesJSON(t, router.Rule{ID: "r1", Subject: subj, Pattern: pat}, router.Rule{ID: "r1", Subject: subj, Pattern: pat}),
			[]string{`rule 1 (id "r1"): id is used twice`}},
		{"wildcard subject", rulesJSON(t, router.Rule{ID: "r1", Subject: "eb.bus.b1.rule.*", Pattern: pat}),
			[]string{`rule 0 (id "r1"): subject "eb.bus.b1.rule.*" is not a literal NATS subject`}},
		{"every problem", rulesJSON(t,
			router.Rule{ID: "r1", Subject: subj, Pattern: json.RawMessage(`{"type": [{"nope": 1}]}`)},
			router.Rule{ID: "r2", Subject: "", Pattern: pat},
			router.Rule{ID: "r3", Subject: subj, Pattern: json.RawMessage(`[]`)}),
			[]string{`rule 0 (id "r1"): pattern: type[0].nope: unsupported operator "nope"`,
				`rule 1 (id "r2"): subject "" is not a literal NATS subject`,
				`rule 2 (id "r3"): pattern: pattern must be a JSON object`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := map[string]string{}
			if tt.rules != "" {
				cfg[router.KeyRules] = tt.rules
			}
			_, err := router.New(router.Plugin().FullSpec().Values(cfg), connector.Env{})
			if tt.wantMsg == nil {
				require.NoError(t, err)
				return
			}
			var fe connector.FieldErrors
			require.ErrorAs(t, err, &fe)
			require.Len(t, fe, len(tt.wantMsg), "%v", fe)
			for i, msg := range tt.wantMsg {
				assert.Equal(t, router.KeyRules, fe[i].Key)
				assert.Contains(t, fe[i].Message, msg)
			}
		})
	}
}

type routed struct {
	env  *jetstreamtest.Env
	task *delivery.Task
}

// startRouter runs a router connector's task on the bus's .in subject, as the runtime does.
func startRouter(t *testing.T, env *jetstreamtest.Env, rules string) *routed {
	t.Helper()
	dc := delivery.Config{Stream: names.BusStream(bus), Subject: names.BusIn(bus), Durable: names.RouterConsumer(bus),
		Tasks: 1, Tolerance: connector.ToleranceAll,
		Retry: delivery.RetryPolicy{MaxRetries: 10, MaxAge: -1, InitialDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond}}
	cons, err := delivery.EnsureConsumer(context.Background(), env.JS, dc, delivery.AckWait)
	require.NoError(t, err)
	s := newRouter(t, env, rules)
	task, err := delivery.Start(context.Background(), delivery.TaskConfig{Consumer: cons, Sink: s, Handler: dc.Chain(s)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })
	return &routed{env: env, task: task}
}

func busEnv(t *testing.T) *jetstreamtest.Env {
	env := jetstreamtest.Start(t)
	require.NoError(t, names.EnsureBusStream(context.Background(), env.JS, bus, time.Hour, -1, 1))
	return env
}

func ids(stored []jetstreamtest.Stored) []string {
	out := []string{}
	for _, s := range stored {
		out = append(out, s.Event.ID())
	}
	return out
}

func newEvent(id, typ, source string, data map[string]any) *event.Event {
	e := jetstreamtest.Event(id, typ, data)
	e.SetSource(source)
	return e
}

func TestRouterCopiesToMatchingRules(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	rules := rulesJSON(t,
		router.Rule{ID: "created", Subject: names.RuleSubject(bus, "created"), Pattern: json.RawMessage(`{"type": ["order.created"]}`)},
		router.Rule{ID: "big", Subject: names.RuleSubject(bus, "big"), Pattern: json.RawMessage(`{"data": {"size": ["big"]}, "source": [{"prefix": "shop"}]}`)},
	)
	r := startRouter(t, env, rules)

	in := names.BusIn(bus)
	env.Publish(t, in, newEvent("e1", "order.created", "shop/eu", map[string]any{"size": "big"}))   // both
	env.Publish(t, in, newEvent("e2", "order.created", "shop/eu", map[string]any{"size": "small"})) // created
	env.Publish(t, in, newEvent("e3", "order.paid", "shop/us", map[string]any{"size": "big"}))      // big
	env.Publish(t, in, newEvent("e4", "order.paid", "crm", map[string]any{"size": "big"}))          // none
	env.Publish(t, in, newEvent("e5", "order.paid", "shop/us", nil))                                // none

	require.Eventually(t, func() bool { return r.task.Counters().Written == 5 }, 10*time.Second, 10*time.Millisecond)
	busStream := names.BusStream(bus)
	created := env.Messages(t, busStream, names.RuleSubject(bus, "created"))
	big := env.Messages(t, busStream, names.RuleSubject(bus, "big"))
	assert.ElementsMatch(t, []string{"e1", "e2"}, ids(created), "records are handled concurrently: no order")
	assert.ElementsMatch(t, []string{"e1", "e3"}, ids(big))

	// A copy is the event, with a hop id derived from the input's id and the rule.
	c := created[0]
	if c.Event.ID() != "e1" {
		c = created[1]
	}
	assert.Equal(t, stream.HopMsgID(stream.PutMsgID("shop/eu", "e1"), "route", "created"), c.MsgID)
	assert.Equal(t, "order.created", c.Event.Type())
	assert.Equal(t, "shop/eu", c.Event.Source())
	assert.JSONEq(t, `{"size": "big"}`, string(c.Event.Data()))

	info := env.ConsumerInfo(t, busStream, names.RouterConsumer(bus))
	assert.Equal(t, 0, info.NumAckPending)
	assert.Equal(t, uint64(0), info.NumPending)

	n := r.task.Counters()
	assert.Equal(t, uint64(3), n.Matched, "e1, e2, e3")
	assert.Equal(t, uint64(2), n.Unmatched, "e4, e5")
	assert.Equal(t, uint64(4), n.Routed, "two copies of e1, one of e2 and e3")
}

// Write reports to the task how many copies of the record it stored, once they are stored.
func TestRouterReportsMatches(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	in := names.BusIn(bus)
	early := newEvent("early", "order.paid", "shop/eu", nil)
	before := env.Publish(t, in, early)
	rules := rulesJSON(t,
		router.Rule{ID: "created", Subject: names.RuleSubject(bus, "created"), Pattern: json.RawMessage(`{"type": ["order.created"]}`)},
		router.Rule{ID: "shop", Subject: names.RuleSubject(bus, "shop"), Pattern: json.RawMessage(`{"source": [{"prefix": "shop"}]}`),
			FromSequence: before},
		// Nothing stores this subject: its copies cannot be stored.
		router.Rule{ID: "lost", Subject: "nowhere.lost", Pattern: json.RawMessage(`{"type": ["order.lost"]}`)},
	)
	s := newRouter(t, env, rules)
	tests := []struct {
		name    string
		event   *event.Event
		wantErr bool
		want    connector.RecordStats
	}{
		{"no rule", newEvent("none", "order.paid", "crm", nil), false, connector.RecordStats{Unmatched: 1}},
		{"one rule", newEvent("one", "order.paid", "shop/eu", nil), false, connector.RecordStats{Matched: 1, Routed: 1}},
		{"two rules", newEvent("two", "order.created", "shop/eu", nil), false, connector.RecordStats{Matched: 1, Routed: 2}},
		{"only rules it predates", early, false, connector.RecordStats{Unmatched: 1}},
		{"copies not stored", newEvent("lost", "order.lost", "crm", nil), true, connector.RecordStats{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := before
			if tt.event != early {
				seq = env.Publish(t, in, tt.event)
			}
			meta := connector.Meta{Stream: names.BusStream(bus), Subject: in, Sequence: seq, Attempt: 1,
				MsgID: stream.PutMsgID(tt.event.Source(), tt.event.ID())}
			report := new(connector.Report)
			ctx := connector.WithReport(connector.WithMeta(context.Background(), meta), report)
			err := s.Write(ctx, tt.event)
			if tt.wantErr {
				require.Error(t, err)
				assert.False(t, connector.IsPermanent(err), "a copy not stored is retried: %v", err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.want, report.Stats())
		})
	}
}

func TestRouterHonoursFromSequence(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	in := names.BusIn(bus)
	var last uint64
	for _, id := range []string{"before-1", "before-2"} {
		last = env.Publish(t, in, newEvent(id, "order.created", "shop", nil))
	}
	rules := rulesJSON(t,
		router.Rule{ID: "old", Subject: names.RuleSubject(bus, "old"), Pattern: json.RawMessage(`{"type": ["order.created"]}`)},
		router.Rule{ID: "new", Subject: names.RuleSubject(bus, "new"), Pattern: json.RawMessage(`{"type": ["order.created"]}`), FromSequence: last},
	)
	r := startRouter(t, env, rules)
	env.Publish(t, in, newEvent("after", "order.created", "shop", nil))
	require.Eventually(t, func() bool { return r.task.Counters().Written == 3 }, 10*time.Second, 10*time.Millisecond)
	busStream := names.BusStream(bus)
	assert.ElementsMatch(t, []string{"before-1", "before-2", "after"}, ids(env.Messages(t, busStream, names.RuleSubject(bus, "old"))))
	assert.Equal(t, []string{"after"}, ids(env.Messages(t, busStream, names.RuleSubject(bus, "new"))),
		"a rule receives the events stored after it was enabled, none before")
}

// A record written again (a redelivery after a crash) stores no second copy.
func TestRouterCopiesAreDeduplicated(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	rules := rulesJSON(t,
		router.Rule{ID: "all", Subject: names.RuleSubject(bus, "all"), Pattern: json.RawMessage(`{"type": ["t"]}`)},
		router.Rule{ID: "also", Subject: names.RuleSubject(bus, "also"), Pattern: json.RawMessage(`{"type": ["t"]}`)},
	)
	s := newRouter(t, env, rules)
	e := newEvent("dup", "t", "shop", nil)
	seq := env.Publish(t, names.BusIn(bus), e)
	meta := connector.Meta{Stream: names.BusStream(bus), Subject: names.BusIn(bus), Sequence: seq, Attempt: 1,
		MsgID: stream.PutMsgID(e.Source(), e.ID())}
	for attempt := uint64(1); attempt <= 3; attempt++ {
		meta.Attempt = attempt
		require.NoError(t, s.Write(connector.WithMeta(context.Background(), meta), e))
	}
	busStream := names.BusStream(bus)
	all := env.Messages(t, busStream, names.RuleSubject(bus, "all"))
	also := env.Messages(t, busStream, names.RuleSubject(bus, "also"))
	assert.Len(t, all, 1)
	assert.Len(t, also, 1, "copies for two rules are two legitimate copies")
	assert.NotEqual(t, all[0].MsgID, also[0].MsgID)

	err := s.Write(context.Background(), e)
	assert.True(t, connector.IsPermanent(err), "a record without metadata cannot be routed: %v", err)
}

// An AWS pattern on resources matches one element of the array the resources extension holds (as Amazon
// EventBridge matches its events' resources), while the copies keep the extension as it was stored: a string.
func TestRouterMatchesResourcesElements(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	rules := rulesJSON(t,
		router.Rule{ID: "b", Subject: names.RuleSubject(bus, "b"), Pattern: json.RawMessage(`{"resources": ["arn:b"]}`)},
		router.Rule{ID: "prefix", Subject: names.RuleSubject(bus, "prefix"), Pattern: json.RawMessage(`{"resources": [{"prefix": "arn:a"}]}`)},
		router.Rule{ID: "c", Subject: names.RuleSubject(bus, "c"), Pattern: json.RawMessage(`{"resources": ["arn:c"]}`)},
		router.Rule{ID: "text", Subject: names.RuleSubject(bus, "text"), Pattern: json.RawMessage(`{"resources": ["[\"arn:a\",\"arn:b\"]"]}`)},
	)
	r := startRouter(t, env, rules)
	in := names.BusIn(bus)
	both := newEvent("both", "t", "shop", map[string]any{"resources": "in data"})
	both.SetExtension("resources", `["arn:a","arn:b"]`)
	env.Publish(t, in, both)
	plain := newEvent("plain", "t", "shop", nil) // no extension: matches none
	env.Publish(t, in, plain)
	other := newEvent("other", "t", "shop", nil)
	other.SetExtension("resources", "arn:b") // not an array: matched as the string it is
	env.Publish(t, in, other)

	require.Eventually(t, func() bool { return r.task.Counters().Written == 3 }, 10*time.Second, 10*time.Millisecond)
	busStream := names.BusStream(bus)
	copies := env.Messages(t, busStream, names.RuleSubject(bus, "b"))
	assert.ElementsMatch(t, []string{"both", "other"}, ids(copies))
	assert.Equal(t, []string{"both"}, ids(env.Messages(t, busStream, names.RuleSubject(bus, "prefix"))))
	assert.Empty(t, ids(env.Messages(t, busStream, names.RuleSubject(bus, "c"))))
	assert.Empty(t, ids(env.Messages(t, busStream, names.RuleSubject(bus, "text"))), "the view is matched, not the string")
	require.Len(t, copies, 2)
	c := copies[0]
	if c.Event.ID() != "both" {
		c = copies[1]
	}
	assert.Equal(t, `["arn:a","arn:b"]`, c.Event.Extensions()["resources"], "the copy is the event as stored")
	assert.JSONEq(t, `{"resources":"in data"}`, string(c.Event.Data()))
}

// The bus log explains a rule on resources against the array the rule saw, and carries the event at FULL as
// stored, its resources extension a string.
func TestRouterLogsResourcesAsStored(t *testing.T) {
	t.Parallel()
	env := logEnv(t)
	rules := []router.Rule{
		{ID: "c", Name: "c", Subject: names.RuleSubject(bus, "c"), Pattern: json.RawMessage(`{"resources": ["arn:c"]}`)},
	}
	s := newLoggingRouter(t, env, rules, stream.LogTrace, stream.LogDetailFull)
	e := newEvent("e1", "t", "shop", nil)
	e.SetExtension("resources", `["arn:a","arn:b"]`)
	write(t, env, s, e)
	got := waitRecords(t, env.JS, 3)
	require.Equal(t, []string{stream.LogEventReceipt, stream.LogNoRulesMatched, stream.LogRuleNoMatch}, recordTypes(got))
	var stored map[string]any
	require.NoError(t, json.Unmarshal(got[0].Event, &stored))
	assert.Equal(t, `["arn:a","arn:b"]`, stored["resources"])
	var x struct {
		Path   string
		Actual json.RawMessage
	}
	require.NoError(t, json.Unmarshal(got[2].Explanation, &x), "%s", got[2].Explanation)
	assert.Equal(t, "resources", x.Path)
	assert.JSONEq(t, `["arn:a","arn:b"]`, string(x.Actual))
}

// A record batch on the bus's .in subject is routed event by event, and its copies for a rule are stored together,
// as one record batch in which each copy keeps the hop id it has stored alone (its PutMsgID hashed with the rule),
// so that a batch routed again after a crash stores no second copy. An event put again in another call is routed
// again: its copy is in another record batch.
func TestRouterRoutesTheEventsOfABatch(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	rules := rulesJSON(t,
		router.Rule{ID: "created", Subject: names.RuleSubject(bus, "created"), Pattern: json.RawMessage(`{"type": ["order.created"]}`)},
	)
	events := threeEvents()
	batch := inBatch(t, "batch-1", events...)
	for range 2 { // the second is a duplicate the stream drops
		_, err := env.JS.PublishMsg(context.Background(), batch)
		require.NoError(t, err)
	}
	r := startRouter(t, env, rules)
	require.Eventually(t, func() bool { return r.task.Counters().Written == 3 }, 10*time.Second, 10*time.Millisecond)
	copies := env.Messages(t, names.BusStream(bus), names.RuleSubject(bus, "created"))
	assert.Equal(t, []string{"b0", "b2"}, ids(copies), "in the batch's order")
	hops := []string{stream.HopMsgID(stream.PutMsgID("shop", "b0"), "route", "created"),
		stream.HopMsgID(stream.PutMsgID("shop", "b2"), "route", "created")}
	assert.Equal(t, hops, []string{copies[0].EntryID, copies[1].EntryID})
	assert.Equal(t, copies[0].Seq, copies[1].Seq, "one record batch")
	assert.Equal(t, stream.BatchMsgID(hops), copies[0].MsgID)
	n := r.task.Counters()
	assert.EqualValues(t, 3, n.Read)
	assert.EqualValues(t, 2, n.Matched)
	assert.EqualValues(t, 1, n.Unmatched)
	assert.EqualValues(t, 2, n.Routed)

	// Routed again (a crash before its ack; the runtime gives its events a Batch again): no copy is stored twice.
	s := newRouter(t, env, rules)
	var b connector.Batch
	for i, e := range events {
		meta := connector.Meta{Stream: names.BusStream(bus), Subject: names.BusIn(bus), Sequence: 1, Attempt: 1, Index: i,
			MsgID: stream.EntryMsgID(batch.Header, i, e)}
		require.NoError(t, s.Write(connector.WithBatch(connector.WithMeta(context.Background(), meta), &b), e))
	}
	require.Len(t, env.Messages(t, names.BusStream(bus), names.RuleSubject(bus, "created")), 2, "nothing before the flush")
	require.NoError(t, b.Flush(context.Background()))
	assert.Len(t, env.Messages(t, names.BusStream(bus), names.RuleSubject(bus, "created")), 2)

	// b2 put again in another call, with an event not seen before: both are routed, in a record batch of their own.
	_, err := env.JS.PublishMsg(context.Background(), inBatch(t, "batch-2", newEvent("b3", "order.created", "shop", nil), events[2]))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return r.task.Counters().Written == 5 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{"b0", "b2", "b3", "b2"}, ids(env.Messages(t, names.BusStream(bus), names.RuleSubject(bus, "created"))))
}

// An event of a record batch comes with its JSON form as the batch holds it (connector.Meta.JSON): the router
// matches that form (a resources extension as its array) and stores it as it is in the rule's record batch, rather
// than making it again. The form below is spaced out, as Marshal never writes it, to tell the two apart.
func TestRouterRoutesTheJSONFormOfABatchAsRead(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	rules := rulesJSON(t,
		router.Rule{ID: "a", Subject: names.RuleSubject(bus, "a"), Pattern: json.RawMessage(`{"resources": ["arn:a"]}`)},
	)
	s := newRouter(t, env, rules)
	var b connector.Batch
	for i, id := range []string{"j0", "j1"} {
		e := newEvent(id, "t", "shop", nil)
		e.SetExtension("resources", `["arn:a"]`)
		form := `{ "specversion": "1.0", "id": "` + id + `", "source": "shop", "type": "t", "resources": "[\"arn:a\"]" }`
		meta := connector.Meta{Stream: names.BusStream(bus), Subject: names.BusIn(bus), Sequence: 1, Attempt: 1, Index: i,
			MsgID: stream.PutMsgID("shop", id), JSON: []byte(form)}
		require.NoError(t, s.Write(connector.WithBatch(connector.WithMeta(context.Background(), meta), &b), e))
	}
	require.NoError(t, b.Flush(context.Background()))
	copies := env.Messages(t, names.BusStream(bus), names.RuleSubject(bus, "a"))
	assert.Equal(t, []string{"j0", "j1"}, ids(copies))
	require.Equal(t, copies[0].Seq, copies[1].Seq, "one record batch")
	st, err := env.JS.Stream(context.Background(), names.BusStream(bus))
	require.NoError(t, err)
	m, err := st.GetMsg(context.Background(), copies[0].Seq)
	require.NoError(t, err)
	assert.Contains(t, string(m.Data), `{ "specversion": "1.0", "id": "j1"`, "the form read, stored as it is")
}

// threeEvents are two events of type order.created (b0, b2) around one of another type (b1), from source shop.
func threeEvents() []*event.Event {
	return []*event.Event{
		newEvent("b0", "order.created", "shop", nil),
		newEvent("b1", "order.paid", "shop", nil),
		newEvent("b2", "order.created", "shop", nil),
	}
}

// inBatch is events as a record batch on the bus's .in subject, with Nats-Msg-Id msgID.
func inBatch(t *testing.T, msgID string, events ...*event.Event) *nats.Msg {
	t.Helper()
	batch, err := stream.EncodeBatch(events, nil, nil)
	require.NoError(t, err)
	batch.Subject = names.BusIn(bus)
	batch.Header.Set(nats.MsgIdHdr, msgID)
	return batch
}

// When the copies of a record batch cannot all be stored together, the record comes back and its events are routed
// one at a time, each copy a message of its own; the task counts each event once, when its copies are stored.
func TestRouterRoutesABatchOneAtATimeWhenItsCopiesCannotBeStored(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	rules := rulesJSON(t,
		router.Rule{ID: "created", Subject: names.RuleSubject(bus, "created"), Pattern: json.RawMessage(`{"type": ["order.created"]}`)},
		router.Rule{ID: "late", Subject: "late.copies", Stream: "LATE", Pattern: json.RawMessage(`{"source": ["shop"]}`)},
	)
	_, err := env.JS.PublishMsg(context.Background(), inBatch(t, "batch-1", threeEvents()...))
	require.NoError(t, err)
	r := startRouter(t, env, rules)
	// The stream of rule late does not exist: the flush fails, and the record comes back.
	require.Eventually(t, func() bool { return r.task.Counters().Retried > 0 }, 10*time.Second, 10*time.Millisecond)
	require.Zero(t, r.task.Counters().Written, "nothing counted of a flush that failed")
	env.Stream(t, "LATE", "late.>")
	require.Eventually(t, func() bool { return r.task.Counters().Written == 3 }, 20*time.Second, 10*time.Millisecond)
	late := env.Messages(t, "LATE", "late.copies")
	assert.Equal(t, []string{"b0", "b1", "b2"}, ids(late))
	for _, c := range late {
		assert.Equal(t, c.MsgID, c.EntryID, "a message of its own")
	}
	// The record batch of rule created's copies that the failed flush stored stays, and the events are routed
	// again one at a time: delivery is at least once.
	created := env.Messages(t, names.BusStream(bus), names.RuleSubject(bus, "created"))
	assert.Equal(t, []string{"b0", "b2", "b0", "b2"}, ids(created))
	assert.NotEqual(t, created[2].Seq, created[3].Seq, "one at a time")
	n := r.task.Counters()
	assert.EqualValues(t, 3, n.Matched)
	assert.EqualValues(t, 5, n.Routed)
}
