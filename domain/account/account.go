// Package account holds accounts: the owners of every resource. An account is created on first use.
package account

import (
	"context"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

// Account owns buses and everything under them.
type Account struct {
	id        string
	createdAt time.Time
}

// New returns an account with a validated id.
func New(id string, now time.Time) (*Account, error) {
	if err := domain.ValidateAccountID(id); err != nil {
		return nil, err
	}
	return &Account{id: id, createdAt: now.UTC()}, nil
}

// UnmarshalFromDatabase rebuilds an account from storage without validation.
func UnmarshalFromDatabase(id string, createdAt time.Time) *Account {
	return &Account{id: id, createdAt: createdAt}
}

func (a *Account) ID() string           { return a.id }
func (a *Account) CreatedAt() time.Time { return a.createdAt }

// Repository stores accounts.
type Repository interface {
	// Ensure creates the account if it does not exist yet and returns it. Safe to call concurrently.
	Ensure(ctx context.Context, a *Account) error
	// Get returns ErrNotFound when the account does not exist.
	Get(ctx context.Context, id string) (*Account, error)
}

// ErrNotFound is returned for an account that does not exist.
var ErrNotFound = &domain.Error{Kind: domain.KindNotFound, Code: "AccountNotFound"}
