// Package egress is the one guard of the connections plugins open to systems a tenant names: HTTP targets, API
// destinations and OAuth token endpoints, MQTT brokers, another NATS. A tenant must not reach, through the worker,
// what only the worker's host can reach: its loopback listeners, the private network, link-local addresses and the
// cloud metadata service.
//
// A Guard resolves the host of every connection itself, checks every address the name stands for, and connects
// only to an address it checked, by its literal form: a DNS answer that changes between the check and the connect
// (rebinding) cannot move the connection, and nothing re-resolves after the check. Each connection and each
// reconnection goes through the check. The only exceptions are the operator's: Config.AllowPrivate
// (--allow-private-targets) lets everything through, Config.Allow (--egress-allow) lists the addresses, prefixes
// and hosts let through although not public.
//
// What the client libraries take:
//
//	http.Transport{DialContext: g.DialContext, Proxy: nil}     // net/http, the OAuth token client
//	nats.SetCustomDialer(g), nats.SkipHostLookup()             // nats.go: the guard resolves, not nats.go
//	paho.ClientConfig{Conn: conn} with conn from g.DialContext // paho.golang (MQTT 5)
//	mqtt3 ClientOptions.SetCustomOpenConnectionFn(...)         // paho.mqtt.golang, built on g.DialContext
//	websocket.Dialer{NetDialContext: g.DialContext, Proxy: nil}
//
// No proxy may sit between a client and the guard: a proxy would hide the target's address from the check.
package egress

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

// DefaultTimeout bounds one connection attempt when Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Flags an operator allows addresses with; errors name them.
const (
	FlagAllowPrivate = "--allow-private-targets"
	FlagAllow        = "--egress-allow"
)

// ErrRefused is matched (errors.Is) by every refusal of the guard: a connection to an address that is neither
// public nor allowed, or to an address that is not host:port.
var ErrRefused = errors.New("egress: refused a connection to a non-public address")

// RefusedError is a connection the guard refused. Its message names the host, the address refused and how to
// allow it; it holds nothing but the host and port of the connection (never a URL, credentials or a path).
type RefusedError struct {
	// Host is the host the connection named (a name or a literal address), Port its port.
	Host, Port string
	// Addr is the address that is not public (one of the addresses Host stands for).
	Addr netip.Addr
	// Kind says what Addr is (see Kind): "loopback", "private", "link-local", ...
	Kind string
}

func (e *RefusedError) Error() string {
	target := net.JoinHostPort(e.Host, e.Port)
	allow := e.Addr.WithZone("").String()
	// A host name is an exception too, but never for a metadata address, which only its own address allows.
	if h := strings.TrimSuffix(e.Host, "."); h != allow && !isLiteral(h) && !isMetadata(e.Addr) {
		allow += " (or the host " + h + ")"
	}
	return fmt.Sprintf("egress: refusing to connect to %s: %s is not public (%s); allow it with %s %s, or every "+
		"non-public address with %s", target, e.Addr, e.Kind, FlagAllow, allow, FlagAllowPrivate)
}

// Is makes a RefusedError match ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Config says what a Guard lets through. The zero value is the safe one: public addresses only.
type Config struct {
	// AllowPrivate lets every connection through unchecked (--allow-private-targets), for development and tests.
	AllowPrivate bool
	// Allow lists what is let through although not public (--egress-allow): IP addresses (10.1.2.3, ::1) and CIDR
	// prefixes (10.0.0.0/8, fc00::/7), which allow those addresses whatever name led to them, and host names
	// (broker.internal, localhost), which allow whatever addresses that name resolves to, when a connection names
	// it. An address or host may carry a port (10.1.2.3:1883, [::1]:4222, broker.internal:8883): only that port is
	// then allowed. A cloud metadata address (169.254.169.254, ...) is allowed only by an entry that is exactly
	// that address. Validate says which entries are not valid.
	Allow []string
	// Timeout bounds one connection attempt to one address (DialContext tries the addresses of a name in turn)
	// and the whole of Dial, which takes no context; 0 is DefaultTimeout.
	Timeout time.Duration
	// Lookup resolves a host name to its addresses; nil is the system's resolver. Tests answer names with it.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial opens a connection to an address the guard checked, always a literal ip:port; nil is a net.Dialer
	// that refuses, right before connect(2), any address but that one. Tests send connections to a listener of
	// theirs with it, so that a connection the guard should not have opened is seen.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Validate reports the entries of Allow that are not an address, a prefix or a host (each optionally with a port).
func (c Config) Validate() error {
	_, err := parseRules(c.Allow)
	return err
}

// ParseAllow splits a comma-separated list (the value of --egress-allow, EB_EGRESS_ALLOW) into Allow entries and
// checks them; an empty list is none.
func ParseAllow(list string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if _, err := parseRules(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Guard opens connections to public and allowed addresses only. It is safe for concurrent use, holds no
// connection and needs no closing.
type Guard struct {
	open    bool // Config.AllowPrivate
	rules   []rule
	timeout time.Duration
	lookup  func(ctx context.Context, host string) ([]netip.Addr, error)
	dial    func(ctx context.Context, network, address string) (net.Conn, error)
}

// New returns the guard of cfg; the error is Validate's.
func New(cfg Config) (*Guard, error) {
	rules, err := parseRules(cfg.Allow)
	if err != nil {
		return nil, err
	}
	g := &Guard{open: cfg.AllowPrivate, rules: rules, timeout: cfg.Timeout, lookup: cfg.Lookup, dial: cfg.Dial}
	if g.timeout <= 0 {
		g.timeout = DefaultTimeout
	}
	if g.lookup == nil {
		g.lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	return g, nil
}

// DialContext connects to address (host:port) like (*net.Dialer).DialContext: it resolves the host, refuses when
// any of its addresses is neither public nor allowed (a *RefusedError, matching ErrRefused, before any connection
// is attempted), then connects to the checked addresses in turn until one answers. A name that does not resolve
// is an ordinary (retryable) error.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if g.open {
		return g.connect(ctx, network, address, nil)
	}
	targets, err := g.check(ctx, address)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ap := range targets {
		conn, err := g.connect(ctx, network, ap.String(), &ap)
		if err == nil {
			return conn, nil
		}
		if errors.Is(err, ErrRefused) {
			return nil, err
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// Dial is DialContext bounded by the guard's timeout; it makes a Guard a nats.CustomDialer.
func (g *Guard) Dial(network, address string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	return g.DialContext(ctx, network, address)
}

// check returns the addresses to connect to for address (host:port), each of them public or allowed.
func (g *Guard) check(ctx context.Context, address string) ([]netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not host:port", ErrRefused, address)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("%w: %q has no numeric port", ErrRefused, address)
	}
	port = strconv.FormatUint(p, 10) // as Allow rules spell it
	ips, name, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("egress: %s has no address", host)
	}
	out := make([]netip.AddrPort, 0, len(ips))
	for _, ip := range ips {
		if !Public(ip) && !g.allowed(name, ip, port) {
			return nil, &RefusedError{Host: host, Port: port, Addr: ip, Kind: Kind(ip)}
		}
		out = append(out, netip.AddrPortFrom(ip, uint16(p)))
	}
	return out, nil
}

// resolve returns the addresses host stands for and the host's name as allow rules match it ("" for a literal
// address). A literal address (with a trailing dot or not) and the legacy IPv4 forms (2130706433, 0x7f000001,
// 0177.0.0.1, 127.1) are the address they denote, whatever a resolver would make of them; localhost and its
// subdomains are the loopback addresses without asking DNS (RFC 6761).
func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, string, error) {
	h := strings.TrimSuffix(host, ".")
	if ip, err := netip.ParseAddr(h); err == nil {
		return []netip.Addr{ip}, "", nil
	}
	h = strings.ToLower(h)
	if ip, ok := parseLegacyIPv4(h); ok {
		return []netip.Addr{ip}, "", nil
	}
	if h == "" {
		return nil, "", fmt.Errorf("%w: empty host", ErrRefused)
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}, h, nil
	}
	ips, err := g.lookup(ctx, h)
	if err != nil {
		return nil, "", fmt.Errorf("egress: resolving %s: %w", host, err)
	}
	return ips, h, nil
}

// connect opens the connection to address; want, when set, is the checked address address spells, and the
// default dialer refuses to connect anywhere else.
func (g *Guard) connect(ctx context.Context, network, address string, want *netip.AddrPort) (net.Conn, error) {
	if g.dial != nil {
		return g.dial(ctx, network, address)
	}
	d := &net.Dialer{Timeout: g.timeout, KeepAlive: 30 * time.Second}
	if want != nil {
		w := netip.AddrPortFrom(want.Addr().Unmap().WithZone(""), want.Port())
		// Control runs on the address actually connected to, right before connect(2).
		d.Control = func(_, got string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(got)
			if err != nil || netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port()) != w {
				return fmt.Errorf("%w: connecting to %s, not the address checked (%s)", ErrRefused, got, w)
			}
			return nil
		}
	}
	return d.DialContext(ctx, network, address)
}

// allowed reports whether an Allow rule lets ip through for a connection to name (empty for a literal address)
// on port. A cloud metadata address is let through only by a rule naming exactly that address: a prefix or a
// host name allowed for a private network must not hand out the host's cloud credentials.
func (g *Guard) allowed(name string, ip netip.Addr, port string) bool {
	exact := isMetadata(ip)
	for _, r := range g.rules {
		if exact && (r.host != "" || r.prefix.Bits() != r.prefix.Addr().BitLen()) {
			continue
		}
		if r.permits(name, ip, port) {
			return true
		}
	}
	return false
}

// rule is one Allow entry: a prefix (an address is a full-length prefix) or a host name, and a port or any.
type rule struct {
	prefix netip.Prefix
	host   string
	port   string
}

func (r rule) permits(name string, ip netip.Addr, port string) bool {
	if r.port != "" && r.port != port {
		return false
	}
	if r.host != "" {
		return name == r.host
	}
	return r.prefix.Contains(ip.Unmap().WithZone(""))
}

func parseRules(entries []string) ([]rule, error) {
	var rules []rule
	var errs []error
	for _, e := range entries {
		r, err := parseRule(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", FlagAllow, e, err))
			continue
		}
		rules = append(rules, r)
	}
	return rules, errors.Join(errs...)
}

func parseRule(s string) (rule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return rule{}, errors.New("is empty")
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		if p.Addr().Is4In6() {
			return rule{}, errors.New("write an IPv4 prefix in IPv4 form")
		}
		return rule{prefix: p.Masked()}, nil
	}
	const notValid = "is not an IP address, a CIDR prefix or a host name, with an optional :port"
	if strings.ContainsAny(s, "/@?# ") {
		return rule{}, errors.New(notValid)
	}
	host, port := s, ""
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return rule{}, errors.New("the port must be a number from 1 to 65535")
		}
		host, port = h, strconv.Itoa(n)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return rule{}, errors.New("an address must not have a zone")
		}
		ip = ip.Unmap()
		return rule{prefix: netip.PrefixFrom(ip, ip.BitLen()), port: port}, nil
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if _, ok := parseLegacyIPv4(host); ok {
		return rule{}, errors.New("write an IPv4 address in dotted decimal form (10.1.2.3)")
	}
	if !validHost(host) {
		return rule{}, errors.New(notValid)
	}
	return rule{host: host, port: port}, nil
}

// validHost accepts DNS names: labels of letters, digits, '-' and '_', separated by dots.
func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

func isLiteral(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	_, ok := parseLegacyIPv4(strings.ToLower(h))
	return ok
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
