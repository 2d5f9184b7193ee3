package web_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/accesskey"
	"github.com/eventbridge-go/eventbridge/persistence"
)

// TestAccessKeyAPI: an access key is created with a role and an expiry, its secret access key answered once; lists
// and reads never hold the secret, which is kept sealed (not in clear in the database) and opens for the key's
// credentials; revoked or expired, a key has no credentials; another account's key is AccessKeyNotFound; only
// account administrators manage them.
func TestAccessKeyAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	e.exactAccounts = true
	admin, other, editor := keyOf(t, e.services, "shop", access.Admin), keyOf(t, e.services, "else", access.Admin),
		keyOf(t, e.services, "shop", access.Editor)
	as := func(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

	resp := e.do(t, http.MethodPost, "/api/v1/access-keys", as(admin), map[string]any{"name": "terraform", "role": "editor",
		"expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	require.Equal(t, http.StatusCreated, resp.Status, "%s", resp.Body)
	created := resp.JSON(t)
	id, _ := created["accessKeyId"].(string)
	secret, _ := created["secretAccessKey"].(string)
	require.Regexp(t, `^AKIA[A-Z2-7]{16}$`, id)
	require.Regexp(t, `^[A-Za-z0-9+/]{40}$`, secret)
	assert.Equal(t, "editor", created["role"])
	assert.NotEmpty(t, created["expiresAt"])

	for _, url := range []string{"/api/v1/access-keys", "/api/v1/access-keys/" + id} {
		resp = e.do(t, http.MethodGet, url, as(admin), nil)
		require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
		assert.Contains(t, string(resp.Body), id)
		assert.NotContains(t, string(resp.Body), secret, "no secret after its creation")
		assert.NotContains(t, string(resp.Body), "secretAccessKey")
	}
	var sealed string
	require.NoError(t, e.db.SQL().QueryRow("SELECT sealed_secret FROM access_keys WHERE id = ?", id).Scan(&sealed))
	assert.NotContains(t, sealed, secret, "kept sealed")
	assert.Regexp(t, `^enc:`, sealed)

	p, got, err := e.services.AccessKeys.Credentials(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, secret, got, "the sealed secret opens for the key's credentials")
	assert.Equal(t, "shop", p.HomeAccount())

	// Another account's administrator: not found; an editor: forbidden.
	resp = e.do(t, http.MethodGet, "/api/v1/access-keys/"+id, as(other), nil)
	assert.Equal(t, http.StatusNotFound, resp.Status)
	assert.Contains(t, string(resp.Body), "AccessKeyNotFound")
	resp = e.do(t, http.MethodDelete, "/api/v1/access-keys/"+id, as(other), nil)
	assert.Equal(t, http.StatusNotFound, resp.Status)
	resp = e.do(t, http.MethodGet, "/api/v1/access-keys", as(other), nil)
	assert.NotContains(t, string(resp.Body), id)
	resp = e.do(t, http.MethodPost, "/api/v1/access-keys", as(editor), map[string]any{"name": "x", "role": "viewer"})
	assert.Equal(t, http.StatusForbidden, resp.Status)

	// Bad input names the field.
	for _, bad := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "x", "role": "owner"}, "role"},
		{map[string]any{"name": "a b", "role": "viewer"}, "name"},
		{map[string]any{"name": "x", "role": "viewer", "expiresAt": "2020-01-01T00:00:00Z"}, "expiresAt"},
		{map[string]any{"name": "x", "role": "viewer", "secretAccessKey": "mine"}, "accessKeyId"},
	} {
		resp = e.do(t, http.MethodPost, "/api/v1/access-keys", as(admin), bad.body)
		assert.Equal(t, http.StatusBadRequest, resp.Status, "%v: %s", bad.body, resp.Body)
		assert.Contains(t, string(resp.Body), `"field":"`+bad.field+`"`, "%v: %s", bad.body, resp.Body)
	}

	// Revoked: no credentials (at once on this replica), no longer listed, 404 when revoked again.
	resp = e.do(t, http.MethodDelete, "/api/v1/access-keys/"+id, as(admin), nil)
	require.Equal(t, http.StatusNoContent, resp.Status, "%s", resp.Body)
	_, _, err = e.services.AccessKeys.Credentials(context.Background(), id)
	assert.True(t, errors.Is(err, access.ErrUnauthenticated), "%v", err)
	resp = e.do(t, http.MethodGet, "/api/v1/access-keys", as(admin), nil)
	assert.NotContains(t, string(resp.Body), id)
	resp = e.do(t, http.MethodDelete, "/api/v1/access-keys/"+id, as(admin), nil)
	assert.Equal(t, http.StatusNotFound, resp.Status)

	// Expired: no credentials either; unknown: the same answer.
	k, _, err := e.services.AccessKeys.Create(context.Background(), nil, "shop", accesskey.Spec{Name: "short", Role: access.Viewer,
		ExpiresAt: time.Now().Add(50 * time.Millisecond)})
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond)
	_, _, err = e.services.AccessKeys.Credentials(context.Background(), k.ID())
	assert.True(t, errors.Is(err, access.ErrUnauthenticated), "expired: %v", err)
	_, _, err = e.services.AccessKeys.Credentials(context.Background(), "AKIAAAAAAAAAAAAAAAAA")
	assert.True(t, errors.Is(err, access.ErrUnauthenticated), "unknown: %v", err)
}
