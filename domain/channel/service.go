package channel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/target"
)

// Buses is what channels need of buses: finding one, and creating one for a document that asks.
type Buses interface {
	Get(ctx context.Context, accountID, name string) (*bus.Bus, error)
	// Add creates a bus made with bus.New, with its id.
	Add(ctx context.Context, b *bus.Bus) (*bus.Bus, error)
	Delete(ctx context.Context, accountID, name string) error
}

// Runtime applies a bus's declared state to the worker runtime.
type Runtime interface {
	SyncBus(ctx context.Context, b *bus.Bus) error
}

// Service holds the use cases of channels. It checks a document with the same rules as the services of rules,
// targets and sources (their plugins asked through the runtime), and stores it through Channels in one transaction.
type Service struct {
	Buses    Buses
	Channels Repository
	Rules    *rule.Service
	Targets  *target.Service
	Sources  *source.Service
	Runtime  Runtime
	Logger   *slog.Logger
	Clock    domain.Clock
}

// Get returns the channel of a rule. Errors: bus.ErrNotFound, rule.ErrNotFound.
func (s *Service) Get(ctx context.Context, accountID, busName, ruleName string) (*Channel, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, err
	}
	return s.read(ctx, b, ruleName)
}

func (s *Service) read(ctx context.Context, b *bus.Bus, ruleName string) (*Channel, error) {
	r, ts, ss, err := s.Channels.Read(ctx, b.ID(), ruleName)
	if err != nil {
		return nil, err
	}
	return &Channel{Bus: b, Sources: ss, Rule: r, Targets: ts}, nil
}

// Put checks the whole document, then stores all of it in one transaction and answers once the runtime applied it
// (or at once, logged, while the runtime is unreachable, as for rules). created tells whether the rule is new.
// Errors: ErrInvalid with every problem of the document (nothing changed); bus.ErrNotFound (unless spec.CreateBus);
// the quotas of rules, sources and buses; ErrChanged and rule.ErrAlreadyExists when another request changed the
// channel meanwhile; domain.ErrUnavailable when the runtime cannot check a plugin's config.
func (s *Service) Put(ctx context.Context, accountID, busName, ruleName string, spec Spec) (ch *Channel, created bool, err error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	fresh := false
	if errors.Is(err, bus.ErrNotFound) && spec.CreateBus {
		// Checked against the bus as it will be made (its id names its subjects): made only when the document passes.
		if b, err = bus.New(accountID, busName, "", bus.Retention{}, s.Clock.Now()); err != nil {
			return nil, false, err
		}
		fresh = true
	} else if err != nil {
		return nil, false, err
	}
	plan, err := s.plan(ctx, b, fresh, ruleName, spec)
	if err != nil {
		return nil, false, err
	}
	if fresh {
		if b, err = s.Buses.Add(ctx, b); err != nil {
			return nil, false, err
		}
	}
	if err := s.Channels.Apply(ctx, plan); err != nil {
		if fresh {
			s.removeBus(ctx, b)
		}
		return nil, false, err
	}
	for _, src := range plan.ReplaceSources {
		s.Sources.Forget(src.ID())
	}
	if err := s.Runtime.SyncBus(ctx, b); err != nil {
		s.log().Warn("runtime not in step yet; the reconciler will retry", "bus", b.ID(), "err", err)
	}
	ch, err = s.read(ctx, b, ruleName)
	return ch, plan.CreateRule, err
}

// CreateRule creates a rule with its targets (a POST of a rule with targets): it checks every target first (names
// unique, at most target.MaxPerRule, each config and reference as target.Service.Put does), then the rule as
// rule.Service.Create does, and stores the rule and its targets in one transaction, so that a failure or a crash
// leaves neither; it answers once the runtime applied them (or at once, logged, while the runtime is unreachable).
// Errors: as rule.Service.Create and target.Service.Put, a target's problem naming it targets[i].<field>;
// target.ErrLimitExceeded.
func (s *Service) CreateRule(ctx context.Context, accountID, busName string, rs rule.Spec, specs []target.Spec) (*rule.Rule, []*target.Target, error) {
	if len(specs) > target.MaxPerRule {
		return nil, nil, target.ErrLimitExceeded.With("a rule has at most %d targets; %d were given", target.MaxPerRule, len(specs))
	}
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, nil, err
	}
	now := s.Clock.Now()
	seen := map[string]bool{}
	prepared := make([]target.Spec, len(specs))
	for i, spec := range specs {
		if _, err := target.New(accountID, b.ID(), "-", spec, s.Targets.Sealer, now); err != nil {
			return nil, nil, target.Indexed(err, i)
		}
		if prepared[i], err = s.Targets.Prepare(ctx, accountID, b, spec); err != nil {
			return nil, nil, target.Indexed(err, i)
		}
		if seen[spec.Name] {
			return nil, nil, domain.Invalid(fmt.Sprintf("targets[%d].name", i), "targets[%d].name %q is used twice", i, spec.Name)
		}
		seen[spec.Name] = true
	}
	r, err := s.Rules.Build(ctx, b, rs)
	if err != nil {
		return nil, nil, err
	}
	plan := Plan{BusID: b.ID(), Rule: r, CreateRule: true, MaxRules: s.Rules.Quota(), MaxSources: s.Sources.Quota()}
	for i, spec := range prepared {
		t, err := target.New(accountID, b.ID(), r.ID(), spec, s.Targets.Sealer, now)
		if err != nil {
			return nil, nil, target.Indexed(err, i)
		}
		plan.CreateTargets = append(plan.CreateTargets, t)
	}
	if err := s.Channels.Apply(ctx, plan); err != nil {
		if errors.Is(err, rule.ErrAlreadyExists) {
			return nil, nil, rule.ErrAlreadyExists.With("rule %q already exists on this bus", r.Name())
		}
		return nil, nil, err
	}
	if err := s.Runtime.SyncBus(ctx, b); err != nil {
		s.log().Warn("runtime not in step yet; the reconciler will retry", "bus", b.ID(), "err", err)
	}
	return r, plan.CreateTargets, nil
}

// removeBus deletes a bus this call made for a document it could not store.
func (s *Service) removeBus(ctx context.Context, b *bus.Bus) {
	if err := s.Buses.Delete(context.WithoutCancel(ctx), b.AccountID(), b.Name()); err != nil {
		s.log().Error("removing a bus made for a channel that could not be stored", "bus", b.ID(), "err", err)
	}
}

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// plan checks spec as the channel of rule ruleName on b (a bus not stored yet when fresh) and returns what to store.
// Every validation problem is collected; any other error (the runtime unreachable, a quota) is returned at once.
func (s *Service) plan(ctx context.Context, b *bus.Bus, fresh bool, ruleName string, spec Spec) (Plan, error) {
	var (
		cur        *rule.Rule
		curTargets []*target.Target
		curSources []*source.Source
		ps         problems
		now        = s.Clock.Now()
	)
	if !fresh {
		var err error
		cur, curTargets, curSources, err = s.Channels.Read(ctx, b.ID(), ruleName)
		if err != nil && !errors.Is(err, rule.ErrNotFound) {
			return Plan{}, err
		}
	}
	p := Plan{BusID: b.ID(), MaxRules: s.Rules.Quota(), MaxSources: s.Sources.Quota()}

	// In the document's order, so that its problems are too.
	if err := s.planSources(ctx, b, curSources, spec.Sources, &p, &ps, now); err != nil {
		return Plan{}, err
	}
	r, err := s.planRule(ctx, b, cur, ruleName, spec.Rule, &ps, now)
	if err != nil {
		return Plan{}, err
	}
	p.Rule, p.CreateRule = r, cur == nil
	ruleID := "-" // the rule had problems: the plan is not stored
	if r != nil {
		ruleID = r.ID()
	}
	if err := s.planTargets(ctx, b, ruleID, curTargets, spec.Targets, &p, &ps, now); err != nil {
		return Plan{}, err
	}
	return p, ps.err()
}

// planRule returns the rule of the document (nil when it has problems, which it records).
func (s *Service) planRule(ctx context.Context, b *bus.Bus, cur *rule.Rule, name string, rs rule.Spec, ps *problems,
	now time.Time) (*rule.Rule, error) {
	if rs.Name != "" && rs.Name != name {
		ps.at("/rule/name", domain.ErrValidation.Code, "name %q differs from the rule %q of the path; rules cannot be renamed", rs.Name, name)
		return nil, nil
	}
	r := cur
	var err error
	if r == nil {
		r, err = rule.New(b.AccountID(), b.ID(), name, rs.Description, rs.EventPattern, rs.Syntax, rs.State, now)
	} else {
		err = r.Change(rs.Description, rs.EventPattern, rs.Syntax, rs.State, now)
	}
	if err == nil {
		err = r.SetLayout(rs.Layout, now)
	}
	if err == nil {
		err = s.Rules.CheckWildcards(ctx, b.ID(), name, r.MatchPattern())
	}
	if err != nil {
		if !ps.add("/rule", false, err) {
			return nil, err
		}
		return nil, nil
	}
	return r, nil
}

// planSources adds the document's sources to p: each created or replaced; the bus's others are kept.
func (s *Service) planSources(ctx context.Context, b *bus.Bus, cur []*source.Source, specs []source.Spec, p *Plan,
	ps *problems, now time.Time) error {
	stored := map[string]*source.Source{}
	for _, src := range cur {
		stored[src.Name()] = src
	}
	seen := map[string]int{}
	for i, spec := range specs {
		at := fmt.Sprintf("/sources/%d", i)
		if j, dup := seen[spec.Name]; dup && spec.Name != "" {
			ps.at(at+"/name", domain.ErrValidation.Code, "source %q is listed twice (also at /sources/%d)", spec.Name, j)
			continue
		}
		seen[spec.Name] = i
		src, replace := stored[spec.Name]
		var err error
		if replace {
			err = src.Change(spec, now)
		} else {
			src, err = source.New(b.AccountID(), b.ID(), spec, now)
		}
		if err == nil {
			err = s.Sources.Prepare(ctx, b, src)
		}
		if err != nil {
			if !ps.add(at, true, err) {
				return err
			}
			continue
		}
		if replace {
			p.ReplaceSources = append(p.ReplaceSources, src)
		} else {
			p.CreateSources = append(p.CreateSources, src)
		}
	}
	if n := len(cur) + len(p.CreateSources); n > p.MaxSources {
		return source.ErrQuotaExceeded.With("a bus may have at most %d sources; this one would have %d", p.MaxSources, n)
	}
	return nil
}

// planTargets adds the document's targets to p: each created or replaced, and the rule's others deleted.
func (s *Service) planTargets(ctx context.Context, b *bus.Bus, ruleID string, cur []*target.Target, specs []target.Spec,
	p *Plan, ps *problems, now time.Time) error {
	if len(specs) > target.MaxPerRule {
		ps.at("/targets", target.ErrLimitExceeded.Code, "a rule has at most %d targets; %d are listed", target.MaxPerRule, len(specs))
	}
	stored := map[string]*target.Target{}
	for _, t := range cur {
		stored[t.Name()] = t
	}
	seen := map[string]int{}
	for i, spec := range specs {
		at := fmt.Sprintf("/targets/%d", i)
		flat := spec.Type.IsPlugin()
		if j, dup := seen[spec.Name]; dup && spec.Name != "" {
			ps.at(at+"/name", domain.ErrValidation.Code, "target %q is listed twice (also at /targets/%d)", spec.Name, j)
			continue
		}
		seen[spec.Name] = i
		t, replace := stored[spec.Name]
		if !replace {
			// The form first, without asking the runtime: a target's own problems are found even when the runtime
			// is unreachable (a secret sent back masked is a stored target's, so only a new one is checked so).
			if _, err := target.New(b.AccountID(), b.ID(), ruleID, spec, s.Targets.Sealer, now); err != nil {
				if !ps.add(at, flat, err) {
					return err
				}
				continue
			}
		}
		prepared, err := s.Targets.Prepare(ctx, b.AccountID(), b, spec)
		if err == nil {
			if replace {
				err = t.Change(prepared, s.Targets.Sealer, now)
			} else {
				t, err = target.New(b.AccountID(), b.ID(), ruleID, prepared, s.Targets.Sealer, now)
			}
		}
		if err != nil {
			if !ps.add(at, flat, err) {
				return err
			}
			continue
		}
		if replace {
			p.ReplaceTargets = append(p.ReplaceTargets, t)
		} else {
			p.CreateTargets = append(p.CreateTargets, t)
		}
	}
	for name, t := range stored {
		if _, keep := seen[name]; !keep {
			p.DeleteTargets = append(p.DeleteTargets, t.ID())
		}
	}
	return nil
}
