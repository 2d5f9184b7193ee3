// Command worker runs the connector runtime as its own process against an external NATS with JetStream.
//
//	worker --nats nats://127.0.0.1:4222 --cluster-token-file FILE [--nats-credentials-file FILE]
//	       [--rest-addr 127.0.0.1:8083] [--advertised-url http://HOST:8083] [--tls-cert FILE --tls-key FILE]
//	       [--metrics-addr HOST:PORT] [--worker-id ID] [--cluster-id eb] [--master-key FILE]
//	       [--allow-private-targets] [--egress-allow 10.0.0.0/8,broker.internal] [--log-level info] [--version]
//
// Every flag has an environment equivalent, named in --help (EB_NATS, EB_CLUSTER_TOKEN_FILE, ...); a flag wins over
// its variable. The cluster token file holds the installation's cluster token on one line (see package rpc): the
// REST API answers 401 to every request without it but GET / and GET /healthz. The NATS credentials file holds
// "user:password" on one line (see worker/jetstream.Credentials). The master key file holds the installation's
// 32-byte key as 64 hexadecimal characters, the same for every worker and the control plane: the secret values of
// connector configs are stored only encrypted under it and decrypted when a task starts. SIGINT or SIGTERM stops the
// worker cleanly: records being written finish or are handed back, none is acked that was not delivered.
package main

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/eventbridge-go/eventbridge/gcpace"
	"github.com/eventbridge-go/eventbridge/listener"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/tracing"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/egress"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
	"github.com/eventbridge-go/eventbridge/worker/loggers"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/attribute"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/eventbus"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/http"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/inputtransformer"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/log"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/mqtt"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/replay"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/router"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/schedule"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/webhook"
)

func main() {
	syscall.Umask(0o077) // what the worker writes (nothing today) is its owner's only, as the control plane's files
	m := NewMain()
	if code, run := m.cli(os.Args[1:], os.Stdout); !run {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		_ = m.Close()
		os.Exit(1)
	}
	<-ctx.Done()
	stop() // a second signal kills the process the default way
	if err := m.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

// cli reads args with ParseFlags. It returns run true when the worker should start; otherwise the exit status:
// 0 after --help (usage on Stderr) or --version (printed on stdout), 2 after an error (printed on Stderr).
func (m *Main) cli(args []string, stdout io.Writer) (code int, run bool) {
	err := m.ParseFlags(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		return 0, false
	case errors.Is(err, ErrVersion):
		fmt.Fprintln(stdout, "worker", Version())
		return 0, false
	default:
		fmt.Fprintln(m.Stderr, "worker:", err)
		return 2, false
	}
}

// version is the release, set at build time with -ldflags "-X main.version=1.2.3"; empty takes the module version
// Go recorded in the binary.
var version string

// ErrVersion is returned by ParseFlags for --version: print Version and exit.
var ErrVersion = errors.New("version requested")

// Version is the binary's version (worker.BuildVersion of version).
func Version() string { return worker.BuildVersion(version) }

// MinServerVersion is the oldest nats-server the worker accepts (JetStream KV with per-key TTL).
const MinServerVersion = "2.11.0"

// Main is the worker program: ParseFlags, then Run, then Close. End-to-end tests drive it the same way.
type Main struct {
	NATSURL  string
	RESTAddr string
	// AdvertisedURL is the REST URL the worker announces to the cluster (GET /getClusterInfo, the control plane's
	// /api/v1/runtime/workers) when its listener's address is not how others reach it, as behind 0.0.0.0 in a
	// container. Empty announces http://<bound address of RESTAddr>.
	AdvertisedURL       string
	WorkerID            string
	ClusterID           string
	AllowPrivateTargets bool
	// EgressAllow lists the non-public addresses, CIDR prefixes and hosts plugins may reach although not public
	// (--egress-allow, comma-separated; see egress.Config.Allow).
	EgressAllow []string
	// GCHeadroomMiB is the least the heap may grow between two garbage collections, in MiB (gcpace; 0: the
	// runtime's own pacing).
	GCHeadroomMiB int
	// Replicas is the number of copies of the worker's KV buckets on the NATS cluster (default 1).
	Replicas int
	// MasterKeyFile is the path of the master key file (64 hex characters); MasterKey is its key, read by
	// ParseFlags. Without one the worker refuses configs that hold secret values.
	MasterKeyFile string
	MasterKey     []byte
	// ClusterTokenFile is the path of the cluster token file (required); ClusterToken is its token, read by
	// ParseFlags, which the REST API requires of every client.
	ClusterTokenFile string
	ClusterToken     string
	// NATSCredentialsFile is the path of a NATS credentials file ("user:password"); NATSCredentials are its
	// credentials, read by ParseFlags and sent when connecting (nil: none, or those of the NATS URL).
	NATSCredentialsFile string
	NATSCredentials     *ebjs.Credentials
	// MetricsAddr is host:port of a listener serving GET /metrics without the token, for Prometheus (empty: none;
	// the REST listener serves them with the token).
	MetricsAddr string
	// Limits are the timeouts, header limit and connection cap of the REST and metrics listeners (zero: defaults).
	Limits listener.Limits
	// TLSCertFile and TLSKeyFile make the REST listener serve HTTPS (both or neither); TLS is what ParseFlags
	// loaded from them.
	TLSCertFile, TLSKeyFile string
	TLS                     *tls.Config
	LogLevel                slog.Level
	// Tracing is read from the standard OTEL_* variables by ParseFlags (tracing.ConfigFromEnv); TracerProvider,
	// when set before Run, is used instead (tests).
	Tracing        tracing.Config
	TracerProvider trace.TracerProvider
	// CloseTimeout bounds a clean stop (default 60s).
	CloseTimeout time.Duration
	// LeaseTTL is how long the server keeps this worker's lease after its last renewal (worker.Config.LeaseTTL;
	// default 2.5s); every worker of a cluster must use the same.
	LeaseTTL time.Duration

	// Getenv reads the environment (default os.Getenv); Stderr receives the log (default os.Stderr).
	Getenv func(string) string
	Stderr io.Writer

	// nc is the worker's connection, leaseNC that of its lease and membership heartbeat.
	nc, leaseNC *nats.Conn
	// tracing is the provider Run started from Tracing (nil when off).
	tracing *tracing.Provider
	worker  *worker.Worker
	// rest serves the REST API on restLn when AdvertisedURL is set (else the worker serves it itself).
	rest   *http.Server
	restLn net.Listener
}

// NewMain returns a program with the defaults.
func NewMain() *Main {
	return &Main{
		RESTAddr:      "127.0.0.1:8083",
		ClusterID:     worker.DefaultClusterID,
		LogLevel:      slog.LevelInfo,
		CloseTimeout:  60 * time.Second,
		GCHeadroomMiB: gcpace.DefaultHeadroom >> 20,
		Getenv:        os.Getenv,
		Stderr:        os.Stderr,
	}
}

// ParseFlags reads the flags in args over the environment over the defaults.
func (m *Main) ParseFlags(args []string) error {
	env := func(key, def string) string {
		if v := m.Getenv(key); v != "" {
			return v
		}
		return def
	}
	allowDefault, err := strconv.ParseBool(env("EB_ALLOW_PRIVATE_TARGETS", "false"))
	if err != nil {
		return fmt.Errorf("EB_ALLOW_PRIVATE_TARGETS: %w", err)
	}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	showVersion := false
	fs.BoolVar(&showVersion, "version", false, "print the version and exit (no environment variable)")
	fs.StringVar(&m.NATSURL, "nats", env("EB_NATS", m.NATSURL), "NATS URL(s), comma-separated (required; env EB_NATS)")
	fs.StringVar(&m.NATSCredentialsFile, "nats-credentials-file", env("EB_NATS_CREDENTIALS_FILE", m.NATSCredentialsFile),
		"path of a file holding the NATS user and password as one line user:password (env EB_NATS_CREDENTIALS_FILE)")
	fs.StringVar(&m.ClusterTokenFile, "cluster-token-file", env("EB_CLUSTER_TOKEN_FILE", m.ClusterTokenFile),
		"path of the file holding the installation's cluster token, which the REST API requires of every client (required; env EB_CLUSTER_TOKEN_FILE)")
	fs.StringVar(&m.MetricsAddr, "metrics-addr", env("EB_METRICS_ADDR", m.MetricsAddr),
		"host:port serving GET /metrics without the cluster token, for Prometheus; empty: only the REST listener serves them, with the token (env EB_METRICS_ADDR)")
	fs.StringVar(&m.TLSCertFile, "tls-cert", env("EB_TLS_CERT", m.TLSCertFile), "PEM certificate (chain) of the REST listener, which then serves HTTPS; with --tls-key (env EB_TLS_CERT)")
	fs.StringVar(&m.TLSKeyFile, "tls-key", env("EB_TLS_KEY", m.TLSKeyFile), "PEM private key of --tls-cert (env EB_TLS_KEY)")
	fs.StringVar(&m.RESTAddr, "rest-addr", env("EB_WORKER_ADDR", m.RESTAddr), "host:port of the REST API (env EB_WORKER_ADDR)")
	fs.StringVar(&m.AdvertisedURL, "advertised-url", env("EB_WORKER_URL", m.AdvertisedURL), "REST URL announced to the cluster, e.g. http://worker-1:8083 (default http://<rest-addr>; env EB_WORKER_URL)")
	fs.StringVar(&m.WorkerID, "worker-id", env("EB_WORKER_ID", m.WorkerID), "id of this worker, unique in the cluster (default <host>-<port>; env EB_WORKER_ID)")
	fs.StringVar(&m.ClusterID, "cluster-id", env("EB_CLUSTER_ID", m.ClusterID), "installation prefix of streams, buckets and consumers (env EB_CLUSTER_ID)")
	fs.StringVar(&m.MasterKeyFile, "master-key", env("EB_MASTER_KEY", m.MasterKeyFile), "path of the master key file: 64 hex characters, shared by the workers and the control plane (env EB_MASTER_KEY)")
	fs.BoolVar(&m.AllowPrivateTargets, "allow-private-targets", allowDefault, "let sinks and sources reach every loopback, private and link-local address (env EB_ALLOW_PRIVATE_TARGETS)")
	egressAllow := env("EB_EGRESS_ALLOW", strings.Join(m.EgressAllow, ","))
	fs.StringVar(&egressAllow, "egress-allow", egressAllow, "non-public addresses, CIDR prefixes and hosts (each with an optional :port, comma-separated) that sinks and sources may reach nonetheless, e.g. 10.0.0.0/8,broker.internal:8883 (env EB_EGRESS_ALLOW)")
	replicas := env("EB_REPLICAS", strconv.Itoa(max(m.Replicas, 1)))
	fs.Func("replicas", "copies of every KV bucket on the NATS cluster, 1 to 5; 3 in production (default "+replicas+"; env EB_REPLICAS)",
		func(v string) error { replicas = v; return nil })
	level := env("EB_LOG_LEVEL", m.LogLevel.String())
	fs.StringVar(&level, "log-level", level, "debug, info, warn or error (env EB_LOG_LEVEL)")
	if m.Limits == (listener.Limits{}) {
		m.Limits = listener.Defaults
	}
	var badEnv error
	dur := func(p *time.Duration, name, envName, usage string) {
		if v := env(envName, ""); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil && badEnv == nil {
				badEnv = fmt.Errorf("%s=%q is not a duration (30s, 1m)", envName, v)
			}
			*p = d
		}
		fs.DurationVar(p, name, *p, usage+" (env "+envName+")")
	}
	num := func(p *int, name, envName, usage string) {
		if v := env(envName, ""); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil && badEnv == nil {
				badEnv = fmt.Errorf("%s=%q is not a number", envName, v)
			}
			*p = n
		}
		fs.IntVar(p, name, *p, usage+" (env "+envName+")")
	}
	dur(&m.Limits.ReadHeaderTimeout, "http-read-header-timeout", "EB_HTTP_READ_HEADER_TIMEOUT", "how long a client of the REST API may take to send a request's headers (0: no limit)")
	dur(&m.Limits.ReadTimeout, "http-read-timeout", "EB_HTTP_READ_TIMEOUT", "how long a client may take to send a whole request (0: no limit)")
	dur(&m.Limits.WriteTimeout, "http-write-timeout", "EB_HTTP_WRITE_TIMEOUT", "how long an answer may take from the end of the request's headers (0: no limit)")
	dur(&m.Limits.IdleTimeout, "http-idle-timeout", "EB_HTTP_IDLE_TIMEOUT", "how long an idle keep-alive connection is kept (0: no limit)")
	num(&m.Limits.MaxHeaderBytes, "http-max-header-bytes", "EB_HTTP_MAX_HEADER_BYTES", "largest request header block, in bytes (0: net/http's 1 MiB)")
	num(&m.Limits.MaxConnections, "http-max-connections", "EB_HTTP_MAX_CONNECTIONS", "connections each listener holds open at once; more wait (default: a quarter of the file-descriptor limit, at most 10000; 0: no cap)")
	num(&m.GCHeadroomMiB, "gc-headroom-mib", "EB_GC_HEADROOM_MIB", gcpace.FlagUsage)
	if m.LeaseTTL == 0 {
		m.LeaseTTL = worker.DefaultLeaseTTL
	}
	dur(&m.LeaseTTL, "lease-ttl", "EB_LEASE_TTL", worker.LeaseTTLUsage)
	if badEnv != nil {
		return badEnv
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := m.Limits.Validate(); err != nil {
		return fmt.Errorf("--http-*: %w", err)
	}
	if err := worker.CheckLeaseTTL(m.LeaseTTL); err != nil {
		return fmt.Errorf("--lease-ttl %w", err)
	}
	if m.GCHeadroomMiB < 0 || m.GCHeadroomMiB > 1<<20 {
		return fmt.Errorf("--gc-headroom-mib %d must be between 0 and 1048576 (MiB)", m.GCHeadroomMiB)
	}
	if showVersion {
		return ErrVersion
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := m.LogLevel.UnmarshalText([]byte(level)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	if m.EgressAllow, err = egress.ParseAllow(egressAllow); err != nil {
		return err // names --egress-allow and the entry
	}
	if n, err := strconv.Atoi(replicas); err != nil || n < 1 || n > 5 {
		return fmt.Errorf("--replicas %q must be a number between 1 and 5", replicas)
	} else {
		m.Replicas = n
	}
	if m.NATSURL == "" {
		return errors.New("--nats (or EB_NATS) is required: the worker runs against an external NATS with JetStream")
	}
	if m.ClusterTokenFile == "" {
		return errors.New("--cluster-token-file (or EB_CLUSTER_TOKEN_FILE) is required: the file holding the " +
			"installation's cluster token, which the REST API requires of every client")
	}
	token, err := rpc.ReadTokenFile(m.ClusterTokenFile)
	if err != nil {
		return fmt.Errorf("--cluster-token-file: %w", err)
	}
	m.ClusterToken = token
	if m.NATSCredentialsFile != "" {
		c, err := ebjs.ReadCredentialsFile(m.NATSCredentialsFile)
		if err != nil {
			return fmt.Errorf("--nats-credentials-file: %w", err)
		}
		m.NATSCredentials = &c
	}
	if (m.TLSCertFile == "") != (m.TLSKeyFile == "") {
		return errors.New("--tls-cert and --tls-key go together: give both for HTTPS, or neither")
	}
	if m.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(m.TLSCertFile, m.TLSKeyFile)
		if err != nil {
			return fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		m.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if m.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(m.MetricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr %q: %w", m.MetricsAddr, err)
		}
	}
	if _, _, err := net.SplitHostPort(m.RESTAddr); err != nil {
		return fmt.Errorf("--rest-addr %q: %w", m.RESTAddr, err)
	}
	if m.AdvertisedURL != "" {
		u, err := url.Parse(m.AdvertisedURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("--advertised-url %q must be http://host:port or https://host:port, without path or query", m.AdvertisedURL)
		}
		if want := m.scheme(); u.Scheme != want {
			return fmt.Errorf("--advertised-url %q must start with %s:// as the REST listener serves %s (--tls-cert)",
				m.AdvertisedURL, want, strings.ToUpper(want))
		}
		m.AdvertisedURL = strings.TrimRight(m.AdvertisedURL, "/")
	}
	if m.MasterKeyFile != "" {
		key, err := ReadMasterKey(m.MasterKeyFile)
		if err != nil {
			return fmt.Errorf("--master-key: %w", err)
		}
		m.MasterKey = key
	}
	if m.WorkerID == "" {
		host, _ := os.Hostname()
		_, port, _ := net.SplitHostPort(m.RESTAddr)
		m.WorkerID = host + "-" + port
	}
	if err := worker.CheckWorkerID(m.WorkerID); err != nil {
		return fmt.Errorf("--worker-id: %w", err)
	}
	if m.Tracing, err = tracing.ConfigFromEnv(m.Getenv, "eventbridge-worker"); err != nil {
		return err
	}
	return nil
}

// Run connects to NATS, checks that the server has what the worker needs, and starts the worker. It returns once
// the worker serves; Close stops it.
func (m *Main) Run(ctx context.Context) error {
	// Every logger writes through levels, which /admin/loggers changes at run time; --log-level is root's.
	levels := loggers.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: loggers.LevelTrace}), m.LogLevel)
	log := levels.Logger(loggers.Root)
	gcpace.Start(int64(m.GCHeadroomMiB)<<20, log) // for the process's life
	if m.TracerProvider == nil {
		var err error
		if m.tracing, err = tracing.Start(ctx, m.Tracing, log); err != nil {
			return fmt.Errorf("tracing: %w", err)
		}
		m.TracerProvider = m.tracing.TracerProvider()
	}
	var creds []nats.Option
	if m.NATSCredentials != nil {
		creds = append(creds, m.NATSCredentials.Option())
	}
	connect := func(name string) (*nats.Conn, error) {
		nc, err := nats.Connect(m.NATSURL, append(creds,
			nats.Name(name),
			nats.MaxReconnects(-1),
			nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
				if err != nil {
					log.Warn("disconnected from NATS", "connection", name, "err", err)
				}
			}),
			nats.ReconnectHandler(func(nc *nats.Conn) {
				log.Info("reconnected to NATS", "connection", name, "url", nc.ConnectedUrlRedacted())
			}),
			worker.LogNATSErrors(log),
		)...)
		if err != nil {
			return nil, fmt.Errorf("connecting to NATS at %s: %w", redactURLs(m.NATSURL), err)
		}
		return nc, nil
	}
	nc, err := connect("eventbridge-worker " + m.WorkerID)
	if err != nil {
		return err
	}
	m.nc = nc
	// The lease and the membership heartbeat on a connection of their own, which thousands of tasks waking at once
	// do not crowd (worker.Config.LeaseNATS).
	if m.leaseNC, err = connect("eventbridge-worker-lease " + m.WorkerID); err != nil {
		return err
	}
	if err := CheckServer(ctx, nc); err != nil {
		return err
	}
	// worker.Start announces its listener's address; with an advertised URL, listen here and announce that instead.
	restAddr := m.RESTAddr
	if m.Limits == (listener.Limits{}) {
		m.Limits = listener.Defaults // a Main built without ParseFlags
	}
	if m.AdvertisedURL != "" {
		if m.restLn, err = net.Listen("tcp", m.RESTAddr); err != nil {
			return fmt.Errorf("REST listener: %w", err)
		}
		m.restLn = m.Limits.Listen(m.restLn)
		if m.TLS != nil {
			m.restLn = tls.NewListener(m.restLn, m.TLS)
		}
		restAddr = ""
	}
	w, err := worker.New(worker.Config{
		NATS:                nc,
		LeaseNATS:           m.leaseNC,
		ClusterID:           m.ClusterID,
		WorkerID:            m.WorkerID,
		RESTAddr:            restAddr,
		Token:               m.ClusterToken,
		MetricsAddr:         m.MetricsAddr,
		TLS:                 m.TLS,
		Limits:              m.Limits,
		Replicas:            m.Replicas,
		AllowPrivateTargets: m.AllowPrivateTargets,
		EgressAllow:         m.EgressAllow,
		MasterKey:           m.MasterKey,
		LeaseTTL:            m.LeaseTTL,
		Logger:              log,
		Loggers:             levels,
		Tracer:              tracing.Tracer(m.TracerProvider),
	})
	if err != nil {
		return err
	}
	if m.restLn != nil {
		w.Herder().SetURL(m.AdvertisedURL)
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	m.worker = w
	if m.restLn != nil {
		m.rest = m.Limits.Server(w.Handler(), slog.NewLogLogger(log.Handler(), slog.LevelWarn))
		go func(srv *http.Server, ln net.Listener) { _ = srv.Serve(ln) }(m.rest, m.restLn)
		log.Info("worker started", "worker_id", m.WorkerID, "cluster_id", m.ClusterID, "rest", m.URL(),
			"advertised_url", m.AdvertisedURL, "metrics", w.MetricsAddr())
	}
	return nil
}

// Addr is the bound address of the REST API (host:port), or "" before Run and after Close. With an advertised URL
// the worker does not serve REST itself, so Worker().Addr() is "" then: ask Main.
func (m *Main) Addr() string {
	if m.restLn != nil {
		return m.restLn.Addr().String()
	}
	if m.worker != nil {
		return m.worker.Addr()
	}
	return ""
}

// URL is the base URL of the REST API on its bound address (https:// with --tls-cert), or "" when not serving.
func (m *Main) URL() string {
	if a := m.Addr(); a != "" {
		return m.scheme() + "://" + a
	}
	return ""
}

// BoundMetricsAddr is the bound address of the --metrics-addr listener, or "" without one.
func (m *Main) BoundMetricsAddr() string {
	if m.worker == nil {
		return ""
	}
	return m.worker.MetricsAddr()
}

func (m *Main) scheme() string {
	if m.TLSCertFile != "" {
		return "https"
	}
	return "http"
}

// redactURLs hides the passwords of NATS URLs (nats://user:password@host) for messages.
func redactURLs(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}

// ReadMasterKey reads a master key file: 64 hexadecimal characters (32 bytes), surrounding white space ignored.
// Errors name the file and never contain its content.
func ReadMasterKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the master key: %w", err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("master key file %s must hold 64 hexadecimal characters (32 bytes)", path)
	}
	return key, nil
}

// CheckServer fails with a clear message when the connected server lacks JetStream or is older than
// MinServerVersion.
func CheckServer(ctx context.Context, nc *nats.Conn) error {
	v := nc.ConnectedServerVersion()
	if !versionAtLeast(v, MinServerVersion) {
		return fmt.Errorf("NATS server at %s is version %q; the worker needs nats-server %s or newer",
			nc.ConnectedUrlRedacted(), v, MinServerVersion)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return fmt.Errorf("NATS server at %s does not have JetStream enabled for this account; "+
				"start nats-server with -js (or jetstream {} in its config)", nc.ConnectedUrlRedacted())
		}
		return fmt.Errorf("asking NATS at %s for JetStream: %w", nc.ConnectedUrlRedacted(), err)
	}
	return nil
}

// versionAtLeast compares dotted versions by their first three numbers; "2.11.0-beta" counts as 2.11.0.
func versionAtLeast(v, min string) bool {
	parse := func(s string) (out [3]int, ok bool) {
		s, _, _ = strings.Cut(strings.TrimPrefix(s, "v"), "-")
		parts := strings.Split(s, ".")
		if len(parts) < 2 {
			return out, false
		}
		for i := 0; i < 3 && i < len(parts); i++ {
			n, err := strconv.Atoi(parts[i])
			if err != nil {
				return out, false
			}
			out[i] = n
		}
		return out, true
	}
	a, ok := parse(v)
	b, _ := parse(min)
	if !ok {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return true
}

// Worker is the running worker (nil before Run).
func (m *Main) Worker() *worker.Worker { return m.worker }

// Close stops the worker cleanly within CloseTimeout and closes the NATS connection. Safe after a failed Run.
func (m *Main) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), m.CloseTimeout)
	defer cancel()
	var errs []error
	if m.rest != nil {
		errs = append(errs, m.rest.Shutdown(ctx))
		m.rest = nil
	}
	if m.restLn != nil {
		_ = m.restLn.Close() // when Run failed before serving; closed already after Shutdown
		m.restLn = nil
	}
	if m.worker != nil {
		errs = append(errs, m.worker.Close(ctx))
		m.worker = nil
	}
	if m.nc != nil {
		_ = m.nc.FlushTimeout(5 * time.Second) // the last acks
		m.nc.Close()
		m.nc = nil
	}
	if m.leaseNC != nil {
		m.leaseNC.Close() // after the worker's Close released its lease
		m.leaseNC = nil
	}
	if err := m.tracing.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("tracing: exporting the last spans: %w", err))
	}
	m.tracing = nil
	return errors.Join(errs...)
}
