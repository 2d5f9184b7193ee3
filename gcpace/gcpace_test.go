package gcpace_test

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/gcpace"
)

func TestPercent(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	for _, c := range []struct {
		live, headroom int64
		want           int
	}{
		{40 * mib, 128 * mib, 320},  // a small heap grows by the headroom
		{128 * mib, 128 * mib, 100}, // by itself: GOGC=100
		{336 * mib, 336 * mib, 100}, // a large heap under load: GOGC=100
		{336 * mib, 128 * mib, 38},  // a large idle heap: by the headroom
		{1 << 40, 128 * mib, 1},     // at least 1
		{64 * mib, 256 * mib, 400},
		{1 * mib, 128 * mib, 10_000}, // an almost empty heap: capped
		{0, 128 * mib, 10_000},
	} {
		assert.Equal(t, c.want, gcpace.Percent(c.live, c.headroom), "live %d MiB, headroom %d MiB", c.live/mib, c.headroom/mib)
	}
}

func TestHeadroom(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	for _, c := range []struct {
		name         string
		live, floor  int64
		rate, recent float64 // bytes/s: since the last adjustment, over the last ForcedPeriod
		want         int64
	}{
		{"idle: the floor", 40 * mib, 128 * mib, 0, 0, 128 * mib},
		{"slow allocation: the floor", 40 * mib, 128 * mib, 10 * mib, 10 * mib, 128 * mib},
		{"under load: what LoadWindow allocates", 40 * mib, 128 * mib, 50 * mib, 1 * mib, 250 * mib},
		{"under heavy load: LoadFactor × the floor", 40 * mib, 128 * mib, 1000 * mib, 0, 384 * mib},
		{"a large live heap, idle: a quarter of the floor", 336 * mib, 128 * mib, 0, 0, 32 * mib},
		{"a large live heap allocating little: what ForcedPeriod allocated", 336 * mib, 128 * mib, 0.4 * mib, 0.4 * mib, 48 * mib},
		{"a quiet window after a busier ForcedPeriod: what ForcedPeriod allocated", 336 * mib, 128 * mib, 0, 0.75 * mib, 90 * mib},
		{"a large live heap allocating slowly: the floor", 336 * mib, 128 * mib, 1.1 * mib, 1.1 * mib, 128 * mib},
		{"a large live heap allocating: what MarkSpacing per MiB live allocates", 336 * mib, 128 * mib, 5 * mib, 5 * mib, 168 * mib},
		{"a burst after a quiet ForcedPeriod: what MarkSpacing per MiB live allocates", 336 * mib, 128 * mib, 5 * mib, 0, 168 * mib},
		{"a large live heap under load: itself", 336 * mib, 128 * mib, 50 * mib, 50 * mib, 336 * mib},
		{"a live heap of the floor under heavy load: itself", 128 * mib, 128 * mib, 1000 * mib, 1000 * mib, 128 * mib},
		{"a large live heap under heavy load: itself", 200 * mib, 128 * mib, 1000 * mib, 1000 * mib, 200 * mib},
		{"no floor: the live heap under load", 40 * mib, 0, 1000 * mib, 1000 * mib, 40 * mib},
	} {
		assert.Equal(t, c.want/mib, gcpace.Headroom(c.live, c.floor, c.rate, c.recent)/mib, c.name)
	}
	assert.Equal(t, 5*time.Second, gcpace.LoadWindow, "the table above assumes it")
	assert.Equal(t, 3, gcpace.LoadFactor, "the table above assumes it")
	assert.Equal(t, 100*time.Millisecond, gcpace.MarkSpacing, "the table above assumes it")
	assert.Equal(t, 2*time.Minute, gcpace.ForcedPeriod, "the table above assumes it")
}

func TestRelease(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	for _, c := range []struct {
		name              string
		live, held, floor int64
		rate              float64 // bytes/s, over the last LoadWindow at least
		want              bool
	}{
		{"a large heap fallen quiet, holding what its creation left", 240 * mib, 140 * mib, 128 * mib, 0.33 * mib, true},
		{"a large idle heap holding what it allocates in ForcedPeriod", 240 * mib, 40 * mib, 128 * mib, 0.33 * mib, false},
		{"a large idle heap holding that and the scavenger's slack", 240 * mib, 68 * mib, 128 * mib, 0.33 * mib, false},
		{"a large heap under load: what it holds is what the load needs", 240 * mib, 200 * mib, 128 * mib, 50 * mib, false},
		{"a small heap fallen quiet after a burst", 40 * mib, 300 * mib, 128 * mib, 0, true},
		{"a small idle heap holding its floor", 40 * mib, 140 * mib, 128 * mib, 0, false},
		{"a small heap under load", 40 * mib, 300 * mib, 128 * mib, 100 * mib, false},
		{"a small heap under load, its collector lagging", 40 * mib, 500 * mib, 128 * mib, 20 * mib, false},
		{"a large heap under load, its collector lagging", 240 * mib, 500 * mib, 128 * mib, 20 * mib, false},
		{"a heap allocating a little less than a quarter of the floor per LoadWindow", 240 * mib, 300 * mib, 128 * mib, 6 * mib, true},
	} {
		assert.Equal(t, c.want, gcpace.Release(c.live, c.held, c.floor, c.rate), c.name)
	}
	assert.True(t, gcpace.Quiet(6*mib, 128*mib), "30 MB per LoadWindow: less than a quarter of the floor")
	assert.False(t, gcpace.Quiet(7*mib, 128*mib), "35 MB per LoadWindow: more")
}

// Once per quiet spell: a process released releases again only after a ForcedPeriod busy at its rate, not after a
// busy LoadWindow such as a scrape of the metrics.
func TestReleasesOncePerQuietSpell(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	const live, floor = 240 * mib, 128 * mib
	type step struct {
		at               time.Duration // since the first step
		held             int64
		windowed, recent float64 // bytes/s
		want             bool
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"fallen quiet after the creation of buses: at once, then not again while idle", []step{
			{0, 300 * mib, 40 * mib, 40 * mib, false},
			{5 * time.Second, 300 * mib, 0.3 * mib, 30 * mib, true},
			{10 * time.Second, 200 * mib, 0.3 * mib, 30 * mib, false},
			{3 * time.Minute, 200 * mib, 0.3 * mib, 0.3 * mib, false},
			{30 * time.Minute, 200 * mib, 0.3 * mib, 0.3 * mib, false},
		}},
		{"a scrape's 60 MB in a LoadWindow does not start a spell", []step{
			{0, 300 * mib, 0.3 * mib, 30 * mib, true},
			{30 * time.Second, 100 * mib, 12 * mib, 1 * mib, false},
			{35 * time.Second, 160 * mib, 0.3 * mib, 1 * mib, false},
			{3 * time.Minute, 160 * mib, 12 * mib, 1 * mib, false},
			{3*time.Minute + 5*time.Second, 160 * mib, 0.3 * mib, 1 * mib, false},
		}},
		{"busy over a ForcedPeriod since: once more when it falls quiet", []step{
			{0, 300 * mib, 0.3 * mib, 30 * mib, true},
			{time.Minute, 300 * mib, 40 * mib, 20 * mib, false},
			{2 * time.Minute, 300 * mib, 40 * mib, 30 * mib, false},
			{2*time.Minute + 5*time.Second, 300 * mib, 0.3 * mib, 30 * mib, true},
			{2*time.Minute + 10*time.Second, 300 * mib, 0.3 * mib, 30 * mib, false},
		}},
		{"busy over a ForcedPeriod but never quiet, then quiet with nothing to return", []step{
			{0, 300 * mib, 0.3 * mib, 30 * mib, true},
			{5 * time.Minute, 300 * mib, 40 * mib, 40 * mib, false},
			{5*time.Minute + 5*time.Second, 30 * mib, 0.3 * mib, 30 * mib, false},
			{5*time.Minute + 10*time.Second, 300 * mib, 0.3 * mib, 30 * mib, true},
		}},
	} {
		var r gcpace.Releases
		start := time.Now()
		for i, s := range c.steps {
			assert.Equal(t, s.want, r.Due(start.Add(s.at), live, s.held, floor, s.windowed, s.recent), "%s: step %d", c.name, i)
		}
	}
}

// TestStartPacesEveryCollection: the percent is set from the live heap at the start and again after collections,
// follows the live heap as it grows, and goes back to the runtime's default once stopped. Not parallel: the GC
// percent is the process's.
func TestStartPacesEveryCollection(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set for this test process")
	}
	// The live heap the pacer starts from is the last collection's: not what an earlier test (or run, with
	// -count) left allocating.
	runtime.GC()
	runtime.GC()
	stop := gcpace.Start(64<<20, slog.New(slog.DiscardHandler))
	percent := func() int { p := debug.SetGCPercent(100); debug.SetGCPercent(p); return p }
	assert.Greater(t, percent(), 100, "the test's small heap gets the headroom at once")
	first := percent()

	live := make([][]byte, 0, 9) // the live heap grows past the headroom: 72 MiB
	for range 9 {
		live = append(live, make([]byte, 8<<20))
	}
	require.Eventually(t, func() bool {
		runtime.GC()
		return percent() <= 100
	}, 10*time.Second, 10*time.Millisecond, "a live heap past the headroom grows by no more than itself (was %d)", first)
	runtime.KeepAlive(live)
	live = nil
	require.Eventually(t, func() bool {
		runtime.GC()
		return percent() > 100
	}, 10*time.Second, 10*time.Millisecond, "the headroom again once the heap is small")

	stop()
	assert.Equal(t, 100, percent(), "stopped: the runtime's default")
	runtime.GC()
	runtime.GC()
	assert.Equal(t, 100, percent(), "and no collection after the stop sets it again")
}

func TestStartLeavesGOGCToTheOperator(t *testing.T) {
	t.Setenv("GOGC", "100")
	stop := gcpace.Start(512<<20, slog.New(slog.DiscardHandler))
	defer stop()
	p := debug.SetGCPercent(100)
	assert.Equal(t, 100, p, "GOGC set: the runtime's pacing")
}

// TestStartGivesALoadedProcessMoreHeadroom: while a process with less than the floor live allocates fast,
// collections set a percent that lets the heap grow by more than the floor (up to LoadFactor × it); once it stops,
// the floor again within two LoadWindows, collection or not. Not parallel: the GC percent is the process's.
func TestStartGivesALoadedProcessMoreHeadroom(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set for this test process")
	}
	const floor = 64 << 20
	percent := func() int { p := debug.SetGCPercent(100); debug.SetGCPercent(p); return p }
	live := make([]byte, 16<<20) // less than the floor, enough that the percent is not at its cap
	for i := range live {
		live[i] = 1
	}
	stop := gcpace.Start(floor, slog.New(slog.DiscardHandler))
	defer stop()
	runtime.GC()
	runtime.GC()
	rest := percent()
	require.Greater(t, rest, 100, "at rest, a small heap grows by the floor")

	stopLoad := load() // LoadWindow's worth is far past LoadFactor × the floor
	require.Eventually(t, func() bool { return percent() >= 2*rest }, 10*time.Second, 10*time.Millisecond,
		"under load, the heap grows by more than the floor (at rest: %d%%)", rest)
	stopLoad()
	assert.LessOrEqual(t, percent(), (gcpace.LoadFactor+1)*rest, "at most LoadFactor × the floor")

	// No collection from here on (nothing is allocated): the pacer's own ticks give the headroom back.
	gcs := numGC()
	require.Eventually(t, func() bool { return percent() < 2*rest }, 3*gcpace.LoadWindow, 50*time.Millisecond,
		"at rest again, the floor within two LoadWindows, without waiting for a collection")
	t.Logf("at rest %d%%, loaded up to LoadFactor × that, at rest again %d%%; collections meanwhile: %d", rest,
		percent(), numGC()-gcs)
	runtime.KeepAlive(live)
}

// TestStartPacesALargeProcessByItsLoad: with more than the floor live, under load the heap grows by its live heap
// (GOGC=100), never more; idle again, by the floor only (here half the live heap: the load is in the last
// ForcedPeriod), within two LoadWindows. Not parallel: the GC percent is the process's. Each collection sets the
// percent from the rate since the one before: on a loaded machine (CI runs packages side by side on 2 cores) the
// allocating goroutine may get no core between two of them, and that window is paced as idle; so the test asks that
// the load reach GOGC=100, not that every window does.
func TestStartPacesALargeProcessByItsLoad(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set for this test process")
	}
	percent := func() int { p := debug.SetGCPercent(100); debug.SetGCPercent(p); return p }
	live := make([]byte, 16<<20)
	for i := range live {
		live[i] = 1
	}
	stop := gcpace.Start(8<<20, slog.New(slog.DiscardHandler))
	defer stop()
	stopLoad := load()
	require.Eventually(t, func() bool {
		runtime.GC()
		return percent() == 100
	}, 10*time.Second, 50*time.Millisecond, "16 MiB live against a floor of 8 MiB, under load: GOGC=100")
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		assert.LessOrEqual(t, percent(), 100, "under load, never more than the live heap")
		time.Sleep(50 * time.Millisecond)
	}
	stopLoad()
	require.Eventually(t, func() bool { return percent() < 75 }, 3*gcpace.LoadWindow, 50*time.Millisecond,
		"idle, the floor over the live heap (about 50%%): what the last ForcedPeriod allocated, at most the floor")
	runtime.KeepAlive(live)
}

// TestStartReturnsTheHeapWhenTheLoadFalls: once the load stops, the pacer collects and returns the free heap to the
// system within two LoadWindows, once, rather than leaving it to the runtime's scavenger. The scavenger keeps free
// memory up to 10% over the heap's goal, and the goal of a large process keeps the floor over its live heap for
// ForcedPeriod after a load: under load this heap grows to twice its live 128 MiB, and after it the scavenger alone
// would keep tens of MiB free. Not parallel: the collections are the process's.
func TestStartReturnsTheHeapWhenTheLoadFalls(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set for this test process")
	}
	sample := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}, {Name: "/memory/classes/heap/free:bytes"}}
	read := func() (forced, free uint64) {
		metrics.Read(sample)
		return sample[0].Value.Uint64(), sample[1].Value.Uint64()
	}
	const floor = 64 << 20
	live := make([]byte, 128<<20) // more than the floor: paced as a large process
	for i := range live {
		live[i] = 1
	}
	stop := gcpace.Start(floor, slog.New(slog.DiscardHandler))
	defer stop()
	stopLoad := load()
	time.Sleep(time.Second)
	stopLoad()
	before, _ := read()
	// Nothing calls for a collection from here on: a forced one is the pacer's.
	require.Eventually(t, func() bool {
		forced, free := read()
		return forced > before && free < floor/4
	}, 3*gcpace.LoadWindow, 20*time.Millisecond, "quiet, the heap collected and its free memory returned")
	time.Sleep(gcpace.LoadWindow + time.Second)
	forced, _ := read()
	assert.Equal(t, before+1, forced, "once, not at every adjustment")
	runtime.KeepAlive(live)
}

// load allocates garbage, hundreds of MB/s, until the stop it returns is called.
func load() (stop func()) {
	done := make(chan struct{})
	var allocating sync.WaitGroup
	allocating.Go(func() {
		var sink []byte
		for {
			select {
			case <-done:
				runtime.KeepAlive(sink)
				return
			default:
				sink = make([]byte, 64<<10)
			}
		}
	})
	return func() {
		close(done)
		allocating.Wait()
	}
}

func numGC() uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.NumGC
}
