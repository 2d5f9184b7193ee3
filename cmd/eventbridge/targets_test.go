package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// guarded is a receiver that accepts a request only when check passes (else 401), recording the ids it accepted.
type guarded struct {
	srv     *httptest.Server
	refused atomic.Int64
	mu      sync.Mutex
	ids     map[string]int
	headers map[string]string // last accepted request's ce-ebdlq* headers
}

func newGuarded(t *testing.T, check func(r *http.Request) bool) *guarded {
	g := &guarded{ids: map[string]int{}, headers: map[string]string{}}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !check(r) {
			g.refused.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		g.mu.Lock()
		g.ids[r.Header.Get("ce-id")]++
		for k, v := range r.Header {
			if strings.HasPrefix(strings.ToLower(k), "ce-ebdlq") {
				g.headers[strings.ToLower(k)] = v[0]
			}
		}
		g.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *guarded) has(ids []string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, id := range ids {
		if g.ids[id] == 0 {
			return false
		}
	}
	return true
}

// oauthServer issues client-credentials tokens that expire after ttl and checks them.
type oauthServer struct {
	srv    *httptest.Server
	issued atomic.Int64
	mu     sync.Mutex
	tokens map[string]time.Time
}

func newOAuthServer(t *testing.T, ttl time.Duration) *oauthServer {
	o := &oauthServer{tokens: map[string]time.Time{}}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if err := r.ParseForm(); err != nil || !ok || user != "client-1" || pass != "client-secret-1" ||
			r.Form.Get("grant_type") != "client_credentials" || r.Form.Get("audience") != "orders-api" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		n := o.issued.Add(1)
		token := fmt.Sprintf("token-%d", n)
		o.mu.Lock()
		o.tokens[token] = time.Now().Add(ttl)
		o.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": token, "token_type": "Bearer",
			"expires_in": int(ttl.Seconds())})
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *oauthServer) valid(r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	o.mu.Lock()
	defer o.mu.Unlock()
	exp, known := o.tokens[token]
	return ok && known && time.Now().Before(exp)
}

// TestTargetTypesEndToEnd: a bus target forwards to another bus, a log target runs, a target's dead letters go to
// its dead-letter bus with the reason as extensions, and API destinations deliver with basic, API key and OAuth
// client-credentials authorization, the OAuth token expiring during the test.
func TestTargetTypesEndToEnd(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)

	for _, b := range []string{"orders", "audit", "dlq"} {
		a.must("POST", "/api/v1/buses", map[string]any{"name": b}, 201)
	}
	audited := newGuarded(t, func(*http.Request) bool { return true })
	deadLetters := newGuarded(t, func(*http.Request) bool { return true })
	basic := newGuarded(t, func(r *http.Request) bool {
		u, p, ok := r.BasicAuth()
		return ok && u == "svc" && p == "basic-password-1" && r.URL.Path == "/orders/"+r.Header.Get("ce-id")+"/items"
	})
	apiKey := newGuarded(t, func(r *http.Request) bool {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		return r.Header.Get("X-Api-Key") == "api-key-value-1" && r.Header.Get("X-Token") == "tok-secret-9" &&
			r.Header.Get("X-Team") == "shop" && body["origin"] == "eventbridge" && body["sig"] == "body-secret-7" &&
			body["n"] != nil && r.URL.Query().Get("v") == "2"
	})
	oauth := newOAuthServer(t, time.Second)
	bearer := newGuarded(t, oauth.valid)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusBadRequest)
	}))
	defer refusing.Close()

	// Connections and API destinations.
	a.must("POST", "/api/v1/connections", map[string]any{"name": "basic", "authorizationType": "BASIC",
		"authParameters": map[string]any{"basicAuthParameters": map[string]any{"username": "svc", "password": "basic-password-1"}}}, 201)
	a.must("POST", "/api/v1/connections", map[string]any{"name": "key", "authorizationType": "API_KEY",
		"authParameters": map[string]any{"apiKeyAuthParameters": map[string]any{"apiKeyName": "X-Api-Key", "apiKeyValue": "api-key-value-1"},
			"invocationHttpParameters": map[string]any{
				"headerParameters": []any{
					map[string]any{"key": "X-Team", "value": "shop"},
					map[string]any{"key": "X-Token", "value": "tok-secret-9", "isValueSecret": true}},
				"queryStringParameters": []any{map[string]any{"key": "v", "value": "2"}},
				"bodyParameters": []any{
					map[string]any{"key": "origin", "value": "eventbridge"},
					map[string]any{"key": "sig", "value": "body-secret-7", "isValueSecret": true}}}}}, 201)
	a.must("POST", "/api/v1/connections", map[string]any{"name": "oauth", "authorizationType": "OAUTH_CLIENT_CREDENTIALS",
		"authParameters": map[string]any{"oauthParameters": map[string]any{"authorizationEndpoint": oauth.srv.URL + "/token",
			"httpMethod": "POST", "clientParameters": map[string]any{"clientId": "client-1", "clientSecret": "client-secret-1"},
			"oauthHttpParameters": map[string]any{"bodyParameters": []any{
				map[string]any{"key": "audience", "value": "orders-api", "isValueSecret": true}}}}}}, 201)
	for name, url := range map[string]string{"basic": basic.srv.URL + "/orders/*/items", "key": apiKey.srv.URL + "/orders",
		"oauth": bearer.srv.URL + "/orders"} {
		a.must("POST", "/api/v1/api-destinations", map[string]any{"name": name + "-api", "connection": name,
			"invocationEndpoint": url, "httpMethod": "POST"}, 201)
	}

	// A rule on orders with every kind of target; audit forwards to a receiver; dlq catches dead letters.
	targets := []any{
		map[string]any{"name": "to-audit", "type": "bus", "config": map[string]any{"bus": "audit"}},
		map[string]any{"name": "logged", "type": "log"},
		map[string]any{"name": "refused", "type": "http", "config": map[string]any{"url": refusing.URL},
			"deadLetterConfig": map[string]any{"bus": "dlq"}},
		map[string]any{"name": "basic", "type": "api-destination", "config": map[string]any{"apiDestination": "basic-api",
			"pathParameterValues": []any{"$.id"}}},
		map[string]any{"name": "key", "type": "api-destination", "config": map[string]any{"apiDestination": "key-api"}},
	}
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "all",
		"eventPattern": map[string]any{"type": []any{"order.created"}}, "targets": targets}, 201)
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "oauth",
		"eventPattern": map[string]any{"type": []any{"order.created"}},
		"targets":      []any{map[string]any{"name": "oauth", "type": "api-destination", "config": map[string]any{"apiDestination": "oauth-api"}}}}, 201)
	a.must("POST", "/api/v1/buses/audit/rules", map[string]any{"name": "fwd",
		"eventPattern": map[string]any{"type": []any{"order.created"}},
		"targets":      []any{map[string]any{"name": "hook", "type": "http", "config": map[string]any{"url": audited.srv.URL}}}}, 201)
	a.must("POST", "/api/v1/buses/dlq/rules", map[string]any{"name": "caught",
		"eventPattern": map[string]any{"ebdlqconnector": []any{map[string]any{"exists": true}}},
		"targets":      []any{map[string]any{"name": "hook", "type": "http", "config": map[string]any{"url": deadLetters.srv.URL}}}}, 201)

	put := func(prefix string) []string {
		var ids []string
		var batch []map[string]any
		for i := range 5 {
			id := fmt.Sprintf("%s-%d", prefix, i)
			ids = append(ids, id)
			batch = append(batch, event(id, "shop", "order.created", map[string]any{"n": i}))
		}
		a.putBatch("orders", batch)
		return ids
	}
	first := put("first")
	for name, g := range map[string]*guarded{"audit": audited, "dead letters": deadLetters, "basic": basic, "api key": apiKey, "oauth": bearer} {
		require.Eventuallyf(t, func() bool { return g.has(first) }, 30*time.Second, 20*time.Millisecond, "%s received the events", name)
	}
	assert.Zero(t, basic.refused.Load()+apiKey.refused.Load(), "credentials were right from the first call")
	deadLetters.mu.Lock()
	assert.Contains(t, deadLetters.headers["ce-ebdlqreason"], "400")
	assert.Equal(t, "1", deadLetters.headers["ce-ebdlqattempts"])
	assert.Equal(t, "eb.default.orders.all.refused", deadLetters.headers["ce-ebdlqconnector"])
	deadLetters.mu.Unlock()

	// The OAuth token expires: the next events are delivered after a refused call and a new token.
	time.Sleep(1500 * time.Millisecond)
	second := put("second")
	require.Eventually(t, func() bool { return bearer.has(second) }, 30*time.Second, 20*time.Millisecond)
	assert.GreaterOrEqual(t, oauth.issued.Load(), int64(2), "a new token was fetched after the first expired")

	st := a.must("GET", "/api/v1/buses/orders/rules/all/targets/logged", nil, 200)
	assert.Contains(t, string(st), `"RUNNING"`)

	// No secret given through the API is readable in the KV store of the workers (connector configs, task
	// configs, status) or in the database file: they hold enc:v1 ciphertext only.
	secrets := []string{"basic-password-1", "api-key-value-1", "client-secret-1", "tok-secret-9", "body-secret-7", "orders-api"}
	js, err := jetstream.New(m.nc)
	require.NoError(t, err)
	ctx := context.Background()
	ciphertexts := 0
	for bucket := range js.KeyValueStoreNames(ctx).Name() {
		kv, err := js.KeyValue(ctx, bucket)
		require.NoError(t, err)
		keys, err := kv.ListKeys(ctx)
		require.NoError(t, err)
		for k := range keys.Keys() {
			e, err := kv.Get(ctx, k)
			if err != nil {
				continue // expired meanwhile (members, leases)
			}
			for _, secret := range secrets {
				assert.NotContains(t, string(e.Value()), secret, "KV %s %s", bucket, k)
			}
			ciphertexts += strings.Count(string(e.Value()), "enc:v2:")
		}
	}
	assert.GreaterOrEqual(t, ciphertexts, 3, "the connector configs hold the secrets as ciphertext")
	files, err := filepath.Glob(filepath.Join(m.Config.DataDir, "eventbridge.db*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, secret := range secrets {
			assert.NotContains(t, string(raw), secret, "database file %s", f)
		}
	}
}

// TestSecretHeadersEndToEnd: an http target's Authorization header and the headers it names secret reach the
// receiver in clear, while the API answers them *** and the connector config (the worker REST API, the KV) holds
// them only sealed, in the http sink's secret key.
func TestSecretHeadersEndToEnd(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	got := make(chan http.Header, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	a.must("POST", "/api/v1/buses", map[string]any{"name": "orders"}, 201)
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
	out := a.must("PUT", "/api/v1/buses/orders/rules/all/targets/hook", map[string]any{"type": "http", "config": map[string]any{
		"url": srv.URL, "headers": map[string]any{"Authorization": "Bearer wire-secret", "X-Sig": "sig-secret", "X-Team": "shop"},
		"secretHeaders": []string{"X-Sig"}}}, 201)
	assert.NotContains(t, string(out), "wire-secret")
	assert.NotContains(t, string(out), "sig-secret")

	cfg, err := workerClient(m).GetConnectorConfig(context.Background(), "eb.default.orders.all.hook")
	require.NoError(t, err)
	for k, v := range cfg {
		assert.NotContainsf(t, v, "wire-secret", "the worker's config key %s", k)
		assert.NotContainsf(t, v, "sig-secret", "the worker's config key %s", k)
	}
	assert.True(t, strings.HasPrefix(cfg["secret_headers"], "enc:"), "the secret headers go sealed: %v", cfg)
	assert.JSONEq(t, `{"X-Team":"shop"}`, cfg["headers"])

	a.putBatch("orders", []map[string]any{event("h1", "shop", "t", nil)})
	select {
	case h := <-got:
		assert.Equal(t, "Bearer wire-secret", h.Get("Authorization"), "used in clear on the wire")
		assert.Equal(t, "sig-secret", h.Get("X-Sig"))
		assert.Equal(t, "shop", h.Get("X-Team"))
	case <-time.After(30 * time.Second):
		t.Fatal("the target received nothing")
	}
}
