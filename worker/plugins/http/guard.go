package http

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lookupFunc resolves a host name to its addresses, like (*net.Resolver).LookupNetIP(ctx, "ip", host).
type lookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

// dialFunc opens a connection to a literal address (ip:port), like (*net.Dialer).DialContext.
type dialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// guard is the dialer of a sink that may not reach non-public addresses. It resolves the host itself (literal
// addresses, the legacy IPv4 forms inet_aton accepts, names through lookup), refuses when any address is not
// public, and only then dials the address by its literal form, with a Control that checks again right before
// connect(2). Every request goes through it, so neither a redirect (not followed anyway) nor a DNS answer that
// changes between check and use (rebinding) can reach a private address: the address checked is the one dialed.
type guard struct {
	lookup lookupFunc
	dial   dialFunc
}

func newGuard(timeout time.Duration, lookup lookupFunc, dial dialFunc) *guard {
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if dial == nil {
		d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: refusePrivate}
		dial = d.DialContext
	}
	return &guard{lookup: lookup, dial: dial}
}

// DialContext resolves, checks and dials address (host:port).
func (g *guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrPrivateTarget, address)
	}
	ips, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("http: %s has no address", host)
	}
	for _, ip := range ips {
		if !Public(ip) {
			return nil, fmt.Errorf("%w: %s is %s", ErrPrivateTarget, host, ip)
		}
	}
	var errs []error
	for _, ip := range ips {
		conn, err := g.dial(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		if errors.Is(err, ErrPrivateTarget) {
			return nil, err
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// resolve returns the addresses host stands for. A literal address (with a trailing dot or not) and the legacy
// IPv4 forms (2130706433, 0x7f000001, 0177.0.0.1, 127.1) are read as the address they denote, whatever a
// resolver would make of them; localhost and its subdomains (RFC 6761) are refused without asking DNS.
func (g *guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if ip, err := netip.ParseAddr(h); err == nil {
		return []netip.Addr{ip}, nil
	}
	if ip, ok := parseLegacyIPv4(h); ok {
		return []netip.Addr{ip}, nil
	}
	if h == "" || h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return nil, fmt.Errorf("%w: %s", ErrPrivateTarget, host)
	}
	return g.lookup(ctx, h)
}

// parseLegacyIPv4 reads the IPv4 forms of inet_aton(3): one to four parts separated by dots, each decimal, octal
// (leading 0) or hexadecimal (leading 0x), the last part filling the remaining bytes.
func parseLegacyIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base, digits := 10, p
		switch {
		case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
			base, digits = 16, p[2:]
			if digits == "" {
				digits = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		n, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = n
	}
	last := len(vals) - 1
	var v uint64
	for i := range last {
		if vals[i] > 0xff {
			return netip.Addr{}, false
		}
		v |= vals[i] << (24 - 8*i)
	}
	if vals[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	v |= vals[last]
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// refusePrivate is the dialer's Control: it runs on the address actually dialed, right before connect.
func refusePrivate(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrPrivateTarget, address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrPrivateTarget, address)
	}
	if !Public(ip) {
		return fmt.Errorf("%w: %s", ErrPrivateTarget, ip)
	}
	return nil
}

var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),         // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),     // shared address space (carrier-grade NAT)
	netip.MustParsePrefix("192.0.0.0/24"),      // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),      // documentation
	netip.MustParsePrefix("198.18.0.0/15"),     // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"),   // documentation
	netip.MustParsePrefix("203.0.113.0/24"),    // documentation
	netip.MustParsePrefix("240.0.0.0/4"),       // reserved, and the limited broadcast 255.255.255.255
	netip.MustParsePrefix("169.254.0.0/16"),    // link-local, cloud metadata 169.254.169.254
	netip.MustParsePrefix("::/96"),             // unspecified, loopback and the deprecated IPv4-compatible addresses
	netip.MustParsePrefix("100::/64"),          // discard-only
	netip.MustParsePrefix("2001:db8::/32"),     // documentation
	netip.MustParsePrefix("fd00:ec2::254/128"), // AWS metadata over IPv6 (also in fc00::/7)
	netip.MustParsePrefix("64:ff9b:1::/48"),    // local-use NAT64
	netip.MustParsePrefix("fec0::/10"),         // deprecated site-local
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // well-known NAT64 prefix: the IPv4 address is the last 4 bytes
	sixToFour = netip.MustParsePrefix("2002::/16")    // 6to4: the IPv4 address is bytes 2 to 5
)

// Public reports whether ip is an address a sink may reach without --allow-private-targets: not loopback,
// private, link-local, multicast, unspecified, cloud metadata or another special-purpose local range, nor an
// IPv6 address embedding such an IPv4 address (mapped, NAT64, 6to4).
func Public(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip):
			return Public(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(ip):
			return Public(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	return true
}
