package domain

import (
	"sync"
	"time"
)

// Believed caches values read from a repository, each believed for a lifetime after it was read: the caches of
// verified credentials (API keys, sessions), through which a revocation on another replica is seen within the
// lifetime. The zero value is empty and ready. Safe for concurrent use.
type Believed[V any] struct {
	mu      sync.RWMutex
	entries map[string]believed[V]
}

type believed[V any] struct {
	value V
	read  time.Time
}

// Lookup returns the value of key: the cached one when it was read less than ttl before now, else load's, which
// is cached (when found and ttl > 0) or forgotten (when not found). load gets the value cached before, stale or not
// (had tells whether there was one), to carry state across reads. Its errors are returned as they are, and nothing
// is cached then.
func (b *Believed[V]) Lookup(key string, now time.Time, ttl time.Duration,
	load func(prev V, had bool) (value V, found bool, err error)) (V, bool, error) {
	b.mu.RLock()
	e, had := b.entries[key]
	b.mu.RUnlock()
	if had && ttl > 0 && now.Sub(e.read) < ttl {
		return e.value, true, nil
	}
	v, found, err := load(e.value, had)
	switch {
	case err != nil:
		var zero V
		return zero, false, err
	case !found:
		b.Forget(key)
		var zero V
		return zero, false, nil
	case ttl > 0:
		b.mu.Lock()
		if b.entries == nil {
			b.entries = map[string]believed[V]{}
		}
		b.entries[key] = believed[V]{value: v, read: now}
		b.mu.Unlock()
	}
	return v, true, nil
}

// Update changes the value cached under key with fn, under the cache's lock, when there is one; fn answers whether
// it changed it. found tells whether a value was cached, changed what fn answered.
func (b *Believed[V]) Update(key string, fn func(v *V) bool) (found, changed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok {
		return false, false
	}
	if !fn(&e.value) {
		return true, false
	}
	b.entries[key] = e
	return true, true
}

// Forget removes key.
func (b *Believed[V]) Forget(key string) {
	b.mu.Lock()
	delete(b.entries, key)
	b.mu.Unlock()
}

// ForgetIf removes every value for which match is true.
func (b *Believed[V]) ForgetIf(match func(V) bool) {
	b.mu.Lock()
	for k, e := range b.entries {
		if match(e.value) {
			delete(b.entries, k)
		}
	}
	b.mu.Unlock()
}
