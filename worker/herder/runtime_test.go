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
