package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/eventstore"
	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/deadletter"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// withDeadLetters wires the dead-letter service (on the env's event store and repositories) into e's router.
func withDeadLetters(e *env) *env {
	e.services.DeadLetters = &deadletter.Service{
		Store: eventstore.NewDeadLetters(e.js, e.names.Cluster), Buses: e.buses,
		Rules: e.services.Rules.Rules, Targets: e.services.Targets.Targets,
	}
	e.router = newRouter(web.Config{Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, e.services)
	return e
}

// storeDeadLetter stores, in the dead-letter stream of account, the dead letter of event id given up by the
// connector eb.<account>.<bus>.<rule>.<target>, and returns its id. The stream exists once the account has a bus.
func (e *env) storeDeadLetter(t *testing.T, account, id, busName, ruleName, targetName string) string {
	t.Helper()
	ev := jetstreamtest.Event(id, "order.created", map[string]any{"orderId": id})
	m := stream.EncodeDeadLetter(e.names.DLQSubject(account), ev, stream.DeadLetter{
		Reason: "http: POST https://example.com/hook: 503 Service Unavailable", Attempts: 3, ErrorClass: stream.DLQClassExhausted,
		Connector: "eb." + account + "." + busName + "." + ruleName + "." + targetName, MsgID: "msg-" + id,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ack, err := e.js.PublishMsg(ctx, m)
	require.NoError(t, err)
	return deadletter.Rebuild(account, deadletter.Record{Sequence: ack.Sequence}).ID()
}

// redriven reads the ids of the events redriven to a target of the default account.
func (e *env) redriven(t *testing.T, busName, ruleName, targetName string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := e.buses.Get(ctx, domain.DefaultAccountID, busName)
	require.NoError(t, err)
	r, err := e.services.Rules.Rules.Get(ctx, b.ID(), ruleName)
	require.NoError(t, err)
	tg, err := e.services.Targets.Targets.Get(ctx, r.ID(), targetName)
	require.NoError(t, err)
	s, err := e.js.Stream(ctx, e.names.BusStream(b.ID()))
	require.NoError(t, err)
	subject := e.names.RedriveSubject(b.ID(), r.ID(), tg.ID())
	var out []string
	for seq := uint64(1); ; {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if err != nil {
			require.ErrorIs(t, err, jetstream.ErrMsgNotFound)
			return out
		}
		ev, err := stream.Decode(&nats.Msg{Header: m.Header, Data: m.Data})
		require.NoError(t, err)
		out = append(out, ev.ID())
		seq = m.Sequence + 1
	}
}

// listedIDs lists the ids of the event of every dead letter of the default account.
func (e *env) listedEvents(t *testing.T) []string {
	t.Helper()
	resp := e.must(t, http.MethodGet, "/api/v1/dead-letters?limit=500", nil, http.StatusOK)
	var out []string
	for _, d := range resp.JSON(t)["deadLetters"].([]any) {
		out = append(out, d.(map[string]any)["event"].(map[string]any)["id"].(string))
	}
	return out
}

// withDeadLetterFixtures gives the default account bus orders, rule created with targets hook and audit, and
// five dead letters: 1 (e1, hook), 2 (e2, audit), 3 (e3, hook), 4 (e4, of target gone, deleted since) and 5 (e5,
// of bus billing, which does not exist).
func withDeadLetterFixtures(t *testing.T, e *env) {
	t.Helper()
	withDeadLetters(e)
	e.createBus(t, "orders")
	e.createRule(t, "orders", "created")
	e.putTarget(t, "orders", "created", "hook")
	e.putTarget(t, "orders", "created", "audit")
	for _, d := range []struct{ id, bus, rule, target string }{
		{"e1", "orders", "created", "hook"}, {"e2", "orders", "created", "audit"}, {"e3", "orders", "created", "hook"},
		{"e4", "orders", "created", "gone"}, {"e5", "billing", "paid", "hook"},
	} {
		e.storeDeadLetter(t, domain.DefaultAccountID, d.id, d.bus, d.rule, d.target)
	}
}

func TestDeadLetterRoutes(t *testing.T) {
	t.Parallel()
	const list, redrive = "/api/v1/dead-letters", "/api/v1/dead-letters/redrive"
	bad := func(name, method, url string, body any, field string) scenario {
		return scenario{name: name, method: method, url: url, body: body, setup: withDeadLetterFixtures,
			status: http.StatusBadRequest, json: map[string]any{"field": field}}
	}
	run(t, []scenario{
		{name: "list every dead letter with its facts and event", method: http.MethodGet, url: list, setup: withDeadLetterFixtures,
			status: http.StatusOK, json: map[string]any{
				"deadLetters.0.id": "1", "deadLetters.0.bus": "orders", "deadLetters.0.rule": "created", "deadLetters.0.target": "hook",
				"deadLetters.0.connector": "eb.default.orders.created.hook", "deadLetters.0.attempts": 3,
				"deadLetters.0.reason":     "http: POST https://example.com/hook: 503 Service Unavailable",
				"deadLetters.0.errorClass": "retries-exhausted", "deadLetters.0.event.id": "e1",
				"deadLetters.0.event.type": "order.created", "deadLetters.0.event.data": map[string]any{"orderId": "e1"},
				"deadLetters.4.id": "5", "deadLetters.4.bus": "billing",
			},
			absent: []string{"nextToken", "ebdlq"},
			after: func(t *testing.T, e *env, resp *response) {
				assert.Len(t, resp.JSON(t)["deadLetters"], 5)
			}},
		{name: "list one target's", method: http.MethodGet, url: list + "?bus=orders&rule=created&target=hook", setup: withDeadLetterFixtures,
			status: http.StatusOK, after: func(t *testing.T, e *env, resp *response) {
				dls := resp.JSON(t)["deadLetters"].([]any)
				require.Len(t, dls, 2)
				assert.Equal(t, "1", dls[0].(map[string]any)["id"])
				assert.Equal(t, "3", dls[1].(map[string]any)["id"])
			}},
		{name: "list a time range that holds them all", method: http.MethodGet,
			url: list + "?bus=billing&from=2000-01-01T00:00:00Z&to=2999-01-01T00:00:00Z", setup: withDeadLetterFixtures,
			status: http.StatusOK, json: map[string]any{"deadLetters.0.id": "5"}},
		{name: "list a time range in the past", method: http.MethodGet, url: list + "?to=2000-01-01T00:00:00Z", setup: withDeadLetterFixtures,
			status: http.StatusOK, json: map[string]any{"deadLetters": []any{}}},
		{name: "list in pages", method: http.MethodGet, url: list + "?limit=2", setup: withDeadLetterFixtures,
			status: http.StatusOK, json: map[string]any{"deadLetters.0.id": "1", "deadLetters.1.id": "2"},
			after: func(t *testing.T, e *env, resp *response) {
				var ids []any
				v := resp.JSON(t)
				for pages := 1; ; pages++ {
					require.Less(t, pages, 5)
					for _, d := range v["deadLetters"].([]any) {
						ids = append(ids, d.(map[string]any)["id"])
					}
					next, _ := v["nextToken"].(string)
					if next == "" {
						break
					}
					v = e.must(t, http.MethodGet, list+"?limit=2&nextToken="+next, nil, http.StatusOK).JSON(t)
				}
				assert.Equal(t, []any{"1", "2", "3", "4", "5"}, ids)
			}},
		{name: "list without any bus", method: http.MethodGet, url: list, setup: func(t *testing.T, e *env) { withDeadLetters(e) },
			status: http.StatusOK, json: map[string]any{"deadLetters": []any{}}},
		bad("list: a rule without its bus", http.MethodGet, list+"?rule=created", nil, "rule"),
		bad("list: a target without its rule", http.MethodGet, list+"?bus=orders&target=hook", nil, "target"),
		bad("list: a bus name that is no name", http.MethodGet, list+"?bus=a%20b", nil, "bus"),
		bad("list: from that is no time", http.MethodGet, list+"?from=yesterday", nil, "from"),
		bad("list: to that is no time", http.MethodGet, list+"?to=2026-13-01", nil, "to"),
		bad("list: from after to", http.MethodGet, list+"?from=2026-11-30T12:00:00Z&to=2026-11-30T11:00:00Z", nil, "from"),
		bad("list: limit too large", http.MethodGet, list+"?limit=501", nil, "limit"),
		bad("list: a token of no page", http.MethodGet, list+"?nextToken=@@", nil, "nextToken"),
		bad("list: a token of another list", http.MethodGet, list+"?nextToken=b3JkZXJz", nil, "nextToken"), // "orders"

		{name: "redrive by ids: one redriven, one whose target is gone", method: http.MethodPost, url: redrive,
			body: map[string]any{"ids": []string{"1", "4"}}, setup: withDeadLetterFixtures, status: http.StatusOK,
			json: map[string]any{"redrivenCount": 1, "failedCount": 1, "entries.0": map[string]any{"id": "1"},
				"entries.1.id": "4", "entries.1.errorCode": "TargetNotFound"},
			contains: []string{`target \"gone\" was deleted`},
			after: func(t *testing.T, e *env, _ *response) {
				assert.Equal(t, []string{"e1"}, e.redriven(t, "orders", "created", "hook"))
				assert.Empty(t, e.redriven(t, "orders", "created", "audit"), "the other target of the rule gets nothing")
				assert.Equal(t, []string{"e2", "e3", "e4", "e5"}, e.listedEvents(t), "the redriven one left the list, the failed one stays")
			}},
		{name: "redrive by filter: every one of the target", method: http.MethodPost, url: redrive,
			body:  map[string]any{"filter": map[string]any{"bus": "orders", "rule": "created", "target": "hook"}},
			setup: withDeadLetterFixtures, status: http.StatusOK,
			json: map[string]any{"redrivenCount": 2, "failedCount": 0, "entries": []any{map[string]any{"id": "1"}, map[string]any{"id": "3"}}},
			after: func(t *testing.T, e *env, _ *response) {
				assert.Equal(t, []string{"e1", "e3"}, e.redriven(t, "orders", "created", "hook"))
				assert.Empty(t, e.redriven(t, "orders", "created", "audit"))
				assert.Equal(t, []string{"e2", "e4", "e5"}, e.listedEvents(t))
			}},
		{name: "redrive every one: the ones without a target fail alone", method: http.MethodPost, url: redrive,
			body: map[string]any{"filter": map[string]any{}}, setup: withDeadLetterFixtures, status: http.StatusOK,
			json: map[string]any{"redrivenCount": 3, "failedCount": 2, "entries.3.errorCode": "TargetNotFound",
				"entries.4.errorCode": "TargetNotFound"},
			contains: []string{`bus \"billing\" was deleted`},
			after: func(t *testing.T, e *env, _ *response) {
				assert.Equal(t, []string{"e1", "e3"}, e.redriven(t, "orders", "created", "hook"))
				assert.Equal(t, []string{"e2"}, e.redriven(t, "orders", "created", "audit"))
				assert.Equal(t, []string{"e4", "e5"}, e.listedEvents(t))
			}},
		{name: "redrive an id that does not exist: nothing is redriven", method: http.MethodPost, url: redrive,
			body: map[string]any{"ids": []string{"1", "99"}}, setup: withDeadLetterFixtures, status: http.StatusNotFound,
			json: map[string]any{"code": "DeadLetterNotFound", "field": "ids[1]"},
			after: func(t *testing.T, e *env, _ *response) {
				assert.Empty(t, e.redriven(t, "orders", "created", "hook"))
				assert.Len(t, e.listedEvents(t), 5)
			}},
		bad("redrive: neither ids nor filter", http.MethodPost, redrive, map[string]any{}, "ids"),
		bad("redrive: both ids and filter", http.MethodPost, redrive, map[string]any{"ids": []string{"1"}, "filter": map[string]any{}}, "filter"),
		bad("redrive: empty ids", http.MethodPost, redrive, map[string]any{"ids": []string{}}, "ids"),
		bad("redrive: an id that is no id", http.MethodPost, redrive, map[string]any{"ids": []string{"1", "one"}}, "ids[1]"),
		bad("redrive: an id twice", http.MethodPost, redrive, map[string]any{"ids": []string{"1", "1"}}, "ids[1]"),
		bad("redrive: a filter rule without its bus", http.MethodPost, redrive, map[string]any{"filter": map[string]any{"rule": "created"}}, "filter.rule"),
		bad("redrive: a filter time that is no time", http.MethodPost, redrive, map[string]any{"filter": map[string]any{"from": "now"}}, "filter.from"),
		bad("redrive: an unknown field", http.MethodPost, redrive, map[string]any{"filter": map[string]any{"source": "x"}}, "filter.source"),
		bad("redrive: ids that are numbers", http.MethodPost, redrive, map[string]any{"ids": []int{1}}, "ids"),
		{name: "redrive: no body", method: http.MethodPost, url: redrive, body: "", setup: withDeadLetterFixtures,
			status: http.StatusBadRequest, json: map[string]any{"code": web.CodeMalformedRequest}},

		{name: "discard by ids", method: http.MethodDelete, url: list, body: map[string]any{"ids": []string{"2", "5"}},
			setup: withDeadLetterFixtures, status: http.StatusOK,
			json: map[string]any{"deletedCount": 2, "failedCount": 0, "entries": []any{map[string]any{"id": "2"}, map[string]any{"id": "5"}}},
			after: func(t *testing.T, e *env, _ *response) {
				assert.Equal(t, []string{"e1", "e3", "e4"}, e.listedEvents(t))
				assert.Empty(t, e.redriven(t, "orders", "created", "audit"), "discarded, not redriven")
			}},
		{name: "discard by filter", method: http.MethodDelete, url: list, body: map[string]any{"filter": map[string]any{"bus": "orders"}},
			setup: withDeadLetterFixtures, status: http.StatusOK, json: map[string]any{"deletedCount": 4, "failedCount": 0},
			after: func(t *testing.T, e *env, _ *response) {
				assert.Equal(t, []string{"e5"}, e.listedEvents(t))
			}},
		{name: "discard every one", method: http.MethodDelete, url: list, body: map[string]any{"filter": map[string]any{}},
			setup: withDeadLetterFixtures, status: http.StatusOK, json: map[string]any{"deletedCount": 5},
			after: func(t *testing.T, e *env, _ *response) {
				assert.Empty(t, e.listedEvents(t))
			}},
		{name: "discard an id that does not exist: nothing is discarded", method: http.MethodDelete, url: list,
			body: map[string]any{"ids": []string{"3", "6"}}, setup: withDeadLetterFixtures, status: http.StatusNotFound,
			json: map[string]any{"code": "DeadLetterNotFound", "field": "ids[1]"},
			after: func(t *testing.T, e *env, _ *response) {
				assert.Len(t, e.listedEvents(t), 5)
			}},
		bad("discard: no selection", http.MethodDelete, list, map[string]any{}, "ids"),
		bad("discard: an id that is no id", http.MethodDelete, list, map[string]any{"ids": []string{"0"}}, "ids[0]"),
	})
}

// seedIsolationDeadLetters gives account b two dead letters (ids 1 and 2) and account a one (id 1), each of a
// target of its own bus.
func seedIsolationDeadLetters(t *testing.T, e *env) {
	t.Helper()
	e.storeDeadLetter(t, isoB, "b-dl-1", busOfB, ruleOfB, targetOfB)
	e.storeDeadLetter(t, isoB, "b-dl-2", busOfB, ruleOfB, targetOfB)
	e.storeDeadLetter(t, isoA, "a-dl-1", busOfA, ruleOfA, "t")
}
