package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestListenersDisconnectSlowClients: the API's listener and the embedded worker's REST listener close a client
// whose headers or body never end and a keep-alive connection left idle, after the timeouts the flags set; the
// API's listener holds no more connections than its cap, and serves a waiting one once another closes.
func TestListenersDisconnectSlowClients(t *testing.T) {
	m := startMain(t, t.TempDir(), "--http-read-header-timeout", "1s", "--http-read-timeout", "1500ms",
		"--http-idle-timeout", "600ms", "--http-max-connections", "8")
	defer func() { require.NoError(t, m.Close()) }()

	dial := func(addr string) net.Conn {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	closedWithin := func(c net.Conn, what string) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		require.Falsef(t, errors.As(err, &ne) && ne.Timeout(), "%s: still open after 10 s", what)
	}
	for name, addr := range map[string]string{"API": m.HTTPAddr(), "worker REST": m.WorkerAddr()} {
		c := dial(addr)
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
		closedWithin(c, name+": headers that never end")

		c = dial(addr)
		fmt.Fprintf(c, "POST /api/v1/buses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
		closedWithin(c, name+": a body that never ends")

		c = dial(addr)
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, name)
		closedWithin(c, name+": an idle keep-alive connection")
	}

	// The cap: eight connections held open (their headers unfinished, within the 1 s header timeout), a ninth
	// waits; it is served once they are closed.
	var held []net.Conn
	for range 8 {
		c := dial(m.HTTPAddr())
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
		held = append(held, c)
	}
	time.Sleep(50 * time.Millisecond)
	ninth := dial(m.HTTPAddr())
	fmt.Fprintf(ninth, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	r := bufio.NewReader(ninth)
	_ = ninth.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, err := http.ReadResponse(r, nil)
	require.Error(t, err, "a ninth connection was served while eight were held")
	for _, c := range held {
		_ = c.Close()
	}
	_ = ninth.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
