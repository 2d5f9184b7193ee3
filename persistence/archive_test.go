package persistence_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/archive"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/replay"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
)

// TestArchiveAndReplayRepositories runs the archive and replay cases against every dialect.
func TestArchiveAndReplayRepositories(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			db := persistencetest.Open(t, dialect)
			r := repos{db: db, accounts: persistence.NewAccountRepository(db), buses: persistence.NewBusRepository(db),
				rules: persistence.NewRuleRepository(db), targets: persistence.NewTargetRepository(db)}
			archives, replays := persistence.NewArchiveRepository(db), persistence.NewReplayRepository(db)
			t.Run("archives", func(t *testing.T) { t.Parallel(); testArchives(t, r, archives) })
			t.Run("replays", func(t *testing.T) { t.Parallel(); testReplays(t, r, replays) })
		})
	}
}

func testArchives(t *testing.T, r repos, archives *persistence.ArchiveRepository) {
	acc := newAccount()
	b1, b2 := createBus(t, r, acc, "one"), createBus(t, r, acc, "two")
	now := time.Now()
	a1, err := archive.New(acc, b1.ID(), "keep", "d", []byte(`{"type": ["x"]}`), 30, now)
	require.NoError(t, err)
	require.NoError(t, archives.Create(ctx, a1))
	all, err := archive.New(acc, b2.ID(), "all", "", nil, 0, now)
	require.NoError(t, err)
	require.NoError(t, archives.Create(ctx, all))

	dup, err := archive.New(acc, b2.ID(), "keep", "", nil, 0, now)
	require.NoError(t, err)
	assert.True(t, errors.Is(archives.Create(ctx, dup), archive.ErrAlreadyExists), "names are unique per account")
	otherAcc := newAccount()
	other, err := archive.New(otherAcc, createBus(t, r, otherAcc, "one").ID(), "keep", "", nil, 0, now)
	require.NoError(t, err)
	require.NoError(t, archives.Create(ctx, other), "another account may use the name")
	orphan, err := archive.New(acc, "nosuchbus0000000", "orphan", "", nil, 0, now)
	require.NoError(t, err)
	assert.True(t, errors.Is(archives.Create(ctx, orphan), bus.ErrNotFound))

	got, err := archives.Get(ctx, acc, "keep")
	require.NoError(t, err)
	assert.Equal(t, a1.ID(), got.ID())
	assert.JSONEq(t, `{"type": ["x"]}`, string(got.EventPattern()))
	assert.Equal(t, 30, got.RetentionDays())
	assert.Equal(t, stored(now), got.CreatedAt())
	got, err = archives.Get(ctx, acc, "all")
	require.NoError(t, err)
	assert.Nil(t, got.EventPattern(), "no pattern round-trips as none")

	list, next, err := archives.List(ctx, acc, "", domain.Page{Limit: 1})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "all", list[0].Name())
	assert.NotEmpty(t, next)
	list, _, err = archives.List(ctx, acc, b1.ID(), domain.Page{})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "keep", list[0].Name())
	names, err := archives.NamesByBus(ctx, b2.ID())
	require.NoError(t, err)
	assert.Equal(t, []string{"all"}, names)
	n, err := archives.CountByAccount(ctx, acc)
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	updated, err := archives.Update(ctx, acc, "keep", func(a *archive.Archive) error {
		return a.Change("new", []byte("null"), 7, time.Now())
	})
	require.NoError(t, err)
	assert.Nil(t, updated.EventPattern())
	got, err = archives.Get(ctx, acc, "keep")
	require.NoError(t, err)
	assert.Equal(t, "new", got.Description())
	assert.Equal(t, 7, got.RetentionDays())
	assert.Nil(t, got.EventPattern())
	_, err = archives.Update(ctx, acc, "keep", func(*archive.Archive) error { return errors.New("no") })
	assert.EqualError(t, err, "no")

	require.NoError(t, archives.Delete(ctx, acc, "keep"))
	assert.True(t, errors.Is(archives.Delete(ctx, acc, "keep"), archive.ErrNotFound))
	_, err = archives.Get(ctx, acc, "keep")
	assert.True(t, errors.Is(err, archive.ErrNotFound))
}

func testReplays(t *testing.T, r repos, replays *persistence.ReplayRepository) {
	acc := newAccount()
	b := createBus(t, r, acc, "rb")
	now := time.Now()
	newReplay := func(name string, dest replay.Destination) *replay.Replay {
		rp, err := replay.New(acc, name, "d", now.Add(-time.Hour), now.Add(-time.Minute), 0, now.Add(-2*time.Hour), now)
		require.NoError(t, err)
		rp.ArchiveID, rp.ArchiveName, rp.BusID, rp.EndSequence, rp.Destination = "arch000000000000", "arch", b.ID(), 42, dest
		require.NoError(t, replays.Create(ctx, rp))
		return rp
	}
	r1 := newReplay("r1", replay.Destination{RuleIDs: []string{"a", "b"}, RuleNames: []string{"ra", "rb"}})
	newReplay("r2", replay.Destination{TargetRuleID: "a", TargetRuleName: "ra", TargetID: "t", TargetName: "tt"})
	assert.True(t, errors.Is(replays.Create(ctx, r1), replay.ErrAlreadyExists))

	got, err := replays.Get(ctx, acc, "r1")
	require.NoError(t, err)
	assert.Equal(t, r1.Destination, got.Destination)
	assert.Equal(t, replay.Starting, got.State)
	assert.EqualValues(t, 42, got.EndSequence)
	assert.Equal(t, replay.DefaultRate, got.Rate)
	assert.Equal(t, stored(now.Add(-time.Hour)), got.EventStartTime)
	assert.True(t, got.EndedAt.IsZero())
	assert.True(t, got.Progress.LastReplayedTime.IsZero())

	active, err := replays.ListActiveByBus(ctx, b.ID())
	require.NoError(t, err)
	assert.Len(t, active, 2)
	n, err := replays.CountUnfinished(ctx, acc)
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	at := time.Now()
	_, err = replays.Update(ctx, acc, "r1", func(rp *replay.Replay) error {
		rp.Progress = replay.Progress{Replayed: 7, Duplicates: 1, LastReplayedTime: at}
		rp.End(replay.Completed, "", at)
		return nil
	})
	require.NoError(t, err)
	got, err = replays.Get(ctx, acc, "r1")
	require.NoError(t, err)
	assert.Equal(t, replay.Completed, got.State)
	assert.EqualValues(t, 7, got.Progress.Replayed)
	assert.EqualValues(t, 1, got.Progress.Duplicates)
	assert.Equal(t, stored(at), got.Progress.LastReplayedTime)
	assert.Equal(t, stored(at), got.EndedAt)

	active, err = replays.ListActiveByBus(ctx, b.ID())
	require.NoError(t, err)
	require.Len(t, active, 1)
	assert.Equal(t, "r2", active[0].Name)
	done, _, err := replays.List(ctx, acc, replay.Filter{State: replay.Completed}, domain.Page{})
	require.NoError(t, err)
	require.Len(t, done, 1)
	assert.Equal(t, "r1", done[0].Name)
	byPrefix, _, err := replays.List(ctx, acc, replay.Filter{NamePrefix: "r2", ArchiveName: "arch"}, domain.Page{})
	require.NoError(t, err)
	require.Len(t, byPrefix, 1)

	require.NoError(t, replays.DeleteByAccount(ctx, acc))
	_, err = replays.Get(ctx, acc, "r2")
	assert.True(t, errors.Is(err, replay.ErrNotFound))
}
