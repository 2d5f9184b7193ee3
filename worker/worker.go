// Package worker is the connector runtime of one worker process: it wires a NATS connection, the plugin
// registry, the herder (connector lifecycle, persisted in JetStream KV) and the REST API. The control plane embeds
// it, and cmd/worker runs it as its own binary. The REST listener also serves the worker's Prometheus metrics on
// GET /metrics (see worker/metrics).
package worker

import (
	"context"
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

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/herder"
	"github.com/eventbridge-go/eventbridge/worker/metrics"
	"github.com/eventbridge-go/eventbridge/worker/rest"
)

// DefaultClusterID prefixes the streams, buckets and consumers of an installation that does not name itself.
const DefaultClusterID = "eb"

// Config configures a Worker.
type Config struct {
	// NATS is the connection to the installation's NATS (required). The worker does not close it.
	NATS *nats.Conn
	// ClusterID prefixes every stream, KV bucket and consumer of the installation (default "eb").
	ClusterID string
	// WorkerID identifies the worker in statuses (default: the host name).
	WorkerID string
	// RESTAddr is host:port of the REST listener; port 0 picks a free port (see Addr). Empty serves no listener
	// (Handler still serves the API in process).
	RESTAddr string
	// AllowPrivateTargets lets sinks reach loopback, private and link-local addresses.
	AllowPrivateTargets bool
	Logger              *slog.Logger
	// Registry holds the plugins (default connector.Default(): every linked worker/plugins package).
	Registry *connector.Registry
	// Replicas of the KV buckets (default 1).
	Replicas int
	// StopTimeout bounds how long stopping a task waits for the records being written (default 30s).
	StopTimeout time.Duration
	// MasterKey is the installation's 32-byte master key, which every worker shares. The secret values of
	// connector configs are stored and returned only encrypted under it (enc:v1:..., see rpc.EncryptSecret) and
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
	if c.WorkerID != "" {
		if err := CheckWorkerID(c.WorkerID); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
	}
	if n := len(c.MasterKey); n != 0 && n != rpc.MasterKeySize {
		return fmt.Errorf("worker: the master key must be %d bytes, not %d", rpc.MasterKeySize, n)
	}
	return nil
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
	if c.Registry == nil {
		c.Registry = connector.Default()
	}
}

// Worker runs connectors and serves the REST API.
type Worker struct {
	cfg    Config
	js     jetstream.JetStream
	herder *herder.Herder
	api    *rest.Handler
	// metrics reads the herder at scrape time; handler serves it on /metrics and the API elsewhere.
	metrics *metrics.Metrics
	handler http.Handler

	mu    sync.Mutex
	srv   *http.Server
	addr  net.Addr
	serve chan error
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
	// The metrics read the herder, and the herder's tasks feed the metrics' latency histogram: m is set below,
	// before Start runs any task.
	var m *metrics.Metrics
	h, err := herder.New(herder.Config{
		ObserveDelivery: func(connector string, task int, d time.Duration) {
			m.Observer().ObserveDelivery(connector, task, d)
		},
		JetStream:           js,
		Names:               stream.Names{Cluster: cfg.ClusterID},
		WorkerID:            cfg.WorkerID,
		Registry:            cfg.Registry,
		Logger:              cfg.Logger,
		AllowPrivateTargets: cfg.AllowPrivateTargets,
		Replicas:            cfg.Replicas,
		StopTimeout:         cfg.StopTimeout,
		MasterKey:           cfg.MasterKey,
	})
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	m = metrics.New(h.Local())
	w := &Worker{cfg: cfg, js: js, herder: h, api: rest.NewHandler(h, cfg.Logger), metrics: m}
	w.handler = withMetrics(w.metrics.Handler(), w.api)
	return w, nil
}

// MetricsPath is where the REST listener serves the worker's metrics.
const MetricsPath = "/metrics"

// withMetrics serves m on GET and HEAD MetricsPath and everything else with api, untouched (no path cleaning or
// redirects of a mux in front of it).
func withMetrics(m, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == MetricsPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			m.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// Start ensures the worker's KV buckets, starts the persisted connectors and then serves REST on RESTAddr. It
// returns once the API answers; errors are JetStream errors and listen errors.
func (w *Worker) Start(ctx context.Context) error {
	var ln net.Listener
	if w.cfg.RESTAddr != "" {
		var err error
		if ln, err = net.Listen("tcp", w.cfg.RESTAddr); err != nil {
			return fmt.Errorf("worker: REST listener: %w", err)
		}
		w.herder.SetURL("http://" + ln.Addr().String())
	}
	if err := w.herder.Start(ctx); err != nil {
		if ln != nil {
			_ = ln.Close()
		}
		return fmt.Errorf("worker: %w", err)
	}
	if ln == nil {
		return nil
	}
	srv := &http.Server{
		Handler:           w.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(w.cfg.Logger.Handler(), slog.LevelWarn),
	}
	w.mu.Lock()
	w.srv, w.addr, w.serve = srv, ln.Addr(), make(chan error, 1)
	w.mu.Unlock()
	go func() { w.serve <- srv.Serve(ln) }()
	w.cfg.Logger.Info("worker started", "worker_id", w.cfg.WorkerID, "cluster_id", w.cfg.ClusterID, "rest", ln.Addr().String())
	return nil
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

// URL is the base URL of the REST API, or "" without a listener.
func (w *Worker) URL() string {
	if a := w.Addr(); a != "" {
		return "http://" + a
	}
	return ""
}

// Handler serves the REST API in process, and the metrics on MetricsPath.
func (w *Worker) Handler() http.Handler { return w.handler }

// Metrics is the worker's metrics registry; its Observer records delivery latencies.
func (w *Worker) Metrics() *metrics.Metrics { return w.metrics }

// Herder is the worker's connector manager.
func (w *Worker) Herder() *herder.Herder { return w.herder }

// ID is the worker's id.
func (w *Worker) ID() string { return w.cfg.WorkerID }

// Close stops the REST server, then stops every task cleanly: the records being written finish (or, when ctx
// ends first, are cancelled and nak'ed) and nothing is acked that a sink did not accept. The NATS connection
// stays open.
func (w *Worker) Close(ctx context.Context) error {
	w.mu.Lock()
	srv, serve := w.srv, w.serve
	w.srv = nil
	w.mu.Unlock()
	var errs []error
	if srv != nil {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("worker: stopping REST: %w", err))
			_ = srv.Close()
		}
		if err := <-serve; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("worker: REST: %w", err))
		}
	}
	if err := w.herder.Close(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
