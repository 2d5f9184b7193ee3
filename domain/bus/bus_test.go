package bus

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain"
)

func TestNew(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		account   string
		bus       string
		retention Retention
		wantField string
	}{
		{"valid", "default", "orders", Retention{}, ""},
		{"max name", "a1", strings.Repeat("x", 256), Retention{MaxAge: time.Hour, MaxBytes: 1 << 20}, ""},
		{"long name", "a1", strings.Repeat("x", 257), Retention{}, "name"},
		{"dots and slashes in name", "a1", "org.shop/a.b", Retention{}, ""},
		{"space in name", "a1", "a b", Retention{}, "name"},
		{"empty name", "a1", "", Retention{}, "name"},
		{"bad account", "A1", "orders", Retention{}, "accountId"},
		{"short age", "a1", "orders", Retention{MaxAge: time.Second}, "retention.maxAge"},
		{"small size", "a1", "orders", Retention{MaxBytes: 10}, "retention.maxBytes"},
		{"negative size", "a1", "orders", Retention{MaxBytes: -1}, "retention.maxBytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := New(tc.account, tc.bus, "", tc.retention, time.Now())
			if tc.wantField == "" {
				if err != nil {
					t.Fatal(err)
				}
				wantAge := tc.retention.MaxAge
				if wantAge == 0 {
					wantAge = DefaultMaxAge
				}
				// MaxBytes 0 stays 0: a bus without a size of its own.
				if b.Retention().MaxAge != wantAge || b.Retention().MaxBytes != tc.retention.MaxBytes || !domain.IsID(b.ID()) {
					t.Fatalf("defaults/id missing: %+v %q", b.Retention(), b.ID())
				}
				return
			}
			e, ok := domain.As(err)
			if !ok || !errors.Is(err, domain.ErrValidation) || e.Field != tc.wantField {
				t.Fatalf("want validation error on %q, got %v", tc.wantField, err)
			}
		})
	}
}

func TestValidateEvent(t *testing.T) {
	t.Parallel()
	e := event.New()
	e.SetID("1")
	e.SetSource("s")
	e.SetType("t")
	if err := ValidateEvent(&e, 10); err != nil {
		t.Fatal(err)
	}
	if err := ValidateEvent(&e, MaxEventSize+1); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("want ErrEventTooLarge, got %v", err)
	}
	bad := event.New()
	bad.SetID("1")
	if err := ValidateEvent(&bad, 10); !errors.Is(err, ErrInvalidEvent) {
		t.Fatalf("want ErrInvalidEvent, got %v", err)
	}
}
