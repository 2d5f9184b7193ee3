package web_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/connect"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/migrations"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/web"
)

// connEnv is the router with the connection and API destination services on a fresh database of one dialect
// (the other services are not needed by these routes). Quotas are small so that tests reach them.
type connEnv struct {
	*env
	db *persistence.DB
	// dir holds the SQLite database's files ("" on MySQL).
	dir string
}

const (
	testConnectionQuota  = 3
	testDestinationQuota = 3
)

func newConnEnv(t *testing.T, dialect string) *connEnv {
	t.Helper()
	e := &connEnv{}
	if dialect == persistence.SQLite {
		e.dir = t.TempDir()
		db, err := persistence.Open(context.Background(), "sqlite://"+filepath.Join(e.dir, "eventbridge.db"), nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		require.NoError(t, migrations.Up(context.Background(), db.SQL(), db.Dialect()))
		e.db = db
	} else {
		e.db = persistencetest.Open(t, dialect)
	}
	sealer, err := connect.NewSealer(bytes.Repeat([]byte{0x5a}, rpc.MasterKeySize))
	require.NoError(t, err)
	connections := persistence.NewConnectionRepository(e.db)
	destinations := persistence.NewAPIDestinationRepository(e.db)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	services := web.Services{
		Connections: &connection.Service{Connections: connections, Users: destinations, Sealer: sealer,
			MaxPerAccount: testConnectionQuota},
		APIDestinations: &apidestination.Service{Destinations: destinations, Connections: connections,
			Targets: destinations, MaxPerAccount: testDestinationQuota},
	}
	adminKey := withIdentity(t, e.db, &services)
	e.env = &env{router: newRouter(web.Config{Logger: log}, services), logs: logs, adminKey: adminKey, services: services}
	return e
}

// connScenario is a scenario on a connEnv.
type connScenario struct {
	name    string
	method  string
	url     string
	headers map[string]string
	body    any
	setup   func(t *testing.T, e *connEnv)

	status   int
	contains []string
	absent   []string
	json     map[string]any
	after    func(t *testing.T, e *connEnv, resp *response)
}

// runConn runs each scenario on its own fresh database, on SQLite and on MySQL.
func runConn(t *testing.T, scenarios []connScenario) {
	t.Helper()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			for _, s := range scenarios {
				t.Run(s.name, func(t *testing.T) {
					t.Parallel()
					e := newConnEnv(t, dialect)
					if s.setup != nil {
						s.setup(t, e)
					}
					resp := e.do(t, s.method, s.url, s.headers, s.body)
					t.Logf("%s %s -> %d %s", s.method, s.url, resp.Status, truncate(resp.Body, 600))
					assert.Equalf(t, s.status, resp.Status, "%s %s answered %s", s.method, s.url, resp.Body)
					if resp.Status >= 400 {
						assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"), "errors are problem documents")
						checkProblem(t, resp)
					}
					for _, want := range s.contains {
						assert.Contains(t, string(resp.Body), want)
					}
					for _, bad := range append(s.absent, allSecrets...) {
						assert.NotContains(t, string(resp.Body), bad, "no answer holds a secret")
					}
					if len(s.json) > 0 {
						v := resp.JSON(t)
						for path, want := range s.json {
							assertJSONPath(t, v, path, want)
						}
					}
					if s.after != nil {
						s.after(t, e, resp)
					}
					for _, secret := range allSecrets {
						assert.NotContains(t, e.logs.String(), secret, "no log line holds a secret")
					}
				})
			}
		})
	}
}

// Secrets of the fixtures: none may ever appear in an answer or a log line.
var allSecrets = []string{"basic-password-1", "api-key-value-1", "client-secret-1", "oauth-param-secret-1",
	"invocation-secret-1", "basic-password-2", "client-secret-2"}

func basicConnection(name string) map[string]any {
	return map[string]any{"name": name, "authorizationType": "BASIC",
		"authParameters": map[string]any{"basicAuthParameters": map[string]any{"username": "shop", "password": "basic-password-1"}}}
}

func apiKeyConnection(name string) map[string]any {
	return map[string]any{"name": name, "description": "key", "authorizationType": "API_KEY",
		"authParameters": map[string]any{"apiKeyAuthParameters": map[string]any{"apiKeyName": "X-Api-Key", "apiKeyValue": "api-key-value-1"}}}
}

func oauthConnection(name string) map[string]any {
	return map[string]any{"name": name, "authorizationType": "OAUTH_CLIENT_CREDENTIALS", "authParameters": map[string]any{
		"oauthParameters": map[string]any{
			"authorizationEndpoint": "https://auth.example.com/token", "httpMethod": "POST",
			"clientParameters": map[string]any{"clientId": "shop-client", "clientSecret": "client-secret-1"},
			"scopes":           []string{"orders.read"},
			"oauthHttpParameters": map[string]any{"bodyParameters": []any{
				map[string]any{"key": "audience", "value": "shop"},
				map[string]any{"key": "assertion", "value": "oauth-param-secret-1", "isValueSecret": true}}},
		},
		"invocationHttpParameters": map[string]any{
			"headerParameters":      []any{map[string]any{"key": "X-Token", "value": "invocation-secret-1", "isValueSecret": true}},
			"queryStringParameters": []any{map[string]any{"key": "v", "value": "2"}},
		},
	}}
}

func with(m map[string]any, path string, v any) map[string]any {
	cur := m
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		cur = cur[p].(map[string]any)
	}
	if v == nil {
		delete(cur, parts[len(parts)-1])
	} else {
		cur[parts[len(parts)-1]] = v
	}
	return m
}

func withConnection(body map[string]any) func(t *testing.T, e *connEnv) {
	return func(t *testing.T, e *connEnv) {
		e.must(t, http.MethodPost, "/api/v1/connections", body, http.StatusCreated)
	}
}

func withDestination(name, conn string) func(t *testing.T, e *connEnv) {
	return func(t *testing.T, e *connEnv) {
		e.must(t, http.MethodPost, "/api/v1/api-destinations", destination(name, conn), http.StatusCreated)
	}
}

func connSetups(fs ...func(t *testing.T, e *connEnv)) func(t *testing.T, e *connEnv) {
	return func(t *testing.T, e *connEnv) {
		for _, f := range fs {
			f(t, e)
		}
	}
}

// rawAuthParameters is the stored auth_parameters column of a connection of the default account.
func (e *connEnv) rawAuthParameters(t *testing.T, name string) string {
	t.Helper()
	var raw string
	require.NoError(t, e.db.SQL().QueryRowContext(context.Background(),
		"SELECT auth_parameters FROM connections WHERE account_id = 'default' AND name = ?", name).Scan(&raw))
	return raw
}

var bAccount = map[string]string{"X-Account-Id": "b"}

func TestConnections(t *testing.T) {
	t.Parallel()
	malformed := func(field string) map[string]any {
		return map[string]any{"code": "MalformedRequest", "field": field}
	}
	invalid := func(field string) map[string]any {
		return map[string]any{"code": "ValidationError", "field": field}
	}
	const ap = "authParameters."
	runConn(t, []connScenario{
		{
			name: "create API_KEY", method: http.MethodPost, url: "/api/v1/connections", body: apiKeyConnection("shop"),
			status: http.StatusCreated,
			json: map[string]any{"name": "shop", "description": "key", "authorizationType": "API_KEY",
				"authParameters": map[string]any{"apiKeyAuthParameters": map[string]any{"apiKeyName": "X-Api-Key"}}},
			contains: []string{`"createdAt":"`, `"updatedAt":"`},
			after: func(t *testing.T, e *connEnv, resp *response) {
				got := e.must(t, http.MethodGet, "/api/v1/connections/shop", nil, http.StatusOK)
				assert.JSONEq(t, string(resp.Body), string(got.Body), "a created connection reads back as it was answered")
				assert.Contains(t, e.rawAuthParameters(t, "shop"), rpc.SecretPrefixV2)
			},
		},
		{
			name: "create BASIC", method: http.MethodPost, url: "/api/v1/connections", body: basicConnection("shop"),
			status: http.StatusCreated,
			json: map[string]any{"authorizationType": "BASIC",
				"authParameters": map[string]any{"basicAuthParameters": map[string]any{"username": "shop"}}},
		},
		{
			name: "create OAUTH_CLIENT_CREDENTIALS", method: http.MethodPost, url: "/api/v1/connections", body: oauthConnection("shop"),
			status: http.StatusCreated,
			json: map[string]any{
				"authParameters.oauthParameters.clientParameters":                   map[string]any{"clientId": "shop-client"},
				"authParameters.oauthParameters.scopes":                             []string{"orders.read"},
				"authParameters.oauthParameters.httpMethod":                         "POST",
				"authParameters.oauthParameters.oauthHttpParameters.bodyParameters": []any{map[string]any{"key": "audience", "value": "shop"}, map[string]any{"key": "assertion", "isValueSecret": true}},
				"authParameters.invocationHttpParameters": map[string]any{
					"headerParameters":      []any{map[string]any{"key": "X-Token", "isValueSecret": true}},
					"queryStringParameters": []any{map[string]any{"key": "v", "value": "2"}},
				},
			},
		},
		{
			name: "deauthorize drops the secrets", method: http.MethodPost, url: "/api/v1/connections/shop/deauthorize",
			setup: withConnection(oauthConnection("shop")), status: http.StatusOK,
			json:     map[string]any{"state": "DEAUTHORIZED", "authParameters.oauthParameters.clientParameters": map[string]any{"clientId": "shop-client"}},
			contains: []string{`"deauthorizedAt":"`},
			after: func(t *testing.T, e *connEnv, _ *response) {
				assert.NotContains(t, e.rawAuthParameters(t, "shop"), rpc.SecretPrefixV2, "the secrets are gone from storage")
				// A change without secrets keeps it DEAUTHORIZED; one with some but not all is refused.
				got := e.must(t, http.MethodPatch, "/api/v1/connections/shop", map[string]any{"description": "parked"}, http.StatusOK).JSON(t)
				assertJSONPath(t, got, "state", "DEAUTHORIZED")
				resp := e.do(t, http.MethodPatch, "/api/v1/connections/shop", nil, map[string]any{"authParameters": map[string]any{
					"oauthParameters": map[string]any{"authorizationEndpoint": "https://auth.example.com/oauth2/token", "httpMethod": "POST",
						"clientParameters": map[string]any{"clientId": "shop-client", "clientSecret": "client-secret-2"}}}})
				assert.Equal(t, http.StatusBadRequest, resp.Status, "the secret header of the invocation parameters is missing: %s", resp.Body)
				// Every secret given: AUTHORIZED again.
				got = e.must(t, http.MethodPut, "/api/v1/connections/shop", oauthConnection("shop"), http.StatusOK).JSON(t)
				assertJSONPath(t, got, "state", "AUTHORIZED")
				assert.NotContains(t, got, "deauthorizedAt")
				assert.Contains(t, e.rawAuthParameters(t, "shop"), rpc.SecretPrefixV2)
			},
		},
		{name: "deauthorize an unknown connection", method: http.MethodPost, url: "/api/v1/connections/nope/deauthorize",
			status: http.StatusNotFound, json: map[string]any{"code": "ConnectionNotFound"}},
		{name: "deauthorize another account's connection", method: http.MethodPost, url: "/api/v1/connections/shop/deauthorize",
			setup: withConnection(basicConnection("shop")), headers: bAccount, status: http.StatusNotFound},
		{name: "name missing", method: http.MethodPost, url: "/api/v1/connections", body: with(basicConnection("x"), "name", nil),
			status: http.StatusBadRequest, json: invalid("name")},
		{name: "name with a dot", method: http.MethodPost, url: "/api/v1/connections", body: basicConnection("a.b"),
			status: http.StatusBadRequest, json: invalid("name")},
		{name: "name too long", method: http.MethodPost, url: "/api/v1/connections", body: basicConnection(strings.Repeat("n", 65)),
			status: http.StatusBadRequest, json: invalid("name")},
		{name: "description too long", method: http.MethodPost, url: "/api/v1/connections",
			body: with(basicConnection("c"), "description", strings.Repeat("d", 513)), status: http.StatusBadRequest, json: invalid("description")},
		{name: "authorizationType missing", method: http.MethodPost, url: "/api/v1/connections",
			body: with(basicConnection("c"), "authorizationType", nil), status: http.StatusBadRequest, json: invalid("authorizationType")},
		{name: "authorizationType unknown", method: http.MethodPost, url: "/api/v1/connections",
			body: with(basicConnection("c"), "authorizationType", "DIGEST"), status: http.StatusBadRequest, json: invalid("authorizationType")},
		{name: "authorizationType of the wrong JSON type", method: http.MethodPost, url: "/api/v1/connections",
			body: with(basicConnection("c"), "authorizationType", 7), status: http.StatusBadRequest, json: malformed("authorizationType")},
		{name: "parameters of the type missing", method: http.MethodPost, url: "/api/v1/connections",
			body: with(basicConnection("c"), "authorizationType", "API_KEY"), status: http.StatusBadRequest, json: invalid(ap + "apiKeyAuthParameters")},
		{name: "parameters of another type", method: http.MethodPost, url: "/api/v1/connections",
			body:   with(apiKeyConnection("c"), "authParameters.basicAuthParameters", map[string]any{"username": "u"}),
			status: http.StatusBadRequest, json: invalid(ap + "basicAuthParameters")},
		{name: "username missing", method: http.MethodPost, url: "/api/v1/connections",
			body:   with(basicConnection("c"), "authParameters.basicAuthParameters.username", nil),
			status: http.StatusBadRequest, json: invalid(ap + "basicAuthParameters.username")},
		{name: "password missing", method: http.MethodPost, url: "/api/v1/connections",
			body:   with(basicConnection("c"), "authParameters.basicAuthParameters.password", nil),
			status: http.StatusBadRequest, json: invalid(ap + "basicAuthParameters.password")},
		{name: "password with a control character", method: http.MethodPost, url: "/api/v1/connections",
			body:   with(basicConnection("c"), "authParameters.basicAuthParameters.password", "basic-password-1\n"),
			status: http.StatusBadRequest, json: invalid(ap + "basicAuthParameters.password")},
		{name: "apiKeyName not a header name", method: http.MethodPost, url: "/api/v1/connections",
			body:   with(apiKeyConnection("c"), "authParameters.apiKeyAuthParameters.apiKeyName", "X Key"),
			status: http.StatusBadRequest, json: invalid(ap + "apiKeyAuthParameters.apiKeyName")},
		{name: "apiKeyValue missing", method: http.MethodPost, url: "/api/v1/connections",
			body:   with(apiKeyConnection("c"), "authParameters.apiKeyAuthParameters.apiKeyValue", nil),
			status: http.StatusBadRequest, json: invalid(ap + "apiKeyAuthParameters.apiKeyValue")},
		{name: "authorizationEndpoint not a URL", method: http.MethodPost, url: "/api/v1/connections",
			body:   with(oauthConnection("c"), "authParameters.oauthParameters.authorizationEndpoint", "auth.example.com/token"),
			status: http.StatusBadRequest, json: invalid(ap + "oauthParameters.authorizationEndpoint")},
		{name: "OAuth httpMethod", method: http.MethodPost, url: "/api/v1/connections",
			body:   with(oauthConnection("c"), "authParameters.oauthParameters.httpMethod", "PATCH"),
			status: http.StatusBadRequest, json: invalid(ap + "oauthParameters.httpMethod")},
		{name: "clientSecret missing", method: http.MethodPost, url: "/api/v1/connections",
			body:   with(oauthConnection("c"), "authParameters.oauthParameters.clientParameters.clientSecret", nil),
			status: http.StatusBadRequest, json: invalid(ap + "oauthParameters.clientParameters.clientSecret")},
		{name: "scopes of the wrong JSON type", method: http.MethodPost, url: "/api/v1/connections",
			body:   with(oauthConnection("c"), "authParameters.oauthParameters.scopes", "orders.read"),
			status: http.StatusBadRequest, json: malformed("authParameters.oauthParameters.scopes")},
		{name: "header parameter key", method: http.MethodPost, url: "/api/v1/connections",
			body: with(basicConnection("c"), "authParameters.invocationHttpParameters",
				map[string]any{"headerParameters": []any{map[string]any{"key": "bad key", "value": "v"}}}),
			status: http.StatusBadRequest, json: invalid(ap + "invocationHttpParameters.headerParameters[0].key")},
		{name: "secret parameter without a value", method: http.MethodPost, url: "/api/v1/connections",
			body: with(basicConnection("c"), "authParameters.invocationHttpParameters",
				map[string]any{"bodyParameters": []any{map[string]any{"key": "k", "isValueSecret": true}}}),
			status: http.StatusBadRequest, json: invalid(ap + "invocationHttpParameters.bodyParameters[0].value")},
		{name: "unknown field", method: http.MethodPost, url: "/api/v1/connections",
			body: with(basicConnection("c"), "secret", "x"), status: http.StatusBadRequest, json: malformed("secret")},
		{name: "unknown nested field", method: http.MethodPost, url: "/api/v1/connections",
			body:   with(basicConnection("c"), "authParameters.basicAuthParameters.token", "x"),
			status: http.StatusBadRequest, json: malformed("authParameters.basicAuthParameters.token")},
		{name: "malformed JSON", method: http.MethodPost, url: "/api/v1/connections", body: `{"name": "c", `,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"}},
		{name: "empty body", method: http.MethodPost, url: "/api/v1/connections", body: ``,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"}},
		{name: "bad account header", method: http.MethodGet, url: "/api/v1/connections", headers: map[string]string{"X-Account-Id": "A!"},
			status: http.StatusBadRequest, json: invalid("X-Account-Id")},
		{name: "duplicate", method: http.MethodPost, url: "/api/v1/connections", body: apiKeyConnection("shop"),
			setup:  withConnection(basicConnection("shop")),
			status: http.StatusConflict, json: map[string]any{"code": "ConnectionAlreadyExists"}},
		{name: "quota", method: http.MethodPost, url: "/api/v1/connections", body: basicConnection("d"),
			setup:  connSetups(withConnection(basicConnection("a")), withConnection(basicConnection("b")), withConnection(basicConnection("c"))),
			status: http.StatusConflict, json: map[string]any{"code": "ConnectionQuotaExceeded"},
			after: func(t *testing.T, e *connEnv, _ *response) {
				e.must(t, http.MethodPut, "/api/v1/connections/a", basicConnection("a"), http.StatusOK) // replacing is no creation
				resp := e.do(t, http.MethodPut, "/api/v1/connections/d", nil, basicConnection("d"))
				assert.Equal(t, http.StatusConflict, resp.Status, "PUT that creates counts too: %s", resp.Body)
				resp = e.do(t, http.MethodPost, "/api/v1/connections", bAccount, basicConnection("d"))
				assert.Equal(t, http.StatusCreated, resp.Status, "the quota is per account: %s", resp.Body)
			}},
		{name: "list pages by name", method: http.MethodGet, url: "/api/v1/connections?limit=2",
			setup:  connSetups(withConnection(basicConnection("c")), withConnection(apiKeyConnection("a")), withConnection(oauthConnection("b"))),
			status: http.StatusOK, json: map[string]any{"connections.0.name": "a", "connections.1.name": "b"},
			after: func(t *testing.T, e *connEnv, resp *response) {
				next, _ := resp.JSON(t)["nextToken"].(string)
				require.NotEmpty(t, next)
				last := e.must(t, http.MethodGet, "/api/v1/connections?limit=2&nextToken="+next, nil, http.StatusOK)
				v := last.JSON(t)
				assertJSONPath(t, v, "connections.0.name", "c")
				assert.NotContains(t, v, "nextToken")
				other := e.do(t, http.MethodGet, "/api/v1/connections", bAccount, nil)
				assert.JSONEq(t, `{"connections": []}`, string(other.Body), "account b sees none of a's connections")
			}},
		{name: "list with a bad limit", method: http.MethodGet, url: "/api/v1/connections?limit=0",
			status: http.StatusBadRequest, json: invalid("limit")},
		{name: "list with a bad token", method: http.MethodGet, url: "/api/v1/connections?nextToken=%21",
			status: http.StatusBadRequest, json: invalid("nextToken")},
		{name: "get unknown", method: http.MethodGet, url: "/api/v1/connections/nope",
			status: http.StatusNotFound, json: map[string]any{"code": "ConnectionNotFound"}},
		{name: "get of another account", method: http.MethodGet, url: "/api/v1/connections/shop", headers: bAccount,
			setup: withConnection(basicConnection("shop")), status: http.StatusNotFound, json: map[string]any{"code": "ConnectionNotFound"}},
		{name: "patch of another account", method: http.MethodPatch, url: "/api/v1/connections/shop", headers: bAccount,
			body: map[string]any{"description": "x"}, setup: withConnection(basicConnection("shop")),
			status: http.StatusNotFound, json: map[string]any{"code": "ConnectionNotFound"}},
		{name: "delete of another account", method: http.MethodDelete, url: "/api/v1/connections/shop", headers: bAccount,
			setup: withConnection(basicConnection("shop")), status: http.StatusNotFound, json: map[string]any{"code": "ConnectionNotFound"},
			after: func(t *testing.T, e *connEnv, _ *response) {
				e.must(t, http.MethodGet, "/api/v1/connections/shop", nil, http.StatusOK)
			}},
		{name: "put creates", method: http.MethodPut, url: "/api/v1/connections/shop", body: with(apiKeyConnection("x"), "name", nil),
			status: http.StatusCreated, json: map[string]any{"name": "shop", "authorizationType": "API_KEY"}},
		{name: "put in another account creates its own", method: http.MethodPut, url: "/api/v1/connections/shop", headers: bAccount,
			body: apiKeyConnection("shop"), setup: withConnection(basicConnection("shop")),
			status: http.StatusCreated, json: map[string]any{"authorizationType": "API_KEY"},
			after: func(t *testing.T, e *connEnv, _ *response) {
				a := e.must(t, http.MethodGet, "/api/v1/connections/shop", nil, http.StatusOK)
				assertJSONPath(t, a.JSON(t), "authorizationType", "BASIC")
			}},
		{name: "put replaces and keeps an omitted secret", method: http.MethodPut, url: "/api/v1/connections/shop",
			body: map[string]any{"authorizationType": "BASIC", "description": "new",
				"authParameters": map[string]any{"basicAuthParameters": map[string]any{"username": "other"}}},
			setup:  withConnection(basicConnection("shop")),
			status: http.StatusOK, json: map[string]any{"description": "new", "authParameters.basicAuthParameters.username": "other"},
			after: func(t *testing.T, e *connEnv, _ *response) {
				before := e.rawAuthParameters(t, "shop")
				e.must(t, http.MethodPut, "/api/v1/connections/shop", map[string]any{"authorizationType": "BASIC",
					"authParameters": map[string]any{"basicAuthParameters": map[string]any{"username": "other"}}}, http.StatusOK)
				assert.Equal(t, before, e.rawAuthParameters(t, "shop"), "the stored ciphertext is kept as it is")
				e.must(t, http.MethodPut, "/api/v1/connections/shop", map[string]any{"authorizationType": "BASIC",
					"authParameters": map[string]any{"basicAuthParameters": map[string]any{"username": "other", "password": "basic-password-2"}}}, http.StatusOK)
				assert.NotEqual(t, before, e.rawAuthParameters(t, "shop"), "a new password is stored")
			}},
		{name: "put with another name", method: http.MethodPut, url: "/api/v1/connections/shop", body: basicConnection("other"),
			status: http.StatusBadRequest, json: invalid("name")},
		{name: "put to another type requires its secret", method: http.MethodPut, url: "/api/v1/connections/shop",
			body: with(apiKeyConnection("shop"), "authParameters.apiKeyAuthParameters.apiKeyValue", nil), setup: withConnection(basicConnection("shop")),
			status: http.StatusBadRequest, json: invalid(ap + "apiKeyAuthParameters.apiKeyValue")},
		{name: "put unknown field", method: http.MethodPut, url: "/api/v1/connections/shop", body: with(basicConnection("shop"), "status", "x"),
			status: http.StatusBadRequest, json: malformed("status")},
		{name: "patch description keeps the rest", method: http.MethodPatch, url: "/api/v1/connections/shop",
			body: map[string]any{"description": "patched"}, setup: withConnection(oauthConnection("shop")),
			status: http.StatusOK, json: map[string]any{"description": "patched", "authorizationType": "OAUTH_CLIENT_CREDENTIALS",
				"authParameters.oauthParameters.clientParameters.clientId": "shop-client",
				"authParameters.invocationHttpParameters.headerParameters": []any{map[string]any{"key": "X-Token", "isValueSecret": true}}},
			after: func(t *testing.T, e *connEnv, _ *response) {
				assert.Equal(t, 3, strings.Count(e.rawAuthParameters(t, "shop"), rpc.SecretPrefixV2), "every secret kept")
			}},
		{name: "patch to another type", method: http.MethodPatch, url: "/api/v1/connections/shop",
			body: map[string]any{"authorizationType": "API_KEY", "authParameters": map[string]any{
				"apiKeyAuthParameters": map[string]any{"apiKeyName": "X-Key", "apiKeyValue": "api-key-value-1"}}},
			setup:  withConnection(basicConnection("shop")),
			status: http.StatusOK, json: map[string]any{"authorizationType": "API_KEY",
				"authParameters": map[string]any{"apiKeyAuthParameters": map[string]any{"apiKeyName": "X-Key"}}}},
		{name: "patch to another type without its parameters", method: http.MethodPatch, url: "/api/v1/connections/shop",
			body: map[string]any{"authorizationType": "API_KEY"}, setup: withConnection(basicConnection("shop")),
			status: http.StatusBadRequest, json: invalid(ap + "apiKeyAuthParameters")},
		{name: "patch unknown field", method: http.MethodPatch, url: "/api/v1/connections/shop",
			body: map[string]any{"name": "x"}, setup: withConnection(basicConnection("shop")),
			status: http.StatusBadRequest, json: malformed("name")},
		{name: "patch malformed JSON", method: http.MethodPatch, url: "/api/v1/connections/shop", body: `[`,
			setup: withConnection(basicConnection("shop")), status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"}},
		{name: "patch unknown", method: http.MethodPatch, url: "/api/v1/connections/nope", body: map[string]any{"description": "x"},
			status: http.StatusNotFound, json: map[string]any{"code": "ConnectionNotFound"}},
		{name: "delete", method: http.MethodDelete, url: "/api/v1/connections/shop", setup: withConnection(basicConnection("shop")),
			status: http.StatusNoContent,
			after: func(t *testing.T, e *connEnv, _ *response) {
				e.must(t, http.MethodGet, "/api/v1/connections/shop", nil, http.StatusNotFound)
				e.must(t, http.MethodDelete, "/api/v1/connections/shop", nil, http.StatusNotFound)
			}},
		{name: "delete in use", method: http.MethodDelete, url: "/api/v1/connections/shop",
			setup:  connSetups(withConnection(basicConnection("shop")), withDestination("orders", "shop"), withDestination("refunds", "shop")),
			status: http.StatusConflict, json: map[string]any{"code": "ConnectionInUse"}, contains: []string{"orders, refunds"},
			after: func(t *testing.T, e *connEnv, _ *response) {
				e.must(t, http.MethodDelete, "/api/v1/api-destinations/orders", nil, http.StatusNoContent)
				e.must(t, http.MethodDelete, "/api/v1/api-destinations/refunds", nil, http.StatusNoContent)
				e.must(t, http.MethodDelete, "/api/v1/connections/shop", nil, http.StatusNoContent)
			}},
	})
}

func destination(name, conn string) map[string]any {
	return map[string]any{"name": name, "connection": conn, "invocationEndpoint": "https://api.example.com/orders/*", "httpMethod": "POST"}
}

// withTargetUsing stores a bus, a rule and a target of the default account whose api_destination column names
// dest (as api-destination targets will).
func withTargetUsing(busName, ruleName, targetName, dest string) func(t *testing.T, e *connEnv) {
	return func(t *testing.T, e *connEnv) {
		ctx := context.Background()
		buses, rules, targets := persistence.NewBusRepository(e.db), persistence.NewRuleRepository(e.db), persistence.NewTargetRepository(e.db)
		b, err := buses.Get(ctx, "default", busName)
		if err != nil {
			b, err = bus.New("default", busName, "", bus.Retention{}, time.Now())
			require.NoError(t, err)
			require.NoError(t, buses.Create(ctx, b))
		}
		r, err := rules.Get(ctx, b.ID(), ruleName)
		if err != nil {
			r, err = rule.New("default", b.ID(), ruleName, "", []byte(`{"source": ["shop"]}`), rule.CloudEvents, "", time.Now())
			require.NoError(t, err)
			require.NoError(t, rules.Create(ctx, r))
		}
		tg, err := target.New("default", b.ID(), r.ID(), target.Spec{Name: targetName, Type: target.HTTP,
			HTTP: target.HTTPConfig{URL: "https://example.com/x"}, RetryPolicy: target.DefaultRetryPolicy()}, nil, time.Now())
		require.NoError(t, err)
		require.NoError(t, targets.Create(ctx, tg))
		_, err = e.db.SQL().ExecContext(ctx, "UPDATE targets SET api_destination = ? WHERE id = ?", dest, tg.ID())
		require.NoError(t, err)
	}
}

func TestAPIDestinations(t *testing.T) {
	t.Parallel()
	invalid := func(field string) map[string]any {
		return map[string]any{"code": "ValidationError", "field": field}
	}
	shop := withConnection(basicConnection("shop"))
	runConn(t, []connScenario{
		{
			name: "create with defaults", method: http.MethodPost, url: "/api/v1/api-destinations", body: destination("orders", "shop"),
			setup: shop, status: http.StatusCreated,
			json: map[string]any{"name": "orders", "description": "", "connection": "shop", "invocationEndpoint": "https://api.example.com/orders/*",
				"httpMethod": "POST", "invocationRateLimitPerSecond": 300},
			contains: []string{`"createdAt":"`},
			after: func(t *testing.T, e *connEnv, resp *response) {
				got := e.must(t, http.MethodGet, "/api/v1/api-destinations/orders", nil, http.StatusOK)
				assert.JSONEq(t, string(resp.Body), string(got.Body))
			},
		},
		{name: "create with a rate and a lower-case method", method: http.MethodPost, url: "/api/v1/api-destinations",
			body: with(with(destination("orders", "shop"), "invocationRateLimitPerSecond", 5), "httpMethod", "delete"), setup: shop,
			status: http.StatusCreated, json: map[string]any{"invocationRateLimitPerSecond": 5, "httpMethod": "DELETE"}},
		{name: "name missing", method: http.MethodPost, url: "/api/v1/api-destinations", body: with(destination("x", "shop"), "name", nil),
			setup: shop, status: http.StatusBadRequest, json: invalid("name")},
		{name: "connection missing", method: http.MethodPost, url: "/api/v1/api-destinations", body: destination("orders", ""),
			status: http.StatusBadRequest, json: invalid("connection")},
		{name: "connection unknown", method: http.MethodPost, url: "/api/v1/api-destinations", body: destination("orders", "nope"),
			setup: shop, status: http.StatusNotFound, json: map[string]any{"code": "ConnectionNotFound", "field": "connection"}},
		{name: "connection of another account", method: http.MethodPost, url: "/api/v1/api-destinations", headers: bAccount,
			body: destination("orders", "shop"), setup: shop,
			status: http.StatusNotFound, json: map[string]any{"code": "ConnectionNotFound", "field": "connection"}},
		{name: "endpoint missing", method: http.MethodPost, url: "/api/v1/api-destinations",
			body: with(destination("orders", "shop"), "invocationEndpoint", nil), setup: shop, status: http.StatusBadRequest, json: invalid("invocationEndpoint")},
		{name: "endpoint not http", method: http.MethodPost, url: "/api/v1/api-destinations",
			body: with(destination("orders", "shop"), "invocationEndpoint", "ftp://x/y"), setup: shop, status: http.StatusBadRequest, json: invalid("invocationEndpoint")},
		{name: "endpoint with a star inside a segment", method: http.MethodPost, url: "/api/v1/api-destinations",
			body: with(destination("orders", "shop"), "invocationEndpoint", "https://x/orders*"), setup: shop, status: http.StatusBadRequest, json: invalid("invocationEndpoint")},
		{name: "endpoint with eleven path parameters", method: http.MethodPost, url: "/api/v1/api-destinations",
			body: with(destination("orders", "shop"), "invocationEndpoint", "https://x"+strings.Repeat("/*", 11)), setup: shop,
			status: http.StatusBadRequest, json: invalid("invocationEndpoint")},
		{name: "method missing", method: http.MethodPost, url: "/api/v1/api-destinations",
			body: with(destination("orders", "shop"), "httpMethod", nil), setup: shop, status: http.StatusBadRequest, json: invalid("httpMethod")},
		{name: "method unknown", method: http.MethodPost, url: "/api/v1/api-destinations",
			body: with(destination("orders", "shop"), "httpMethod", "TRACE"), setup: shop, status: http.StatusBadRequest, json: invalid("httpMethod")},
		{name: "rate zero", method: http.MethodPost, url: "/api/v1/api-destinations",
			body: with(destination("orders", "shop"), "invocationRateLimitPerSecond", 0), setup: shop,
			status: http.StatusBadRequest, json: invalid("invocationRateLimitPerSecond")},
		{name: "rate too high", method: http.MethodPost, url: "/api/v1/api-destinations",
			body: with(destination("orders", "shop"), "invocationRateLimitPerSecond", 301), setup: shop,
			status: http.StatusBadRequest, json: invalid("invocationRateLimitPerSecond")},
		{name: "rate of the wrong JSON type", method: http.MethodPost, url: "/api/v1/api-destinations",
			body: with(destination("orders", "shop"), "invocationRateLimitPerSecond", "10"), setup: shop,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "invocationRateLimitPerSecond"}},
		{name: "unknown field", method: http.MethodPost, url: "/api/v1/api-destinations",
			body: with(destination("orders", "shop"), "connectionArn", "x"), setup: shop,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "connectionArn"}},
		{name: "malformed JSON", method: http.MethodPost, url: "/api/v1/api-destinations", body: `{"name": 1`,
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"}},
		{name: "duplicate", method: http.MethodPost, url: "/api/v1/api-destinations", body: destination("orders", "shop"),
			setup: connSetups(shop, withDestination("orders", "shop")), status: http.StatusConflict, json: map[string]any{"code": "ApiDestinationAlreadyExists"}},
		{name: "quota", method: http.MethodPost, url: "/api/v1/api-destinations", body: destination("d", "shop"),
			setup:  connSetups(shop, withDestination("a", "shop"), withDestination("b", "shop"), withDestination("c", "shop")),
			status: http.StatusConflict, json: map[string]any{"code": "ApiDestinationQuotaExceeded"}},
		{name: "list pages by name", method: http.MethodGet, url: "/api/v1/api-destinations?limit=2",
			setup:  connSetups(shop, withDestination("c", "shop"), withDestination("a", "shop"), withDestination("b", "shop")),
			status: http.StatusOK, json: map[string]any{"apiDestinations.0.name": "a", "apiDestinations.1.name": "b", "apiDestinations.1.connection": "shop"},
			after: func(t *testing.T, e *connEnv, resp *response) {
				next, _ := resp.JSON(t)["nextToken"].(string)
				require.NotEmpty(t, next)
				last := e.must(t, http.MethodGet, "/api/v1/api-destinations?limit=2&nextToken="+next, nil, http.StatusOK)
				assertJSONPath(t, last.JSON(t), "apiDestinations.0.name", "c")
				other := e.do(t, http.MethodGet, "/api/v1/api-destinations", bAccount, nil)
				assert.JSONEq(t, `{"apiDestinations": []}`, string(other.Body))
			}},
		{name: "list with a bad limit", method: http.MethodGet, url: "/api/v1/api-destinations?limit=x",
			status: http.StatusBadRequest, json: invalid("limit")},
		{name: "get unknown", method: http.MethodGet, url: "/api/v1/api-destinations/nope",
			status: http.StatusNotFound, json: map[string]any{"code": "ApiDestinationNotFound"}},
		{name: "get of another account", method: http.MethodGet, url: "/api/v1/api-destinations/orders", headers: bAccount,
			setup: connSetups(shop, withDestination("orders", "shop")), status: http.StatusNotFound, json: map[string]any{"code": "ApiDestinationNotFound"}},
		{name: "put creates", method: http.MethodPut, url: "/api/v1/api-destinations/orders", body: with(destination("x", "shop"), "name", nil),
			setup: shop, status: http.StatusCreated, json: map[string]any{"name": "orders"}},
		{name: "put replaces", method: http.MethodPut, url: "/api/v1/api-destinations/orders",
			body:   map[string]any{"connection": "other", "invocationEndpoint": "http://x/y", "httpMethod": "GET", "invocationRateLimitPerSecond": 7},
			setup:  connSetups(shop, withConnection(apiKeyConnection("other")), withDestination("orders", "shop")),
			status: http.StatusOK, json: map[string]any{"connection": "other", "invocationEndpoint": "http://x/y", "httpMethod": "GET",
				"invocationRateLimitPerSecond": 7, "description": ""},
			after: func(t *testing.T, e *connEnv, _ *response) {
				e.must(t, http.MethodDelete, "/api/v1/connections/shop", nil, http.StatusNoContent) // no longer in use
			}},
		{name: "put with another name", method: http.MethodPut, url: "/api/v1/api-destinations/orders", body: destination("x", "shop"),
			setup: shop, status: http.StatusBadRequest, json: invalid("name")},
		{name: "put of another account", method: http.MethodPut, url: "/api/v1/api-destinations/orders", headers: bAccount,
			body: destination("orders", "shop"), setup: connSetups(shop, withDestination("orders", "shop")),
			status: http.StatusNotFound, json: map[string]any{"code": "ConnectionNotFound"}},
		{name: "patch", method: http.MethodPatch, url: "/api/v1/api-destinations/orders",
			body: map[string]any{"invocationRateLimitPerSecond": 20, "description": "d"}, setup: connSetups(shop, withDestination("orders", "shop")),
			status: http.StatusOK, json: map[string]any{"invocationRateLimitPerSecond": 20, "description": "d", "httpMethod": "POST", "connection": "shop"}},
		{name: "patch to an unknown connection", method: http.MethodPatch, url: "/api/v1/api-destinations/orders",
			body: map[string]any{"connection": "nope"}, setup: connSetups(shop, withDestination("orders", "shop")),
			status: http.StatusNotFound, json: map[string]any{"code": "ConnectionNotFound", "field": "connection"}},
		{name: "patch a bad endpoint", method: http.MethodPatch, url: "/api/v1/api-destinations/orders",
			body: map[string]any{"invocationEndpoint": "x"}, setup: connSetups(shop, withDestination("orders", "shop")),
			status: http.StatusBadRequest, json: invalid("invocationEndpoint")},
		{name: "patch rate zero", method: http.MethodPatch, url: "/api/v1/api-destinations/orders",
			body: map[string]any{"invocationRateLimitPerSecond": 0}, setup: connSetups(shop, withDestination("orders", "shop")),
			status: http.StatusBadRequest, json: invalid("invocationRateLimitPerSecond")},
		{name: "patch unknown field", method: http.MethodPatch, url: "/api/v1/api-destinations/orders",
			body: map[string]any{"rate": 1}, setup: connSetups(shop, withDestination("orders", "shop")),
			status: http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest", "field": "rate"}},
		{name: "patch of another account", method: http.MethodPatch, url: "/api/v1/api-destinations/orders", headers: bAccount,
			body: map[string]any{"description": "x"}, setup: connSetups(shop, withDestination("orders", "shop")),
			status: http.StatusNotFound, json: map[string]any{"code": "ApiDestinationNotFound"}},
		{name: "delete", method: http.MethodDelete, url: "/api/v1/api-destinations/orders", setup: connSetups(shop, withDestination("orders", "shop")),
			status: http.StatusNoContent,
			after: func(t *testing.T, e *connEnv, _ *response) {
				e.must(t, http.MethodGet, "/api/v1/api-destinations/orders", nil, http.StatusNotFound)
			}},
		{name: "delete of another account", method: http.MethodDelete, url: "/api/v1/api-destinations/orders", headers: bAccount,
			setup: connSetups(shop, withDestination("orders", "shop")), status: http.StatusNotFound, json: map[string]any{"code": "ApiDestinationNotFound"}},
		{name: "delete in use by targets", method: http.MethodDelete, url: "/api/v1/api-destinations/orders",
			setup: connSetups(shop, withDestination("orders", "shop"), withTargetUsing("shop", "created", "t1", "orders"),
				withTargetUsing("shop", "created", "t2", "orders"), withTargetUsing("shop", "created", "t3", "other")),
			status: http.StatusConflict, json: map[string]any{"code": "ApiDestinationInUse"},
			contains: []string{"shop/created/t1, shop/created/t2"}, absent: []string{"t3"}},
	})
}

// TestConnectionSecretsStayEncrypted: secrets given through every verb appear in no answer and no log line, and
// the database holds them only as ciphertext: the raw bytes of the SQLite files, the raw column on MySQL.
func TestConnectionSecretsStayEncrypted(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			e := newConnEnv(t, dialect)
			var bodies [][]byte
			keep := func(r *response) { bodies = append(bodies, r.Body) }
			keep(e.must(t, http.MethodPost, "/api/v1/connections", oauthConnection("oauth"), http.StatusCreated))
			keep(e.must(t, http.MethodPut, "/api/v1/connections/basic", basicConnection("basic"), http.StatusCreated))
			keep(e.must(t, http.MethodPost, "/api/v1/connections", apiKeyConnection("key"), http.StatusCreated))
			keep(e.must(t, http.MethodPatch, "/api/v1/connections/oauth", map[string]any{"authParameters": map[string]any{
				"oauthParameters": map[string]any{"authorizationEndpoint": "https://auth.example.com/token", "httpMethod": "POST",
					"clientParameters": map[string]any{"clientId": "c2", "clientSecret": "client-secret-2"}}}}, http.StatusOK))
			keep(e.must(t, http.MethodPut, "/api/v1/connections/basic", with(basicConnection("basic"),
				"authParameters.basicAuthParameters.password", "basic-password-2"), http.StatusOK))
			keep(e.must(t, http.MethodGet, "/api/v1/connections", nil, http.StatusOK))
			for _, n := range []string{"oauth", "basic", "key"} {
				keep(e.must(t, http.MethodGet, "/api/v1/connections/"+n, nil, http.StatusOK))
			}
			// A rejected request quotes no secret either.
			keep(e.must(t, http.MethodPost, "/api/v1/connections", with(basicConnection("bad"),
				"authParameters.basicAuthParameters.password", "basic-password-1\x00"), http.StatusBadRequest))
			for _, b := range bodies {
				assert.NotContains(t, string(b), rpc.SealedPrefix, "not even the ciphertext is answered")
				for _, s := range allSecrets {
					assert.NotContains(t, string(b), s)
				}
			}
			for _, s := range allSecrets {
				assert.NotContains(t, e.logs.String(), s)
			}

			var raw []byte
			if dialect == persistence.SQLite {
				files, err := os.ReadDir(e.dir)
				require.NoError(t, err)
				for _, f := range files { // the database, its write-ahead log and its shared memory
					b, err := os.ReadFile(filepath.Join(e.dir, f.Name()))
					require.NoError(t, err)
					raw = append(raw, b...)
				}
				require.Contains(t, string(raw), "shop-client", "the check reads the database (what is not secret is there)")
			} else {
				rows, err := e.db.SQL().QueryContext(context.Background(), "SELECT name, auth_parameters FROM connections")
				require.NoError(t, err)
				defer rows.Close()
				for rows.Next() {
					var name, params string
					require.NoError(t, rows.Scan(&name, &params))
					raw = append(raw, params...)
				}
				require.NoError(t, rows.Err())
			}
			for _, s := range allSecrets {
				assert.NotContains(t, string(raw), s, "the database holds no plaintext secret")
			}
			assert.GreaterOrEqual(t, strings.Count(string(raw), rpc.SecretPrefixV2), 4, "the secrets are stored as ciphertext")
		})
	}
}
