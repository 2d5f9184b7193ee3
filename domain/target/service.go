package target

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/health"
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
	// APIDestinations finds the API destinations api-destination targets name; nil refuses such targets.
	APIDestinations APIDestinationFinder
	// Plugins validates the configs of plugin targets against their sink plugins; nil refuses plugin targets.
	Plugins PluginChecker
	// Sealer seals the secret values of plugin targets' configs; nil refuses secret values.
	Sealer Sealer
	// Health holds the thresholds of targets' health (zero fields: the defaults).
	Health health.Rules
}

// PluginChecker checks a plugin target's config against its sink plugin, in the runtime.
type PluginChecker interface {
	// CheckSink validates cfg as the config of the sink plugin typ (with the keys the control plane sets for
	// every target filled in) and returns the plugin's secret keys. Errors: a validation error naming
	// config.<key> for each problem (type when the runtime has no such sink plugin); domain.ErrUnavailable.
	CheckSink(ctx context.Context, typ Type, cfg map[string]string) (secretKeys []string, err error)
}

// Sealer seals a secret value for its owner (the target's account and id, and the field) before it is kept.
type Sealer = domain.Sealer

// preparePlugin validates a plugin target's config through the runtime and seals its secret values (masks and
// values sealed already stay as they are).
func (s *Service) preparePlugin(ctx context.Context, spec Spec) (Spec, error) {
	if s.Plugins == nil {
		return spec, domain.Invalid("type", "type %q: plugin targets are not available in this deployment", spec.Type)
	}
	if err := checkPluginConfig(spec.Type, spec.Config); err != nil {
		return spec, err
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Config)) {
		if err := notSealed("config."+k, spec.Config[k]); err != nil {
			return spec, err
		}
	}
	secrets, err := s.Plugins.CheckSink(ctx, spec.Type, spec.Config)
	if err != nil {
		return spec, err
	}
	spec.SecretKeys = secrets // sealed by Change, for the target they belong to
	return spec, nil
}

// notSealed refuses a sealed value (enc:...) given as input: a ciphertext is never taken from a caller, who could
// have copied it from another account's resource; the plaintext is given, or SecretMask to keep the stored one.
func notSealed(field, v string) error {
	if strings.HasPrefix(v, SealedPrefix) {
		return domain.Invalid(field, "%s is a sealed value (%s...), which is not taken as input: give the plaintext, or %s to keep the stored secret",
			field, SealedPrefix, SecretMask)
	}
	return nil
}

// checkHeaders refuses a sealed value given as the value of an http target's secret header (Change seals the
// plaintext ones).
func checkHeaders(c HTTPConfig) error {
	for _, k := range slices.Sorted(maps.Keys(c.Headers)) {
		if c.IsSecretHeader(k) {
			if err := notSealed("config.headers."+k, c.Headers[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// APIDestinationFinder finds an account's API destination by name (apidestination.ErrNotFound otherwise).
type APIDestinationFinder interface {
	Get(ctx context.Context, accountID, name string) (*apidestination.APIDestination, error)
}

// Prepare checks that the resources spec names exist in the account, and that neither the destination bus nor
// the dead-letter bus is the target's own bus (its events would come back to it); for a plugin target it
// validates the config through the runtime and returns the spec with its secret values sealed.
func (s *Service) Prepare(ctx context.Context, accountID string, own *bus.Bus, spec Spec) (Spec, error) {
	var err error
	switch {
	case spec.Type.IsPlugin():
		if spec, err = s.preparePlugin(ctx, spec); err != nil {
			return spec, err
		}
	case spec.Type == HTTP:
		if err := checkHeaders(spec.HTTP); err != nil {
			return spec, err
		}
	}
	return spec, s.checkRefs(ctx, accountID, own, spec)
}

// checkRefs checks the references of prepare.
func (s *Service) checkRefs(ctx context.Context, accountID string, own *bus.Bus, spec Spec) error {
	busRef := func(field, name string) error {
		if name == own.Name() {
			return domain.Invalid(field, "%s %q is the target's own bus: its events would come back to it", field, name)
		}
		if _, err := s.Buses.Get(ctx, accountID, name); err != nil {
			if errors.Is(err, bus.ErrNotFound) {
				return domain.Invalid(field, "%s: bus %q does not exist", field, name)
			}
			return err
		}
		return nil
	}
	switch spec.Type {
	case Bus:
		if err := busRef("config.bus", spec.Bus); err != nil {
			return err
		}
	case APIDestination:
		if s.APIDestinations == nil {
			return domain.Invalid("type", "api-destination targets are not available in this deployment")
		}
		d, err := s.APIDestinations.Get(ctx, accountID, spec.APIDestination)
		if err != nil {
			if errors.Is(err, apidestination.ErrNotFound) {
				return domain.Invalid("config.apiDestination", "config.apiDestination: API destination %q does not exist", spec.APIDestination)
			}
			return err
		}
		if n := d.PathParameters(); n != len(spec.PathParameterValues) {
			return domain.Invalid("config.pathParameterValues", "config.pathParameterValues has %d JSON paths; API destination %q "+
				"has %d path parameters (*) to fill, one path each", len(spec.PathParameterValues), d.Name(), n)
		}
	}
	if spec.DeadLetterBus != "" {
		return busRef("deadLetterConfig.bus", spec.DeadLetterBus)
	}
	return nil
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
	if spec, err = s.Prepare(ctx, accountID, b, spec); err != nil {
		return nil, false, err
	}
	return s.store(ctx, accountID, b, r, spec)
}

// store creates or replaces the target of a prepared spec, then applies the bus to the runtime.
func (s *Service) store(ctx context.Context, accountID string, b *bus.Bus, r *rule.Rule, spec Spec) (t *Target, created bool, err error) {
	t, err = s.Targets.Update(ctx, r.ID(), spec.Name, func(t *Target) error { return t.Change(spec, s.Sealer, s.Clock.Now()) })
	if errors.Is(err, ErrNotFound) {
		t, err = New(accountID, b.ID(), r.ID(), spec, s.Sealer, s.Clock.Now())
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

// Indexed prefixes the field and message of a validation error of the i-th target of a request with targets[i]
// (other errors are returned as they are).
func Indexed(err error, i int) error {
	if de, ok := domain.As(err); ok && de.Field != "" {
		c := *de
		c.Field = fmt.Sprintf("targets[%d].%s", i, de.Field)
		c.Message = fmt.Sprintf("targets[%d]: %s", i, de.Message)
		return &c
	}
	return err
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

// SealStoredHeaders seals the values of secret headers that http targets stored in clear (made before secret
// headers were sealed) and returns how many targets changed. Idempotent; safe on several replicas at once (each
// change is one transaction that re-reads the target).
func (s *Service) SealStoredHeaders(ctx context.Context) (int, error) {
	buses, err := s.Buses.ListAll(ctx)
	if err != nil {
		return 0, err
	}
	changed := 0
	for _, b := range buses {
		ts, err := s.Targets.ListByBus(ctx, b.ID())
		if err != nil {
			return changed, err
		}
		for _, t := range ts {
			if !t.hasClearSecretHeaders() {
				continue
			}
			_, err := s.Targets.Update(ctx, t.RuleID(), t.Name(), func(t *Target) error {
				if s.Sealer == nil {
					return domain.Invalid("config.headers", "this deployment cannot seal secrets")
				}
				_, err := t.SealClearHeaders(s.Sealer)
				return err
			})
			if err != nil {
				return changed, fmt.Errorf("sealing the secret headers of target %s: %w", t.ID(), err)
			}
			changed++
		}
	}
	return changed, nil
}
