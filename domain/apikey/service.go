package apikey

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/account"
)

// DefaultCacheTTL is how long a key read from the repository is believed without reading it again: the longest a
// revocation on another control-plane replica takes to reach this one.
const DefaultCacheTTL = 500 * time.Millisecond

// TouchInterval is how often, at most, a key's last use is written.
const TouchInterval = time.Minute

// Service holds the use cases of API keys and authenticates requests by key. Safe for concurrent use.
type Service struct {
	Keys     Repository
	Accounts account.Repository
	Clock    domain.Clock
	Logger   *slog.Logger
	// CacheTTL overrides DefaultCacheTTL (tests); negative disables the cache.
	CacheTTL time.Duration

	cache domain.Believed[cached] // by key id
}

// cached is a key read from the repository; touched is when its last use was last written.
type cached struct {
	key       *Key
	principal *access.Principal
	touched   time.Time
}

func (s *Service) ttl() time.Duration {
	if s.CacheTTL != 0 {
		return s.CacheTTL
	}
	return DefaultCacheTTL
}

// Create creates a key of the account for the caller by and returns it with its token, which is not kept. Only
// an instance administrator (or the system: by nil) creates an instance administrator's key. Errors: validation, account.ErrNotFound,
// ErrTooManyWithName, access.ErrForbidden.
func (s *Service) Create(ctx context.Context, by *access.Principal, accountID string, spec Spec) (*Key, string, error) {
	if spec.InstanceAdmin && by != nil && !by.InstanceAdmin() {
		return nil, "", access.ErrForbidden.With("only an instance administrator creates an instance administrator's key")
	}
	if _, err := s.Accounts.Get(ctx, accountID); err != nil {
		return nil, "", err
	}
	creator := "system"
	if by != nil {
		creator = by.String()
	}
	now := s.Clock.Now()
	k, token, err := New(accountID, spec, creator, now)
	if err != nil {
		return nil, "", err
	}
	if err := s.Keys.Create(ctx, k, now); err != nil {
		return nil, "", err
	}
	return k, token, nil
}

// Import stores the key of a token made elsewhere (the bootstrap key file). Errors: as Create, and validation of
// the token.
func (s *Service) Import(ctx context.Context, token, accountID string, spec Spec) (*Key, error) {
	now := s.Clock.Now()
	k, err := FromToken(token, accountID, spec, "system", now)
	if err != nil {
		return nil, err
	}
	if err := s.Keys.Create(ctx, k, now); err != nil {
		return nil, err
	}
	return k, nil
}

// Get returns the account's key with id (revoked ones too); ErrNotFound, also for a key of another account.
func (s *Service) Get(ctx context.Context, accountID, id string) (*Key, error) {
	k, err := s.Keys.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if k.AccountID() != accountID {
		return nil, ErrNotFound.With("API key %q not found", id)
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
	s.forget(id)
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

var _ account.Purger = (*Service)(nil)

func (s *Service) forget(id string) { s.cache.Forget(id) }

// dummyHash is compared against when a token names no key, so that an unknown id and a wrong secret take the
// same path.
var dummyHash = sha256.Sum256([]byte("no key has this secret"))

// Authenticate returns the principal of token. Whatever is wrong with it — not the form of a key, an unknown id,
// a wrong secret, revoked, expired — the error is access.ErrUnauthenticated with access.UnauthenticatedMessage;
// a failure to read the repository is returned as it is. A key is read from the repository at most once per
// cache lifetime; its last use is written at most once per TouchInterval.
func (s *Service) Authenticate(ctx context.Context, token string) (*access.Principal, error) {
	id, secret, ok := parse(token)
	got := sha256.Sum256([]byte(secret))
	now := s.Clock.Now()
	var c cached
	found := false
	if ok {
		var err error
		c, found, err = s.lookup(ctx, id, now)
		if err != nil {
			return nil, err
		}
	}
	want := dummyHash
	if found {
		want = c.key.SecretHash()
	}
	match := subtle.ConstantTimeCompare(got[:], want[:]) == 1
	if !ok || !found || !match || !c.key.Live(now) {
		return nil, access.Unauthenticated()
	}
	if now.Sub(c.touched) >= TouchInterval {
		s.touch(ctx, c, now)
	}
	return c.principal, nil
}

// lookup returns the key id from the cache, or from the repository when the cache has none younger than its
// lifetime; found is false when no key has id.
func (s *Service) lookup(ctx context.Context, id string, now time.Time) (cached, bool, error) {
	return s.cache.Lookup(id, now, s.ttl(), func(prev cached, had bool) (cached, bool, error) {
		k, err := s.Keys.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return cached{}, false, nil
		}
		if err != nil {
			return cached{}, false, err
		}
		touched := k.LastUsedAt()
		if had && prev.touched.After(touched) {
			touched = prev.touched // this replica's write may not be read back yet
		}
		return cached{key: k, principal: k.Principal(), touched: touched}, true, nil
	})
}

// touch writes the key's last use; a failure is logged, never fails the request.
func (s *Service) touch(ctx context.Context, c cached, now time.Time) {
	found, changed := s.cache.Update(c.key.ID(), func(cur *cached) bool {
		if now.Sub(cur.touched) < TouchInterval {
			return false // another request wrote it meanwhile
		}
		cur.touched = now
		return true
	})
	if found && !changed {
		return
	}
	if err := s.Keys.Touch(context.WithoutCancel(ctx), c.key.ID(), now); err != nil && s.Logger != nil {
		s.Logger.Warn("recording the last use of an API key", "key", c.key.DisplayPrefix(), "err", err)
	}
}

// HasInstanceAdminKey reports whether a live instance administrator's key exists.
func (s *Service) HasInstanceAdminKey(ctx context.Context) (bool, error) {
	n, err := s.Keys.CountInstanceAdminKeys(ctx, s.Clock.Now())
	return n > 0, err
}
