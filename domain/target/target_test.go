package target

import (
	"errors"
	"testing"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

func TestNewValidates(t *testing.T) {
	t.Parallel()
	now := time.Now()
	ok := HTTPConfig{URL: "https://example.com/hook"}
	cases := []struct {
		name      string
		spec      Spec
		wantField string
	}{
		{"valid with defaults", Spec{Name: "hook", Type: HTTP, HTTP: ok, RetryPolicy: DefaultRetryPolicy()}, ""},
		{"bad name", Spec{Name: "a.b", Type: HTTP, HTTP: ok, RetryPolicy: DefaultRetryPolicy()}, "name"},
		{"no type", Spec{Name: "t", HTTP: ok, RetryPolicy: DefaultRetryPolicy()}, "type"},
		{"unknown type", Spec{Name: "t", Type: "sqs", HTTP: ok, RetryPolicy: DefaultRetryPolicy()}, "type"},
		{"no url", Spec{Name: "t", Type: HTTP, RetryPolicy: DefaultRetryPolicy()}, "config.url"},
		{"ftp url", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: "ftp://x/y"}, RetryPolicy: DefaultRetryPolicy()}, "config.url"},
		{"relative url", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: "/hook"}, RetryPolicy: DefaultRetryPolicy()}, "config.url"},
		{"bad method", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: ok.URL, Method: "TRACE"}, RetryPolicy: DefaultRetryPolicy()}, "config.method"},
		{"bad mode", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: ok.URL, Mode: "batch"}, RetryPolicy: DefaultRetryPolicy()}, "config.mode"},
		{"timeout too long", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: ok.URL, Timeout: time.Hour}, RetryPolicy: DefaultRetryPolicy()}, "config.timeout"},
		{"bad header", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: ok.URL, Headers: map[string]string{"a b": "c"}}, RetryPolicy: DefaultRetryPolicy()}, "config.headers"},
		{"header injection", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: ok.URL, Headers: map[string]string{"X": "a\r\nb: c"}}, RetryPolicy: DefaultRetryPolicy()}, "config.headers"},
		{"too many attempts", Spec{Name: "t", Type: HTTP, HTTP: ok, RetryPolicy: RetryPolicy{MaximumRetryAttempts: 186, MaximumEventAgeInSeconds: 60}}, "retryPolicy.maximumRetryAttempts"},
		{"age too short", Spec{Name: "t", Type: HTTP, HTTP: ok, RetryPolicy: RetryPolicy{MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 59}}, "retryPolicy.maximumEventAgeInSeconds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := New("default", "b", "r", tc.spec, now)
			if tc.wantField == "" {
				if err != nil {
					t.Fatal(err)
				}
				h := got.HTTP()
				if h.Method != "POST" || h.Mode != Binary || h.Timeout != 5*time.Second || !domain.IsID(got.ID()) {
					t.Fatalf("defaults not applied: %+v id %q", h, got.ID())
				}
				return
			}
			if !errors.Is(err, domain.ErrValidation) {
				t.Fatalf("want a validation error, got %v", err)
			}
			if e, _ := domain.As(err); e.Field != tc.wantField {
				t.Fatalf("field = %q, want %q (%v)", e.Field, tc.wantField, err)
			}
		})
	}
}
