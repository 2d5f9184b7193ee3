package storagequota_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/storagequota"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// TestReservationsCountUntilRead: a reservation counts from the moment it is taken, through readings that do not
// show the bus's stream with its size yet (a reading that began before the stream changed), and is not counted
// twice once one does; a reservation whose change did not happen is given back; the budget counts the
// installation's own streams too.
func TestReservationsCountUntilRead(t *testing.T) {
	ctx := context.Background()
	js := jetstreamtest.Start(t).JS
	buses := persistence.NewBusRepository(persistencetest.Open(t, persistence.SQLite))
	names := stream.Names{Cluster: "t"}
	newBus := func(name string) *bus.Bus {
		b, err := bus.New("acme", name, "", bus.Retention{}, time.Now())
		require.NoError(t, err)
		require.NoError(t, buses.Create(ctx, b))
		require.NoError(t, names.EnsureBusStream(ctx, js, b.ID(), time.Hour, 0, 1))
		return b
	}
	b1, b2 := newBus("one"), newBus("two")
	m := &storagequota.Meter{JS: js, Names: names, Buses: buses, Quota: 12 << 20, Budget: 40 << 20}
	require.NoError(t, m.Check(ctx))
	assert.Zero(t, m.Footprint("acme").Reserved)

	require.NoError(t, m.Reserve(ctx, "acme", b1.ID(), "retention.maxBytes", 8<<20, 0))
	assert.EqualValues(t, 8<<20, m.Footprint("acme").Reserved)
	require.NoError(t, m.Check(ctx)) // the stream is not changed yet
	assert.EqualValues(t, 8<<20, m.Footprint("acme").Reserved, "a reservation no reading shows still counts")
	require.NoError(t, names.EnsureBusStream(ctx, js, b1.ID(), time.Hour, 8<<20, 1))
	require.NoError(t, m.Check(ctx))
	assert.EqualValues(t, 8<<20, m.Footprint("acme").Reserved, "counted once when read")

	err := m.Reserve(ctx, "acme", b2.ID(), "retention.maxBytes", 8<<20, 0)
	require.True(t, errors.Is(err, account.ErrStorageQuotaExceeded), "%v", err)
	require.NoError(t, m.Reserve(ctx, "acme", b2.ID(), "retention.maxBytes", 4<<20, 0))
	err = m.Reserve(ctx, "acme", b2.ID(), "retention.maxBytes", 5<<20, 0)
	require.True(t, errors.Is(err, account.ErrStorageQuotaExceeded), "the reservation not read yet is what b2 holds: %v", err)
	m.Unreserve(b2.ID())
	assert.EqualValues(t, 8<<20, m.Footprint("acme").Reserved, "given back")

	// The budget (40 MiB, 8 of them reserved): the account's quota refuses first; with a quota that does not,
	// 33 MiB more do not fit the budget, 32 do, and then the installation at its budget refuses events.
	err = m.Reserve(ctx, "other", "b3", "retention.maxBytes", 33<<20, 0)
	require.True(t, errors.Is(err, account.ErrStorageQuotaExceeded), "%v", err)
	big := &storagequota.Meter{JS: js, Names: names, Buses: buses, Quota: 64 << 20, Budget: 40 << 20}
	require.NoError(t, big.Check(ctx))
	err = big.Reserve(ctx, "other", "b3", "retention.maxBytes", 33<<20, 0)
	require.True(t, errors.Is(err, account.ErrStorageBudgetExceeded), "%v", err)
	require.NoError(t, big.Reserve(ctx, "other", "b3", "retention.maxBytes", 32<<20, 0))
	err = big.AdmitPut("acme")
	require.True(t, errors.Is(err, account.ErrStorageBudgetExceeded), "the installation at its budget refuses events: %v", err)
}

// oneBus starts a JetStream and a database holding one bus of account acme, with its stream.
func oneBus(t *testing.T) (*jetstreamtest.Env, *persistence.BusRepository, stream.Names, *bus.Bus) {
	ctx := context.Background()
	env := jetstreamtest.Start(t)
	buses := persistence.NewBusRepository(persistencetest.Open(t, persistence.SQLite))
	names := stream.Names{Cluster: "t"}
	b, err := bus.New("acme", "one", "", bus.Retention{}, time.Now())
	require.NoError(t, err)
	require.NoError(t, buses.Create(ctx, b))
	require.NoError(t, names.EnsureBusStream(ctx, env.JS, b.ID(), time.Hour, 0, 1))
	return env, buses, names, b
}

// listingsCounted is a JetStream that counts the listings of every stream made through it.
type listingsCounted struct {
	jetstream.JetStream
	n atomic.Int32
}

func (c *listingsCounted) ListStreams(ctx context.Context, opts ...jetstream.StreamListOpt) jetstream.StreamInfoLister {
	c.n.Add(1)
	return c.JetStream.ListStreams(ctx, opts...)
}

// TestCheckListsStreamsOnlyWhenUsageChanged: with thousands of buses, listing every stream every interval was the
// meter's whole cost. A reading while JetStream's usage is the same as at the last one lists nothing. What another
// replica does to a bus changes the usage and is seen at the next reading: a size given to a bus's stream, a bus
// created without a size, a bus deleted; and so is an event stored. A swap of sizes between two streams leaves the
// usage as it was and waits for the next full reading (fullReadingEvery).
func TestCheckListsStreamsOnlyWhenUsageChanged(t *testing.T) {
	ctx := context.Background()
	env, buses, names, b := oneBus(t)
	js := &listingsCounted{JetStream: env.JS}
	m := &storagequota.Meter{JS: js, Names: names, Buses: buses, Quota: 64 << 20}
	require.NoError(t, m.Check(ctx))
	require.EqualValues(t, 1, js.n.Load())
	require.NoError(t, m.Check(ctx))
	assert.EqualValues(t, 1, js.n.Load(), "usage unchanged: no listing")

	require.NoError(t, names.EnsureBusStream(ctx, env.JS, b.ID(), time.Hour, 8<<20, 1)) // not through Reserve
	require.NoError(t, m.Check(ctx))
	assert.EqualValues(t, 2, js.n.Load())
	assert.EqualValues(t, 8<<20, m.Footprint("acme").Reserved, "a size given to a stream behind the meter's back")

	other, err := bus.New("other", "two", "", bus.Retention{}, time.Now())
	require.NoError(t, err)
	require.NoError(t, buses.Create(ctx, other))
	require.NoError(t, names.EnsureBusStream(ctx, env.JS, other.ID(), time.Hour, 0, 1))
	require.NoError(t, m.Check(ctx))
	assert.EqualValues(t, 3, js.n.Load(), "a stream created without a size")

	// Sizes swapped behind the meter's back: the usage is the same, the footprints wait for a full reading.
	require.NoError(t, names.EnsureBusStream(ctx, env.JS, b.ID(), time.Hour, 0, 1))
	require.NoError(t, names.EnsureBusStream(ctx, env.JS, other.ID(), time.Hour, 8<<20, 1))
	require.NoError(t, m.Check(ctx))
	assert.EqualValues(t, 3, js.n.Load(), "a swap of sizes does not change the usage")
	assert.EqualValues(t, 8<<20, m.Footprint("acme").Reserved)

	env.Publish(t, names.BusIn(b.ID()), jetstreamtest.Event("e1", "t", nil))
	require.NoError(t, m.Check(ctx))
	assert.EqualValues(t, 4, js.n.Load(), "an event stored")
	assert.Zero(t, m.Footprint("acme").Reserved)
	assert.EqualValues(t, 8<<20, m.Footprint("other").Reserved)

	require.NoError(t, env.JS.DeleteStream(ctx, names.BusStream(other.ID())))
	require.NoError(t, m.Check(ctx))
	assert.EqualValues(t, 5, js.n.Load(), "a stream deleted")
	assert.Zero(t, m.Footprint("other").Reserved)
}

// TestCheckReadsOnlyTheInstallationsStreamsWhenOnlyTheyChanged: the installation's own streams (worker state, the
// metrics history) are written while every bus idles; when JetStream's usage changed by what they changed, a
// reading reads them one by one and lists no bus's stream, and the installation's footprint follows them.
func TestCheckReadsOnlyTheInstallationsStreamsWhenOnlyTheyChanged(t *testing.T) {
	ctx := context.Background()
	env, buses, names, b := oneBus(t)
	own, err := env.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "t_OWN", Subjects: []string{"t.own"}})
	require.NoError(t, err)
	js := &listingsCounted{JetStream: env.JS}
	m := &storagequota.Meter{JS: js, Names: names, Buses: buses, Quota: 64 << 20}
	require.NoError(t, m.Check(ctx))
	before := m.Total().Used
	require.EqualValues(t, 1, js.n.Load())

	_, err = env.JS.Publish(ctx, "t.own", make([]byte, 1024))
	require.NoError(t, err)
	require.NoError(t, m.Check(ctx))
	assert.EqualValues(t, 1, js.n.Load(), "only the installation's stream changed: no listing")
	info, err := own.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, before+int64(info.State.Bytes), m.Total().Used, "the installation's footprint follows its stream")
	require.NoError(t, m.Check(ctx))
	assert.EqualValues(t, 1, js.n.Load(), "unchanged since")

	env.Publish(t, names.BusIn(b.ID()), jetstreamtest.Event("e1", "t", nil))
	_, err = env.JS.Publish(ctx, "t.own", make([]byte, 10))
	require.NoError(t, err)
	require.NoError(t, m.Check(ctx))
	assert.EqualValues(t, 2, js.n.Load(), "a bus's stream changed too: the reading lists every stream")
	info, err = own.Info(ctx)
	require.NoError(t, err)
	assert.Positive(t, m.Footprint("acme").Used, "the bus's event")
	assert.Equal(t, before+int64(info.State.Bytes)+m.Footprint("acme").Used, m.Total().Used)
}

// TestArchivesCountInTheirAccount: what an archive's stream holds counts in its account's footprint (from the
// account id in the stream's name), and archives are never trimmed to make room: they are history kept on purpose.
func TestArchivesCountInTheirAccount(t *testing.T) {
	ctx := context.Background()
	env := jetstreamtest.Start(t)
	buses := persistence.NewBusRepository(persistencetest.Open(t, persistence.SQLite))
	names := stream.Names{Cluster: "t"}
	require.NoError(t, names.EnsureArchiveStream(ctx, env.JS, "acme", "arch1", 0, 1))
	m := &storagequota.Meter{JS: env.JS, Names: names, Buses: buses, Quota: 1 << 10, TrimAt: 0.5}
	require.NoError(t, m.Check(ctx))
	assert.Zero(t, m.Footprint("acme").Bytes())

	for i := range 20 {
		env.Publish(t, names.ArchiveSubject("acme", "arch1"), jetstreamtest.Event("e"+string(rune('a'+i)), "t", nil))
	}
	require.NoError(t, m.Check(ctx))
	used := m.Footprint("acme").Used
	assert.Positive(t, used, "the archive's bytes are the account's")
	assert.Zero(t, m.Footprint("other").Bytes())
	require.ErrorIs(t, m.AdmitPut("acme"), account.ErrStorageQuotaExceeded, "over its 1 KiB quota")
	require.NoError(t, m.Check(ctx))
	assert.Equal(t, used, m.Footprint("acme").Used, "nothing trimmed from an archive")
}
