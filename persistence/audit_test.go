package persistence_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/audit"
	"github.com/eventbridge-go/eventbridge/domain/session"
	"github.com/eventbridge-go/eventbridge/domain/user"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
)

// TestAuditRepository: entries are appended once per id, listed newest first in pages, filtered by every field of
// the filter (a trailing * a prefix, other LIKE characters taken literally), and deleted after a time.
func TestAuditRepository(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			repo := persistence.NewAuditRepository(persistencetest.Open(t, dialect))
			t0 := time.Now().UTC().Truncate(time.Microsecond).Add(-time.Hour)
			var entries []audit.Entry
			for i := range 10 {
				e := audit.Entry{ID: fmt.Sprintf("e%02d", i), Time: t0.Add(time.Duration(i) * time.Minute), Source: audit.SourceControlPlane,
					AccountID: []string{"shop", "lab"}[i%2], ActorKind: "apiKey", ActorID: "k1", ActorName: "ci",
					Operation: []string{"buses.create", "rules.create"}[i%2], Resource: fmt.Sprintf("buses/b%d", i),
					Status: 201, ClientAddr: "192.0.2.1"}
				e.Normalize()
				entries = append(entries, e)
			}
			entries[9].Resource, entries[9].Status, entries[9].ErrorCode = "buses/b_%9", 409, "BusAlreadyExists"
			entries[9].Outcome = audit.Failure
			require.NoError(t, repo.Append(ctx, entries))
			require.NoError(t, repo.Append(ctx, entries[:3]), "appending again skips what is stored")

			list := func(f audit.Filter, page domain.Page) ([]string, string) {
				t.Helper()
				es, next, err := repo.List(ctx, f, page)
				require.NoError(t, err)
				ids := []string{}
				for _, e := range es {
					ids = append(ids, e.ID)
				}
				return ids, next
			}
			ids, _ := list(audit.Filter{AllAccounts: true}, domain.Page{})
			assert.Equal(t, []string{"e09", "e08", "e07", "e06", "e05", "e04", "e03", "e02", "e01", "e00"}, ids)
			ids, next := list(audit.Filter{AccountID: "shop"}, domain.Page{Limit: 3})
			assert.Equal(t, []string{"e08", "e06", "e04"}, ids)
			ids, next = list(audit.Filter{AccountID: "shop"}, domain.Page{Limit: 3, Token: next})
			assert.Equal(t, []string{"e02", "e00"}, ids)
			assert.Empty(t, next)

			ids, _ = list(audit.Filter{AllAccounts: true, Operation: "rules.*"}, domain.Page{})
			assert.Equal(t, []string{"e09", "e07", "e05", "e03", "e01"}, ids)
			ids, _ = list(audit.Filter{AllAccounts: true, Resource: "buses/b_*"}, domain.Page{})
			assert.Equal(t, []string{"e09"}, ids, "_ is no wildcard")
			ids, _ = list(audit.Filter{AllAccounts: true, Resource: "buses/b1"}, domain.Page{})
			assert.Equal(t, []string{"e01"}, ids)
			ids, _ = list(audit.Filter{AllAccounts: true, Outcome: audit.Failure}, domain.Page{})
			assert.Equal(t, []string{"e09"}, ids)
			ids, _ = list(audit.Filter{AllAccounts: true, Actor: "ci", From: t0.Add(2 * time.Minute), To: t0.Add(4 * time.Minute)}, domain.Page{})
			assert.Equal(t, []string{"e03", "e02"}, ids)
			ids, _ = list(audit.Filter{AllAccounts: true, Actor: "someone"}, domain.Page{})
			assert.Empty(t, ids)

			n, err := repo.DeleteBefore(ctx, t0.Add(5*time.Minute))
			require.NoError(t, err)
			assert.Equal(t, 5, n)
			ids, _ = list(audit.Filter{AllAccounts: true}, domain.Page{})
			assert.Equal(t, []string{"e09", "e08", "e07", "e06", "e05"}, ids)
		})
	}
}

// TestSessionRepository: sessions go with their user; ended ones are deleted; a failure count starts again after
// its window and is cleared.
func TestSessionRepository(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := persistencetest.Open(t, dialect)
			users := persistence.NewUserRepository(db)
			repo := persistence.NewSessionRepository(db)
			now := time.Now().UTC().Truncate(time.Microsecond)
			u, err := user.New("alice", "password-alice", false, plainHasher{}, now)
			require.NoError(t, err)
			require.NoError(t, users.Create(ctx, u))

			s1, _ := session.New(u.ID(), "alice", session.Client{Addr: "192.0.2.1", UserAgent: "test"}, time.Hour, now)
			s2, _ := session.New(u.ID(), "alice", session.Client{}, time.Minute, now.Add(time.Second))
			require.NoError(t, repo.Create(ctx, s1))
			require.NoError(t, repo.Create(ctx, s2))
			got, err := repo.Get(ctx, s1.ID())
			require.NoError(t, err)
			assert.Equal(t, s1, got)
			all, err := repo.ListByUser(ctx, u.ID())
			require.NoError(t, err)
			require.Len(t, all, 2)
			assert.Equal(t, s2.ID(), all[0].ID(), "newest first")

			require.NoError(t, repo.Touch(ctx, s1.ID(), now.Add(10*time.Minute)))
			require.NoError(t, repo.Touch(ctx, s1.ID(), now.Add(5*time.Minute)), "never moved back")
			got, _ = repo.Get(ctx, s1.ID())
			assert.Equal(t, now.Add(10*time.Minute), got.LastSeenAt())
			n, err := repo.DeleteEnded(ctx, now.Add(-time.Hour), now.Add(2*time.Minute))
			require.NoError(t, err)
			assert.Equal(t, 1, n, "s2 expired")

			require.NoError(t, users.Delete(ctx, "alice"))
			_, err = repo.Get(ctx, s1.ID())
			assert.ErrorIs(t, err, session.ErrNotFound, "sessions go with their user")

			decide := func(f session.Failures) time.Duration { return 0 }
			for i := range 3 {
				f, _, err := repo.Attempt(ctx, "k", "a1", now.Add(-time.Minute), now.Add(time.Duration(i)*time.Second), decide)
				require.NoError(t, err)
				assert.Equal(t, i, f.Pair)
			}
			f, _, err := repo.Attempt(ctx, "k", "a2", now.Add(-time.Minute), now.Add(5*time.Second), decide)
			require.NoError(t, err)
			assert.Equal(t, session.Failures{Pair: 0, User: 3}, f, "another address; the user's failures from everywhere")
			f, _, err = repo.Attempt(ctx, "k", "a1", now.Add(time.Hour), now.Add(time.Hour), decide)
			require.NoError(t, err)
			assert.Equal(t, 0, f.Pair, "failures before the window count as none")
			f, _, err = repo.Attempt(ctx, "k", "a1", now, now.Add(time.Hour+time.Second), decide)
			require.NoError(t, err)
			assert.Equal(t, 1, f.Pair, "the count started again")
			require.NoError(t, repo.ClearFailures(ctx, "k", "a1"))
			f, _, err = repo.Attempt(ctx, "k", "a1", now, now.Add(2*time.Hour), func(session.Failures) time.Duration { return time.Second })
			require.NoError(t, err)
			assert.Equal(t, 0, f.Pair)
			f, _, err = repo.Attempt(ctx, "k", "a1", now, now.Add(2*time.Hour), decide)
			require.NoError(t, err)
			assert.Equal(t, 0, f.Pair, "a refused attempt is not counted")
		})
	}
}
