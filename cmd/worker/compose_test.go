package main

import (
	"context"
	"io"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v2"
)

// docker-compose.yml is checked as a whole in cmd/eventbridge/compose_test.go (services, images, volumes,
// dependencies, the NATS nodes, the control plane, the Dockerfile). Test files cannot be shared between main
// packages, so this file repeats the little it needs to check the workers' command lines with this binary's parser.

type composeService struct {
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// loadComposeServices reads docker-compose.yml's services as Docker Compose would see them with no variables set:
// ${NAME:-default} becomes its default and $$ a literal $.
func loadComposeServices(t *testing.T) map[string]composeService {
	t.Helper()
	b, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	expanded := os.Expand(string(b), func(v string) string {
		if v == "$" {
			return "$"
		}
		_, def, _ := strings.Cut(v, ":-")
		return def
	})
	var f struct {
		Services map[string]composeService `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(expanded), &f))
	return f.Services
}

// TestComposeWorkers parses each worker's command line in docker-compose.yml with ParseFlags and checks where it
// points: the three NATS nodes, one cluster id, distinct worker ids, the shared master key, cluster token and NATS
// credentials, and a REST listener reachable from the other containers under the URL the worker announces,
// published and health-checked on its port. (cmd/eventbridge/compose_test.go runs the secrets service's script and
// checks that the files hold what the binaries read.)
func TestComposeWorkers(t *testing.T) {
	t.Parallel()
	services := loadComposeServices(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "master.key")
	require.NoError(t, os.WriteFile(key, []byte(strings.Repeat("ab", 32)), 0o600))
	creds := filepath.Join(dir, "nats-credentials")
	require.NoError(t, os.WriteFile(creds, []byte("eventbridge:"+strings.Repeat("cd", 32)), 0o600))
	testFiles := map[string]string{"--master-key": key, "--cluster-token-file": writeToken(t), "--nats-credentials-file": creds}

	ids := map[string]bool{}
	clusters := map[string]bool{}
	for _, name := range []string{"worker-1", "worker-2"} {
		t.Run(name, func(t *testing.T) {
			svc, ok := services[name]
			require.True(t, ok)
			require.NotEmpty(t, svc.Command)
			assert.Equal(t, "/usr/local/bin/worker", svc.Command[0])
			args := append([]string(nil), svc.Command[1:]...)

			// The secret files live in the shared keys volume, which does not exist here: point the flags at test
			// files once their paths are checked.
			keysDir := ""
			for _, v := range svc.Volumes {
				if parts := strings.Split(v, ":"); parts[0] == "keys" && len(parts) == 3 && parts[2] == "ro" {
					keysDir = parts[1]
				}
			}
			require.NotEmpty(t, keysDir, "%s mounts the keys volume read-only", name)
			replaced := map[string]bool{}
			for i := range args {
				if file, ok := testFiles[args[i]]; ok && i+1 < len(args) {
					assert.Equal(t, keysDir, path.Dir(args[i+1]), "%s is read from the keys volume", args[i])
					args[i+1], replaced[args[i]] = file, true
				}
			}
			for flagName := range testFiles {
				assert.True(t, replaced[flagName], "%s has %s", name, flagName)
			}

			m := NewMain()
			m.Stderr = io.Discard
			m.Getenv = func(k string) string { return svc.Environment[k] }
			require.NoError(t, m.ParseFlags(args), "the command parses with the worker's flags")
			assert.Len(t, m.MasterKey, 32, "secrets in connector configs need the shared master key")
			assert.Equal(t, testToken, m.ClusterToken, "the REST API requires the cluster token")
			require.NotNil(t, m.NATSCredentials, "the NATS nodes require credentials")

			var natsHosts []string
			for _, s := range strings.Split(m.NATSURL, ",") {
				u, err := url.Parse(s)
				require.NoError(t, err)
				assert.Equal(t, "nats", u.Scheme)
				assert.Equal(t, "4222", u.Port(), "the NATS client port")
				require.Contains(t, services, u.Hostname())
				assert.Equal(t, "nats-server", services[u.Hostname()].Command[0])
				natsHosts = append(natsHosts, u.Hostname())
			}
			assert.ElementsMatch(t, []string{"nats-1", "nats-2", "nats-3"}, natsHosts)

			host, restPort, err := net.SplitHostPort(m.RESTAddr)
			require.NoError(t, err)
			assert.Equal(t, "0.0.0.0", host, "reachable from the other containers")
			adv, err := url.Parse(m.AdvertisedURL)
			require.NoError(t, err)
			assert.Equal(t, name, adv.Hostname(), "announced under its service name")
			assert.Equal(t, restPort, adv.Port())

			require.Len(t, svc.Ports, 1)
			published := svc.Ports[0][strings.LastIndex(svc.Ports[0], ":")+1:]
			assert.Equal(t, restPort, published)
			assert.True(t, strings.HasPrefix(svc.Ports[0], "127.0.0.1:"), "the REST API speaks plain HTTP: loopback only")

			require.NotNil(t, svc.Healthcheck)
			test := svc.Healthcheck.Test
			require.Equal(t, []string{"CMD", "wget"}, test[:2])
			health, err := url.Parse(test[len(test)-1])
			require.NoError(t, err)
			assert.Equal(t, "127.0.0.1:"+restPort, health.Host)
			assert.Equal(t, "/healthz", health.Path, "GET /healthz answers without the cluster token")

			assert.False(t, ids[m.WorkerID], "worker id %s is used twice", m.WorkerID)
			ids[m.WorkerID] = true
			clusters[m.ClusterID] = true
			assert.Equal(t, 3, m.Replicas, "the worker's KV buckets have a copy on each NATS node")
		})
	}
	assert.Len(t, ids, 2)
	assert.Len(t, clusters, 1, "one cluster id for both workers")
}

func TestParseFlagsAdvertisedURL(t *testing.T) {
	t.Parallel()
	token := writeToken(t)
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    string
		wantErr string
	}{
		{"none", nil, nil, "", ""},
		{"flag", nil, []string{"--advertised-url", "http://worker-1:8083"}, "http://worker-1:8083", ""},
		{"trailing slash dropped", nil, []string{"--advertised-url", "http://w.example.com/"}, "http://w.example.com", ""},
		{"environment", map[string]string{"EB_WORKER_URL": "http://w2:9000"}, nil, "http://w2:9000", ""},
		{"flag wins over the environment", map[string]string{"EB_WORKER_URL": "http://w2:9000"},
			[]string{"--advertised-url=http://w3:9000"}, "http://w3:9000", ""},
		{"no scheme", nil, []string{"--advertised-url", "worker-1:8083"}, "", "--advertised-url"},
		{"other scheme", nil, []string{"--advertised-url", "ftp://worker-1"}, "", "--advertised-url"},
		{"path", nil, []string{"--advertised-url", "http://worker-1:8083/api"}, "", "--advertised-url"},
		{"query", nil, []string{"--advertised-url", "http://worker-1:8083?x=1"}, "", "--advertised-url"},
		{"credentials", nil, []string{"--advertised-url", "http://u:p@worker-1:8083"}, "", "--advertised-url"},
		{"no host", nil, []string{"--advertised-url", "http://"}, "", "--advertised-url"},
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
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, m.AdvertisedURL)
		})
	}
}

// A worker listening on all interfaces announces its --advertised-url to the cluster, where a worker without one
// announces its listener's address; both serve the REST API, and Close stops the listener.
func TestAdvertisedURLInMembership(t *testing.T) {
	t.Parallel()
	ns := startNATS(t)
	start := func(args ...string) *Main {
		m := NewMain()
		m.Stderr = io.Discard
		m.Getenv = func(string) string { return "" }
		require.NoError(t, m.ParseFlags(append(ns.args(t), append([]string{"--cluster-id", "adv"}, args...)...)))
		require.NoError(t, m.Run(context.Background()))
		t.Cleanup(func() { _ = m.Close() })
		return m
	}
	advertised := start("--worker-id", "w1", "--rest-addr", "0.0.0.0:0", "--advertised-url", "http://worker-1.internal:8083")
	plain := start("--worker-id", "w2", "--rest-addr", "127.0.0.1:0")

	_, p, err := net.SplitHostPort(advertised.Addr())
	require.NoError(t, err)
	client := tokenClient("http://127.0.0.1:" + p)
	info, err := client.ServerInfo(context.Background())
	require.NoError(t, err, "the worker serves REST on its own listener")
	assert.Equal(t, "w1", info.WorkerID)

	want := map[string]string{"w1": "http://worker-1.internal:8083", "w2": "http://" + plain.Addr()}
	var got map[string]string
	require.Eventually(t, func() bool {
		cluster, err := client.ClusterInfo(context.Background())
		if err != nil {
			return false
		}
		got = map[string]string{}
		for _, w := range cluster.Workers {
			got[w.WorkerID] = w.URL
		}
		return len(got) == 2
	}, 30*time.Second, 20*time.Millisecond, "both workers join")
	assert.Equal(t, want, got)

	require.NoError(t, advertised.Close())
	_, err = client.ServerInfo(context.Background())
	assert.Error(t, err, "Close stops the REST listener")
	assert.Empty(t, advertised.Addr())
}
