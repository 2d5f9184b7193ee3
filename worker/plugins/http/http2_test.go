package http_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/delivery"
)

// An https target that offers HTTP/2 (ALPN h2) gets it, the deliveries a task has in flight sharing one connection;
// one that does not, and a plain http one, get HTTP/1.1 on connections kept alive between deliveries, at most one
// per delivery in flight. The target's certificate is checked against the process's trusted authorities
// (SSL_CERT_FILE here, main_test.go).
func TestHTTPVersionAndConnections(t *testing.T) {
	t.Parallel()
	cert, err := tls.LoadX509KeyPair(trusted.Cert, trusted.Key)
	require.NoError(t, err)
	cases := []struct {
		name       string
		tls, http2 bool
		proto      string
	}{
		{name: "https offering HTTP/2", tls: true, http2: true, proto: "HTTP/2.0"},
		{name: "https without HTTP/2", tls: true, proto: "HTTP/1.1"},
		{name: "http", proto: "HTTP/1.1"}, // h2c is never attempted: nothing says the target speaks it
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			protos := map[string]int{}
			var conns atomic.Int64
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(2 * time.Millisecond) // deliveries overlap: HTTP/1.1 needs a connection for each
				mu.Lock()
				protos[r.Proto]++
				mu.Unlock()
				w.WriteHeader(http.StatusNoContent)
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			if c.tls {
				srv.EnableHTTP2 = c.http2
				srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
				srv.StartTLS()
			} else {
				srv.Start()
			}
			t.Cleanup(srv.Close)
			s := newSink(t, map[string]string{"url": srv.URL}, true)

			// One delivery opens the connection; then a task's deliveries in flight, ten each.
			require.NoError(t, s.Write(context.Background(), orderEvent()))
			const each = 10
			var wg sync.WaitGroup
			var failed atomic.Int64
			for range delivery.MaxInFlight {
				wg.Go(func() {
					for range each {
						if s.Write(context.Background(), orderEvent()) != nil {
							failed.Add(1)
						}
					}
				})
			}
			wg.Wait()
			require.Zero(t, failed.Load(), "deliveries that failed")

			t.Logf("%d connections for %d deliveries", conns.Load(), 1+delivery.MaxInFlight*each)
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, map[string]int{c.proto: 1 + delivery.MaxInFlight*each}, protos)
			if c.http2 {
				assert.EqualValues(t, 1, conns.Load(), "every delivery on the one HTTP/2 connection")
				return
			}
			// Without keep-alive, every delivery would open one (641).
			assert.Greater(t, conns.Load(), int64(1), "deliveries in flight need connections of their own")
			assert.LessOrEqual(t, conns.Load(), int64(delivery.MaxInFlight), "at most one per delivery in flight, reused")
		})
	}
}
