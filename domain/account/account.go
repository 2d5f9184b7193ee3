// Package account holds accounts: the owners of every resource. An instance administrator creates them; deleting
// one deletes everything it owns.
package account

import (
	"context"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

// Account owns buses and everything under them, connections, API destinations, members and API keys.
type Account struct {
	id        string
	createdAt time.Time
	limits    Limits
}

// Limits are what an instance administrator sets for one account; a zero field means the installation's default.
type Limits struct {
	// PutEventsPerSecond is the rate of events the account may put, every dialect and webhook together.
	PutEventsPerSecond int
}

// MaxPutEventsPerSecond bounds an account's PutEvents rate.
const MaxPutEventsPerSecond = 1_000_000

// Validate names the first limit out of its range.
func (l Limits) Validate() error {
	if l.PutEventsPerSecond < 0 || l.PutEventsPerSecond > MaxPutEventsPerSecond {
		return domain.Invalid("limits.putEventsPerSecond", "limits.putEventsPerSecond is %d; it is 0 (the installation's default) to %d",
			l.PutEventsPerSecond, MaxPutEventsPerSecond)
	}
	return nil
}

// New returns an account with a validated id.
func New(id string, now time.Time) (*Account, error) {
	if err := domain.ValidateAccountID(id); err != nil {
		return nil, err
	}
	return &Account{id: id, createdAt: now.UTC()}, nil
}

// UnmarshalFromDatabase rebuilds an account from storage without validation.
func UnmarshalFromDatabase(id string, createdAt time.Time, limits Limits) *Account {
	return &Account{id: id, createdAt: createdAt, limits: limits}
}

func (a *Account) ID() string           { return a.id }
func (a *Account) CreatedAt() time.Time { return a.createdAt }

// Limits are the account's own limits; a zero field is the installation's default.
func (a *Account) Limits() Limits { return a.limits }

// Repository stores accounts.
type Repository interface {
	// Create stores a new account; ErrAlreadyExists when one has its id.
	Create(ctx context.Context, a *Account) error
	// Ensure creates the account if it does not exist yet (the upgrade of installations where accounts were made on
	// first use). Safe to call concurrently.
	Ensure(ctx context.Context, a *Account) error
	// Get returns ErrNotFound when the account does not exist.
	Get(ctx context.Context, id string) (*Account, error)
	// List returns a page of accounts ordered by id, and the token of the next page ("" at the end).
	List(ctx context.Context, page domain.Page) ([]*Account, string, error)
	// Delete deletes the account's row; ErrNotFound when there is none.
	Delete(ctx context.Context, id string) error
	// SetLimits stores the account's limits; ErrNotFound when there is no such account.
	SetLimits(ctx context.Context, id string, limits Limits) error
}

// Throttle admits the events an account puts, at its rate. Admit takes n events of the account's budget, or
// answers the error to return instead (domain.KindThrottled, with RetryAfter) when the account is over its rate.
type Throttle interface {
	Admit(ctx context.Context, accountID string, n int) error
}

// ErrThrottled is the answer to an account putting events faster than its rate.
var ErrThrottled = &domain.Error{Kind: domain.KindThrottled, Code: "PutEventsRateExceeded"}

// Storage meters what each account keeps in the event store against its storage quota, and the installation
// against its storage budget.
type Storage interface {
	// AdmitPut answers ErrStorageQuotaExceeded while what the account keeps fills its quota, and
	// ErrStorageBudgetExceeded while what the installation keeps fills its budget; nothing is stored then.
	AdmitPut(accountID string) error
	// Reserve takes maxBytes for the bus busID of the account (its own retention.maxBytes) in place of the before
	// bytes it held, or answers ErrStorageQuotaExceeded or ErrStorageBudgetExceeded, naming field, when they do
	// not fit.
	Reserve(ctx context.Context, accountID, busID, field string, maxBytes, before int64) error
	// Unreserve forgets what Reserve took for busID when the change did not happen.
	Unreserve(busID string)
}

// Errors of storage: what an account or the installation would keep does not fit.
var (
	ErrStorageQuotaExceeded  = &domain.Error{Kind: domain.KindLimitExceeded, Code: "AccountStorageQuotaExceeded"}
	ErrStorageBudgetExceeded = &domain.Error{Kind: domain.KindLimitExceeded, Code: "StorageBudgetExceeded"}
)

// Errors of accounts.
var (
	ErrNotFound      = &domain.Error{Kind: domain.KindNotFound, Code: "AccountNotFound"}
	ErrAlreadyExists = &domain.Error{Kind: domain.KindConflict, Code: "AccountAlreadyExists"}
)

// Purger deletes what one kind of resource an account owns holds (buses with their rules, targets, sources,
// streams and connectors; connections; keys; ...). PurgeAccount is idempotent: a deletion that failed halfway is
// finished by calling it again.
type Purger interface {
	PurgeAccount(ctx context.Context, accountID string) error
}

// PurgerFunc is a function that is a Purger.
type PurgerFunc func(ctx context.Context, accountID string) error

func (f PurgerFunc) PurgeAccount(ctx context.Context, accountID string) error {
	return f(ctx, accountID)
}

// Service holds the use cases of accounts.
type Service struct {
	Accounts Repository
	// Purgers delete what an account owns, in order, before the account itself.
	Purgers []Purger
	Clock   domain.Clock
}

// Create creates an account. Errors: validation, ErrAlreadyExists.
func (s *Service) Create(ctx context.Context, id string) (*Account, error) {
	a, err := New(id, s.Clock.Now())
	if err != nil {
		return nil, err
	}
	if err := s.Accounts.Create(ctx, a); err != nil {
		return nil, err
	}
	return a, nil
}

// Get returns ErrNotFound for an unknown account.
func (s *Service) Get(ctx context.Context, id string) (*Account, error) {
	if err := domain.ValidateAccountID(id); err != nil {
		return nil, ErrNotFound.With("account %q not found", id)
	}
	return s.Accounts.Get(ctx, id)
}

// List returns a page of accounts.
func (s *Service) List(ctx context.Context, page domain.Page) ([]*Account, string, error) {
	return s.Accounts.List(ctx, page)
}

// SetLimits sets the account's limits (an instance administrator's call). Errors: ErrNotFound, validation.
func (s *Service) SetLimits(ctx context.Context, id string, limits Limits) (*Account, error) {
	if err := limits.Validate(); err != nil {
		return nil, err
	}
	a, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.Accounts.SetLimits(ctx, id, limits); err != nil {
		return nil, err
	}
	a.limits = limits
	return a, nil
}

// Delete deletes the account and everything it owns: confirm must repeat its id. The purgers run first, then
// the account's row goes; a failure stops the deletion, which a second call finishes. Errors: ErrNotFound,
// validation (confirm).
func (s *Service) Delete(ctx context.Context, id, confirm string) error {
	if _, err := s.Get(ctx, id); err != nil {
		return err
	}
	if confirm != id {
		return domain.Invalid("confirm", "deleting account %q deletes every resource, event and key it has: confirm must repeat its id", id)
	}
	ctx = context.WithoutCancel(ctx) // a deletion once begun is not left halfway by a client that went away
	for _, p := range s.Purgers {
		if err := p.PurgeAccount(ctx, id); err != nil {
			return err
		}
	}
	return s.Accounts.Delete(ctx, id)
}
