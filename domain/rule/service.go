package rule

import (
	"context"
	"errors"
	"log/slog"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
)

// Runtime applies a bus's declared rules and targets to the worker runtime.
type Runtime interface {
	// SyncBus returns once the runtime applied the bus's declared state (the router's rule table included).
	SyncBus(ctx context.Context, b *bus.Bus) error
}

// Service holds the use cases of rules.
type Service struct {
	Rules   Repository
	Buses   bus.Repository
	Runtime Runtime
	Logger  *slog.Logger
	Clock   domain.Clock
	// MaxWildcardRules is how many rules of a bus may use wildcards; 0 means DefaultMaxWildcardRules.
	MaxWildcardRules int
	// MaxPerBus is the quota of rules per bus; 0 means DefaultMaxPerBus.
	MaxPerBus int
	// Counters reads the counters of rules from the runtime; nil answers none.
	Counters CountersReader
}

// DefaultMaxPerBus is the default quota of rules per bus.
const DefaultMaxPerBus = 300

// Quota is how many rules a bus may have.
func (s *Service) Quota() int {
	if s.MaxPerBus > 0 {
		return s.MaxPerBus
	}
	return DefaultMaxPerBus
}

// Patch is a change of a rule: the fields that are set are replaced.
type Patch struct {
	Description  *string
	EventPattern []byte // nil keeps the pattern and its syntax
	// Syntax is the syntax of EventPattern when it is set.
	Syntax Syntax
	State  *State
	Layout []byte // nil keeps the layout; JSON null removes it
}

// Spec is what a caller declares about a rule.
type Spec struct {
	Name         string
	Description  string
	EventPattern []byte
	// Syntax is the syntax EventPattern is written in (CloudEvents when empty).
	Syntax Syntax
	State  State
	// Layout is what a client stores about how the rule is drawn (see Rule.SetLayout); nil for none.
	Layout []byte
}

// Create creates a rule. It answers once the router routes to it (or at once, logged, while the runtime is
// unreachable): the rule receives every matching event stored from then on. Errors: bus.ErrNotFound,
// ErrAlreadyExists, ErrInvalidEventPattern (also when the bus has too many rules with wildcards), validation.
func (s *Service) Create(ctx context.Context, accountID, busName string, spec Spec) (*Rule, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, err
	}
	r, err := s.Build(ctx, b, spec)
	if err != nil {
		return nil, err
	}
	quota := s.Quota()
	n, err := s.Rules.CountByBus(ctx, b.ID())
	if err != nil {
		return nil, err
	}
	if n >= quota {
		return nil, ErrQuotaExceeded.With("quota exceeded: rules per bus (%d); bus %q has %d", quota, busName, n)
	}
	if err := s.Rules.Create(ctx, r); err != nil {
		return nil, err
	}
	s.sync(ctx, b)
	return r, nil
}

// Build makes a new rule of spec on b, checked as Create checks it (its fields, its layout, its pattern's
// wildcards against the bus's other rules), without storing it.
func (s *Service) Build(ctx context.Context, b *bus.Bus, spec Spec) (*Rule, error) {
	now := s.Clock.Now()
	r, err := New(b.AccountID(), b.ID(), spec.Name, spec.Description, spec.EventPattern, spec.Syntax, spec.State, now)
	if err != nil {
		return nil, err
	}
	if err := r.SetLayout(spec.Layout, now); err != nil {
		return nil, err
	}
	if err := s.CheckWildcards(ctx, b.ID(), r.Name(), r.MatchPattern()); err != nil {
		return nil, err
	}
	return r, nil
}

// Patch changes the fields of p on an existing rule and answers once the router applied the change. Errors:
// bus.ErrNotFound, ErrNotFound, ErrInvalidEventPattern, validation.
func (s *Service) Patch(ctx context.Context, accountID, busName, name string, p Patch) (*Rule, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, err
	}
	if p.EventPattern != nil {
		if err := s.checkWildcardsAs(ctx, b.ID(), name, p.EventPattern, p.Syntax); err != nil {
			return nil, err
		}
	}
	r, err := s.Rules.Update(ctx, b.ID(), name, func(r *Rule) error {
		desc, pattern, syntax, state := r.Description(), r.EventPattern(), r.Syntax(), r.State()
		if p.Description != nil {
			desc = *p.Description
		}
		if p.EventPattern != nil {
			pattern, syntax = p.EventPattern, p.Syntax
		}
		if p.State != nil {
			state = *p.State
			if state == "" {
				return domain.Invalid("state", "state must be ENABLED or DISABLED, not empty")
			}
		}
		if p.Layout != nil {
			if err := r.SetLayout(p.Layout, s.Clock.Now()); err != nil {
				return err
			}
		}
		return r.Change(desc, pattern, syntax, state, s.Clock.Now())
	})
	if err != nil {
		return nil, err
	}
	s.sync(ctx, b)
	return r, nil
}

// Put creates the rule or replaces its description, pattern and state; created tells which.
func (s *Service) Put(ctx context.Context, accountID, busName string, spec Spec) (r *Rule, created bool, err error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, false, err
	}
	if err := domain.ValidateRuleName("name", spec.Name); err != nil {
		return nil, false, err
	}
	if err := s.checkWildcardsAs(ctx, b.ID(), spec.Name, spec.EventPattern, spec.Syntax); err != nil {
		return nil, false, err
	}
	r, err = s.Rules.Update(ctx, b.ID(), spec.Name, func(r *Rule) error {
		if err := r.SetLayout(spec.Layout, s.Clock.Now()); err != nil {
			return err
		}
		return r.Change(spec.Description, spec.EventPattern, spec.Syntax, spec.State, s.Clock.Now())
	})
	if errors.Is(err, ErrNotFound) {
		r, err = s.Create(ctx, accountID, busName, spec)
		return r, err == nil, err
	}
	if err != nil {
		return nil, false, err
	}
	s.sync(ctx, b)
	return r, false, nil
}

// Get returns bus.ErrNotFound or ErrNotFound when either does not exist.
func (s *Service) Get(ctx context.Context, accountID, busName, name string) (*Rule, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, err
	}
	return s.Rules.Get(ctx, b.ID(), name)
}

// List returns a page of a bus's rules.
func (s *Service) List(ctx context.Context, accountID, busName string, page domain.Page) ([]*Rule, string, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, "", err
	}
	return s.Rules.List(ctx, b.ID(), page)
}

// Delete deletes a rule and its targets; their connectors are removed and the rule's routed events purged.
func (s *Service) Delete(ctx context.Context, accountID, busName, name string) error {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return err
	}
	if err := s.Rules.Delete(ctx, b.ID(), name); err != nil {
		return err
	}
	s.sync(context.WithoutCancel(ctx), b)
	return nil
}

// Enable makes the router route to the rule again: it receives every matching event stored after the call
// answered, none stored while it was disabled. ErrInvalidEventPattern when its pattern uses wildcards and the bus
// has more rules with wildcards than allowed (after the limit was lowered).
func (s *Service) Enable(ctx context.Context, accountID, busName, name string) (*Rule, error) {
	return s.setState(ctx, accountID, busName, name, Enabled)
}

// Disable stops routing to the rule; events put while it is disabled are never delivered to its targets.
func (s *Service) Disable(ctx context.Context, accountID, busName, name string) (*Rule, error) {
	return s.setState(ctx, accountID, busName, name, Disabled)
}

func (s *Service) setState(ctx context.Context, accountID, busName, name string, st State) (*Rule, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, err
	}
	if st == Enabled {
		r, err := s.Rules.Get(ctx, b.ID(), name)
		if err != nil {
			return nil, err
		}
		if err := s.CheckWildcards(ctx, b.ID(), name, r.MatchPattern()); err != nil {
			return nil, err
		}
	}
	r, err := s.Rules.Update(ctx, b.ID(), name, func(r *Rule) error {
		r.SetState(st, s.Clock.Now())
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.sync(ctx, b)
	return r, nil
}

// checkWildcardsAs is checkWildcards for a pattern of the syntax; a pattern that does not compile is left to the
// rule's own validation.
func (s *Service) checkWildcardsAs(ctx context.Context, busID, name string, eventPattern []byte, syntax Syntax) error {
	_, match, err := compileAs(eventPattern, syntax)
	if err != nil {
		return nil
	}
	return s.CheckWildcards(ctx, busID, name, match)
}

// CheckWildcards enforces MaxWildcardRules for a rule of the bus named name with eventPattern (CloudEvents
// form): the bus's other rules with wildcards, enabled or not, and this one must not be more than the limit. Two
// requests racing on the bus's last free place may both pass.
func (s *Service) CheckWildcards(ctx context.Context, busID, name string, eventPattern []byte) error {
	if !usesWildcard(eventPattern) {
		return nil
	}
	limit := s.MaxWildcardRules
	if limit == 0 {
		limit = DefaultMaxWildcardRules
	}
	rules, err := s.Rules.ListByBus(ctx, busID)
	if err != nil {
		return err
	}
	return checkWildcardRules(rules, name, limit)
}

func (s *Service) sync(ctx context.Context, b *bus.Bus) {
	if err := s.Runtime.SyncBus(ctx, b); err != nil {
		s.Logger.Warn("runtime not in step yet; the reconciler will retry", "bus", b.ID(), "err", err)
	}
}

// PurgeAccount deletes every rule of every bus of the account with its targets and their connectors
// (account.Purger).
func (s *Service) PurgeAccount(ctx context.Context, accountID string) error {
	return bus.EachOfAccount(ctx, s.Buses, accountID, func(b *bus.Bus) error {
		for {
			rs, _, err := s.Rules.List(ctx, b.ID(), domain.Page{Limit: domain.MaxPageLimit})
			if err != nil || len(rs) == 0 {
				return err
			}
			for _, r := range rs {
				if err := s.Delete(ctx, accountID, b.Name(), r.Name()); err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
			}
		}
	})
}
