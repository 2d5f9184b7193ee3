package herder

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFullRoundDue(t *testing.T) {
	last := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		after   time.Duration
		took    time.Duration
		changed bool
		want    bool
	}{
		{"nothing changed, within the interval", time.Second, time.Millisecond, false, false},
		{"nothing changed, the interval passed", fullRoundInterval, time.Millisecond, false, true},
		{"a change, a short last round", 10 * time.Millisecond, time.Millisecond, true, true},
		{"a change, the last round took 200 ms and started 300 ms ago", 300 * time.Millisecond, 200 * time.Millisecond, true, false},
		{"a change, the last round took 200 ms and started 600 ms ago", 600 * time.Millisecond, 200 * time.Millisecond, true, true},
		{"the interval passed but the last round is paced", fullRoundInterval, fullRoundInterval, false, false},
	} {
		assert.Equal(t, c.want, fullRoundDue(last.Add(c.after), last, c.took, c.changed), c.name)
	}
}

// A look asked for within lookGap of the last is not due, but comes when the gap ends rather than at the loop's
// next tick: lookDue says how long until then.
func TestLookDue(t *testing.T) {
	looked := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	light := looked.Add(countersInterval)
	for _, c := range []struct {
		name  string
		after time.Duration
		look  bool
		due   bool
		later time.Duration
	}{
		{"nothing asked, before the light round", 10 * time.Millisecond, false, false, 0},
		{"nothing asked, the light round has come", countersInterval, false, true, 0},
		{"asked within the gap", 10 * time.Millisecond, true, false, lookGap - 10*time.Millisecond},
		{"asked right after the last look", 0, true, false, lookGap},
		{"asked once the gap passed", lookGap, true, true, 0},
		{"asked within the gap, the light round has come", countersInterval, true, true, 0},
	} {
		due, later := lookDue(looked.Add(c.after), light, looked, c.look)
		assert.Equal(t, c.due, due, c.name)
		assert.Equal(t, c.later, later, c.name)
		assert.Less(t, later, loopInterval, "%s: sooner than the loop's next tick", c.name)
	}
}
