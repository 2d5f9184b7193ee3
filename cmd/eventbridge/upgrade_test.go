package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// extract unpacks the tar.gz archive at path into dir.
func extract(t *testing.T, path, dir string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		require.NoError(t, err)
		target := filepath.Join(dir, filepath.Clean(h.Name))
		require.True(t, strings.HasPrefix(target, filepath.Clean(dir)+string(os.PathSeparator)), "a path inside the archive")
		switch h.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(target, 0o755))
		case tar.TypeReg:
			require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode).Perm())
			require.NoError(t, err)
			_, err = io.Copy(out, tr)
			require.NoError(t, err)
			require.NoError(t, out.Close())
		}
	}
}

// TestUpgrade starts the control plane on a data directory written by the release before identities
// (testdata/upgrade-b8e94d3.tar.gz, made by testdata/make-upgrade-fixture.sh): it gains an instance administrator
// whose key and password are in the data directory, every account that was used is a real account, every bus, rule,
// target, source, connection and API destination is there, every connector runs (the paused one stays paused), and
// events still flow. A second start makes no second administrator.
func TestUpgrade(t *testing.T) {
	dir := t.TempDir()
	extract(t, filepath.Join("testdata", "upgrade-b8e94d3.tar.gz"), dir)
	data := filepath.Join(dir, "data")
	_, err := os.Stat(filepath.Join(data, AdminAPIKeyFile))
	require.ErrorIs(t, err, os.ErrNotExist, "the old release had no administrator")

	m := startMain(t, data)
	for _, f := range []string{AdminAPIKeyFile, AdminPasswordFile} {
		info, err := os.Stat(filepath.Join(data, f))
		require.NoError(t, err, "the upgrade wrote %s", f)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), f)
	}
	info, err := os.Stat(data)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm(), "the data directory is narrowed to its owner")
	info, err = os.Stat(filepath.Join(data, "eventbridge.db"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the database the release before made 0644 is narrowed")
	key := m.AdminAPIKey()
	a := apiOf(t, m)

	var accounts struct{ Accounts []struct{ ID string } }
	require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/accounts", nil, 200), &accounts))
	var ids []string
	for _, acc := range accounts.Accounts {
		ids = append(ids, acc.ID)
	}
	assert.ElementsMatch(t, []string{"acme", "default"}, ids, "every account used before is an account")

	a.must("GET", "/api/v1/buses/orders", nil, 200)
	a.must("GET", "/api/v1/buses/orders/rules/created", nil, 200)
	a.must("GET", "/api/v1/buses/orders/rules/created/targets/printer", nil, 200)
	acme := a
	acme.account = "acme"
	acme.must("GET", "/api/v1/buses/billing", nil, 200)
	acme.must("GET", "/api/v1/buses/billing/rules/paid", nil, 200)
	ledger := acme.must("GET", "/api/v1/buses/billing/rules/paid/targets/ledger", nil, 200)
	assert.Contains(t, string(ledger), "s3cret", "the target's header is kept")
	acme.must("GET", "/api/v1/buses/billing/rules/paid/targets/audit", nil, 200)
	src := acme.must("GET", "/api/v1/buses/billing/sources/hook", nil, 200)
	assert.Contains(t, string(src), `"token"`)
	acme.must("GET", "/api/v1/connections/crm", nil, 200)
	acme.must("GET", "/api/v1/api-destinations/crm", nil, 200)

	// The connectors run as before the upgrade; the one paused then stays paused.
	for _, c := range []string{"eb.default.orders.router", "eb.default.orders.created.printer"} {
		a.waitState(c, "RUNNING")
	}
	for _, c := range []string{"eb.acme.billing.router", "eb.acme.billing.paid.ledger", "eb.acme.billing.source.hook"} {
		acme.waitState(c, "RUNNING")
	}
	acme.waitState("eb.acme.billing.paid.audit", "PAUSED")

	// Events flow: the target now points at a receiver, and an event put after the upgrade reaches it.
	r := newReceiver(t)
	a.must("PUT", "/api/v1/buses/orders/rules/created/targets/printer", httpTarget(r.srv.URL), 200)
	a.putBatch("orders", []map[string]any{event("after-upgrade", "shop", "order.created", map[string]any{"n": 1})})
	require.Eventually(t, func() bool { return r.snapshot()["after-upgrade"] > 0 }, 60*time.Second, 50*time.Millisecond,
		"the event put after the upgrade is delivered")

	// A second start keeps the administrator: no new key, the same one works.
	require.NoError(t, m.Close())
	m2 := startMain(t, data)
	t.Cleanup(func() { _ = m2.Close() })
	assert.Equal(t, key, m2.AdminAPIKey())
	a2 := apiOf(t, m2)
	a2.must("GET", "/api/v1/me", nil, 200)
	users := a2.must("GET", "/api/v1/users", nil, 200)
	assert.Equal(t, 1, strings.Count(string(users), `"username"`), "one administrator: %s", users)
}
