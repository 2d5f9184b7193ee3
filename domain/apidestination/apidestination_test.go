package apidestination

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

func TestNewValidation(t *testing.T) {
	t.Parallel()
	conn := ConnectionRef{ID: domain.NewID(), Name: "shop"}
	cases := []struct {
		name      string
		spec      func(s *Spec)
		wantField string
		wantRate  int
	}{
		{"defaults", func(s *Spec) {}, "", DefaultRateLimitPerSecond},
		{"rate and lower-case method", func(s *Spec) { s.InvocationRateLimitPerSecond, s.HTTPMethod = 1, "patch" }, "", 1},
		{"path parameters", func(s *Spec) { s.InvocationEndpoint = "http://api.example.com:8080/a/*/b/*?x=1" }, "", 300},
		{"ten path parameters", func(s *Spec) { s.InvocationEndpoint = "https://x" + strings.Repeat("/*", 10) }, "", 300},
		{"bad name", func(s *Spec) { s.Name = "" }, "name", 0},
		{"long description", func(s *Spec) { s.Description = strings.Repeat("d", 513) }, "description", 0},
		{"no connection", func(s *Spec) { s.Connection = "" }, "connection", 0},
		{"bad connection name", func(s *Spec) { s.Connection = "a/b" }, "connection", 0},
		{"no endpoint", func(s *Spec) { s.InvocationEndpoint = "" }, "invocationEndpoint", 0},
		{"relative endpoint", func(s *Spec) { s.InvocationEndpoint = "/orders" }, "invocationEndpoint", 0},
		{"ftp endpoint", func(s *Spec) { s.InvocationEndpoint = "ftp://x/y" }, "invocationEndpoint", 0},
		{"user info", func(s *Spec) { s.InvocationEndpoint = "https://u:p@x/y" }, "invocationEndpoint", 0},
		{"star in host", func(s *Spec) { s.InvocationEndpoint = "https://*.example.com/y" }, "invocationEndpoint", 0},
		{"star in a segment", func(s *Spec) { s.InvocationEndpoint = "https://x/orders-*" }, "invocationEndpoint", 0},
		{"star in the query", func(s *Spec) { s.InvocationEndpoint = "https://x/o?id=*" }, "invocationEndpoint", 0},
		{"eleven path parameters", func(s *Spec) { s.InvocationEndpoint = "https://x" + strings.Repeat("/*", 11) }, "invocationEndpoint", 0},
		{"too long", func(s *Spec) { s.InvocationEndpoint = "https://x/" + strings.Repeat("a", MaxEndpointLength) }, "invocationEndpoint", 0},
		{"no method", func(s *Spec) { s.HTTPMethod = "" }, "httpMethod", 0},
		{"bad method", func(s *Spec) { s.HTTPMethod = "TRACE" }, "httpMethod", 0},
		{"rate too high", func(s *Spec) { s.InvocationRateLimitPerSecond = 301 }, "invocationRateLimitPerSecond", 0},
		{"negative rate", func(s *Spec) { s.InvocationRateLimitPerSecond = -1 }, "invocationRateLimitPerSecond", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := Spec{Name: "d", Connection: "shop", InvocationEndpoint: "https://api.example.com/orders", HTTPMethod: "POST"}
			tc.spec(&s)
			d, err := New("acc", s, conn, time.Now())
			if tc.wantField == "" {
				if err != nil {
					t.Fatal(err)
				}
				if d.InvocationRateLimitPerSecond() != tc.wantRate || d.HTTPMethod() != strings.ToUpper(d.HTTPMethod()) || d.Connection() != conn {
					t.Fatalf("got %+v", d)
				}
				return
			}
			e, ok := domain.As(err)
			if !ok || !errors.Is(err, domain.ErrValidation) || e.Field != tc.wantField {
				t.Fatalf("want a validation error on %q, got %v", tc.wantField, err)
			}
		})
	}
}

func TestPathParameters(t *testing.T) {
	t.Parallel()
	d, err := New("acc", Spec{Name: "d", Connection: "c", InvocationEndpoint: "https://x/a/*/b/*", HTTPMethod: "GET"},
		ConnectionRef{ID: domain.NewID(), Name: "c"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if d.PathParameters() != 2 {
		t.Fatalf("want 2 path parameters, got %d", d.PathParameters())
	}
}
