package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/rpc/rpctest"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
)

func TestParseFlagsSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	token := writeToken(t)
	shortToken := write("short-token", "sekret")
	creds := write("creds", "eventbridge:"+strings.Repeat("sekret", 4)+"\n")
	badCreds := write("bad-creds", "sekret-sekret-sekret-sekret")
	tlsFiles := rpctest.NewTLSFiles(t)
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		check   func(t *testing.T, m *Main)
		wantErr string
	}{
		{"token from the flag", nil, []string{"--cluster-token-file", token}, func(t *testing.T, m *Main) {
			assert.Equal(t, testToken, m.ClusterToken)
			assert.Nil(t, m.NATSCredentials)
			assert.Nil(t, m.TLS)
		}, ""},
		{"token from the environment", map[string]string{"EB_CLUSTER_TOKEN_FILE": token}, nil, func(t *testing.T, m *Main) {
			assert.Equal(t, testToken, m.ClusterToken)
		}, ""},
		{"no token", nil, nil, nil, "--cluster-token-file (or EB_CLUSTER_TOKEN_FILE) is required"},
		{"token file missing", nil, []string{"--cluster-token-file", filepath.Join(dir, "absent")}, nil, "--cluster-token-file"},
		{"token too short", nil, []string{"--cluster-token-file", shortToken}, nil, "visible ASCII"},
		{"credentials", map[string]string{"EB_NATS_CREDENTIALS_FILE": creds}, []string{"--cluster-token-file", token},
			func(t *testing.T, m *Main) {
				require.NotNil(t, m.NATSCredentials)
				assert.Equal(t, ebjs.Credentials{User: "eventbridge", Password: strings.Repeat("sekret", 4)}, *m.NATSCredentials)
			}, ""},
		{"bad credentials", nil, []string{"--cluster-token-file", token, "--nats-credentials-file", badCreds}, nil, "--nats-credentials-file"},
		{"TLS", map[string]string{"EB_TLS_CERT": tlsFiles.Cert, "EB_TLS_KEY": tlsFiles.Key},
			[]string{"--cluster-token-file", token, "--advertised-url", "https://w1:8083"}, func(t *testing.T, m *Main) {
				require.NotNil(t, m.TLS)
				assert.Len(t, m.TLS.Certificates, 1)
			}, ""},
		{"TLS certificate without key", nil, []string{"--cluster-token-file", token, "--tls-cert", tlsFiles.Cert}, nil, "--tls-cert and --tls-key go together"},
		{"TLS key without certificate", nil, []string{"--cluster-token-file", token, "--tls-key", tlsFiles.Key}, nil, "--tls-cert and --tls-key go together"},
		{"TLS key that is no key", nil, []string{"--cluster-token-file", token, "--tls-cert", tlsFiles.Cert, "--tls-key", tlsFiles.CA}, nil, "--tls-cert/--tls-key"},
		{"TLS with an http advertised URL", nil, []string{"--cluster-token-file", token, "--tls-cert", tlsFiles.Cert,
			"--tls-key", tlsFiles.Key, "--advertised-url", "http://w1:8083"}, nil, "must start with https://"},
		{"https advertised URL without TLS", nil, []string{"--cluster-token-file", token, "--advertised-url", "https://w1:8083"},
			nil, "must start with http://"},
		{"metrics address", map[string]string{"EB_METRICS_ADDR": "0.0.0.0:9100"}, []string{"--cluster-token-file", token},
			func(t *testing.T, m *Main) { assert.Equal(t, "0.0.0.0:9100", m.MetricsAddr) }, ""},
		{"bad metrics address", nil, []string{"--cluster-token-file", token, "--metrics-addr", "9100"}, nil, "--metrics-addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := NewMain()
			m.Stderr = io.Discard
			m.Getenv = func(k string) string { return tt.env[k] }
			err := m.ParseFlags(append([]string{"--nats", "nats://n:4222"}, tt.args...))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.NotContains(t, err.Error(), "sekret", "errors never show secrets")
				return
			}
			require.NoError(t, err)
			tt.check(t, m)
		})
	}
}

// --help and --version exit 0 (the version on stdout); a bad flag exits 2; every flag names its environment
// variable in the usage.
func TestCLIHelpAndVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		code     int
		run      bool
		stdout   string
		stderrRe string
	}{
		{"help", []string{"--help"}, 0, false, "", `(?s)Usage of worker:.*-cluster-token-file`},
		{"short help", []string{"-h"}, 0, false, "", `Usage of worker:`},
		{"version", []string{"--version"}, 0, false, "worker ", `^$`},
		{"version wins over missing flags", []string{"--version", "--rest-addr", "nope"}, 0, false, "worker ", `^$`},
		{"bad flag", []string{"--nope"}, 2, false, "", `flag provided but not defined: -nope`},
		{"missing token", []string{"--nats", "nats://n:4222"}, 2, false, "", `worker: --cluster-token-file`},
		{"runs", []string{"--nats", "nats://n:4222", "--cluster-token-file", writeToken(t)}, 0, true, "", `^$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			m := NewMain()
			m.Stderr = &stderr
			m.Getenv = func(string) string { return "" }
			code, run := m.cli(tt.args, &stdout)
			assert.Equal(t, tt.code, code)
			assert.Equal(t, tt.run, run)
			assert.True(t, strings.HasPrefix(stdout.String(), tt.stdout), "stdout %q", stdout.String())
			assert.Regexp(t, tt.stderrRe, stderr.String())
		})
	}

	v := Version()
	assert.NotEmpty(t, v)
	assert.Contains(t, v, "go1.", "the Go version the binary was built with")

	// Every flag of the usage names its environment variable, but --version.
	var usage bytes.Buffer
	m := NewMain()
	m.Stderr = &usage
	m.Getenv = func(string) string { return "" }
	require.ErrorIs(t, m.ParseFlags([]string{"--help"}), flag.ErrHelp)
	blocks := regexp.MustCompile(`(?m)^  -`).Split(usage.String(), -1)[1:]
	require.GreaterOrEqual(t, len(blocks), 15, usage.String())
	for _, b := range blocks {
		name := strings.Fields(b)[0]
		if name == "version" {
			assert.Contains(t, b, "no environment variable")
			continue
		}
		assert.Regexp(t, `env EB_[A-Z_]+`, strings.Join(strings.Fields(b), " "), "--%s names its variable", name)
	}
}

// A worker reaches an authenticating NATS with its credentials file and cannot without it; with --tls-cert it
// serves HTTPS to clients that trust the CA, the token still required; --metrics-addr serves the metrics without it.
func TestRunWithCredentialsTLSAndMetrics(t *testing.T) {
	t.Parallel()
	ns := startNATS(t)
	files := rpctest.NewTLSFiles(t)
	newMain := func(args ...string) *Main {
		m := NewMain()
		m.Stderr = io.Discard
		m.Getenv = func(string) string { return "" }
		require.NoError(t, m.ParseFlags(append(args, "--rest-addr", "127.0.0.1:0", "--cluster-token-file", writeToken(t))))
		t.Cleanup(func() { _ = m.Close() })
		return m
	}

	anonymous := newMain("--nats", ns.URL)
	err := anonymous.Run(context.Background())
	require.Error(t, err)
	assert.Contains(t, strings.ToLower(err.Error()), "authorization violation")
	wrong := filepath.Join(t.TempDir(), "wrong")
	require.NoError(t, os.WriteFile(wrong, []byte(ns.Creds.User+":"+strings.Repeat("w", 20)), 0o600))
	err = newMain("--nats", ns.URL, "--nats-credentials-file", wrong).Run(context.Background())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), strings.Repeat("w", 20))

	m := newMain("--nats", ns.URL, "--nats-credentials-file", ns.CredsFile, "--worker-id", "tls1",
		"--tls-cert", files.Cert, "--tls-key", files.Key, "--metrics-addr", "127.0.0.1:0")
	require.NoError(t, m.Run(context.Background()))
	require.True(t, strings.HasPrefix(m.URL(), "https://"), m.URL())

	pool, err := rpc.ReadCAFile(files.CA)
	require.NoError(t, err)
	info, err := tokenClient(m.URL(), rpc.WithRootCAs(pool)).ClusterInfo(context.Background())
	require.NoError(t, err, "a client trusting the CA reaches the worker over TLS")
	require.Len(t, info.Workers, 1)
	assert.Equal(t, m.URL(), info.Workers[0].URL, "the worker announces its https URL")
	_, err = rpc.NewClient(m.URL(), rpc.WithRootCAs(pool)).ListConnectorNames(context.Background())
	assert.True(t, rpc.IsUnauthorized(err), "TLS does not replace the token: %v", err)
	_, err = tokenClient(m.URL()).ListConnectorNames(context.Background())
	assert.ErrorContains(t, err, "certificate", "a client without the CA refuses the certificate")

	resp, err := http.Get("http://" + m.BoundMetricsAddr() + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "go_goroutines")
}
