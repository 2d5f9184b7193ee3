package accesskey

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/account"
)

// DefaultCacheTTL is how long a key read from the repository is believed without reading it again: the longest a
// revocation on another control-plane replica takes to reach this one (as API keys').
const DefaultCacheTTL = 500 * time.Millisecond

// TouchInterval is how often, at most, a key's last use is written.
const TouchInterval = time.Minute

// Service holds the use cases of access keys and gives the AWS API the credentials it verifies signatures with.
// Safe for concurrent use.
type Service struct {
	Keys     Repository
	Accounts account.Repository
	Sealer   domain.Sealer
	Opener   domain.Opener
	Clock    domain.Clock
	Logger   *slog.Logger
	// CacheTTL overrides DefaultCacheTTL (tests); negative disables the cache.
	CacheTTL time.Duration

	cache domain.Believed[cached] // by key id
}

// cached is a key read from the repository with its secret opened; touched is when its last use was last written.
type cached struct {
	key       *Key
	secret    string
	principal *access.Principal
	touched   time.Time
}

var _ account.Purger = (*Service)(nil)

func (s *Service) ttl() time.Duration {
	if s.CacheTTL != 0 {
		return s.CacheTTL
	}
	return DefaultCacheTTL
}

// Create creates an access key of the account for the caller by and returns it with its secret access key, which
// is answered this once. Errors: validation, account.ErrNotFound, ErrTooManyWithName.
func (s *Service) Create(ctx context.Context, by *access.Principal, accountID string, spec Spec) (*Key, string, error) {
	if _, err := s.Accounts.Get(ctx, accountID); err != nil {
		return nil, "", err
	}
	creator := "system"
	if by != nil {
		creator = by.String()
	}
	now := s.Clock.Now()
	k, secret, err := New(accountID, spec, creator, s.Sealer, now)
	if err != nil {
		return nil, "", err
	}
	if err := s.Keys.Create(ctx, k, now); err != nil {
		return nil, "", err
	}
	return k, secret, nil
}

// Get returns the account's key with id (revoked ones too); ErrNotFound, also for a key of another account.
func (s *Service) Get(ctx context.Context, accountID, id string) (*Key, error) {
	k, err := s.Keys.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if k.AccountID() != accountID {
		return nil, ErrNotFound.With("access key %q not found", id)
	}
	return k, nil
}

// List returns a page of the account's keys that are not revoked.
func (s *Service) List(ctx context.Context, accountID string, page domain.Page) ([]*Key, string, error) {
	return s.Keys.List(ctx, accountID, page)
}

// Revoke revokes the account's key id: it stops authenticating on this replica at once and on every other one
// within the cache's lifetime. Errors: ErrNotFound.
func (s *Service) Revoke(ctx context.Context, accountID, id string) error {
	if err := s.Keys.Revoke(ctx, accountID, id, s.Clock.Now()); err != nil {
		return err
	}
	s.cache.Forget(id)
	return nil
}

// PurgeAccount deletes every key of the account (account.Purger).
func (s *Service) PurgeAccount(ctx context.Context, accountID string) error {
	if err := s.Keys.DeleteAccount(ctx, accountID); err != nil {
		return err
	}
	s.cache.ForgetIf(func(c cached) bool { return c.key.AccountID() == accountID })
	return nil
}

// Credentials returns the principal of the live key id and its secret access key, for a signature to be verified
// with. Whatever is wrong with the key — unknown, revoked, expired, a secret that does not open — the error is
// access.ErrUnauthenticated; a failure to read the repository is returned as it is. A key is read at most once per
// cache lifetime; its last use is written at most once per TouchInterval (the caller calls Used once the signature
// verified).
func (s *Service) Credentials(ctx context.Context, id string) (*access.Principal, string, error) {
	now := s.Clock.Now()
	c, found, err := s.cache.Lookup(id, now, s.ttl(), func(prev cached, had bool) (cached, bool, error) {
		k, err := s.Keys.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return cached{}, false, nil
		}
		if err != nil {
			return cached{}, false, err
		}
		secret, err := s.Opener.Open(SecretOwner(k.AccountID(), k.ID()), k.SealedSecret())
		if err != nil {
			s.Logger.Error("opening the secret of an access key", "key", k.ID(), "err", err)
			return cached{}, false, nil
		}
		touched := k.LastUsedAt()
		if had && prev.touched.After(touched) {
			touched = prev.touched
		}
		return cached{key: k, secret: secret, principal: k.Principal(), touched: touched}, true, nil
	})
	if err != nil {
		return nil, "", err
	}
	if !found || !c.key.Live(now) {
		return nil, "", access.Unauthenticated()
	}
	return c.principal, c.secret, nil
}

// Used records that the key id authenticated a request, at most once per TouchInterval; a failure is logged.
func (s *Service) Used(ctx context.Context, id string) {
	now := s.Clock.Now()
	found, changed := s.cache.Update(id, func(cur *cached) bool {
		if now.Sub(cur.touched) < TouchInterval {
			return false
		}
		cur.touched = now
		return true
	})
	if !found || !changed {
		return
	}
	if err := s.Keys.Touch(context.WithoutCancel(ctx), id, now); err != nil {
		s.Logger.Warn("recording the last use of an access key", "key", id, "err", err)
	}
}
