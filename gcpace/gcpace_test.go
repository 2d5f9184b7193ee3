package gcpace_test

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
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
		{128 * mib, 128 * mib, 100}, // from the headroom on, by itself: GOGC=100
		{336 * mib, 128 * mib, 100},
		{64 * mib, 256 * mib, 400},
		{1 * mib, 128 * mib, 10_000}, // an almost empty heap: capped
		{0, 128 * mib, 10_000},
	} {
		assert.Equal(t, c.want, gcpace.Percent(c.live, c.headroom), "live %d MiB, headroom %d MiB", c.live/mib, c.headroom/mib)
	}
}

// TestStartPacesEveryCollection: the percent is set from the live heap at the start and again after collections,
// follows the live heap as it grows, and goes back to the runtime's default once stopped. Not parallel: the GC
// percent is the process's.
func TestStartPacesEveryCollection(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set for this test process")
	}
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
		return percent() == 100
	}, 10*time.Second, 10*time.Millisecond, "a live heap past the headroom is paced as GOGC=100 (was %d)", first)
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
