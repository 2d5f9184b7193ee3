package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/persistence"
)

// TestSecretHeaders: an http target's Authorization, Cookie, Proxy-Authorization and X-Api-Key headers, and those
// it names in secretHeaders, are sealed when stored, answered *** in both dialects, kept by ***, and never taken
// sealed from a caller; its other headers are plain.
func TestSecretHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	e.createBus(t, "orders")
	e.createRule(t, "orders", "r")
	url := "/api/v1/buses/orders/rules/r/targets/t"
	put := func(headers map[string]any, secretHeaders ...string) *response {
		cfg := map[string]any{"url": "https://example.com/", "headers": headers}
		if len(secretHeaders) > 0 {
			cfg["secretHeaders"] = secretHeaders
		}
		return e.do(t, http.MethodPut, url, nil, map[string]any{"type": "http", "config": cfg})
	}
	stored := func() map[string]string {
		b, err := e.buses.Get(context.Background(), domain.DefaultAccountID, "orders")
		require.NoError(t, err)
		ts, err := e.services.Targets.Targets.ListByBus(context.Background(), b.ID())
		require.NoError(t, err)
		require.Len(t, ts, 1)
		return ts[0].HTTP().Headers
	}

	resp := put(map[string]any{"authorization": "Bearer s3cret-token", "Cookie": "session=s3cret-cookie",
		"X-Sig": "s3cret-sig", "X-Team": "shop"}, "x-sig")
	require.Equal(t, http.StatusCreated, resp.Status, "%s", resp.Body)
	assertJSONPath(t, resp.JSON(t), "config.headers", map[string]any{"authorization": "***", "Cookie": "***", "X-Sig": "***", "X-Team": "shop"})
	assertJSONPath(t, resp.JSON(t), "config.secretHeaders", []any{"X-Sig"})
	assert.NotContains(t, string(resp.Body), "s3cret")
	first := stored()
	for _, k := range []string{"authorization", "Cookie", "X-Sig"} {
		assert.Truef(t, strings.HasPrefix(first[k], target.SealedPrefix), "%s is sealed at rest", k)
		assert.NotContains(t, first[k], "s3cret")
	}
	assert.Equal(t, "shop", first["X-Team"])

	for _, r := range []struct{ method, url string }{{http.MethodGet, url}, {http.MethodGet, "/api/v1/buses/orders/rules/r/targets"}} {
		resp := e.do(t, r.method, r.url, nil, nil)
		require.Equal(t, http.StatusOK, resp.Status)
		assert.NotContains(t, string(resp.Body), "s3cret")
		assert.Contains(t, string(resp.Body), `"X-Sig":"***"`)
	}
	resp = e.do(t, http.MethodPost, "/target/listEventTargets", nil, ruleReq("orders", "r"))
	require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
	assert.NotContains(t, string(resp.Body), "s3cret")
	assert.Contains(t, string(resp.Body), `"authorization":"***"`)

	// *** keeps the stored secret; the other headers change.
	resp = put(map[string]any{"authorization": "***", "Cookie": "***", "X-Sig": "***", "X-Team": "billing"}, "X-Sig")
	require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
	second := stored()
	assert.Equal(t, first["authorization"], second["authorization"], "the stored secret is kept as it was")
	assert.Equal(t, "billing", second["X-Team"])

	// Refused: a sealed value as input (it could be another account's), a mask with nothing stored.
	resp = put(map[string]any{"Authorization": first["authorization"]})
	assert.Equal(t, http.StatusBadRequest, resp.Status)
	assertJSONPath(t, resp.JSON(t), "field", "config.headers.Authorization")
	resp = put(map[string]any{"X-Api-Key": "***"})
	assert.Equal(t, http.StatusBadRequest, resp.Status)
	assertJSONPath(t, resp.JSON(t), "field", "config.headers.X-Api-Key")
	resp = put(map[string]any{}, "bad header!")
	assert.Equal(t, http.StatusBadRequest, resp.Status)
	assertJSONPath(t, resp.JSON(t), "field", "config.secretHeaders")
	assert.Equal(t, second, stored(), "nothing refused was stored")
}

// TestSealStoredHeaders: the secret headers that targets stored in clear before they were sealed are sealed by
// SealStoredHeaders (run at start), and answered *** from then on.
func TestSealStoredHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	e.createBus(t, "orders")
	e.createRule(t, "orders", "r")
	ctx := context.Background()
	b, err := e.buses.Get(ctx, domain.DefaultAccountID, "orders")
	require.NoError(t, err)
	r, err := e.services.Rules.Get(ctx, domain.DefaultAccountID, "orders", "r")
	require.NoError(t, err)
	now := time.Now()
	old := target.UnmarshalFromDatabase(domain.NewID(), domain.DefaultAccountID, b.ID(), r.ID(), "legacy", target.HTTP,
		target.HTTPConfig{URL: "https://example.com/", Method: "POST", Mode: target.Binary, Timeout: 5 * time.Second,
			Headers: map[string]string{"Authorization": "Bearer in-clear", "X-Team": "shop"}},
		target.Spec{}.Transformer, target.DefaultRetryPolicy(), now, now)
	require.NoError(t, e.services.Targets.Targets.Create(ctx, old))

	n, err := e.services.Targets.SealStoredHeaders(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	got, err := e.services.Targets.Targets.Get(ctx, r.ID(), "legacy")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(got.HTTP().Headers["Authorization"], target.SealedPrefix))
	assert.Equal(t, "shop", got.HTTP().Headers["X-Team"])
	n, err = e.services.Targets.SealStoredHeaders(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "idempotent")
	resp := e.do(t, http.MethodGet, "/api/v1/buses/orders/rules/r/targets/legacy", nil, nil)
	assert.NotContains(t, string(resp.Body), "in-clear")
}
