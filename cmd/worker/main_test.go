package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/listener"
	"github.com/eventbridge-go/eventbridge/listener/listenertest"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

// testToken is the cluster token of the tests' workers; writeToken writes it to a file.
const testToken = "cmd-worker-test-cluster-token-0123456789"

// writeToken writes the test token to a new file and returns its path.
func writeToken(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cluster-token")
	require.NoError(t, os.WriteFile(p, []byte(testToken+"\n"), 0o600))
	return p
}

// tokenClient is a client of the worker at url with the test token.
func tokenClient(url string, opts ...rpc.Option) *rpc.Client {
	return rpc.NewClient(url, append([]rpc.Option{rpc.WithToken(testToken)}, opts...)...)
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	token := writeToken(t)
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    Main
		wantErr string
	}{
		{"defaults", nil, []string{"--nats", "nats://n:4222"},
			Main{NATSURL: "nats://n:4222", RESTAddr: "127.0.0.1:8083", WorkerID: host + "-8083", ClusterID: "eb", LogLevel: slog.LevelInfo}, ""},
		{"environment", map[string]string{"EB_NATS": "nats://e:4222", "EB_WORKER_ADDR": "0.0.0.0:9000", "EB_WORKER_ID": "w7",
			"EB_CLUSTER_ID": "prod", "EB_ALLOW_PRIVATE_TARGETS": "true", "EB_LOG_LEVEL": "debug",
			"EB_EGRESS_ALLOW": "10.0.0.0/8, broker.internal:8883"}, nil,
			Main{NATSURL: "nats://e:4222", RESTAddr: "0.0.0.0:9000", WorkerID: "w7", ClusterID: "prod", AllowPrivateTargets: true,
				EgressAllow: []string{"10.0.0.0/8", "broker.internal:8883"}, LogLevel: slog.LevelDebug}, ""},
		{"flags win over the environment", map[string]string{"EB_NATS": "nats://e:4222", "EB_CLUSTER_ID": "prod", "EB_ALLOW_PRIVATE_TARGETS": "true",
			"EB_EGRESS_ALLOW": "10.0.0.0/8"},
			[]string{"--nats=nats://f:4222", "--cluster-id", "dev", "--rest-addr", "127.0.0.1:9100", "--allow-private-targets=false", "--log-level", "warn",
				"--egress-allow", "127.0.0.1,[::1]:1883"},
			Main{NATSURL: "nats://f:4222", RESTAddr: "127.0.0.1:9100", WorkerID: host + "-9100", ClusterID: "dev",
				EgressAllow: []string{"127.0.0.1", "[::1]:1883"}, LogLevel: slog.LevelWarn}, ""},
		{"an empty flag clears the environment's exceptions", map[string]string{"EB_NATS": "nats://e:4222", "EB_EGRESS_ALLOW": "10.0.0.0/8"},
			[]string{"--egress-allow="},
			Main{NATSURL: "nats://e:4222", RESTAddr: "127.0.0.1:8083", WorkerID: host + "-8083", ClusterID: "eb", LogLevel: slog.LevelInfo}, ""},
		{"bad egress exception", nil, []string{"--nats", "x", "--egress-allow", "10.0.0.0/33"}, Main{}, `--egress-allow "10.0.0.0/33"`},
		{"bad egress exception variable", map[string]string{"EB_EGRESS_ALLOW": "http://broker"}, []string{"--nats", "x"}, Main{}, "--egress-allow"},
		{"nats missing", nil, []string{"--nats="}, Main{}, "--nats"},
		{"bad log level", nil, []string{"--nats", "x", "--log-level", "loud"}, Main{}, "--log-level"},
		{"bad rest address", nil, []string{"--nats", "x", "--rest-addr", "nope"}, Main{}, "--rest-addr"},
		{"bad boolean variable", map[string]string{"EB_ALLOW_PRIVATE_TARGETS": "maybe"}, []string{"--nats", "x"}, Main{}, "EB_ALLOW_PRIVATE_TARGETS"},
		{"stray argument", nil, []string{"--nats", "x", "extra"}, Main{}, "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := NewMain()
			m.Stderr = io.Discard
			m.Getenv = func(k string) string { return tt.env[k] }
			err := m.ParseFlags(append([]string{"--cluster-token-file", token}, tt.args...))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, testToken, m.ClusterToken)
			got := Main{NATSURL: m.NATSURL, RESTAddr: m.RESTAddr, WorkerID: m.WorkerID, ClusterID: m.ClusterID,
				AllowPrivateTargets: m.AllowPrivateTargets, EgressAllow: m.EgressAllow, LogLevel: m.LogLevel}
			assert.Equal(t, tt.want, got)
		})
	}
	// The listener limits: the defaults, then from the environment and flags; a negative one is refused by name.
	m := NewMain()
	m.Getenv = func(string) string { return "" }
	require.NoError(t, m.ParseFlags([]string{"--nats", "x", "--cluster-token-file", token}))
	assert.Equal(t, listener.Defaults, m.Limits)
	m = NewMain()
	m.Getenv = func(k string) string {
		return map[string]string{"EB_HTTP_READ_TIMEOUT": "3s", "EB_HTTP_MAX_CONNECTIONS": "64"}[k]
	}
	require.NoError(t, m.ParseFlags([]string{"--nats", "x", "--cluster-token-file", token, "--http-idle-timeout", "5s",
		"--http-max-header-bytes", "4096"}))
	want := listener.Defaults
	want.ReadTimeout, want.MaxConnections, want.IdleTimeout, want.MaxHeaderBytes = 3*time.Second, 64, 5*time.Second, 4096
	assert.Equal(t, want, m.Limits)
	m = NewMain()
	m.Getenv = func(string) string { return "" }
	m.Stderr = io.Discard
	err := m.ParseFlags([]string{"--nats", "x", "--cluster-token-file", token, "--http-write-timeout", "-1s"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "write timeout")
	m = NewMain()
	m.Getenv = func(k string) string { return map[string]string{"EB_HTTP_IDLE_TIMEOUT": "forever"}[k] }
	err = m.ParseFlags([]string{"--nats", "x", "--cluster-token-file", token})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "EB_HTTP_IDLE_TIMEOUT")

	// The collector's headroom: 128 MiB by default, from the environment or the flag; a negative one is refused.
	m = NewMain()
	m.Getenv = func(string) string { return "" }
	require.NoError(t, m.ParseFlags([]string{"--nats", "x", "--cluster-token-file", token}))
	assert.Equal(t, 128, m.GCHeadroomMiB)
	m = NewMain()
	m.Getenv = func(k string) string { return map[string]string{"EB_GC_HEADROOM_MIB": "0"}[k] }
	require.NoError(t, m.ParseFlags([]string{"--nats", "x", "--cluster-token-file", token}))
	assert.Equal(t, 0, m.GCHeadroomMiB)
	m = NewMain()
	m.Getenv = func(string) string { return "" }
	m.Stderr = io.Discard
	err = m.ParseFlags([]string{"--nats", "x", "--cluster-token-file", token, "--gc-headroom-mib", "-5"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--gc-headroom-mib")
	m = NewMain()
	m.Getenv = func(string) string { return "" }
	require.NoError(t, m.ParseFlags([]string{"--nats", "x", "--cluster-token-file", token}))
	assert.Equal(t, 2500*time.Millisecond, m.LeaseTTL, "the default lease TTL")
	m = NewMain()
	m.Getenv = func(k string) string { return map[string]string{"EB_LEASE_TTL": "10s"}[k] }
	require.NoError(t, m.ParseFlags([]string{"--nats", "x", "--cluster-token-file", token}))
	assert.Equal(t, 10*time.Second, m.LeaseTTL)
	for _, bad := range []string{"500ms", "6m0s"} {
		m = NewMain()
		m.Getenv = func(string) string { return "" }
		m.Stderr = io.Discard
		err = m.ParseFlags([]string{"--nats", "x", "--cluster-token-file", token, "--lease-ttl", bad})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "--lease-ttl "+bad+" must be between 1s and 5m0s")
	}

	m = NewMain()
	m.Stderr = io.Discard
	assert.ErrorIs(t, m.ParseFlags([]string{"--help"}), flag.ErrHelp)
	m = NewMain()
	m.Getenv = func(string) string { return "" }
	err = m.ParseFlags([]string{"--nats", "nats://n:4222", "--cluster-token-file", token, "--worker-id", "w 1"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--worker-id")
}

func TestVersionAtLeast(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    string
		want bool
	}{
		{"2.11.0", true},
		{"2.15.2", true},
		{"2.11.0-beta.1", true},
		{"3.0.0", true},
		{"v2.12.1", true},
		{"2.10.22", false},
		{"1.99.0", false},
		{"", false},
		{"garbage", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, versionAtLeast(tt.v, MinServerVersion), tt.v)
	}
}

// testNATS is a nats-server of the test with a TCP listener on a free loopback port, which requires credentials.
type testNATS struct {
	Server    *ebjs.Server
	URL       string
	Creds     ebjs.Credentials
	CredsFile string // the credentials as a file, for --nats-credentials-file
}

// args are the worker flags that reach this server with the test token.
func (n testNATS) args(t *testing.T) []string {
	return []string{"--nats", n.URL, "--nats-credentials-file", n.CredsFile, "--cluster-token-file", writeToken(t)}
}

func startNATS(t *testing.T) testNATS {
	creds, err := ebjs.NewCredentials()
	require.NoError(t, err)
	srv, err := ebjs.StartServer(ebjs.ServerConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1", Credentials: &creds})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	require.NotEmpty(t, srv.ClientURL())
	file := filepath.Join(t.TempDir(), "nats-credentials")
	require.NoError(t, os.WriteFile(file, []byte(creds.FileLine()), 0o600))
	return testNATS{Server: srv, URL: srv.ClientURL(), Creds: creds, CredsFile: file}
}

func TestRunAgainstExternalNATS(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	m := NewMain()
	m.Stderr = &log
	m.Getenv = func(string) string { return "" }
	require.NoError(t, m.ParseFlags(append(startNATS(t).args(t), "--rest-addr", "127.0.0.1:0", "--worker-id", "w1", "--cluster-id", "t1")))
	require.NoError(t, m.Run(context.Background()))
	t.Cleanup(func() { _ = m.Close() })

	client := tokenClient(m.URL())
	info, err := client.ServerInfo(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "w1", info.WorkerID)
	assert.Equal(t, "t1", info.ClusterID)
	plugins, err := client.ListPlugins(context.Background())
	require.NoError(t, err)
	var classes []string
	for _, p := range plugins {
		classes = append(classes, p.Class+" "+p.Type)
	}
	assert.Equal(t, []string{"eventbus sink", "eventbus-source source", "http sink", "http-source source",
		"log sink", "mqtt sink", "mqtt-source source", "replay source", "router sink", "schedule-source source"}, classes,
		"the binary links the built-in plugins")
	require.NoError(t, m.Close())
	assert.Contains(t, log.String(), "worker started")
}

// What nats.go reports asynchronously reaches the worker's log, naming the connection, rather than nats.go's own
// lines on the standard error: a slow consumer as a warning, a parked task's dropped wake (a message dropped on a
// channel subscription, which loses nothing) at debug, below the default level.
func TestRunLogsNATSAsynchronousErrors(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	m := NewMain()
	m.Stderr = &log
	m.Getenv = func(string) string { return "" }
	require.NoError(t, m.ParseFlags(append(startNATS(t).args(t), "--rest-addr", "127.0.0.1:0", "--worker-id", "w1")))
	require.NoError(t, m.Run(context.Background()))
	t.Cleanup(func() { _ = m.Close() })

	jetstreamtest.SlowConsumers(t, m.nc, "test.busy", "test.parked")
	require.Eventually(t, func() bool {
		return strings.Contains(log.String(),
			`level=WARN msg="NATS asynchronous error" connection="eventbridge-worker w1" subject=test.busy`)
	}, 10*time.Second, 10*time.Millisecond, "%s", &log)
	// nats.go reported the parked subscription first: its report was handled by now.
	assert.NotContains(t, log.String(), "test.parked", "a dropped wake is below the log's level (info)")
}

func TestRunRefusesServerWithoutJetStream(t *testing.T) {
	t.Parallel()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(10*time.Second))
	t.Cleanup(ns.Shutdown)

	m := NewMain()
	m.Stderr = io.Discard
	m.Getenv = func(string) string { return "" }
	require.NoError(t, m.ParseFlags([]string{"--nats", ns.ClientURL(), "--rest-addr", "127.0.0.1:0", "--cluster-token-file", writeToken(t)}))
	err = m.Run(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not have JetStream enabled")
	assert.NoError(t, m.Close())
}

// The real binary: started on free ports, it delivers an event, and SIGTERM stops it cleanly.
func TestBinaryStopsCleanlyOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "worker")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	ns := startNATS(t)
	var got sync.Map
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Ce-Id"), true)
	}))
	t.Cleanup(hook.Close)

	addr := listenertest.Addr(t)
	var out syncBuffer
	cmd := exec.Command(bin, "--rest-addr", addr, "--worker-id", "bin1", "--log-level", "debug")
	cmd.Env = append(os.Environ(), "EB_NATS="+ns.URL, "EB_ALLOW_PRIVATE_TARGETS=true",
		"EB_NATS_CREDENTIALS_FILE="+ns.CredsFile, "EB_CLUSTER_TOKEN_FILE="+writeToken(t))
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})

	client := tokenClient("http://" + addr)
	require.Eventually(t, func() bool { _, err := client.ServerInfo(context.Background()); return err == nil },
		30*time.Second, 20*time.Millisecond, "the worker serves: %s", &out)

	env := natsClient(t, ns)
	env.Stream(t, "S", "s.>")
	_, err := client.CreateConnector(context.Background(), rpc.CreateConnectorRequest{Name: "hook", Config: map[string]string{
		connector.KeyClass: httpsink.Name, connector.KeyTopics: "s.in", connector.KeyStream: "S", connector.KeyDurable: "hook",
		httpsink.KeyURL: hook.URL,
	}})
	require.NoError(t, err)
	env.Publish(t, "s.in", newEvent("e1"))
	require.Eventually(t, func() bool { _, ok := got.Load("e1"); return ok }, 30*time.Second, 20*time.Millisecond)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "exit status after SIGTERM: %s", &out)
	case <-time.After(30 * time.Second):
		t.Fatalf("the worker did not stop: %s", &out)
	}
	info := env.ConsumerInfo(t, "S", "hook")
	assert.Equal(t, uint64(1), info.AckFloor.Stream, "acked before exiting")
	assert.Contains(t, out.String(), "worker started")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
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

// jsClient is a test client of an external NATS.
type jsClient struct{ js jetstream.JetStream }

func natsClient(t *testing.T, ns testNATS) *jsClient {
	nc, err := nats.Connect(ns.URL, ns.Creds.Option())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return &jsClient{js: js}
}

func (c *jsClient) Stream(t *testing.T, name string, subjects ...string) {
	_, err := c.js.CreateStream(context.Background(), jetstream.StreamConfig{Name: name, Subjects: subjects})
	require.NoError(t, err)
}

func (c *jsClient) Publish(t *testing.T, subject string, e *event.Event) {
	m := stream.Encode(e)
	m.Subject = subject
	_, err := c.js.PublishMsg(context.Background(), m)
	require.NoError(t, err)
}

func (c *jsClient) ConsumerInfo(t *testing.T, stream, durable string) *jetstream.ConsumerInfo {
	cons, err := c.js.Consumer(context.Background(), stream, durable)
	require.NoError(t, err)
	info, err := cons.Info(context.Background())
	require.NoError(t, err)
	return info
}

func newEvent(id string) *event.Event {
	e := event.New()
	e.SetID(id)
	e.SetSource("test")
	e.SetType("t")
	return &e
}

func TestParseFlagsMasterKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	key := bytes.Repeat([]byte{0xab}, 32)
	good := write("good.key", "abababababababababababababababababababababababababababababababab\n")
	other := write("other.key", "  cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd  ")
	short := write("short.key", "abcd")
	notHex := write("nothex.key", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")
	token := writeToken(t)
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    []byte
		wantErr string
	}{
		{"none", nil, nil, nil, ""},
		{"flag", nil, []string{"--master-key", good}, key, ""},
		{"environment", map[string]string{"EB_MASTER_KEY": good}, nil, key, ""},
		{"flag wins over the environment", map[string]string{"EB_MASTER_KEY": good}, []string{"--master-key=" + other},
			bytes.Repeat([]byte{0xcd}, 32), ""},
		{"missing file", nil, []string{"--master-key", filepath.Join(dir, "absent.key")}, nil, "--master-key"},
		{"too short", nil, []string{"--master-key", short}, nil, "64 hexadecimal characters"},
		{"not hex", nil, []string{"--master-key", notHex}, nil, "64 hexadecimal characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := NewMain()
			m.Stderr = io.Discard
			m.Getenv = func(k string) string { return tt.env[k] }
			err := m.ParseFlags(append([]string{"--nats", "nats://n:4222", "--cluster-token-file", token}, tt.args...))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.NotContains(t, err.Error(), "zzzz", "the error shows no key material")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, m.MasterKey)
		})
	}
}
