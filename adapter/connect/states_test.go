package connect_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/connect"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/runtime"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
)

// connectorState waits until the runtime reports the connector in want.
func (e *env) connectorState(t *testing.T, name, want string) {
	t.Helper()
	require.Eventuallyf(t, func() bool {
		st, err := e.client.ConnectorStatus(context.Background(), name)
		return err == nil && st.Connector.State == want
	}, 20*time.Second, 20*time.Millisecond, "connector %s never became %s", name, want)
}

// An operator's pause and stop are desired state: reconciliation keeps them when the connector is deleted by
// hand and recreated, and when its config changes; a resume ends them; a deleted target's record is forgotten.
func TestOperatorStatesAreKeptByReconciliation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	ops := &runtime.Service{Runtime: e.adapter, States: e.states}

	_, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	_, err = e.rules.Create(ctx, "acme", "orders", rule.Spec{Name: "all", EventPattern: []byte(`{"source":[{"prefix":""}]}`)})
	require.NoError(t, err)
	_, _, err = e.targets.Put(ctx, "acme", "orders", "all", httpSpec("hook", srv.URL))
	require.NoError(t, err)
	name := "eb.acme.orders.all.hook"
	e.connectorState(t, name, rpc.StateRunning)

	require.NoError(t, ops.Pause(ctx, "acme", name))
	e.connectorState(t, name, rpc.StatePaused)
	states, err := e.states.DesiredStates(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]string{name: runtime.StatePaused}, states)

	// Reconciliation leaves it paused; deleted by hand, it comes back paused.
	require.NoError(t, e.adapter.ReconcileAll(ctx))
	e.connectorState(t, name, rpc.StatePaused)
	require.NoError(t, e.client.DeleteConnector(ctx, name))
	require.NoError(t, e.adapter.ReconcileAll(ctx))
	e.connectorState(t, name, rpc.StatePaused)

	// Resumed on the worker behind the control plane's back: reconciliation pauses it again.
	require.NoError(t, e.client.ResumeConnector(ctx, name))
	e.connectorState(t, name, rpc.StateRunning)
	require.NoError(t, e.adapter.ReconcileAll(ctx))
	e.connectorState(t, name, rpc.StatePaused)

	// A config change keeps the state; a stop wins over the pause record it replaces.
	spec := httpSpec("hook", srv.URL+"/v2")
	_, _, err = e.targets.Put(ctx, "acme", "orders", "all", spec)
	require.NoError(t, err)
	e.connectorState(t, name, rpc.StatePaused)
	require.NoError(t, ops.Stop(ctx, "acme", name))
	e.connectorState(t, name, rpc.StateStopped)
	require.NoError(t, e.adapter.ReconcileAll(ctx))
	e.connectorState(t, name, rpc.StateStopped)

	// Resume forgets the record; reconciliation then keeps it running.
	require.NoError(t, ops.Resume(ctx, "acme", name))
	e.connectorState(t, name, rpc.StateRunning)
	states, err = e.states.DesiredStates(ctx)
	require.NoError(t, err)
	require.Empty(t, states)
	require.NoError(t, e.adapter.ReconcileAll(ctx))
	e.connectorState(t, name, rpc.StateRunning)

	// A pause of a connector that does not exist is refused and not recorded.
	err = ops.Pause(ctx, "acme", "eb.acme.orders.all.nope")
	require.ErrorIs(t, err, runtime.ErrConnectorNotFound)
	states, err = e.states.DesiredStates(ctx)
	require.NoError(t, err)
	require.Empty(t, states)

	// The record of a deleted target goes at the next reconciliation.
	require.NoError(t, ops.Pause(ctx, "acme", name))
	require.NoError(t, e.targets.Delete(ctx, "acme", "orders", "all", "hook"))
	require.NoError(t, e.adapter.ReconcileAll(ctx))
	states, err = e.states.DesiredStates(ctx)
	require.NoError(t, err)
	require.Empty(t, states)
}

// With a lease, only the replica that holds it reconciles; when it gives the lease up, another takes over.
func TestOnlyTheLeaseHolderReconciles(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	replica := func(holder string) (*connect.Adapter, *persistence.Lease) {
		lease := persistence.NewLease(e.db, "reconciler", holder, time.Minute)
		return connect.New(connect.Config{Runtime: e.client, Buses: persistence.NewBusRepository(e.db),
			Rules: persistence.NewRuleRepository(e.db), Targets: persistence.NewTargetRepository(e.db),
			Streams: e.store, Physical: stream.Names{Cluster: "t"}, Logger: log, States: e.states, Lease: lease}), lease
	}
	a, leaseA := replica("a")
	b, _ := replica("b")
	_, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	require.NoError(t, e.client.DeleteConnector(ctx, "eb.acme.orders.router"))

	held, err := b.Reconcile(ctx)
	require.NoError(t, err)
	require.True(t, held, "the first replica to ask takes the free lease")
	require.Contains(t, e.connectors(t), "eb.acme.orders.router")

	require.NoError(t, e.client.DeleteConnector(ctx, "eb.acme.orders.router"))
	held, err = a.Reconcile(ctx)
	require.NoError(t, err)
	require.False(t, held, "b holds the lease")
	require.NotContains(t, e.connectors(t), "eb.acme.orders.router", "a did not reconcile")

	_, leaseB := replica("b")
	require.NoError(t, leaseB.Release(ctx))
	held, err = a.Reconcile(ctx)
	require.NoError(t, err)
	require.True(t, held)
	require.Contains(t, e.connectors(t), "eb.acme.orders.router")
	require.NoError(t, leaseA.Release(ctx))
}
