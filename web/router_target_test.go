package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/eventbridge-go/eventbridge/web"
)

// TestTargetedRoutes: a request reaches a targeted operation only at its Method and Path with its header; the
// routed path cannot be asked for directly, and the header means nothing on other routes.
func TestTargetedRoutes(t *testing.T) {
	t.Parallel()
	r := newRouter(web.Config{}, web.Services{})
	serve := func(method, path, target string) *httptest.ResponseRecorder {
		req := localRequest(method, "/", nil)
		req.URL.Path = path // as a raw request line may say it, "#" included
		if target != "" {
			req.Header.Set("X-Amz-Target", target)
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		return rec
	}
	// Signed by nobody: the operation's guard answers AWS's error, so the request reached it.
	rec := serve(http.MethodPost, "/", "AWSEvents.ListEventBuses")
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Equal(t, "MissingAuthenticationTokenException", rec.Header().Get("X-Amzn-ErrorType"))

	rec = serve(http.MethodPost, "/", "AWSEvents.NoSuchOperation")
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Equal(t, "UnknownOperationException", rec.Header().Get("X-Amzn-ErrorType"))
	rec = serve(http.MethodPost, "/", "")
	assert.Equal(t, "UnknownOperationException", rec.Header().Get("X-Amzn-ErrorType"), "no header names no operation")

	for _, path := range []string{"/#AWSEvents.ListEventBuses", "/#?", "/api/v1/buses#x"} {
		rec = serve(http.MethodPost, path, "")
		assert.Equal(t, http.StatusNotFound, rec.Code, path)
		assert.Empty(t, rec.Header().Get("X-Amzn-ErrorType"), "%s reaches no operation", path)
	}
	rec = serve(http.MethodGet, "/api/v1/buses", "AWSEvents.ListEventBuses")
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "the header means nothing on /api/v1")
	assert.Empty(t, rec.Header().Get("X-Amzn-ErrorType"))
}
