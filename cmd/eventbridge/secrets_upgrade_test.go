package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecretsUpgrade starts the control plane on a data directory whose secrets an earlier release sealed in
// version 1, bound to nothing (testdata/secrets-v1.tar.gz, made by testdata/make-v1-secrets-fixture.sh): a
// connection's API key and secret header, an http target's Authorization header, an mqtt target's password, a webhook
// source's signing secret, an eventbus source's NATS password, and a connector made through the worker REST API.
// Afterwards no connector config holds a version 1 value, every one of them runs, and every secret still works:
// the API destination and the http target send theirs, the webhook checks its signature.
func TestSecretsUpgrade(t *testing.T) {
	dir := t.TempDir()
	extract(t, filepath.Join("testdata", "secrets-v1.tar.gz"), dir)
	m := startMain(t, filepath.Join(dir, "data"))
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	w := workerClient(m)
	ctx := context.Background()

	// The database holds every secret sealed for its owner (version 2): none of version 1 is left.
	for _, q := range []string{"SELECT auth_parameters FROM connections", "SELECT config FROM sources", "SELECT config FROM targets"} {
		rows, err := m.db.SQL().QueryContext(ctx, q)
		require.NoError(t, err)
		values := 0
		for rows.Next() {
			var v string
			require.NoError(t, rows.Scan(&v))
			assert.NotContainsf(t, v, "enc:v1:", "%s", q)
			values += strings.Count(v, "enc:v2:")
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		assert.Positivef(t, values, "%s holds secrets sealed in version 2", q)
	}

	// Every connector config holds its secrets sealed for itself (version 2), the worker REST one's too.
	require.Eventually(t, func() bool {
		cs, err := w.ListConnectors(ctx)
		if err != nil {
			return false
		}
		for _, c := range cs {
			if c.Info == nil {
				return false
			}
			for _, v := range c.Info.Config {
				if strings.HasPrefix(v, "enc:v1:") {
					return false
				}
			}
		}
		return len(cs) == 8
	}, 30*time.Second, 100*time.Millisecond, "the connector configs are sealed again in version 2")
	cs, err := w.ListConnectors(ctx)
	require.NoError(t, err)
	sealed := 0
	for name, c := range cs {
		for k, v := range c.Info.Config {
			if strings.HasPrefix(v, "enc:v2:") {
				sealed++
				t.Logf("%s %s sealed for it", name, k)
			}
		}
	}
	assert.GreaterOrEqual(t, sealed, 6, "api key, secret header param, Authorization, mqtt password, NATS passwords, signing secret")
	assert.Equal(t, "enc:v2:", cs["ops-mirror"].Info.Config["nats.password"][:7], "the worker sealed its own connector's secret again")
	for _, c := range []string{"eb.default.orders.router", "eb.default.orders.all.crm", "eb.default.orders.all.hook",
		"eb.default.orders.all.broker", "eb.default.orders.source.gh", "eb.default.orders.source.feed"} {
		a.waitState(c, "RUNNING")
	}

	// The secrets still work where they are used.
	got := make(chan http.Header, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		rw.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	a.must("PATCH", "/api/v1/api-destinations/crm", map[string]any{"invocationEndpoint": srv.URL + "/crm"}, 200)
	var target struct {
		Config struct {
			Headers map[string]string `json:"headers"`
		} `json:"config"`
	}
	require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/buses/orders/rules/all/targets/hook", nil, 200), &target))
	assert.Equal(t, "***", target.Config.Headers["Authorization"])
	a.must("PUT", "/api/v1/buses/orders/rules/all/targets/hook", map[string]any{"type": "http", "config": map[string]any{
		"url": srv.URL + "/hook", "headers": target.Config.Headers}}, 200)
	a.must("DELETE", "/api/v1/buses/orders/rules/all/targets/broker", nil, 204)
	a.putBatch("orders", []map[string]any{event("after", "shop", "t", nil)})
	seen := map[string]http.Header{}
	for len(seen) < 2 {
		select {
		case h := <-got:
			if h.Get("X-Api-Key") != "" {
				seen["crm"] = h
			} else {
				seen["hook"] = h
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("the targets received %d of 2 requests", len(seen))
		}
	}
	assert.Equal(t, "crm-api-key-v1", seen["crm"].Get("X-Api-Key"), "the connection's API key")
	assert.Equal(t, "param-v1", seen["crm"].Get("X-Secret-Param"), "the connection's secret header")
	assert.Equal(t, "Bearer header-v1", seen["hook"].Get("Authorization"), "the http target's secret header")

	var src struct {
		Webhook struct{ URLs []string } `json:"webhook"`
	}
	require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/buses/orders/sources/gh", nil, 200), &src))
	require.NotEmpty(t, src.Webhook.URLs)
	body := []byte(`{"push": 1}`)
	mac := hmac.New(sha256.New, []byte("webhook-v1"))
	mac.Write(body)
	status, out := hook(t, "POST", src.Webhook.URLs[0], map[string]string{"Content-Type": "application/json",
		"X-Hub-Signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil))}, body)
	assert.Equal(t, http.StatusOK, status, "the webhook's signing secret still checks: %s", out)
}
