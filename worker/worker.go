// Package worker is the connector runtime of one worker process: it wires a NATS connection, the plugin
// registry, the herder (connector lifecycle, persisted in JetStream KV) and the REST API. The control plane embeds
// it, and cmd/worker runs it as its own binary. The REST listener also serves the worker's Prometheus metrics on
// GET /metrics (see worker/metrics), behind the cluster token like the API; Config.MetricsAddr serves them without
// it on a listener of their own, for Prometheus.
package worker

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/eventbridge-go/eventbridge/listener"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/cluster"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/egress"
	"github.com/eventbridge-go/eventbridge/worker/herder"
	"github.com/eventbridge-go/eventbridge/worker/loggers"
	"github.com/eventbridge-go/eventbridge/worker/metrics"
	"github.com/eventbridge-go/eventbridge/worker/rest"
)

// DefaultClusterID prefixes the streams, buckets and consumers of an installation that does not name itself.
const DefaultClusterID = "eb"

// Config configures a Worker.
type Config struct {
	// NATS is the connection to the installation's NATS (required). The worker does not close it.
	NATS *nats.Conn
	// LeaseNATS, when set, is a second connection to the same NATS on which the worker renews its lease and writes
	// its membership heartbeat, so that they never wait behind its tasks' traffic in one connection's lock and
	// loops (thousands of tasks waking at once held a renewal's answer for seconds). Default: NATS. The worker
	// does not close it.
	LeaseNATS *nats.Conn
	// ClusterID prefixes every stream, KV bucket and consumer of the installation (default "eb").
	ClusterID string
	// WorkerID identifies the worker in statuses (default: the host name).
	WorkerID string
	// RESTAddr is host:port of the REST listener; port 0 picks a free port (see Addr). Empty serves no listener
	// (Handler still serves the API in process).
	RESTAddr string
	// AllowPrivateTargets lets plugins reach loopback, private and link-local addresses (--allow-private-targets).
	AllowPrivateTargets bool
	// EgressAllow lists the non-public addresses, CIDR prefixes and hosts plugins may reach nonetheless
	// (--egress-allow; see egress.Config.Allow).
	EgressAllow []string
	Logger      *slog.Logger
	// Loggers, when set, are the named loggers of the process (Logger is then their root): the worker logs through
	// "eventbridge.worker", "eventbridge.worker.herder", "eventbridge.worker.rest" and each plugin's tasks through
	// "eventbridge.plugin.<connector.class>", whose levels /admin/loggers changes. Without, the worker makes its own
	// over Logger's handler, which cannot log below Logger's level.
	Loggers *loggers.Levels
	// Tracer, when set, makes a span of every attempt of every sink task (the router's "route", a target's
	// "deliver") and of every record a source task stores, continuing the trace context of the records' headers
	// (tracing.Tracer); nil traces nothing.
	Tracer trace.Tracer
	// Registry holds the plugins (default connector.Default(): every linked worker/plugins package).
	Registry *connector.Registry
	// Replicas of the KV buckets (default 1).
	Replicas int
	// StopTimeout bounds how long stopping a task waits for the records being written (default 30s).
	StopTimeout time.Duration
	// LeaseTTL is how long the server keeps a worker's lease after its last renewal (default 2.5s, at least 1s, at
	// most 5m): a killed or partitioned worker's tasks move to others that long after. The worker renews it every
	// 500 ms and stops its own tasks when four fifths of it pass without a renewal answered (2s by default), and
	// its membership expires after as long. Longer keeps the leases of workers that miss their renewals for
	// seconds (thousands of tasks waking at once on a starved machine), at the cost of a slower failover. Every
	// worker of a cluster must use the same: the leases bucket keeps it, and a worker configured otherwise does
	// not start, unless it is SoleWorker.
	LeaseTTL time.Duration
	// SoleWorker says that no other worker can reach the NATS server (the control plane's embedded server without
	// a listener): the worker then makes the leases bucket take its LeaseTTL, since no worker runs with another.
	SoleWorker bool
	// Token is the installation's cluster token (required, see rpc.CheckToken): the REST API answers 401 to a
	// request without it, on every route but GET / and GET /healthz. Workers never call each other's REST API
	// (any worker answers any request from the shared KV state), so the token is only checked, never sent.
	Token string
	// MetricsAddr is host:port of a second listener that serves GET /metrics without the token (for Prometheus);
	// empty serves none, and the metrics are then read on the REST listener with the token.
	MetricsAddr string
	// TLS, when set, makes the REST listener serve HTTPS with it (the metrics listener stays plain HTTP).
	TLS *tls.Config
	// Limits are the timeouts, header limit and connection cap of the REST and metrics listeners; the zero value
	// means listener.Defaults.
	Limits listener.Limits
	// MasterKey is the installation's 32-byte master key, which every worker shares. The secret values of
	// connector configs are stored and returned only encrypted under it (enc:v2:..., sealed for the connector and key, see rpc.SealSecret) and
	// decrypted when a task starts. Without it, a config that holds a secret value is refused.
	MasterKey []byte
}

// workerIDRe: a worker id is a key of the members bucket.
var workerIDRe = regexp.MustCompile(`^[-_=a-zA-Z0-9]+(\.[-_=a-zA-Z0-9]+)*$`)

// CheckWorkerID reports an id that cannot name a worker: 1 to 128 letters, digits, '-', '_', '=' and inner dots.
func CheckWorkerID(id string) error {
	if len(id) > 128 || !workerIDRe.MatchString(id) {
		return fmt.Errorf("worker id %q must be 1 to 128 letters, digits, '-', '_', '=' and dots between them", id)
	}
	return nil
}

// Validate reports a config that cannot work.
func (c Config) Validate() error {
	if c.NATS == nil {
		return errors.New("worker: a NATS connection is required")
	}
	if c.Token == "" {
		return errors.New("worker: a cluster token is required (Config.Token): the REST API serves no one without it")
	}
	if err := rpc.CheckToken(c.Token); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if c.WorkerID != "" {
		if err := CheckWorkerID(c.WorkerID); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
	}
	if err := c.egress().Validate(); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if c.LeaseTTL != 0 && CheckLeaseTTL(c.LeaseTTL) != nil {
		return fmt.Errorf("worker: the lease TTL must be between %v and %v, not %v", MinLeaseTTL, MaxLeaseTTL, c.LeaseTTL)
	}
	if n := len(c.MasterKey); n != 0 && n != rpc.MasterKeySize {
		return fmt.Errorf("worker: the master key must be %d bytes, not %d", rpc.MasterKeySize, n)
	}
	return nil
}

// egress is the policy of the connections plugins open.
func (c Config) egress() egress.Config {
	return egress.Config{AllowPrivate: c.AllowPrivateTargets, Allow: c.EgressAllow}
}

func (c *Config) setDefaults() {
	if c.ClusterID == "" {
		c.ClusterID = DefaultClusterID
	}
	if c.WorkerID == "" {
		c.WorkerID, _ = os.Hostname()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Loggers == nil {
		c.Loggers = loggers.New(c.Logger.Handler(), loggers.LowestEnabled(c.Logger))
	}
	if c.Registry == nil {
		c.Registry = connector.Default()
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
}

// The default and bounds of Config.LeaseTTL: a renewal every 500 ms needs a local deadline well past it, and a
// lease of minutes already leaves a dead worker's tasks undelivered that long.
const (
	DefaultLeaseTTL = cluster.DefaultLeaseTTL
	MinLeaseTTL     = time.Second
	MaxLeaseTTL     = 5 * time.Minute
)

// CheckLeaseTTL reports a lease TTL out of its bounds, as "<ttl> must be between <min> and <max>", for the programs
// to prefix with their flag.
func CheckLeaseTTL(ttl time.Duration) error {
	if ttl < MinLeaseTTL || ttl > MaxLeaseTTL {
		return fmt.Errorf("%v must be between %v and %v", ttl, MinLeaseTTL, MaxLeaseTTL)
	}
	return nil
}

// LeaseTTLUsage is the help of the --lease-ttl flag of the programs that run a worker.
const LeaseTTLUsage = "how long after its last renewal a worker's lease expires, 1s to 5m: a killed or partitioned " +
	"worker's tasks move after it; longer keeps the leases of workers starved of CPU at thousands of tasks, at the " +
	"cost of a slower failover. Every worker of a cluster must use the same"

// LogNATSErrors is the option of the programs' NATS connections that logs on log what nats.go reports
// asynchronously (a slow consumer, a permissions violation), naming the connection and the subscription's subject;
// without a handler nats.go prints them on the standard error, past the log's format and levels. A parked task's
// wake dropped for want of room (delivery.WakeDropped) is logged at debug, since the worker then wakes every parked
// task and nothing is lost; any other at warning.
func LogNATSErrors(log *slog.Logger) nats.Option {
	return nats.ErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
		level, subject := slog.LevelWarn, ""
		if sub != nil {
			subject = sub.Subject
		}
		if delivery.WakeDropped(sub, err) {
			level = slog.LevelDebug
		}
		var name string
		if nc != nil {
			name = nc.Opts.Name // set before the connection and never changed
		}
		log.Log(context.Background(), level, "NATS asynchronous error", "connection", name, "subject", subject,
			"err", err)
	})
}

// leaseLocal is how long a lease stays valid on its worker after a renewal was sent, and how long a member is kept
// after its last heartbeat: four fifths of its TTL, the margin the defaults have (2s of 2.5s) for the server's
// expiry being late and the machines' clock rates.
func leaseLocal(ttl time.Duration) time.Duration { return ttl * 4 / 5 }

// Worker runs connectors and serves the REST API.
type Worker struct {
	cfg    Config
	js     jetstream.JetStream
	herder *herder.Herder
	api    *rest.Handler
	// metrics reads the herder at scrape time; handler serves it on /metrics and the API elsewhere.
	metrics *metrics.Metrics
	handler http.Handler

	// levels receives the log levels set with scope=cluster (nil before Start).
	levels *nats.Subscription

	mu    sync.Mutex
	srv   *http.Server
	addr  net.Addr
	serve chan error
	// metricsSrv serves the metrics without the token on MetricsAddr (nil without one).
	metricsSrv   *http.Server
	metricsAddr  net.Addr
	metricsServe chan error
}

// New returns a worker; Start runs it. Errors are config errors.
func New(cfg Config) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	js, err := jetstream.New(cfg.NATS)
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	leaseJS := js
	if cfg.LeaseNATS != nil {
		if leaseJS, err = jetstream.New(cfg.LeaseNATS); err != nil {
			return nil, fmt.Errorf("worker: %w", err)
		}
	}
	// The metrics read the herder, and the herder's tasks feed the metrics' latency histogram: m is set below,
	// before Start runs any task.
	var m *metrics.Metrics
	h, err := herder.New(herder.Config{
		ObserveDelivery: func(connector string, task int) func(time.Duration) {
			return m.Observer().Task(connector, task)
		},
		ForgetConnector: func(name string) {
			if m != nil { // set before Start, which reads the configs
				m.Observer().Forget(name)
			}
		},
		JetStream:      js,
		LeaseJetStream: leaseJS,
		Names:          stream.Names{Cluster: cfg.ClusterID},
		WorkerID:       cfg.WorkerID,
		Registry:       cfg.Registry,
		Logger:         cfg.Loggers.Logger("eventbridge.worker.herder"),
		PluginLogger: func(class string) *slog.Logger {
			return cfg.Loggers.Logger("eventbridge.plugin." + class)
		},
		Egress:      cfg.egress(),
		Replicas:    cfg.Replicas,
		StopTimeout: cfg.StopTimeout,
		LeaseTTL:    cfg.LeaseTTL,
		LeaseLocal:  leaseLocal(cfg.LeaseTTL),
		SoleWorker:  cfg.SoleWorker,
		// a member is kept as long after its last heartbeat as a lease stays valid after its last renewal
		MemberExpiry: leaseLocal(cfg.LeaseTTL),
		MasterKey:    cfg.MasterKey,
		Tracer:       cfg.Tracer,
	})
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	m = metrics.New(h.Local())
	w := &Worker{cfg: cfg, js: js, herder: h, metrics: m}
	names := stream.Names{Cluster: cfg.ClusterID}
	w.api = rest.NewHandler(h, rest.Config{Token: cfg.Token, Logger: cfg.Loggers.Logger("eventbridge.worker.rest"),
		Metrics: m.Handler(), WorkerID: cfg.WorkerID, Loggers: cfg.Loggers, SetClusterLevel: w.setClusterLevel,
		Audit: func(ctx context.Context, rec stream.AuditRecord) {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := names.PublishAudit(ctx, js, rec); err != nil {
				cfg.Logger.Warn("publishing an audit record of the REST API", "operation", rec.Operation, "err", err)
			}
		}})
	w.handler = w.api
	return w, nil
}

// MetricsPath is where the REST listener (with the token) and the metrics listener (without) serve the metrics.
const MetricsPath = rest.MetricsPath

// metricsOnly serves m on GET and HEAD MetricsPath and 404 elsewhere.
func metricsOnly(m http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == MetricsPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			m.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	})
}

// Start ensures the worker's KV buckets and streams (audit, event types), starts the persisted connectors and then
// serves REST on RESTAddr (and the metrics on MetricsAddr). It returns once the API answers; errors are JetStream
// errors and listen errors.
func (w *Worker) Start(ctx context.Context) error {
	var ln, mln net.Listener
	closeAll := func() {
		for _, l := range []net.Listener{ln, mln} {
			if l != nil {
				_ = l.Close()
			}
		}
	}
	if w.cfg.RESTAddr != "" {
		var err error
		if ln, err = net.Listen("tcp", w.cfg.RESTAddr); err != nil {
			return fmt.Errorf("worker: REST listener: %w", err)
		}
		w.herder.SetURL(w.scheme() + "://" + ln.Addr().String())
	}
	if w.cfg.MetricsAddr != "" {
		var err error
		if mln, err = net.Listen("tcp", w.cfg.MetricsAddr); err != nil {
			closeAll()
			return fmt.Errorf("worker: metrics listener: %w", err)
		}
	}
	if err := (stream.Names{Cluster: w.cfg.ClusterID}).EnsureAuditStream(ctx, w.js, w.cfg.Replicas); err != nil {
		closeAll()
		return fmt.Errorf("worker: %w", err)
	}
	// The routers publish the event types they see to this stream; the control plane ensures it too, but a router
	// may report before a control plane ever started.
	if err := (stream.Names{Cluster: w.cfg.ClusterID}).EnsureEventTypesStream(ctx, w.js, w.cfg.Replicas); err != nil {
		closeAll()
		return fmt.Errorf("worker: %w", err)
	}
	sub, err := w.cfg.NATS.Subscribe(stream.Names{Cluster: w.cfg.ClusterID}.LoggersSubject(), w.applyClusterLevel)
	if err != nil {
		closeAll()
		return fmt.Errorf("worker: subscribing to log levels: %w", err)
	}
	w.levels = sub
	if err := w.herder.Start(ctx); err != nil {
		_ = sub.Unsubscribe()
		closeAll()
		return fmt.Errorf("worker: %w", err)
	}
	errLog := slog.NewLogLogger(w.cfg.Logger.Handler(), slog.LevelWarn)
	limits := w.cfg.Limits
	if limits == (listener.Limits{}) {
		limits = listener.Defaults
	}
	if mln != nil {
		mln = limits.Listen(mln)
		srv := limits.Server(metricsOnly(w.metrics.Handler()), errLog)
		w.mu.Lock()
		w.metricsSrv, w.metricsAddr, w.metricsServe = srv, mln.Addr(), make(chan error, 1)
		w.mu.Unlock()
		go func() { w.metricsServe <- srv.Serve(mln) }()
	}
	if ln == nil {
		return nil
	}
	ln = limits.Listen(ln)
	if w.cfg.TLS != nil {
		ln = tls.NewListener(ln, w.cfg.TLS)
	}
	srv := limits.Server(w.handler, errLog)
	w.mu.Lock()
	w.srv, w.addr, w.serve = srv, ln.Addr(), make(chan error, 1)
	w.mu.Unlock()
	go func() { w.serve <- srv.Serve(ln) }()
	w.cfg.Logger.Info("worker started", "worker_id", w.cfg.WorkerID, "cluster_id", w.cfg.ClusterID, "rest", w.URL(),
		"metrics", w.MetricsAddr())
	return nil
}

func (w *Worker) scheme() string {
	if w.cfg.TLS != nil {
		return "https"
	}
	return "http"
}

// Addr is the bound address of the REST listener (host:port), or "" before Start or without a listener.
func (w *Worker) Addr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.addr == nil {
		return ""
	}
	return w.addr.String()
}

// URL is the base URL of the REST API (https:// with Config.TLS), or "" without a listener.
func (w *Worker) URL() string {
	if a := w.Addr(); a != "" {
		return w.scheme() + "://" + a
	}
	return ""
}

// MetricsAddr is the bound address of the metrics listener (host:port), or "" without one.
func (w *Worker) MetricsAddr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.metricsAddr == nil {
		return ""
	}
	return w.metricsAddr.String()
}

// Handler serves the REST API in process, and the metrics on MetricsPath, both behind the cluster token.
func (w *Worker) Handler() http.Handler { return w.handler }

// Routes are the routes of the REST API, from its table (see rest.Route).
func (w *Worker) Routes() []rest.Route { return w.api.Routes() }

// Metrics is the worker's metrics registry; its Observer records delivery latencies.
func (w *Worker) Metrics() *metrics.Metrics { return w.metrics }

// Herder is the worker's connector manager.
func (w *Worker) Herder() *herder.Herder { return w.herder }

// ID is the worker's id.
func (w *Worker) ID() string { return w.cfg.WorkerID }

// Close stops the REST server, then stops every task cleanly: the records being written finish (or, when ctx
// ends first, are cancelled and nak'ed) and nothing is acked that a sink did not accept. The NATS connection
// stays open.
// clusterLevel is a log level set with scope=cluster, as it travels to every worker.
type clusterLevel struct {
	Logger string `json:"logger"`
	Level  string `json:"level"`
}

// setClusterLevel sends a level to every worker of the cluster, this one included, and waits until the server has
// it; the workers running now apply it (a worker that starts later keeps its own levels).
func (w *Worker) setClusterLevel(ctx context.Context, logger, level string) error {
	b, err := json.Marshal(clusterLevel{Logger: logger, Level: level})
	if err != nil {
		return err
	}
	if err := w.cfg.NATS.Publish(stream.Names{Cluster: w.cfg.ClusterID}.LoggersSubject(), b); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return w.cfg.NATS.FlushWithContext(ctx)
}

// applyClusterLevel applies a level another worker (or this one) sent to the cluster.
func (w *Worker) applyClusterLevel(m *nats.Msg) {
	var cl clusterLevel
	var level slog.Level
	ok := false
	if err := json.Unmarshal(m.Data, &cl); err == nil && cl.Logger != "" {
		level, ok = loggers.ParseLevel(cl.Level)
	}
	if !ok {
		w.cfg.Logger.Warn("ignoring a malformed log level sent to the cluster", "message", string(m.Data))
		return
	}
	w.cfg.Loggers.Set(cl.Logger, level)
	w.cfg.Logger.Info("log level set for the cluster", "logger", cl.Logger, "level", cl.Level)
}

func (w *Worker) Close(ctx context.Context) error {
	if w.levels != nil {
		_ = w.levels.Unsubscribe()
	}
	w.mu.Lock()
	srv, serve := w.srv, w.serve
	msrv, mserve := w.metricsSrv, w.metricsServe
	w.srv, w.metricsSrv = nil, nil
	w.mu.Unlock()
	var errs []error
	for _, s := range []struct {
		what  string
		srv   *http.Server
		serve chan error
	}{{"REST", srv, serve}, {"metrics", msrv, mserve}} {
		if s.srv == nil {
			continue
		}
		if err := s.srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("worker: stopping %s: %w", s.what, err))
			_ = s.srv.Close()
		}
		if err := <-s.serve; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("worker: %s: %w", s.what, err))
		}
	}
	if err := w.herder.Close(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
