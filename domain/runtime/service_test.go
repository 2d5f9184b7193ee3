package runtime_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/runtime"
)

// port is a runtime with the connectors of names; err, when set, is what every call returns.
type port struct {
	names []string
	err   error
	acted []string
}

func (p *port) Workers(context.Context) ([]runtime.Worker, error) { return nil, p.err }
func (p *port) Connectors(context.Context) ([]runtime.Connector, error) {
	var out []runtime.Connector
	for _, n := range p.names {
		out = append(out, runtime.Connector{Name: n})
	}
	return out, p.err
}
func (p *port) act(c string) error {
	if p.err != nil {
		return p.err
	}
	for _, n := range p.names {
		if n == c {
			p.acted = append(p.acted, c)
			return nil
		}
	}
	return runtime.ErrConnectorNotFound
}
func (p *port) Pause(_ context.Context, c string) error              { return p.act(c) }
func (p *port) Resume(_ context.Context, c string) error             { return p.act(c) }
func (p *port) Stop(_ context.Context, c string) error               { return p.act(c) }
func (p *port) Restart(_ context.Context, c string, _, _ bool) error { return p.act(c) }
func (p *port) RestartTask(_ context.Context, c string, _ int) error { return p.act(c) }
func (p *port) Plugins(context.Context) ([]runtime.Plugin, error)    { return nil, p.err }
func (p *port) PluginSchema(context.Context, string) (map[string]any, error) {
	if p.err != nil {
		return nil, p.err
	}
	return nil, runtime.ErrPluginNotFound
}

func TestServiceShowsAnAccountItsOwnConnectorsOnly(t *testing.T) {
	t.Parallel()
	p := &port{names: []string{"eb.a.orders.router", "eb.ab.orders.router", "eb.b.orders.router", "other"}}
	s := &runtime.Service{Runtime: p}
	cs, err := s.Connectors(context.Background(), "a")
	require.NoError(t, err)
	require.Len(t, cs, 1)
	assert.Equal(t, "eb.a.orders.router", cs[0].Name)

	ctx := context.Background()
	require.NoError(t, s.Pause(ctx, "a", "eb.a.orders.router"))
	for _, c := range []string{"eb.b.orders.router", "eb.ab.orders.router", "other", "eb.a.nope.router"} {
		for name, act := range map[string]func() error{
			"pause":        func() error { return s.Pause(ctx, "a", c) },
			"resume":       func() error { return s.Resume(ctx, "a", c) },
			"stop":         func() error { return s.Stop(ctx, "a", c) },
			"restart":      func() error { return s.Restart(ctx, "a", c, true, false) },
			"restart task": func() error { return s.RestartTask(ctx, "a", c, 0) },
		} {
			err := act()
			assert.Truef(t, errors.Is(err, runtime.ErrConnectorNotFound), "%s %s: %v", name, c, err)
			assert.Equal(t, domain.KindNotFound, domain.KindOf(err))
		}
	}
	assert.Equal(t, []string{"eb.a.orders.router"}, p.acted, "the runtime acted on a's connector only")

	_, err = s.PluginSchema(ctx, "nope")
	assert.Truef(t, errors.Is(err, runtime.ErrPluginNotFound), "%v", err)
}

func TestServiceKeepsUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := &runtime.Service{Runtime: &port{names: []string{"eb.a.x.router"}, err: domain.ErrUnavailable.With("down")}}
	_, err := s.Workers(ctx)
	assert.Equal(t, domain.KindUnavailable, domain.KindOf(err))
	_, err = s.Connectors(ctx, "a")
	assert.Equal(t, domain.KindUnavailable, domain.KindOf(err))
	assert.Equal(t, domain.KindUnavailable, domain.KindOf(s.Pause(ctx, "a", "eb.a.x.router")))
	_, err = s.PluginSchema(ctx, "http")
	assert.Equal(t, domain.KindUnavailable, domain.KindOf(err))

	s = &runtime.Service{Runtime: &port{err: errors.New("boom")}}
	_, err = s.Plugins(ctx)
	assert.Equal(t, domain.KindInternal, domain.KindOf(err), "other failures are internal")
}

// states is an in-memory DesiredStates.
type states map[string]string

func (s states) SetDesiredState(_ context.Context, _, c, state string, _ time.Time) error {
	if state == runtime.StateRunning {
		delete(s, c)
	} else {
		s[c] = state
	}
	return nil
}
func (s states) ForgetDesiredState(_ context.Context, c string) error { delete(s, c); return nil }
func (s states) DesiredStates(context.Context) (map[string]string, error) {
	return maps.Clone(map[string]string(s)), nil
}

func TestServiceRecordsOperatorStates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := &port{names: []string{"eb.a.orders.r.t"}}
	st := states{}
	s := &runtime.Service{Runtime: p, States: st}

	require.NoError(t, s.Pause(ctx, "a", "eb.a.orders.r.t"))
	require.Equal(t, states{"eb.a.orders.r.t": runtime.StatePaused}, st)
	require.NoError(t, s.Stop(ctx, "a", "eb.a.orders.r.t"))
	require.Equal(t, states{"eb.a.orders.r.t": runtime.StateStopped}, st)
	require.NoError(t, s.Resume(ctx, "a", "eb.a.orders.r.t"))
	require.Empty(t, st)

	// Unknown connectors and other accounts' are refused and leave no record.
	require.ErrorIs(t, s.Pause(ctx, "a", "eb.a.orders.r.none"), runtime.ErrConnectorNotFound)
	require.ErrorIs(t, s.Pause(ctx, "b", "eb.a.orders.r.t"), runtime.ErrConnectorNotFound)
	require.Empty(t, st)

	// An unreachable runtime: the pause is recorded for the reconciler, and the error says so.
	p.err = domain.ErrUnavailable.With("down")
	err := s.Pause(ctx, "a", "eb.a.orders.r.t")
	require.ErrorIs(t, err, domain.ErrUnavailable)
	assert.Contains(t, err.Error(), "recorded")
	require.Equal(t, states{"eb.a.orders.r.t": runtime.StatePaused}, st)
}
