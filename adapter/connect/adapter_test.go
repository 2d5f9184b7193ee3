package connect_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/connect"
	"github.com/eventbridge-go/eventbridge/adapter/eventstore"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/domain/transform"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"

	_ "github.com/eventbridge-go/eventbridge/worker/plugins/http"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/inputtransformer"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/router"
)

// testToken is the cluster token of the tests' workers.
const testToken = "adapter-test-cluster-token-0123456789"

// env is a control plane without its web layer: SQLite, an embedded NATS, a real worker on a loopback port,
// and the adapter between them.
type env struct {
	db      *persistence.DB
	adapter *connect.Adapter
	states  *persistence.ConnectorStateRepository
	client  *rpc.Client
	js      jetstream.JetStream
	store   *eventstore.Store
	buses   *bus.Service
	rules   *rule.Service
	targets *target.Service
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	nenv := jetstreamtest.Start(t)
	js := nenv.JS

	w, err := worker.New(worker.Config{Token: testToken, NATS: nenv.Conn, ClusterID: "t", WorkerID: "w1", RESTAddr: "127.0.0.1:0", AllowPrivateTargets: true})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	t.Cleanup(func() { _ = w.Close(context.Background()) })

	db := persistencetest.Open(t, persistence.SQLite)
	busRepo, ruleRepo, targetRepo := persistence.NewBusRepository(db), persistence.NewRuleRepository(db), persistence.NewTargetRepository(db)
	store := eventstore.New(js, "t", 1)
	client := rpc.NewClient(w.URL(), rpc.WithToken(testToken))
	log := slog.New(slog.DiscardHandler)
	states := persistence.NewConnectorStateRepository(db)
	a := connect.New(connect.Config{Runtime: client, Buses: busRepo, Rules: ruleRepo, Targets: targetRepo,
		Streams: store, Physical: stream.Names{Cluster: "t"}, Logger: log, States: states})
	return &env{
		db: db, adapter: a, states: states, client: client, js: js, store: store,
		buses:   &bus.Service{Buses: busRepo, Rules: ruleRepo, Store: store, Runtime: a, Logger: log},
		rules:   &rule.Service{Rules: ruleRepo, Buses: busRepo, Runtime: a, Logger: log},
		targets: &target.Service{Targets: targetRepo, Rules: ruleRepo, Buses: busRepo, Runtime: a, Statuses: a, Logger: log},
	}
}

func (e *env) connectors(t *testing.T) map[string]rpc.ConnectorExpanded {
	t.Helper()
	c, err := e.client.ListConnectors(context.Background())
	require.NoError(t, err)
	return c
}

func httpSpec(name, url string) target.Spec {
	return target.Spec{Name: name, Type: target.HTTP, HTTP: target.HTTPConfig{URL: url}, RetryPolicy: target.DefaultRetryPolicy()}
}

func TestSyncBusBuildsRouterAndTargets(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	require.Contains(t, e.connectors(t), "eb.acme.orders.router", "the router exists once the bus is created")

	r, err := e.rules.Create(ctx, "acme", "orders", rule.Spec{Name: "big", EventPattern: []byte(`{"type":["order.created"]}`)})
	require.NoError(t, err)
	tg, created, err := e.targets.Put(ctx, "acme", "orders", "big", httpSpec("hook", "http://127.0.0.1:1/x"))
	require.NoError(t, err)
	require.True(t, created)

	cs := e.connectors(t)
	require.Len(t, cs, 2)
	router := cs["eb.acme.orders.router"].Info.Config
	var table []struct {
		ID, Subject  string
		Pattern      json.RawMessage
		FromSequence uint64
	}
	require.NoError(t, json.Unmarshal([]byte(router["router.rules"]), &table))
	require.Len(t, table, 1)
	require.Equal(t, r.ID(), table[0].ID)
	require.Equal(t, "t.bus."+b.ID()+".rule."+r.ID(), table[0].Subject)
	require.JSONEq(t, `{"type":["order.created"]}`, string(table[0].Pattern))
	require.Equal(t, "all", router["errors.tolerance"])
	require.Equal(t, "t.dlq.acme", router["errors.deadletterqueue.topic.name"], "the router's dead letters are the account's")

	sink := cs["eb.acme.orders.big.hook"].Info.Config
	require.Equal(t, "http", sink["connector.class"])
	require.Equal(t, table[0].Subject+",t.bus."+b.ID()+".redrive."+r.ID()+"."+tg.ID(), sink["topics"], "the rule's subject, then the target's redrive subject")
	require.Equal(t, "t_"+r.ID()+"_"+tg.ID(), sink["jetstream.durable"])
	require.Equal(t, "new", sink["jetstream.deliver.policy"])
	require.Equal(t, "185", sink["errors.retry.max.attempts"])
	require.Equal(t, "86400000", sink["errors.retry.timeout"])
	require.Equal(t, "all", sink["errors.tolerance"])
	require.Equal(t, "t.dlq."+b.AccountID(), sink["errors.deadletterqueue.topic.name"])

	st := e.targets.Status(ctx, tg)
	require.Equal(t, "RUNNING", st.State)
	require.Len(t, st.Tasks, 1)
	require.Equal(t, "w1", st.Tasks[0].WorkerID)

	// A disabled rule leaves the router's table; its target connector stays.
	_, err = e.rules.Disable(ctx, "acme", "orders", "big")
	require.NoError(t, err)
	cs = e.connectors(t)
	require.Equal(t, "[]", cs["eb.acme.orders.router"].Info.Config["router.rules"])
	require.Contains(t, cs, "eb.acme.orders.big.hook")
}

func TestEnabledRuleKeepsItsStartAndReEnabledRuleStartsAnew(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	put := func(n int) {
		var evs []*event.Event
		for i := 0; i < n; i++ {
			ev := event.New()
			ev.SetID(time.Now().Format(time.RFC3339Nano) + string(rune('a'+i)))
			ev.SetSource("s")
			ev.SetType("t")
			evs = append(evs, &ev)
		}
		errs, err := e.buses.PutEvents(ctx, "acme", "orders", evs)
		require.NoError(t, err)
		for _, r := range errs {
			require.NoError(t, r.Err)
		}
	}
	fromSeq := func() uint64 {
		var table []struct{ FromSequence uint64 }
		require.NoError(t, json.Unmarshal([]byte(e.connectors(t)["eb.acme.orders.router"].Info.Config["router.rules"]), &table))
		require.Len(t, table, 1)
		return table[0].FromSequence
	}
	put(3)
	_, err = e.rules.Create(ctx, "acme", "orders", rule.Spec{Name: "r", EventPattern: []byte(`{"source":["s"]}`)})
	require.NoError(t, err)
	last, err := e.store.LastSequence(ctx, b.ID())
	require.NoError(t, err)
	require.Equal(t, last, fromSeq(), "a new rule starts after the events stored before it")
	first := fromSeq()

	put(2)
	_, _, err = e.rules.Put(ctx, "acme", "orders", rule.Spec{Name: "r", EventPattern: []byte(`{"source":["s","x"]}`)})
	require.NoError(t, err)
	require.Equal(t, first, fromSeq(), "changing the pattern of an enabled rule keeps its start")
	require.NoError(t, e.adapter.ReconcileAll(ctx))
	require.Equal(t, first, fromSeq(), "reconciling keeps the start")

	_, err = e.rules.Disable(ctx, "acme", "orders", "r")
	require.NoError(t, err)
	put(2)
	_, err = e.rules.Enable(ctx, "acme", "orders", "r")
	require.NoError(t, err)
	last, err = e.store.LastSequence(ctx, b.ID())
	require.NoError(t, err)
	require.Greater(t, fromSeq(), first)
	require.LessOrEqual(t, fromSeq(), last)
}

func TestReconcileRepairsTheRuntime(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	_, err = e.rules.Create(ctx, "acme", "orders", rule.Spec{Name: "r", EventPattern: []byte(`{"source":["s"]}`)})
	require.NoError(t, err)
	_, _, err = e.targets.Put(ctx, "acme", "orders", "r", httpSpec("t", "http://127.0.0.1:1/x"))
	require.NoError(t, err)
	want := e.connectors(t)

	// Deleted by hand, changed by hand, and one that belongs to nothing.
	require.NoError(t, e.client.DeleteConnector(ctx, "eb.acme.orders.r.t"))
	cfg := want["eb.acme.orders.router"].Info.Config
	changed := map[string]string{}
	for k, v := range cfg {
		changed[k] = v
	}
	changed["router.rules"] = "[]"
	_, err = e.client.PutConnectorConfig(ctx, "eb.acme.orders.router", changed)
	require.NoError(t, err)
	orphan := map[string]string{}
	for k, v := range want["eb.acme.orders.r.t"].Info.Config {
		orphan[k] = v
	}
	orphan["jetstream.durable"] = "t_orphan"
	_, err = e.client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: "eb.acme.gone.r.t", Config: orphan})
	require.NoError(t, err)
	// Connectors that are not ours are left alone.
	foreign := map[string]string{}
	for k, v := range orphan {
		foreign[k] = v
	}
	foreign["jetstream.durable"] = "t_foreign"
	_, err = e.client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: "someone-elses", Config: foreign})
	require.NoError(t, err)

	require.NoError(t, e.adapter.ReconcileAll(ctx))
	got := e.connectors(t)
	require.Len(t, got, 3)
	require.Contains(t, got, "someone-elses")
	for name, c := range want {
		require.Contains(t, got, name)
		if name == "eb.acme.orders.router" {
			// The rule re-enters the table with a new start: events put meanwhile were not routed to it.
			require.NotEqual(t, "[]", got[name].Info.Config["router.rules"])
			continue
		}
		require.Equal(t, c.Info.Config, got[name].Info.Config)
	}
}

func TestDeletingARuleRemovesItsConnectorsAndRoutedEvents(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable) // events stay in the rule's subject
	}))
	defer srv.Close()
	b, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	r, err := e.rules.Create(ctx, "acme", "orders", rule.Spec{Name: "r", EventPattern: []byte(`{"source":["s"]}`)})
	require.NoError(t, err)
	_, _, err = e.targets.Put(ctx, "acme", "orders", "r", httpSpec("t", srv.URL))
	require.NoError(t, err)
	ev := event.New()
	ev.SetID("1")
	ev.SetSource("s")
	ev.SetType("t")
	errs, err := e.buses.PutEvents(ctx, "acme", "orders", []*event.Event{&ev})
	require.NoError(t, err)
	require.NoError(t, errs[0].Err)

	stream, err := e.js.Stream(ctx, "t_BUS_"+b.ID())
	require.NoError(t, err)
	ruleSubject := "t.bus." + b.ID() + ".rule." + r.ID()
	routed := func() uint64 {
		info, err := stream.Info(ctx, jetstream.WithSubjectFilter(ruleSubject))
		require.NoError(t, err)
		return info.State.Subjects[ruleSubject]
	}
	require.Eventually(t, func() bool { return routed() == 1 && hits.Load() > 0 }, 10*time.Second, 20*time.Millisecond)

	require.NoError(t, e.rules.Delete(ctx, "acme", "orders", "r"))
	cs := e.connectors(t)
	require.NotContains(t, cs, "eb.acme.orders.r.t")
	require.Equal(t, "[]", cs["eb.acme.orders.router"].Info.Config["router.rules"])
	require.Zero(t, routed(), "the rule's routed events are purged")

	// Deleting the bus removes its router and its stream.
	require.NoError(t, e.buses.Delete(ctx, "acme", "orders"))
	require.Empty(t, e.connectors(t))
	_, err = e.js.Stream(ctx, "t_BUS_"+b.ID())
	require.ErrorIs(t, err, jetstream.ErrStreamNotFound)
}

func TestUnreachableRuntimeLeavesTargetsPending(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	_, err = e.rules.Create(ctx, "acme", "orders", rule.Spec{Name: "r", EventPattern: []byte(`{"source":["s"]}`)})
	require.NoError(t, err)
	tg, _, err := e.targets.Put(ctx, "acme", "orders", "r", httpSpec("t", "http://127.0.0.1:1/x"))
	require.NoError(t, err)

	e.client.BaseURL = "http://127.0.0.1:1" // nothing listens there
	st := e.targets.Status(ctx, tg)
	require.Equal(t, target.StatePending, st.State)
	require.NotEmpty(t, st.LastError)
	// Declaring still works while the runtime is unreachable; the reconciler catches up later.
	_, _, err = e.targets.Put(ctx, "acme", "orders", "r", httpSpec("t2", "http://127.0.0.1:1/y"))
	require.NoError(t, err)
	require.Error(t, e.adapter.ReconcileAll(ctx))
}

// A target's input transformer becomes the connector's transform, and the target receives the transformed data;
// removing it sends the events as they are again.
func TestTargetInputTransformer(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	type received struct{ contentType, id, body string }
	bodies := make(chan received, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- received{contentType: r.Header.Get("Content-Type"), id: r.Header.Get("ce-id"), body: string(b)}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	_, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	_, err = e.rules.Create(ctx, "acme", "orders", rule.Spec{Name: "r", EventPattern: []byte(`{"source":["shop"]}`)})
	require.NoError(t, err)
	spec := httpSpec("hook", srv.URL)
	spec.Transformer = transform.Spec{InputTransformer: &transform.InputTransformer{
		InputPathsMap: map[string]string{"id": "$.data.orderId", "sku": "$.data.items[0].sku"},
		InputTemplate: `{"order": <id>, "sku": <sku>, "text": "Order <id> from <ce.source>"}`,
	}}
	_, _, err = e.targets.Put(ctx, "acme", "orders", "r", spec)
	require.NoError(t, err)

	cfg := e.connectors(t)["eb.acme.orders.r.hook"].Info.Config
	require.Equal(t, "input", cfg["transforms"])
	require.Equal(t, "input-transformer", cfg["transforms.input.type"])
	stored, err := transform.ParseSpec([]byte(cfg["transforms.input.spec"]))
	require.NoError(t, err)
	require.True(t, stored.Equal(spec.Transformer), "the spec is the target's: %s", cfg["transforms.input.spec"])

	put := func(id string) {
		ev := event.New()
		ev.SetID(id)
		ev.SetSource("shop")
		ev.SetType("order.created")
		require.NoError(t, ev.SetData(event.ApplicationJSON, map[string]any{"orderId": "o-" + id, "items": []any{map[string]any{"sku": "x1"}}}))
		errs, err := e.buses.PutEvents(ctx, "acme", "orders", []*event.Event{&ev})
		require.NoError(t, err)
		require.NoError(t, errs[0].Err)
	}
	next := func() received {
		select {
		case r := <-bodies:
			return r
		case <-time.After(20 * time.Second):
			t.Fatal("the target received nothing")
		}
		return received{}
	}
	put("1")
	got := next()
	require.Equal(t, "1", got.id, "the attributes stay")
	require.Equal(t, "application/json", got.contentType)
	require.JSONEq(t, `{"order": "o-1", "sku": "x1", "text": "Order o-1 from shop"}`, got.body)

	// A RocketMQ EventBridge form instead.
	spec.Transformer = transform.Spec{Transform: &transform.Param{Form: transform.JSONPath, Value: "$.data.orderId"}}
	_, _, err = e.targets.Put(ctx, "acme", "orders", "r", spec)
	require.NoError(t, err)
	put("2")
	got = next()
	require.Equal(t, "text/plain", got.contentType)
	require.Equal(t, "o-2", got.body)

	// Without a transformer the connector has no transform and the event arrives as it was put.
	spec.Transformer = transform.Spec{}
	_, _, err = e.targets.Put(ctx, "acme", "orders", "r", spec)
	require.NoError(t, err)
	cfg = e.connectors(t)["eb.acme.orders.r.hook"].Info.Config
	require.NotContains(t, cfg, "transforms")
	require.NotContains(t, cfg, "transforms.input.spec")
	put("3")
	got = next()
	require.Equal(t, "application/json", got.contentType)
	require.JSONEq(t, `{"orderId": "o-3", "items": [{"sku": "x1"}]}`, got.body)
}

// The attributes of a target's transformer arrive on the event the target receives: in binary mode as ce-*
// headers. An event for which a required attribute's template makes nothing is not delivered.
func TestTargetTransformerAttributes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	type received struct {
		header http.Header
		body   string
	}
	got := make(chan received, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{header: r.Header.Clone(), body: string(b)}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	_, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	_, err = e.rules.Create(ctx, "acme", "orders", rule.Spec{Name: "r", EventPattern: []byte(`{"source":["shop"]}`)})
	require.NoError(t, err)
	spec := httpSpec("hook", srv.URL)
	spec.Transformer = transform.Spec{
		InputTransformer: &transform.InputTransformer{
			InputPathsMap: map[string]string{"id": "$.data.orderId", "kind": "$.data.kind"},
			InputTemplate: `{"order": <id>}`,
		},
		Attributes: map[string]string{"subject": "orders/<id>", "type": "com.example.order.<kind>", "orderid": "<id>", "tenant": ""},
	}
	_, _, err = e.targets.Put(ctx, "acme", "orders", "r", spec)
	require.NoError(t, err)
	stored, err := transform.ParseSpec([]byte(e.connectors(t)["eb.acme.orders.r.hook"].Info.Config["transforms.input.spec"]))
	require.NoError(t, err)
	require.True(t, stored.Equal(spec.Transformer), "the connector's spec carries the attributes")

	put := func(id, subject string, data map[string]any) {
		ev := event.New()
		ev.SetID(id)
		ev.SetSource("shop")
		ev.SetType("order.created")
		ev.SetSubject(subject)
		ev.SetExtension("tenant", "acme")
		require.NoError(t, ev.SetData(event.ApplicationJSON, data))
		errs, err := e.buses.PutEvents(ctx, "acme", "orders", []*event.Event{&ev})
		require.NoError(t, err)
		require.NoError(t, errs[0].Err)
	}
	next := func() received {
		select {
		case r := <-got:
			return r
		case <-time.After(20 * time.Second):
			t.Fatal("the target received nothing")
		}
		return received{}
	}

	put("1", "", map[string]any{"orderId": "o-1", "kind": "created"})
	r := next()
	require.Equal(t, "1", r.header.Get("ce-id"), "the id stays")
	require.Equal(t, "shop", r.header.Get("ce-source"))
	require.Equal(t, "orders/o-1", r.header.Get("ce-subject"))
	require.Equal(t, "com.example.order.created", r.header.Get("ce-type"))
	require.Equal(t, "o-1", r.header.Get("ce-orderid"))
	require.Empty(t, r.header.Values("ce-tenant"), "an empty value removes the extension")
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.JSONEq(t, `{"order": "o-1"}`, r.body)

	// Attributes alone: the data arrives as it was put. An event whose type's template makes nothing is given
	// up, not retried: the next event is the next one the target receives.
	spec.Transformer = transform.Spec{Attributes: map[string]string{"type": "<ce.subject>", "subject": "<ce.source>/<ce.id>"}}
	_, _, err = e.targets.Put(ctx, "acme", "orders", "r", spec)
	require.NoError(t, err)
	put("2", "", map[string]any{"orderId": "o-2"})
	put("3", "order.archived", map[string]any{"orderId": "o-3"})
	r = next()
	require.Equal(t, "3", r.header.Get("ce-id"), "event 2 has no subject, so no type: it is not delivered")
	require.Equal(t, "order.archived", r.header.Get("ce-type"))
	require.Equal(t, "shop/3", r.header.Get("ce-subject"))
	require.Equal(t, "acme", r.header.Get("ce-tenant"), "attributes not named stay")
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.JSONEq(t, `{"orderId": "o-3"}`, r.body)
	select {
	case r := <-got:
		t.Fatalf("an event more than expected: %v", r.header)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestRouterDeadLettersWhatItCannotRoute: an event on a bus's intake that the router cannot make a JSON form of
// (written there past the store's checks, as an earlier version could) goes to the account's dead letters with the
// reason and the original event, and the events after it are routed.
func TestRouterDeadLettersWhatItCannotRoute(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	r, err := e.rules.Create(ctx, "acme", "orders", rule.Spec{Name: "all", EventPattern: []byte(`{"source":["/s"]}`)})
	require.NoError(t, err)

	names := stream.Names{Cluster: "t"}
	bad := nats.NewMsg(names.BusIn(b.ID()))
	for k, v := range map[string]string{"ce-specversion": "1.0", "ce-id": "deep", "ce-source": "/s", "ce-type": "t",
		"content-type": "application/json"} {
		bad.Header.Set(k, v)
	}
	bad.Data = []byte(strings.Repeat("[", 20000) + strings.Repeat("]", 20000))
	_, err = e.js.PublishMsg(ctx, bad)
	require.NoError(t, err)
	ev := event.New()
	ev.SetID("fine")
	ev.SetSource("/s")
	ev.SetType("t")
	results, err := e.buses.PutEvents(ctx, "acme", "orders", []*event.Event{&ev})
	require.NoError(t, err)
	require.NoError(t, results[0].Err)

	dlq, err := e.js.Stream(ctx, names.DLQStream("acme"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		m, err := dlq.GetLastMsgForSubject(ctx, names.DLQSubject("acme"))
		if err != nil {
			return false
		}
		got, d, err := stream.DecodeDeadLetter(&nats.Msg{Header: m.Header, Data: m.Data})
		require.NoError(t, err)
		assert.Equal(t, "deep", got.ID())
		assert.Equal(t, stream.DLQClassPermanent, d.ErrorClass)
		assert.Contains(t, d.Reason, "router")
		assert.Equal(t, "eb.acme.orders.router", d.Connector)
		return true
	}, 15*time.Second, 50*time.Millisecond, "the unroutable event is dead-lettered")
	s, err := e.js.Stream(ctx, names.BusStream(b.ID()))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		m, err := s.GetLastMsgForSubject(ctx, names.RuleSubject(b.ID(), r.ID()))
		return err == nil && m.Header.Get("ce-id") == "fine"
	}, 15*time.Second, 50*time.Millisecond, "the event after it is routed")
}

// unreachable is a runtime that cannot be reached, as from a control-plane replica cut off from the workers.
type unreachable struct{}

// stampedConnections has no connections, and a stamp the test sets, as if they changed.
type stampedConnections struct{ stamp string }

func (*stampedConnections) Get(context.Context, string, string) (*connection.Connection, error) {
	return nil, connection.ErrNotFound
}
func (s *stampedConnections) Stamp(context.Context) (string, error) { return s.stamp, nil }

func (unreachable) SyncBus(context.Context, *bus.Bus) error { return errors.New("runtime unreachable") }

// A periodic pass repairs what it can see changed (the runtime's connectors) and is skipped when nothing changed; a
// change it cannot see, a rule stored by a replica that could not reach the runtime, waits for the next full pass
// (every FullPassEvery-th). ReconcileAll is always a full pass.
func TestPeriodicPassSkipsWhenNothingChanged(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	busRepo, ruleRepo := persistence.NewBusRepository(e.db), persistence.NewRuleRepository(e.db)
	connections := &stampedConnections{stamp: "1"}
	a := connect.New(connect.Config{Runtime: e.client, Buses: busRepo, Rules: ruleRepo,
		Targets: persistence.NewTargetRepository(e.db), Streams: e.store, Physical: stream.Names{Cluster: "t"},
		Logger: slog.New(slog.DiscardHandler), States: e.states, FullPassEvery: 3, Connections: connections})
	_, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	reconcile := func() {
		t.Helper()
		held, err := a.Reconcile(ctx)
		require.NoError(t, err)
		require.True(t, held)
	}
	reconcile() // the first pass is full

	require.NoError(t, e.client.DeleteConnector(ctx, "eb.acme.orders.router"))
	reconcile()
	require.Contains(t, e.connectors(t), "eb.acme.orders.router", "a change in the runtime is seen and repaired")

	// Another replica stores a rule and cannot apply it: no pass sees it until a full one.
	cutOff := &rule.Service{Rules: ruleRepo, Buses: busRepo, Runtime: unreachable{}, Logger: slog.New(slog.DiscardHandler)}
	_, err = cutOff.Create(ctx, "acme", "orders", rule.Spec{Name: "late", EventPattern: []byte(`{"source":["s"]}`)})
	require.NoError(t, err)
	routed := func() string { return e.connectors(t)["eb.acme.orders.router"].Info.Config["router.rules"] }
	reconcile() // sees the repaired router: a partial pass, and the bus is held as its repair left it
	require.Equal(t, "[]", routed(), "a bus the runtime holds as its last sync left it is not synced again")
	reconcile()
	require.Contains(t, routed(), `"source":["s"]`, "every third pass is full")

	_, err = cutOff.Create(ctx, "acme", "orders", rule.Spec{Name: "later", EventPattern: []byte(`{"source":["t"]}`)})
	require.NoError(t, err)
	require.NoError(t, a.ReconcileAll(ctx))
	require.Contains(t, routed(), `"source":["t"]`, "ReconcileAll is always a full pass")

	// Connections and API destinations reach targets only through reconciliation: a change of their stamp makes
	// the next pass full.
	reconcile() // sees the runtime as the full pass left it
	_, err = cutOff.Create(ctx, "acme", "orders", rule.Spec{Name: "latest", EventPattern: []byte(`{"source":["u"]}`)})
	require.NoError(t, err)
	reconcile()
	require.NotContains(t, routed(), `"source":["u"]`, "skipped")
	connections.stamp = "2"
	reconcile()
	require.Contains(t, routed(), `"source":["u"]`, "a connection changed: a full pass")
}

// periodicPasses returns a function that runs a periodic pass of a and requires that it synced that many buses,
// as told by reads: the reads of a bus's rules, once per sync.
func periodicPasses(t *testing.T, a *connect.Adapter, reads *atomic.Int64) func(synced int64, why string) {
	return func(synced int64, why string) {
		t.Helper()
		before := reads.Load()
		held, err := a.Reconcile(context.Background())
		require.NoError(t, err)
		require.True(t, held)
		require.Equal(t, synced, reads.Load()-before, why)
	}
}

// countingRules counts the reads of a bus's rules: every sync of a bus reads them once.
type countingRules struct {
	rule.Repository
	reads atomic.Int64
}

func (r *countingRules) ListByBus(ctx context.Context, busID string) ([]*rule.Rule, error) {
	r.reads.Add(1)
	return r.Repository.ListByBus(ctx, busID)
}

func TestPeriodicPassSyncsOnlyTheBusesThatChanged(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	busRepo, rules := persistence.NewBusRepository(e.db), &countingRules{Repository: persistence.NewRuleRepository(e.db)}
	a := connect.New(connect.Config{Runtime: e.client, Buses: busRepo, Rules: rules,
		Targets: persistence.NewTargetRepository(e.db), Streams: e.store, Physical: stream.Names{Cluster: "t"},
		Logger: log, States: e.states, FullPassEvery: 5})
	buses := &bus.Service{Buses: busRepo, Rules: rules.Repository.(bus.RuleCounter), Store: e.store, Runtime: a, Logger: log}
	reconcile := periodicPasses(t, a, &rules.reads)
	reconcile(0, "the first pass is full, and there is no bus yet")
	three := connect.RouterName("acme", "three.3/x") // a name escaped in its connectors' names
	for _, name := range []string{"one", "two", "three.3/x"} {
		_, err := buses.Create(ctx, "acme", name, "", bus.Retention{})
		require.NoError(t, err)
	}
	require.Len(t, e.connectors(t), 3)
	reconcile(0, "the runtime holds every bus as its creation left it: the pass after the creations syncs none")

	require.NoError(t, e.client.DeleteConnector(ctx, "eb.acme.two.router"))
	reconcile(1, "one bus's connectors changed in the runtime: that bus is synced")
	require.Contains(t, e.connectors(t), "eb.acme.two.router", "and repaired")

	require.NoError(t, e.states.SetDesiredState(ctx, "acme", three, rpc.StatePaused, time.Now()))
	reconcile(1, "an operator paused a connector: its bus is synced")
	require.Equal(t, rpc.StatePaused, e.connectors(t)[three].Status.Connector.State)

	// Another replica stores a rule and cannot apply it: a partial pass does not see it, a full one does.
	cutOff := &rule.Service{Rules: rules, Buses: busRepo, Runtime: unreachable{}, Logger: log}
	_, err := cutOff.Create(ctx, "acme", "one", rule.Spec{Name: "late", EventPattern: []byte(`{"source":["s"]}`)})
	require.NoError(t, err)
	routed := func() string { return e.connectors(t)["eb.acme.one.router"].Info.Config["router.rules"] }
	reconcile(0, "the pause, as the last pass left it")
	require.Equal(t, "[]", routed())
	reconcile(3, "the fifth pass is full")
	require.Contains(t, routed(), `"source":["s"]`)

	// A bus the adapter knows nothing of as held is synced: here its connectors were removed and it still exists.
	b, err := busRepo.Get(ctx, "acme", "two")
	require.NoError(t, err)
	require.NoError(t, a.RemoveBus(ctx, b))
	reconcile(1, "a bus without a held digest is synced")
	require.Contains(t, e.connectors(t), "eb.acme.two.router")
}

// countingStampedRules counts the reads of a bus's rules, and stamps them by bus (connect.BusStamper).
type countingStampedRules struct {
	*persistence.RuleRepository
	reads atomic.Int64
}

func (r *countingStampedRules) ListByBus(ctx context.Context, busID string) ([]*rule.Rule, error) {
	r.reads.Add(1)
	return r.RuleRepository.ListByBus(ctx, busID)
}

// With repositories that stamp their rows by bus, a full pass syncs only the buses whose rows changed since their
// last sync by a full pass (and those a partial pass syncs); every twelfth full pass syncs every bus.
func TestFullPassSyncsOnlyTheBusesWhoseRowsChanged(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	busRepo := persistence.NewBusRepository(e.db)
	rules := &countingStampedRules{RuleRepository: persistence.NewRuleRepository(e.db)}
	a := connect.New(connect.Config{Runtime: e.client, Buses: busRepo, Rules: rules,
		Targets: persistence.NewTargetRepository(e.db), Streams: e.store, Physical: stream.Names{Cluster: "t"},
		Logger: log, States: e.states, FullPassEvery: 2})
	buses := &bus.Service{Buses: busRepo, Rules: rules.RuleRepository, Store: e.store, Runtime: a, Logger: log}
	reconcile := periodicPasses(t, a, &rules.reads)
	reconcile(0, "the first pass syncs every bus, and there is none yet")
	for _, name := range []string{"one", "two", "three"} {
		_, err := buses.Create(ctx, "acme", name, "", bus.Retention{})
		require.NoError(t, err)
	}
	reconcile(0, "partial: the runtime holds every bus as its creation left it")
	reconcile(3, "the first full pass after the creations: no bus was synced by a full pass yet")
	reconcile(0, "partial")
	reconcile(0, "full: no bus's rows changed since the last full pass synced it")

	// Another replica stores a rule and cannot apply it: a partial pass does not see it, the next full pass syncs
	// that bus alone.
	cutOff := &rule.Service{Rules: rules.RuleRepository, Buses: busRepo, Runtime: unreachable{}, Logger: log}
	_, err := cutOff.Create(ctx, "acme", "one", rule.Spec{Name: "late", EventPattern: []byte(`{"source":["s"]}`)})
	require.NoError(t, err)
	routed := func() string { return e.connectors(t)["eb.acme.one.router"].Info.Config["router.rules"] }
	reconcile(0, "partial")
	require.Equal(t, "[]", routed())
	reconcile(1, "full: the bus whose rules changed")
	require.Contains(t, routed(), `"source":["s"]`)

	// Another replica changes a bus and does not reach the runtime: the buses' stamp changed, so they are read
	// again, and the bus differs from what its last sync left: a partial pass syncs it.
	description := "changed elsewhere"
	_, err = busRepo.Update(ctx, "acme", "two", func(b *bus.Bus) error { return b.Apply(bus.Patch{Description: &description}) })
	require.NoError(t, err)
	reconcile(1, "partial: the bus another replica changed")
	reconcile(0, "full pass 4: nothing else changed")

	// The fourth full pass since the one that synced every bus was the one above; the twelfth syncs every bus.
	for full := 5; full <= 12; full++ {
		reconcile(0, "partial")
		want := int64(0)
		if full == 12 {
			want = 3
		}
		reconcile(want, fmt.Sprintf("full pass %d since the last that synced every bus", full))
	}
}
