package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startLogged is startMain with the log in a buffer.
func startLogged(t *testing.T, dataDir string, logs *syncBuffer, extra ...string) (*Main, error) {
	t.Helper()
	m := NewMain()
	args := append([]string{"--http-addr", "127.0.0.1:0", "--worker-addr", "127.0.0.1:0", "--data-dir", dataDir,
		"--allow-private-targets"}, extra...)
	require.NoError(t, m.ParseFlags(args, func(string) string { return "" }))
	m.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	err := m.Run(context.Background())
	t.Cleanup(func() { _ = m.Close() })
	return m, err
}

// status sends GET path with key and returns the status.
func status(t *testing.T, m *Main, key, path string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+m.HTTPAddr()+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// TestBootstrapGenerated: the first start makes the administrator and writes its password and key into the data
// directory (0600 files in a 0700 directory); the log names the files, never their content; the password signs the
// user admin in.
func TestBootstrapGenerated(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	logs := &syncBuffer{}
	m, err := startLogged(t, data, logs)
	require.NoError(t, err)
	key, pw := m.AdminAPIKey(), readTrim(t, filepath.Join(data, AdminPasswordFile))
	require.Regexp(t, `^ebk_[a-z2-7]{16}_[A-Za-z0-9_-]{43}$`, key)
	require.GreaterOrEqual(t, len(pw), 24)
	for _, f := range []string{AdminAPIKeyFile, AdminPasswordFile} {
		info, err := os.Stat(filepath.Join(data, f))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), f)
	}
	info, err := os.Stat(data)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())
	assert.Contains(t, logs.String(), filepath.Join(data, AdminAPIKeyFile), "the log says where the key is")
	assert.NotContains(t, logs.String(), key, "never what it is")
	assert.NotContains(t, logs.String(), pw)
	assert.Equal(t, http.StatusOK, status(t, m, key, "/api/v1/users"))
	p, err := m.identity.users.Authenticate(context.Background(), AdminUsername, pw)
	require.NoError(t, err)
	assert.True(t, p.InstanceAdmin())
}

// TestBootstrapFromFiles: with --bootstrap-admin-password-file and --bootstrap-api-key-file the administrator's
// secrets come from the files and nothing is written into the data directory; a key put into the file later (all
// keys lost) is imported at the next start; a bad key file stops the start with a message that names the file and
// not its content.
func TestBootstrapFromFiles(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	key := "ebk_abcdefghijklmnop_" + strings.Repeat("Q", 43)
	keyFile, pwFile := filepath.Join(dir, "key"), filepath.Join(dir, "pw")
	require.NoError(t, os.WriteFile(keyFile, []byte(key+"\n"), 0o600))
	require.NoError(t, os.WriteFile(pwFile, []byte("a production passphrase\n"), 0o600))
	flags := []string{"--bootstrap-api-key-file", keyFile, "--bootstrap-admin-password-file", pwFile}

	m, err := startLogged(t, data, &syncBuffer{}, flags...)
	require.NoError(t, err)
	assert.Equal(t, "", m.AdminAPIKey(), "nothing written into the data directory")
	_, err = os.Stat(filepath.Join(data, AdminPasswordFile))
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Equal(t, http.StatusOK, status(t, m, key, "/api/v1/accounts"))
	_, err = m.identity.users.Authenticate(context.Background(), AdminUsername, "a production passphrase")
	require.NoError(t, err)
	require.NoError(t, m.Close())

	// Every key lost: a new one in the file is imported at the next start.
	key2 := "ebk_qrstuvwxyz234567_" + strings.Repeat("R", 43)
	require.NoError(t, os.WriteFile(keyFile, []byte(key2), 0o600))
	logs := &syncBuffer{}
	m, err = startLogged(t, data, logs, flags...)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status(t, m, key2, "/api/v1/accounts"))
	assert.Equal(t, http.StatusOK, status(t, m, key, "/api/v1/accounts"), "the first key is still valid")
	assert.Contains(t, logs.String(), "imported")
	assert.NotContains(t, logs.String(), key2)
	require.NoError(t, m.Close())

	require.NoError(t, os.WriteFile(keyFile, []byte("not-a-key-at-all"), 0o600))
	_, err = startLogged(t, filepath.Join(dir, "fresh"), &syncBuffer{}, flags...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), keyFile)
	assert.NotContains(t, err.Error(), "not-a-key-at-all")
}

// TestBootstrapOneAdminForReplicas: control-plane replicas starting together on one MySQL database make one
// administrator (the bootstrap runs under the migration lock).
func TestBootstrapOneAdminForReplicas(t *testing.T) {
	dsn := "mysql://" + persistencetest.NewMySQLDatabase(t)
	const replicas = 3
	var wg sync.WaitGroup
	mains := make([]*Main, replicas)
	errs := make([]error, replicas)
	for i := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mains[i], errs[i] = startLogged(t, t.TempDir(), &syncBuffer{}, "--db", dsn, "--cluster-id", fmt.Sprintf("r%d", i))
		}()
	}
	wg.Wait()
	var keys []string
	for i := range replicas {
		require.NoError(t, errs[i])
		if k := mains[i].AdminAPIKey(); k != "" {
			keys = append(keys, k)
		}
	}
	require.Len(t, keys, 1, "one replica made the administrator")
	for i := range replicas {
		assert.Equal(t, http.StatusOK, status(t, mains[i], keys[0], "/api/v1/me"), "every replica takes its key")
	}
	db, err := persistence.Open(context.Background(), dsn, nil)
	require.NoError(t, err)
	defer db.Close()
	var users, adminKeys int
	require.NoError(t, db.SQL().QueryRow("SELECT COUNT(*) FROM users").Scan(&users))
	require.NoError(t, db.SQL().QueryRow("SELECT COUNT(*) FROM api_keys WHERE instance_admin").Scan(&adminKeys))
	assert.Equal(t, 1, users)
	assert.Equal(t, 1, adminKeys)
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

// TestAccountDeletionEndToEnd: an account made by the administrator gets a key of its own, a channel whose
// connectors run and delivers; deleting the account (confirmed) removes its connectors from the runtime, its
// streams and its keys, and leaves the other accounts' channels running.
func TestAccountDeletionEndToEnd(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	admin := apiOf(t, m)
	admin.must("POST", "/api/v1/accounts", map[string]any{"id": "shop"}, 201)
	var key struct{ Secret string }
	admin.account = "shop"
	require.NoError(t, json.Unmarshal(admin.must("POST", "/api/v1/api-keys", map[string]any{"name": "owner", "role": "admin"}, 201), &key))
	shop := api{t: t, base: admin.base, key: key.Secret}
	admin.account = ""

	r := newReceiver(t)
	for _, a := range []api{shop, admin} {
		a.must("POST", "/api/v1/buses", map[string]any{"name": "orders"}, 201)
		a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
		a.must("PUT", "/api/v1/buses/orders/rules/all/targets/t", httpTarget(r.srv.URL), 201)
		a.must("POST", "/api/v1/buses/orders/sources", map[string]any{"name": "hook", "type": "http"}, 201)
	}
	shop.putBatch("orders", []map[string]any{event("s1", "shop", "t", nil)})
	admin.putBatch("orders", []map[string]any{event("d1", "shop", "t", nil)})
	r.waitFor(t, map[string]bool{"s1": true, "d1": true})

	w := workerClient(m)
	names := func(prefix string) []string {
		cs, err := w.ListConnectors(context.Background())
		require.NoError(t, err)
		var out []string
		for n := range cs {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n)
			}
		}
		return out
	}
	require.Len(t, names("eb.shop."), 3, "router, target and source of shop")

	status, body := admin.do("DELETE", "/api/v1/accounts/shop", "", nil)
	require.Equal(t, http.StatusBadRequest, status, "unconfirmed: %s", body)
	admin.must("DELETE", "/api/v1/accounts/shop?confirm=shop", nil, 204)
	assert.Empty(t, names("eb.shop."), "the account's connectors are gone")
	assert.Len(t, names("eb.default."), 3, "the other account's stay")
	status, _ = shop.do("GET", "/api/v1/buses", "", nil)
	assert.Equal(t, http.StatusUnauthorized, status, "the account's keys are gone")
	admin.account = "shop"
	status, _ = admin.do("GET", "/api/v1/buses", "", nil)
	assert.Equal(t, http.StatusNotFound, status, "the account is gone")
	admin.account = ""
	admin.putBatch("orders", []map[string]any{event("d2", "shop", "t", nil)})
	require.Eventually(t, func() bool { return r.snapshot()["d2"] > 0 }, 30*time.Second, 20*time.Millisecond, "default still delivers")
}
