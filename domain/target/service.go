package target

import (
	"context"
	"errors"
	"log/slog"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/rule"
)

// Runtime applies a bus's declared rules and targets to the worker runtime.
type Runtime interface {
	// SyncBus returns once the runtime applied the bus's declared state: a new target's connector and its
	// consumer exist when it returns.
	SyncBus(ctx context.Context, b *bus.Bus) error
}

// Service holds the use cases of targets.
type Service struct {
	Targets Repository
	Rules   rule.Repository
	Buses   bus.Repository
	Runtime Runtime
	// Statuses reads runtime states; nil means every target shows PENDING.
	Statuses StatusReader
	Logger   *slog.Logger
	Clock    domain.Clock
}

func (s *Service) lookup(ctx context.Context, accountID, busName, ruleName string) (*bus.Bus, *rule.Rule, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, nil, err
	}
	r, err := s.Rules.Get(ctx, b.ID(), ruleName)
	if err != nil {
		return nil, nil, err
	}
	return b, r, nil
}

// Put creates the target or replaces its configuration; created tells which. A new target receives every event
// routed to its rule after the call answered. Errors: bus/rule ErrNotFound, ErrLimitExceeded, validation.
func (s *Service) Put(ctx context.Context, accountID, busName, ruleName string, spec Spec) (t *Target, created bool, err error) {
	b, r, err := s.lookup(ctx, accountID, busName, ruleName)
	if err != nil {
		return nil, false, err
	}
	t, err = s.Targets.Update(ctx, r.ID(), spec.Name, func(t *Target) error { return t.Change(spec, s.Clock.Now()) })
	if errors.Is(err, ErrNotFound) {
		t, err = New(accountID, b.ID(), r.ID(), spec, s.Clock.Now())
		if err != nil {
			return nil, false, err
		}
		if err := s.Targets.Create(ctx, t); err != nil {
			return nil, false, err
		}
		created = true
	} else if err != nil {
		return nil, false, err
	}
	s.sync(ctx, b)
	return t, created, nil
}

// Get returns ErrNotFound (of the bus, the rule or the target) when one does not exist.
func (s *Service) Get(ctx context.Context, accountID, busName, ruleName, name string) (*Target, error) {
	_, r, err := s.lookup(ctx, accountID, busName, ruleName)
	if err != nil {
		return nil, err
	}
	return s.Targets.Get(ctx, r.ID(), name)
}

// List returns a rule's targets (at most MaxPerRule, so unpaged).
func (s *Service) List(ctx context.Context, accountID, busName, ruleName string) ([]*Target, error) {
	_, r, err := s.lookup(ctx, accountID, busName, ruleName)
	if err != nil {
		return nil, err
	}
	return s.Targets.ListByRule(ctx, r.ID())
}

// Delete deletes a target and its connector.
func (s *Service) Delete(ctx context.Context, accountID, busName, ruleName, name string) error {
	b, r, err := s.lookup(ctx, accountID, busName, ruleName)
	if err != nil {
		return err
	}
	if err := s.Targets.Delete(ctx, r.ID(), name); err != nil {
		return err
	}
	s.sync(context.WithoutCancel(ctx), b)
	return nil
}

// sync asks the runtime to apply the bus's declared state. A failure is logged, not returned: the reconciler
// retries, and the target shows PENDING meanwhile.
func (s *Service) sync(ctx context.Context, b *bus.Bus) {
	if err := s.Runtime.SyncBus(ctx, b); err != nil {
		s.Logger.Warn("runtime not in step yet; the reconciler will retry", "bus", b.ID(), "err", err)
	}
}
