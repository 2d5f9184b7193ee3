package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/health"
)

// Service holds the runtime use cases of an account. An account sees and acts on its own connectors only, the
// ones named eb.<account>.…; another account's connector is answered as one that does not exist. Workers and
// plugins are shared by every account.
type Service struct {
	Runtime Runtime
	// States records operators' pauses and stops for the reconciler; nil leaves them to the runtime alone.
	States DesiredStates
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Health holds the thresholds of connectors' health (zero fields: the defaults), as targets'.
	Health health.Rules
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// prefix is the start of the names of an account's connectors (account ids hold no dot).
func prefix(accountID string) string { return "eb." + accountID + "." }

// owns reports whether the connector belongs to the account.
func owns(accountID, connector string) bool { return strings.HasPrefix(connector, prefix(accountID)) }

// Workers lists the live workers. Errors: domain.ErrUnavailable.
func (s *Service) Workers(ctx context.Context) ([]Worker, error) {
	ws, err := s.Runtime.Workers(ctx)
	if err != nil {
		return nil, wrap(err, "listing the runtime's workers")
	}
	return ws, nil
}

// Connectors lists the account's connectors, ordered by name. Errors: domain.ErrUnavailable.
func (s *Service) Connectors(ctx context.Context, accountID string) ([]Connector, error) {
	all, err := s.Runtime.Connectors(ctx)
	if err != nil {
		return nil, wrap(err, "listing the runtime's connectors")
	}
	out := make([]Connector, 0, len(all))
	now := s.now()
	for _, c := range all {
		if owns(accountID, c.Name) {
			tasks := make([]health.Task, len(c.Tasks))
			for i, t := range c.Tasks {
				tasks[i] = health.Task{State: t.State, Facts: t.Health}
			}
			v := health.Judge(c.State, tasks, s.Health, now)
			c.Health, c.LastFailure, c.LastSuccessAt = v.State, v.LastFailure, v.LastSuccessAt
			out = append(out, c)
		}
	}
	return out, nil
}

// act runs fn on the account's connector: ErrConnectorNotFound when the account has no connector of that name.
func (s *Service) act(ctx context.Context, accountID, connector, what string, fn func() error) error {
	if !owns(accountID, connector) {
		return ErrConnectorNotFound.With("connector %q does not exist", connector)
	}
	if err := fn(); err != nil {
		if errors.Is(err, ErrConnectorNotFound) {
			return ErrConnectorNotFound.With("connector %q does not exist", connector)
		}
		return wrap(err, what+" connector "+connector)
	}
	return nil
}

// Pause pauses the account's connector and records the pause, so reconciliation keeps it paused until Resume.
// When the runtime cannot be reached the pause stays recorded and is applied when it is back (the error says so).
// Errors: ErrConnectorNotFound, domain.ErrUnavailable.
func (s *Service) Pause(ctx context.Context, accountID, connector string) error {
	return s.setState(ctx, accountID, connector, StatePaused, "pausing", s.Runtime.Pause)
}

// Resume resumes the account's connector and forgets an operator's pause or stop. Errors: ErrConnectorNotFound,
// domain.ErrUnavailable.
func (s *Service) Resume(ctx context.Context, accountID, connector string) error {
	return s.setState(ctx, accountID, connector, StateRunning, "resuming", s.Runtime.Resume)
}

// Stop stops the account's connector (its tasks end; resume starts them again) and records the stop, as Pause
// does. Errors: ErrConnectorNotFound, domain.ErrUnavailable.
func (s *Service) Stop(ctx context.Context, accountID, connector string) error {
	return s.setState(ctx, accountID, connector, StateStopped, "stopping", s.Runtime.Stop)
}

// setState records the desired state first (so a reconciliation running meanwhile keeps it), then asks the
// runtime. A connector the runtime does not have loses the record again.
func (s *Service) setState(ctx context.Context, accountID, connector, state, what string, apply func(context.Context, string) error) error {
	if !owns(accountID, connector) {
		return ErrConnectorNotFound.With("connector %q does not exist", connector)
	}
	if s.States != nil {
		if err := s.States.SetDesiredState(ctx, accountID, connector, state, s.now()); err != nil {
			return err
		}
	}
	err := s.act(ctx, accountID, connector, what, func() error { return apply(ctx, connector) })
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrConnectorNotFound) && s.States != nil && state != StateRunning:
		if ferr := s.States.ForgetDesiredState(ctx, connector); ferr != nil {
			return ferr
		}
	case errors.Is(err, domain.ErrUnavailable) && s.States != nil:
		return domain.ErrUnavailable.With("the worker runtime cannot be reached; %s connector %s is recorded and "+
			"applied when it is back", what, connector)
	}
	return err
}

// Restart restarts the account's connector (see Runtime.Restart). Errors: ErrConnectorNotFound,
// domain.ErrUnavailable.
func (s *Service) Restart(ctx context.Context, accountID, connector string, includeTasks, onlyFailed bool) error {
	return s.act(ctx, accountID, connector, "restarting", func() error {
		return s.Runtime.Restart(ctx, connector, includeTasks, onlyFailed)
	})
}

// RestartTask restarts one task of the account's connector. Errors: ErrConnectorNotFound, ErrTaskNotFound,
// domain.ErrUnavailable.
func (s *Service) RestartTask(ctx context.Context, accountID, connector string, task int) error {
	return s.act(ctx, accountID, connector, "restarting a task of", func() error {
		err := s.Runtime.RestartTask(ctx, connector, task)
		if errors.Is(err, ErrTaskNotFound) {
			return ErrTaskNotFound.With("connector %q has no task %d", connector, task)
		}
		return err
	})
}

// Plugins lists the connector plugins the workers offer. Errors: domain.ErrUnavailable.
func (s *Service) Plugins(ctx context.Context) ([]Plugin, error) {
	ps, err := s.Runtime.Plugins(ctx)
	if err != nil {
		return nil, wrap(err, "listing the runtime's plugins")
	}
	return ps, nil
}

// PluginSchema returns the JSON Schema of a plugin's config. Errors: ErrPluginNotFound, domain.ErrUnavailable.
func (s *Service) PluginSchema(ctx context.Context, plugin string) (map[string]any, error) {
	schema, err := s.Runtime.PluginSchema(ctx, plugin)
	if errors.Is(err, ErrPluginNotFound) {
		return nil, ErrPluginNotFound.With("plugin %q does not exist", plugin)
	}
	if err != nil {
		return nil, wrap(err, "reading the schema of plugin "+plugin)
	}
	return schema, nil
}

// wrap keeps domain errors (ErrTaskNotFound, domain.ErrUnavailable, ...) as they are and wraps the others as
// internal failures.
func wrap(err error, what string) error {
	if _, ok := domain.As(err); ok {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}
