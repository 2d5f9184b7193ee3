package history

import (
	"context"
	"log/slog"
	"time"
)

// Source reads the cumulative counters of every series of every account, now.
type Source interface {
	Counters(ctx context.Context) (map[string][]Counters, error)
}

// Lease is held by one control-plane replica at a time (persistence.Lease is one).
type Lease interface {
	Acquire(ctx context.Context) (bool, error)
}

// Sampler samples the counters every Every, at times aligned to it (xx:xx:00, :10, :20 with 10 s), while this
// replica holds Lease, and appends them to Store: every sample at the hour's resolution, those aligned to the day's
// step at the day's too. A sample that fails is skipped (its point is missing; the next difference spans two
// steps).
type Sampler struct {
	Source Source
	Store  Store
	Lease  Lease
	// Every is the sampling interval (zero: Hour.Step).
	Every  time.Duration
	Logger *slog.Logger
}

func (s *Sampler) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// Run samples until ctx ends.
func (s *Sampler) Run(ctx context.Context) {
	hour, day := Resolutions(s.Every)
	for {
		now := time.Now()
		next := now.Truncate(hour.Step).Add(hour.Step)
		select {
		case <-ctx.Done():
			return
		case <-time.After(next.Sub(now)):
		}
		if err := s.SampleAt(ctx, next.UTC(), hour, day); err != nil && ctx.Err() == nil {
			s.log().Warn("sampling the metrics history; the next sample follows", "err", err)
		}
	}
}

// SampleAt takes one sample for the tick at, when this replica holds the lease.
func (s *Sampler) SampleAt(ctx context.Context, at time.Time, hour, day Resolution) error {
	if s.Lease != nil {
		held, err := s.Lease.Acquire(ctx)
		if err != nil || !held {
			return err
		}
	}
	all, err := s.Source.Counters(ctx)
	if err != nil {
		return err
	}
	onDay := at.Equal(at.Truncate(day.Step))
	for account, series := range all {
		smp := Sample{At: at, Series: series}
		if err := s.Store.Append(ctx, account, hour, smp); err != nil {
			return err
		}
		if onDay {
			if err := s.Store.Append(ctx, account, day, smp); err != nil {
				return err
			}
		}
	}
	return nil
}
