package http_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/egress"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

func TestBasicAuth(t *testing.T) {
	t.Parallel()
	srv, got := captureServer(t, http.StatusOK)
	s := newSink(t, map[string]string{"url": srv.URL, "auth.type": "basic", "auth.username": "shop", "auth.password": "s3cr:et"}, true)
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	r := http.Request{Header: (<-got).header}
	u, p, ok := r.BasicAuth()
	assert.True(t, ok)
	assert.Equal(t, "shop", u)
	assert.Equal(t, "s3cr:et", p)
}

func TestAPIKeyAuth(t *testing.T) {
	t.Parallel()
	srv, got := captureServer(t, http.StatusOK)
	s := newSink(t, map[string]string{"url": srv.URL, "auth.type": "api_key", "auth.api_key.value": "k-1",
		"headers": `{"X-API-Key": "configured"}`}, true)
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	assert.Equal(t, "k-1", (<-got).header.Get("X-API-Key"), "the default header, over a configured one")

	s = newSink(t, map[string]string{"url": srv.URL, "auth.type": "api_key", "auth.api_key.header": "Authorization",
		"auth.api_key.value": "Token k-2"}, true)
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	h := (<-got).header
	assert.Equal(t, "Token k-2", h.Get("Authorization"))
	assert.Empty(t, h.Get("X-API-Key"))
}

func TestDeauthorizedSendsNothing(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { calls.Add(1) }))
	t.Cleanup(srv.Close)
	s := newSink(t, map[string]string{"url": srv.URL, "auth.type": "deauthorized", "auth.connection": "shop-api"}, true)
	err := s.Write(context.Background(), orderEvent())
	require.Error(t, err)
	assert.True(t, connector.IsPermanent(err), "a deauthorized connection is not retried: %v", err)
	assert.Contains(t, err.Error(), `connection "shop-api" is DEAUTHORIZED`)
	assert.Zero(t, calls.Load(), "no request may leave without its credentials")
}

func TestNoAuthByDefault(t *testing.T) {
	t.Parallel()
	srv, got := captureServer(t, http.StatusOK)
	require.NoError(t, newSink(t, map[string]string{"url": srv.URL}, true).Write(context.Background(), orderEvent()))
	assert.Empty(t, (<-got).header.Get("Authorization"))
}

// tokenServer is an OAuth token endpoint issuing tok-1, tok-2, ... valid expiresIn seconds.
type tokenServer struct {
	*httptest.Server
	issued atomic.Int32
	fail   atomic.Int32 // status to answer instead, if not 0

	mu    sync.Mutex
	forms []map[string]string
	auths []string
}

func newTokenServer(t *testing.T, expiresIn string) *tokenServer {
	ts := &tokenServer{}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := ts.fail.Load(); f != 0 {
			http.Error(w, `{"error":"temporarily_unavailable"}`, int(f))
			return
		}
		require.NoError(t, r.ParseForm())
		form := map[string]string{}
		for k := range r.PostForm {
			form[k] = r.PostForm.Get(k)
		}
		ts.mu.Lock()
		ts.forms = append(ts.forms, form)
		ts.auths = append(ts.auths, r.Header.Get("Authorization"))
		ts.mu.Unlock()
		n := ts.issued.Add(1)
		w.Header().Set("Content-Type", "application/json")
		exp := ""
		if expiresIn != "" {
			exp = `, "expires_in": ` + expiresIn
		}
		_, _ = fmt.Fprintf(w, `{"access_token": "tok-%d", "token_type": "Bearer"%s}`, n, exp)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// bearerTarget answers 401 to the tokens in reject, 200 to others, and records the tokens it saw.
type bearerTarget struct {
	*httptest.Server
	mu     sync.Mutex
	seen   []string
	reject map[string]bool
	all    bool // reject every token
}

func newBearerTarget(t *testing.T, reject ...string) *bearerTarget {
	bt := &bearerTarget{reject: map[string]bool{}}
	for _, r := range reject {
		bt.reject[r] = true
	}
	bt.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		bt.mu.Lock()
		bt.seen = append(bt.seen, tok)
		refuse := bt.all || bt.reject[tok]
		bt.mu.Unlock()
		if refuse {
			http.Error(w, "invalid token", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(bt.Close)
	return bt
}

func (bt *bearerTarget) Seen() []string {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	return append([]string(nil), bt.seen...)
}

func oauthConfig(target, tokenURL string) map[string]string {
	return map[string]string{
		"url": target, "auth.type": "oauth_client_credentials", "auth.oauth.token_url": tokenURL,
		"auth.oauth.client_id": "client 1", "auth.oauth.client_secret": "sec/ret",
		"auth.oauth.scopes": "events:write, events:read", "auth.oauth.extra_params": `{"audience": "https://api.example"}`,
	}
}

// clock is a settable clock for the sink.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newClockedSink(t *testing.T, cfg map[string]string, c *clock) connector.Sink {
	t.Helper()
	spec := httpsink.Plugin().Spec
	require.Empty(t, spec.Validate(cfg))
	s, err := httpsink.NewWithClock(spec.Values(cfg), connector.Env{Egress: egress.Config{AllowPrivate: true}}, c.Now)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestOAuthTokenIsCachedAndSent(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, "3600")
	target := newBearerTarget(t)
	s := newSink(t, oauthConfig(target.URL, ts.URL), true)
	for range 3 {
		require.NoError(t, s.Write(context.Background(), orderEvent()))
	}
	assert.Equal(t, int32(1), ts.issued.Load(), "one token for three requests")
	assert.Equal(t, []string{"tok-1", "tok-1", "tok-1"}, target.Seen())
	ts.mu.Lock()
	defer ts.mu.Unlock()
	assert.Equal(t, map[string]string{"grant_type": "client_credentials", "scope": "events:write events:read",
		"audience": "https://api.example"}, ts.forms[0])
	r := http.Request{Header: http.Header{"Authorization": {ts.auths[0]}}}
	id, secret, ok := r.BasicAuth()
	assert.True(t, ok)
	assert.Equal(t, "client+1", id, "form-encoded, RFC 6749 2.3.1")
	assert.Equal(t, "sec%2Fret", secret)
}

func TestOAuthBodyStyle(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, "3600")
	target := newBearerTarget(t)
	cfg := oauthConfig(target.URL, ts.URL)
	cfg["auth.oauth.auth_style"] = "body"
	require.NoError(t, newSink(t, cfg, true).Write(context.Background(), orderEvent()))
	ts.mu.Lock()
	defer ts.mu.Unlock()
	assert.Equal(t, "client 1", ts.forms[0]["client_id"])
	assert.Equal(t, "sec/ret", ts.forms[0]["client_secret"])
	assert.Empty(t, ts.auths[0])
}

func TestOAuthTokenRefreshedBeforeExpiry(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, "100")
	target := newBearerTarget(t)
	c := &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	s := newClockedSink(t, oauthConfig(target.URL, ts.URL), c)
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	c.Add(89 * time.Second) // a tenth of the lifetime before expiry is still fine
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	c.Add(2 * time.Second) // within 10s of expiry: refreshed
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	assert.Equal(t, []string{"tok-1", "tok-1", "tok-2"}, target.Seen())
	assert.Equal(t, int32(2), ts.issued.Load())
}

func TestOAuthTokenWithoutExpiryIsKeptUntilRefused(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, "")
	target := newBearerTarget(t, "tok-1")
	c := &clock{now: time.Now()}
	s := newClockedSink(t, oauthConfig(target.URL, ts.URL), c)
	c.Add(1000 * time.Hour)
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	assert.Equal(t, []string{"tok-1", "tok-2"}, target.Seen())
}

// A 401 refreshes the token once and sends the request once more.
func TestOAuthRefreshOn401(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, "3600")
	target := newBearerTarget(t, "tok-1")
	s := newSink(t, oauthConfig(target.URL, ts.URL), true)
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	assert.Equal(t, []string{"tok-1", "tok-2", "tok-2"}, target.Seen())
	assert.Equal(t, int32(2), ts.issued.Load())

	// A target refusing every token: one refresh, one retry, then a permanent error.
	target.mu.Lock()
	target.all = true
	target.mu.Unlock()
	err := s.Write(context.Background(), orderEvent())
	require.Error(t, err)
	assert.True(t, connector.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "401")
	assert.Equal(t, []string{"tok-1", "tok-2", "tok-2", "tok-2", "tok-3"}, target.Seen())
	assert.Equal(t, int32(3), ts.issued.Load())
}

// Concurrent writes with a refused token refresh it once, not once each.
func TestOAuthConcurrentWrites(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, "3600")
	target := newBearerTarget(t, "tok-1")
	s := newSink(t, oauthConfig(target.URL, ts.URL), true)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { assert.NoError(t, s.Write(context.Background(), orderEvent())) })
	}
	wg.Wait()
	assert.Equal(t, int32(2), ts.issued.Load(), "one token, then one refresh")
	n := map[string]int{}
	for _, tok := range target.Seen() {
		n[tok]++
	}
	assert.Equal(t, 20, n["tok-2"], "every write got through with the refreshed token")
	assert.LessOrEqual(t, n["tok-1"], 20, "writes that started before the refresh were refused once")
	assert.Len(t, n, 2)
}

func TestOAuthTokenEndpointErrorsAreRetryable(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusBadRequest, http.StatusUnauthorized} {
		ts := newTokenServer(t, "3600")
		ts.fail.Store(int32(status))
		target := newBearerTarget(t)
		s := newSink(t, oauthConfig(target.URL, ts.URL), true)
		err := s.Write(context.Background(), orderEvent())
		require.Error(t, err, status)
		assert.False(t, connector.IsPermanent(err), "%d: %v", status, err)
		assert.Contains(t, err.Error(), "token endpoint", status)
		assert.Empty(t, target.Seen(), "the target is not called without a token")

		// The endpoint recovers: the next attempt gets through.
		ts.fail.Store(0)
		require.NoError(t, s.Write(context.Background(), orderEvent()))
		assert.Equal(t, []string{"tok-1"}, target.Seen())
	}

	// An answer without a token, and an endpoint that is down.
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	t.Cleanup(bad.Close)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	for _, u := range []string{bad.URL, down.URL} {
		err := newSink(t, oauthConfig("http://127.0.0.1:1/", u), true).Write(context.Background(), orderEvent())
		require.Error(t, err, u)
		assert.False(t, connector.IsPermanent(err), "%s: %v", u, err)
	}
}

// The token endpoint is behind the same address checks as the target.
func TestOAuthTokenEndpointIsGuarded(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, "3600")
	err := newSink(t, oauthConfig("http://8.8.8.8/", ts.URL), false).Write(context.Background(), orderEvent())
	assert.ErrorIs(t, err, egress.ErrRefused)
	assert.Zero(t, ts.issued.Load())
}

func TestAuthSpec(t *testing.T) {
	t.Parallel()
	spec := httpsink.Plugin().Spec
	for _, k := range []string{"auth.password", "auth.api_key.value", "auth.oauth.client_secret", "webhook.signing_secret"} {
		f, ok := spec.Field(k)
		require.True(t, ok, k)
		assert.True(t, f.Secret, k)
	}
	for _, k := range []string{"auth.type", "auth.username", "auth.api_key.header", "auth.oauth.token_url",
		"auth.oauth.client_id", "auth.oauth.scopes", "auth.oauth.extra_params", "rate_limit_per_second", "url", "headers"} {
		f, ok := spec.Field(k)
		require.True(t, ok, k)
		assert.False(t, f.Secret, k)
	}
	f, _ := spec.Field("auth.type")
	assert.Equal(t, "none", f.Default)
	f, _ = spec.Field("auth.api_key.header")
	assert.Equal(t, "X-API-Key", f.Default)

	bad := []struct {
		cfg map[string]string
		key string
	}{
		{map[string]string{"auth.type": "digest"}, "auth.type"},
		{map[string]string{"auth.api_key.header": "X Bad"}, "auth.api_key.header"},
		{map[string]string{"auth.oauth.token_url": "ftp://x"}, "auth.oauth.token_url"},
		{map[string]string{"auth.oauth.extra_params": `{"a": 1}`}, "auth.oauth.extra_params"},
		{map[string]string{"auth.oauth.auth_style": "query"}, "auth.oauth.auth_style"},
		{map[string]string{"rate_limit_per_second": "-1"}, "rate_limit_per_second"},
		{map[string]string{"rate_limit_per_second": "1.5"}, "rate_limit_per_second"},
		{map[string]string{"webhook.signing_secret": "whsec_!!!"}, "webhook.signing_secret"},
	}
	for _, b := range bad {
		b.cfg["url"] = "http://x"
		errs := spec.Validate(b.cfg)
		require.Len(t, errs, 1, "%v", b.cfg)
		assert.Equal(t, b.key, errs[0].Key)
	}

	// Keys each auth.type requires are reported by the constructor, each naming its key.
	missing := []struct {
		cfg  map[string]string
		keys []string
	}{
		{map[string]string{"auth.type": "basic"}, []string{"auth.username"}},
		{map[string]string{"auth.type": "api_key"}, []string{"auth.api_key.value"}},
		{map[string]string{"auth.type": "oauth_client_credentials"},
			[]string{"auth.oauth.token_url", "auth.oauth.client_id", "auth.oauth.client_secret"}},
	}
	for _, m := range missing {
		m.cfg["url"] = "http://x"
		require.Empty(t, spec.Validate(m.cfg))
		_, err := httpsink.New(spec.Values(m.cfg), connector.Env{})
		var fe connector.FieldErrors
		require.ErrorAs(t, err, &fe)
		var keys []string
		for _, e := range fe {
			keys = append(keys, e.Key)
		}
		assert.Equal(t, m.keys, keys)
	}
}

func TestOAuthTokenEndpointRetryAfter(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(ts.Close)
	err := newSink(t, oauthConfig("http://127.0.0.1:1/", ts.URL), true).Write(context.Background(), orderEvent())
	require.Error(t, err)
	assert.False(t, connector.IsPermanent(err))
	d, ok := connector.RetryAfterOf(err)
	assert.True(t, ok)
	assert.Equal(t, 7*time.Second, d)
}

func TestOAuthWriteTimeout(t *testing.T) {
	t.Parallel()
	cfg := oauthConfig("http://x/", "http://y/token")
	cfg["timeout"] = "1s"
	assert.Equal(t, 4*time.Second, newSink(t, cfg, true).(connector.WriteTimeouter).WriteTimeout())
	cfg["rate_limit_per_second"] = "64"
	assert.Equal(t, 6*time.Second, newSink(t, cfg, true).(connector.WriteTimeouter).WriteTimeout())
}

func TestNewErrorReturnsNilSink(t *testing.T) {
	t.Parallel()
	spec := httpsink.Plugin().Spec
	s, err := httpsink.New(spec.Values(map[string]string{"url": "http://x", "auth.type": "basic"}), connector.Env{})
	require.Error(t, err)
	assert.Nil(t, s)
}
