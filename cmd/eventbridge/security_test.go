package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/listener/listenertest"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/rpc/rpctest"
	"github.com/eventbridge-go/eventbridge/worker"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
)

// --help and --version exit 0 (the version on stdout); a bad flag or configuration exits 2; every flag names its
// environment variable in the usage.
func TestCLIHelpAndVersion(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	tests := []struct {
		name     string
		args     []string
		code     int
		run      bool
		stdout   string
		stderrRe string
	}{
		{"help", []string{"--help"}, 0, false, "", `(?s)Usage of eventbridge:.*-cluster-token-file`},
		{"short help", []string{"-h"}, 0, false, "", `Usage of eventbridge:`},
		{"version", []string{"--version"}, 0, false, "eventbridge ", `^$`},
		{"version wins over a bad configuration", []string{"--fsync", "sometimes", "--version"}, 0, false, "eventbridge ", `^$`},
		{"bad flag", []string{"--nope"}, 2, false, "", `flag provided but not defined: -nope`},
		{"bad configuration", []string{"--runtime", "http://w:8083"}, 2, false, "", `eventbridge: --cluster-token-file`},
		{"runs", nil, 0, true, "", `^$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code, run := NewMain().cli(tt.args, none, &stdout, &stderr)
			assert.Equal(t, tt.code, code)
			assert.Equal(t, tt.run, run)
			assert.True(t, strings.HasPrefix(stdout.String(), tt.stdout), "stdout %q", stdout.String())
			assert.Regexp(t, tt.stderrRe, stderr.String())
		})
	}
	_, err := ParseConfig([]string{"--version"}, none)
	assert.ErrorIs(t, err, ErrVersion)
	assert.Contains(t, Version(), "go1.")

	var usage bytes.Buffer
	_, err = parseConfig([]string{"--help"}, none, &usage)
	require.ErrorIs(t, err, flag.ErrHelp)
	blocks := regexp.MustCompile(`(?m)^  -`).Split(usage.String(), -1)[1:]
	require.GreaterOrEqual(t, len(blocks), 27, usage.String())
	for _, b := range blocks {
		name := strings.Fields(b)[0]
		if name == "version" {
			assert.Contains(t, b, "no environment variable")
			continue
		}
		assert.Regexp(t, `env EB_[A-Z_]+`, strings.Join(strings.Fields(b), " "), "--%s names its variable", name)
	}
}

// In embedded mode the cluster token and the NATS credentials are generated into the private data directory on
// first start and read afterwards; the embedded worker requires the token; errors never show the secrets.
func TestEmbeddedSecretsGeneratedOnce(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	m := startMain(t, dataDir, "--metrics-addr", "127.0.0.1:0")
	token, creds := m.ClusterToken(), m.NATSCredentials()
	require.NoError(t, rpc.CheckToken(token))
	require.NotNil(t, creds)
	for _, name := range []string{"cluster-token", "nats-credentials", "master.key"} {
		st, err := os.Stat(filepath.Join(dataDir, name))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), name)
	}
	st, err := os.Stat(dataDir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm(), "the data directory is private")
	fileToken, err := rpc.ReadTokenFile(filepath.Join(dataDir, "cluster-token"))
	require.NoError(t, err)
	assert.Equal(t, token, fileToken)

	// The embedded worker wants the token; /healthz and the --metrics-addr listener do not.
	base := "http://" + m.WorkerAddr()
	status := func(url, bearer string) int {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		require.NoError(t, err)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusUnauthorized, status(base+"/connectors", ""))
	assert.Equal(t, http.StatusUnauthorized, status(base+"/metrics", ""))
	assert.Equal(t, http.StatusOK, status(base+"/connectors", token))
	assert.Equal(t, http.StatusOK, status(base+"/healthz", ""))
	assert.Equal(t, http.StatusOK, status("http://"+m.WorkerMetricsAddr()+"/metrics", ""))
	// The runtime adapter sends the token.
	ws, err := m.adapter.Workers(context.Background())
	require.NoError(t, err)
	require.Len(t, ws, 1)
	_, err = m.adapter.Plugins(context.Background())
	require.NoError(t, err)
	require.NoError(t, m.Close())

	// A second start reads the same secrets.
	m2 := startMain(t, dataDir)
	assert.Equal(t, token, m2.ClusterToken())
	assert.Equal(t, *creds, *m2.NATSCredentials())
	require.NoError(t, m2.Close())

	// --cluster-token-file and --nats-credentials-file replace the generated files, and a bad file fails the
	// start without showing its content.
	tokenFile, fileTok := writeTokenFile(t)
	other, err := ebjs.NewCredentials()
	require.NoError(t, err)
	credsFile := filepath.Join(t.TempDir(), "nats-credentials")
	require.NoError(t, os.WriteFile(credsFile, []byte(other.FileLine()), 0o600))
	m3 := startMain(t, dataDir, "--cluster-token-file", tokenFile, "--nats-credentials-file", credsFile)
	assert.Equal(t, fileTok, m3.ClusterToken())
	assert.Equal(t, other, *m3.NATSCredentials())
	require.NoError(t, m3.Close())

	bad := filepath.Join(t.TempDir(), "bad-token")
	require.NoError(t, os.WriteFile(bad, []byte("sekret-but-short"), 0o600))
	m4 := NewMain()
	require.NoError(t, m4.ParseFlags([]string{"--http-addr", "127.0.0.1:0", "--worker-addr", "127.0.0.1:0",
		"--data-dir", dataDir, "--cluster-token-file", bad, "--log-level", "warn"}, func(string) string { return "" }))
	err = m4.Run(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), bad)
	assert.NotContains(t, err.Error(), "sekret")
	require.NoError(t, m4.Close())
}

// buildWorker builds cmd/worker once per test binary run.
var buildWorker = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "eb-worker-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "worker")
	if out, err := exec.Command("go", "build", "-o", bin, "../worker").CombinedOutput(); err != nil {
		return "", &buildError{err: err, out: string(out)}
	}
	return bin, nil
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build ../worker: " + e.err.Error() + ": " + e.out }

// With --nats-listen the embedded NATS server refuses clients without its credentials or with a wrong password and
// takes those with them; a cmd/worker process given the data directory's credentials and token files joins the
// embedded worker's cluster, and without the credentials it cannot start.
func TestNATSListenRequiresCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/worker")
	}
	t.Parallel()
	dataDir := t.TempDir()
	natsAddr := listenertest.Addr(t)
	m := startMain(t, dataDir, "--nats-listen", natsAddr, "--worker-id", "cp")
	defer func() { require.NoError(t, m.Close()) }()
	creds := m.NATSCredentials()
	url := "nats://" + natsAddr

	for _, tt := range []struct {
		name string
		opts []nats.Option
	}{
		{"anonymous", nil},
		{"wrong password", []nats.Option{nats.UserInfo(creds.User, creds.Password[1:])}},
		{"wrong user", []nats.Option{nats.UserInfo("admin", creds.Password)}},
	} {
		_, err := nats.Connect(url, append(tt.opts, nats.MaxReconnects(0))...)
		assert.ErrorIs(t, err, nats.ErrAuthorization, tt.name)
	}
	nc, err := nats.Connect(url, creds.Option(), nats.MaxReconnects(0))
	require.NoError(t, err, "the credentials of the data directory are accepted")
	nc.Close()

	bin, err := buildWorker()
	require.NoError(t, err)
	run := func(args ...string) (*exec.Cmd, *bytes.Buffer) {
		var out bytes.Buffer
		cmd := exec.Command(bin, append([]string{"--nats", url, "--rest-addr", listenertest.Addr(t), "--worker-id", "w2",
			"--cluster-token-file", filepath.Join(dataDir, "cluster-token"), "--master-key", filepath.Join(dataDir, "master.key"),
			"--log-level", "warn"}, args...)...)
		cmd.Stdout, cmd.Stderr = &out, &out
		return cmd, &out
	}

	// Without the credentials file the worker cannot connect and exits.
	cmd, out := run()
	err = cmd.Run()
	require.Error(t, err)
	assert.Contains(t, strings.ToLower(out.String()), "authorization violation")

	cmd, out = run("--nats-credentials-file", filepath.Join(dataDir, "nats-credentials"))
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	require.Eventually(t, func() bool {
		ci, err := workerClient(m).ClusterInfo(context.Background())
		return err == nil && len(ci.Workers) == 2
	}, 30*time.Second, 50*time.Millisecond, "the worker process joins the embedded worker's cluster: %s", out)
}

// With --tls-cert and --tls-key the API serves HTTPS, which a client trusting the CA reaches; with
// --runtime-ca-file the runtime adapter reaches a remote worker served over HTTPS with the cluster token.
func TestTLS(t *testing.T) {
	t.Parallel()
	files := rpctest.NewTLSFiles(t)
	tokenFile, token := writeTokenFile(t)
	caPEM, err := os.ReadFile(files.CA)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))

	// A remote worker over TLS, on the control plane's embedded NATS server.
	natsAddr := listenertest.Addr(t)
	cert, err := tls.LoadX509KeyPair(files.Cert, files.Key)
	require.NoError(t, err)
	dataDir := t.TempDir()
	workerAddr := listenertest.Addr(t)
	m := startMain(t, dataDir, "--nats-listen", natsAddr, "--tls-cert", files.Cert, "--tls-key", files.Key,
		"--runtime", "https://"+workerAddr, "--runtime-ca-file", files.CA, "--cluster-token-file", tokenFile)
	defer func() { require.NoError(t, m.Close()) }()
	nc, err := nats.Connect("nats://"+natsAddr, m.NATSCredentials().Option())
	require.NoError(t, err)
	defer nc.Close()
	w, err := worker.New(worker.Config{NATS: nc, WorkerID: "tls-worker", RESTAddr: workerAddr, Token: token,
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	defer func() { require.NoError(t, w.Close(context.Background())) }()

	require.True(t, strings.HasPrefix(m.HTTPURL(), "https://"), m.HTTPURL())
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get(m.HTTPURL() + "/readyz")
	require.NoError(t, err, "a client trusting the CA reaches the API over TLS")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = http.Get(m.HTTPURL() + "/readyz")
	assert.ErrorContains(t, err, "certificate", "a client without the CA refuses the certificate")
	resp, err = http.Get("http://" + m.HTTPAddr() + "/readyz")
	if err == nil {
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP on the TLS listener is refused")
	}

	// The runtime adapter reaches the HTTPS worker (its CA from --runtime-ca-file, its token from the file).
	ws, err := m.adapter.Workers(context.Background())
	require.NoError(t, err)
	require.Len(t, ws, 1)
	assert.Equal(t, "tls-worker", ws[0].ID)
	_, err = m.adapter.Plugins(context.Background())
	assert.NoError(t, err)
}
