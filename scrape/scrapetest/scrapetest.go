// Package scrapetest serves a metrics handler as a Prometheus scrape reads it, for the benchmarks of both
// binaries' metrics.
package scrapetest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Scrape serves GET /metrics with h once, the answer counted and discarded as a connection takes it (a recorder's
// growing buffer would be most of what it measures), and returns the answer's size. It fails tb unless h answers
// 200.
func Scrape(tb testing.TB, h http.Handler) int {
	tb.Helper()
	w := &discard{header: http.Header{}}
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if w.code != http.StatusOK {
		tb.Fatalf("GET /metrics answered %d", w.code)
	}
	return w.n
}

// discard is a ResponseWriter that counts what it is sent.
type discard struct {
	header http.Header
	code   int
	n      int
}

func (d *discard) Header() http.Header { return d.header }

func (d *discard) WriteHeader(code int) { d.code = code }

func (d *discard) Write(p []byte) (int, error) {
	if d.code == 0 {
		d.code = http.StatusOK
	}
	d.n += len(p)
	return len(p), nil
}
