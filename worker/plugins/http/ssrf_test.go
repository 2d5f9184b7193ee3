package http_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/egress"
	"github.com/eventbridge-go/eventbridge/worker/egress/egresstest"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

type ssrfCase struct {
	name string
	url  string
}

// ssrfTable builds the table from the egress corpus: every blocked form in an http URL with the port, in an https
// URL, and without a port.
func ssrfTable(port string) ([]ssrfCase, map[string][]netip.Addr) {
	corpus, names := egresstest.Corpus()
	var cases []ssrfCase
	for _, c := range corpus {
		cases = append(cases, ssrfCase{name: c.Name, url: "http://" + c.HostPort(port) + "/hook"})
		if strings.HasPrefix(c.Name, "literal/") {
			cases = append(cases,
				ssrfCase{name: "https-" + c.Name, url: "https://" + c.HostPort(port) + "/hook"},
				ssrfCase{name: "default-port-" + c.Name, url: "http://" + c.Host + "/"})
		}
	}
	return cases, names
}

// newGuardedSink builds a sink whose guard resolves names with resolver and connects through trap.
func newGuardedSink(t *testing.T, cfg map[string]string, policy egress.Config) connector.Sink {
	t.Helper()
	spec := httpsink.Plugin().Spec
	require.Empty(t, spec.Validate(cfg))
	s, err := httpsink.New(spec.Values(cfg), connector.Env{Egress: policy})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestSSRFTable: every URL of the table is refused by the dialer, before any connection is attempted.
func TestSSRFTable(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	cases, names := ssrfTable(trap.Port())
	require.GreaterOrEqual(t, len(cases), 300)
	policy := egress.Config{Lookup: egresstest.NewResolver(names).Lookup, Dial: trap.Dial}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newGuardedSink(t, map[string]string{"url": tc.url, "timeout": "2s"}, policy)
			before := trap.Dials()
			err := s.Write(context.Background(), orderEvent())
			require.Error(t, err)
			assert.ErrorIs(t, err, egress.ErrRefused, "%s: %v", tc.url, err)
			assert.True(t, connector.IsPermanent(err), "%s: %v", tc.url, err)
			assert.Equal(t, before, trap.Dials(), "%s: no connection attempted", tc.url)
		})
	}
	assert.Zero(t, trap.Dials(), "connection attempts")
	assert.Zero(t, trap.Accepts(), "connections accepted")
}

// TestSSRFOAuthTokenEndpoint: a token endpoint at any blocked form is refused before any connection: neither the
// target nor the endpoint sees a request.
func TestSSRFOAuthTokenEndpoint(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	corpus, names := egresstest.Corpus()
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(target.Close)
	names["public.example"] = []netip.Addr{netip.MustParseAddr("8.8.8.8")}
	trap.Pass("8.8.8.8:80", target.Listener.Addr().String())
	policy := egress.Config{Lookup: egresstest.NewResolver(names).Lookup, Dial: trap.Dial}
	for _, c := range corpus {
		t.Run(c.Name, func(t *testing.T) {
			s := newGuardedSink(t, oauthConfig("http://public.example/hook", "http://"+c.HostPort(trap.Port())+"/token"), policy)
			err := s.Write(context.Background(), orderEvent())
			require.Error(t, err)
			assert.ErrorIs(t, err, egress.ErrRefused)
			assert.True(t, connector.IsPermanent(err), "%v", err)
			assert.Contains(t, err.Error(), "oauth token endpoint")
			assert.NotContains(t, err.Error(), "sec/ret", "no secret in the error")
		})
	}
	assert.Zero(t, hits.Load(), "the target is not called without a token")
	assert.Zero(t, trap.Dials(), "connection attempts")
	assert.Zero(t, trap.Accepts(), "connections accepted")
}

// TestSSRFRedirects: a public target answering a redirect to a blocked address gets one request, and the
// blocked address none: redirects are not followed, and would be refused by the dialer if they were.
func TestSSRFRedirects(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	cases, names := ssrfTable(trap.Port())
	var hits atomic.Int32
	var location atomic.Value
	statuses := []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect}
	var status atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Location", location.Load().(string))
		w.WriteHeader(int(status.Load()))
	}))
	t.Cleanup(target.Close)
	// public.example resolves to a public address, which the connect step sends to the target.
	names["public.example"] = []netip.Addr{netip.MustParseAddr("8.8.8.8")}
	trap.Pass("8.8.8.8:80", target.Listener.Addr().String())
	s := newGuardedSink(t, map[string]string{"url": "http://public.example/hook", "timeout": "2s"},
		egress.Config{Lookup: egresstest.NewResolver(names).Lookup, Dial: trap.Dial})
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			location.Store(tc.url)
			status.Store(int32(statuses[i%len(statuses)]))
			before := hits.Load()
			err := s.Write(context.Background(), orderEvent())
			require.Error(t, err)
			assert.True(t, connector.IsPermanent(err), "%v", err)
			assert.Equal(t, before+1, hits.Load(), "one request to the target")
		})
	}
	assert.Zero(t, trap.Dials(), "connection attempts to blocked addresses")
	assert.Zero(t, trap.Accepts(), "connections accepted")
}

// The address checked is the address dialed: a resolver answering a public address and then a private one
// (DNS rebinding) cannot move a connection.
func TestSSRFRebinding(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close") // the next request needs a new connection, so a new lookup
	}))
	t.Cleanup(target.Close)
	var calls atomic.Int32
	var dialed []string
	var mu sync.Mutex
	lookup := func(context.Context, string) ([]netip.Addr, error) {
		if calls.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("8.8.8.8")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, address)
		mu.Unlock()
		var d net.Dialer
		if address == "8.8.8.8:80" {
			return d.DialContext(ctx, network, target.Listener.Addr().String())
		}
		return trap.Dial(ctx, network, address)
	}
	s := newGuardedSink(t, map[string]string{"url": "http://rebind.example/"}, egress.Config{Lookup: lookup, Dial: dial})
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	err := s.Write(context.Background(), orderEvent())
	assert.ErrorIs(t, err, egress.ErrRefused)
	mu.Lock()
	assert.Equal(t, []string{"8.8.8.8:80"}, dialed)
	mu.Unlock()
	assert.Zero(t, trap.Accepts())
}

// Public addresses, literal or resolved, pass the guard and reach the connect step.
func TestSSRFPublicPasses(t *testing.T) {
	t.Parallel()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(target.Close)
	names := map[string][]netip.Addr{"api.example": {netip.MustParseAddr("93.184.216.34")}}
	for _, u := range []string{"http://8.8.8.8/", "http://[2606:4700:4700::1111]/", "http://api.example/",
		"http://134744072/", "http://[64:ff9b::808:808]/", "http://[2002:808:808::1]/"} {
		var dialed atomic.Int32
		dial := func(ctx context.Context, network, address string) (net.Conn, error) {
			dialed.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, target.Listener.Addr().String())
		}
		s := newGuardedSink(t, map[string]string{"url": u}, egress.Config{Lookup: egresstest.NewResolver(names).Lookup, Dial: dial})
		assert.NoError(t, s.Write(context.Background(), orderEvent()), u)
		assert.Equal(t, int32(1), dialed.Load(), u)
	}
}

// Without a connect step of the test, the guard's own dialer refuses a server of the test on loopback, by
// address or by name, and an unresolvable name is a retryable error.
func TestSSRFDefaultDialer(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	names := map[string][]netip.Addr{"loop.example": {netip.MustParseAddr("127.0.0.1")}}
	policy := egress.Config{Lookup: egresstest.NewResolver(names).Lookup}
	for _, u := range []string{srv.URL, "http://localhost:" + port, "http://loop.example:" + port, "http://[::ffff:127.0.0.1]:" + port} {
		err := newGuardedSink(t, map[string]string{"url": u}, policy).Write(context.Background(), orderEvent())
		assert.ErrorIs(t, err, egress.ErrRefused, u)
	}
	assert.Zero(t, hits.Load(), "no request reached the server")
	err := newGuardedSink(t, map[string]string{"url": "http://nowhere.example/"}, policy).Write(context.Background(), orderEvent())
	require.Error(t, err)
	assert.False(t, errors.Is(err, egress.ErrRefused), "%v", err)
	assert.False(t, connector.IsPermanent(err), "%v", err)
}

// TestSSRFAllow: an exception for 127.0.0.1 lets a target and a token endpoint there through, and nothing else.
func TestSSRFAllow(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	ts := newTokenServer(t, "3600")
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	tests := []struct {
		name  string
		allow []string
		url   string
		ok    bool
	}{
		{"the address", []string{"127.0.0.1"}, srv.URL, true},
		{"the address and port", []string{"127.0.0.1:" + port}, srv.URL, true},
		{"the prefix", []string{"127.0.0.0/8"}, "http://127.0.0.1:" + port, true},
		{"localhost by name", []string{"localhost"}, "http://localhost:" + port, true},
		{"another port", []string{"127.0.0.1:1"}, srv.URL, false},
		{"another address", []string{"127.0.0.2"}, srv.URL, false},
		{"localhost is also ::1", []string{"127.0.0.1"}, "http://localhost:" + port, false},
		{"another name", []string{"localhost"}, "http://127.0.0.1:" + port, false},
	}
	for _, tt := range tests {
		before := hits.Load()
		err := newGuardedSink(t, map[string]string{"url": tt.url}, egress.Config{Allow: tt.allow}).
			Write(context.Background(), orderEvent())
		if tt.ok {
			require.NoError(t, err, tt.name)
			assert.Equal(t, before+1, hits.Load(), tt.name)
			continue
		}
		assert.ErrorIs(t, err, egress.ErrRefused, tt.name)
		assert.Equal(t, before, hits.Load(), tt.name)
	}
	require.NoError(t, newGuardedSink(t, oauthConfig(srv.URL, ts.URL), egress.Config{Allow: []string{"127.0.0.1"}}).
		Write(context.Background(), orderEvent()))
	assert.Equal(t, int32(1), ts.issued.Load(), "the allowed token endpoint was called")
}
