package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/health"
	"github.com/eventbridge-go/eventbridge/listener"
	"github.com/eventbridge-go/eventbridge/tracing"
)

func TestParseConfigDefaultsAndEnv(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig(nil, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, Config{Tracing: tracing.Config{ServiceName: "eventbridge"}, HTTPAddr: "127.0.0.1:8080", DataDir: "./data", Fsync: "1s", WorkerAddr: "127.0.0.1:8083",
		WorkerID: "embedded", ClusterID: "eb", LogLevel: "info", QuotaBuses: 100, QuotaRulesPerBus: 300,
		QuotaConnections: 100, QuotaAPIDestinations: 100, ReconcileInterval: 30 * time.Second, Replicas: 1, GCHeadroomMiB: 128, AWSRegion: "us-east-1",
		SessionIdleTimeout: time.Hour, SessionMaxAge: 12 * time.Hour, AuditRetention: 90 * 24 * time.Hour,
		Listener: listener.Defaults, PutEventsRate: 10_000, DeadLetterMaxBytes: 256 << 20, DeadLetterRetention: 14 * 24 * time.Hour,
		BusLogMaxBytes: 256 << 20, BusLogRetention: 24 * time.Hour, EventTypesInterval: 5 * time.Second, MetricsHistoryInterval: 10 * time.Second,
		MaxBusRetention:     bus.Retention{MaxBytes: 10 << 30, MaxAge: 365 * 24 * time.Hour},
		AccountStorageQuota: 10 << 30, StorageCheckInterval: 2 * time.Second, NATSStopTimeout: 5 * time.Second, LeaseTTL: 2500 * time.Millisecond,
		Health: health.DefaultRules()}, c)
	require.Equal(t, "sqlite://data/eventbridge.db", c.DSN())
	require.Nil(t, c.RuntimeURLs())

	env := map[string]string{
		"EB_HTTP_ADDR": "0.0.0.0:9000", "EB_DATA_DIR": "/var/eb", "EB_DB": "mysql://root@tcp(db:3306)/eb",
		"EB_NATS": "nats://n:4222", "EB_NATS_LISTEN": "127.0.0.1:4333", "EB_FSYNC": "always",
		"EB_RUNTIME": "http://w1:8083, http://w2:8083", "EB_WORKER_ADDR": "127.0.0.1:9083", "EB_WORKER_ID": "cp1", "EB_CLUSTER_ID": "prod",
		"EB_MASTER_KEY": "/etc/eb/key", "EB_ALLOW_PRIVATE_TARGETS": "true", "EB_LOG_LEVEL": "debug",
		"EB_QUOTA_BUSES": "5", "EB_QUOTA_RULES_PER_BUS": "6", "EB_QUOTA_CONNECTIONS": "7", "EB_QUOTA_API_DESTINATIONS": "8",
		"EB_RECONCILE_INTERVAL": "5s", "EB_REPLICAS": "3", "EB_GC_HEADROOM_MIB": "0",
		"EB_CLUSTER_TOKEN_FILE": "/etc/eb/token", "EB_NATS_CREDENTIALS_FILE": "/etc/eb/nats", "EB_TLS_CERT": "/etc/eb/cert.pem",
		"EB_TLS_KEY": "/etc/eb/key.pem", "EB_RUNTIME_CA_FILE": "/etc/eb/ca.pem", "EB_EGRESS_ALLOW": "10.0.0.0/8, broker.internal",
		"EB_PUBLIC_URL": "https://eb.example.com/, http://eb.internal:8080", "EB_SESSION_IDLE_TIMEOUT": "15m", "EB_SESSION_MAX_AGE": "8h",
		"EB_AUDIT_RETENTION": "720h", "EB_HTTP_READ_HEADER_TIMEOUT": "2s", "EB_HTTP_READ_TIMEOUT": "3s",
		"EB_HTTP_WRITE_TIMEOUT": "4s", "EB_HTTP_IDLE_TIMEOUT": "5s", "EB_HTTP_MAX_HEADER_BYTES": "4096",
		"EB_HTTP_MAX_CONNECTIONS": "64", "EB_PUT_EVENTS_RATE": "500", "EB_DEAD_LETTER_MAX_MIB": "64", "EB_DEAD_LETTER_RETENTION": "48h", "EB_MAX_BUS_RETENTION_MIB": "2048",
		"EB_MAX_BUS_RETENTION_AGE": "720h", "EB_ACCOUNT_STORAGE_QUOTA_MIB": "4096", "EB_STORAGE_BUDGET_MIB": "20480",
		"EB_STORAGE_CHECK_INTERVAL":  "5s",
		"EB_NATS_STOP_TIMEOUT":       "20s",
		"EB_LEASE_TTL":               "10s",
		"EB_HEALTH_FAILING_ATTEMPTS": "3", "EB_HEALTH_FAILING_AFTER": "1m", "EB_HEALTH_DEAD_LETTER_WINDOW": "10m",
		"EB_BUS_LOG_MAX_MIB": "32", "EB_BUS_LOG_RETENTION": "2h", "EB_EVENT_TYPES_INTERVAL": "1s", "EB_METRICS_HISTORY_INTERVAL": "2s", "EB_AWS_REGION": "eu-central-1",
	}
	c, err = ParseConfig(nil, func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, Config{Tracing: tracing.Config{ServiceName: "eventbridge"}, HTTPAddr: "0.0.0.0:9000", DataDir: "/var/eb", DB: "mysql://root@tcp(db:3306)/eb",
		NATS: "nats://n:4222", NATSListen: "127.0.0.1:4333", Fsync: "always", Runtime: "http://w1:8083, http://w2:8083",
		WorkerAddr: "127.0.0.1:9083", WorkerID: "cp1", ClusterID: "prod", MasterKey: "/etc/eb/key", AllowPrivateTargets: true,
		LogLevel: "debug", QuotaBuses: 5, QuotaRulesPerBus: 6, QuotaConnections: 7, QuotaAPIDestinations: 8,
		ReconcileInterval: 5 * time.Second, Replicas: 3, ClusterTokenFile: "/etc/eb/token", NATSCredentialsFile: "/etc/eb/nats",
		TLSCert: "/etc/eb/cert.pem", TLSKey: "/etc/eb/key.pem", RuntimeCAFile: "/etc/eb/ca.pem",
		EgressAllow: "10.0.0.0/8, broker.internal", PublicURLs: "https://eb.example.com/, http://eb.internal:8080", AWSRegion: "eu-central-1",
		SessionIdleTimeout: 15 * time.Minute, SessionMaxAge: 8 * time.Hour, AuditRetention: 720 * time.Hour,
		Listener: listener.Limits{ReadHeaderTimeout: 2 * time.Second, ReadTimeout: 3 * time.Second, WriteTimeout: 4 * time.Second,
			IdleTimeout: 5 * time.Second, MaxHeaderBytes: 4096, MaxConnections: 64}, PutEventsRate: 500,
		DeadLetterMaxBytes: 64 << 20, DeadLetterRetention: 48 * time.Hour, BusLogMaxBytes: 32 << 20, BusLogRetention: 2 * time.Hour, EventTypesInterval: time.Second, MetricsHistoryInterval: 2 * time.Second,
		MaxBusRetention:     bus.Retention{MaxBytes: 2 << 30, MaxAge: 720 * time.Hour},
		AccountStorageQuota: 4 << 30, StorageBudget: 20 << 30, StorageCheckInterval: 5 * time.Second, NATSStopTimeout: 20 * time.Second,
		LeaseTTL: 10 * time.Second, Health: health.Rules{FailingAttempts: 3, FailingAfter: time.Minute, DeadLetterWindow: 10 * time.Minute}}, c)
	require.Equal(t, []string{"10.0.0.0/8", "broker.internal"}, c.EgressAllowList())
	require.Equal(t, []string{"https://eb.example.com", "http://eb.internal:8080"}, c.PublicURLList())
	require.Equal(t, "https://eb.example.com", c.WebhookBaseURL())
	require.True(t, c.FsyncAlways())
	require.Equal(t, []string{"http://w1:8083", "http://w2:8083"}, c.RuntimeURLs())

	// A flag wins over its variable.
	c, err = ParseConfig([]string{"--cluster-id", "flag"}, func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, "flag", c.ClusterID)
}

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"bad db", []string{"--db", "postgres://x"}, nil, "--db"},
		{"bad fsync", []string{"--fsync", "sometimes"}, nil, "--fsync"},
		{"negative fsync", []string{"--fsync", "-1s"}, nil, "--fsync"},
		{"dotted cluster", []string{"--cluster-id", "a.b"}, nil, "--cluster-id"},
		{"bad level", []string{"--log-level", "loud"}, nil, "--log-level"},
		{"bad worker id", []string{"--worker-id", "host:8083"}, nil, "--worker-id"},
		{"zero quota", []string{"--quota-buses", "0"}, nil, "--quota-buses"},
		{"quota env not a number", nil, map[string]string{"EB_QUOTA_RULES_PER_BUS": "many"}, "--quota-rules-per-bus"},
		{"too many replicas", []string{"--nats", "nats://n:4222", "--replicas", "7"}, nil, "--replicas"},
		{"replicas of the embedded server", []string{"--replicas", "3"}, nil, "--replicas"},
		{"negative gc headroom", []string{"--gc-headroom-mib", "-1"}, nil, "--gc-headroom-mib"},
		{"lease TTL too short", []string{"--lease-ttl", "900ms"}, nil, "--lease-ttl 900ms must be between 1s and 5m0s"},
		{"lease TTL too long", nil, map[string]string{"EB_LEASE_TTL": "1h"}, "--lease-ttl 1h0m0s must be between 1s and 5m0s"},
		{"lease TTL env not a duration", nil, map[string]string{"EB_LEASE_TTL": "long"}, "EB_LEASE_TTL"},
		{"gc headroom not a number", nil, map[string]string{"EB_GC_HEADROOM_MIB": "lots"}, "--gc-headroom-mib"},
		{"reconcile interval too short", []string{"--reconcile-interval", "1ms"}, nil, "--reconcile-interval"},
		{"reconcile interval env not a duration", nil, map[string]string{"EB_RECONCILE_INTERVAL": "often"}, "EB_RECONCILE_INTERVAL"},
		{"bad bool env", nil, map[string]string{"EB_ALLOW_PRIVATE_TARGETS": "maybe"}, "EB_ALLOW_PRIVATE_TARGETS"},
		{"public URL without a scheme", []string{"--public-url", "eb.example.com"}, nil, "--public-url"},
		{"public URL with a query", []string{"--public-url", "https://eb.example.com/?a=b"}, nil, "--public-url"},
		{"AWS region of another form", []string{"--aws-region", "US East"}, nil, "--aws-region"},
		{"AWS region by environment", nil, map[string]string{"EB_AWS_REGION": "useast1"}, "--aws-region"},
		{"idle timeout under a minute", []string{"--session-idle-timeout", "10s"}, nil, "--session-idle-timeout"},
		{"idle timeout over the maximum age", []string{"--session-idle-timeout", "2h", "--session-max-age", "1h"}, nil, "--session-idle-timeout"},
		{"audit retention under an hour", []string{"--audit-retention", "10m"}, nil, "--audit-retention"},
		{"session env not a duration", nil, map[string]string{"EB_SESSION_MAX_AGE": "long"}, "EB_SESSION_MAX_AGE"},
		{"bus maximum under 1 MiB", []string{"--max-bus-retention-mib", "0"}, nil, "--max-bus-retention-mib"},
		{"quota without room for dead letters", []string{"--account-storage-quota-mib", "200"}, nil, "--account-storage-quota-mib"},
		{"quota without room for the bus log", []string{"--account-storage-quota-mib", "400"}, nil, "--bus-log-max-mib"},
		{"bus log under 1 MiB", []string{"--bus-log-max-mib", "0"}, nil, "--bus-log-max-mib"},
		{"bus log kept under a minute", []string{"--bus-log-retention", "10s"}, nil, "--bus-log-retention"},
		{"event types reported every millisecond", []string{"--event-types-interval", "1ms"}, nil, "--event-types-interval"},
		{"metrics history every millisecond", []string{"--metrics-history-interval", "1ms"}, nil, "--metrics-history-interval"},
		{"budget under a quota", []string{"--storage-budget-mib", "1024"}, nil, "--storage-budget-mib"},
		{"budget env not a number", nil, map[string]string{"EB_STORAGE_BUDGET_MIB": "lots"}, "--storage-budget-mib"},
		{"storage checked every millisecond", []string{"--storage-check-interval", "1ms"}, nil, "--storage-check-interval"},
		{"NATS given no time to stop", []string{"--nats-stop-timeout", "0s"}, nil, "--nats-stop-timeout"},
		{"failing after no attempt", []string{"--health-failing-attempts", "0"}, nil, "--health-failing-attempts"},
		{"failing attempts not a number", nil, map[string]string{"EB_HEALTH_FAILING_ATTEMPTS": "many"}, "--health-failing-attempts"},
		{"failing after a millisecond", []string{"--health-failing-after", "1ms"}, nil, "--health-failing-after"},
		{"dead-letter window of a week", []string{"--health-dead-letter-window", "168h"}, nil, "--health-dead-letter-window"},
		{"bus maximum age under the default", []string{"--max-bus-retention-age", "1h"}, nil, "--max-bus-retention-age"},
		{"dead letters without room", []string{"--dead-letter-max-mib", "0"}, nil, "--dead-letter-max-mib"},
		{"dead letters kept a minute", []string{"--dead-letter-retention", "1m"}, nil, "--dead-letter-retention"},
		{"zero PutEvents rate", []string{"--put-events-rate", "0"}, nil, "--put-events-rate"},
		{"negative idle timeout", []string{"--http-idle-timeout", "-1s"}, nil, "--http-idle-timeout"},
		{"connection cap env not a number", nil, map[string]string{"EB_HTTP_MAX_CONNECTIONS": "lots"}, "--http-max-connections"},
		{"read timeout env not a duration", nil, map[string]string{"EB_HTTP_READ_TIMEOUT": "slow"}, "EB_HTTP_READ_TIMEOUT"},
		{"unknown flag", []string{"--nope"}, nil, "nope"},
		{"stray argument", []string{"serve"}, nil, "serve"},
		{"TLS certificate without key", []string{"--tls-cert", "c.pem"}, nil, "--tls-cert and --tls-key go together"},
		{"TLS key without certificate", nil, map[string]string{"EB_TLS_KEY": "k.pem"}, "--tls-cert and --tls-key go together"},
		{"remote runtime without token", []string{"--runtime", "http://w1:8083"}, nil, "--cluster-token-file (or EB_CLUSTER_TOKEN_FILE) is required with --runtime"},
		{"metrics of a remote runtime", []string{"--runtime", "http://w1:8083", "--cluster-token-file", "t", "--metrics-addr", "127.0.0.1:9100"}, nil, "--metrics-addr"},
		{"runtime CA without remote runtime", []string{"--runtime-ca-file", "ca.pem"}, nil, "--runtime-ca-file"},
		{"bad metrics address", []string{"--metrics-addr", "9100"}, nil, "--metrics-addr"},
		{"bad egress exception", []string{"--egress-allow", "127.0.0.1,10.0.0.0/33"}, nil, `--egress-allow "10.0.0.0/33"`},
		{"bad egress exception variable", nil, map[string]string{"EB_EGRESS_ALLOW": "broker:http"}, "--egress-allow"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig(tc.args, func(k string) string { return tc.env[k] })
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestMasterKeyGeneratedOnceAndKept(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "master.key")
	gen := func(b []byte) error {
		for i := range b {
			b[i] = byte(i)
		}
		return nil
	}
	k1, err := readOrCreateKey(path, gen)
	require.NoError(t, err)
	require.Len(t, k1, 32)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	k2, err := readOrCreateKey(path, func([]byte) error { t.Fatal("must not generate twice"); return nil })
	require.NoError(t, err)
	require.Equal(t, k1, k2)

	require.NoError(t, os.WriteFile(path, []byte("short"), 0o600))
	_, err = readOrCreateKey(path, gen)
	require.ErrorContains(t, err, "64 hexadecimal")
}
