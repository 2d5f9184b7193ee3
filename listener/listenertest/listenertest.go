// Package listenertest gives tests the addresses their servers listen on.
//
// A port found by listening on port 0 and closing is in the kernel's ephemeral range: until the server it is for
// binds it, any outgoing connection or any other listener on port 0, of this process or another, can be given it
// (seen in CI: a restarted child process failed with "address already in use"). Addr picks ports below that range,
// which the kernel never hands out by itself.
package listenertest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
)

// below is the lowest port Addr hands out; the ports from it up to the ephemeral range are Addr's.
const below = 20000

var (
	mu     sync.Mutex
	low    int              // the lowest port of the ephemeral range; 0 before the first call
	handed = map[int]bool{} // the ports returned
)

// Addr returns "127.0.0.1:<port>" with a port that is free now, below the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range) and not returned before in this process. Where that range leaves fewer
// than 1,000 ports below it, the port is one the kernel gives for port 0.
func Addr(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", Port(t))
}

// Port is Addr's port.
func Port(t testing.TB) int {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if low == 0 {
		low = ephemeralLow()
	}
	if low-below < 1000 {
		for {
			if p := kernelPort(t); !handed[p] {
				handed[p] = true
				return p
			}
		}
	}
	// Test binaries of several packages run at once: a port drawn at random is unlikely to be another's.
	for range 1000 {
		p := below + rand.IntN(low-below)
		if handed[p] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue // a service of the machine, or a server of another test binary
		}
		if err := l.Close(); err != nil {
			t.Fatalf("closing the probe of port %d: %v", p, err)
		}
		handed[p] = true
		return p
	}
	t.Fatalf("no free port from %d to %d in 1,000 tries", below, low-1)
	return 0
}

// ephemeralLow reads the lowest port of the kernel's ephemeral range; 32768 where it cannot.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	var lo, hi int
	if _, err := fmt.Sscan(string(b), &lo, &hi); err != nil {
		return 32768
	}
	return lo
}

func kernelPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listening on a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
