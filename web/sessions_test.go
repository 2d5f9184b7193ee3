package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/session"
	"github.com/eventbridge-go/eventbridge/domain/user"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/web"
)

func newTestClock() *testClock { return &testClock{now: time.Now().UTC()} }

// Add moves the clock by d.
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// sessionEnv is an environment whose router signs users in, on a clock the test moves; the throttle's soft delays
// are recorded instead of slept.
type sessionEnv struct {
	*env
	clock    *testClock
	sessions *session.Service

	mu     sync.Mutex
	sleeps []time.Duration
}

// newSessionEnv returns an environment of dialect with sessions (no cache: tests see every change at once) and
// the router configured by cfg.
func newSessionEnv(t *testing.T, dialect string, cfg web.Config) *sessionEnv {
	t.Helper()
	e := &sessionEnv{env: newEnv(t, natsServer(t), dialect), clock: newTestClock()}
	e.sessions = newSessionService(e.env, e.clock, -1)
	e.sessions.Sleep = func(_ context.Context, d time.Duration) error {
		e.mu.Lock()
		e.sleeps = append(e.sleeps, d)
		e.mu.Unlock()
		return nil
	}
	e.services.Sessions = e.sessions
	e.services.Users.Sessions = e.sessions
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	e.router = newRouter(cfg, e.services)
	return e
}

// newSessionService is a session service on e's database and users.
func newSessionService(e *env, clock *testClock, cacheTTL time.Duration) *session.Service {
	repo := persistence.NewSessionRepository(e.db)
	return &session.Service{Sessions: repo, Failures: repo, Users: e.services.Users, Clock: clock.Now, CacheTTL: cacheTTL,
		Config: session.Config{IdleTimeout: 30 * time.Minute, MaxAge: 2 * time.Hour}}
}

// user creates a user with password "password-<name>", a member of account default with role.
func (e *sessionEnv) user(t *testing.T, name string, role access.Role) {
	t.Helper()
	_, err := e.services.Users.Create(context.Background(), user.Spec{Username: name, Password: "password-" + name})
	require.NoError(t, err)
	_, _, err = e.services.Users.SetMember(context.Background(), "default", name, role)
	require.NoError(t, err)
}

// browser is a client that keeps the session cookie and the CSRF token, and sends what a browser on the API's own
// origin sends.
type browser struct {
	t      *testing.T
	h      http.Handler
	addr   string // RemoteAddr
	cookie string
	csrf   string
}

func (e *sessionEnv) browser(t *testing.T) *browser {
	return &browser{t: t, h: e.router, addr: "192.0.2.1:40000"}
}

// request is one request of the browser; opts change it before it is sent.
func (b *browser) request(method, url string, body string, opts ...func(*http.Request)) *httptest.ResponseRecorder {
	b.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := localRequest(method, url, r)
	req.RemoteAddr = b.addr
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if method != http.MethodGet {
		req.Header.Set("Origin", "http://localhost")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	if b.cookie != "" {
		req.AddCookie(&http.Cookie{Name: web.SessionCookie, Value: b.cookie})
	}
	if b.csrf != "" {
		req.Header.Set(web.CSRFHeader, b.csrf)
	}
	for _, o := range opts {
		o(req)
	}
	rec := httptest.NewRecorder()
	b.h.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		if c.Name == web.SessionCookie {
			b.cookie = c.Value
			if c.MaxAge < 0 {
				b.cookie = ""
			}
		}
	}
	return rec
}

// signIn signs in as name with password and keeps the session; it returns the answer.
func (b *browser) signIn(name, password string) *httptest.ResponseRecorder {
	b.t.Helper()
	body, _ := json.Marshal(map[string]string{"username": name, "password": password})
	rec := b.request(http.MethodPost, "/api/v1/session", string(body))
	if rec.Code == http.StatusCreated {
		var s struct{ CSRFToken string }
		require.NoError(b.t, json.Unmarshal(rec.Body.Bytes(), &s))
		b.csrf = s.CSRFToken
	}
	return rec
}

func header(k, v string) func(*http.Request) {
	return func(r *http.Request) {
		if v == "" {
			r.Header.Del(k)
			return
		}
		r.Header.Set(k, v)
	}
}

func problemCode(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var p web.Problem
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p), "answer: %s", rec.Body)
	return p.Code
}

// TestSessionLifecycle: sign in sets an HttpOnly, SameSite=Lax cookie that authenticates like a key; the session
// is listed, answered with its CSRF token, and ends at sign-out, after the idle timeout, at its absolute expiry,
// and when its user is disabled or its password changes; a disabled user cannot sign in.
func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dialect string) {
		e := newSessionEnv(t, dialect, web.Config{})
		e.user(t, "alice", access.Editor)
		b := e.browser(t)

		rec := b.signIn("alice", "password-alice")
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		cookies := rec.Result().Cookies()
		require.Len(t, cookies, 1)
		c := cookies[0]
		assert.Equal(t, web.SessionCookie, c.Name)
		assert.True(t, c.HttpOnly, "HttpOnly")
		assert.Equal(t, http.SameSiteLaxMode, c.SameSite)
		assert.Equal(t, "/", c.Path)
		assert.False(t, c.Secure, "no https public URL")
		assert.Greater(t, c.MaxAge, 0)
		assert.NotEmpty(t, b.csrf)
		assert.NotContains(t, rec.Body.String(), b.cookie, "the token is only in the cookie")

		rec = b.request(http.MethodGet, "/api/v1/me", "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		assert.Contains(t, rec.Body.String(), `"kind":"user"`)
		assert.Contains(t, rec.Body.String(), `"name":"alice"`)
		rec = b.request(http.MethodGet, "/api/v1/session", "")
		require.Equal(t, http.StatusOK, rec.Code)
		assert.Contains(t, rec.Body.String(), `"csrfToken":"`+b.csrf+`"`)
		assert.Contains(t, rec.Body.String(), `"clientAddress":"192.0.2.1"`)
		rec = b.request(http.MethodPost, "/api/v1/buses", `{"name": "orders"}`)
		require.Equal(t, http.StatusCreated, rec.Code, "an editor's session writes: %s", rec.Body)

		// A second session of the same user, listed by the first.
		other := e.browser(t)
		other.addr = "198.51.100.7:5000"
		require.Equal(t, http.StatusCreated, other.signIn("alice", "password-alice").Code)
		rec = b.request(http.MethodGet, "/api/v1/me/sessions", "")
		require.Equal(t, http.StatusOK, rec.Code)
		var list struct {
			Sessions []struct {
				ID, ClientAddress, CSRFToken string
				Current                      bool
			}
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &list))
		require.Len(t, list.Sessions, 2)
		currents := 0
		for _, s := range list.Sessions {
			assert.Empty(t, s.CSRFToken, "a list holds no CSRF token")
			if s.Current {
				currents++
				assert.Equal(t, "192.0.2.1", s.ClientAddress)
			}
		}
		assert.Equal(t, 1, currents)

		// Sign-out ends the session and clears the cookie; the token, sent again, authenticates no more.
		token := other.cookie
		rec = other.request(http.MethodDelete, "/api/v1/session", "")
		require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
		assert.Empty(t, other.cookie, "the cookie is cleared")
		other.cookie = token
		assert.Equal(t, http.StatusUnauthorized, other.request(http.MethodGet, "/api/v1/me", "").Code)

		// Idle timeout: a use within it keeps the session; none for 30 minutes ends it.
		e.clock.Add(20 * time.Minute)
		require.Equal(t, http.StatusOK, b.request(http.MethodGet, "/api/v1/me", "").Code, "used within the idle timeout")
		e.clock.Add(20 * time.Minute)
		require.Equal(t, http.StatusOK, b.request(http.MethodGet, "/api/v1/me", "").Code, "the last use moved the idle deadline")
		e.clock.Add(31 * time.Minute)
		rec = b.request(http.MethodGet, "/api/v1/me", "")
		assert.Equal(t, http.StatusUnauthorized, rec.Code, "idle for longer than the timeout")
		assert.Equal(t, "Unauthenticated", problemCode(t, rec))

		// Absolute expiry: used every 20 minutes, it still ends 2 hours after sign-in.
		require.Equal(t, http.StatusCreated, b.signIn("alice", "password-alice").Code)
		for range 5 {
			e.clock.Add(20 * time.Minute)
			require.Equal(t, http.StatusOK, b.request(http.MethodGet, "/api/v1/me", "").Code)
		}
		e.clock.Add(21 * time.Minute) // 2h01 after sign-in
		assert.Equal(t, http.StatusUnauthorized, b.request(http.MethodGet, "/api/v1/me", "").Code, "past the maximum age")

		// An administrator's change of the password ends the user's sessions.
		require.Equal(t, http.StatusCreated, b.signIn("alice", "password-alice").Code)
		resp := e.do(t, http.MethodPatch, "/api/v1/users/alice", nil, map[string]any{"password": "another-password"})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
		assert.Equal(t, http.StatusUnauthorized, b.request(http.MethodGet, "/api/v1/me", "").Code, "password changed")
		assert.Equal(t, http.StatusUnauthorized, b.signIn("alice", "password-alice").Code, "the old password")
		require.Equal(t, http.StatusCreated, b.signIn("alice", "another-password").Code)

		// The user's own change needs the current password and ends every session, this one included.
		rec = b.request(http.MethodPut, "/api/v1/me/password", `{"currentPassword": "wrong-password", "newPassword": "third-password"}`)
		assert.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
		rec = b.request(http.MethodPut, "/api/v1/me/password", `{"currentPassword": "another-password", "newPassword": "short"}`)
		assert.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
		assert.Contains(t, rec.Body.String(), `"field":"newPassword"`)
		rec = b.request(http.MethodPut, "/api/v1/me/password", `{"currentPassword": "another-password", "newPassword": "third-password"}`)
		require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
		assert.Empty(t, b.cookie, "the cookie is cleared")
		require.Equal(t, http.StatusCreated, b.signIn("alice", "third-password").Code)

		// Disabling the user ends its sessions, and it cannot sign in.
		disabled := true
		resp = e.do(t, http.MethodPatch, "/api/v1/users/alice", nil, map[string]any{"disabled": disabled})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
		assert.Equal(t, http.StatusUnauthorized, b.request(http.MethodGet, "/api/v1/me", "").Code, "disabled")
		rec = b.signIn("alice", "third-password")
		assert.Equal(t, http.StatusUnauthorized, rec.Code, "a disabled user signs in no more")
		assert.Contains(t, rec.Body.String(), session.InvalidCredentialsMessage)
	})
}

// TestSessionCookieSecure: the cookie is Secure when a public URL is https.
func TestSessionCookieSecure(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, persistence.SQLite, web.Config{PublicURLs: []string{"https://eb.example.com"}})
	e.user(t, "alice", access.Viewer)
	b := e.browser(t)
	rec := b.signIn("alice", "password-alice")
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Len(t, rec.Result().Cookies(), 1)
	assert.True(t, rec.Result().Cookies()[0].Secure)
}

// TestSessionRevocationReachesEveryReplica: two replicas on one database, each with the default cache; a session
// ended on one is refused by the other within the cache's lifetime.
func TestSessionRevocationReachesEveryReplica(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dialect string) {
		e := newSessionEnv(t, dialect, web.Config{})
		e.user(t, "alice", access.Viewer)
		second := e.services
		second.Sessions = newSessionService(e.env, e.clock, 0) // session.DefaultCacheTTL
		second.Sessions.Clock = nil                            // the real clock: the cache's lifetime is real time
		replica2 := newRouter(web.Config{Logger: slog.New(slog.DiscardHandler)}, second)

		b := e.browser(t)
		require.Equal(t, http.StatusCreated, b.signIn("alice", "password-alice").Code)
		b2 := &browser{t: t, h: replica2, addr: b.addr, cookie: b.cookie, csrf: b.csrf}
		require.Equal(t, http.StatusOK, b2.request(http.MethodGet, "/api/v1/buses", "").Code, "replica 2 knows the session (and caches it)")

		rec := b.request(http.MethodGet, "/api/v1/me/sessions", "")
		var list struct{ Sessions []struct{ ID string } }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &list))
		require.Len(t, list.Sessions, 1)
		rec = b.request(http.MethodDelete, "/api/v1/me/sessions/"+list.Sessions[0].ID, "")
		require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
		revoked := time.Now()
		for b2.request(http.MethodGet, "/api/v1/buses", "").Code != http.StatusUnauthorized {
			require.Less(t, time.Since(revoked), time.Second, "replica 2 still accepts the revoked session after a second")
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("%s: replica 2 refused the session %s after its revocation on replica 1", dialect, time.Since(revoked).Round(time.Millisecond))
	})
}

// TestSessionsAreTheirUsers: a user cannot end another user's session (404, as for no session); an API key has no
// sessions and no password.
func TestSessionsAreTheirUsers(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, persistence.SQLite, web.Config{})
	e.user(t, "alice", access.Admin)
	e.user(t, "bob", access.Admin)
	alice, bob := e.browser(t), e.browser(t)
	require.Equal(t, http.StatusCreated, alice.signIn("alice", "password-alice").Code)
	require.Equal(t, http.StatusCreated, bob.signIn("bob", "password-bob").Code)
	var bobs struct{ ID string }
	require.NoError(t, json.Unmarshal(bob.request(http.MethodGet, "/api/v1/session", "").Body.Bytes(), &bobs))

	rec := alice.request(http.MethodDelete, "/api/v1/me/sessions/"+bobs.ID, "")
	assert.Equal(t, http.StatusNotFound, rec.Code)
	assert.Equal(t, "SessionNotFound", problemCode(t, rec))
	assert.Equal(t, http.StatusOK, bob.request(http.MethodGet, "/api/v1/me", "").Code, "bob's session lives on")

	resp := e.do(t, http.MethodGet, "/api/v1/me/sessions", nil, nil)
	assert.Equal(t, http.StatusOK, resp.Status)
	assert.JSONEq(t, `{"sessions": []}`, string(resp.Body))
	resp = e.do(t, http.MethodGet, "/api/v1/session", nil, nil)
	assert.Equal(t, http.StatusNotFound, resp.Status, "a key's request has no session")
	resp = e.do(t, http.MethodPut, "/api/v1/me/password", nil, map[string]any{"currentPassword": "x", "newPassword": "y"})
	assert.Equal(t, http.StatusConflict, resp.Status)
	assert.Contains(t, string(resp.Body), "NotAUser")
}

// TestCSRF: a state-changing request that the session cookie authenticates needs the session's CSRF token and the
// API's own origin; a safe one needs neither; a key-authenticated one needs neither; signing in from another
// site is refused.
func TestCSRF(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, persistence.SQLite, web.Config{PublicURLs: []string{"https://eb.example.com"}})
	e.user(t, "alice", access.Admin)
	b := e.browser(t)
	require.Equal(t, http.StatusCreated, b.signIn("alice", "password-alice").Code)

	create := func(name string, opts ...func(*http.Request)) *httptest.ResponseRecorder {
		return b.request(http.MethodPost, "/api/v1/buses", `{"name": "`+name+`"}`, opts...)
	}
	for _, tc := range []struct {
		name   string
		opts   []func(*http.Request)
		status int
		detail string
	}{
		{"token and same origin", nil, http.StatusCreated, ""},
		{"no token", []func(*http.Request){header(web.CSRFHeader, "")}, http.StatusForbidden, "must send the session's CSRF token"},
		{"another session's token", []func(*http.Request){header(web.CSRFHeader, session.CSRFToken("ebs_x"))}, http.StatusForbidden, "is not this session's"},
		{"cross-site by Sec-Fetch-Site", []func(*http.Request){header("Sec-Fetch-Site", "cross-site")}, http.StatusForbidden, "from another site"},
		{"same-site is not same-origin", []func(*http.Request){header("Sec-Fetch-Site", "same-site")}, http.StatusForbidden, "from another site"},
		{"foreign Origin without Sec-Fetch-Site", []func(*http.Request){header("Sec-Fetch-Site", ""), header("Origin", "https://evil.example")},
			http.StatusForbidden, "comes from the origin"},
		{"the public URL's origin", []func(*http.Request){header("Sec-Fetch-Site", ""), header("Origin", "https://eb.example.com")}, http.StatusCreated, ""},
		{"neither Origin nor Sec-Fetch-Site", []func(*http.Request){header("Sec-Fetch-Site", ""), header("Origin", "")}, http.StatusForbidden, "must say where it comes from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := create("b"+strings.ReplaceAll(strings.ToLower(tc.name[:4]), " ", ""), tc.opts...)
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			if tc.detail != "" {
				assert.Equal(t, web.CodeCrossSiteRequestRefused, problemCode(t, rec))
				assert.Contains(t, rec.Body.String(), tc.detail)
			}
		})
	}
	// A safe request needs no token.
	assert.Equal(t, http.StatusOK, b.request(http.MethodGet, "/api/v1/buses", "", header(web.CSRFHeader, ""),
		header("Sec-Fetch-Site", "cross-site")).Code)
	// A key needs no token, whatever the origin: a cross-site page cannot send it.
	resp := e.do(t, http.MethodPost, "/api/v1/buses", map[string]string{"Origin": "https://evil.example"}, map[string]any{"name": "bykey"})
	assert.Equal(t, http.StatusCreated, resp.Status, string(resp.Body))
	// Signing in from another site (login CSRF) is refused; a program that sends no Origin signs in.
	other := e.browser(t)
	body := `{"username": "alice", "password": "password-alice"}`
	rec := other.request(http.MethodPost, "/api/v1/session", body, header("Sec-Fetch-Site", "cross-site"))
	assert.Equal(t, http.StatusForbidden, rec.Code)
	rec = other.request(http.MethodPost, "/api/v1/session", body, header("Sec-Fetch-Site", ""), header("Origin", ""))
	assert.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
}

// TestBodiesAreJSON: a resource endpoint answers 415 to a body that is not JSON (what a cross-site form sends), in
// both dialects; bodiless requests and +json types pass; PutEvents in binary mode and webhooks take any type.
func TestBodiesAreJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	for _, tc := range []struct {
		name, method, url, ctype, body string
		status                         int
	}{
		{"text/plain on a v1 resource", http.MethodPost, "/api/v1/buses", "text/plain", `{"name": "a"}`, http.StatusUnsupportedMediaType},
		{"a form on a v1 resource", http.MethodPost, "/api/v1/buses", "application/x-www-form-urlencoded", `name=a`, http.StatusUnsupportedMediaType},
		{"no type on a v1 resource", http.MethodPost, "/api/v1/buses", "", `{"name": "a"}`, http.StatusUnsupportedMediaType},
		{"text/plain on a RocketMQ call", http.MethodPost, "/bus/createEventBus", "text/plain", `{"eventBusName": "a"}`, http.StatusUnsupportedMediaType},
		{"text/plain signing in", http.MethodPost, "/api/v1/session", "text/plain", `{"username": "a", "password": "b"}`, http.StatusUnsupportedMediaType},
		{"JSON with a charset", http.MethodPost, "/api/v1/buses", "application/json; charset=utf-8", `{"name": "b"}`, http.StatusCreated},
		{"a +json type", http.MethodPost, "/api/v1/buses", "application/merge-patch+json", `{"name": "c"}`, http.StatusCreated},
		{"bodiless POST", http.MethodPost, "/api/v1/buses/b/rules/none/enable", "", "", http.StatusNotFound},
		{"bodiless DELETE", http.MethodDelete, "/api/v1/buses/c", "", "", http.StatusNoContent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"Content-Type": tc.ctype}
			var body any
			if tc.body != "" {
				body = tc.body
			}
			var resp *response
			if tc.ctype == "" {
				resp = e.doNoType(t, tc.method, tc.url, tc.body)
			} else {
				resp = e.do(t, tc.method, tc.url, h, body)
			}
			require.Equal(t, tc.status, resp.Status, string(resp.Body))
			if tc.status == http.StatusUnsupportedMediaType {
				assert.Contains(t, string(resp.Body), "UnsupportedMediaType")
				assert.Contains(t, string(resp.Body), "JSON")
			}
		})
	}
	// Binary PutEvents with text/plain data is stored as it is.
	resp := e.do(t, http.MethodPost, "/api/v1/buses/b/events", map[string]string{"Content-Type": "text/plain",
		"ce-specversion": "1.0", "ce-id": "e1", "ce-source": "/t", "ce-type": "note"}, "hello, plain text")
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
	assert.Contains(t, string(resp.Body), `"failedEntryCount":0`)
	evs := e.storedEvents(t, "b")
	require.Len(t, evs, 1)
	assert.Equal(t, "text/plain", evs[0].DataContentType())
	assert.Equal(t, "hello, plain text", string(evs[0].Data()))
}

// doNoType sends body without a Content-Type.
func (e *env) doNoType(t *testing.T, method, url, body string) *response {
	t.Helper()
	req := localRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.adminKey)
	rec := httptest.NewRecorder()
	e.router.ServeHTTP(rec, req)
	return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// TestHostCheck: a Host that is not a public URL's, a loopback name or an IP address is answered 421 (DNS
// rebinding), on the API and the console alike; health and webhooks answer every Host.
func TestHostCheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	r := newRouter(web.Config{Logger: slog.New(slog.DiscardHandler), PublicURLs: []string{"https://eb.example.com"}}, e.services)
	hook := e.do(t, http.MethodPost, "/api/v1/buses", nil, map[string]any{"name": "orders"})
	require.Equal(t, http.StatusCreated, hook.Status)
	resp := e.do(t, http.MethodPost, "/api/v1/buses/orders/sources", nil, map[string]any{"name": "hook", "type": "http",
		"config": map[string]any{"http.methods": "POST"}})
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Body))
	var src struct{ Webhook struct{ Token string } }
	require.NoError(t, json.Unmarshal(resp.Body, &src))

	for _, tc := range []struct {
		host, method, path string
		status             int
	}{
		{"evil.example", http.MethodGet, "/api/v1/buses", http.StatusMisdirectedRequest},
		{"evil.example:8080", http.MethodGet, "/api/v1/buses", http.StatusMisdirectedRequest},
		{"evil.example", http.MethodPost, "/bus/listEventBuses", http.StatusMisdirectedRequest},
		{"evil.example", http.MethodGet, "/", http.StatusMisdirectedRequest},
		{"evil.example", http.MethodGet, "/swagger/index.html", http.StatusMisdirectedRequest},
		{"evil.example", http.MethodGet, "/healthz", http.StatusOK},
		{"evil.example", http.MethodGet, "/readyz", http.StatusOK},
		{"evil.example", http.MethodPost, "/api/v1/webhooks/" + src.Webhook.Token, http.StatusOK},
		{"eb.example.com", http.MethodGet, "/api/v1/buses", http.StatusOK},
		{"EB.Example.com:443", http.MethodGet, "/api/v1/buses", http.StatusOK},
		{"localhost:8080", http.MethodGet, "/api/v1/buses", http.StatusOK},
		{"127.0.0.1:8080", http.MethodGet, "/api/v1/buses", http.StatusOK},
		{"[::1]:8080", http.MethodGet, "/api/v1/buses", http.StatusOK},
		{"10.1.2.3", http.MethodGet, "/api/v1/buses", http.StatusOK},
	} {
		t.Run(tc.host+" "+tc.path, func(t *testing.T) {
			var body io.Reader
			if tc.method == http.MethodPost {
				body = strings.NewReader(`{}`)
			}
			req := httptest.NewRequest(tc.method, tc.path, body)
			req.Host = tc.host
			req.Header.Set("Authorization", "Bearer "+e.adminKey)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			if tc.status == http.StatusMisdirectedRequest {
				assert.Equal(t, web.CodeMisdirectedRequest, problemCode(t, rec))
				assert.Contains(t, rec.Body.String(), "--public-url")
				assert.Contains(t, rec.Body.String(), "eb.example.com")
			}
		})
	}
}

// TestSignInThrottle: after three failures from one address, attempts on the user name must wait 1 s, then 2 s,
// then 4 s after the latest failure (429 with Retry-After, the password unchecked); a success resets the count.
// Another address is not slowed by the first's failures, but every attempt on a user name that failed from many
// addresses is held a little (the soft delay), and nothing locks the user out. An unknown user and a wrong
// password answer alike, throttling included.
func TestSignInThrottle(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dialect string) {
		e := newSessionEnv(t, dialect, web.Config{})
		e.user(t, "alice", access.Viewer)

		type answer struct {
			status     int
			code       string
			detail     string
			retryAfter string
		}
		attempt := func(b *browser, name, password string) answer {
			rec := b.signIn(name, password)
			a := answer{status: rec.Code, retryAfter: rec.Header().Get("Retry-After")}
			if rec.Code >= 400 {
				var p web.Problem
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
				a.code, a.detail = p.Code, p.Detail
			}
			return a
		}
		sequence := func(name string) []answer {
			b := e.browser(t)
			b.addr = "203.0.113." + map[string]string{"alice": "1", "mallory": "2"}[name] + ":1000"
			var out []answer
			for range 3 {
				out = append(out, attempt(b, name, "wrong-password"))
			}
			out = append(out, attempt(b, name, "wrong-password")) // too soon: 1 s
			e.clock.Add(time.Second)
			out = append(out, attempt(b, name, "wrong-password")) // counted
			out = append(out, attempt(b, name, "wrong-password")) // too soon: 2 s
			e.clock.Add(2 * time.Second)
			out = append(out, attempt(b, name, "wrong-password")) // counted
			out = append(out, attempt(b, name, "wrong-password")) // too soon: 4 s
			e.clock.Add(4 * time.Second)
			return out
		}
		known := sequence("alice")
		unknown := sequence("mallory")
		assert.Equal(t, known, unknown, "an unknown user and a wrong password answer alike")
		wrong := answer{status: http.StatusUnauthorized, code: "Unauthenticated", detail: session.InvalidCredentialsMessage}
		for i, want := range []answer{wrong, wrong, wrong,
			{status: 429, code: "TooManySignInAttempts", retryAfter: "1"}, wrong,
			{status: 429, code: "TooManySignInAttempts", retryAfter: "2"}, wrong,
			{status: 429, code: "TooManySignInAttempts", retryAfter: "4"}} {
			got := known[i]
			if want.status == 429 {
				assert.Contains(t, got.detail, "too many failed sign-ins", "attempt %d", i+1)
				got.detail = ""
			}
			assert.Equal(t, want, got, "attempt %d", i+1)
		}

		// Another address is not throttled by the first's failures, only held by the soft delay.
		e.mu.Lock()
		e.sleeps = nil
		e.mu.Unlock()
		elsewhere := e.browser(t)
		elsewhere.addr = "198.51.100.9:2000"
		require.Equal(t, http.StatusCreated, attempt(elsewhere, "alice", "password-alice").status, "no lock-out from elsewhere")
		e.mu.Lock()
		assert.Equal(t, []time.Duration{200 * time.Millisecond}, e.sleeps, "5 failures in all: 2 over the free 3, 100 ms each")
		e.mu.Unlock()

		// The right password from the throttled address, after the wait, signs in and resets its count.
		b := e.browser(t)
		b.addr = "203.0.113.1:1000"
		require.Equal(t, http.StatusCreated, attempt(b, "alice", "password-alice").status)
		for range 3 {
			assert.Equal(t, wrong, attempt(b, "alice", "wrong-password"), "the count starts again")
		}
		assert.Equal(t, http.StatusTooManyRequests, attempt(b, "alice", "wrong-password").status)

		// Counts older than the window are forgotten.
		e.clock.Add(session.DefaultThrottle.Window + time.Second)
		assert.Equal(t, wrong, attempt(b, "alice", "wrong-password"))
	})
}

// TestSignInThrottleHoldsUnderConcurrency: attempts sent together from one address cannot pass the throttle
// together: the count is taken in the database before the password is checked, so at most the free attempts run.
func TestSignInThrottleHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dialect string) {
		e := newSessionEnv(t, dialect, web.Config{})
		e.user(t, "alice", access.Viewer)
		var wg sync.WaitGroup
		codes := make(chan int, 20)
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b := e.browser(t)
				codes <- b.request(http.MethodPost, "/api/v1/session", `{"username": "alice", "password": "wrong-password"}`).Code
			}()
		}
		wg.Wait()
		close(codes)
		counts := map[int]int{}
		for c := range codes {
			counts[c]++
		}
		assert.Equal(t, map[int]int{http.StatusUnauthorized: 3, http.StatusTooManyRequests: 17}, counts)
	})
}
