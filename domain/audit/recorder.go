package audit

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Defaults of the Recorder's batches of reads.
const (
	DefaultFlushInterval = 500 * time.Millisecond
	DefaultBatchSize     = 200
	// queueSize bounds the reads waiting to be written; when it is full, Record writes at once.
	queueSize = 4096
)

// Recorder writes entries. The entry of an operation that changes something is written before Record returns
// (the API answers after it). Reads, which consoles make every few seconds, are written in the background in
// batches once Run is running: at most FlushInterval late, and flushed when Run ends. Without Run, every entry is
// written before Record returns. Safe for concurrent use.
type Recorder struct {
	Entries Repository
	Logger  *slog.Logger
	// FlushInterval and BatchSize shape the batches of reads (DefaultFlushInterval, DefaultBatchSize when zero).
	FlushInterval time.Duration
	BatchSize     int

	mu      sync.RWMutex
	queue   chan Entry
	running bool
}

// Record writes e: now when change is set or Run is not running, else with the next batch. A failure to write is
// logged (never with the entry's client address or actor beyond its id) and returned.
func (r *Recorder) Record(ctx context.Context, e Entry, change bool) error {
	e.Normalize()
	if !change {
		// Under the read lock Run cannot stop taking entries: one queued here is written by Run. A full queue
		// (the database is slow) is no reason to drop one: it is written here, now.
		r.mu.RLock()
		if r.running {
			select {
			case r.queue <- e:
				r.mu.RUnlock()
				return nil
			default:
			}
		}
		r.mu.RUnlock()
	}
	if err := r.Entries.Append(context.WithoutCancel(ctx), []Entry{e}); err != nil {
		r.log().Error("writing an audit entry", "operation", e.Operation, "err", err)
		return err
	}
	return nil
}

func (r *Recorder) log() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger
}

// Run writes the queued reads in batches until ctx ends, then writes what is left and returns. Call it once.
func (r *Recorder) Run(ctx context.Context) {
	interval, size := r.FlushInterval, r.BatchSize
	if interval <= 0 {
		interval = DefaultFlushInterval
	}
	if size <= 0 {
		size = DefaultBatchSize
	}
	r.mu.Lock()
	r.queue = make(chan Entry, queueSize)
	r.running = true
	queue := r.queue
	r.mu.Unlock()

	batch := make([]Entry, 0, size)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if err := r.Entries.Append(context.Background(), batch); err != nil {
			r.log().Error("writing audit entries", "entries", len(batch), "err", err)
			return // kept for the next flush
		}
		batch = batch[:0]
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case e := <-queue:
			batch = append(batch, e)
			if len(batch) >= size {
				flush()
			}
		case <-t.C:
			flush()
		case <-ctx.Done():
			r.mu.Lock()
			r.running = false
			r.mu.Unlock()
			for {
				select {
				case e := <-queue:
					batch = append(batch, e)
				default:
					flush()
					return
				}
			}
		}
	}
}
