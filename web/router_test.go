package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
	"github.com/eventbridge-go/eventbridge/web"
)

func TestRouter(t *testing.T) {
	t.Parallel()
	run(t, []scenario{
		{
			name: "healthz", method: http.MethodGet, url: "/healthz",
			status: http.StatusOK, json: map[string]any{"status": "ok"},
		},
		{
			name: "readyz without a readiness check", method: http.MethodGet, url: "/readyz",
			status: http.StatusOK, json: map[string]any{"status": "ok"},
		},
		{
			name: "unknown route", method: http.MethodGet, url: "/api/v1/nothing",
			status: http.StatusNotFound, json: map[string]any{"code": "RouteNotFound", "type": "about:blank", "status": 404},
		},
		{
			name: "wrong method", method: http.MethodPatch, url: "/api/v1/buses",
			status: http.StatusMethodNotAllowed, json: map[string]any{"code": "MethodNotAllowed"},
			after: func(t *testing.T, _ *env, resp *response) {
				assert.Contains(t, resp.Header.Get("Allow"), http.MethodGet)
				assert.Contains(t, resp.Header.Get("Allow"), http.MethodPost)
			},
		},
		{
			name: "invalid account header", method: http.MethodGet, url: "/api/v1/buses",
			headers: map[string]string{"X-Account-Id": "Not_Valid"},
			status:  http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "X-Account-Id"},
		},
		{
			name: "account header too long", method: http.MethodGet, url: "/api/v1/buses",
			headers: map[string]string{"X-Account-Id": "a123456789012345678901234567890123"},
			status:  http.StatusBadRequest, json: map[string]any{"field": "X-Account-Id"},
		},
		{
			name: "accounts do not see each other's buses", method: http.MethodGet, url: "/api/v1/buses/orders",
			headers: map[string]string{"X-Account-Id": "other"},
			setup:   withBus("orders"),
			status:  http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "an instance administrator acts in the account it names", method: http.MethodPost, url: "/api/v1/buses",
			headers: map[string]string{"X-Account-Id": "team42"}, body: map[string]any{"name": "orders"},
			status: http.StatusCreated,
			after: func(t *testing.T, e *env, _ *response) {
				resp := e.do(t, http.MethodGet, "/api/v1/buses", map[string]string{"X-Account-Id": "team42"}, nil)
				assertJSONPath(t, resp.JSON(t), "buses.0.name", "orders")
				resp = e.do(t, http.MethodGet, "/api/v1/buses", nil, nil)
				assertJSONPath(t, resp.JSON(t), "buses", []any{})
			},
		},
		{
			name: "/swagger/ leads to the UI", method: http.MethodGet, url: "/swagger/",
			status: http.StatusMovedPermanently,
			after: func(t *testing.T, _ *env, resp *response) {
				assert.Equal(t, "/swagger/index.html", resp.Header.Get("Location"))
			},
		},
		{
			name: "/swagger leads to /swagger/", method: http.MethodGet, url: "/swagger",
			status: http.StatusMovedPermanently,
			after: func(t *testing.T, _ *env, resp *response) {
				assert.Equal(t, "/swagger/", resp.Header.Get("Location"))
			},
		},
		{
			name: "swagger UI", method: http.MethodGet, url: "/swagger/index.html",
			status: http.StatusOK, contains: []string{"swagger-ui"},
		},
		{
			name: "swagger UI starts on the API's document", method: http.MethodGet, url: "/swagger/swagger-initializer.js",
			status: http.StatusOK, contains: []string{`url: "doc.json"`, "SwaggerUIBundle("},
		},
		{
			name: "swagger UI's files", method: http.MethodGet, url: "/swagger/swagger-ui-bundle.js",
			status: http.StatusOK, contains: []string{"SwaggerUIBundle"},
		},
		{
			name: "no other file under /swagger", method: http.MethodGet, url: "/swagger/secrets.json",
			status: http.StatusNotFound,
		},
		{
			name: "swagger document", method: http.MethodGet, url: "/swagger/doc.json",
			status: http.StatusOK, contains: []string{`"title": "EventBridge-Go API"`, `"/api/v1/buses/{bus}/events"`},
		},
	})
}

func TestReadyz(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	ready := errors.New("database: dial tcp 10.0.0.7:3306: connection refused")
	r := newRouter(web.Config{
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Ready:  func(context.Context) error { return ready },
	}, web.Services{})

	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, localRequest(http.MethodGet, "/readyz", nil))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
	var p web.Problem
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
	assert.Equal(t, "ServiceUnavailable", p.Code)
	assert.NotContains(t, rec.Body.String(), "10.0.0.7", "internal details are logged, not answered")
	assert.Contains(t, logs.String(), "10.0.0.7")
}

// TestRecovery: a panic in a handler is logged and answered with a 500 problem document; the server lives on.
func TestRecovery(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	// No services but the identities: any resource handler dereferences a nil service and panics.
	var s web.Services
	key := withIdentity(t, persistencetest.Open(t, persistence.SQLite), &s)
	r := newRouter(web.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))}, s)
	for range 2 {
		rec := httptest.NewRecorder()
		req := localRequest(http.MethodGet, "/api/v1/buses", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		r.ServeHTTP(rec, req)
		require.Equal(t, http.StatusInternalServerError, rec.Code)
		assert.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
		var p web.Problem
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
		assert.Equal(t, "InternalError", p.Code)
		assert.Equal(t, "about:blank", p.Type)
		assert.NotContains(t, rec.Body.String(), "nil pointer")
	}
	assert.Contains(t, logs.String(), "panic in handler")
	assert.Contains(t, logs.String(), "nil pointer")
}

// TestRequestLog: every request is logged at debug level.
func TestRequestLog(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	r := newRouter(web.Config{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, web.Services{})
	r.ServeHTTP(httptest.NewRecorder(), localRequest(http.MethodGet, "/healthz", nil))
	assert.Contains(t, logs.String(), "level=DEBUG msg=request method=GET path=/healthz status=200")
}
