package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// view follows every key of a bucket with one long-lived watcher. A key counts as present until ttl after this
// worker last saw it written, on its own monotonic clock: the bucket's max age removes keys on the server without
// telling watchers, and its heartbeats and renewals rewrite live keys well within ttl.
//
// A fresh listing (a watcher read to its end) is not used: while keys are being written, a watcher can report
// that it delivered every key before it did (nats-io/nats.py#995 describes the same in another client), so a live
// member or lease would be missing from some listings.
type view struct {
	ttl    time.Duration
	w      jetstream.KeyWatcher
	loaded chan struct{}
	// parse, when set, decodes a value once, when the watcher delivers it (viewEntry.parsed).
	parse func(key string, value []byte) any

	mu      sync.Mutex
	entries map[string]viewEntry
	// writes counts the puts and deletes delivered: it changes whenever the bucket did.
	writes uint64
}

type viewEntry struct {
	value []byte
	seen  time.Time // on this worker's clock, when the watcher delivered the write
	// written is when the server stored the write (its clock).
	written  time.Time
	revision uint64
	parsed   any
}

// watchView starts following kv; ttl is how long a key counts after it was last seen written (0: until deleted).
// parse, when not nil, decodes each value once (viewEntry.parsed).
func watchView(ctx context.Context, kv jetstream.KeyValue, ttl time.Duration, parse func(key string, value []byte) any) (*view, error) {
	w, err := kv.WatchAll(context.WithoutCancel(ctx))
	if err != nil {
		return nil, err
	}
	v := &view{ttl: ttl, w: w, loaded: make(chan struct{}), entries: map[string]viewEntry{}, parse: parse}
	go v.follow()
	return v, nil
}

func (v *view) follow() {
	var once sync.Once
	for e := range v.w.Updates() {
		if e == nil {
			once.Do(func() { close(v.loaded) })
			continue
		}
		var parsed any
		if v.parse != nil && e.Operation() == jetstream.KeyValuePut {
			parsed = v.parse(e.Key(), e.Value())
		}
		v.mu.Lock()
		if e.Operation() == jetstream.KeyValuePut {
			v.entries[e.Key()] = viewEntry{value: e.Value(), seen: time.Now(), written: e.Created(), revision: e.Revision(),
				parsed: parsed}
		} else {
			delete(v.entries, e.Key())
		}
		v.writes++
		v.mu.Unlock()
	}
	once.Do(func() { close(v.loaded) })
}

// wait blocks until the watcher delivered its first listing, or ctx ends.
func (v *view) wait(ctx context.Context) error {
	select {
	case <-v.loaded:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// each calls fn with every key seen written within ttl (every key when ttl is 0) and its last write, under the
// view's lock: fn must not call the view. It copies nothing: a worker's full round reads thousands of claims, and
// its loop reads the members ten times a second.
func (v *view) each(fn func(key string, e viewEntry)) {
	now := time.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	for k, e := range v.entries {
		if v.ttl <= 0 || now.Sub(e.seen) < v.ttl {
			fn(k, e)
		}
	}
}

// size returns the number of keys the view holds, present or not.
func (v *view) size() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.entries)
}

// version counts the writes delivered so far.
func (v *view) version() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.writes
}

// forget drops a key at once (this worker deleted it).
func (v *view) forget(key string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.entries, key)
	v.writes++
}

func (v *view) stop() { _ = v.w.Stop() }
