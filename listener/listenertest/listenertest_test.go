package listenertest

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAddrIsFreeBelowTheEphemeralRangeAndNeverTwice(t *testing.T) {
	low := ephemeralLow()
	if low-below < 1000 {
		t.Skipf("the ephemeral range starts at %d: Addr falls back to the kernel's ports", low)
	}
	seen := map[string]bool{}
	for range 200 {
		addr := Addr(t)
		require.False(t, seen[addr], "%s returned twice", addr)
		seen[addr] = true
		_, port, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		p, err := strconv.Atoi(port)
		require.NoError(t, err)
		require.GreaterOrEqual(t, p, below)
		require.Less(t, p, low, "a port of the ephemeral range, which the kernel can hand out")
		l, err := net.Listen("tcp", addr)
		require.NoError(t, err, "the port returned is free")
		require.NoError(t, l.Close())
	}
}
