package egress

import "net/netip"

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
	metadata  = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, ...
		netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
		netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	}
)

// Public reports whether ip is an address a plugin may reach without an exception: not loopback, private,
// link-local, multicast, unspecified, cloud metadata or another special-purpose local range, nor an IPv6 address
// embedding such an IPv4 address (mapped, NAT64, 6to4).
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
		if v4, ok := embeddedIPv4(ip); ok {
			return Public(v4)
		}
	}
	return true
}

// Kind names what a non-public address is, for messages: "loopback", "private", "link-local",
// "cloud metadata", "multicast", "unspecified", "special-purpose", or "embeds <kind> IPv4 address" for NAT64 and
// 6to4 addresses; "public" for a public address.
func Kind(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("")
	switch {
	case isMetadata(ip):
		return "cloud metadata"
	case Public(ip):
		return "public"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast():
		return "multicast"
	case ip.IsUnspecified():
		return "unspecified"
	}
	if v4, ok := embeddedIPv4(ip); ok {
		return "embeds the " + Kind(v4) + " IPv4 address " + v4.String()
	}
	return "special-purpose"
}

// isMetadata reports whether ip is a cloud metadata service's address.
func isMetadata(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	for _, m := range metadata {
		if ip == m {
			return true
		}
	}
	return false
}

// embeddedIPv4 returns the IPv4 address a NAT64 or 6to4 address stands for.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}
