package http_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/connector/connectortest"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/egress"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

// newSink builds an http sink from plugin keys, validating them first.
func newSink(t testing.TB, cfg map[string]string, allowPrivate bool) connector.Sink {
	t.Helper()
	spec := httpsink.Plugin().Spec
	require.Empty(t, spec.Validate(cfg))
	s, err := httpsink.New(spec.Values(cfg), connector.Env{Egress: egress.Config{AllowPrivate: allowPrivate}})
	require.NoError(t, err)
	require.NoError(t, s.Connect(context.Background()))
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func orderEvent() *event.Event {
	e := jetstreamtest.Event("order-1", "order.created", map[string]any{"orderId": "o-1", "amount": 120})
	e.SetSubject("orders/o-1")
	e.SetExtension("tenant", "acme")
	return e
}

type captured struct {
	method string
	header http.Header
	body   []byte
}

func captureServer(t *testing.T, status int) (*httptest.Server, <-chan captured) {
	ch := make(chan captured, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- captured{method: r.Method, header: r.Header.Clone(), body: b}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

func TestBinaryMode(t *testing.T) {
	t.Parallel()
	srv, got := captureServer(t, http.StatusOK)
	s := newSink(t, map[string]string{"url": srv.URL + "/hook", "headers": `{"X-Team": "shop", "ce-id": "spoofed"}`}, true)
	e := orderEvent()
	require.NoError(t, s.Write(context.Background(), e))
	req := <-got
	assert.Equal(t, http.MethodPost, req.method)
	assert.Equal(t, "1.0", req.header.Get("Ce-Specversion"))
	assert.Equal(t, "order-1", req.header.Get("Ce-Id"), "CloudEvents headers win over configured ones")
	assert.Equal(t, "test/source", req.header.Get("Ce-Source"))
	assert.Equal(t, "order.created", req.header.Get("Ce-Type"))
	assert.Equal(t, "orders/o-1", req.header.Get("Ce-Subject"))
	assert.Equal(t, "acme", req.header.Get("Ce-Tenant"))
	assert.NotEmpty(t, req.header.Get("Ce-Time"))
	assert.Equal(t, "application/json", req.header.Get("Content-Type"))
	assert.Equal(t, "shop", req.header.Get("X-Team"))
	assert.JSONEq(t, `{"orderId": "o-1", "amount": 120}`, string(req.body))
}

func TestStructuredMode(t *testing.T) {
	t.Parallel()
	srv, got := captureServer(t, http.StatusAccepted)
	s := newSink(t, map[string]string{"url": srv.URL, "mode": "structured", "method": "PUT"}, true)
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	req := <-got
	assert.Equal(t, http.MethodPut, req.method)
	assert.Equal(t, "application/cloudevents+json", req.header.Get("Content-Type"))
	assert.Empty(t, req.header.Get("Ce-Id"))
	var body map[string]any
	require.NoError(t, json.Unmarshal(req.body, &body))
	assert.Equal(t, "order-1", body["id"])
	assert.Equal(t, "order.created", body["type"])
	assert.Equal(t, "acme", body["tenant"])
	assert.Equal(t, map[string]any{"orderId": "o-1", "amount": float64(120)}, body["data"])
}

func TestStatusCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status    int
		wantErr   bool
		permanent bool
	}{
		{200, false, false},
		{201, false, false},
		{204, false, false},
		{500, true, false},
		{502, true, false},
		{503, true, false},
		{429, true, false},
		{408, true, false},
		{400, true, true},
		{401, true, true},
		{404, true, true},
		{413, true, true},
		{302, true, true},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.status == http.StatusFound {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte("answer body"))
			}))
			t.Cleanup(srv.Close)
			err := newSink(t, map[string]string{"url": srv.URL}, true).Write(context.Background(), orderEvent())
			if !tt.wantErr {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.permanent, connector.IsPermanent(err), "%v", err)
			assert.Contains(t, err.Error(), "answer body")
		})
	}
}

func TestTimeoutsAndConnectionErrorsAreRetryable(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	s := newSink(t, map[string]string{"url": slow.URL, "timeout": "100ms"}, true)
	assert.Equal(t, 100*time.Millisecond, s.(connector.WriteTimeouter).WriteTimeout())
	err := s.Write(context.Background(), orderEvent())
	require.Error(t, err)
	assert.False(t, connector.IsPermanent(err), "%v", err)

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	err = newSink(t, map[string]string{"url": closed.URL}, true).Write(context.Background(), orderEvent())
	require.Error(t, err)
	assert.False(t, connector.IsPermanent(err), "%v", err)
}

func TestPrivateTargets(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, u := range []string{srv.URL, "http://localhost:" + port} {
		err := newSink(t, map[string]string{"url": u}, false).Write(context.Background(), orderEvent())
		require.Error(t, err, u)
		assert.ErrorIs(t, err, egress.ErrRefused, u)
		assert.True(t, connector.IsPermanent(err), u)
	}
	assert.Equal(t, int32(0), hits.Load(), "no request left")

	require.NoError(t, newSink(t, map[string]string{"url": srv.URL}, true).Write(context.Background(), orderEvent()))
	assert.Equal(t, int32(1), hits.Load())
}

func TestSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     map[string]string
		wantKey string
	}{
		{"minimal", map[string]string{"url": "https://example.com/hook"}, ""},
		{"url missing", map[string]string{}, "url"},
		{"url not http", map[string]string{"url": "ftp://example.com"}, "url"},
		{"url without host", map[string]string{"url": "http:///path"}, "url"},
		{"method unknown", map[string]string{"url": "http://x", "method": "BREW"}, "method"},
		{"headers not an object", map[string]string{"url": "http://x", "headers": `["a"]`}, "headers"},
		{"headers not strings", map[string]string{"url": "http://x", "headers": `{"a": 1}`}, "headers"},
		{"mode unknown", map[string]string{"url": "http://x", "mode": "batch"}, "mode"},
		{"timeout zero", map[string]string{"url": "http://x", "timeout": "0s"}, "timeout"},
		{"timeout not a duration", map[string]string{"url": "http://x", "timeout": "5"}, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			errs := httpsink.Plugin().Spec.Validate(tt.cfg)
			if tt.wantKey == "" {
				assert.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1, "%v", errs)
			assert.Equal(t, tt.wantKey, errs[0].Key)
		})
	}
}

// A target answering 500 and then 200 gets the event through the runtime's retries.
func TestRetriedThroughTheRuntime(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)

	env := jetstreamtest.Start(t)
	env.Stream(t, "S", "s.>")
	dc := delivery.Config{Stream: "S", Subject: "s.in", Durable: "d", Tasks: 1, Tolerance: connector.ToleranceAll,
		Retry: delivery.RetryPolicy{MaxRetries: 3, MaxAge: -1, InitialDelay: 10 * time.Millisecond, MaxDelay: 10 * time.Millisecond}}
	cons, err := delivery.EnsureConsumer(context.Background(), env.JS, dc, 15*time.Second)
	require.NoError(t, err)
	s := newSink(t, map[string]string{"url": srv.URL}, true)
	task, err := delivery.Start(context.Background(), delivery.TaskConfig{Consumer: cons, Sink: s, Handler: dc.Chain(s)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })

	env.Publish(t, "s.in", orderEvent())
	require.Eventually(t, func() bool { return task.Counters().Written == 1 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, int32(2), calls.Load())
	assert.Equal(t, uint64(1), task.Counters().Retried)
}

func TestSinkSuite(t *testing.T) {
	connectortest.RunSinkSuite(t, connectortest.SinkSuite{
		Plugin:  httpsink.Plugin(),
		NewPeer: newPeer,
		Egress:  egress.Config{AllowPrivate: true},
	})
}

// peer is an HTTP target that can be stopped and restarted at the same address.
type peer struct {
	t    *testing.T
	addr string

	mu       sync.Mutex
	srv      *http.Server
	accepted []string
	hold     chan struct{}
	held     int
}

func newPeer(t *testing.T, _ *jetstreamtest.Env) connectortest.Peer {
	p := &peer{t: t, addr: "127.0.0.1:0"}
	p.Start()
	t.Cleanup(p.Stop)
	return p
}

func (p *peer) Config() map[string]string {
	return map[string]string{"url": "http://" + p.addr + "/events", "timeout": "2s"}
}

func (p *peer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	p.mu.Lock()
	hold := p.hold
	if hold != nil {
		p.held++
	}
	p.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	p.mu.Lock()
	p.accepted = append(p.accepted, r.Header.Get("Ce-Id"))
	p.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (p *peer) Accepted() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.accepted...)
}

func (p *peer) Hold() (func() int, func()) {
	ch := make(chan struct{})
	p.mu.Lock()
	p.hold = ch
	p.mu.Unlock()
	var once sync.Once
	return func() int {
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.held
		}, func() {
			once.Do(func() {
				p.mu.Lock()
				p.hold = nil
				p.mu.Unlock()
				close(ch)
			})
		}
}

func (p *peer) Start() {
	ln, err := net.Listen("tcp", p.addr)
	require.NoError(p.t, err)
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 5 * time.Second}
	p.mu.Lock()
	p.addr, p.srv = ln.Addr().String(), srv
	p.mu.Unlock()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.t.Errorf("peer: %v", err)
		}
	}()
}

func (p *peer) Stop() {
	p.mu.Lock()
	srv := p.srv
	p.srv = nil
	p.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"3", 3 * time.Second, true},
		{" 0 ", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
	}
	for _, tt := range tests {
		d, ok := httpsink.ParseRetryAfter(tt.v, now)
		assert.Equal(t, tt.ok, ok, tt.v)
		assert.Equal(t, tt.want, d, tt.v)
	}
}

func TestRetryAfterReachesTheRetryMiddleware(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status     int
		retryAfter string
		want       time.Duration // 0: no Retry-After on the error
		permanent  bool
	}{
		{http.StatusTooManyRequests, "2", 2 * time.Second, false},
		{http.StatusServiceUnavailable, time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), time.Hour, false},
		{http.StatusInternalServerError, "", 0, false},
		{http.StatusBadRequest, "5", 0, true},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tt.retryAfter != "" {
				w.Header().Set("Retry-After", tt.retryAfter)
			}
			w.WriteHeader(tt.status)
		}))
		err := newSink(t, map[string]string{"url": srv.URL}, true).Write(context.Background(), orderEvent())
		srv.Close()
		require.Error(t, err)
		assert.Equal(t, tt.permanent, connector.IsPermanent(err), "%d: %v", tt.status, err)
		d, ok := connector.RetryAfterOf(err)
		assert.Equal(t, tt.want != 0, ok, "%d", tt.status)
		assert.InDelta(t, float64(tt.want), float64(d), float64(2*time.Second), "%d", tt.status)

		// The retry middleware waits that long, capped by the policy's maximum delay.
		p := delivery.RetryPolicy{MaxRetries: 5, MaxAge: -1, InitialDelay: 10 * time.Millisecond, MaxDelay: 30 * time.Minute}
		ctx := connector.WithMeta(context.Background(), connector.Meta{Attempt: 1, Timestamp: time.Now()})
		o := delivery.WithRetry(p, func(context.Context, *event.Event) delivery.Outcome {
			return delivery.Outcome{Action: delivery.Retry, Err: err}
		})(ctx, orderEvent())
		if tt.permanent {
			continue
		}
		switch {
		case tt.want == 0:
			assert.Less(t, o.Delay, 20*time.Millisecond, "the policy's delay")
		case tt.want > p.MaxDelay:
			assert.Equal(t, p.MaxDelay, o.Delay, "capped by the maximum delay")
		default:
			assert.Equal(t, d, o.Delay)
		}
	}
}

// A task that parks closes the sink's idle keep-alive connections (connector.Idler) rather than keeping them for the
// transport's 90 s, and the event that wakes it is delivered on a new connection.
func TestParkedTaskClosesItsIdleConnections(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	states := map[net.Conn]http.ConnState{}
	count := func(want http.ConnState) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, s := range states {
			if s == want {
				n++
			}
		}
		return n
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		states[c] = s
	}
	srv.Start()
	t.Cleanup(srv.Close)

	env := jetstreamtest.Start(t)
	env.Stream(t, "S", "s.>")
	dc := delivery.Config{Stream: "S", Subject: "s.in", Durable: "d", Tasks: 1}
	cons, err := delivery.EnsureConsumer(context.Background(), env.JS, dc, 15*time.Second)
	require.NoError(t, err)
	s := newSink(t, map[string]string{"url": srv.URL}, true)
	task, err := delivery.Start(context.Background(), delivery.TaskConfig{Consumer: cons, Sink: s, Handler: dc.Chain(s),
		Conn: env.Conn, ParkAfter: 200 * time.Millisecond, ParkCheck: time.Hour})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })

	env.Publish(t, "s.in", orderEvent())
	require.Eventually(t, func() bool { return task.Counters().Written == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return count(http.StateIdle) == 1 }, 10*time.Second, 10*time.Millisecond,
		"kept alive after the delivery")
	require.Eventually(t, func() bool { return task.Counters().Parked == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return count(http.StateClosed) == 1 }, 10*time.Second, 10*time.Millisecond,
		"closed when the task parked")
	assert.Zero(t, count(http.StateIdle))

	e := orderEvent()
	e.SetID("order-2")
	env.Publish(t, "s.in", e)
	require.Eventually(t, func() bool { return task.Counters().Written == 2 }, 10*time.Second, 10*time.Millisecond)
	mu.Lock()
	assert.Len(t, states, 2, "the event that woke the task went on a new connection")
	mu.Unlock()
}
