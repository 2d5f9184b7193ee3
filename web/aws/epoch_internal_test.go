package aws

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEpoch: AWS JSON 1.1 timestamps (seconds since the epoch with a fraction) are read exactly, and written with
// milliseconds.
func TestEpoch(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Time{
		"1764756000":               time.Unix(1764756000, 0),
		"1764756000.978":           time.Unix(1764756000, 978_000_000),
		"1764756000.1234567891":    time.Unix(1764756000, 123_456_789),
		"1.764756000978e9":         time.UnixMilli(1764756000978),
		`"2026-12-03T10:00:00.5Z"`: time.Date(2026, 12, 3, 10, 0, 0, 500_000_000, time.UTC),
	} {
		var e epoch
		require.NoError(t, e.UnmarshalJSON([]byte(in)), in)
		assert.True(t, want.Equal(time.Time(e)), "%s: %s", in, time.Time(e))
	}
	for _, in := range []string{"x", `"yesterday"`, "1.2.3"} {
		var e epoch
		assert.Error(t, e.UnmarshalJSON([]byte(in)), in)
	}
	b, err := epoch(time.UnixMilli(1764756000978)).MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, "1764756000.978", string(b))
}
