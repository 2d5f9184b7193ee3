package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
)

// OffsetsBucketPurpose names the KV bucket of source offsets: Names.Bucket(OffsetsBucketPurpose).
const OffsetsBucketPurpose = "offsets"

// StoredOffset is the offset stored for one partition of a source connector, in Kafka Connect's shape.
type StoredOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// Offsets are the stored offsets of one source connector: one KV entry per partition, under the key
// <connector>.<hash of the partition>, written compare-and-set on the entry's last revision, so a task that no
// longer owns the connector cannot overwrite its successor's offsets. Safe for concurrent use.
type Offsets struct {
	kv        jetstream.KeyValue
	connector string

	mu      sync.Mutex
	entries map[string]offsetEntry // by connector.PartitionKey
}

type offsetEntry struct {
	StoredOffset
	rev uint64
}

// ErrOffsetConflict is returned by Put when the stored entry changed since it was read: another task wrote it.
var ErrOffsetConflict = errors.New("the stored offset was changed by another writer")

// LoadOffsets reads the offsets stored for connectorName.
func LoadOffsets(ctx context.Context, kv jetstream.KeyValue, connectorName string) (*Offsets, error) {
	o := &Offsets{kv: kv, connector: connectorName, entries: map[string]offsetEntry{}}
	keys, err := offsetKeys(ctx, kv, connectorName)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		entry, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading offset %s: %w", k, err)
		}
		var so StoredOffset
		if err := json.Unmarshal(entry.Value(), &so); err != nil {
			return nil, fmt.Errorf("offset %s is not JSON: %w", k, err)
		}
		o.entries[connector.PartitionKey(so.Partition)] = offsetEntry{StoredOffset: so, rev: entry.Revision()}
	}
	return o, nil
}

// offsetKeys lists the keys of connectorName's offsets. Connector names may hold dots; the partition hash is one
// token, so <connector>.* matches the connector's keys and no other connector's.
func offsetKeys(ctx context.Context, kv jetstream.KeyValue, connectorName string) ([]string, error) {
	lister, err := kv.ListKeysFiltered(ctx, connectorName+".*")
	if err != nil {
		return nil, fmt.Errorf("listing offsets of %s: %w", connectorName, err)
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	_ = lister.Stop()
	return keys, nil
}

// offsetKey is the KV key of a partition's offset.
func (o *Offsets) offsetKey(partitionKey string) string {
	sum := sha256.Sum256([]byte(partitionKey))
	return o.connector + "." + hex.EncodeToString(sum[:16])
}

// Offset returns the offset stored for partition (connector.OffsetReader).
func (o *Offsets) Offset(partition map[string]any) (map[string]any, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.entries[connector.PartitionKey(partition)]
	if !ok {
		return nil, false
	}
	return maps.Clone(e.Offset), true
}

// List returns every stored offset, ordered by partition.
func (o *Offsets) List() []StoredOffset {
	o.mu.Lock()
	defer o.mu.Unlock()
	keys := slices.Sorted(maps.Keys(o.entries))
	out := make([]StoredOffset, 0, len(keys))
	for _, k := range keys {
		out = append(out, o.entries[k].StoredOffset)
	}
	return out
}

// Put stores offset for partition, compare-and-set on the revision last read or written; ErrOffsetConflict when
// another writer changed it meanwhile.
func (o *Offsets) Put(ctx context.Context, partition, offset map[string]any) error {
	pk := connector.PartitionKey(partition)
	value, err := json.Marshal(StoredOffset{Partition: partition, Offset: offset})
	if err != nil {
		return fmt.Errorf("offset of partition %s is not JSON: %w", pk, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	key := o.offsetKey(pk)
	var rev uint64
	if e, ok := o.entries[pk]; ok {
		rev, err = o.kv.Update(ctx, key, value, e.rev)
	} else {
		rev, err = o.kv.Create(ctx, key, value)
	}
	if err != nil {
		if ebjs.IsRevisionConflict(err) {
			return fmt.Errorf("storing the offset of partition %s: %w (%v)", pk, ErrOffsetConflict, err)
		}
		return fmt.Errorf("storing the offset of partition %s: %w", pk, err)
	}
	o.entries[pk] = offsetEntry{StoredOffset: StoredOffset{Partition: partition, Offset: offset}, rev: rev}
	return nil
}

// Delete removes the offset of partition; the source then starts that partition afresh.
func (o *Offsets) Delete(ctx context.Context, partition map[string]any) error {
	pk := connector.PartitionKey(partition)
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.kv.Purge(ctx, o.offsetKey(pk)); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("deleting the offset of partition %s: %w", pk, err)
	}
	delete(o.entries, pk)
	return nil
}

// DeleteOffsets removes every offset stored for connectorName.
func DeleteOffsets(ctx context.Context, kv jetstream.KeyValue, connectorName string) error {
	keys, err := offsetKeys(ctx, kv, connectorName)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := kv.Purge(ctx, k); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return fmt.Errorf("deleting offset %s: %w", k, err)
		}
	}
	return nil
}
