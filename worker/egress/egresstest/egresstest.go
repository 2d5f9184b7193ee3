// Package egresstest holds what the tests of every protocol's egress guard share: the corpus of forms of
// non-public addresses an attacker may write (literal, encoded, names of localhost, DNS names resolving to them),
// a resolver answering those names, and a trap: a listener of the test that counts what reaches it, with a connect
// step that sends every connection attempt there.
//
//	cases, names := egresstest.Corpus()
//	trap := egresstest.NewTrap(t)
//	cfg := egress.Config{Lookup: egresstest.NewResolver(names).Lookup, Dial: trap.Dial}
//	for _, c := range cases { ... connect to "scheme://"+c.HostPort(trap.Port()) ... }
//	assert.Zero(t, trap.Dials()); assert.Zero(t, trap.Accepts())
package egresstest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// BlockedV4 are IPv4 addresses in blocked ranges.
var BlockedV4 = []string{
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

// BlockedV6 are IPv6 addresses in blocked ranges.
var BlockedV6 = []string{
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

// LegacyForms returns the forms inet_aton and URL parsers accept for an IPv4 address, by name.
func LegacyForms(s string) map[string]string {
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

// Case is one blocked form: Host as written in a URL (an IPv6 address in brackets, its zone escaped as %25).
type Case struct {
	Name string
	Host string
}

// HostPort is the case's host with port, as in a URL: tcp://<HostPort>.
func (c Case) HostPort(port string) string { return c.Host + ":" + port }

// Address is the case's host with port as a dialer takes it (the zone of an IPv6 address unescaped).
func (c Case) Address(port string) string {
	h, err := url.PathUnescape(c.Host)
	if err != nil {
		h = c.Host
	}
	return h + ":" + port
}

// URLHost returns ip as the host of a URL: IPv6 in brackets with its zone escaped.
func URLHost(ip string) string {
	if strings.Contains(ip, ":") {
		return "[" + strings.ReplaceAll(ip, "%", "%25") + "]"
	}
	return ip
}

// Corpus returns the blocked forms: every blocked address as a literal, the encoded forms of the IPv4 ones, names
// of localhost, IPv6 with zones and in upper case, and a DNS name resolving to each blocked address (names holds
// what a resolver of the test must answer for them), names resolving to a public and a blocked address, with a
// trailing dot and in upper case.
func Corpus() (cases []Case, names map[string][]netip.Addr) {
	names = map[string][]netip.Addr{}
	seen := map[string]bool{}
	add := func(name, host string) {
		if seen[host] {
			return
		}
		seen[host] = true
		cases = append(cases, Case{Name: name, Host: host})
	}
	all := append(append([]string(nil), BlockedV4...), BlockedV6...)
	for i, ip := range all {
		add("literal/"+ip, URLHost(ip))
		name := fmt.Sprintf("rebind-%d.attacker.test", i)
		names[name] = []netip.Addr{netip.MustParseAddr(ip)}
		add("dns/"+name+"->"+ip, name)
	}
	for _, ip := range BlockedV4 {
		for form, h := range LegacyForms(ip) {
			add("encoded-"+form+"/"+ip, h)
		}
	}
	// IPv6 with a zone, upper case, and names of localhost (RFC 6761), which never reach DNS.
	for _, h := range []string{
		"[fe80::1%25eth0]", "[fe80::1%25lo]", "[FE80::1]", "[FD00:EC2::254]", "[::FFFF:127.0.0.1]",
		"localhost", "localhost.", "LOCALHOST", "LocalHost.", "api.localhost", "a.b.localhost.", "127.0.0.1.",
		"127.1", "127.0.1", "0x7f.1", "0177.1", "0", "0x0", "00", "10.1", "192.168.1", "0xa9fea9fe", "2852039166",
	} {
		add("special/"+h, h)
	}
	names["mixed.attacker.test"] = []netip.Addr{netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("10.0.0.1")}
	add("dns/mixed", "mixed.attacker.test")
	names["mixed6.attacker.test"] = []netip.Addr{netip.MustParseAddr("2606:4700::1111"), netip.MustParseAddr("::1")}
	add("dns/mixed6", "mixed6.attacker.test")
	names["metadata.attacker.test"] = []netip.Addr{netip.MustParseAddr("169.254.169.254")}
	add("dns/trailing-dot", "metadata.attacker.test.")
	add("dns/upper-case", "METADATA.Attacker.TEST")
	return cases, names
}

// Resolver answers the names it holds and no other (a not-found error), counting the lookups. Safe for
// concurrent use.
type Resolver struct {
	mu      sync.Mutex
	names   map[string][]netip.Addr
	lookups atomic.Int32
}

// NewResolver returns a resolver of names (host names in lower case, without a trailing dot).
func NewResolver(names map[string][]netip.Addr) *Resolver {
	return &Resolver{names: names}
}

// Set makes host resolve to addrs from now on.
func (r *Resolver) Set(host string, addrs ...netip.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names[host] = addrs
}

// Lookup is an egress.Config.Lookup.
func (r *Resolver) Lookup(_ context.Context, host string) ([]netip.Addr, error) {
	r.lookups.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.names[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// Lookups counts the calls of Lookup.
func (r *Resolver) Lookups() int32 { return r.lookups.Load() }

// Trap is a loopback listener of the test that counts the connections it accepts (and closes them), and a connect
// step (egress.Config.Dial) that counts every connection attempt and sends it to the listener, whatever address
// it was for: a connection the guard should not have opened is then seen. Addresses in Pass go to their own
// destination instead, uncounted (a public address standing for a server of the test).
type Trap struct {
	Listener net.Listener

	mu      sync.Mutex
	pass    map[string]string
	accepts atomic.Int32
	dials   atomic.Int32
}

// NewTrap starts a trap on a free port of 127.0.0.1 that stops when the test ends.
func NewTrap(t testing.TB) *Trap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return Serve(t, ln)
}

// Serve makes a trap of ln (which it closes when the test ends).
func Serve(t testing.TB, ln net.Listener) *Trap {
	tr := &Trap{Listener: ln, pass: map[string]string{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tr.accepts.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return tr
}

// Port is the listener's port.
func (tr *Trap) Port() string {
	_, port, _ := net.SplitHostPort(tr.Listener.Addr().String())
	return port
}

// Pass sends connections to address (ip:port, as the guard dials it) to to, uncounted.
func (tr *Trap) Pass(address, to string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.pass[address] = to
}

// Dial is an egress.Config.Dial.
func (tr *Trap) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	tr.mu.Lock()
	to, ok := tr.pass[address]
	tr.mu.Unlock()
	if ok {
		return d.DialContext(ctx, network, to)
	}
	tr.dials.Add(1)
	return d.DialContext(ctx, "tcp", tr.Listener.Addr().String())
}

// Dials counts the connection attempts Dial sent to the listener.
func (tr *Trap) Dials() int32 { return tr.dials.Load() }

// Accepts counts the connections the listener accepted.
func (tr *Trap) Accepts() int32 { return tr.accepts.Load() }
