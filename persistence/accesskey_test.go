package persistence_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/accesskey"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
)

// plainSealer seals by prefixing, for the repository cases (the master-key sealer is adapter/connect's).
type plainSealer struct{}

func (plainSealer) Seal(o domain.SecretOwner, v string) (string, error) {
	return "enc:test:" + o.ID + ":" + v, nil
}

// TestAccessKeyRepository: keys round-trip with their sealed secret and times; lists leave revoked keys out and page;
// at most two live keys of a name per account, also under concurrent creations; revoke and delete of an account.
func TestAccessKeyRepository(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			db := persistencetest.Open(t, dialect)
			accounts, keys := persistence.NewAccountRepository(db), persistence.NewAccessKeyRepository(db)
			acc := newAccount()
			a, err := account.New(acc, time.Now())
			require.NoError(t, err)
			require.NoError(t, accounts.Create(ctx, a))
			now := time.Now()
			newKey := func(name string) (*accesskey.Key, error) {
				k, _, err := accesskey.New(acc, accesskey.Spec{Name: name, Role: access.Editor, ExpiresAt: now.Add(time.Hour)}, "test", plainSealer{}, now)
				require.NoError(t, err)
				return k, keys.Create(ctx, k, now)
			}
			k1, err := newKey("tf")
			require.NoError(t, err)
			got, err := keys.Get(ctx, k1.ID())
			require.NoError(t, err)
			assert.Equal(t, k1.SealedSecret(), got.SealedSecret())
			assert.Equal(t, access.Editor, got.Role())
			assert.Equal(t, stored(now.Add(time.Hour)), got.ExpiresAt())
			assert.True(t, got.LastUsedAt().IsZero())

			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Add(1)
				go func() { defer wg.Done(); _, errs[i] = newKey("tf") }()
			}
			wg.Wait()
			refused := 0
			for _, err := range errs {
				if errors.Is(err, accesskey.ErrTooManyWithName) {
					refused++
				} else {
					require.NoError(t, err)
				}
			}
			assert.Equal(t, 3, refused, "two live keys of a name at most, one already there")

			_, err = newKey("other")
			require.NoError(t, err)
			page, next, err := keys.List(ctx, acc, domain.Page{Limit: 1})
			require.NoError(t, err)
			require.Len(t, page, 1)
			assert.Equal(t, "other", page[0].Name())
			require.NotEmpty(t, next)
			rest, _, err := keys.List(ctx, acc, domain.Page{Limit: 10, Token: next})
			require.NoError(t, err)
			assert.Len(t, rest, 2)

			touched := time.Now()
			require.NoError(t, keys.Touch(ctx, k1.ID(), touched))
			require.NoError(t, keys.Revoke(ctx, acc, k1.ID(), touched))
			assert.True(t, errors.Is(keys.Revoke(ctx, acc, k1.ID(), touched), accesskey.ErrNotFound))
			got, err = keys.Get(ctx, k1.ID())
			require.NoError(t, err)
			assert.True(t, got.Revoked())
			assert.Equal(t, stored(touched), got.LastUsedAt())
			_, err = newKey("tf")
			require.NoError(t, err, "a revoked key frees its name")

			require.NoError(t, keys.DeleteAccount(ctx, acc))
			_, err = keys.Get(ctx, k1.ID())
			assert.True(t, errors.Is(err, accesskey.ErrNotFound))
		})
	}
}
