package persistence_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/apikey"
	"github.com/eventbridge-go/eventbridge/domain/user"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
)

// plainHasher keeps passwords as they are: the repository stores what the domain gives it.
type plainHasher struct{}

func (plainHasher) Hash(p string) (string, error)      { return "plain$" + p, nil }
func (plainHasher) Verify(p, enc string) (bool, error) { return enc == "plain$"+p, nil }

func TestIdentityRepositories(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := persistencetest.Open(t, dialect)
			accounts := persistence.NewAccountRepository(db)
			users := persistence.NewUserRepository(db)
			keys := persistence.NewAPIKeyRepository(db)
			now := time.Now().UTC().Truncate(time.Microsecond)

			// Accounts: the migration made default; create, list in pages, delete.
			_, err := accounts.Get(ctx, domain.DefaultAccountID)
			require.NoError(t, err, "the migration creates the account default")
			for _, id := range []string{"b", "a", "c"} {
				a, err := account.New(id, now)
				require.NoError(t, err)
				require.NoError(t, accounts.Create(ctx, a))
			}
			a, _ := account.New("a", now)
			assert.ErrorIs(t, accounts.Create(ctx, a), account.ErrAlreadyExists)
			page, next, err := accounts.List(ctx, domain.Page{Limit: 2})
			require.NoError(t, err)
			require.Len(t, page, 2)
			assert.Equal(t, "a", page[0].ID())
			assert.Equal(t, "b", page[1].ID())
			page, next, err = accounts.List(ctx, domain.Page{Limit: 2, Token: next})
			require.NoError(t, err)
			assert.Equal(t, []string{"c", "default"}, []string{page[0].ID(), page[1].ID()})
			assert.Empty(t, next)
			// Limits: stored, read back, the same again (MySQL then counts no changed row), unknown account.
			assert.Zero(t, page[0].Limits().PutEventsPerSecond, "an account has the installation's defaults")
			for range 2 {
				require.NoError(t, accounts.SetLimits(ctx, "b", account.Limits{PutEventsPerSecond: 250}))
			}
			b, err := accounts.Get(ctx, "b")
			require.NoError(t, err)
			assert.Equal(t, 250, b.Limits().PutEventsPerSecond)
			assert.ErrorIs(t, accounts.SetLimits(ctx, "nope", account.Limits{PutEventsPerSecond: 1}), account.ErrNotFound)
			require.NoError(t, accounts.Delete(ctx, "c"))
			assert.ErrorIs(t, accounts.Delete(ctx, "c"), account.ErrNotFound)

			// Users and memberships.
			alice, err := user.New("Alice", "correct horse", false, plainHasher{}, now)
			require.NoError(t, err)
			require.NoError(t, users.Create(ctx, alice))
			dup, _ := user.New("alice", "another one", false, plainHasher{}, now)
			assert.ErrorIs(t, users.Create(ctx, dup), user.ErrAlreadyExists)
			got, err := users.Get(ctx, "alice")
			require.NoError(t, err)
			assert.Equal(t, alice.ID(), got.ID())
			assert.Equal(t, "plain$correct horse", got.PasswordHash())
			assert.Equal(t, alice.CreatedAt(), got.CreatedAt())
			_, err = users.Get(ctx, "bob")
			assert.ErrorIs(t, err, user.ErrNotFound)
			yes := true
			_, err = users.Update(ctx, "alice", func(u *user.User) error {
				return u.Apply(user.Patch{InstanceAdmin: &yes}, plainHasher{}, now)
			})
			require.NoError(t, err)
			n, err := users.CountInstanceAdmins(ctx)
			require.NoError(t, err)
			assert.Equal(t, 1, n)
			created, err := users.PutMembership(ctx, user.Membership{AccountID: "a", UserID: alice.ID(), Role: access.Editor, CreatedAt: now})
			require.NoError(t, err)
			assert.True(t, created)
			created, err = users.PutMembership(ctx, user.Membership{AccountID: "a", UserID: alice.ID(), Role: access.Viewer, CreatedAt: now})
			require.NoError(t, err)
			assert.False(t, created, "a second put changes the role")
			_, err = users.PutMembership(ctx, user.Membership{AccountID: "b", UserID: alice.ID(), Role: access.Admin, CreatedAt: now})
			require.NoError(t, err)
			ms, err := users.Memberships(ctx, alice.ID())
			require.NoError(t, err)
			require.Len(t, ms, 2)
			assert.Equal(t, user.Membership{AccountID: "a", UserID: alice.ID(), Username: "alice", Role: access.Viewer, CreatedAt: now}, ms[0])
			members, _, err := users.Members(ctx, "b", domain.Page{})
			require.NoError(t, err)
			require.Len(t, members, 1)
			assert.Equal(t, "alice", members[0].Username)
			require.NoError(t, users.DeleteMembership(ctx, "b", alice.ID()))
			assert.ErrorIs(t, users.DeleteMembership(ctx, "b", alice.ID()), user.ErrMembershipNotFound)
			require.NoError(t, users.DeleteMembershipsOf(ctx, "a"))
			ms, err = users.Memberships(ctx, alice.ID())
			require.NoError(t, err)
			assert.Empty(t, ms)
			for i := range 3 {
				u, err := user.New(fmt.Sprintf("user%d@example.com", i), "long enough", false, plainHasher{}, now)
				require.NoError(t, err)
				require.NoError(t, users.Create(ctx, u))
			}
			all, next, err := users.List(ctx, domain.Page{Limit: 3})
			require.NoError(t, err)
			require.Len(t, all, 3)
			rest, next2, err := users.List(ctx, domain.Page{Limit: 3, Token: next})
			require.NoError(t, err)
			assert.Len(t, rest, 1)
			assert.Empty(t, next2)
			require.NoError(t, users.Delete(ctx, "alice"))
			assert.ErrorIs(t, users.Delete(ctx, "alice"), user.ErrNotFound)

			// API keys.
			k, _, err := apikey.New("a", apikey.Spec{Name: "ci", Role: access.Publisher, Buses: []string{"orders"},
				ExpiresAt: now.Add(time.Hour)}, "test", now)
			require.NoError(t, err)
			require.NoError(t, keys.Create(ctx, k, now))
			back, err := keys.Get(ctx, k.ID())
			require.NoError(t, err)
			assert.Equal(t, k.SecretHash(), back.SecretHash())
			assert.Equal(t, []string{"orders"}, back.Buses())
			assert.Equal(t, k.ExpiresAt(), back.ExpiresAt())
			assert.True(t, back.LastUsedAt().IsZero())
			assert.False(t, back.Revoked())
			require.NoError(t, keys.Touch(ctx, k.ID(), now.Add(time.Minute)))
			back, _ = keys.Get(ctx, k.ID())
			assert.Equal(t, now.Add(time.Minute), back.LastUsedAt())
			k2, _, _ := apikey.New("a", apikey.Spec{Name: "ci", Role: access.Viewer}, "test", now)
			require.NoError(t, keys.Create(ctx, k2, now))
			k3, _, _ := apikey.New("a", apikey.Spec{Name: "ci", Role: access.Viewer}, "test", now)
			assert.ErrorIs(t, keys.Create(ctx, k3, now), apikey.ErrTooManyWithName)
			assert.NoError(t, keys.Create(ctx, k3, now.Add(2*time.Hour)), "the first expired: two live again")
			listed, _, err := keys.List(ctx, "a", domain.Page{})
			require.NoError(t, err)
			assert.Len(t, listed, 3)
			require.NoError(t, keys.Revoke(ctx, "a", k.ID(), now))
			assert.ErrorIs(t, keys.Revoke(ctx, "a", k.ID(), now), apikey.ErrNotFound)
			assert.ErrorIs(t, keys.Revoke(ctx, "b", k2.ID(), now), apikey.ErrNotFound, "another account's key")
			listed, _, err = keys.List(ctx, "a", domain.Page{Limit: 1})
			require.NoError(t, err)
			assert.Len(t, listed, 1)
			back, _ = keys.Get(ctx, k.ID())
			assert.True(t, back.Revoked())
			root, _, _ := apikey.New("default", apikey.Spec{Name: "root", Role: access.Admin, InstanceAdmin: true}, "test", now)
			require.NoError(t, keys.Create(ctx, root, now))
			n, err = keys.CountInstanceAdminKeys(ctx, now)
			require.NoError(t, err)
			assert.Equal(t, 1, n)
			unknown, _, _ := apikey.New("nosuch", apikey.Spec{Name: "x", Role: access.Viewer}, "test", now)
			assert.Error(t, keys.Create(ctx, unknown, now), "a key of an account that does not exist")
			require.NoError(t, keys.DeleteAccount(ctx, "a"))
			listed, _, err = keys.List(ctx, "a", domain.Page{})
			require.NoError(t, err)
			assert.Empty(t, listed)
		})
	}
}

// TestAPIKeyNameLimitConcurrent: concurrent creations of keys of one name store at most apikey.MaxLiveWithName.
func TestAPIKeyNameLimitConcurrent(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			keys := persistence.NewAPIKeyRepository(persistencetest.Open(t, dialect))
			now := time.Now()
			var wg sync.WaitGroup
			var mu sync.Mutex
			stored := 0
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					k, _, _ := apikey.New(domain.DefaultAccountID, apikey.Spec{Name: "ci", Role: access.Viewer}, "test", now)
					if err := keys.Create(ctx, k, now); err == nil {
						mu.Lock()
						stored++
						mu.Unlock()
					} else {
						assert.ErrorIs(t, err, apikey.ErrTooManyWithName)
					}
				}()
			}
			wg.Wait()
			assert.Equal(t, apikey.MaxLiveWithName, stored)
		})
	}
}
