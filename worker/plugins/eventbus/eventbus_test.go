package eventbus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/eventbus"
)

var names = stream.Names{Cluster: "eb"}

const (
	from = "src"
	to   = "dst"
)

func newSink(t *testing.T, env *jetstreamtest.Env, cfg map[string]string, connectorName string) *eventbus.Sink {
	t.Helper()
	spec := eventbus.Plugin().FullSpec()
	s, err := eventbus.New(spec.Values(cfg), connector.Env{JetStream: env.JS, Names: names, Connector: connectorName})
	require.NoError(t, err)
	require.NoError(t, s.Connect(context.Background()))
	t.Cleanup(func() { _ = s.Close() })
	return s.(*eventbus.Sink)
}

func TestConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		cfg         map[string]string
		names       stream.Names
		wantSubject string
		wantStream  string
		wantKey     string
		wantMsg     string
	}{
		{name: "bus id", cfg: map[string]string{eventbus.KeyBusID: "orders"}, names: names,
			wantSubject: "eb.bus.orders.in", wantStream: "eb_BUS_orders"},
		{name: "subject", cfg: map[string]string{eventbus.KeySubject: "eb.bus.orders.in"}, names: names,
			wantSubject: "eb.bus.orders.in", wantStream: "eb_BUS_orders"},
		{name: "subject validated without names", cfg: map[string]string{eventbus.KeySubject: "x.bus.b-1.in"},
			wantSubject: "x.bus.b-1.in", wantStream: "x_BUS_b-1"},
		{name: "neither", cfg: map[string]string{}, names: names, wantKey: eventbus.KeyBusID, wantMsg: "is required"},
		{name: "both", cfg: map[string]string{eventbus.KeyBusID: "a", eventbus.KeySubject: "eb.bus.a.in"}, names: names,
			wantKey: eventbus.KeySubject, wantMsg: "not both"},
		{name: "bus id with a dot", cfg: map[string]string{eventbus.KeyBusID: "a.b"}, names: names,
			wantKey: eventbus.KeyBusID, wantMsg: "a bus id is"},
		{name: "bus id with a wildcard", cfg: map[string]string{eventbus.KeyBusID: "*"}, names: names,
			wantKey: eventbus.KeyBusID, wantMsg: "a bus id is"},
		{name: "rule subject", cfg: map[string]string{eventbus.KeySubject: "eb.bus.a.rule.r1"}, names: names,
			wantKey: eventbus.KeySubject, wantMsg: "not the input subject of a bus"},
		{name: "wildcard subject", cfg: map[string]string{eventbus.KeySubject: "eb.bus.*.in"}, names: names,
			wantKey: eventbus.KeySubject, wantMsg: "not the input subject of a bus"},
		{name: "other cluster", cfg: map[string]string{eventbus.KeySubject: "other.bus.a.in"}, names: names,
			wantKey: eventbus.KeySubject, wantMsg: `cluster "other"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := eventbus.Plugin().FullSpec()
			s, err := eventbus.New(spec.Values(tt.cfg), connector.Env{Names: tt.names})
			if tt.wantKey == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.wantSubject, s.(*eventbus.Sink).Subject())
				assert.Equal(t, tt.wantStream, s.(*eventbus.Sink).Stream())
				return
			}
			var fe connector.FieldErrors
			require.ErrorAs(t, err, &fe)
			require.Len(t, fe, 1)
			assert.Equal(t, tt.wantKey, fe[0].Key)
			assert.Contains(t, fe[0].Message, tt.wantMsg)
		})
	}
}

// The registry's validation reports the problems of the plugin's keys like any other.
func TestRegistryValidate(t *testing.T) {
	t.Parallel()
	r := connector.NewRegistry()
	require.NoError(t, r.Register(eventbus.Plugin()))
	cfg := map[string]string{
		connector.KeyClass: eventbus.Name, connector.KeyTopics: "eb.bus.src.rule.r1", connector.KeyStream: "eb_BUS_src",
		connector.KeyDurable: "fwd",
	}
	_, errs := r.Validate(cfg, connector.Env{})
	require.Len(t, errs, 1)
	assert.Equal(t, eventbus.KeyBusID, errs[0].Key)
	cfg[eventbus.KeyBusID] = "dst"
	_, errs = r.Validate(cfg, connector.Env{})
	assert.Empty(t, errs)
}

func meta(seq uint64, id string) connector.Meta {
	return connector.Meta{Stream: names.BusStream(from), Subject: names.RuleSubject(from, "r1"), Sequence: seq,
		Attempt: 1, MsgID: id}
}

func TestWriteStoresOnceOnTheDestinationBus(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	require.NoError(t, names.EnsureBusStream(context.Background(), env.JS, to, time.Hour, -1, 1))
	fwd := newSink(t, env, map[string]string{eventbus.KeyBusID: to}, "fwd")
	other := newSink(t, env, map[string]string{eventbus.KeySubject: names.BusIn(to)}, "other")

	e := jetstreamtest.Event("e1", "order.created", map[string]any{"n": 1})
	e.SetSubject("orders/1")
	e.SetExtension("tenant", "acme")
	ctx := connector.WithMeta(context.Background(), meta(7, "prev-id"))
	for range 3 { // a retried forward
		require.NoError(t, fwd.Write(ctx, e))
	}
	require.NoError(t, other.Write(ctx, e))

	stored := env.Messages(t, names.BusStream(to), names.BusIn(to))
	require.Len(t, stored, 2, "a retried forward is stored once; another connector's forward is another copy")
	assert.Equal(t, stream.HopMsgID("prev-id", "forward", "fwd"), stored[0].MsgID)
	assert.Equal(t, stream.HopMsgID("prev-id", "forward", "other"), stored[1].MsgID)
	got := stored[0].Event
	assert.Equal(t, "e1", got.ID())
	assert.Equal(t, "order.created", got.Type())
	assert.Equal(t, "test/source", got.Source())
	assert.Equal(t, "orders/1", got.Subject())
	assert.Equal(t, "acme", got.Extensions()["tenant"])
	assert.JSONEq(t, `{"n": 1}`, string(got.Data()))

	// Without a Nats-Msg-Id, the record's id is stream:sequence.
	m := meta(8, "")
	require.NoError(t, fwd.Write(connector.WithMeta(context.Background(), m), e))
	stored = env.Messages(t, names.BusStream(to), names.BusIn(to))
	require.Len(t, stored, 3)
	assert.Equal(t, stream.HopMsgID(fmt.Sprintf("%s:8", names.BusStream(from)), "forward", "fwd"), stored[2].MsgID)
}

func TestWriteErrors(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	fwd := newSink(t, env, map[string]string{eventbus.KeyBusID: to}, "fwd")
	e := jetstreamtest.Event("e1", "t", nil)
	ctx := connector.WithMeta(context.Background(), meta(1, "id"))

	tests := []struct {
		name      string
		setup     func(t *testing.T)
		ctx       context.Context
		wantErr   string
		permanent bool
	}{
		{name: "missing stream", ctx: ctx, wantErr: "does not exist"},
		{name: "another stream holds the subject", setup: func(t *testing.T) {
			env.Stream(t, "WRONG", names.BusIn(to))
		}, ctx: ctx, wantErr: "storing the record"},
		{name: "loop", ctx: connector.WithMeta(context.Background(), connector.Meta{Stream: names.BusStream(to),
			Subject: names.BusIn(to), Sequence: 1}), wantErr: "would loop", permanent: true},
	}
	for _, tt := range tests { // sequential: they share the server
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup(t)
			}
			err := fwd.Write(tt.ctx, e)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Equal(t, tt.permanent, connector.IsPermanent(err))
		})
	}
}

// Through the runtime: a connector forwards the records of a rule of one bus to another bus that does not exist
// yet; the records wait, unacked, and are all stored once the destination bus exists.
func TestForwardWaitsForTheDestinationBus(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	require.NoError(t, names.EnsureBusStream(ctx, env.JS, from, time.Hour, -1, 1))
	rule := names.RuleSubject(from, "r1")
	dc := delivery.Config{Stream: names.BusStream(from), Subject: rule, Durable: "fwd", Tasks: 1,
		Tolerance: connector.ToleranceNone,
		Retry:     delivery.RetryPolicy{MaxRetries: 1000, MaxAge: -1, InitialDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond}}
	cons, err := delivery.EnsureConsumer(ctx, env.JS, dc, delivery.AckWait)
	require.NoError(t, err)
	s := newSink(t, env, map[string]string{eventbus.KeyBusID: to}, "fwd")
	task, err := delivery.Start(ctx, delivery.TaskConfig{Consumer: cons, Sink: s, Handler: dc.Chain(s),
		AckWait: delivery.AckWait})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })

	ids := env.PublishN(t, rule, "fwd", 20)
	require.Eventually(t, func() bool { return task.Counters().Retried >= 2 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, uint64(0), env.ConsumerInfo(t, names.BusStream(from), "fwd").AckFloor.Stream)

	require.NoError(t, names.EnsureBusStream(ctx, env.JS, to, time.Hour, -1, 1))
	require.Eventually(t, func() bool {
		i := env.ConsumerInfo(t, names.BusStream(from), "fwd")
		return i.NumAckPending == 0 && i.NumPending == 0 && i.AckFloor.Stream == 20
	}, 20*time.Second, 10*time.Millisecond, "every record acked once stored")
	stored := env.Messages(t, names.BusStream(to), names.BusIn(to))
	got := []string{}
	for _, st := range stored {
		got = append(got, st.Event.ID())
	}
	assert.ElementsMatch(t, ids, got, "each record stored once")
}
