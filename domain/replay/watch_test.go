package replay

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingReplays counts the reads of the unfinished replays and answers none, or fail while it is set.
type countingReplays struct {
	Repository
	reads atomic.Int64
	fail  atomic.Bool
}

func (r *countingReplays) ListUnfinished(context.Context) ([]*Replay, error) {
	r.reads.Add(1)
	if r.fail.Load() {
		return nil, errors.New("the database is down")
	}
	return nil, nil
}

// While no replay is unfinished, Watch reads the replays every idle interval, not every interval; a poke (Start or
// Cancel on this replica) makes it read at once, and a failed read is retried at the short interval.
func TestWatchIdlesWhileNoReplayIsUnfinished(t *testing.T) {
	repo := &countingReplays{}
	s := &Service{Replays: repo, Logger: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Watch(ctx, 10*time.Millisecond, time.Hour)
	}()
	t.Cleanup(func() { cancel(); <-done })

	require.Eventually(t, func() bool { return repo.reads.Load() == 1 }, 5*time.Second, time.Millisecond, "the first check is at once")
	time.Sleep(200 * time.Millisecond)
	assert.EqualValues(t, 1, repo.reads.Load(), "no replay unfinished: no read for the idle interval")

	s.poke()
	require.Eventually(t, func() bool { return repo.reads.Load() == 2 }, 5*time.Second, time.Millisecond, "a poke reads at once")

	repo.fail.Store(true)
	s.poke()
	require.Eventually(t, func() bool { return repo.reads.Load() >= 6 }, 5*time.Second, time.Millisecond,
		"a failed read is retried at the interval")
	repo.fail.Store(false)
	require.Eventually(t, func() bool {
		n := repo.reads.Load()
		time.Sleep(100 * time.Millisecond)
		return repo.reads.Load() == n
	}, 5*time.Second, time.Millisecond, "and once a read succeeds with none unfinished, idle again")
}

// oneReplay holds one replay and changes it as Repository.Update does.
type oneReplay struct {
	Repository
	r Replay
}

func (o *oneReplay) Update(_ context.Context, _, _ string, fn func(*Replay) error) (*Replay, error) {
	cur := o.r
	if err := fn(&cur); err != nil {
		return nil, err
	}
	o.r = cur
	out := cur
	return &out, nil
}

// A replay being cancelled ends CANCELLED: a check that read it RUNNING before the cancel and found it completed
// does not make it COMPLETED (the cancel was answered CANCELLING), and what ended stays ended.
func TestACancelledReplayEndsCancelled(t *testing.T) {
	repo := &oneReplay{r: Replay{AccountID: "acme", Name: "r", State: Running}}
	s := &Service{Replays: repo, Logger: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	read := repo.r // the check's read, before the cancel
	repo.r.State = Cancelling
	assert.Equal(t, Cancelling, s.end(ctx, &read, Completed, "", nil).State, "the check's completion does not end it")
	assert.Equal(t, Cancelled, s.end(ctx, &read, Cancelled, "", nil).State, "the cancel ends it")
	assert.Equal(t, Cancelled, s.end(ctx, &read, Failed, "late", nil).State, "ended stays ended")

	repo.r.State = Running
	assert.Equal(t, Completed, s.end(ctx, &read, Completed, "", nil).State, "not being cancelled: it completes")
}
