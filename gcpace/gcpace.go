// Package gcpace paces Go's garbage collector for the binaries. With the runtime's default (GOGC=100) a collection
// starts each time the heap has grown by what the last one left live: for the tens of megabytes a process of a few
// buses keeps live, a collection every few hundred milliseconds under load, each with its pauses and its assists on
// the goroutines delivering events. Start lets the heap grow by at least a headroom instead, and by the live heap
// when that is more, so a large process is paced as before and a small one collects several times less often; in a
// container with a memory limit it sets the runtime's soft limit to 90% of it, so the headroom never takes the
// process past it.
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

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// DefaultHeadroom is the least the heap may grow between two collections by default: 128 MiB.
const DefaultHeadroom = 128 << 20

// FlagUsage is the usage of the binaries' --gc-headroom-mib.
const FlagUsage = "the least the heap grows between two garbage collections, in MiB, while what is live is less: " +
	"more memory for fewer collections and shorter tails of delivery latency (0: the Go runtime's own pacing; GOGC " +
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
	p.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	running = p
	p.adjust()
	p.arm()
	return p.stop
}

// pacer sets the GC percent after every collection from the heap it left live.
type pacer struct {
	headroom atomic.Int64
	sample   []metrics.Sample // read by the finalizer's goroutine only, after arm
	percent  int
	stopped  atomic.Bool
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

// adjust sets the percent that lets the heap grow by max(live, headroom) past the live heap.
func (p *pacer) adjust() {
	metrics.Read(p.sample)
	live := int64(p.sample[0].Value.Uint64())
	percent := Percent(live, p.headroom.Load())
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
