package connection

import (
	"context"
	"errors"
	"strings"

	"github.com/eventbridge-go/eventbridge/domain"
)

// Service holds the use cases of connections.
type Service struct {
	Connections Repository
	// Users tells which API destinations use a connection.
	Users Users
	// Sealer encrypts secrets before they are stored.
	Sealer Sealer
	// MaxPerAccount is the quota of connections per account; 0 means DefaultMaxPerAccount.
	MaxPerAccount int
	Clock         domain.Clock
}

func (s *Service) max() int {
	if s.MaxPerAccount > 0 {
		return s.MaxPerAccount
	}
	return DefaultMaxPerAccount
}

// Create creates a connection. Errors: validation, ErrAlreadyExists, ErrQuotaExceeded.
func (s *Service) Create(ctx context.Context, accountID string, spec Spec) (*Connection, error) {
	c, err := New(accountID, spec, s.Sealer, s.Clock.Now())
	if err != nil {
		return nil, err
	}
	if err := s.Connections.Create(ctx, c, s.max()); err != nil {
		return nil, err
	}
	return c, nil
}

// Put creates the connection or replaces its declaration (secrets left empty keep their stored value); created
// tells which. Errors: validation, ErrQuotaExceeded.
func (s *Service) Put(ctx context.Context, accountID string, spec Spec) (c *Connection, created bool, err error) {
	if err := domain.ValidateName("name", spec.Name); err != nil {
		return nil, false, err
	}
	c, err = s.Connections.Update(ctx, accountID, spec.Name, func(c *Connection) error {
		return c.Change(spec, s.Sealer, s.Clock.Now())
	})
	if errors.Is(err, ErrNotFound) {
		c, err = s.Create(ctx, accountID, spec)
		if errors.Is(err, ErrAlreadyExists) { // created concurrently: replace it
			return s.Put(ctx, accountID, spec)
		}
		return c, err == nil, err
	}
	return c, false, err
}

// Patch changes what patch declares and keeps the rest. Errors: ErrNotFound, validation.
func (s *Service) Patch(ctx context.Context, accountID, name string, patch Patch) (*Connection, error) {
	return s.Connections.Update(ctx, accountID, name, func(c *Connection) error {
		return c.Change(patch.apply(c.Redacted()), s.Sealer, s.Clock.Now())
	})
}

// Patch is a partial change: nil members keep what the connection has.
type Patch struct {
	Description *string
	// AuthorizationType, when it changes the type, drops the parameters of the former type.
	AuthorizationType *AuthorizationType
	Basic             *BasicAuth
	APIKey            *APIKeyAuth
	OAuth             *OAuthParameters
	// InvocationHTTPParameters replaces the three lists as a whole.
	InvocationHTTPParameters *HTTPParameters
}

// apply returns current (a redacted spec) changed by p.
func (p Patch) apply(current Spec) Spec {
	next := current
	if p.Description != nil {
		next.Description = *p.Description
	}
	if p.AuthorizationType != nil && *p.AuthorizationType != current.AuthorizationType {
		next.AuthorizationType = *p.AuthorizationType
		next.Basic, next.APIKey, next.OAuth = nil, nil, nil
	}
	if p.Basic != nil {
		next.Basic = p.Basic
	}
	if p.APIKey != nil {
		next.APIKey = p.APIKey
	}
	if p.OAuth != nil {
		next.OAuth = p.OAuth
	}
	if p.InvocationHTTPParameters != nil {
		next.InvocationHTTPParameters = *p.InvocationHTTPParameters
	}
	return next
}

// Deauthorize drops the connection's secrets and makes it DEAUTHORIZED (Connection.Deauthorize): the targets
// that call through it refuse their events, which are dead-lettered, once the runtime adapter reconciles them. A
// change that gives the secrets again authorizes it. Errors: ErrNotFound.
func (s *Service) Deauthorize(ctx context.Context, accountID, name string) (*Connection, error) {
	return s.Connections.Update(ctx, accountID, name, func(c *Connection) error {
		c.Deauthorize(s.Clock.Now())
		return nil
	})
}

// Get returns ErrNotFound for an unknown connection.
func (s *Service) Get(ctx context.Context, accountID, name string) (*Connection, error) {
	return s.Connections.Get(ctx, accountID, name)
}

// List returns a page of the account's connections.
func (s *Service) List(ctx context.Context, accountID string, page domain.Page) ([]*Connection, string, error) {
	return s.Connections.List(ctx, accountID, page)
}

// Delete deletes a connection that no API destination uses. Errors: ErrNotFound, ErrInUse naming the API
// destinations.
func (s *Service) Delete(ctx context.Context, accountID, name string) error {
	c, err := s.Connections.Get(ctx, accountID, name)
	if err != nil {
		return err
	}
	users, err := s.Users.DestinationsUsing(ctx, c.ID())
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return ErrInUse.With("connection %q is used by API destination(s) %s; delete them or change their connection first",
			name, strings.Join(users, ", "))
	}
	return s.Connections.Delete(ctx, c.ID())
}

// PurgeAccount deletes every connection of the account (account.Purger); the API destinations that use them must
// be gone first.
func (s *Service) PurgeAccount(ctx context.Context, accountID string) error {
	for {
		cs, _, err := s.Connections.List(ctx, accountID, domain.Page{Limit: domain.MaxPageLimit})
		if err != nil || len(cs) == 0 {
			return err
		}
		for _, c := range cs {
			if err := s.Delete(ctx, accountID, c.Name()); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
	}
}
