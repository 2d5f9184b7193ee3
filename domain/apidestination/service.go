package apidestination

import (
	"context"
	"errors"
	"strings"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/connection"
)

// Service holds the use cases of API destinations.
type Service struct {
	Destinations Repository
	Connections  connection.Repository
	// Targets tells which targets deliver to an API destination.
	Targets TargetRefs
	// MaxPerAccount is the quota of API destinations per account; 0 means DefaultMaxPerAccount.
	MaxPerAccount int
	Clock         domain.Clock
}

func (s *Service) max() int {
	if s.MaxPerAccount > 0 {
		return s.MaxPerAccount
	}
	return DefaultMaxPerAccount
}

// connection looks up the connection that spec names, after validating the rest of spec so that field errors
// come first. A connection of another account is not found. Errors: validation, connection.ErrNotFound (naming
// the field connection).
func (s *Service) connection(ctx context.Context, accountID string, spec Spec) (ConnectionRef, error) {
	if err := domain.ValidateName("name", spec.Name); err != nil {
		return ConnectionRef{}, err
	}
	if err := Validate(spec); err != nil {
		return ConnectionRef{}, err
	}
	c, err := s.Connections.Get(ctx, accountID, spec.Connection)
	if errors.Is(err, connection.ErrNotFound) {
		return ConnectionRef{}, connection.ErrNotFound.With("connection %q not found", spec.Connection).WithField("connection")
	}
	if err != nil {
		return ConnectionRef{}, err
	}
	return ConnectionRef{ID: c.ID(), Name: c.Name()}, nil
}

// Create creates an API destination. Errors: validation, connection.ErrNotFound, ErrAlreadyExists,
// ErrQuotaExceeded.
func (s *Service) Create(ctx context.Context, accountID string, spec Spec) (*APIDestination, error) {
	conn, err := s.connection(ctx, accountID, spec)
	if err != nil {
		return nil, err
	}
	d, err := New(accountID, spec, conn, s.Clock.Now())
	if err != nil {
		return nil, err
	}
	if err := s.Destinations.Create(ctx, d, s.max()); err != nil {
		return nil, err
	}
	return d, nil
}

// Put creates the API destination or replaces its declaration; created tells which. Errors: as Create.
func (s *Service) Put(ctx context.Context, accountID string, spec Spec) (d *APIDestination, created bool, err error) {
	conn, err := s.connection(ctx, accountID, spec)
	if err != nil {
		return nil, false, err
	}
	d, err = s.Destinations.Update(ctx, accountID, spec.Name, func(d *APIDestination) error {
		return d.Change(spec, conn, s.Clock.Now())
	})
	if errors.Is(err, ErrNotFound) {
		d, err = s.Create(ctx, accountID, spec)
		if errors.Is(err, ErrAlreadyExists) { // created concurrently: replace it
			return s.Put(ctx, accountID, spec)
		}
		return d, err == nil, err
	}
	return d, false, err
}

// Patch is a partial change: nil members keep what the API destination has.
type Patch struct {
	Description                  *string
	Connection                   *string
	InvocationEndpoint           *string
	HTTPMethod                   *string
	InvocationRateLimitPerSecond *int
}

// Patch changes what patch declares and keeps the rest. Errors: ErrNotFound, validation, connection.ErrNotFound.
func (s *Service) Patch(ctx context.Context, accountID, name string, p Patch) (*APIDestination, error) {
	cur, err := s.Destinations.Get(ctx, accountID, name)
	if err != nil {
		return nil, err
	}
	spec := Spec{Name: name, Description: cur.Description(), Connection: cur.Connection().Name,
		InvocationEndpoint: cur.InvocationEndpoint(), HTTPMethod: cur.HTTPMethod(), InvocationRateLimitPerSecond: cur.InvocationRateLimitPerSecond()}
	if p.Description != nil {
		spec.Description = *p.Description
	}
	if p.Connection != nil {
		spec.Connection = *p.Connection
	}
	if p.InvocationEndpoint != nil {
		spec.InvocationEndpoint = *p.InvocationEndpoint
	}
	if p.HTTPMethod != nil {
		spec.HTTPMethod = *p.HTTPMethod
	}
	if p.InvocationRateLimitPerSecond != nil {
		if *p.InvocationRateLimitPerSecond == 0 {
			return nil, domain.Invalid("invocationRateLimitPerSecond", "invocationRateLimitPerSecond must be between 1 and %d", MaxRateLimitPerSecond)
		}
		spec.InvocationRateLimitPerSecond = *p.InvocationRateLimitPerSecond
	}
	conn, err := s.connection(ctx, accountID, spec)
	if err != nil {
		return nil, err
	}
	return s.Destinations.Update(ctx, accountID, name, func(d *APIDestination) error {
		return d.Change(spec, conn, s.Clock.Now())
	})
}

// Get returns ErrNotFound for an unknown API destination.
func (s *Service) Get(ctx context.Context, accountID, name string) (*APIDestination, error) {
	return s.Destinations.Get(ctx, accountID, name)
}

// List returns a page of the account's API destinations.
func (s *Service) List(ctx context.Context, accountID string, page domain.Page) ([]*APIDestination, string, error) {
	return s.Destinations.List(ctx, accountID, page)
}

// Delete deletes an API destination that no target uses. Errors: ErrNotFound, ErrInUse naming the targets.
func (s *Service) Delete(ctx context.Context, accountID, name string) error {
	d, err := s.Destinations.Get(ctx, accountID, name)
	if err != nil {
		return err
	}
	refs, err := s.Targets.TargetsUsing(ctx, accountID, name)
	if err != nil {
		return err
	}
	if len(refs) > 0 {
		names := make([]string, len(refs))
		for i, r := range refs {
			names[i] = r.String()
		}
		return ErrInUse.With("API destination %q is used by target(s) %s (bus/rule/target); delete them or change them first",
			name, strings.Join(names, ", "))
	}
	return s.Destinations.Delete(ctx, d.ID())
}

// PurgeAccount deletes every API destination of the account (account.Purger); the targets that use them must be
// gone first (the rule service's purge).
func (s *Service) PurgeAccount(ctx context.Context, accountID string) error {
	for {
		ds, _, err := s.Destinations.List(ctx, accountID, domain.Page{Limit: domain.MaxPageLimit})
		if err != nil || len(ds) == 0 {
			return err
		}
		for _, d := range ds {
			if err := s.Delete(ctx, accountID, d.Name()); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
	}
}
