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

	"github.com/eventbridge-go/eventbridge/rpc"
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
// points: the three NATS nodes, one cluster id, distinct worker ids, the shared master key, and a REST listener
// reachable from the other containers under the URL the worker announces, published and health-checked on its port.
func TestComposeWorkers(t *testing.T) {
	t.Parallel()
	services := loadComposeServices(t)
	key := filepath.Join(t.TempDir(), "master.key")
	require.NoError(t, os.WriteFile(key, []byte(strings.Repeat("ab", 32)), 0o600))

	ids := map[string]bool{}
	clusters := map[string]bool{}
	for _, name := range []string{"worker-1", "worker-2"} {
		t.Run(name, func(t *testing.T) {
			svc, ok := services[name]
			require.True(t, ok)
			require.NotEmpty(t, svc.Command)
			assert.Equal(t, "/usr/local/bin/worker", svc.Command[0])
			args := append([]string(nil), svc.Command[1:]...)

			// The key file lives in the shared keys volume, which does not exist here: point the flag at a test key
			// once its path is checked.
			keysDir := ""
			for _, v := range svc.Volumes {
				if parts := strings.Split(v, ":"); parts[0] == "keys" && len(parts) >= 2 {
					keysDir = parts[1]
				}
			}
			require.NotEmpty(t, keysDir, "%s mounts the keys volume", name)
			replaced := false
			for i := range args {
				if args[i] == "--master-key" && i+1 < len(args) {
					assert.Equal(t, keysDir, path.Dir(args[i+1]), "the master key is read from the keys volume")
					args[i+1], replaced = key, true
				}
			}
			require.True(t, replaced, "%s has --master-key: secrets need the shared key", name)

			m := NewMain()
			m.Stderr = io.Discard
			m.Getenv = func(k string) string { return svc.Environment[k] }
			require.NoError(t, m.ParseFlags(args), "the command parses with the worker's flags")
			assert.Len(t, m.MasterKey, 32)

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
			assert.True(t, strings.HasPrefix(svc.Ports[0], "127.0.0.1:"), "the REST API has no authentication: loopback only")

			require.NotNil(t, svc.Healthcheck)
			test := svc.Healthcheck.Test
			require.Equal(t, []string{"CMD", "wget"}, test[:2])
			health, err := url.Parse(test[len(test)-1])
			require.NoError(t, err)
			assert.Equal(t, "127.0.0.1:"+restPort, health.Host)
			assert.Equal(t, "/", health.Path, "GET / answers the worker's version, as Kafka Connect's does")

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
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    string
		wantErr string
	}{
		{"none", nil, nil, "", ""},
		{"flag", nil, []string{"--advertised-url", "http://worker-1:8083"}, "http://worker-1:8083", ""},
		{"trailing slash dropped", nil, []string{"--advertised-url", "https://w.example.com/"}, "https://w.example.com", ""},
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
			err := m.ParseFlags(append([]string{"--nats", "nats://n:4222"}, tt.args...))
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
	natsURL := startNATS(t)
	start := func(args ...string) *Main {
		m := NewMain()
		m.Stderr = io.Discard
		m.Getenv = func(string) string { return "" }
		require.NoError(t, m.ParseFlags(append([]string{"--nats", natsURL, "--cluster-id", "adv"}, args...)))
		require.NoError(t, m.Run(context.Background()))
		t.Cleanup(func() { _ = m.Close() })
		return m
	}
	advertised := start("--worker-id", "w1", "--rest-addr", "0.0.0.0:0", "--advertised-url", "http://worker-1.internal:8083")
	plain := start("--worker-id", "w2", "--rest-addr", "127.0.0.1:0")

	_, p, err := net.SplitHostPort(advertised.Addr())
	require.NoError(t, err)
	client := rpc.NewClient("http://127.0.0.1:" + p)
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
