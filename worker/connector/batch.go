package connector

import (
	"context"
	"errors"
)

// Batcher is a sink whose writes of the events of one record batch (a stored message of several events) can be
// stored together: its Write, given a context with a Batch (BatchFrom), may leave what it stores to a Flusher of
// the Batch and return before it is stored. The runtime then hands it the events of a record batch one after the
// other with one Batch, and flushes the Batch once the events are handled, before it acknowledges the record. The
// router is one: the copies of a record batch's events for a rule become one record batch of copies.
type Batcher interface {
	Sink
	// Batches marks the sink; it is never called.
	Batches()
}

// Flusher stores what the writes of a record batch's events left to it (Batch.Defer).
type Flusher interface {
	// Flush stores what was left, returning once it is stored. An error means some of it may not be: the runtime
	// then hands the record's events to the sink again, one at a time, without a Batch.
	Flush(ctx context.Context) error
}

// Batch is the scope of the writes of one record batch's events (Batcher). Not safe for concurrent use: the
// runtime writes a record batch's events one after the other.
type Batch struct {
	flushers []Flusher
	keys     map[any]int
}

// Defer returns the Flusher of key in b, made by make the first time key is asked for. Flush flushes the
// Flushers in the order they were made.
func (b *Batch) Defer(key any, make func() Flusher) Flusher {
	if i, ok := b.keys[key]; ok {
		return b.flushers[i]
	}
	if b.keys == nil {
		b.keys = map[any]int{}
	}
	f := make()
	b.keys[key] = len(b.flushers)
	b.flushers = append(b.flushers, f)
	return f
}

// Flush flushes b's Flushers, each once, and forgets them: a Batch flushed again stores nothing twice. It returns
// their errors joined.
func (b *Batch) Flush(ctx context.Context) error {
	var errs []error
	for _, f := range b.flushers {
		if err := f.Flush(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	b.flushers, b.keys = nil, nil
	return errors.Join(errs...)
}

type batchKey struct{}

// WithBatch returns ctx carrying b; the runtime calls it before Write for the events of a record batch when the
// sink is a Batcher.
func WithBatch(ctx context.Context, b *Batch) context.Context {
	return context.WithValue(ctx, batchKey{}, b)
}

// BatchFrom returns the Batch of the record batch being written, if the runtime gave one.
func BatchFrom(ctx context.Context) (*Batch, bool) {
	b, ok := ctx.Value(batchKey{}).(*Batch)
	return b, ok && b != nil
}
