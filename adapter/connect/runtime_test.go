package connect_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/connect"
	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/runtime"
	"github.com/eventbridge-go/eventbridge/rpc"
)

// TestRuntimePort drives a real worker through the adapter's runtime port: states, actions and the mapping of
// the worker's errors to the domain's.
func TestRuntimePort(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.buses.Create(ctx, "acc", "orders", "", bus.Retention{})
	require.NoError(t, err)
	router := connect.RouterName("acc", "orders")

	ws, err := e.adapter.Workers(ctx)
	require.NoError(t, err)
	require.Len(t, ws, 1)
	assert.Equal(t, "w1", ws[0].ID)

	waitState := func(state string) runtime.Connector {
		t.Helper()
		var got runtime.Connector
		require.Eventuallyf(t, func() bool {
			cs, err := e.adapter.Connectors(ctx)
			require.NoError(t, err)
			for _, c := range cs {
				if c.Name == router {
					got = c
				}
			}
			if got.State != state || len(got.Tasks) == 0 {
				return false
			}
			for _, task := range got.Tasks {
				if task.State != state {
					return false
				}
			}
			return true
		}, 20*time.Second, 50*time.Millisecond, "waiting for %s to be %s", router, state)
		return got
	}
	c := waitState(rpc.StateRunning)
	assert.Equal(t, rpc.TypeSink, c.Type)
	assert.Equal(t, "w1", c.WorkerID)
	assert.Equal(t, "w1", c.Tasks[0].WorkerID)

	require.NoError(t, e.adapter.Pause(ctx, router))
	waitState(rpc.StatePaused)
	require.NoError(t, e.adapter.Resume(ctx, router))
	waitState(rpc.StateRunning)
	require.NoError(t, e.adapter.Restart(ctx, router, true, false))
	waitState(rpc.StateRunning)
	require.NoError(t, e.adapter.RestartTask(ctx, router, 0))
	waitState(rpc.StateRunning)

	err = e.adapter.RestartTask(ctx, router, 9)
	assert.Truef(t, errors.Is(err, runtime.ErrTaskNotFound), "a task the connector does not have: %v", err)
	for name, act := range map[string]func(string) error{
		"pause":        func(c string) error { return e.adapter.Pause(ctx, c) },
		"resume":       func(c string) error { return e.adapter.Resume(ctx, c) },
		"stop":         func(c string) error { return e.adapter.Stop(ctx, c) },
		"restart":      func(c string) error { return e.adapter.Restart(ctx, c, false, false) },
		"restart task": func(c string) error { return e.adapter.RestartTask(ctx, c, 0) },
	} {
		err := act("eb.acc.nope.router")
		assert.Truef(t, errors.Is(err, runtime.ErrConnectorNotFound), "%s of a connector that does not exist: %v", name, err)
	}

	ps, err := e.adapter.Plugins(ctx)
	require.NoError(t, err)
	types := map[string]string{}
	for _, p := range ps {
		types[p.Class] = p.Type
	}
	assert.Equal(t, rpc.TypeSink, types["http"], "plugins: %+v", ps)
	schema, err := e.adapter.PluginSchema(ctx, "http")
	require.NoError(t, err)
	assert.Contains(t, schema, "properties")
	_, err = e.adapter.PluginSchema(ctx, "nope")
	assert.Truef(t, errors.Is(err, runtime.ErrPluginNotFound), "a plugin that does not exist: %v", err)
}

// TestRuntimePortUnreachable: every call to a runtime that cannot be reached fails with domain.ErrUnavailable.
func TestRuntimePortUnreachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := connect.New(connect.Config{Runtime: rpc.NewClient("http://127.0.0.1:1")}) // nothing listens on port 1
	var rt runtime.Runtime = a
	calls := map[string]func() error{
		"workers":       func() error { _, err := rt.Workers(ctx); return err },
		"connectors":    func() error { _, err := rt.Connectors(ctx); return err },
		"pause":         func() error { return rt.Pause(ctx, "eb.a.b.router") },
		"resume":        func() error { return rt.Resume(ctx, "eb.a.b.router") },
		"stop":          func() error { return rt.Stop(ctx, "eb.a.b.router") },
		"restart":       func() error { return rt.Restart(ctx, "eb.a.b.router", true, true) },
		"restart task":  func() error { return rt.RestartTask(ctx, "eb.a.b.router", 0) },
		"plugins":       func() error { _, err := rt.Plugins(ctx); return err },
		"plugin schema": func() error { _, err := rt.PluginSchema(ctx, "http"); return err },
	}
	for name, call := range calls {
		err := call()
		assert.Truef(t, errors.Is(err, domain.ErrUnavailable), "%s: %v", name, err)
		assert.Equalf(t, domain.KindUnavailable, domain.KindOf(err), "%s", name)
	}
}
