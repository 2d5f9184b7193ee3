package http_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
)

// refusing returns a loopback address that refuses connections for the whole test: a socket bound to it that does
// not listen, so the kernel answers a connection with a reset and hands the port to nobody else. A port listened on
// and closed again could be handed to the next server (seen in CI: this test's own server of 500s got it).
func refusing(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}

// TestErrorClasses: each way a real delivery fails is classed as the health of a target shows it, and an answer's
// status and the start of its body come with the error.
func TestErrorClasses(t *testing.T) {
	t.Parallel()
	answer := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	closed := "http://" + refusing(t) + "/"
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(tlsSrv.Close)
	hangUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(hangUp.Close)

	cases := []struct {
		name, url    string
		cfg          map[string]string
		allowPrivate bool
		class        string
		status       int
		response     string
	}{
		{name: "closed port", url: closed, allowPrivate: true, class: delivery.ClassConnectionRefused},
		{name: "name that does not resolve", url: "http://crm.example.invalid/", allowPrivate: true, class: delivery.ClassDNS},
		{name: "name that does not resolve, guarded", url: "http://crm.example.invalid/", class: delivery.ClassDNS},
		{name: "private address", url: closed, class: delivery.ClassEgressRefused},
		{name: "no answer in time", url: slow.URL, cfg: map[string]string{"timeout": "200ms"}, allowPrivate: true, class: delivery.ClassTimeout},
		{name: "certificate of an unknown authority", url: tlsSrv.URL, allowPrivate: true, class: delivery.ClassTLS},
		{name: "connection closed without an answer", url: hangUp.URL, allowPrivate: true, class: delivery.ClassConnectionReset},
		{name: "503", url: answer(503, "  down for maintenance \n"), allowPrivate: true, class: delivery.ClassHTTP5xx,
			status: 503, response: "down for maintenance"},
		{name: "404", url: answer(404, "no such hook"), allowPrivate: true, class: delivery.ClassHTTP4xx, status: 404,
			response: "no such hook"},
		{name: "429", url: answer(429, ""), allowPrivate: true, class: delivery.ClassHTTP4xx, status: 429},
		{name: "long answer", url: answer(500, strings.Repeat("x", 5000)), allowPrivate: true, class: delivery.ClassHTTP5xx,
			status: 500, response: strings.Repeat("x", 512)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := map[string]string{"url": c.url}
			for k, v := range c.cfg {
				cfg[k] = v
			}
			err := newSink(t, cfg, c.allowPrivate).Write(context.Background(), orderEvent())
			require.Error(t, err)
			assert.Equal(t, c.class, delivery.ErrorClass(err), "%v", err)
			status, response, ok := connector.StatusOf(err)
			assert.Equal(t, c.status != 0, ok)
			assert.Equal(t, c.status, status)
			assert.Equal(t, c.response, response)
		})
	}
}
