package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionsAndAuditEndToEnd: the control plane on its ports. The administrator signs in with its password
// (a cookie jar, as a browser), changes something with the CSRF token, and finds in the audit log its sign-in, its
// change, and the calls that the runtime adapter and an operator made on the worker's REST API (merged from the
// audit stream), none of them holding a credential.
func TestSessionsAndAuditEndToEnd(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	m := startMain(t, dataDir)
	t.Cleanup(func() { _ = m.Close() })
	base := "http://" + m.HTTPAddr()
	password := readTrim(t, filepath.Join(dataDir, AdminPasswordFile))

	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar}
	send := func(method, path, body string, header map[string]string) (int, []byte) {
		t.Helper()
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, base+path, r)
		require.NoError(t, err)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := browser.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, b
	}
	status, body := send(http.MethodPost, "/api/v1/session", `{"username": "admin", "password": "wrong-password"}`, nil)
	require.Equal(t, http.StatusUnauthorized, status, string(body))
	status, body = send(http.MethodPost, "/api/v1/session", `{"username": "admin", "password": "`+password+`"}`, nil)
	require.Equal(t, http.StatusCreated, status, string(body))
	var sess struct{ CSRFToken string }
	require.NoError(t, json.Unmarshal(body, &sess))
	same := map[string]string{"Origin": base, "X-CSRF-Token": sess.CSRFToken}

	status, body = send(http.MethodPost, "/api/v1/buses", `{"name": "orders"}`, map[string]string{"Origin": base})
	require.Equal(t, http.StatusForbidden, status, "no CSRF token: %s", body)
	status, body = send(http.MethodPost, "/api/v1/buses", `{"name": "orders"}`, same)
	require.Equal(t, http.StatusCreated, status, string(body))
	status, _ = send(http.MethodPost, "/api/v1/buses", `{"name": "other"}`, map[string]string{"Content-Type": "text/plain",
		"Origin": base, "X-CSRF-Token": sess.CSRFToken})
	require.Equal(t, http.StatusUnsupportedMediaType, status)

	// An operator's call of the worker's REST API, with the cluster token.
	_, err = workerClient(m).ListConnectors(t.Context())
	require.NoError(t, err)

	type entry struct {
		Source    string
		Actor     struct{ Kind, Name string }
		Operation string
		Resource  string
		Outcome   string
	}
	var entries []entry
	require.Eventually(t, func() bool {
		status, body = send(http.MethodGet, "/api/v1/audit-log?allAccounts=true&limit=500", "", nil)
		require.Equal(t, http.StatusOK, status, string(body))
		var page struct{ Entries []entry }
		require.NoError(t, json.Unmarshal(body, &page))
		entries = page.Entries
		for _, e := range entries {
			if e.Operation == "worker.connectors.list" && e.Actor.Kind == "clusterToken" {
				return true
			}
		}
		return false
	}, 20*time.Second, 100*time.Millisecond, "the worker's calls reach the audit log")
	has := func(op, actor, outcome string) bool {
		for _, e := range entries {
			if e.Operation == op && e.Actor.Name == actor && e.Outcome == outcome {
				return true
			}
		}
		return false
	}
	assert.True(t, has("session.create", "admin", "success"))
	assert.True(t, has("session.create", "admin", "failure"), "the failed sign-in names the user it tried")
	assert.True(t, has("buses.create", "admin", "success"))
	assert.True(t, has("buses.create", "admin", "failure"), "the refused cross-site attempt")
	sources := map[string]bool{}
	for _, e := range entries {
		sources[e.Source] = true
	}
	assert.True(t, sources["worker:embedded"], "entries of the embedded worker: %v", sources)
	raw, _ := json.Marshal(entries)
	for _, secret := range []string{password, m.ClusterToken(), m.AdminAPIKey(), sess.CSRFToken} {
		assert.False(t, bytes.Contains(raw, []byte(secret)), "the audit log holds a credential")
	}

	// Sign out: the cookie authenticates no more.
	status, _ = send(http.MethodDelete, "/api/v1/session", "", same)
	require.Equal(t, http.StatusNoContent, status)
	status, _ = send(http.MethodGet, "/api/v1/me", "", nil)
	assert.Equal(t, http.StatusUnauthorized, status)
}
