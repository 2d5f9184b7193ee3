package eventstore

import (
	"context"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/inspect"
)

// The events of a record batch on a bus are searched, got and tailed one by one, each at the batch's sequence
// with its index, between the events stored alone.
func TestEventsReadRecordBatches(t *testing.T) {
	s, js := newStore(t, false)
	ctx := context.Background()
	b, err := bus.New("default", "orders", "", bus.Retention{}, time.Now())
	require.NoError(t, err)
	require.NoError(t, s.CreateStream(ctx, b))
	evs := NewEvents(js, "t")

	tailed := make(chan inspect.Stored, 16)
	ready := make(chan struct{})
	tctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		_ = evs.Tail(tctx, b, func() { close(ready) }, func(st inspect.Stored) error { tailed <- st; return nil })
	}()
	<-ready

	require.NoError(t, s.Put(ctx, b, []*event.Event{newEvent(1)})[0].Err)
	for _, r := range s.Put(ctx, b, []*event.Event{newEvent(2), newEvent(3), newEvent(4)}) { // one record batch
		require.NoError(t, r.Err)
	}
	require.NoError(t, s.Put(ctx, b, []*event.Event{newEvent(5)})[0].Err)

	type at struct {
		id    string
		seq   uint64
		index int
	}
	want := []at{{"id-1", 1, 0}, {"id-2", 2, 0}, {"id-3", 2, 1}, {"id-4", 2, 2}, {"id-5", 3, 0}}
	places := func(stored []inspect.Stored) []at {
		out := []at{}
		for _, st := range stored {
			out = append(out, at{st.Event.ID(), st.Sequence, st.Index})
		}
		return out
	}

	all, next, err := evs.Events(ctx, b, inspect.Query{Limit: 100, MaxScan: 100})
	require.NoError(t, err)
	assert.Zero(t, next)
	assert.Equal(t, want, places(all))

	// Pages of every size hold at most their limit, and together every event once, in order: a page that fills up
	// inside a batch ends there and the next starts at the batch's next event.
	for _, f := range []inspect.Filter{{}, {Source: "bench"}} {
		for limit := 1; limit <= len(want)+1; limit++ {
			var paged []inspect.Stored
			var pos domain.Position
			for page := 0; ; page++ {
				require.Less(t, page, 10)
				got, next, err := evs.Events(ctx, b, inspect.Query{Filter: f, After: pos, Limit: limit, MaxScan: 100})
				require.NoError(t, err)
				require.LessOrEqual(t, len(got), limit)
				paged = append(paged, got...)
				if next == (domain.Position{}) {
					break
				}
				pos = next
			}
			assert.Equal(t, want, places(paged), "pages of %d", limit)
		}
	}
	got, next, err := evs.Events(ctx, b, inspect.Query{Filter: inspect.Filter{ID: "id-4"}, Limit: 1, MaxScan: 100})
	require.NoError(t, err)
	assert.Equal(t, want[3:4], places(got))
	assert.Equal(t, domain.Position{After: 2}, next, "the batch's last event ends the page: the next starts after it")
	got, next, err = evs.Events(ctx, b, inspect.Query{After: domain.Position{After: 1, Skip: 2}, Limit: 1, MaxScan: 100})
	require.NoError(t, err)
	assert.Equal(t, want[3:4], places(got), "a page starts inside a batch")
	assert.Equal(t, domain.Position{After: 2}, next)

	one, _, err := evs.Events(ctx, b, inspect.Query{Filter: inspect.Filter{ID: "id-3"}, Limit: 100, MaxScan: 100})
	require.NoError(t, err)
	assert.Equal(t, want[2:3], places(one), "a filter selects one event of a batch")

	got, err = evs.Get(ctx, b, 2)
	require.NoError(t, err)
	assert.Equal(t, want[1:4], places(got))
	got, err = evs.Get(ctx, b, 1)
	require.NoError(t, err)
	assert.Equal(t, want[:1], places(got))
	_, err = evs.Get(ctx, b, 9)
	assert.ErrorIs(t, err, inspect.ErrEventNotFound)

	var tail []inspect.Stored
	for range want {
		select {
		case st := <-tailed:
			tail = append(tail, st)
		case <-time.After(10 * time.Second):
			t.Fatalf("tailed %d events of %d", len(tail), len(want))
		}
	}
	assert.Equal(t, want, places(tail))
}
