package persistence_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/channel"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/migrations"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
)

// channelPlan is the plan of a new rule named name on b with a schedule source and log targets of the names given.
func channelPlan(t *testing.T, b *bus.Bus, name, description string, sourceName string, targets ...string) channel.Plan {
	t.Helper()
	r, err := rule.New(b.AccountID(), b.ID(), name, description, []byte(`{"type":["a"]}`), rule.CloudEvents, rule.Enabled, time.Now())
	require.NoError(t, err)
	p := channel.Plan{BusID: b.ID(), Rule: r, CreateRule: true, MaxRules: 300, MaxSources: 50}
	if sourceName != "" {
		p.CreateSources = append(p.CreateSources, newSource(t, b, sourceName, "schedule", map[string]string{"schedule.expression": "rate(1 minute)"}))
	}
	for _, n := range targets {
		tg, err := target.New(b.AccountID(), b.ID(), r.ID(), target.Spec{Name: n, Type: target.Log, RetryPolicy: target.DefaultRetryPolicy()}, nil, time.Now())
		require.NoError(t, err)
		p.CreateTargets = append(p.CreateTargets, tg)
	}
	return p
}

// A channel is stored whole or not at all: a plan whose last write fails leaves nothing of it, and one that is
// stored reads back whole; a replacement deletes the targets it no longer has.
func TestChannelApply(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			db := persistencetest.Open(t, dialect)
			r := repos{db: db, accounts: persistence.NewAccountRepository(db), buses: persistence.NewBusRepository(db)}
			channels := persistence.NewChannelRepository(db)
			b := createBus(t, r, newAccount(), "orders")

			// The second target of the same name fails on the table's unique key, after the rule, the source and
			// the first target were written in the same transaction.
			bad := channelPlan(t, b, "created", "", "tick", "hook", "hook")
			err := channels.Apply(ctx, bad)
			require.ErrorIs(t, err, channel.ErrChanged)
			_, _, srcs, err := channels.Read(ctx, b.ID(), "created")
			require.ErrorIs(t, err, rule.ErrNotFound, "the rule was not stored")
			assert.Empty(t, srcs, "the source was not stored")

			good := channelPlan(t, b, "created", "v1", "tick", "hook", "audit")
			require.NoError(t, channels.Apply(ctx, good))
			got, ts, srcs, err := channels.Read(ctx, b.ID(), "created")
			require.NoError(t, err)
			assert.Equal(t, "v1", got.Description())
			assert.Equal(t, []string{"audit", "hook"}, targetNames(ts))
			require.Len(t, srcs, 1)
			assert.Equal(t, "tick", srcs[0].Name())

			// Replace: the rule by id, one target kept (replaced), one deleted, one created.
			require.NoError(t, got.Change("v2", got.EventPattern(), got.Syntax(), got.State(), time.Now()))
			hook := ts[1]
			next := channel.Plan{BusID: b.ID(), Rule: got, MaxRules: 300, MaxSources: 50,
				ReplaceTargets: []*target.Target{hook}, DeleteTargets: []string{ts[0].ID()}}
			more := channelPlan(t, b, "unused", "", "", "copy")
			for _, tg := range more.CreateTargets {
				moved, err := target.New(b.AccountID(), b.ID(), got.ID(), target.Spec{Name: tg.Name(), Type: target.Log,
					RetryPolicy: target.DefaultRetryPolicy()}, nil, time.Now())
				require.NoError(t, err)
				next.CreateTargets = append(next.CreateTargets, moved)
			}
			require.NoError(t, channels.Apply(ctx, next))
			got, ts, _, err = channels.Read(ctx, b.ID(), "created")
			require.NoError(t, err)
			assert.Equal(t, "v2", got.Description())
			assert.Equal(t, []string{"copy", "hook"}, targetNames(ts))
			assert.Equal(t, hook.ID(), ts[1].ID(), "a replaced target keeps its id")

			// A plan over a rule deleted meanwhile changes nothing and says so.
			require.NoError(t, persistence.NewRuleRepository(db).Delete(ctx, b.ID(), "created"))
			err = channels.Apply(ctx, next)
			require.ErrorIs(t, err, channel.ErrChanged)
		})
	}
}

// A second replica never sees half a channel: one replica replaces a channel again and again with one of two
// versions (the rule's description names its targets' version, and the source's), while another replica, on its own
// connection pool to the same MySQL database, reads it; every read must be one version whole.
func TestChannelSecondReplicaNeverSeesHalf(t *testing.T) {
	t.Parallel()
	dsn := "mysql://" + persistencetest.NewMySQLDatabase(t)
	open := func() *persistence.DB {
		db, err := persistence.Open(ctx, dsn, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	writerDB := open()
	require.NoError(t, migrations.Up(ctx, writerDB.SQL(), writerDB.Dialect()))
	readerDB := open()
	r := repos{db: writerDB, accounts: persistence.NewAccountRepository(writerDB), buses: persistence.NewBusRepository(writerDB)}
	b := createBus(t, r, newAccount(), "orders")
	writer, reader := persistence.NewChannelRepository(writerDB), persistence.NewChannelRepository(readerDB)

	versions := map[string][]string{"A": {"a1", "a2", "a3"}, "B": {"b1", "b2"}}
	first := channelPlan(t, b, "flip", "A", "", versions["A"]...)
	first.CreateSources = []*source.Source{newSource(t, b, "src", "schedule", map[string]string{"schedule.expression": "rate(1 minute)"})}
	first.CreateSources[0] = withDescription(t, first.CreateSources[0], "A")
	require.NoError(t, writer.Apply(ctx, first))

	const rounds = 150
	var (
		wg    sync.WaitGroup
		done  atomic.Bool
		reads atomic.Int64
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			got, ts, srcs, err := reader.Read(context.Background(), b.ID(), "flip")
			if !assert.NoError(t, err) {
				return
			}
			v := got.Description()
			assert.Equal(t, versions[v], targetNames(ts), "targets of version %s", v)
			if assert.Len(t, srcs, 1) {
				assert.Equal(t, v, srcs[0].Description(), "the source of version %s", v)
			}
			reads.Add(1)
		}
	}()
	for i := range rounds {
		v := []string{"B", "A"}[i%2]
		cur, ts, srcs, err := writer.Read(ctx, b.ID(), "flip")
		require.NoError(t, err)
		require.NoError(t, cur.Change(v, cur.EventPattern(), cur.Syntax(), cur.State(), time.Now()))
		p := channel.Plan{BusID: b.ID(), Rule: cur, MaxRules: 300, MaxSources: 50,
			ReplaceSources: []*source.Source{withDescription(t, srcs[0], v)}}
		for _, tg := range ts {
			p.DeleteTargets = append(p.DeleteTargets, tg.ID())
		}
		for _, n := range versions[v] {
			tg, err := target.New(b.AccountID(), b.ID(), cur.ID(), target.Spec{Name: n, Type: target.Log, RetryPolicy: target.DefaultRetryPolicy()}, nil, time.Now())
			require.NoError(t, err)
			p.CreateTargets = append(p.CreateTargets, tg)
		}
		require.NoError(t, writer.Apply(ctx, p), "round %d", i)
	}
	done.Store(true)
	wg.Wait()
	t.Logf("%d reads during %d replacements", reads.Load(), rounds)
	assert.Positive(t, reads.Load())
}

// withDescription returns s with its description changed (its config kept).
func withDescription(t *testing.T, s *source.Source, description string) *source.Source {
	t.Helper()
	require.NoError(t, s.Change(source.Spec{Name: s.Name(), Type: s.Type(), Description: description, Config: s.Config()}, time.Now()))
	return s
}
