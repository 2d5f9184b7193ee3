package persistence_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/runtime"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
)

func TestConnectorStates(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := persistence.NewConnectorStateRepository(persistencetest.Open(t, dialect))
			now := time.Now()
			require.NoError(t, r.SetDesiredState(ctx, "acme", "eb.acme.b.router", runtime.StatePaused, now))
			require.NoError(t, r.SetDesiredState(ctx, "acme", "eb.acme.b.r.t", runtime.StatePaused, now))
			require.NoError(t, r.SetDesiredState(ctx, "acme", "eb.acme.b.r.t", runtime.StateStopped, now), "a second state replaces the first")
			got, err := r.DesiredStates(ctx)
			require.NoError(t, err)
			require.Equal(t, map[string]string{"eb.acme.b.router": runtime.StatePaused, "eb.acme.b.r.t": runtime.StateStopped}, got)

			require.NoError(t, r.SetDesiredState(ctx, "acme", "eb.acme.b.router", runtime.StateRunning, now), "running removes the record")
			require.NoError(t, r.ForgetDesiredState(ctx, "eb.acme.b.r.t"))
			require.NoError(t, r.ForgetDesiredState(ctx, "eb.acme.b.none"), "forgetting nothing is no error")
			got, err = r.DesiredStates(ctx)
			require.NoError(t, err)
			require.Empty(t, got)
		})
	}
}

func TestLease(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := persistencetest.Open(t, dialect)
			now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			lease := func(holder string) *persistence.Lease {
				l := persistence.NewLease(db, "reconciler", holder, 10*time.Second)
				persistence.SetLeaseClock(l, clock)
				return l
			}
			a, b := lease("a"), lease("b")

			held, err := a.Acquire(ctx)
			require.NoError(t, err)
			require.True(t, held, "a free lease is taken")
			held, err = b.Acquire(ctx)
			require.NoError(t, err)
			require.False(t, held, "a lease held by another is not")

			now = now.Add(8 * time.Second)
			held, err = a.Acquire(ctx)
			require.NoError(t, err)
			require.True(t, held, "the holder renews")
			now = now.Add(8 * time.Second)
			held, err = b.Acquire(ctx)
			require.NoError(t, err)
			require.False(t, held, "the renewal counts from when it was made")

			now = now.Add(3 * time.Second)
			held, err = b.Acquire(ctx)
			require.NoError(t, err)
			require.True(t, held, "an expired lease is taken over")
			held, err = a.Acquire(ctx)
			require.NoError(t, err)
			require.False(t, held, "the old holder lost it")

			require.NoError(t, a.Release(ctx), "releasing a lease one does not hold changes nothing")
			held, err = a.Acquire(ctx)
			require.NoError(t, err)
			require.False(t, held)
			require.NoError(t, b.Release(ctx))
			held, err = a.Acquire(ctx)
			require.NoError(t, err)
			require.True(t, held, "a released lease is free at once")
		})
	}
}

// Replicas racing for a free lease: exactly one gets it.
func TestLeaseOneHolder(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			db := persistencetest.Open(t, dialect)
			var wg sync.WaitGroup
			results := make(chan bool, 8)
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					held, err := persistence.NewLease(db, "reconciler", string(rune('a'+i)), time.Minute).Acquire(context.Background())
					if err != nil {
						t.Error(err)
					}
					results <- held
				}()
			}
			wg.Wait()
			close(results)
			n := 0
			for held := range results {
				if held {
					n++
				}
			}
			require.Equal(t, 1, n)
		})
	}
}
