package http_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

// blockedV4 are IPv4 addresses in blocked ranges.
var blockedV4 = []string{
	// loopback 127/8
	"127.0.0.1", "127.0.0.2", "127.0.1.1", "127.1.2.3", "127.255.255.254",
	// private 10/8, 172.16/12, 192.168/16
	"10.0.0.1", "10.10.10.10", "10.255.255.254", "172.16.0.1", "172.20.1.1", "172.31.255.254",
	"192.168.0.1", "192.168.1.1", "192.168.255.254",
	// link-local 169.254/16 and cloud metadata
	"169.254.0.1", "169.254.169.254", "169.254.170.2", "169.254.255.254",
	// carrier-grade NAT 100.64/10 (100.100.100.200 is Alibaba Cloud's metadata)
	"100.64.0.1", "100.100.100.200", "100.127.255.254",
	// unspecified and "this network"
	"0.0.0.0", "0.1.2.3",
	// limited broadcast, reserved, multicast, other special purpose
	"255.255.255.255", "240.0.0.1", "224.0.0.1", "239.255.255.250", "192.0.0.1", "198.18.0.1",
}

// blockedV6 are IPv6 addresses in blocked ranges.
var blockedV6 = []string{
	"::1", "::", "0:0:0:0:0:0:0:1",
	"fc00::1", "fd00::1", "fd12:3456:789a::1", "fdff:ffff:ffff:ffff::1", // unique local fc00::/7
	"fe80::1", "fe80::abcd:1234", "febf:ffff::1", // link-local fe80::/10
	"fd00:ec2::254", // AWS metadata
	// IPv4-mapped
	"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:192.168.1.1", "::ffff:7f00:1",
	"::ffff:100.64.0.1", "0:0:0:0:0:ffff:172.16.0.1",
	// NAT64 64:ff9b::/96 of private IPv4 addresses
	"64:ff9b::7f00:1", "64:ff9b::127.0.0.1", "64:ff9b::a00:1", "64:ff9b::10.1.2.3", "64:ff9b::a9fe:a9fe",
	"64:ff9b::c0a8:101", "64:ff9b::ac10:1", "64:ff9b::6440:1", "64:ff9b:1::1",
	// 6to4 2002::/16 embedding private IPv4 addresses
	"2002:7f00:1::", "2002:7f00:1::1", "2002:a00:1::1", "2002:a9fe:a9fe::1", "2002:c0a8:101::1", "2002:ac10:1::1",
	"2002:6440:1::1",
	// IPv4-compatible (deprecated), multicast, site-local
	"::127.0.0.1", "::10.0.0.1", "ff02::1", "ff05::2", "fec0::1",
}

// legacyForms returns the forms inet_aton and the Go URL parser accept for an IPv4 address.
func legacyForms(s string) map[string]string {
	a := netip.MustParseAddr(s).As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	return map[string]string{
		"decimal":      strconv.FormatUint(uint64(n), 10),
		"hex":          fmt.Sprintf("0x%08x", n),
		"HEX":          fmt.Sprintf("0X%X", n),
		"octal":        fmt.Sprintf("0%o.0%o.0%o.0%o", a[0], a[1], a[2], a[3]),
		"hex-dotted":   fmt.Sprintf("0x%x.0x%x.0x%x.0x%x", a[0], a[1], a[2], a[3]),
		"short-3":      fmt.Sprintf("%d.%d.%d", a[0], a[1], uint32(a[2])<<8|uint32(a[3])),
		"short-2":      fmt.Sprintf("%d.%d", a[0], uint32(a[1])<<16|uint32(a[2])<<8|uint32(a[3])),
		"trailing-dot": s + ".",
	}
}

func hostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + strings.ReplaceAll(host, "%", "%25") + "]:" + port
	}
	return host + ":" + port
}

type ssrfCase struct {
	name string
	url  string
}

// ssrfTable builds the table: every blocked address as a literal (http and https, with and without port), the
// encoded forms of the IPv4 ones, names of localhost, and a DNS name resolving to each blocked address. names
// is filled with what the test resolver answers.
func ssrfTable(port string, names map[string][]netip.Addr) []ssrfCase {
	var cases []ssrfCase
	seen := map[string]bool{}
	add := func(name, u string) {
		if seen[u] {
			return
		}
		seen[u] = true
		cases = append(cases, ssrfCase{name: name, url: u})
	}
	all := append(append([]string(nil), blockedV4...), blockedV6...)
	for i, ip := range all {
		hp := hostPort(ip, port)
		add("literal/"+ip, "http://"+hp+"/hook")
		add("literal-https/"+ip, "https://"+hp+"/hook")
		add("literal-default-port/"+ip, "http://"+strings.TrimSuffix(hp, ":"+port)+"/")
		name := fmt.Sprintf("rebind-%d.attacker.test", i)
		names[name] = []netip.Addr{netip.MustParseAddr(ip)}
		add("dns/"+name+"->"+ip, "http://"+name+":"+port+"/")
	}
	for _, ip := range blockedV4 {
		for form, h := range legacyForms(ip) {
			add("encoded-"+form+"/"+ip, "http://"+h+":"+port+"/")
		}
	}
	// IPv6 with a zone, upper case, and names of localhost (RFC 6761), which never reach DNS.
	for _, h := range []string{
		"[fe80::1%25eth0]", "[fe80::1%25lo]", "[FE80::1]", "[FD00:EC2::254]", "[::FFFF:127.0.0.1]",
		"localhost", "localhost.", "LOCALHOST", "LocalHost.", "api.localhost", "a.b.localhost.", "127.0.0.1.",
		"127.1", "127.0.1", "0x7f.1", "0177.1", "0", "0x0", "00", "10.1", "192.168.1", "0xa9fea9fe", "2852039166",
	} {
		add("special/"+h, "http://"+h+":"+port+"/")
	}
	// Names resolving to several addresses, one of them blocked, and a name with a trailing dot.
	names["mixed.attacker.test"] = []netip.Addr{netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("10.0.0.1")}
	add("dns/mixed", "http://mixed.attacker.test:"+port+"/")
	names["mixed6.attacker.test"] = []netip.Addr{netip.MustParseAddr("2606:4700::1111"), netip.MustParseAddr("::1")}
	add("dns/mixed6", "http://mixed6.attacker.test:"+port+"/")
	names["metadata.attacker.test"] = []netip.Addr{netip.MustParseAddr("169.254.169.254")}
	add("dns/trailing-dot", "http://metadata.attacker.test.:"+port+"/")
	add("dns/upper-case", "http://METADATA.Attacker.TEST:"+port+"/")
	return cases
}

// countingListener counts the connections it accepts.
func countingListener(t *testing.T) (net.Listener, *atomic.Int32) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return ln, &n
}

// ssrfHooks returns the resolver of names and a connect step that counts every connection attempt and sends it
// to ln (so an attempt that should not have happened is also an accept there); addresses in pass go to their
// own target instead and are not counted.
func ssrfHooks(ln net.Listener, names map[string][]netip.Addr, pass map[string]string) (
	func(context.Context, string) ([]netip.Addr, error), func(context.Context, string, string) (net.Conn, error), *atomic.Int32, *atomic.Int32,
) {
	var dials, lookups atomic.Int32
	var mu sync.Mutex
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		lookups.Add(1)
		mu.Lock()
		defer mu.Unlock()
		if a, ok := names[host]; ok {
			return a, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		var d net.Dialer
		if to, ok := pass[address]; ok {
			return d.DialContext(ctx, network, to)
		}
		dials.Add(1)
		return d.DialContext(ctx, "tcp", ln.Addr().String())
	}
	return lookup, dial, &dials, &lookups
}

func newHookedSink(t *testing.T, cfg map[string]string,
	lookup func(context.Context, string) ([]netip.Addr, error), dial func(context.Context, string, string) (net.Conn, error),
) connector.Sink {
	t.Helper()
	spec := httpsink.Plugin().Spec
	require.Empty(t, spec.Validate(cfg))
	s, err := httpsink.NewWithHooks(spec.Values(cfg), connector.Env{}, lookup, dial, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestSSRFTable: every URL of the table is refused by the dialer, before any connection is attempted.
func TestSSRFTable(t *testing.T) {
	t.Parallel()
	ln, accepts := countingListener(t)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	names := map[string][]netip.Addr{}
	cases := ssrfTable(port, names)
	require.GreaterOrEqual(t, len(cases), 300)
	lookup, dial, dials, _ := ssrfHooks(ln, names, nil)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newHookedSink(t, map[string]string{"url": tc.url, "timeout": "2s"}, lookup, dial)
			before := dials.Load()
			err := s.Write(context.Background(), orderEvent())
			require.Error(t, err)
			assert.ErrorIs(t, err, httpsink.ErrPrivateTarget, "%s: %v", tc.url, err)
			assert.True(t, connector.IsPermanent(err), "%s: %v", tc.url, err)
			assert.Equal(t, before, dials.Load(), "%s: no connection attempted", tc.url)
		})
	}
	assert.Zero(t, dials.Load(), "connection attempts")
	assert.Zero(t, accepts.Load(), "connections accepted")
}

// TestSSRFRedirects: a public target answering a redirect to a blocked address gets one request, and the
// blocked address none: redirects are not followed, and would be refused by the dialer if they were.
func TestSSRFRedirects(t *testing.T) {
	t.Parallel()
	ln, accepts := countingListener(t)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	names := map[string][]netip.Addr{}
	cases := ssrfTable(port, names)
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
	lookup, dial, dials, _ := ssrfHooks(ln, names, map[string]string{"8.8.8.8:80": target.Listener.Addr().String()})
	s := newHookedSink(t, map[string]string{"url": "http://public.example/hook", "timeout": "2s"}, lookup, dial)
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
	assert.Zero(t, dials.Load(), "connection attempts to blocked addresses")
	assert.Zero(t, accepts.Load(), "connections accepted")
}

// The address checked is the address dialed: a resolver answering a public address and then a private one
// (DNS rebinding) cannot move a connection.
func TestSSRFRebinding(t *testing.T) {
	t.Parallel()
	ln, accepts := countingListener(t)
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
		return d.DialContext(ctx, network, ln.Addr().String())
	}
	s := newHookedSink(t, map[string]string{"url": "http://rebind.example/"}, lookup, dial)
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	err := s.Write(context.Background(), orderEvent())
	assert.ErrorIs(t, err, httpsink.ErrPrivateTarget)
	mu.Lock()
	assert.Equal(t, []string{"8.8.8.8:80"}, dialed)
	mu.Unlock()
	assert.Zero(t, accepts.Load())
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
		lookup, _, _, _ := ssrfHooks(nil, names, nil)
		dial := func(ctx context.Context, network, address string) (net.Conn, error) {
			dialed.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, target.Listener.Addr().String())
		}
		s := newHookedSink(t, map[string]string{"url": u}, lookup, dial)
		assert.NoError(t, s.Write(context.Background(), orderEvent()), u)
		assert.Equal(t, int32(1), dialed.Load(), u)
	}
}

// Without hooks, the real dialer refuses too (its Control), and an unresolvable name is a retryable error.
func TestSSRFDefaultDialer(t *testing.T) {
	t.Parallel()
	names := map[string][]netip.Addr{"loop.example": {netip.MustParseAddr("127.0.0.1")}}
	lookup, _, _, _ := ssrfHooks(nil, names, nil)
	err := newHookedSink(t, map[string]string{"url": "http://loop.example/"}, lookup, nil).Write(context.Background(), orderEvent())
	assert.ErrorIs(t, err, httpsink.ErrPrivateTarget)
	err = newHookedSink(t, map[string]string{"url": "http://nowhere.example/"}, lookup, nil).Write(context.Background(), orderEvent())
	require.Error(t, err)
	assert.False(t, errors.Is(err, httpsink.ErrPrivateTarget), "%v", err)
	assert.False(t, connector.IsPermanent(err), "%v", err)
}

func TestParseLegacyIPv4(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // "": not an IPv4 form
	}{
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"10.65535", "10.0.255.255"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"4294967295", "255.255.255.255"},
		{"4294967296", ""},
		{"256.1", ""},
		{"1.2.3.256", ""},
		{"1.2.3.4.5", ""},
		{"08.0.0.1", ""},
		{"example.com", ""},
		{"1..2", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, ok := httpsink.ParseLegacyIPv4(tt.in)
		if tt.want == "" {
			assert.False(t, ok, tt.in)
			continue
		}
		assert.True(t, ok, tt.in)
		assert.Equal(t, tt.want, got.String(), tt.in)
	}
}
