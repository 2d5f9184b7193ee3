// Package gcpace paces Go's garbage collector for the binaries. With the runtime's default (GOGC=100) a collection
// starts each time the heap has grown by what the last one left live: for the tens of megabytes a process of a few
// buses keeps live, a collection every few hundred milliseconds under load, each with its pauses and its assists on
// the goroutines delivering events; for the hundreds a process of thousands of buses keeps live, as much memory
// again held for garbage while it idles. Start lets the heap grow by a headroom that follows the load instead:
//   - A small process (less than the headroom live) grows by at least the headroom, and while it allocates fast by
//     what it allocates in LoadWindow, up to LoadFactor times the headroom: busy, it collects about once per
//     LoadWindow; idle again, it keeps the headroom's memory only.
//   - A large process grows by what it allocates in MarkSpacing per MiB live, at most its live heap (GOGC=100), and
//     at least what it allocated in the last ForcedPeriod, between a quarter of the headroom and the headroom: busy,
//     it is paced as the runtime paces it; idle, it keeps over its live heap what it allocates between two of the
//     runtime's forced collections rather than as much again, and its collections cost about a hundredth of a core
//     at most.
//   - A process that falls quiet returns what its heap holds beyond that at once (Release), rather than over the
//     minutes the runtime's scavenger takes, once per quiet spell: again only after it has been busy for a
//     ForcedPeriod (Releases), not after a burst such as one scrape of its metrics.
//
// In a container with a memory limit it sets the runtime's soft limit to 90% of it, so the headroom never takes the
// process past it.
package gcpace

import (
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// DefaultHeadroom is the least the heap may grow between two collections by default: 128 MiB.
const DefaultHeadroom = 128 << 20

// Under load, the heap of a process with less than the headroom live may grow by what the process allocated in
// LoadWindow (at the rate since the last adjustment: a collection, or a tick every LoadWindow), up to LoadFactor
// times the headroom. On 2 cores, a process delivering 5,000 events/s allocated about 100 MB/s: with the headroom
// alone (128 MiB) it collected every 1.3 s, and each collection's pauses and mark phase put a few of its batches in
// the tail of delivery latency (docs/benchmarks.md).
const (
	LoadWindow = 5 * time.Second
	LoadFactor = 3
)

// MarkSpacing is the least time between two collections of a process with more than the headroom live, per MiB
// live, unless what it allocates meanwhile passes the headroom. Marking a MiB took about 1 ms of CPU (a process of
// 1,000 buses: about 200 ms for 200 MB live), so collections so spaced cost at most about 1% of a core, whatever the
// heap. At 2,000 idle buses (340 MB live) the heap then grows by the headroom between collections, rather than by
// its live heap: a heap goal of 742 MB became 477.
const MarkSpacing = 100 * time.Millisecond

// ForcedPeriod is how often the runtime collects whatever the heap (its forcegcperiod: 2 minutes). A process with
// more than the headroom live that allocated less than the headroom in the last ForcedPeriod keeps no more than
// that over its live heap (and at least a quarter of the headroom): a larger goal would make no collection fewer.
// The rate is the last ForcedPeriod's, not the last LoadWindow's: a quiet window after a busy one would lower the
// goal below what was allocated since the last collection and start one at once.
const ForcedPeriod = 2 * time.Minute

// Release says whether a process should collect and return its free heap to the system now (debug.FreeOSMemory):
// when it is Quiet at rate (over the last LoadWindow at least) and held, what its heap holds beyond the live heap
// (garbage, and free memory not yet returned), exceeds by a quarter of the floor what the current rate needs, the
// headroom it would get had it allocated at that rate for the whole ForcedPeriod. That is when the load fell: after
// a burst, or once thousands of buses are created, the heap holds what the busy spell needed, and the runtime's
// scavenger returns free memory over minutes (at 1,000 buses 41 to 86 MiB were still held 2 minutes after their
// creation). Under load the heap may hold more than its headroom too (the collector lags behind a fast allocator),
// and returning it would only have it faulted in again. Releases says when the pacer does it.
func Release(live, held, floor int64, rate float64) bool {
	return Quiet(rate, floor) && held >= Headroom(live, floor, rate, rate)+floor/4
}

// Releases is what the pacer remembers of its releases, to release once per quiet spell: a process released
// releases again only once it has been busy over a ForcedPeriod since, at the rate over that period. A busy
// LoadWindow is not enough: at 2,000 idle buses one scrape of the metrics allocated 40 to 80 MB (16 to 20 since its
// series share their labels), more than a quarter of the default floor either way, and a spell ended by every scrape released every ForcedPeriod (three times in 10 idle
// minutes, where once was meant). Once released, a process keeps what the scavenger leaves it, as the runtime would.
type Releases struct {
	last  time.Time // of the last release
	spell bool      // the process has not been busy over a ForcedPeriod since
}

// Due says whether to release at now (and then counts it done): the process is not in the spell of its last release,
// and Release holds for its live and held heap, the floor, the rate over the last LoadWindow (windowed) and the rate
// over the last ForcedPeriod (recent).
func (r *Releases) Due(now time.Time, live, held, floor int64, windowed, recent float64) bool {
	if r.spell {
		if now.Sub(r.last) < ForcedPeriod || Quiet(recent, floor) {
			return false
		}
		r.spell = false // busy since: a new spell starts when it falls quiet, maybe now
	}
	if !Release(live, held, floor, windowed) {
		return false
	}
	r.last, r.spell = now, true
	return true
}

// Quiet says whether a process allocating at rate is quiet: it allocates less than a quarter of the floor per
// LoadWindow.
func Quiet(rate float64, floor int64) bool { return rate*LoadWindow.Seconds() < float64(floor/4) }

// FlagUsage is the usage of the binaries' --gc-headroom-mib.
const FlagUsage = "the least the heap grows between two garbage collections, in MiB: more memory for fewer " +
	"collections and shorter tails of delivery latency; while the process allocates fast, up to three times this " +
	"(what it allocates in 5 s), or up to what is live when that is more (0: the Go runtime's own pacing; GOGC " +
	"in the environment wins, and in a container with a memory limit the collector keeps under 90% of it unless " +
	"GOMEMLIMIT says otherwise)"

var (
	mu      sync.Mutex
	running *pacer
)

// Start paces the collector with headroom (bytes; ≤ 0: the runtime's own pacing) for the rest of the process, or
// until the stop it returns is called. It leaves the pacing to the runtime when GOGC is set in the environment, and
// the memory limit when GOMEMLIMIT is (or AUTOMEMLIMIT=off): those are the operator's. One pacer runs per process: a second Start
// replaces the first's headroom.
func Start(headroom int64, log *slog.Logger) (stop func()) {
	if headroom <= 0 || os.Getenv("GOGC") != "" {
		return func() {}
	}
	// 90% of the cgroup's memory limit, unless GOMEMLIMIT is set (or AUTOMEMLIMIT=off); none without a limit.
	if limit, err := memlimit.Set(); err != nil {
		log.Debug("no memory limit from the container", "err", err)
	} else if limit < math.MaxInt64 {
		log.Info("the collector's memory limit", "bytes", limit)
	}
	mu.Lock()
	defer mu.Unlock()
	if running != nil {
		running.headroom.Store(headroom)
		return running.stop
	}
	p := &pacer{done: make(chan struct{})}
	p.headroom.Store(headroom)
	p.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/allocs:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	running = p
	p.adjust()
	p.arm()
	go p.tick()
	return p.stop
}

// pacer sets the GC percent after every collection, and every LoadWindow in between, from the heap the last one
// left live and the rate of allocation since the last adjust. The ticks let a process that goes idle give back the
// headroom its load had: the goal falls at once, not at the next collection, which an idle process makes only
// every two minutes (the runtime's forced collection).
type pacer struct {
	headroom atomic.Int64
	stopped  atomic.Bool
	done     chan struct{} // closed by stop

	mu       sync.Mutex // adjust's, from the finalizer's goroutine and tick
	sample   []metrics.Sample
	percent  int
	past     []reading // the adjusts' readings of the last ForcedPeriod and the one before it (the last: the last adjust's)
	releases Releases
}

// reading is the bytes allocated to the heap at a time.
type reading struct {
	at     time.Time
	allocs uint64
}

// rateTo is the rate of allocation from r to later, in bytes per second.
func (r reading) rateTo(later reading) float64 {
	if d := later.at.Sub(r.at).Seconds(); d > 0 && later.allocs > r.allocs {
		return float64(later.allocs-r.allocs) / d
	}
	return 0
}

// tick adjusts every LoadWindow until the pacer stops.
func (p *pacer) tick() {
	t := time.NewTicker(LoadWindow)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			p.adjust()
		}
	}
}

// sentinel is garbage made for each cycle: its finalizer runs once a collection found it unreachable.
type sentinel struct{ p *pacer }

func (p *pacer) arm() {
	runtime.SetFinalizer(&sentinel{p: p}, func(s *sentinel) {
		if s.p.stopped.Load() {
			return
		}
		s.p.adjust()
		s.p.arm()
	})
}

// adjust sets the percent that lets the heap grow by Headroom past the live heap, at the rates of allocation since
// the last adjust and over the last ForcedPeriod (none the first time); nothing once stopped.
func (p *pacer) adjust() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped.Load() {
		return
	}
	metrics.Read(p.sample)
	now := time.Now()
	live := int64(p.sample[0].Value.Uint64())
	current := reading{at: now, allocs: p.sample[1].Value.Uint64()}
	var rate float64
	if len(p.past) > 0 {
		rate = p.past[len(p.past)-1].rateTo(current)
	}
	p.past = append(p.past, current)
	for len(p.past) > 2 && now.Sub(p.past[1].at) >= ForcedPeriod {
		p.past = p.past[1:]
	}
	recent := p.past[0].rateTo(current)
	floor := p.headroom.Load()
	percent := Percent(live, Headroom(live, floor, rate, recent))
	if percent != p.percent {
		debug.SetGCPercent(percent)
		p.percent = percent
	}
	// Release judges the rate over a whole LoadWindow at least: the rate since the last adjust may span a few
	// milliseconds between two collections of a busy process.
	i := sort.Search(len(p.past), func(i int) bool { return now.Sub(p.past[i].at) < LoadWindow }) - 1
	if i < 0 { // not yet a LoadWindow of readings
		return
	}
	// Objects count the garbage not yet swept; free is the heap's memory neither used nor returned.
	held := int64(p.sample[2].Value.Uint64()+p.sample[3].Value.Uint64()) - live
	if !p.releases.Due(now, live, held, floor, p.past[i].rateTo(current), recent) {
		return
	}
	// Not on the caller's goroutine: adjust runs on the finalizers' goroutine too, and the collection's own adjust
	// waits for p.mu.
	go debug.FreeOSMemory()
}

func (p *pacer) stop() {
	mu.Lock()
	defer mu.Unlock()
	if p.stopped.Swap(true) {
		return
	}
	close(p.done)
	p.mu.Lock() // an adjust under way sets its percent first
	debug.SetGCPercent(100)
	p.mu.Unlock()
	running = nil
}

// Headroom is how much a heap of live bytes may grow before the next collection, with the headroom floor (bytes),
// the allocation rate since the last adjustment and the rate over the last ForcedPeriod (recent), in bytes per
// second. Below floor live: the more of floor and what rate allocates in LoadWindow, at most LoadFactor × floor.
// From floor on: what rate allocates in MarkSpacing per MiB live, at most live (GOGC=100), and at least what
// recent allocates in ForcedPeriod, between floor/4 and floor. A large process under load stays paced as the
// runtime paces it: at 1,000 buses, 25 s of creation with LoadFactor × floor left 576 MiB resident after two idle
// minutes against 500 MiB without it (fragmentation of a heap grown larger). At a steady rate, collections stay at
// least MarkSpacing per MiB live apart whatever the lower bound: the headroom is at least what that time allocates.
func Headroom(live, floor int64, rate, recent float64) int64 {
	if live < floor {
		return max(floor, int64(min(rate*LoadWindow.Seconds(), float64(LoadFactor*floor))))
	}
	spacing := float64(live) / (1 << 20) * MarkSpacing.Seconds()
	idle := max(floor/4, int64(min(recent*ForcedPeriod.Seconds(), float64(floor))))
	return max(idle, int64(min(rate*spacing, float64(live)))) // idle ≤ floor ≤ live here
}

// Percent is the GC percent that lets a heap of live bytes grow by headroom before the next collection: 100 (the
// runtime's default) when headroom is live, less when it is smaller (at least 1), more when it is larger (at most
// 10,000, for a heap that is almost empty).
func Percent(live, headroom int64) int {
	if live <= headroom/100 {
		return 10_000
	}
	return max(1, int(headroom*100/live))
}
