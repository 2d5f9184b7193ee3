package jetstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func startServer(t *testing.T, cfg ServerConfig) *Server {
	t.Helper()
	cfg.StoreDir = t.TempDir()
	srv, err := StartServer(cfg)
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	return srv
}

// A server with credentials refuses every client without them, over TCP and in process; its own Connect and a
// TCP client with them get in.
func TestServerRequiresCredentials(t *testing.T) {
	t.Parallel()
	creds, err := NewCredentials()
	require.NoError(t, err)
	srv := startServer(t, ServerConfig{Listen: "127.0.0.1:-1", Credentials: &creds})
	url := srv.ClientURL()
	tests := []struct {
		name string
		opts []nats.Option
		ok   bool
	}{
		{"anonymous", nil, false},
		{"wrong password", []nats.Option{nats.UserInfo(creds.User, creds.Password+"x")}, false},
		{"wrong user", []nats.Option{nats.UserInfo("other", creds.Password)}, false},
		{"token instead", []nats.Option{nats.Token(creds.Password)}, false},
		{"credentials", []nats.Option{creds.Option()}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			nc, err := nats.Connect(url, append(tt.opts, nats.MaxReconnects(0))...)
			if !tt.ok {
				require.Error(t, err)
				assert.ErrorIs(t, err, nats.ErrAuthorization)
				return
			}
			require.NoError(t, err)
			nc.Close()
		})
	}
	t.Run("in process without credentials", func(t *testing.T) {
		t.Parallel()
		// The server closes the pipe after the refusal, which the client may see first.
		nc, err := nats.Connect("", nats.InProcessServer(srv.ns), nats.MaxReconnects(0), nats.Timeout(time.Second))
		if err == nil {
			nc.Close()
		}
		assert.Error(t, err)
	})
	t.Run("in process through Connect", func(t *testing.T) {
		t.Parallel()
		nc, err := srv.Connect("test")
		require.NoError(t, err)
		defer nc.Close()
		_, err = nc.JetStream()
		require.NoError(t, err)
	})
}

func TestStartServerRefusesAnonymousListener(t *testing.T) {
	t.Parallel()
	_, err := StartServer(ServerConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs credentials")

	// In process only, or allowed explicitly, a server may run without credentials.
	srv := startServer(t, ServerConfig{})
	nc, err := srv.Connect("test")
	require.NoError(t, err)
	nc.Close()
	srv = startServer(t, ServerConfig{Listen: "127.0.0.1:-1", AllowAnonymous: true})
	nc, err = nats.Connect(srv.ClientURL())
	require.NoError(t, err)
	nc.Close()

	_, err = StartServer(ServerConfig{StoreDir: t.TempDir(), Credentials: &Credentials{User: "u", Password: "short"}})
	assert.ErrorIs(t, err, ErrInvalidCredentials)
}

func TestReadCredentialsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pw := strings.Repeat("s3cr3t", 4)
	tests := []struct {
		name    string
		content string
		want    Credentials
		wantErr bool
	}{
		{"line", "eventbridge:" + pw + "\n", Credentials{"eventbridge", pw}, false},
		{"white space around", "  \n u.s_e-r:" + pw + "  \n\n", Credentials{"u.s_e-r", pw}, false},
		{"colon in the password", "u:a:" + pw, Credentials{"u", "a:" + pw}, false},
		{"no colon", "eventbridge" + pw, Credentials{}, true},
		{"empty user", ":" + pw, Credentials{}, true},
		{"short password", "u:short", Credentials{}, true},
		{"space in the password", "u:" + pw + " " + pw, Credentials{}, true},
		{"two lines", "u:" + pw + "\nv:" + pw, Credentials{}, true},
		{"bcrypt-like password", "u:$2a$11$" + pw, Credentials{}, true},
		{"bad user", "us er:" + pw, Credentials{}, true},
		{"empty", "", Credentials{}, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, strings.Repeat("c", i+1))
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			got, err := ReadCredentialsFile(path)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrInvalidCredentials)
				assert.Contains(t, err.Error(), path)
				assert.NotContains(t, err.Error(), "s3cr3t", "errors never show the password")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := ReadCredentialsFile(filepath.Join(dir, "absent"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	c, err := NewCredentials()
	require.NoError(t, err)
	require.NoError(t, c.Validate())
	path := filepath.Join(dir, "generated")
	require.NoError(t, os.WriteFile(path, []byte(c.FileLine()), 0o600))
	back, err := ReadCredentialsFile(path)
	require.NoError(t, err)
	assert.Equal(t, c, back, "FileLine writes what ReadCredentialsFile reads")
	assert.NotContains(t, c.String(), c.Password)
}
