package herder

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRestartBackoff(t *testing.T) {
	h := &Herder{cfg: Config{RestartBackoffInitial: time.Second, RestartBackoffMax: time.Minute}}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60}
	for n, w := range want {
		assert.Equal(t, w*time.Second, h.backoff(n), "attempt %d", n)
	}
	assert.Equal(t, time.Minute, h.backoff(1000), "no overflow")
}
