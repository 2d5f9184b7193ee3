package main

import (
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/eventbridge-go/eventbridge/adapter/storagequota"
	"github.com/eventbridge-go/eventbridge/adapter/throttle"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/audit"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/eventtype"
	"github.com/eventbridge-go/eventbridge/domain/health"
	"github.com/eventbridge-go/eventbridge/domain/history"
	"github.com/eventbridge-go/eventbridge/domain/session"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/gcpace"
	"github.com/eventbridge-go/eventbridge/listener"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/tracing"
	"github.com/eventbridge-go/eventbridge/web/aws"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/egress"
)

// Config is the whole configuration of the control plane, read once from flags and EB_* variables.
type Config struct {
	// Tracing is read from the standard OTEL_* variables (tracing.ConfigFromEnv), not from flags.
	Tracing             tracing.Config
	HTTPAddr            string
	DataDir             string
	DB                  string
	NATS                string
	NATSListen          string
	Fsync               string
	Runtime             string
	WorkerID            string
	WorkerAddr          string
	ClusterID           string
	MasterKey           string
	AllowPrivateTargets bool
	// EgressAllow lists the non-public addresses, CIDR prefixes and hosts (each with an optional :port,
	// comma-separated) the embedded worker's plugins may reach although not public; see egress.Config.Allow.
	EgressAllow string
	LogLevel    string
	// ReconcileInterval spaces the runtime adapter's periodic reconciliations.
	ReconcileInterval time.Duration
	// Replicas is the number of copies of every stream and KV bucket on an external NATS cluster.
	Replicas int
	// GCHeadroomMiB is the least the heap may grow between two garbage collections, in MiB (gcpace; 0: the
	// runtime's own pacing).
	GCHeadroomMiB int
	// LeaseTTL is how long the server keeps the embedded worker's lease after its last renewal
	// (worker.Config.LeaseTTL); every worker of a cluster must use the same.
	LeaseTTL time.Duration
	// Quotas of the deployment: buses per account, rules per bus, connections and API destinations per account.
	QuotaBuses           int
	QuotaRulesPerBus     int
	QuotaConnections     int
	QuotaAPIDestinations int
	// TrustedProxies lists the proxies (IPs and CIDRs, comma-separated) whose X-Forwarded-For webhooks believe.
	TrustedProxies string
	// BootstrapAdminPasswordFile and BootstrapAPIKeyFile hold the first administrator's password and API key
	// (production secrets); empty generates them into the data directory when no administrator exists.
	BootstrapAdminPasswordFile string
	BootstrapAPIKeyFile        string
	// CORSOrigins are the browser origins (scheme://host[:port], comma-separated) allowed to call the API from
	// other sites; empty allows none.
	CORSOrigins string
	// ClusterTokenFile is the path of the cluster token file the worker REST API requires (and the runtime adapter
	// sends); empty is <data-dir>/cluster-token, generated on first start. Required with Runtime.
	ClusterTokenFile string
	// NATSCredentialsFile is the path of the NATS credentials file ("user:password"): those the embedded server
	// requires (empty is <data-dir>/nats-credentials, generated on first start), or those sent to the external NATS
	// of --nats (empty sends none).
	NATSCredentialsFile string
	// MetricsAddr is host:port of a listener serving the embedded worker's GET /metrics without the cluster token.
	MetricsAddr string
	// TLSCert and TLSKey make the HTTP API serve HTTPS (both or neither).
	TLSCert, TLSKey string
	// PublicURLs are the URLs clients reach the API on (scheme://host[:port], comma-separated): the Host headers
	// answered besides loopback names and IP addresses, the webhook URLs' base (the first), Secure cookies (https).
	PublicURLs string
	// AWSRegion is the region the Amazon EventBridge API answers for.
	AWSRegion string
	// SessionIdleTimeout and SessionMaxAge end console sessions not used for so long, and so long after sign-in.
	SessionIdleTimeout time.Duration
	SessionMaxAge      time.Duration
	// AuditRetention is how long audit entries are kept.
	AuditRetention time.Duration
	// PutEventsRate is the events per second an account may put, every dialect and webhook together, unless the
	// account has its own limit; per replica.
	PutEventsRate int
	// MaxBusRetention is the largest retention of a bus.
	MaxBusRetention bus.Retention
	// StorageBudget bounds what the event store keeps in all (0: three quarters of the free disk space of the
	// embedded store, or the NATS cluster's own limits); AccountStorageQuota what each account keeps.
	StorageBudget       int64
	AccountStorageQuota int64
	// StorageCheckInterval is how often the sizes of streams are read against the quotas and the budget.
	StorageCheckInterval time.Duration
	// Health holds the thresholds of the health of targets and sources (docs/health.md).
	Health health.Rules
	// NATSStopTimeout bounds how long the embedded NATS server may take to stop at shutdown: it stops every
	// consumer in turn, about 10 ms each (thousands of buses take tens of seconds). What it has not stopped by
	// then is left as after a crash, which loses nothing acknowledged (the worker handed its tasks over first).
	NATSStopTimeout time.Duration
	// DeadLetterMaxBytes and DeadLetterRetention bound every account's dead letters: when full, the oldest go.
	DeadLetterMaxBytes  int64
	DeadLetterRetention time.Duration
	// EventTypesInterval is how often routers report the event types they routed and the control plane writes
	// them.
	EventTypesInterval time.Duration
	// MetricsHistoryInterval is the step of the metrics history over the last hour (the day's is 30 of them).
	MetricsHistoryInterval time.Duration
	// BusLogMaxBytes and BusLogRetention bound every account's bus log: when full, the oldest records go.
	BusLogMaxBytes  int64
	BusLogRetention time.Duration
	// Listener holds the timeouts, header limit and connection cap of the HTTP API's listener and the embedded
	// worker's REST listener.
	Listener listener.Limits
	// RuntimeCAFile holds the PEM certificates of the CA that signed the certificates of the --runtime workers
	// served over https (empty: the system's CAs).
	RuntimeCAFile string
}

// ClusterTokenPath is the cluster token file to read, and whether it is the generated default.
func (c Config) ClusterTokenPath() (path string, generated bool) {
	if c.ClusterTokenFile != "" {
		return c.ClusterTokenFile, false
	}
	return filepath.Join(c.DataDir, "cluster-token"), true
}

// NATSCredentialsPath is the NATS credentials file to read ("" for an external NATS without one), and whether it is
// the generated default of the embedded server.
func (c Config) NATSCredentialsPath() (path string, generated bool) {
	if c.NATSCredentialsFile != "" {
		return c.NATSCredentialsFile, false
	}
	if c.NATS != "" {
		return "", false
	}
	return filepath.Join(c.DataDir, "nats-credentials"), true
}

// HTTPScheme is https with TLSCert, else http.
func (c Config) HTTPScheme() string {
	if c.TLSCert != "" {
		return "https"
	}
	return "http"
}

// CORSOriginList reads CORSOrigins (checked by Validate).
func (c Config) CORSOriginList() []string {
	var out []string
	for _, o := range strings.Split(c.CORSOrigins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, strings.TrimRight(o, "/"))
		}
	}
	return out
}

// PublicURLList reads PublicURLs (checked by Validate).
func (c Config) PublicURLList() []string {
	var out []string
	for _, o := range strings.Split(c.PublicURLs, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, strings.TrimRight(o, "/"))
		}
	}
	return out
}

// WebhookBaseURL is the first public URL: the base of the webhook URLs the API answers ("" uses the request's).
func (c Config) WebhookBaseURL() string {
	if l := c.PublicURLList(); len(l) > 0 {
		return l[0]
	}
	return ""
}

// EgressAllowList reads EgressAllow (checked by Validate).
func (c Config) EgressAllowList() []string {
	l, _ := egress.ParseAllow(c.EgressAllow)
	return l
}

// TrustedProxyPrefixes reads TrustedProxies (checked by Validate).
func (c Config) TrustedProxyPrefixes() []netip.Prefix {
	p, _ := source.ParseIPs(c.TrustedProxies)
	return p
}

// FsyncAlways reports whether every JetStream write is flushed; else FsyncInterval applies.
func (c Config) FsyncAlways() bool { return c.Fsync == "always" }

// FsyncInterval is the JetStream flush interval (when not always).
func (c Config) FsyncInterval() time.Duration {
	d, _ := time.ParseDuration(c.Fsync)
	return d
}

// DSN is the database DSN with the embedded default filled in.
func (c Config) DSN() string {
	if c.DB != "" {
		return c.DB
	}
	return "sqlite://" + filepath.Join(c.DataDir, "eventbridge.db")
}

// RuntimeURLs are the worker URLs of a remote runtime (nil = embedded worker).
func (c Config) RuntimeURLs() []string {
	var out []string
	for _, u := range strings.Split(c.Runtime, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// SlogLevel is the log level.
func (c Config) SlogLevel() slog.Level {
	var l slog.Level
	_ = l.UnmarshalText([]byte(c.LogLevel))
	return l
}

// Validate checks the configuration and names the first problem.
func (c Config) Validate() error {
	if c.HTTPAddr == "" {
		return errors.New("--http-addr must not be empty")
	}
	if c.DataDir == "" {
		return errors.New("--data-dir must not be empty")
	}
	if !strings.HasPrefix(c.DSN(), "sqlite://") && !strings.HasPrefix(c.DSN(), "mysql://") {
		return fmt.Errorf("--db %q must start with sqlite:// or mysql://", c.DB)
	}
	if !c.FsyncAlways() {
		if d, err := time.ParseDuration(c.Fsync); err != nil || d <= 0 {
			return fmt.Errorf("--fsync %q must be \"always\" or a positive duration such as 1s", c.Fsync)
		}
	}
	if c.ClusterID == "" || strings.ContainsAny(c.ClusterID, ". *>") {
		return fmt.Errorf("--cluster-id %q must be non-empty without dots, spaces or wildcards", c.ClusterID)
	}
	for _, q := range []struct {
		name string
		n    int
	}{{"--quota-buses", c.QuotaBuses}, {"--quota-rules-per-bus", c.QuotaRulesPerBus},
		{"--quota-connections", c.QuotaConnections}, {"--quota-api-destinations", c.QuotaAPIDestinations}} {
		if q.n < 1 {
			return fmt.Errorf("%s must be a positive integer", q.name)
		}
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		return fmt.Errorf("--replicas %d must be between 1 and 5", c.Replicas)
	}
	if c.GCHeadroomMiB < 0 || c.GCHeadroomMiB > 1<<20 {
		return fmt.Errorf("--gc-headroom-mib %d must be between 0 and 1048576 (MiB)", c.GCHeadroomMiB)
	}
	if err := worker.CheckLeaseTTL(c.LeaseTTL); err != nil {
		return fmt.Errorf("--lease-ttl %w", err)
	}
	if c.Replicas > 1 && c.NATS == "" {
		return fmt.Errorf("--replicas %d needs a NATS cluster (--nats): the embedded server keeps one copy", c.Replicas)
	}
	if c.ReconcileInterval < 100*time.Millisecond || c.ReconcileInterval > time.Hour {
		return fmt.Errorf("--reconcile-interval %s must be between 100ms and 1h", c.ReconcileInterval)
	}
	if err := worker.CheckWorkerID(c.WorkerID); err != nil {
		return fmt.Errorf("--worker-id: %w", err)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key go together: give both for HTTPS, or neither")
	}
	if len(c.RuntimeURLs()) > 0 {
		if c.ClusterTokenFile == "" {
			return errors.New("--cluster-token-file (or EB_CLUSTER_TOKEN_FILE) is required with --runtime: the " +
				"workers' cluster token, which the control plane sends on every call")
		}
		if c.MetricsAddr != "" {
			return errors.New("--metrics-addr serves the embedded worker's metrics; with --runtime there is none " +
				"(give each worker its own --metrics-addr)")
		}
	} else if c.RuntimeCAFile != "" {
		return errors.New("--runtime-ca-file is for --runtime workers served over https; the embedded worker is not")
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr %q must be host:port", c.MetricsAddr)
		}
	}
	if _, err := egress.ParseAllow(c.EgressAllow); err != nil {
		return err // names --egress-allow and the entry
	}
	if _, err := source.ParseIPs(c.TrustedProxies); err != nil {
		return fmt.Errorf("--trusted-proxies %q must be IP addresses and CIDR prefixes, comma-separated", c.TrustedProxies)
	}
	for _, o := range c.CORSOriginList() {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			return fmt.Errorf("--cors-origins: %q is not an origin such as https://console.example.com", o)
		}
	}
	for _, o := range c.PublicURLList() {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.User != nil || u.Fragment != "" {
			return fmt.Errorf("--public-url: %q is not a URL such as https://eventbridge.example.com", o)
		}
	}
	if err := aws.ValidateRegion(c.AWSRegion); err != nil {
		return fmt.Errorf("--aws-region: %w", err)
	}
	if err := (session.Config{IdleTimeout: c.SessionIdleTimeout, MaxAge: c.SessionMaxAge}).Validate(); err != nil {
		return fmt.Errorf("--session-idle-timeout/--session-max-age: %w", err)
	}
	if c.SessionIdleTimeout > c.SessionMaxAge && c.SessionMaxAge > 0 {
		return fmt.Errorf("--session-idle-timeout %s is longer than --session-max-age %s", c.SessionIdleTimeout, c.SessionMaxAge)
	}
	if c.MaxBusRetention.MaxBytes < bus.MinMaxBytes {
		return fmt.Errorf("--max-bus-retention-mib must be at least %d", bus.MinMaxBytes>>20)
	}
	if c.AccountStorageQuota < c.DeadLetterMaxBytes+c.BusLogMaxBytes+bus.MinMaxBytes {
		return fmt.Errorf("--account-storage-quota-mib must hold an account's dead letters (--dead-letter-max-mib %d), its bus log (--bus-log-max-mib %d) and a bus of %d MiB",
			c.DeadLetterMaxBytes>>20, c.BusLogMaxBytes>>20, bus.MinMaxBytes>>20)
	}
	if c.NATSStopTimeout <= 0 || c.NATSStopTimeout > 10*time.Minute {
		return fmt.Errorf("--nats-stop-timeout must be positive and at most 10m")
	}
	if c.Health.FailingAttempts < 1 || c.Health.FailingAttempts > 1_000_000 {
		return fmt.Errorf("--health-failing-attempts must be between 1 and 1000000")
	}
	if c.Health.FailingAfter < time.Second || c.Health.FailingAfter > 24*time.Hour {
		return fmt.Errorf("--health-failing-after must be between 1s and 24h")
	}
	if c.Health.DeadLetterWindow < time.Second || c.Health.DeadLetterWindow > 24*time.Hour {
		return fmt.Errorf("--health-dead-letter-window must be between 1s and 24h")
	}
	if c.StorageCheckInterval < 100*time.Millisecond || c.StorageCheckInterval > time.Minute {
		return fmt.Errorf("--storage-check-interval must be between 100ms and 1m")
	}
	if c.StorageBudget < 0 || (c.StorageBudget > 0 && c.StorageBudget < c.AccountStorageQuota) {
		return fmt.Errorf("--storage-budget-mib must be 0 (derived from the free disk space) or at least --account-storage-quota-mib %d",
			c.AccountStorageQuota>>20)
	}
	if c.MaxBusRetention.MaxAge < bus.DefaultMaxAge || c.MaxBusRetention.MaxAge > bus.MaxMaxAge {
		return fmt.Errorf("--max-bus-retention-age must be between %s (the default retention of a bus) and %s", bus.DefaultMaxAge, bus.MaxMaxAge)
	}
	if c.DeadLetterMaxBytes < 1<<20 {
		return fmt.Errorf("--dead-letter-max-mib must be at least 1")
	}
	if c.DeadLetterRetention < time.Hour {
		return fmt.Errorf("--dead-letter-retention %s is shorter than an hour", c.DeadLetterRetention)
	}
	if c.MetricsHistoryInterval < 100*time.Millisecond || c.MetricsHistoryInterval > time.Minute {
		return fmt.Errorf("--metrics-history-interval must be between 100ms and 1m")
	}
	if c.EventTypesInterval < 100*time.Millisecond || c.EventTypesInterval > 10*time.Minute {
		return fmt.Errorf("--event-types-interval must be between 100ms and 10m")
	}
	if c.BusLogMaxBytes < 1<<20 {
		return fmt.Errorf("--bus-log-max-mib must be at least 1")
	}
	if c.BusLogRetention < time.Minute {
		return fmt.Errorf("--bus-log-retention %s is shorter than a minute", c.BusLogRetention)
	}
	if c.PutEventsRate < 1 || c.PutEventsRate > account.MaxPutEventsPerSecond {
		return fmt.Errorf("--put-events-rate %d must be between 1 and %d", c.PutEventsRate, account.MaxPutEventsPerSecond)
	}
	for _, f := range []struct {
		flag string
		v    int64
	}{
		{"--http-read-header-timeout", int64(c.Listener.ReadHeaderTimeout)}, {"--http-read-timeout", int64(c.Listener.ReadTimeout)},
		{"--http-write-timeout", int64(c.Listener.WriteTimeout)}, {"--http-idle-timeout", int64(c.Listener.IdleTimeout)},
		{"--http-max-header-bytes", int64(c.Listener.MaxHeaderBytes)}, {"--http-max-connections", int64(c.Listener.MaxConnections)},
	} {
		if f.v < 0 {
			return fmt.Errorf("%s must not be negative (0 is no limit)", f.flag)
		}
	}
	if c.AuditRetention < time.Hour {
		return fmt.Errorf("--audit-retention %s must be at least 1h", c.AuditRetention)
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return fmt.Errorf("--log-level %q must be debug, info, warn or error", c.LogLevel)
	}
	return nil
}

// ErrVersion is returned by ParseConfig for --version: print Version and exit.
var ErrVersion = errors.New("version requested")

// ParseConfig reads flags from args; a flag not given takes its EB_* variable from getenv, else its default. It
// returns flag.ErrHelp for --help (after printing the usage on stderr) and ErrVersion for --version.
func ParseConfig(args []string, getenv func(string) string) (Config, error) {
	return parseConfig(args, getenv, os.Stderr)
}

// parseConfig is ParseConfig printing usage and flag errors on out.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("eventbridge", flag.ContinueOnError)
	fs.SetOutput(out)
	showVersion := false
	fs.BoolVar(&showVersion, "version", false, "print the version and exit (no environment variable)")
	str := func(p *string, name, env, def, usage string) {
		if v := getenv(env); v != "" {
			def = v
		}
		fs.StringVar(p, name, def, usage+" (env "+env+")")
	}
	str(&c.HTTPAddr, "http-addr", "EB_HTTP_ADDR", "127.0.0.1:8080", "address of the HTTP API and console")
	str(&c.DataDir, "data-dir", "EB_DATA_DIR", "./data", "directory of the embedded database, JetStream files and key")
	str(&c.DB, "db", "EB_DB", "", "database: sqlite://<path> (default <data-dir>/eventbridge.db) or mysql://user:pass@tcp(host:3306)/db?parseTime=true")
	str(&c.NATS, "nats", "EB_NATS", "", "NATS URL of an external cluster; empty starts an embedded server")
	str(&c.NATSListen, "nats-listen", "EB_NATS_LISTEN", "", "host:port for the embedded NATS server to listen on; empty = in-process only")
	str(&c.Fsync, "fsync", "EB_FSYNC", "1s", "JetStream flush interval, or \"always\" to flush every write")
	str(&c.Runtime, "runtime", "EB_RUNTIME", "", "worker URL(s), comma-separated; empty runs an embedded worker")
	str(&c.WorkerAddr, "worker-addr", "EB_WORKER_ADDR", "127.0.0.1:8083", "REST address of the embedded worker")
	str(&c.WorkerID, "worker-id", "EB_WORKER_ID", "embedded", "id of the embedded worker, unique in the cluster it joins")
	str(&c.ClusterID, "cluster-id", "EB_CLUSTER_ID", "eb", "prefix of every stream, KV bucket and consumer of this installation")
	str(&c.MasterKey, "master-key", "EB_MASTER_KEY", "", "path of the master key file (default <data-dir>/master.key, generated on first start)")
	str(&c.LogLevel, "log-level", "EB_LOG_LEVEL", "info", "debug, info, warn or error")
	str(&c.BootstrapAdminPasswordFile, "bootstrap-admin-password-file", "EB_BOOTSTRAP_ADMIN_PASSWORD_FILE", "", "file with the password of the user admin made when no administrator exists (default: generated into <data-dir>/admin-password)")
	str(&c.BootstrapAPIKeyFile, "bootstrap-api-key-file", "EB_BOOTSTRAP_API_KEY_FILE", "", "file with the instance administrator's API key (ebk_...) made when no administrator exists, or imported at start when unknown (default: generated into <data-dir>/admin-api-key)")
	str(&c.CORSOrigins, "cors-origins", "EB_CORS_ORIGINS", "", "browser origins allowed to call the API from other sites, comma-separated; empty allows none")
	str(&c.ClusterTokenFile, "cluster-token-file", "EB_CLUSTER_TOKEN_FILE", "", "path of the workers' cluster token file (default <data-dir>/cluster-token, generated on first start; required with --runtime)")
	str(&c.NATSCredentialsFile, "nats-credentials-file", "EB_NATS_CREDENTIALS_FILE", "", "path of the NATS credentials file, one line user:password (default <data-dir>/nats-credentials for the embedded server, generated on first start; with --nats none unless given)")
	str(&c.MetricsAddr, "metrics-addr", "EB_METRICS_ADDR", "", "host:port serving the embedded worker's GET /metrics without the cluster token, for Prometheus; empty: none")
	str(&c.TLSCert, "tls-cert", "EB_TLS_CERT", "", "PEM certificate (chain) of the HTTP API, which then serves HTTPS; with --tls-key")
	str(&c.TLSKey, "tls-key", "EB_TLS_KEY", "", "PEM private key of --tls-cert")
	str(&c.RuntimeCAFile, "runtime-ca-file", "EB_RUNTIME_CA_FILE", "", "PEM certificates of the CA of --runtime workers served over https (default the system's CAs)")
	str(&c.TrustedProxies, "trusted-proxies", "EB_TRUSTED_PROXIES", "", "proxies (IPs, CIDRs) whose X-Forwarded-For webhooks believe for their client IP check; empty trusts none")
	allow := false
	if v := getenv("EB_ALLOW_PRIVATE_TARGETS"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("EB_ALLOW_PRIVATE_TARGETS=%q is not a boolean", v)
		}
		allow = b
	}
	fs.BoolVar(&c.AllowPrivateTargets, "allow-private-targets", allow, "let targets and sources reach every loopback, private and link-local address (env EB_ALLOW_PRIVATE_TARGETS)")
	str(&c.EgressAllow, "egress-allow", "EB_EGRESS_ALLOW", "", "non-public addresses, CIDR prefixes and hosts (each with an optional :port, comma-separated) that targets and sources may reach nonetheless, e.g. 10.0.0.0/8,broker.internal:8883")
	var badEnv error
	dur := func(p *time.Duration, name, env string, def time.Duration, usage string) {
		if v := getenv(env); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil && badEnv == nil {
				badEnv = fmt.Errorf("%s=%q is not a duration (30s, 1m, 12h)", env, v)
			}
			def = d
		}
		fs.DurationVar(p, name, def, usage+" (env "+env+")")
	}
	dur(&c.ReconcileInterval, "reconcile-interval", "EB_RECONCILE_INTERVAL", 30*time.Second, "how often the runtime adapter compares the declared channels with the worker runtime")
	str(&c.PublicURLs, "public-url", "EB_PUBLIC_URL", "", "URLs clients reach the API on, comma-separated (https://eventbridge.example.com): the Host headers answered besides loopback names and IP addresses, the base of webhook URLs, Secure session cookies when https")
	str(&c.AWSRegion, "aws-region", "EB_AWS_REGION", aws.DefaultRegion, "the region the Amazon EventBridge API answers for: its requests are signed for it, its ARNs name it (docs/aws-api.md)")
	dur(&c.SessionIdleTimeout, "session-idle-timeout", "EB_SESSION_IDLE_TIMEOUT", session.DefaultIdleTimeout, "a console session not used for so long ends")
	dur(&c.SessionMaxAge, "session-max-age", "EB_SESSION_MAX_AGE", session.DefaultMaxAge, "a console session ends so long after sign-in")
	dur(&c.AuditRetention, "audit-retention", "EB_AUDIT_RETENTION", audit.DefaultRetention, "how long audit entries are kept (2160h: 90 days)")
	dur(&c.LeaseTTL, "lease-ttl", "EB_LEASE_TTL", worker.DefaultLeaseTTL, "of the embedded worker: "+worker.LeaseTTLUsage)
	dur(&c.NATSStopTimeout, "nats-stop-timeout", "EB_NATS_STOP_TIMEOUT", 5*time.Second, "how long the embedded NATS server may take to stop at shutdown; then the process exits, leaving the rest as after a crash (nothing acknowledged is lost)")
	dur(&c.StorageCheckInterval, "storage-check-interval", "EB_STORAGE_CHECK_INTERVAL", storagequota.DefaultInterval, "how often what accounts keep in the event store is read against their quotas and the budget")
	dur(&c.MaxBusRetention.MaxAge, "max-bus-retention-age", "EB_MAX_BUS_RETENTION_AGE", bus.MaxMaxAge, "the longest retention.maxAge of a bus")
	hr := health.DefaultRules()
	dur(&c.Health.FailingAfter, "health-failing-after", "EB_HEALTH_FAILING_AFTER", hr.FailingAfter, "a target or source whose records wait for another attempt and that has not succeeded for so long is FAILING")
	dur(&c.Health.DeadLetterWindow, "health-dead-letter-window", "EB_HEALTH_DEAD_LETTER_WINDOW", hr.DeadLetterWindow, "a target or source is DEAD_LETTERING for so long after it gave a record up to the dead letters")
	dur(&c.DeadLetterRetention, "dead-letter-retention", "EB_DEAD_LETTER_RETENTION", stream.DLQRetention, "how long an account's dead letters are kept (336h: 14 days)")
	dur(&c.MetricsHistoryInterval, "metrics-history-interval", "EB_METRICS_HISTORY_INTERVAL", history.Hour.Step, "the step of the metrics history over the last hour (the last day's is 30 of them)")
	dur(&c.EventTypesInterval, "event-types-interval", "EB_EVENT_TYPES_INTERVAL", eventtype.DefaultFlushInterval, "how often routers report the event types they routed and the control plane writes them")
	dur(&c.BusLogRetention, "bus-log-retention", "EB_BUS_LOG_RETENTION", stream.LogRetention, "how long the records of an account's bus logs are kept")
	lim := listener.Defaults
	dur(&c.Listener.ReadHeaderTimeout, "http-read-header-timeout", "EB_HTTP_READ_HEADER_TIMEOUT", lim.ReadHeaderTimeout, "how long a client may take to send a request's headers (0: no limit)")
	dur(&c.Listener.ReadTimeout, "http-read-timeout", "EB_HTTP_READ_TIMEOUT", lim.ReadTimeout, "how long a client may take to send a whole request, body included (0: no limit)")
	dur(&c.Listener.WriteTimeout, "http-write-timeout", "EB_HTTP_WRITE_TIMEOUT", lim.WriteTimeout, "how long an answer may take from the end of the request's headers (streaming answers excepted; 0: no limit)")
	dur(&c.Listener.IdleTimeout, "http-idle-timeout", "EB_HTTP_IDLE_TIMEOUT", lim.IdleTimeout, "how long an idle keep-alive connection is kept (0: no limit)")
	if badEnv != nil {
		return c, badEnv
	}
	quota := func(p *int, name, env string, def int, usage string) {
		if v := getenv(env); v != "" {
			if n, err := strconv.Atoi(v); err == nil {
				def = n
			} else {
				def = -1 // refused by Validate, naming the variable's flag
			}
		}
		fs.IntVar(p, name, def, usage+" (env "+env+")")
	}
	quota(&c.Replicas, "replicas", "EB_REPLICAS", 1, "copies of every stream and KV bucket on a NATS cluster (1 to 5; 3 in production)")
	quota(&c.GCHeadroomMiB, "gc-headroom-mib", "EB_GC_HEADROOM_MIB", gcpace.DefaultHeadroom>>20, gcpace.FlagUsage)
	quota(&c.Listener.MaxHeaderBytes, "http-max-header-bytes", "EB_HTTP_MAX_HEADER_BYTES", lim.MaxHeaderBytes, "largest request header block, in bytes (0: net/http's 1 MiB)")
	quota(&c.Listener.MaxConnections, "http-max-connections", "EB_HTTP_MAX_CONNECTIONS", lim.MaxConnections, "connections each listener holds open at once; more wait (default: a quarter of the file-descriptor limit, at most 10000; 0: no cap)")
	busMiB := 10 << 10
	quota(&busMiB, "max-bus-retention-mib", "EB_MAX_BUS_RETENTION_MIB", busMiB, "the largest retention.maxBytes of a bus, in MiB (a bus with a maxBytes of its own reserves it in the event store)")
	quotaMiB, budgetMiB := int(storagequota.DefaultQuota>>20), 0
	quota(&quotaMiB, "account-storage-quota-mib", "EB_ACCOUNT_STORAGE_QUOTA_MIB", quotaMiB, "MiB each account may keep in the event store: events not delivered yet, its dead letters and the maxBytes its buses reserve; when full, its PutEvents answer 409 AccountStorageQuotaExceeded")
	quota(&budgetMiB, "storage-budget-mib", "EB_STORAGE_BUDGET_MIB", budgetMiB, "MiB the event store may keep in all (0: three quarters of the free disk space of the embedded store)")
	dlqMiB := int(stream.DLQMaxBytes >> 20)
	quota(&dlqMiB, "dead-letter-max-mib", "EB_DEAD_LETTER_MAX_MIB", dlqMiB, "MiB of dead letters each account keeps; when full, the oldest are deleted to make room")
	logMiB := int(stream.LogMaxBytes >> 20)
	quota(&logMiB, "bus-log-max-mib", "EB_BUS_LOG_MAX_MIB", logMiB, "MiB of bus-log records each account whose buses log keeps (reserved in its storage quota); when full, the oldest are deleted to make room")
	quota(&c.PutEventsRate, "put-events-rate", "EB_PUT_EVENTS_RATE", throttle.DefaultPutEventsPerSecond, "events per second an account may put (every dialect and webhook; per replica) unless it has its own limit (PATCH /api/v1/accounts/{account})")
	failingAttempts := int(hr.FailingAttempts)
	quota(&failingAttempts, "health-failing-attempts", "EB_HEALTH_FAILING_ATTEMPTS", failingAttempts, "a target or source whose records wait for another attempt is FAILING after so many failed attempts without a success")
	quota(&c.QuotaBuses, "quota-buses", "EB_QUOTA_BUSES", 100, "buses per account")
	quota(&c.QuotaRulesPerBus, "quota-rules-per-bus", "EB_QUOTA_RULES_PER_BUS", 300, "rules per bus")
	quota(&c.QuotaConnections, "quota-connections", "EB_QUOTA_CONNECTIONS", 100, "connections per account")
	quota(&c.QuotaAPIDestinations, "quota-api-destinations", "EB_QUOTA_API_DESTINATIONS", 100, "API destinations per account")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.DeadLetterMaxBytes = int64(dlqMiB) << 20
	c.BusLogMaxBytes = int64(logMiB) << 20
	c.Health.FailingAttempts = uint64(max(failingAttempts, 0))
	c.AccountStorageQuota, c.StorageBudget = int64(quotaMiB)<<20, int64(budgetMiB)<<20
	c.MaxBusRetention.MaxBytes = int64(busMiB) << 20
	if showVersion {
		return c, ErrVersion
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if c.Tracing, err = tracing.ConfigFromEnv(getenv, "eventbridge"); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// readOrCreateKey returns the 32-byte master key at path, generating it (mode 0600) on first start.
func readOrCreateKey(path string, generate func([]byte) error) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		key, derr := decodeKey(b)
		if derr != nil {
			return nil, fmt.Errorf("master key %s: %w", path, derr)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key := make([]byte, 32)
	if err := generate(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(encodeKey(key)+"\n"), 0o600); err != nil {
		return nil, err
	}
	return key, nil
}

// ensureSecretFile writes generate's output to path (mode 0600, its directory 0700, through a temporary file renamed
// into place) unless the file exists. Errors never contain the generated content.
func ensureSecretFile(path string, generate func() (string, error)) error {
	if _, err := os.Stat(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return err
	}
	content, err := generate()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func encodeKey(key []byte) string { return hex.EncodeToString(key) }

func decodeKey(b []byte) ([]byte, error) {
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != 32 {
		return nil, errors.New("must hold 64 hexadecimal characters (32 bytes)")
	}
	return key, nil
}
