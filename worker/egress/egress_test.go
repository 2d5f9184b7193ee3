package egress_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/egress"
	"github.com/eventbridge-go/eventbridge/worker/egress/egresstest"
)

// A Guard is what nats.SetCustomDialer takes.
var _ nats.CustomDialer = (*egress.Guard)(nil)

func newGuard(t *testing.T, cfg egress.Config) *egress.Guard {
	t.Helper()
	g, err := egress.New(cfg)
	require.NoError(t, err)
	return g
}

// TestCorpusRefused: every blocked form is refused with a *RefusedError before any connection is attempted.
func TestCorpusRefused(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	cases, names := egresstest.Corpus()
	require.GreaterOrEqual(t, len(cases), 300)
	g := newGuard(t, egress.Config{Lookup: egresstest.NewResolver(names).Lookup, Dial: trap.Dial})
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			conn, err := g.DialContext(context.Background(), "tcp", tc.Address(trap.Port()))
			if conn != nil {
				_ = conn.Close()
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, egress.ErrRefused)
			var refused *egress.RefusedError
			require.ErrorAs(t, err, &refused)
			assert.False(t, egress.Public(refused.Addr), "%s: the address named is the non-public one", refused.Addr)
			assert.Contains(t, err.Error(), refused.Addr.String())
			assert.Contains(t, err.Error(), "--egress-allow")
			assert.Contains(t, err.Error(), "--allow-private-targets")
		})
	}
	assert.Zero(t, trap.Dials(), "connection attempts")
	assert.Zero(t, trap.Accepts(), "connections accepted")
}

// Without a connect step of the test, the guard's own dialer refuses loopback listeners of the machine: the
// listener of the test sees nothing, whatever the form of its address.
func TestDefaultDialerRefusesListeners(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	port := trap.Port()
	addrs := []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST.:" + port, "[::ffff:127.0.0.1]:" + port,
		"2130706433:" + port, "127.1:" + port, "0.0.0.0:" + port, "[::]:" + port}
	traps := []*egresstest.Trap{trap}
	if ln6, err := net.Listen("tcp", "[::1]:0"); err == nil { // an IPv6 listener, when the machine has ::1
		trap6 := egresstest.Serve(t, ln6)
		traps = append(traps, trap6)
		addrs = append(addrs, "[::1]:"+trap6.Port(), "localhost:"+trap6.Port(), "[::]:"+trap6.Port())
	}
	g := newGuard(t, egress.Config{Timeout: 2 * time.Second})
	for _, a := range addrs {
		conn, err := g.DialContext(context.Background(), "tcp", a)
		if conn != nil {
			_ = conn.Close()
		}
		assert.ErrorIs(t, err, egress.ErrRefused, a)
		conn, err = g.Dial("tcp", a)
		if conn != nil {
			_ = conn.Close()
		}
		assert.ErrorIs(t, err, egress.ErrRefused, a)
	}
	for _, tr := range traps {
		assert.Zero(t, tr.Accepts(), "connections accepted on %s", tr.Listener.Addr())
	}
}

// The default dialer connects only to the address checked: its Control refuses any other right before connect.
func TestDefaultDialerConnectsOnlyTheCheckedAddress(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	g := newGuard(t, egress.Config{Timeout: 2 * time.Second})
	want := netip.MustParseAddrPort("127.0.0.2:" + trap.Port())
	_, err := g.ConnectChecked(context.Background(), trap.Listener.Addr().String(), want)
	assert.ErrorIs(t, err, egress.ErrRefused)
	assert.Zero(t, trap.Accepts())

	conn, err := g.ConnectChecked(context.Background(), trap.Listener.Addr().String(),
		netip.MustParseAddrPort(trap.Listener.Addr().String()))
	require.NoError(t, err)
	_ = conn.Close()
	assert.Eventually(t, func() bool { return trap.Accepts() == 1 }, 5*time.Second, 10*time.Millisecond)
}

// TestAllow: an exception lets exactly what it names through, and nothing else.
func TestAllow(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	port := trap.Port()
	names := map[string][]netip.Addr{
		"broker.internal":  {netip.MustParseAddr("10.1.2.3")},
		"other.internal":   {netip.MustParseAddr("10.1.2.3")},
		"both.internal":    {netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("10.9.9.9")},
		"public.example":   {netip.MustParseAddr("8.8.8.8")},
		"metadata.example": {netip.MustParseAddr("169.254.169.254")},
	}
	tests := []struct {
		name    string
		allow   []string
		through []string // addresses (host:port) let through
		refused []string
	}{
		{"one address", []string{"127.0.0.1"},
			[]string{"127.0.0.1:" + port, "127.0.0.1:1883", "[::ffff:127.0.0.1]:" + port, "2130706433:" + port},
			[]string{"127.0.0.2:" + port, "[::1]:" + port, "localhost:" + port, "10.1.2.3:" + port, "169.254.169.254:80"}},
		{"one address and port", []string{"127.0.0.1:" + port},
			[]string{"127.0.0.1:" + port},
			[]string{"127.0.0.1:1883", "127.0.0.2:" + port}},
		{"IPv6 address and port", []string{"[::1]:" + port},
			[]string{"[::1]:" + port},
			[]string{"[::1]:1883", "127.0.0.1:" + port}},
		{"prefix", []string{"10.0.0.0/8", "fc00::/7"},
			[]string{"10.1.2.3:" + port, "10.255.255.254:1", "broker.internal:" + port, "both.internal:" + port, "[fd00::1]:" + port},
			[]string{"172.16.0.1:" + port, "127.0.0.1:" + port, "[fe80::1]:" + port, "192.168.1.1:1"}},
		{"metadata needs its own entry", []string{"169.254.0.0/16", "fc00::/7", "metadata.example"},
			[]string{"169.254.1.1:80", "[fd00::1]:80"},
			[]string{"169.254.169.254:80", "[fd00:ec2::254]:80", "metadata.example:80", "100.100.100.200:80"}},
		{"host", []string{"broker.internal"},
			[]string{"broker.internal:" + port, "BROKER.internal.:1883"},
			[]string{"other.internal:" + port, "10.1.2.3:" + port, "both.internal:" + port}},
		{"host and port", []string{"broker.internal:8883"},
			[]string{"broker.internal:8883"},
			[]string{"broker.internal:1883"}},
		{"localhost", []string{"localhost"},
			[]string{"localhost:" + port, "localhost.:" + port},
			[]string{"127.0.0.1:" + port, "[::1]:" + port, "api.localhost:" + port}},
		{"public addresses need no exception", nil,
			[]string{"8.8.8.8:53", "public.example:443"},
			[]string{"10.1.2.3:" + port}},
		{"metadata", []string{"169.254.169.254", "[fd00:ec2::254]:80"},
			[]string{"169.254.169.254:80", "[fd00:ec2::254]:80"},
			[]string{"169.254.169.253:80", "[fd00:ec2::254]:81"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var dialed []string
			g := newGuard(t, egress.Config{Allow: tt.allow, Lookup: egresstest.NewResolver(names).Lookup,
				Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
					mu.Lock()
					dialed = append(dialed, address)
					mu.Unlock()
					return trap.Dial(ctx, network, address)
				}})
			for _, a := range tt.through {
				mu.Lock()
				before := len(dialed)
				mu.Unlock()
				conn, err := g.DialContext(context.Background(), "tcp", a)
				require.NoError(t, err, a)
				_ = conn.Close()
				mu.Lock()
				assert.Equal(t, before+1, len(dialed), "%s: one connection, to a checked address", a)
				if len(dialed) > 0 {
					_, err := netip.ParseAddrPort(dialed[len(dialed)-1])
					assert.NoError(t, err, "%s: dialed by its literal address", a)
				}
				mu.Unlock()
			}
			for _, a := range tt.refused {
				mu.Lock()
				before := len(dialed)
				mu.Unlock()
				_, err := g.DialContext(context.Background(), "tcp", a)
				assert.ErrorIs(t, err, egress.ErrRefused, a)
				mu.Lock()
				assert.Equal(t, before, len(dialed), "%s: no connection attempted", a)
				mu.Unlock()
			}
		})
	}
}

// With the default dialer, an exception for 127.0.0.1 reaches a listener there, and 127.0.0.2 stays refused.
func TestAllowReachesListener(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	g := newGuard(t, egress.Config{Allow: []string{"127.0.0.1"}, Timeout: 2 * time.Second})
	conn, err := g.DialContext(context.Background(), "tcp", "127.0.0.1:"+trap.Port())
	require.NoError(t, err)
	_ = conn.Close()
	_, err = g.DialContext(context.Background(), "tcp", "127.0.0.2:"+trap.Port())
	assert.ErrorIs(t, err, egress.ErrRefused)
	assert.Eventually(t, func() bool { return trap.Accepts() == 1 }, 5*time.Second, 10*time.Millisecond)
}

// AllowPrivate lets everything through: the listener of the test is reached by any of its names.
func TestAllowPrivate(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	g := newGuard(t, egress.Config{AllowPrivate: true, Timeout: 2 * time.Second})
	for _, a := range []string{"127.0.0.1:" + trap.Port(), "localhost:" + trap.Port()} {
		conn, err := g.DialContext(context.Background(), "tcp", a)
		require.NoError(t, err, a)
		_ = conn.Close()
	}
	assert.Eventually(t, func() bool { return trap.Accepts() == 2 }, 5*time.Second, 10*time.Millisecond)
}

// The address checked is the address dialed, and a dial resolves once: a name that answers a public address and
// then a private one (DNS rebinding) cannot move a connection.
func TestRebinding(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	target := egresstest.NewTrap(t)
	trap.Pass("8.8.8.8:443", target.Listener.Addr().String())
	var calls int
	var mu sync.Mutex
	lookup := func(context.Context, string) ([]netip.Addr, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return []netip.Addr{netip.MustParseAddr("8.8.8.8")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	g := newGuard(t, egress.Config{Lookup: lookup, Dial: trap.Dial})
	conn, err := g.DialContext(context.Background(), "tcp", "rebind.example:443")
	require.NoError(t, err)
	_ = conn.Close()
	_, err = g.DialContext(context.Background(), "tcp", "rebind.example:443")
	assert.ErrorIs(t, err, egress.ErrRefused)
	mu.Lock()
	assert.Equal(t, 2, calls, "one lookup per dial")
	mu.Unlock()
	assert.Zero(t, trap.Dials())
	assert.Zero(t, trap.Accepts())
	assert.Eventually(t, func() bool { return target.Accepts() == 1 }, 5*time.Second, 10*time.Millisecond)
}

// A name that does not resolve is an ordinary error, not a refusal; a malformed address is refused.
func TestErrors(t *testing.T) {
	t.Parallel()
	g := newGuard(t, egress.Config{Lookup: egresstest.NewResolver(map[string][]netip.Addr{}).Lookup})
	_, err := g.DialContext(context.Background(), "tcp", "nowhere.example:80")
	require.Error(t, err)
	assert.NotErrorIs(t, err, egress.ErrRefused)
	for _, a := range []string{"127.0.0.1", "host", "[::1]", "127.0.0.1:http", "127.0.0.1:70000", ":80"} {
		_, err := g.DialContext(context.Background(), "tcp", a)
		assert.ErrorIs(t, err, egress.ErrRefused, a)
	}
}

func TestRefusedErrorMessage(t *testing.T) {
	t.Parallel()
	g := newGuard(t, egress.Config{Lookup: egresstest.NewResolver(map[string][]netip.Addr{
		"metadata.example": {netip.MustParseAddr("169.254.169.254")},
		"private.example":  {netip.MustParseAddr("10.9.8.7")},
	}).Lookup})
	tests := []struct {
		address string
		want    string
	}{
		{"metadata.example:80", "egress: refusing to connect to metadata.example:80: 169.254.169.254 is not public " +
			"(cloud metadata); allow it with --egress-allow 169.254.169.254, or every non-public address with " +
			"--allow-private-targets"},
		{"private.example:80", "egress: refusing to connect to private.example:80: 10.9.8.7 is not public " +
			"(private); allow it with --egress-allow 10.9.8.7 (or the host private.example), or every non-public " +
			"address with --allow-private-targets"},
		{"127.0.0.1:1883", "egress: refusing to connect to 127.0.0.1:1883: 127.0.0.1 is not public (loopback); " +
			"allow it with --egress-allow 127.0.0.1, or every non-public address with --allow-private-targets"},
		{"localhost:4222", "egress: refusing to connect to localhost:4222: 127.0.0.1 is not public (loopback); " +
			"allow it with --egress-allow 127.0.0.1 (or the host localhost), or every non-public address with --allow-private-targets"},
		{"[fe80::1%eth0]:80", "egress: refusing to connect to [fe80::1%eth0]:80: fe80::1%eth0 is not public " +
			"(link-local); allow it with --egress-allow fe80::1, or every non-public address with --allow-private-targets"},
		{"[64:ff9b::a00:1]:80", "64:ff9b::a00:1 is not public (embeds the private IPv4 address 10.0.0.1)"},
		{"10.1.2.3:80", "10.1.2.3 is not public (private)"},
	}
	for _, tt := range tests {
		_, err := g.DialContext(context.Background(), "tcp", tt.address)
		require.Error(t, err, tt.address)
		assert.Contains(t, err.Error(), tt.want, tt.address)
	}
}

func TestParseAllow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"", nil, ""},
		{" , ,", nil, ""},
		{"127.0.0.1", []string{"127.0.0.1"}, ""},
		{"10.0.0.0/8, fc00::/7,::1", []string{"10.0.0.0/8", "fc00::/7", "::1"}, ""},
		{"broker.internal,broker.internal:8883,[::1]:4222,127.0.0.1:1883,localhost,Host_1.example.",
			[]string{"broker.internal", "broker.internal:8883", "[::1]:4222", "127.0.0.1:1883", "localhost", "Host_1.example."}, ""},
		{"10.0.0.0/33", nil, `--egress-allow "10.0.0.0/33"`},
		{"127.0.0.1:0", nil, "port"},
		{"127.0.0.1:99999", nil, "port"},
		{"host:http", nil, "port"},
		{"fe80::1%eth0", nil, "zone"},
		{"2130706433", nil, "dotted decimal"},
		{"127.1", nil, "dotted decimal"},
		{"http://broker", nil, "not an IP address"},
		{"bro ker", nil, "not an IP address"},
		{"a..b", nil, "not an IP address"},
		{"::ffff:10.0.0.0/104", nil, "IPv4 form"},
		{"ok.example,bad one", nil, `"bad one"`},
	}
	for _, tt := range tests {
		got, err := egress.ParseAllow(tt.in)
		if tt.wantErr != "" {
			require.Error(t, err, tt.in)
			assert.Contains(t, err.Error(), tt.wantErr, tt.in)
			assert.Error(t, egress.Config{Allow: strings.Split(tt.in, ",")}.Validate(), tt.in)
			_, err = egress.New(egress.Config{Allow: strings.Split(tt.in, ",")})
			assert.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
		assert.NoError(t, egress.Config{Allow: got}.Validate(), tt.in)
	}
}

func TestPublic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ip     string
		public bool
	}{
		{"8.8.8.8", true},
		{"2606:4700:4700::1111", true},
		{"127.0.0.1", false},
		{"::1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"fd00:ec2::254", false},
		{"fe80::1", false},
		{"0.0.0.0", false},
		{"::", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"100.64.0.1", false},
		{"224.0.0.1", false},
		{"255.255.255.255", false},
		{"64:ff9b::a00:1", false},
		{"64:ff9b::7f00:1", false},
		{"64:ff9b::808:808", true},
		{"2002:c0a8:101::1", false},
		{"2002:808:808::1", true},
		{"::127.0.0.1", false},
		{"fe80::1%eth0", false},
		{"fd00::1", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.public, egress.Public(netip.MustParseAddr(tt.ip)), tt.ip)
	}
	for _, ip := range append(append([]string(nil), egresstest.BlockedV4...), egresstest.BlockedV6...) {
		assert.False(t, egress.Public(netip.MustParseAddr(ip)), ip)
	}
}

func TestKind(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"127.0.0.2": "loopback", "::1": "loopback", "::ffff:127.0.0.1": "loopback",
		"10.0.0.1": "private", "172.16.0.1": "private", "192.168.1.1": "private", "fd00::1": "private",
		"169.254.1.1": "link-local", "fe80::1%eth0": "link-local",
		"169.254.169.254": "cloud metadata", "fd00:ec2::254": "cloud metadata", "100.100.100.200": "cloud metadata",
		"224.0.0.1": "multicast", "0.0.0.0": "unspecified", "::": "unspecified",
		"100.64.0.1": "special-purpose", "2002:7f00:1::1": "embeds the loopback IPv4 address 127.0.0.1",
		"8.8.8.8": "public",
	}
	for ip, want := range tests {
		assert.Equal(t, want, egress.Kind(netip.MustParseAddr(ip)), ip)
	}
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
		got, ok := egress.ParseLegacyIPv4(tt.in)
		if tt.want == "" {
			assert.False(t, ok, tt.in)
			continue
		}
		assert.True(t, ok, tt.in)
		assert.Equal(t, tt.want, got.String(), tt.in)
	}
}

// Dial, which takes no context, is bounded by the guard's timeout.
func TestDialTimeout(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	g := newGuard(t, egress.Config{Timeout: 100 * time.Millisecond,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-block:
				return nil, errors.New("unblocked")
			}
		}})
	start := time.Now()
	_, err := g.Dial("tcp", "8.8.8.8:53")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)
}
