package listener_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eventbridge-go/eventbridge/listener"
)

// serve runs h behind l on a loopback port and returns its address.
func serve(t *testing.T, l listener.Limits, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := l.Server(h, nil)
	go func() { _ = srv.Serve(l.Listen(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, _ = io.WriteString(w, "ok")
})

// closedWithin reads c until the server closes it, and fails unless that happens within d.
func closedWithin(t *testing.T, c net.Conn, d time.Duration, what string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: the connection is still open after %s", what, d)
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestSlowClientsAreClosed(t *testing.T) {
	t.Parallel()
	l := listener.Limits{ReadHeaderTimeout: 200 * time.Millisecond, ReadTimeout: 400 * time.Millisecond,
		WriteTimeout: time.Second, IdleTimeout: 300 * time.Millisecond}
	addr := serve(t, l, echo)

	// Headers that never end.
	c := dial(t, addr)
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\n")
	closedWithin(t, c, 5*time.Second, "slow headers")

	// A body that never ends.
	c = dial(t, addr)
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc")
	closedWithin(t, c, 5*time.Second, "slow body")

	// An idle keep-alive connection, after one request answered.
	c = dial(t, addr)
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("first request: %v %v", resp, err)
	}
	closedWithin(t, c, 5*time.Second, "idle connection")
}

func TestHeaderSizeLimit(t *testing.T) {
	t.Parallel()
	addr := serve(t, listener.Limits{MaxHeaderBytes: 1 << 10}, echo)
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	req.Header.Set("X-Big", strings.Repeat("h", 8<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("status %d, want 431", resp.StatusCode)
	}
}

// TestConnectionCap: with two connections held open, a third waits unanswered; it is served once one closes.
func TestConnectionCap(t *testing.T) {
	t.Parallel()
	addr := serve(t, listener.Limits{MaxConnections: 2, ReadHeaderTimeout: time.Minute}, echo)
	held := []net.Conn{dial(t, addr), dial(t, addr)}
	for _, c := range held {
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n") // accepted, its headers never end
	}
	time.Sleep(100 * time.Millisecond) // both are accepted by now
	third := dial(t, addr)
	fmt.Fprintf(third, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	r := bufio.NewReader(third)
	_ = third.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := http.ReadResponse(r, nil); err == nil {
		t.Fatal("a third connection was served while two were held: no cap")
	}
	_ = held[0].Close()
	_ = third.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("once a held connection closed, the third is served: %v %v", resp, err)
	}
}

// TestStreamingIsNotCutByTheWriteTimeout: a response that calls Streaming runs past the write timeout; one that
// does not is cut.
func TestStreamingIsNotCutByTheWriteTimeout(t *testing.T) {
	t.Parallel()
	const chunks, every = 8, 100 * time.Millisecond // 800 ms, four times the write timeout
	stream := func(lift bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if lift {
				if err := listener.Streaming(w); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
			}
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range chunks {
				if _, err := fmt.Fprintf(w, "data: %d\n\n", i); err != nil {
					return
				}
				http.NewResponseController(w).Flush()
				time.Sleep(every)
			}
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/lifted", stream(true))
	mux.Handle("/cut", stream(false))
	addr := serve(t, listener.Limits{WriteTimeout: 200 * time.Millisecond}, mux)
	count := func(path string) int {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Count(string(b), "data: ")
	}
	if n := count("/lifted"); n != chunks {
		t.Errorf("a streaming response got %d of %d events", n, chunks)
	}
	if n := count("/cut"); n >= chunks {
		t.Errorf("a response that does not stream ran past the write timeout (%d events): the timeout does not hold", n)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := listener.Defaults.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (listener.Limits{IdleTimeout: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "idle timeout") {
		t.Fatalf("err = %v", err)
	}
	if n := listener.DefaultMaxConnections(); n < 16 || n > 10_000 {
		t.Fatalf("DefaultMaxConnections = %d", n)
	}
}
