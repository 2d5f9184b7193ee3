// Package http is the http sink plugin: it delivers each CloudEvent in one HTTP request, in the binary or
// structured content mode of the CloudEvents HTTP binding, and refuses non-public addresses unless allowed.
package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// Name is the plugin's connector.class.
const Name = "http"

// Config keys of the http sink.
const (
	KeyURL     = "url"
	KeyMethod  = "method"
	KeyHeaders = "headers"
	KeyMode    = "mode"
	KeyTimeout = "timeout"
)

// Content modes.
const (
	ModeBinary     = "binary"
	ModeStructured = "structured"
)

// ErrPrivateTarget is the error (wrapped, permanent) of a request to an address that is not public while private
// targets are not allowed.
var ErrPrivateTarget = errors.New("refusing to connect to a non-public address (allow with --allow-private-targets)")

func init() { connector.Register(Plugin()) }

// Plugin returns the http sink plugin.
func Plugin() connector.Plugin {
	return connector.Plugin{
		Name:    Name,
		Type:    connector.TypeSink,
		Version: "1.0.0",
		Doc:     "Delivers each event in an HTTP request (CloudEvents HTTP binding).",
		Spec: connector.Spec{
			{Name: KeyURL, Type: connector.TypeString, Required: true, Check: checkURL,
				Doc: "Target URL (http or https)."},
			{Name: KeyMethod, Type: connector.TypeEnum, Default: http.MethodPost,
				Enum: []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodGet},
				Doc:  "HTTP method."},
			{Name: KeyHeaders, Type: connector.TypeJSON, Check: checkHeaders,
				Doc: `Extra request headers, a JSON object of strings: {"X-Team": "shop"}. ce-* and Content-Type are the event's and are not overridden.`},
			{Name: KeyMode, Type: connector.TypeEnum, Default: ModeBinary, Enum: []string{ModeBinary, ModeStructured},
				Doc: "binary: ce-* headers and the data as body; structured: the event as application/cloudevents+json."},
			{Name: KeyTimeout, Type: connector.TypeDuration, Default: "5s", Check: checkPositive,
				Doc: "Timeout of one request, connection included."},
		},
		NewSink: New,
	}
}

func checkURL(v string) error {
	u, err := url.Parse(v)
	if err != nil {
		return errors.New("is not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("must be an http or https URL")
	}
	if u.Host == "" {
		return errors.New("must name a host")
	}
	return nil
}

func checkHeaders(v string) error {
	var h map[string]string
	if err := json.Unmarshal([]byte(v), &h); err != nil {
		return errors.New("must be a JSON object of strings")
	}
	for k := range h {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			return fmt.Errorf("%q is not a header name", k)
		}
	}
	return nil
}

func checkPositive(v string) error {
	if d, _ := time.ParseDuration(v); d <= 0 {
		return errors.New("must be positive")
	}
	return nil
}

// Sink delivers events over HTTP with one keep-alive client per task. Safe for concurrent Write.
type Sink struct {
	url        string
	method     string
	headers    map[string]string
	structured bool
	timeout    time.Duration
	client     *http.Client
}

var (
	_ connector.Sink           = (*Sink)(nil)
	_ connector.WriteTimeouter = (*Sink)(nil)
)

// New builds a sink from a validated config; no I/O.
func New(cfg connector.Values, env connector.Env) (connector.Sink, error) {
	s := &Sink{
		url:        cfg.String(KeyURL),
		method:     cfg.String(KeyMethod),
		structured: cfg.String(KeyMode) == ModeStructured,
		timeout:    cfg.Duration(KeyTimeout),
	}
	if err := cfg.JSON(KeyHeaders, &s.headers); err != nil {
		return nil, err
	}
	if s.timeout <= 0 {
		s.timeout = 5 * time.Second
	}
	dialer := &net.Dialer{Timeout: s.timeout, KeepAlive: 30 * time.Second}
	if !env.AllowPrivateTargets {
		dialer.Control = refusePrivate
	}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would hide the target's address from the check, and env is not ours to read
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   s.timeout,
		ExpectContinueTimeout: time.Second,
	}
	s.client = &http.Client{
		Transport: transport,
		Timeout:   s.timeout,
		// A redirect is not followed: it would change the method of a POST and the target must be fixed anyway.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return s, nil
}

// refusePrivate is the dialer's Control: it runs after DNS, on the address actually dialed.
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
	netip.MustParsePrefix("198.18.0.0/15"),     // benchmarking
	netip.MustParsePrefix("169.254.0.0/16"),    // link-local, cloud metadata 169.254.169.254
	netip.MustParsePrefix("fd00:ec2::254/128"), // AWS metadata over IPv6 (also in fc00::/7)
	netip.MustParsePrefix("64:ff9b:1::/48"),    // local-use NAT64
}

// Public reports whether ip is an address a sink may reach without --allow-private-targets: not loopback,
// private, link-local, multicast, unspecified, cloud metadata or another special-purpose local range.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// Connect does nothing: connections are opened by the first requests and kept alive.
func (s *Sink) Connect(context.Context) error { return nil }

// Close closes the idle connections.
func (s *Sink) Close() error {
	s.client.CloseIdleConnections()
	return nil
}

// WriteTimeout is the timeout of one request.
func (s *Sink) WriteTimeout() time.Duration { return s.timeout }

// Write sends e in one request. A 2xx answer is acceptance. 429, 408, 5xx, timeouts and connection errors are
// retryable errors (with the answer's Retry-After, if any, as connector.RetryAfter); other answers (4xx, redirects), a refused non-public address and an event that cannot be
// encoded are permanent, as Amazon EventBridge treats them.
func (s *Sink) Write(ctx context.Context, e *event.Event) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, s.method, s.url, nil)
	if err != nil {
		return connector.Permanent(fmt.Errorf("http: building the request: %w", err))
	}
	for k, v := range s.headers {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "ce-") || lk == "content-type" || lk == "content-length" {
			continue // the event's own headers are not overridden
		}
		req.Header.Set(k, v)
	}
	wctx := ctx
	if s.structured {
		wctx = binding.WithForceStructured(ctx)
	}
	if err := cehttp.WriteRequest(wctx, binding.ToMessage(e), req); err != nil {
		return connector.Permanent(fmt.Errorf("http: encoding the event: %w", err))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrPrivateTarget) {
			return connector.Permanent(fmt.Errorf("http: %s %s: %w", s.method, s.url, err))
		}
		return fmt.Errorf("http: %s %s: %w", s.method, s.url, err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	code := resp.StatusCode
	if code >= 200 && code < 300 {
		return nil
	}
	err = fmt.Errorf("http: %s %s answered %d: %s", s.method, s.url, code, strings.TrimSpace(string(snippet)))
	if Retryable(code) {
		if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return connector.RetryAfter(err, d)
		}
		return err
	}
	return connector.Permanent(err)
}

// ParseRetryAfter reads a Retry-After header, delay-seconds or an HTTP date, as a delay from now. A date in the
// past is a delay of 0 (ok); an absent or unreadable header is not ok.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		const maxSeconds = int64(1<<63-1) / int64(time.Second)
		return time.Duration(min(n, maxSeconds)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// Retryable reports whether a non-2xx status is worth retrying: 408, 429 and 5xx.
func Retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}
