package rpc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/rpc/rpctest"
)

func TestReadTokenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := strings.Repeat("Tk", 20)
	tests := []struct {
		name, content, want string
	}{
		{"hex", good + "\n", good},
		{"white space around", "\n  " + good + "\t\n", good},
		{"too short", "sekret-sekret", ""},
		{"space inside", strings.Repeat("sekret ", 8), ""},
		{"two lines", good + "\n" + good, ""},
		{"not ASCII", strings.Repeat("sekrét", 8), ""},
		{"empty", "", ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, strings.Repeat("t", i+1))
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			got, err := rpc.ReadTokenFile(path)
			if tt.want == "" {
				require.ErrorIs(t, err, rpc.ErrInvalidToken)
				assert.Contains(t, err.Error(), path)
				assert.NotContains(t, err.Error(), "sekr", "errors never show the token")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := rpc.ReadTokenFile(filepath.Join(dir, "absent"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	token, err := rpc.NewToken()
	require.NoError(t, err)
	assert.Len(t, token, 64)
	assert.NoError(t, rpc.CheckToken(token))
	other, err := rpc.NewToken()
	require.NoError(t, err)
	assert.NotEqual(t, token, other)
}

// The client sends its token on every request, to every worker it fails over to, and trusts the CA it is given.
func TestClientSendsTheToken(t *testing.T) {
	t.Parallel()
	got := make(chan string, 10)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		_, _ = w.Write([]byte(`[]`))
	}))
	t.Cleanup(srv.Close)
	c := rpc.NewClusterClient([]string{deadURL(t), srv.URL}, rpc.WithToken("the-token"))
	c.HTTP = srv.Client() // trusts the test server's certificate
	_, err := c.ListConnectorNames(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "Bearer the-token", <-got)

	// Without a token the client sends no Authorization header.
	c.Token = ""
	_, err = c.ListConnectorNames(context.Background())
	require.NoError(t, err)
	assert.Empty(t, <-got)
}

func TestReadCAFile(t *testing.T) {
	t.Parallel()
	f := rpctest.NewTLSFiles(t)
	pool, err := rpc.ReadCAFile(f.CA)
	require.NoError(t, err)
	assert.NotNil(t, pool)
	_, err = rpc.ReadCAFile(f.Key)
	assert.ErrorContains(t, err, "no PEM certificate")
	_, err = rpc.ReadCAFile(filepath.Join(t.TempDir(), "absent.pem"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
