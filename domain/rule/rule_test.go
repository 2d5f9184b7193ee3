package rule

import (
	"errors"
	"testing"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

func TestNew(t *testing.T) {
	t.Parallel()
	now := time.Now()
	cases := []struct {
		name    string
		rname   string
		pattern string
		state   State
		want    error
	}{
		{"valid", "r1", `{"type": ["a"]}`, "", nil},
		{"disabled", "r1", `{"type": ["a"]}`, Disabled, nil},
		{"bad name", "r 1", `{"type": ["a"]}`, "", domain.ErrValidation},
		{"reserved name", "source", `{"type": ["a"]}`, "", domain.ErrValidation},
		{"empty pattern", "r1", ``, "", ErrInvalidEventPattern},
		{"invalid pattern", "r1", `{"type": "a"}`, "", ErrInvalidEventPattern},
		{"bad state", "r1", `{"type": ["a"]}`, "ON", domain.ErrValidation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New("default", "bus1", tc.rname, "", []byte(tc.pattern), CloudEvents, tc.state, now)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("want %v, got %v", tc.want, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(r.EventPattern()) != `{"type":["a"]}` {
				t.Fatalf("pattern not compacted: %s", r.EventPattern())
			}
			if tc.state == "" && r.State() != Enabled {
				t.Fatalf("state = %s, want ENABLED", r.State())
			}
		})
	}
}
