package persistence_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/tag"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
)

// TestTagRepository: tags are upserted, listed by key, removed by key, kept per resource and account, limited to
// tag.MaxPerResource also under concurrent calls, case-sensitive, and deleted with the account.
func TestTagRepository(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			db := persistencetest.Open(t, dialect)
			accounts, tags := persistence.NewAccountRepository(db), persistence.NewTagRepository(db)
			acc := newAccount()
			a, err := account.New(acc, time.Now())
			require.NoError(t, err)
			require.NoError(t, accounts.Create(ctx, a))
			res, other := domain.NewID(), domain.NewID()

			require.NoError(t, tags.Set(ctx, acc, res, []tag.Tag{{Key: "team", Value: "shop"}, {Key: "Team", Value: "ops"}, {Key: "env", Value: ""}}))
			require.NoError(t, tags.Set(ctx, acc, res, []tag.Tag{{Key: "team", Value: "orders"}}))
			require.NoError(t, tags.Set(ctx, acc, other, []tag.Tag{{Key: "x", Value: "y"}}))
			got, err := tags.List(ctx, acc, res)
			require.NoError(t, err)
			assert.Equal(t, []tag.Tag{{Key: "Team", Value: "ops"}, {Key: "env", Value: ""}, {Key: "team", Value: "orders"}}, got)

			require.NoError(t, tags.Remove(ctx, acc, res, []string{"Team", "absent"}))
			got, err = tags.List(ctx, acc, res)
			require.NoError(t, err)
			assert.Equal(t, []tag.Tag{{Key: "env", Value: ""}, {Key: "team", Value: "orders"}}, got)

			// 48 more make 50; concurrent calls adding one more each: exactly the room left is taken.
			var more []tag.Tag
			for i := range 48 {
				more = append(more, tag.Tag{Key: fmt.Sprintf("k%02d", i), Value: "v"})
			}
			require.NoError(t, tags.Set(ctx, acc, res, more))
			require.ErrorIs(t, tags.Set(ctx, acc, res, []tag.Tag{{Key: "one-too-many", Value: "v"}}), tag.ErrTooMany)
			require.NoError(t, tags.Set(ctx, acc, res, []tag.Tag{{Key: "k00", Value: "changed"}}), "replacing takes no room")
			require.NoError(t, tags.Remove(ctx, acc, res, []string{"k00", "k01"}))
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = tags.Set(ctx, acc, res, []tag.Tag{{Key: fmt.Sprintf("c%d", i), Value: "v"}})
				}()
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				if err == nil {
					ok++
				} else {
					assert.True(t, errors.Is(err, tag.ErrTooMany), "%v", err)
				}
			}
			assert.Equal(t, 2, ok)
			got, err = tags.List(ctx, acc, res)
			require.NoError(t, err)
			assert.Len(t, got, tag.MaxPerResource)

			require.NoError(t, tags.DeleteAccount(ctx, acc))
			for _, r := range []string{res, other} {
				got, err = tags.List(ctx, acc, r)
				require.NoError(t, err)
				assert.Empty(t, got)
			}
		})
	}
}
