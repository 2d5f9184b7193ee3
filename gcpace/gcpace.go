// Package gcpace paces Go's garbage collector for the binaries. With the runtime's default (GOGC=100) a collection
// starts each time the heap has grown by what the last one left live: for the tens of megabytes a process of a few
// buses keeps live, a collection every few hundred milliseconds under load, each with its pauses and its assists on
// the goroutines delivering events. Start lets the heap grow by at least a headroom instead, and by the live heap
// when that is more, so a large process is paced as before and a small one collects several times less often.
// While the process allocates fast, the heap may also grow by what it allocates in LoadWindow, up to LoadFactor
// times the headroom: a busy process collects about once per LoadWindow, and an idle one keeps the headroom's
// memory only. In a container with a memory limit it sets the runtime's soft limit to 90% of it, so the headroom
// never takes the process past it.
package gcpace

import (
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// DefaultHeadroom is the least the heap may grow between two collections by default: 128 MiB.
const DefaultHeadroom = 128 << 20

// Under load, the heap may grow by what the process allocated in LoadWindow (at the rate of the last cycle, from one
// collection to the next), up to LoadFactor times the headroom. On 2 cores, a process delivering 5,000 events/s
// allocated about 100 MB/s: with the headroom alone (128 MiB) it collected every 1.3 s, and each collection's
// pauses and assists put a few of its batches in the tail of delivery latency (docs/benchmarks.md).
const (
	LoadWindow = 5 * time.Second
	LoadFactor = 3
)

// FlagUsage is the usage of the binaries' --gc-headroom-mib.
const FlagUsage = "the least the heap grows between two garbage collections, in MiB, while what is live is less: " +
	"more memory for fewer collections and shorter tails of delivery latency; while the process allocates fast, up " +
	"to three times this, what it allocates in 5 s (0: the Go runtime's own pacing; GOGC " +
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
	p := &pacer{}
	p.headroom.Store(headroom)
	p.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	running = p
	p.adjust()
	p.arm()
	return p.stop
}

// pacer sets the GC percent after every collection from the heap it left live and the rate of allocation since
// the one before.
type pacer struct {
	headroom atomic.Int64
	// Read and written by the finalizer's goroutine only, after arm.
	sample    []metrics.Sample
	percent   int
	allocs    uint64    // bytes allocated to the heap, at the last adjust
	allocated time.Time // when it was read
	stopped   atomic.Bool
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

// adjust sets the percent that lets the heap grow by Headroom past the live heap, at the rate of allocation since
// the last adjust (none the first time).
func (p *pacer) adjust() {
	metrics.Read(p.sample)
	now := time.Now()
	live := int64(p.sample[0].Value.Uint64())
	allocs := p.sample[1].Value.Uint64()
	var rate float64
	if !p.allocated.IsZero() {
		if d := now.Sub(p.allocated).Seconds(); d > 0 && allocs > p.allocs {
			rate = float64(allocs-p.allocs) / d
		}
	}
	p.allocs, p.allocated = allocs, now
	percent := Percent(live, Headroom(live, p.headroom.Load(), rate))
	if percent != p.percent {
		debug.SetGCPercent(percent)
		p.percent = percent
	}
}

func (p *pacer) stop() {
	mu.Lock()
	defer mu.Unlock()
	if p.stopped.Swap(true) {
		return
	}
	debug.SetGCPercent(100)
	running = nil
}

// Headroom is how much a heap of live bytes may grow before the next collection, with the headroom floor (bytes)
// and an allocation rate in bytes per second: the most of live, floor and what rate allocates in LoadWindow, the
// last at most LoadFactor × floor.
func Headroom(live, floor int64, rate float64) int64 {
	load := int64(min(rate*LoadWindow.Seconds(), float64(LoadFactor*floor)))
	return max(live, floor, load)
}

// Percent is the GC percent that lets a heap of live bytes grow by max(live, headroom) before the next collection:
// 100 (the runtime's default) once live reaches headroom, more below it; at most 10,000, for a heap that is almost
// empty.
func Percent(live, headroom int64) int {
	if live >= headroom {
		return 100
	}
	if live <= headroom/100 {
		return 10_000
	}
	return int(headroom * 100 / live)
}
