package egress

import (
	"context"
	"net"
	"net/netip"
)

// ParseLegacyIPv4 is parseLegacyIPv4.
var ParseLegacyIPv4 = parseLegacyIPv4

// ConnectChecked opens a connection to address with the default dialer told that want is the address checked.
func (g *Guard) ConnectChecked(ctx context.Context, address string, want netip.AddrPort) (net.Conn, error) {
	return g.connect(ctx, "tcp", address, &want)
}
