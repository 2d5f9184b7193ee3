package connect_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/connect"
	"github.com/eventbridge-go/eventbridge/adapter/eventstore"
	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"

	_ "github.com/eventbridge-go/eventbridge/worker/plugins/eventbus"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/webhook"
)

// sourceEnv is a control plane without its web layer, with sources: SQLite, an embedded NATS, a real worker and
// the adapter.
type sourceEnv struct {
	client  *rpc.Client
	buses   *bus.Service
	rules   *rule.Service
	targets *target.Service
	sources *source.Service
	repo    *persistence.SourceRepository
	names   stream.Names
}

func newSourceEnv(t *testing.T) *sourceEnv {
	t.Helper()
	ctx := context.Background()
	nenv := jetstreamtest.Start(t)
	key := bytes.Repeat([]byte{0x11}, rpc.MasterKeySize)
	w, err := worker.New(worker.Config{Token: testToken, NATS: nenv.Conn, ClusterID: "t", WorkerID: "w1", RESTAddr: "127.0.0.1:0",
		AllowPrivateTargets: true, MasterKey: key})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	sealer, err := connect.NewSealer(key)
	require.NoError(t, err)

	db := persistencetest.Open(t, persistence.SQLite)
	busRepo, ruleRepo, targetRepo := persistence.NewBusRepository(db), persistence.NewRuleRepository(db), persistence.NewTargetRepository(db)
	srcRepo := persistence.NewSourceRepository(db)
	store := eventstore.New(nenv.JS, "t", 1)
	client := rpc.NewClient(w.URL(), rpc.WithToken(testToken))
	log := slog.New(slog.DiscardHandler)
	a := connect.New(connect.Config{Runtime: client, Buses: busRepo, Rules: ruleRepo, Targets: targetRepo, Sources: srcRepo,
		Streams: store, Physical: stream.Names{Cluster: "t"}, Logger: log, Secrets: sealer})
	return &sourceEnv{
		client:  client,
		repo:    srcRepo,
		names:   stream.Names{Cluster: "t"},
		buses:   &bus.Service{Buses: busRepo, Rules: ruleRepo, Sources: srcRepo, Store: store, Runtime: a, Logger: log},
		rules:   &rule.Service{Rules: ruleRepo, Buses: busRepo, Runtime: a, Logger: log},
		targets: &target.Service{Targets: targetRepo, Rules: ruleRepo, Buses: busRepo, Runtime: a, Statuses: a, Logger: log},
		sources: &source.Service{Sources: srcRepo, Buses: busRepo, Runtime: a, Statuses: a, Intake: store, Sealer: sealer, Opener: sealer, Logger: log},
	}
}

func (e *sourceEnv) connectors(t *testing.T) map[string]rpc.ConnectorExpanded {
	t.Helper()
	c, err := e.client.ListConnectors(context.Background())
	require.NoError(t, err)
	return c
}

// Sources become source connectors whose output is their bus; the router and the targets are left as they are;
// a disabled source's connector is stopped; a deleted source's connector is removed, and nothing else.
func TestSourcesBecomeSourceConnectors(t *testing.T) {
	e := newSourceEnv(t)
	ctx := context.Background()
	b, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	up, err := e.buses.Create(ctx, "acme", "upstream", "", bus.Retention{})
	require.NoError(t, err)
	_, err = e.rules.Create(ctx, "acme", "orders", rule.Spec{Name: "r", EventPattern: []byte(`{"source":["s"]}`)})
	require.NoError(t, err)
	_, _, err = e.targets.Put(ctx, "acme", "orders", "r", httpSpec("t", "http://127.0.0.1:1/x"))
	require.NoError(t, err)
	before := e.connectors(t)
	routerName, targetName := connect.RouterName("acme", "orders"), connect.TargetName("acme", "orders", "r", "t")

	feed, err := e.sources.Create(ctx, "acme", "orders", source.Spec{Name: "feed", Type: "eventbus",
		Config: map[string]string{"bus": "upstream", "nats.password": "pw"}})
	require.NoError(t, err)
	hook, err := e.sources.Create(ctx, "acme", "orders", source.Spec{Name: "hook", Type: source.HTTP,
		Config: map[string]string{source.KeySignatureScheme: "github", source.KeySignatureSecret: "gh"}})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(feed.Config()["nats.password"], "enc:v2:"), "the plugin's secret keys are sealed")
	assert.True(t, strings.HasPrefix(hook.Config()[source.KeySignatureSecret], "enc:v2:"))

	after := e.connectors(t)
	feedName, hookName := connect.SourceName("acme", "orders", "feed"), connect.SourceName("acme", "orders", "hook")
	require.Contains(t, after, feedName)
	cfg := after[feedName].Info.Config
	assert.Equal(t, "eventbus-source", cfg[rpc.ConfigConnectorClass])
	assert.Equal(t, e.names.BusStream(up.ID()), cfg["source.stream"], "the adapter names the bus's stream")
	assert.Equal(t, e.names.BusIn(up.ID()), cfg["source.subject"])
	assert.Equal(t, e.names.BusIn(b.ID()), cfg["output.subject"])
	assert.Equal(t, e.names.BusStream(b.ID()), cfg["output.stream"])
	assert.True(t, strings.HasPrefix(cfg["nats.password"], rpc.SecretPrefixV2), "the connector carries the secret sealed for itself")
	assert.NotEqual(t, feed.Config()["nats.password"], cfg["nats.password"])
	p, err := rpc.OpenSecret(bytes.Repeat([]byte{0x11}, rpc.MasterKeySize), rpc.ConnectorBinding("t", feedName, "nats.password"), cfg["nats.password"])
	require.NoError(t, err)
	assert.Equal(t, "pw", p)
	assert.Empty(t, cfg[rpc.ConfigTopics], "a source connector has no topics")
	assert.Equal(t, "all", cfg["errors.tolerance"], "a record the store refuses neither fails nor stops the source")
	assert.Equal(t, e.names.DLQSubject("acme"), cfg["errors.deadletterqueue.topic.name"], "it goes to the account's dead letters")
	hookCfg := after[hookName].Info.Config
	assert.Equal(t, "http-source", hookCfg[rpc.ConfigConnectorClass])
	assert.Equal(t, e.names.SourceSubject(b.ID(), hook.ID()), hookCfg["source.subject"])
	assert.Equal(t, e.names.BusStream(b.ID()), hookCfg["source.stream"])
	assert.Equal(t, before[routerName].Info.Config, after[routerName].Info.Config, "the router is left as it was")
	assert.Equal(t, before[targetName].Info.Config, after[targetName].Info.Config, "the target is left as it was")

	st := e.sources.Status(ctx, feed)
	assert.Equal(t, rpc.StateRunning, st.State)
	require.Len(t, st.Tasks, 1)

	_, err = e.sources.Disable(ctx, "acme", "orders", "feed")
	require.NoError(t, err)
	assert.Equal(t, rpc.StateStopped, e.connectors(t)[feedName].Status.Connector.State)
	assert.Equal(t, rpc.StateStopped, e.sources.Status(ctx, feed).State)
	_, err = e.sources.Enable(ctx, "acme", "orders", "feed")
	require.NoError(t, err)
	assert.Equal(t, rpc.StateRunning, e.connectors(t)[feedName].Status.Connector.State)

	require.NoError(t, e.sources.Delete(ctx, "acme", "orders", "feed"))
	now := e.connectors(t)
	assert.NotContains(t, now, feedName)
	assert.Contains(t, now, hookName)
	assert.Contains(t, now, targetName, "deleting a source leaves the targets")
	assert.Equal(t, before[routerName].Info.Config, now[routerName].Info.Config)

	err = e.buses.Delete(ctx, "acme", "orders")
	assert.ErrorIs(t, err, bus.ErrNotEmpty)
}

// The runtime's plugins decide the types and check the configs; an unreachable runtime is ErrUnavailable.
func TestSourceValidationThroughTheRuntime(t *testing.T) {
	e := newSourceEnv(t)
	ctx := context.Background()
	_, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)

	_, err = e.sources.Create(ctx, "acme", "orders", source.Spec{Name: "x", Type: "nosuch"})
	require.ErrorIs(t, err, source.ErrUnknownType)
	assert.Contains(t, err.Error(), "eventbus", "the error names the types there are")
	assert.Contains(t, err.Error(), "http")

	_, err = e.sources.Create(ctx, "acme", "orders", source.Spec{Name: "x", Type: "eventbus",
		Config: map[string]string{"nats.url": "nats://nats.example.com:4222", "source.stream": "a.b", "source.batch.size": "zero"}})
	require.ErrorIs(t, err, source.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "config.source.stream")
	assert.Contains(t, err.Error(), "config.source.batch.size", "every problem is named")

	_, err = e.sources.Create(ctx, "acme", "orders", source.Spec{Name: "x", Type: source.HTTP,
		Config: map[string]string{source.KeyMethods: "FETCH"}})
	require.ErrorIs(t, err, source.ErrInvalidConfig)
	assert.Contains(t, err.Error(), source.KeyMethods)

	e.client.BaseURL = "http://127.0.0.1:1" // nothing listens there
	_, err = e.sources.Create(ctx, "acme", "orders", source.Spec{Name: "x", Type: "eventbus",
		Config: map[string]string{"nats.url": "nats://nats.example.com:4222", "source.stream": "S"}})
	require.Error(t, err)
	de, ok := domain.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, domain.KindUnavailable, de.Kind)
	names, err := e.repo.NamesByBus(ctx, mustBusID(t, e, "orders"))
	require.NoError(t, err)
	assert.Empty(t, names, "nothing is stored when the config cannot be checked")
}

func mustBusID(t *testing.T, e *sourceEnv, name string) string {
	t.Helper()
	b, err := e.buses.Get(context.Background(), "acme", name)
	require.NoError(t, err)
	return b.ID()
}

// An eventbus source stored by a version that let it name any stream of the installation's NATS (another account's
// bus, the runtime's KV) does not run: its connector is removed until config.bus replaces the stream.
func TestRawStreamSourceDoesNotRun(t *testing.T) {
	e := newSourceEnv(t)
	ctx := context.Background()
	b, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	_, err = e.buses.Create(ctx, "acme", "upstream", "", bus.Retention{})
	require.NoError(t, err)
	good, err := e.sources.Create(ctx, "acme", "orders", source.Spec{Name: "good", Type: source.EventBus,
		Config: map[string]string{"bus": "upstream"}})
	require.NoError(t, err)
	require.Contains(t, e.connectors(t), connect.SourceName("acme", "orders", good.Name()))
	now := time.Now()
	raw := source.UnmarshalFromDatabase(domain.NewID(), "acme", b.ID(), "raw", source.EventBus, "",
		map[string]string{"source.stream": "KV_t_connectors"}, nil, source.Enabled, "", now, now, 0)
	require.NoError(t, e.repo.Create(ctx, raw, 100))
	require.NoError(t, e.buses.Runtime.SyncBus(ctx, b))
	got := e.connectors(t)
	assert.NotContains(t, got, connect.SourceName("acme", "orders", "raw"))
	assert.Contains(t, got, connect.SourceName("acme", "orders", good.Name()), "the bus's other sources run")
}
