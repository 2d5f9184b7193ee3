package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/accesskey"
	"github.com/eventbridge-go/eventbridge/domain/apikey"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/web/aws"
	"github.com/eventbridge-go/eventbridge/web/rest"
	"github.com/eventbridge-go/eventbridge/web/rocketmq"
)

// matrixAccount is the account whose keys of every role the permission matrix is tried with.
const matrixAccount = "acme"

// pathParam matches the parameters of a gin path.
var pathParam = regexp.MustCompile(`[:*][A-Za-z]+`)

// requestOf is a request for op with every path parameter filled in: the account is matrixAccount, the rest
// names that exist nowhere (an operation the caller may call answers what it answers, 404 included, never 401 or
// 403). An operation of the Amazon EventBridge API is "/#AWSEvents.<Operation>" (Operation.Route), which env.do
// sends as that API's request.
func requestOf(op web.Operation) (method, url string) {
	url = pathParam.ReplaceAllStringFunc(op.Route(), func(p string) string {
		switch p {
		case ":account":
			return matrixAccount
		case ":task":
			return "0"
		}
		return "nope"
	})
	return op.Method, url
}

// TestPermissionMatrix: every operation of every dialect, called with a key of every role, is let through exactly
// when the role has the operation's permission (docs/identity.md); otherwise it is answered 403 Forbidden naming
// the permission, before the handler runs (on the Amazon EventBridge API: 400 AccessDeniedException, as AWS
// answers). An instance administrator's key passes everything.
func TestPermissionMatrix(t *testing.T) {
	t.Parallel()
	e := withDeadLetters(withRuntime(newEnv(t, natsServer(t), persistence.SQLite)))
	e.exactAccounts = true
	keys := map[access.Role]string{}
	for _, r := range access.Roles {
		keys[r] = keyOf(t, e.services, matrixAccount, r)
	}
	tried := 0
	for _, d := range allDialects() {
		for _, op := range d.Operations {
			if op.Public {
				continue
			}
			require.Truef(t, op.Permission.Valid(), "%s names a permission", op.Name)
			method, url := requestOf(op)
			callers := map[string]string{"instance administrator": e.adminKey}
			for r, k := range keys {
				callers[string(r)] = k
			}
			for who, key := range callers {
				if d.Name == "aws" && who == "instance administrator" {
					// Access keys, the Amazon EventBridge API's only credential, belong to one account with one role:
					// an instance administrator has none (env.do sends its requests unsigned).
					continue
				}
				allowed := who == "instance administrator"
				if !allowed {
					role := access.Role(who)
					switch op.Permission.Scope() {
					case access.ScopeAccount:
						allowed = role.Grants(op.Permission)
					case access.ScopeAnyone:
						allowed = true
					}
				}
				resp := e.do(t, method, url, map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}, "{}")
				tried++
				if d.Name == "aws" {
					checkAWSPermission(t, op, who, allowed, resp)
					continue
				}
				assert.NotEqualf(t, http.StatusUnauthorized, resp.Status, "%s %s as %s: %s", op.Name, url, who, resp.Body)
				if allowed {
					assert.NotEqualf(t, http.StatusForbidden, resp.Status, "%s (%s) as %s is allowed: %s", op.Name, op.Permission, who, resp.Body)
					continue
				}
				if assert.Equalf(t, http.StatusForbidden, resp.Status, "%s (%s) as %s is refused: %s", op.Name, op.Permission, who, resp.Body) {
					assert.Equal(t, "Forbidden", codeOf(t, resp))
					assert.Contains(t, string(resp.Body), string(op.Permission), "the answer names the permission")
				}
			}
		}
	}
	assert.Greater(t, tried, 6*100, "every operation was tried with every role")
}

// awsAuthenticationFailures are the exceptions of the Amazon EventBridge API for a request that its signature does
// not authenticate.
var awsAuthenticationFailures = []string{"MissingAuthenticationTokenException", "IncompleteSignatureException",
	"InvalidSignatureException", "UnrecognizedClientException"}

// checkAWSPermission checks the answer of the Amazon EventBridge API to a signed call of op by who: authenticated,
// and refused with 400 AccessDeniedException naming the permission exactly when allowed is false.
func checkAWSPermission(t *testing.T, op web.Operation, who string, allowed bool, resp *response) {
	t.Helper()
	typ := awsTypeOf(t, resp)
	assert.NotContainsf(t, awsAuthenticationFailures, typ, "%s as %s is authenticated: %s", op.Name, who, resp.Body)
	assert.NotEqualf(t, http.StatusForbidden, resp.Status, "%s as %s is authenticated: %s", op.Name, who, resp.Body)
	if allowed {
		assert.NotEqualf(t, "AccessDeniedException", typ, "%s (%s) as %s is allowed: %s", op.Name, op.Permission, who, resp.Body)
		return
	}
	if assert.Equalf(t, http.StatusBadRequest, resp.Status, "%s (%s) as %s is refused: %s", op.Name, op.Permission, who, resp.Body) {
		assert.Equal(t, "AccessDeniedException", typ)
		assert.Contains(t, string(resp.Body), string(op.Permission), "the answer names the permission")
	}
}

// TestOperationWithoutPermissionPanics: an operation that is not public and names no permission cannot be served:
// building the router fails, so no route is ever unguarded by mistake.
func TestOperationWithoutPermissionPanics(t *testing.T) {
	t.Parallel()
	bare := func(web.Config, web.Services) web.Dialect {
		return web.Dialect{Name: "bare", WriteError: func(c *gin.Context, err error) { c.AbortWithStatus(500) },
			Operations: []web.Operation{{Name: "things.get", Method: http.MethodGet, Path: "/things", Handler: func(*gin.Context) {}}}}
	}
	assert.PanicsWithValue(t, `web: operation things.get names no valid permission ("")`, func() {
		web.NewRouter(web.Config{}, web.Services{}, bare)
	})
	public := func(web.Config, web.Services) web.Dialect {
		d := bare(web.Config{}, web.Services{})
		d.Operations[0].Public, d.Operations[0].Permission = true, access.Read
		return d
	}
	assert.Panics(t, func() { web.NewRouter(web.Config{}, web.Services{}, public) })
}

// TestUnauthenticated: every operation that is not public answers 401 with a Bearer challenge to a request
// without a key, with a key that does not exist, with a wrong secret, with a malformed key, with an expired key
// and with a revoked one; the answers are identical whichever it was (the RocketMQ API's requestId aside).
// The Amazon EventBridge API, whose only credential is a signature by an access key, answers as AWS does, with no
// challenge: 403 MissingAuthenticationTokenException without an Authorization header, 400
// IncompleteSignatureException for any other scheme (an API key included), 400 InvalidSignatureException for a
// signature by a wrong secret, and 403 UnrecognizedClientException for an access key that does not exist, is
// revoked or has expired, alike.
func TestUnauthenticated(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	e.exactAccounts = true
	now := time.Now()
	clock := &testClock{now: now}
	e.services.APIKeys.Clock = clock.Now

	real := keyOf(t, e.services, matrixAccount, access.Admin)
	id, _, _ := strings.Cut(strings.TrimPrefix(real, "ebk_"), "_")
	revoked := keyOf(t, e.services, matrixAccount, access.Admin)
	revokedID, _, _ := strings.Cut(strings.TrimPrefix(revoked, "ebk_"), "_")
	require.NoError(t, e.services.APIKeys.Revoke(context.Background(), matrixAccount, revokedID))
	_, expiring, err := e.services.APIKeys.Create(context.Background(), nil, matrixAccount,
		apikey.Spec{Name: "expiring", Role: access.Admin, ExpiresAt: now.Add(time.Hour)})
	require.NoError(t, err)

	// Access keys: a live one, one revoked after it worked, one that expires within the hour.
	e.services.AccessKeys.Clock = clock.Now
	live := accessKeyIn(t, e, matrixAccount, "live", time.Time{})
	revokedAK := accessKeyIn(t, e, matrixAccount, "revoked", time.Time{})
	expiringAK := accessKeyIn(t, e, matrixAccount, "expiring", now.Add(time.Hour))
	signed := func(id, secret string) func(*http.Request, []byte) {
		return func(req *http.Request, body []byte) { signAWS(t, req, body, id, secret) }
	}
	listBuses := func(auth func(*http.Request, []byte)) *response {
		return e.doAWS(t, aws.TargetPrefix+"ListEventBuses", "{}", auth)
	}
	resp := listBuses(signed(revokedAK.key.ID(), revokedAK.secret))
	require.Equal(t, http.StatusOK, resp.Status, "the access key works before its revocation: %s", resp.Body)
	require.NoError(t, e.services.AccessKeys.Revoke(context.Background(), matrixAccount, revokedAK.key.ID()))
	clock.set(now.Add(2 * time.Hour))

	credentials := map[string]string{
		"none":          "",
		"unknown id":    "Bearer ebk_" + strings.Repeat("a", 16) + "_" + strings.Repeat("x", 43),
		"wrong secret":  "Bearer ebk_" + id + "_" + strings.Repeat("x", 43),
		"malformed":     "Bearer not-a-key",
		"other scheme":  "Basic " + real,
		"expired":       "Bearer " + expiring,
		"revoked":       "Bearer " + revoked,
		"empty bearer":  "Bearer ",
		"key in header": real,
	}
	type awsRefusal struct {
		status int
		typ    string
		auth   func(req *http.Request, body []byte) // nil sends no Authorization header
	}
	awsRefusals := map[string]awsRefusal{
		"no Authorization": {http.StatusForbidden, "MissingAuthenticationTokenException", nil},
		"unknown access key": {http.StatusForbidden, "UnrecognizedClientException",
			signed(accesskey.IDPrefix+strings.Repeat("A", 16), live.secret)},
		"wrong secret":       {http.StatusBadRequest, "InvalidSignatureException", signed(live.key.ID(), strings.Repeat("x", 40))},
		"revoked access key": {http.StatusForbidden, "UnrecognizedClientException", signed(revokedAK.key.ID(), revokedAK.secret)},
		"expired access key": {http.StatusForbidden, "UnrecognizedClientException", signed(expiringAK.key.ID(), expiringAK.secret)},
	}
	// Any other Authorization header is not a signature: the API-key credentials above, and a live API key.
	authorization := func(v string) func(*http.Request, []byte) {
		return func(req *http.Request, _ []byte) { req.Header.Set("Authorization", v) }
	}
	for what, cred := range credentials {
		if cred != "" {
			awsRefusals["API key: "+what] = awsRefusal{http.StatusBadRequest, "IncompleteSignatureException", authorization(cred)}
		}
	}
	awsRefusals["a live API key"] = awsRefusal{http.StatusBadRequest, "IncompleteSignatureException", authorization("Bearer " + real)}
	// awsAnswers is the first answer of each exception: every other answer with it is the same, whatever the
	// operation and whatever was wrong.
	awsAnswers := map[string]string{}

	requestID := regexp.MustCompile(`"requestId":"[^"]*"`)
	tried := 0
	for _, d := range allDialects() {
		for _, op := range d.Operations {
			if op.Public {
				continue
			}
			if d.Name == "aws" {
				for what, r := range awsRefusals {
					resp := e.doAWS(t, op.Target, "{}", r.auth)
					tried++
					if !assert.Equalf(t, r.status, resp.Status, "%s with %s: %s", op.Target, what, resp.Body) {
						continue
					}
					assert.Equalf(t, r.typ, awsTypeOf(t, resp), "%s with %s", op.Target, what)
					assert.Emptyf(t, resp.Header.Get("WWW-Authenticate"), "%s with %s: no Bearer challenge", op.Target, what)
					if first, ok := awsAnswers[r.typ]; ok {
						assert.Equalf(t, first, string(resp.Body), "%s: the answer with %s is the same as every other %s", op.Target, what, r.typ)
					} else {
						awsAnswers[r.typ] = string(resp.Body)
					}
				}
				continue
			}
			method, url := requestOf(op)
			var first string
			for what, cred := range credentials {
				resp := e.do(t, method, url, map[string]string{"Authorization": cred, "Content-Type": "application/json"}, "{}")
				tried++
				if !assert.Equalf(t, http.StatusUnauthorized, resp.Status, "%s %s with %s: %s", method, url, what, resp.Body) {
					continue
				}
				assert.Equal(t, `Bearer realm="eventbridge"`, resp.Header.Get("WWW-Authenticate"))
				assert.Equal(t, "Unauthenticated", codeOf(t, resp))
				body := requestID.ReplaceAllString(string(resp.Body), `"requestId":""`)
				if first == "" {
					first = body
				}
				assert.Equalf(t, first, body, "%s %s: the answer with %s is the same as every other", method, url, what)
			}
		}
	}
	assert.Greater(t, tried, 9*100)
	assert.Len(t, awsAnswers, 4, "every refusal of the Amazon EventBridge API was seen")
	// The live access key, whose id signed with a wrong secret, works with its own.
	resp = listBuses(signed(live.key.ID(), live.secret))
	assert.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
	// With the clock back, the expired keys work again: they were refused for their expiry, not for anything else.
	clock.set(now)
	resp = e.do(t, http.MethodGet, "/api/v1/buses", map[string]string{"Authorization": "Bearer " + expiring}, nil)
	assert.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
	resp = listBuses(signed(expiringAK.key.ID(), expiringAK.secret))
	assert.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
}

// accessKeyIn creates an access key of account, with role admin, named name, expiring at expiresAt (zero: never).
func accessKeyIn(t *testing.T, e *env, account, name string, expiresAt time.Time) *awsCredential {
	t.Helper()
	k, secret, err := e.services.AccessKeys.Create(context.Background(), nil, account,
		accesskey.Spec{Name: name, Role: access.Admin, ExpiresAt: expiresAt})
	require.NoError(t, err)
	return &awsCredential{key: k, secret: secret}
}

// TestAccountSelection: X-Account-Id (and the RocketMQ API's resourceOwnerAccountId, and the account of a path)
// selects an account only for its members and instance administrators; others get 403, never the account's data.
func TestAccountSelection(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	e.exactAccounts = true
	keyA, keyB := keyOf(t, e.services, "a", access.Admin), keyOf(t, e.services, "b", access.Admin)
	bearer := func(k string, kv ...string) map[string]string {
		h := map[string]string{"Authorization": "Bearer " + k}
		for i := 0; i+1 < len(kv); i += 2 {
			h[kv[i]] = kv[i+1]
		}
		return h
	}
	resp := e.do(t, http.MethodPost, "/api/v1/buses", bearer(keyB), map[string]any{"name": "secret-bus"})
	require.Equal(t, http.StatusCreated, resp.Status, "%s", resp.Body)

	tests := []struct {
		name    string
		method  string
		url     string
		headers map[string]string
		body    any
		status  int
		code    string
		has     string
	}{
		{name: "a key acts in its own account", method: "GET", url: "/api/v1/buses", headers: bearer(keyA), status: 200},
		{name: "a key names its own account", method: "GET", url: "/api/v1/buses", headers: bearer(keyA, rest.AccountHeader, "a"), status: 200},
		{name: "a key names another account", method: "GET", url: "/api/v1/buses", headers: bearer(keyA, rest.AccountHeader, "b"),
			status: 403, code: "Forbidden"},
		{name: "a key names an account that does not exist", method: "GET", url: "/api/v1/buses",
			headers: bearer(keyA, rest.AccountHeader, "nosuch"), status: 403, code: "Forbidden"},
		{name: "a key names an invalid account", method: "GET", url: "/api/v1/buses", headers: bearer(keyA, rest.AccountHeader, "No!"),
			status: 400, code: "ValidationError"},
		{name: "a key names another account on the RocketMQ API", method: "POST", url: "/bus/listEventBuses",
			headers: bearer(keyA, rocketmq.AccountHeader, "b"), body: map[string]any{}, status: 403, code: "Forbidden"},
		{name: "a key reads another account's members", method: "GET", url: "/api/v1/accounts/b/members", headers: bearer(keyA),
			status: 403, code: "Forbidden"},
		{name: "the instance administrator names b", method: "GET", url: "/api/v1/buses", headers: bearer(e.adminKey, rest.AccountHeader, "b"),
			status: 200, has: "secret-bus"},
		{name: "the instance administrator names a", method: "GET", url: "/api/v1/buses", headers: bearer(e.adminKey, rest.AccountHeader, "a"),
			status: 200},
		{name: "the instance administrator on the RocketMQ API", method: "POST", url: "/bus/listEventBuses",
			headers: bearer(e.adminKey, rocketmq.AccountHeader, "b"), body: map[string]any{}, status: 200, has: "secret-bus"},
		{name: "the instance administrator names an account that does not exist", method: "GET", url: "/api/v1/buses",
			headers: bearer(e.adminKey, rest.AccountHeader, "nosuch"), status: 404, code: "AccountNotFound"},
		{name: "the instance administrator reads b's members", method: "GET", url: "/api/v1/accounts/b/members",
			headers: bearer(e.adminKey), status: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.do(t, tc.method, tc.url, tc.headers, tc.body)
			require.Equalf(t, tc.status, resp.Status, "%s", resp.Body)
			if tc.code != "" {
				assert.Equal(t, tc.code, codeOf(t, resp))
			}
			if tc.has != "" {
				assert.Contains(t, string(resp.Body), tc.has)
			}
			if tc.status >= 400 {
				assert.NotContains(t, string(resp.Body), "secret-bus")
			}
		})
	}
}

// TestAPIKeys: a key is created with its secret answered once, listed without it, used, seen by /me, rotated with
// a second live key of the same name (a third is refused), and revoked (401 at once).
func TestAPIKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	e.exactAccounts = true
	admin := keyOf(t, e.services, "shop", access.Admin)
	as := func(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

	// Created: the secret once.
	resp := e.do(t, http.MethodPost, "/api/v1/api-keys", as(admin), map[string]any{"name": "backend", "role": "editor"})
	require.Equal(t, http.StatusCreated, resp.Status, "%s", resp.Body)
	created := resp.JSON(t)
	secret, _ := created["secret"].(string)
	require.Regexp(t, `^ebk_[a-z2-7]{16}_[A-Za-z0-9_-]{43}$`, secret)
	id := created["id"].(string)
	assert.Equal(t, "ebk_"+id, created["prefix"])
	assert.Equal(t, "editor", created["role"])
	assert.Contains(t, created["createdBy"], "apiKey k-admin")

	// Listed and read without it.
	resp = e.do(t, http.MethodGet, "/api/v1/api-keys", as(admin), nil)
	require.Equal(t, http.StatusOK, resp.Status)
	assert.Contains(t, string(resp.Body), id)
	assert.NotContains(t, string(resp.Body), secret[len("ebk_"+id+"_"):], "no secret in lists")
	assert.NotContains(t, string(resp.Body), `"secret"`)
	resp = e.do(t, http.MethodGet, "/api/v1/api-keys/"+id, as(admin), nil)
	require.Equal(t, http.StatusOK, resp.Status)
	assert.NotContains(t, string(resp.Body), `"secret"`)

	// Used: it acts in its account with its role.
	resp = e.do(t, http.MethodPost, "/api/v1/buses", as(secret), map[string]any{"name": "orders"})
	require.Equal(t, http.StatusCreated, resp.Status, "%s", resp.Body)
	resp = e.do(t, http.MethodGet, "/api/v1/me", as(secret), nil)
	require.Equal(t, http.StatusOK, resp.Status)
	me := resp.JSON(t)
	assert.Equal(t, "apiKey", me["kind"])
	assert.Equal(t, "backend", me["name"])
	assert.Equal(t, "shop", me["account"])
	assert.Equal(t, "editor", me["role"])
	assert.Equal(t, false, me["instanceAdmin"])
	assert.ElementsMatch(t, []any{"resources.read", "resources.write", "runtime.operate", "events.put", "patterns.test", "secrets.read"},
		me["permissions"])
	k, err := e.services.APIKeys.Get(context.Background(), "shop", id)
	require.NoError(t, err)
	assert.False(t, k.LastUsedAt().IsZero(), "its use is recorded")

	// Rotated: a second live key of the name, not a third.
	resp = e.do(t, http.MethodPost, "/api/v1/api-keys", as(admin), map[string]any{"name": "backend", "role": "editor"})
	require.Equal(t, http.StatusCreated, resp.Status, "%s", resp.Body)
	second := resp.JSON(t)["secret"].(string)
	resp = e.do(t, http.MethodPost, "/api/v1/api-keys", as(admin), map[string]any{"name": "backend", "role": "editor"})
	require.Equal(t, http.StatusConflict, resp.Status, "%s", resp.Body)
	assert.Equal(t, "ApiKeyNameInUse", codeOf(t, resp))
	for _, key := range []string{secret, second} {
		assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/api/v1/buses", as(key), nil).Status, "both live keys work")
	}

	// Revoked: refused at once; the other key of the name goes on.
	resp = e.do(t, http.MethodDelete, "/api/v1/api-keys/"+id, as(admin), nil)
	require.Equal(t, http.StatusNoContent, resp.Status, "%s", resp.Body)
	assert.Equal(t, http.StatusUnauthorized, e.do(t, http.MethodGet, "/api/v1/buses", as(secret), nil).Status)
	assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/api/v1/buses", as(second), nil).Status)
	resp = e.do(t, http.MethodDelete, "/api/v1/api-keys/"+id, as(admin), nil)
	assert.Equal(t, http.StatusNotFound, resp.Status, "revoked once")
	resp = e.do(t, http.MethodPost, "/api/v1/api-keys", as(admin), map[string]any{"name": "backend", "role": "editor"})
	assert.Equal(t, http.StatusCreated, resp.Status, "a revoked key no longer counts: %s", resp.Body)

	// Refused: bad input, and powers the caller lacks.
	for _, tc := range []struct {
		name   string
		key    string
		body   map[string]any
		status int
		code   string
	}{
		{"no role", admin, map[string]any{"name": "x"}, 400, "ValidationError"},
		{"unknown role", admin, map[string]any{"name": "x", "role": "owner"}, 400, "ValidationError"},
		{"bad name", admin, map[string]any{"name": "a b", "role": "viewer"}, 400, "ValidationError"},
		{"expired already", admin, map[string]any{"name": "x", "role": "viewer", "expiresAt": "2001-01-01T00:00:00Z"}, 400, "ValidationError"},
		{"buses on a role that cannot put", admin, map[string]any{"name": "x", "role": "viewer", "buses": []string{"orders"}}, 400, "ValidationError"},
		{"a secret given", admin, map[string]any{"name": "x", "role": "viewer", "secret": "ebk_x"}, 400, "ValidationError"},
		{"an instance administrator's key by an account admin", admin, map[string]any{"name": "x", "role": "admin", "instanceAdmin": true}, 403, "Forbidden"},
		{"by an editor", second, map[string]any{"name": "x", "role": "viewer"}, 403, "Forbidden"},
	} {
		resp := e.do(t, http.MethodPost, "/api/v1/api-keys", as(tc.key), tc.body)
		assert.Equalf(t, tc.status, resp.Status, "%s: %s", tc.name, resp.Body)
		assert.Equalf(t, tc.code, codeOf(t, resp), "%s", tc.name)
	}
	resp = e.do(t, http.MethodPost, "/api/v1/api-keys", as(e.adminKey), map[string]any{"name": "ops", "role": "admin", "instanceAdmin": true})
	assert.Equal(t, http.StatusCreated, resp.Status, "an instance administrator makes another: %s", resp.Body)
}

// TestAPIKeyExpiry: a key with an expiry works until then and is refused after.
func TestAPIKeyExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	e.exactAccounts = true
	clock := &testClock{now: time.Now()}
	e.services.APIKeys.Clock = clock.Now
	admin := keyOf(t, e.services, "shop", access.Admin)
	resp := e.do(t, http.MethodPost, "/api/v1/api-keys", map[string]string{"Authorization": "Bearer " + admin},
		map[string]any{"name": "temp", "role": "viewer", "expiresAt": clock.Now().Add(time.Hour).Format(time.RFC3339Nano)})
	require.Equal(t, http.StatusCreated, resp.Status, "%s", resp.Body)
	temp := resp.JSON(t)["secret"].(string)
	as := map[string]string{"Authorization": "Bearer " + temp}
	assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/api/v1/buses", as, nil).Status)
	clock.set(clock.Now().Add(59 * time.Minute))
	assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/api/v1/buses", as, nil).Status)
	clock.set(clock.Now().Add(2 * time.Minute))
	assert.Equal(t, http.StatusUnauthorized, e.do(t, http.MethodGet, "/api/v1/buses", as, nil).Status)
}

// TestBusScopedKeys: a publisher key restricted to some buses puts events on those only, in both dialects, and
// can do nothing else.
func TestBusScopedKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	e.exactAccounts = true
	admin := map[string]string{"Authorization": "Bearer " + keyOf(t, e.services, "shop", access.Admin)}
	for _, b := range []string{"orders", "payments"} {
		resp := e.do(t, http.MethodPost, "/api/v1/buses", admin, map[string]any{"name": b})
		require.Equal(t, http.StatusCreated, resp.Status, "%s", resp.Body)
	}
	pub := map[string]string{"Authorization": "Bearer " + keyOf(t, e.services, "shop", access.Publisher, "orders"),
		"Content-Type": "application/cloudevents+json"}
	ev := func(id string) map[string]any {
		return map[string]any{"specversion": "1.0", "id": id, "source": "shop", "type": "order.created"}
	}
	resp := e.do(t, http.MethodPost, "/api/v1/buses/orders/events", pub, ev("1"))
	assert.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
	resp = e.do(t, http.MethodPost, "/api/v1/buses/payments/events", pub, ev("2"))
	assert.Equal(t, http.StatusForbidden, resp.Status, "%s", resp.Body)
	assert.Contains(t, string(resp.Body), `not on \"payments\"`)
	resp = e.do(t, http.MethodPost, "/putEvents", pub, withExt(ev("3"), "eventbusname", "orders"))
	assert.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
	resp = e.do(t, http.MethodPost, "/putEvents", pub, withExt(ev("4"), "eventbusname", "payments"))
	assert.Equal(t, http.StatusForbidden, resp.Status, "%s", resp.Body)
	resp = e.do(t, http.MethodGet, "/api/v1/buses", pub, nil)
	assert.Equal(t, http.StatusForbidden, resp.Status, "a publisher reads nothing")
	assert.Len(t, e.storedEventsOf(t, "shop", "orders"), 2)
	assert.Empty(t, e.storedEventsOf(t, "shop", "payments"))
}

// TestRevocationReachesEveryReplica: two control-plane replicas on one database, each with its own cache of
// verified keys (the default lifetime). A key revoked on one is refused by the other within the promised second.
func TestRevocationReachesEveryReplica(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dialect string) {
		e := newEnv(t, natsServer(t), dialect)
		e.exactAccounts = true
		second := e.services
		_ = withIdentity(t, e.db, &second) // the same database: another replica's services
		second.APIKeys.CacheTTL = 0        // apikey.DefaultCacheTTL
		replica2 := newRouter(web.Config{Logger: slog.New(slog.DiscardHandler)}, second)

		key := keyOf(t, e.services, "shop", access.Viewer)
		id, _, _ := strings.Cut(strings.TrimPrefix(key, "ebk_"), "_")
		get := func() int {
			rec := serve(replica2, http.MethodGet, "/api/v1/buses", key)
			return rec
		}
		require.Equal(t, http.StatusOK, get(), "replica 2 knows the key (and caches it)")
		require.NoError(t, e.services.APIKeys.Revoke(context.Background(), "shop", id))
		revoked := time.Now()
		for get() != http.StatusUnauthorized {
			require.Less(t, time.Since(revoked), time.Second, "replica 2 still accepts the revoked key after a second")
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("%s: replica 2 refused the key %s after the revocation on replica 1", dialect, time.Since(revoked).Round(time.Millisecond))
	})
}

// TestSealedValues: webhook tokens are answered to roles with secrets.read (admin, editor) and masked for the others
// (operator, viewer); an http target's secret headers are answered *** to everyone, its other headers in clear; in
// both dialects.
func TestSealedValues(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	e.exactAccounts = true
	admin := map[string]string{"Authorization": "Bearer " + keyOf(t, e.services, "shop", access.Admin)}
	for _, c := range []struct {
		method, url string
		body        any
	}{
		{http.MethodPost, "/api/v1/buses", map[string]any{"name": "orders"}},
		{http.MethodPost, "/api/v1/buses/orders/rules", map[string]any{"name": "r", "eventPattern": map[string]any{"source": []any{"x"}}}},
		{http.MethodPut, "/api/v1/buses/orders/rules/r/targets/t", map[string]any{"type": "http",
			"config": map[string]any{"url": "https://example.com/", "headers": map[string]any{"Authorization": "Bearer target-secret",
				"X-Team": "shop-team"}}}},
		{http.MethodPost, "/api/v1/buses/orders/sources", map[string]any{"name": "hook", "type": "http"}},
	} {
		resp := e.do(t, c.method, c.url, admin, c.body)
		require.Lessf(t, resp.Status, 300, "%s %s: %s", c.method, c.url, resp.Body)
	}
	src, err := e.services.Sources.Get(context.Background(), "shop", "orders", "hook")
	require.NoError(t, err)
	token := src.Token()
	require.NotEmpty(t, token)
	reads := []struct {
		method, url string
		body        any
		// secret is answered to the roles with secrets.read; never is answered to nobody, always to everyone.
		secret, never, always string
	}{
		{http.MethodGet, "/api/v1/buses/orders/sources/hook", nil, token, "", ""},
		{http.MethodGet, "/api/v1/buses/orders/sources", nil, token, "", ""},
		{http.MethodGet, "/api/v1/buses/orders/rules/r/targets/t", nil, "", "target-secret", "shop-team"},
		{http.MethodGet, "/api/v1/buses/orders/rules/r/targets", nil, "", "target-secret", "shop-team"},
		{http.MethodPost, "/source/getEventSource", srcReq("orders", "hook"), token, "", ""},
		{http.MethodPost, "/source/listEventSources", busReq("orders"), token, "", ""},
		{http.MethodPost, "/target/listEventTargets", ruleReq("orders", "r"), "", "target-secret", "shop-team"},
		{http.MethodPost, "/rule/getEventRule", ruleReq("orders", "r"), "", "target-secret", "shop-team"},
	}
	for _, role := range []access.Role{access.Admin, access.Editor, access.Operator, access.Viewer} {
		h := map[string]string{"Authorization": "Bearer " + keyOf(t, e.services, "shop", role)}
		for _, r := range reads {
			resp := e.do(t, r.method, r.url, h, r.body)
			require.Equalf(t, http.StatusOK, resp.Status, "%s %s as %s: %s", r.method, r.url, role, resp.Body)
			switch {
			case r.secret != "" && role.Grants(access.ReadSecrets):
				assert.Containsf(t, string(resp.Body), r.secret, "%s %s as %s", r.method, r.url, role)
			case r.secret != "":
				assert.NotContainsf(t, string(resp.Body), r.secret, "%s %s as %s", r.method, r.url, role)
			}
			if r.never != "" {
				assert.NotContainsf(t, string(resp.Body), r.never, "%s %s as %s", r.method, r.url, role)
				assert.Containsf(t, string(resp.Body), `"Authorization":"***"`, "%s %s as %s", r.method, r.url, role)
			}
			if r.always != "" {
				assert.Containsf(t, string(resp.Body), r.always, "%s %s as %s", r.method, r.url, role)
			}
		}
	}
}

// TestAccountsAndUsers: an instance administrator creates an account and a user, makes the user a member,
// and deletes the account with everything it owns once the deletion is confirmed.
func TestAccountsAndUsers(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dialect string) {
		e := withDeadLetters(newEnv(t, natsServer(t), dialect))
		e.exactAccounts = true
		root := map[string]string{"Authorization": "Bearer " + e.adminKey}
		must := func(method, url string, h map[string]string, body any, status int) map[string]any {
			t.Helper()
			resp := e.do(t, method, url, h, body)
			require.Equalf(t, status, resp.Status, "%s %s: %s", method, url, resp.Body)
			if len(resp.Body) == 0 {
				return nil
			}
			return resp.JSON(t)
		}
		must(http.MethodPost, "/api/v1/accounts", root, map[string]any{"id": "shop"}, http.StatusCreated)
		resp := e.do(t, http.MethodPost, "/api/v1/accounts", root, map[string]any{"id": "shop"})
		assert.Equal(t, http.StatusConflict, resp.Status)
		assert.Equal(t, "AccountAlreadyExists", codeOf(t, resp))
		resp = e.do(t, http.MethodPost, "/api/v1/accounts", root, map[string]any{"id": "Shop!"})
		assert.Equal(t, http.StatusBadRequest, resp.Status)
		list := must(http.MethodGet, "/api/v1/accounts", root, nil, http.StatusOK)
		assert.Contains(t, fmt.Sprint(list["accounts"]), "shop")

		user := must(http.MethodPost, "/api/v1/users", root, map[string]any{"username": "Alice", "password": "correct horse"}, http.StatusCreated)
		assert.Equal(t, "alice", user["username"], "login names are kept in lower case")
		assert.NotContains(t, fmt.Sprint(user), "correct horse")
		resp = e.do(t, http.MethodPost, "/api/v1/users", root, map[string]any{"username": "bob", "password": "short"})
		assert.Equal(t, http.StatusBadRequest, resp.Status)
		must(http.MethodPut, "/api/v1/accounts/shop/members/alice", root, map[string]any{"role": "editor"}, http.StatusCreated)
		must(http.MethodPut, "/api/v1/accounts/shop/members/alice", root, map[string]any{"role": "viewer"}, http.StatusOK)
		members := must(http.MethodGet, "/api/v1/accounts/shop/members", root, nil, http.StatusOK)
		assert.Contains(t, fmt.Sprint(members["members"]), "viewer")
		got := must(http.MethodGet, "/api/v1/users/alice", root, nil, http.StatusOK)
		assert.Contains(t, fmt.Sprint(got["memberships"]), "shop")
		p, err := e.services.Users.Authenticate(context.Background(), "alice", "correct horse")
		require.NoError(t, err)
		role, ok := p.RoleIn("shop")
		assert.True(t, ok)
		assert.Equal(t, access.Viewer, role)
		_, err = e.services.Users.Authenticate(context.Background(), "alice", "wrong horse")
		assert.ErrorIs(t, err, access.ErrUnauthenticated)
		must(http.MethodPatch, "/api/v1/users/alice", root, map[string]any{"disabled": true}, http.StatusOK)
		_, err = e.services.Users.Authenticate(context.Background(), "alice", "correct horse")
		assert.ErrorIs(t, err, access.ErrUnauthenticated, "a disabled user does not sign in")

		// The account's administrator manages its members and keys, not accounts or users.
		shopAdmin := map[string]string{"Authorization": "Bearer " + keyOf(t, e.services, "shop", access.Admin)}
		must(http.MethodDelete, "/api/v1/accounts/shop/members/alice", shopAdmin, nil, http.StatusNoContent)
		assert.Equal(t, http.StatusForbidden, e.do(t, http.MethodGet, "/api/v1/users", shopAdmin, nil).Status)
		assert.Equal(t, http.StatusForbidden, e.do(t, http.MethodDelete, "/api/v1/accounts/shop?confirm=shop", shopAdmin, nil).Status)

		// Resources of the account, then its deletion.
		must(http.MethodPost, "/api/v1/buses", shopAdmin, map[string]any{"name": "orders"}, http.StatusCreated)
		must(http.MethodPost, "/api/v1/buses/orders/rules", shopAdmin, map[string]any{"name": "r",
			"eventPattern": map[string]any{"source": []any{"x"}}}, http.StatusCreated)
		must(http.MethodPut, "/api/v1/buses/orders/rules/r/targets/t", shopAdmin, map[string]any{"type": "http",
			"config": map[string]any{"url": "https://example.com/"}}, http.StatusCreated)
		must(http.MethodPost, "/api/v1/buses/orders/sources", shopAdmin, map[string]any{"name": "hook", "type": "http"}, http.StatusCreated)
		must(http.MethodPost, "/api/v1/connections", shopAdmin, basicConnection("c"), http.StatusCreated)
		must(http.MethodPost, "/api/v1/api-destinations", shopAdmin, destination("d", "c"), http.StatusCreated)
		b, err := e.buses.Get(context.Background(), "shop", "orders")
		require.NoError(t, err)

		resp = e.do(t, http.MethodDelete, "/api/v1/accounts/shop", root, nil)
		assert.Equal(t, http.StatusBadRequest, resp.Status, "a deletion needs its confirmation")
		assert.Contains(t, string(resp.Body), "confirm")
		must(http.MethodDelete, "/api/v1/accounts/shop?confirm=shop", root, nil, http.StatusNoContent)
		assert.Equal(t, http.StatusUnauthorized, e.do(t, http.MethodGet, "/api/v1/buses", shopAdmin, nil).Status, "its keys are gone")
		resp = e.do(t, http.MethodGet, "/api/v1/accounts/shop", root, nil)
		assert.Equal(t, http.StatusNotFound, resp.Status)
		resp = e.do(t, http.MethodGet, "/api/v1/buses", map[string]string{"Authorization": "Bearer " + e.adminKey, rest.AccountHeader: "shop"}, nil)
		assert.Equal(t, http.StatusNotFound, resp.Status, "%s", resp.Body)
		_, err = e.js.Stream(context.Background(), e.names.BusStream(b.ID()))
		assert.Error(t, err, "the bus's stream is deleted")
		_, err = e.js.Stream(context.Background(), e.names.DLQStream("shop"))
		assert.Error(t, err, "the dead-letter stream is deleted")
		all, err := e.buses.ListAll(context.Background())
		require.NoError(t, err)
		for _, b := range all {
			assert.NotEqual(t, "shop", b.AccountID())
		}
		_, removed := e.runtime.calls()
		assert.Contains(t, removed, "orders", "the bus's connectors were removed")

		// The last enabled instance administrator stays one.
		must(http.MethodPost, "/api/v1/users", root, map[string]any{"username": "root", "password": "long enough", "instanceAdmin": true}, http.StatusCreated)
		resp = e.do(t, http.MethodPatch, "/api/v1/users/root", root, map[string]any{"instanceAdmin": false})
		assert.Equal(t, http.StatusConflict, resp.Status)
		assert.Equal(t, "LastInstanceAdmin", codeOf(t, resp))
		resp = e.do(t, http.MethodDelete, "/api/v1/users/root", root, nil)
		assert.Equal(t, http.StatusConflict, resp.Status)
		must(http.MethodDelete, "/api/v1/users/alice", root, nil, http.StatusNoContent)
	})
}

// testClock is a clock tests set.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

var _ domain.Clock = (&testClock{}).Now

// serve sends one request with key to h and returns the status.
func serve(h http.Handler, method, url, key string) int {
	rec := httptest.NewRecorder()
	req, _ := http.NewRequest(method, url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestCORS: without --cors-origins the API sends no CORS headers (a browser refuses cross-site calls that are not
// simple requests); with it, an allowed origin gets its preflight answered and the headers on the answer, others
// nothing. Credentials still decide: a preflight is no way around the key.
func TestCORS(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	open := newRouter(web.Config{Logger: slog.New(slog.DiscardHandler), CORSOrigins: []string{"https://console.example.com"}}, e.services)
	preflight := func(h http.Handler, origin string) *httptest.ResponseRecorder {
		req := localRequest(http.MethodOptions, "/api/v1/buses", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	rec := preflight(e.router, "https://console.example.com")
	assert.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"), "no CORS by default")
	rec = preflight(open, "https://console.example.com")
	assert.Less(t, rec.Code, 300)
	assert.Equal(t, "https://console.example.com", rec.Header().Get("Access-Control-Allow-Origin"))
	assert.Contains(t, strings.ToLower(rec.Header().Get("Access-Control-Allow-Headers")), "authorization")
	rec = preflight(open, "https://evil.example.com")
	assert.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"), "an origin not listed")

	req := localRequest(http.MethodGet, "/api/v1/buses", nil)
	req.Header.Set("Origin", "https://console.example.com")
	rec = httptest.NewRecorder()
	open.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "CORS lets the browser read answers; it grants nothing")
	assert.Equal(t, "https://console.example.com", rec.Header().Get("Access-Control-Allow-Origin"))
	req.Header.Set("Authorization", "Bearer "+e.adminKey)
	rec = httptest.NewRecorder()
	open.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code)
}
