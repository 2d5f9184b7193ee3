package herder

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
)

// Listings. The control plane lists every connector with its status every 10 s (the metrics history) and with its
// config every 30 s (reconciliation). At 2,000 buses that is 4,000 connectors built and encoded each time, about a
// tenth of an idle worker's CPU and much of its garbage, for answers that are the same while nothing happens. A
// listing of every connector is therefore kept encoded with a stamp: a digest of everything it is built from (the
// connectors' records, the stored statuses, the live workers, and what each local task reports, read as
// localStatus reads it). A listing whose stamp is unchanged is answered from the kept bytes; any change, however
// small (one counter of one task), builds it afresh. The stamp is read before the listing is built: what changes
// during the build changes the next stamp.

// listings keeps the last encoding of each kind of listing of every connector.
type listings struct {
	mu   sync.Mutex
	kept map[[2]bool]keptListing // by (info, status)
}

type keptListing struct {
	stamp uint64
	body  []byte
}

var stampSeed = maphash.MakeSeed()

// ExpandedJSON is Expanded encoded as JSON (with a final newline), answered from the last encoding when nothing
// it is built from changed since (see listings). A listing of every connector has an entity tag, etag, that
// changes with its stamp; when it equals ifNoneMatch, the tag the caller got with the answer it holds, body is nil:
// the caller's answer is the current one (HTTP's 304 Not Modified), and nothing is built or sent. Listings by
// prefix are built each time and have no tag.
func (h *Herder) ExpandedJSON(info, status bool, prefix, ifNoneMatch string) (body []byte, etag string, err error) {
	if prefix != "" {
		body, err := encodeListing(h.Expanded(info, status, prefix))
		return body, "", err
	}
	key := [2]bool{info, status}
	stamp, ok := h.listingStamp(status)
	if ok {
		// The worker's id and the kind of listing: another worker's listing, or another kind, never has the tag.
		etag = fmt.Sprintf(`"%s-%t-%t-%x"`, h.cfg.WorkerID, info, status, stamp)
		if etag == ifNoneMatch {
			return nil, etag, nil
		}
		h.lists.mu.Lock()
		k, found := h.lists.kept[key]
		h.lists.mu.Unlock()
		if found && k.stamp == stamp {
			return k.body, etag, nil
		}
	}
	body, err = encodeListing(h.Expanded(info, status, ""))
	if err != nil || !ok {
		return body, "", err
	}
	h.lists.mu.Lock()
	if h.lists.kept == nil {
		h.lists.kept = map[[2]bool]keptListing{}
	}
	h.lists.kept[key] = keptListing{stamp: stamp, body: body}
	h.lists.mu.Unlock()
	return body, etag, nil
}

func encodeListing(v map[string]rpc.ConnectorExpanded) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// listingStamp digests what a listing of every connector is built from: the records (their change count), and
// with status the stored statuses (their change count), the live workers and every local task as localStatus
// reads it. ok is false without a status bucket to digest: the listing is then built afresh.
func (h *Herder) listingStamp(status bool) (stamp uint64, ok bool) {
	var d maphash.Hash
	d.SetSeed(stampSeed)
	h.stampMu.Lock()
	defer h.stampMu.Unlock()
	h.mu.RLock()
	defer h.mu.RUnlock()
	writeU64(&d, h.changes)
	if !status {
		return d.Sum64(), true
	}
	if h.state == nil {
		return 0, false
	}
	writeU64(&d, h.state.changeCount())
	for _, m := range h.live {
		_, _ = d.WriteString(m.ID)
		_ = d.WriteByte(0)
	}
	// The local tasks in any order: the sum of their digests.
	var tasks uint64
	for id, lt := range h.local {
		var t maphash.Hash
		t.SetSeed(stampSeed)
		_, _ = t.WriteString(id.Connector)
		writeU64(&t, uint64(id.Task))
		writeBool(&t, lt.lost, lt.releasing, lt.busy, lt.run == nil, lt.base == nil)
		if lt.run != nil {
			writeU64(&t, runDigest(lt))
		} else {
			state, trace := lt.state()
			writeStrings(&t, state, trace)
		}
		if lt.base != nil {
			writeCounters(&t, lt.base)
		}
		writeCounters(&t, &lt.carried)
		tasks += t.Sum64()
	}
	writeU64(&d, tasks)
	writeU64(&d, uint64(len(h.local)))
	return d.Sum64(), true
}

// runDigest digests what a local task's runner reports, as localStatus reads it: its state, counters, routes and
// health. A runner that stays parked reports the same (its state neither changes: a failure wakes it first), so
// its digest is kept while Asleep answers the same: a stamp reads nothing else of thousands of idle tasks. Asleep
// is read first, as writeStatuses does. Called with Herder.mu read-locked and Herder.stampMu held.
func runDigest(lt *localTask) uint64 {
	parks, asleep := lt.run.Asleep()
	sl := sleep{lt.run, parks, asleep}
	if asleep && lt.stamped.sl == sl {
		return lt.stamped.sum
	}
	var d maphash.Hash
	d.SetSeed(stampSeed)
	state, trace := lt.state()
	writeStrings(&d, state, trace)
	writeTaskCounters(&d, lt.run.Counters())
	writeRoutes(&d, lt.run.RoutedTo())
	writeHealth(&d, lt.run.Health())
	sum := d.Sum64()
	lt.stamped.sl, lt.stamped.sum = sl, sum
	return sum
}

// writeStrings digests strings, each ended by a zero byte.
func writeStrings(d *maphash.Hash, ss ...string) {
	for _, s := range ss {
		_, _ = d.WriteString(s)
		_ = d.WriteByte(0)
	}
}

func writeU64(d *maphash.Hash, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	_, _ = d.Write(b[:])
}

func writeBool(d *maphash.Hash, vs ...bool) {
	for _, v := range vs {
		if v {
			_ = d.WriteByte(1)
		} else {
			_ = d.WriteByte(0)
		}
	}
}

func writeTime(d *maphash.Hash, t time.Time) { writeU64(d, uint64(t.UnixNano())) }

// writeRoutes digests copies per rule in any order.
func writeRoutes(d *maphash.Hash, routes map[string]uint64) {
	var sum uint64
	for id, n := range routes {
		sum += maphash.String(stampSeed, id) * (n + 1)
	}
	writeU64(d, sum)
	writeU64(d, uint64(len(routes)))
}

func writeHealth(d *maphash.Hash, hl delivery.Health) {
	writeTime(d, hl.LastSuccessAt)
	writeU64(d, hl.FailuresSinceSuccess)
	writeTime(d, hl.FailingSince)
	writeBool(d, hl.RetryScheduled, hl.LastFailure == nil)
	writeTime(d, hl.LastDeadLetteredAt)
	if f := hl.LastFailure; f != nil {
		writeTime(d, f.At)
		writeU64(d, f.Attempt)
		writeU64(d, uint64(f.Status))
		for _, s := range []string{f.Class, f.Message, f.Response} {
			_, _ = d.WriteString(s)
			_ = d.WriteByte(0)
		}
	}
}

// writeCounters digests counters field by field, without reflection: a stamp digests two of them per local task,
// and boxing them for reflect was most of a stamp's garbage. TestStampDigestsEveryCounter fails for a field added
// to rpc.TaskCounters and not here.
func writeCounters(d *maphash.Hash, c *rpc.TaskCounters) {
	writeU64s(d, c.Read, c.Written, c.Retried, c.Dropped, c.Failed, c.Undecodable, c.Filtered, c.TransformFailed,
		c.DeadLettered, c.Matched, c.Unmatched, c.Routed, c.LogDropped, c.LatencyMicros, c.Duplicates)
	writeRoutes(d, c.RoutedTo)
}

// writeTaskCounters digests what a running task counted, field by field (see writeCounters).
func writeTaskCounters(d *maphash.Hash, n delivery.Counters) {
	writeU64s(d, n.Read, n.Written, n.Retried, n.Dropped, n.Failed, n.Undecodable, n.Nacked, n.Redelivered,
		n.Parked, n.Filtered, n.TransformFailed, n.DeadLettered, n.Matched, n.Unmatched, n.Routed, n.LogDropped,
		n.LatencyMicros, n.Duplicates)
}

// writeU64s digests numbers in one write.
func writeU64s(d *maphash.Hash, vs ...uint64) {
	var buf [24 * 8]byte
	b := buf[:0]
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	_, _ = d.Write(b)
}
