// Package listener holds the limits every HTTP listener of the product runs with — the control plane's API and
// webhook intake, the worker's REST API and its metrics — so that slow or idle clients and floods of connections
// cannot hold a server's connections and file descriptors: read-header, read, write and idle timeouts, a header
// size limit, and a cap on open connections per listener (golang.org/x/net/netutil). A handler that streams its
// answer (Server-Sent Events) lifts the write timeout for its response with Streaming.
package listener

import (
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"syscall"
	"time"

	"golang.org/x/net/netutil"
)

// Limits of one HTTP listener. A zero duration or size means none (net/http's default).
type Limits struct {
	// ReadHeaderTimeout bounds the wait for a request's headers; ReadTimeout for the whole request, body included.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	// WriteTimeout bounds the time from the end of the request's headers to the end of the answer, except for
	// responses that call Streaming.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that waits this long for its next request.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's header lines, request line included.
	MaxHeaderBytes int
	// MaxConnections caps the connections the listener holds open at once; more wait in the kernel's backlog
	// until one closes.
	MaxConnections int
}

// Defaults suited to a listener reachable from the Internet: a 1 MiB PutEvents body may take a minute at about
// 17 KB/s; binary-mode CloudEvents carry up to 32 KiB of attributes in headers, which percent-encoding can triple.
var Defaults = Limits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       60 * time.Second,
	WriteTimeout:      60 * time.Second,
	IdleTimeout:       120 * time.Second,
	MaxHeaderBytes:    256 << 10,
	MaxConnections:    DefaultMaxConnections(),
}

// maxDefaultConnections bounds the default cap whatever the file-descriptor limit.
const maxDefaultConnections = 10_000

// DefaultMaxConnections is the default cap of a listener: a quarter of the process's file-descriptor limit, at most
// 10,000, so that the API's and the embedded worker's listeners together hold at most half and JetStream's files,
// the database and outgoing deliveries keep the rest: the embedded JetStream refuses every later write to a stream
// once it failed to open one of its files (nats-server's "critical write error" is sticky until a restart). Go raises the soft
// limit to the hard one at start, so this reads the limit the process really has.
func DefaultMaxConnections() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 {
		return maxDefaultConnections
	}
	return int(max(min(rl.Cur/4, maxDefaultConnections), 16))
}

// Validate names the first limit that is negative.
func (l Limits) Validate() error {
	for _, d := range []struct {
		name string
		v    int64
	}{
		{"read-header timeout", int64(l.ReadHeaderTimeout)}, {"read timeout", int64(l.ReadTimeout)},
		{"write timeout", int64(l.WriteTimeout)}, {"idle timeout", int64(l.IdleTimeout)},
		{"header size limit", int64(l.MaxHeaderBytes)}, {"connection cap", int64(l.MaxConnections)},
	} {
		if d.v < 0 {
			return fmt.Errorf("the %s must not be negative", d.name)
		}
	}
	return nil
}

// Server is an http.Server of h with l's timeouts and header limit; errLog receives the server's own errors.
func (l Limits) Server(h http.Handler, errLog *log.Logger) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: l.MaxHeaderBytes, ErrorLog: errLog}
}

// Listen wraps ln so that it holds at most l.MaxConnections connections open (ln itself when there is no cap).
func (l Limits) Listen(ln net.Listener) net.Listener {
	if l.MaxConnections <= 0 {
		return ln
	}
	return netutil.LimitListener(ln, l.MaxConnections)
}

// Streaming lifts the write timeout of the response w writes, for a handler that streams its answer for as long
// as the client stays (Server-Sent Events, a live tail). Call it before the first write.
func Streaming(w http.ResponseWriter) error {
	err := http.NewResponseController(w).SetWriteDeadline(time.Time{})
	if errors.Is(err, http.ErrNotSupported) {
		return fmt.Errorf("listener: the response cannot lift its write deadline: %w", err)
	}
	return err
}
