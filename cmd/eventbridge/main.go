// Command eventbridge is the control plane. By default it also starts the embedded NATS server and an embedded
// worker, so one process runs everything: `eventbridge` with no flags serves on 127.0.0.1:8080 with its state in
// ./data.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/adapter/connect"
	"github.com/eventbridge-go/eventbridge/adapter/eventstore"
	"github.com/eventbridge-go/eventbridge/adapter/password"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/domain/apikey"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/domain/deadletter"
	"github.com/eventbridge-go/eventbridge/domain/eventtype"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/runtime"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/domain/user"
	"github.com/eventbridge-go/eventbridge/frontend"
	"github.com/eventbridge-go/eventbridge/migrations"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/web/rest"
	"github.com/eventbridge-go/eventbridge/web/rocketmq"
	"github.com/eventbridge-go/eventbridge/worker"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"

	_ "github.com/eventbridge-go/eventbridge/worker/plugins/attribute"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/eventbus"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/http"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/inputtransformer"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/log"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/mqtt"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/router"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/schedule"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/webhook"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain()
	if err := m.ParseFlags(os.Args[1:], os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "eventbridge:", err)
		os.Exit(2)
	}
	if err := m.Run(ctx); err != nil {
		m.Logger.Error("starting", "err", err)
		_ = m.Close()
		os.Exit(1)
	}
	<-ctx.Done()
	m.Logger.Info("shutting down")
	if err := m.Close(); err != nil {
		m.Logger.Error("shutting down", "err", err)
		os.Exit(1)
	}
}

// Main is the control-plane program: ParseFlags, Run, then Close. End-to-end tests drive it in process.
type Main struct {
	Config Config
	Logger *slog.Logger

	masterKey  []byte
	natsServer *ebjs.Server
	nc         *nats.Conn
	db         *persistence.DB
	worker     *worker.Worker
	adapter    *connect.Adapter
	lease      *persistence.Lease
	httpServer *http.Server
	listener   net.Listener
	identity   identity
	cancel     context.CancelFunc
	done       chan struct{}
	// stopRecorder ends the event types recorder, which writes what it holds before recorderDone closes.
	stopRecorder context.CancelFunc
	recorderDone chan struct{}
}

// NewMain returns a Main with a logger on stderr.
func NewMain() *Main {
	return &Main{Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}
}

// ParseFlags reads the configuration from args and getenv (EB_* variables).
func (m *Main) ParseFlags(args []string, getenv func(string) string) error {
	c, err := ParseConfig(args, getenv)
	if err != nil {
		return err
	}
	m.Config = c
	m.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: c.SlogLevel()}))
	return nil
}

// HTTPAddr is the address the API listens on (useful with port 0).
func (m *Main) HTTPAddr() string { return m.listener.Addr().String() }

// WorkerAddr is the address of the embedded worker's REST API ("" with a remote runtime).
func (m *Main) WorkerAddr() string {
	if m.worker == nil {
		return ""
	}
	return m.worker.Addr()
}

// Run starts everything and returns once the API serves: the database (migrated), NATS (embedded unless
// --nats), the embedded worker (unless --runtime), the runtime adapter (reconciled once) and the HTTP API.
func (m *Main) Run(ctx context.Context) error {
	c := m.Config
	log := m.Logger
	// The data directory holds the master key and the administrator's credentials: its owner's only (one made by
	// an earlier version with 0755 is narrowed).
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if err := os.Chmod(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	keyPath := c.MasterKey
	if keyPath == "" {
		keyPath = filepath.Join(c.DataDir, "master.key")
	}
	key, err := readOrCreateKey(keyPath, func(b []byte) error { _, err := rand.Read(b); return err })
	if err != nil {
		return err
	}
	m.masterKey = key

	db, err := persistence.Open(ctx, c.DSN(), log)
	if err != nil {
		return err
	}
	m.db = db
	accounts := persistence.NewAccountRepository(db)
	id := identity{
		accounts: &account.Service{Accounts: accounts},
		users:    &user.Service{Users: persistence.NewUserRepository(db), Accounts: accounts, Hasher: password.Hasher{}},
		keys: &apikey.Service{Keys: persistence.NewAPIKeyRepository(db), Accounts: accounts,
			Logger: log.With("component", "api-keys")},
	}
	m.identity = id
	if err := migrations.UpThen(ctx, db.SQL(), db.Dialect(), func(ctx context.Context) error {
		return bootstrap(ctx, c, id, log)
	}); err != nil {
		return fmt.Errorf("migrating the database: %w", err)
	}

	natsOpts := []nats.Option{
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("NATS disconnected", "err", err) }),
		nats.ReconnectHandler(func(*nats.Conn) { log.Info("NATS reconnected") }),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			log.Warn("NATS asynchronous error", "subject", subject, "err", err)
		}),
	}
	if c.NATS == "" {
		srv, err := ebjs.StartServer(ebjs.ServerConfig{
			StoreDir:     filepath.Join(c.DataDir, "nats"),
			Listen:       c.NATSListen,
			SyncAlways:   c.FsyncAlways(),
			SyncInterval: c.FsyncInterval(),
		})
		if err != nil {
			return err
		}
		m.natsServer = srv
		m.nc, err = srv.Connect("eventbridge", natsOpts...)
	} else {
		m.nc, err = nats.Connect(c.NATS, append(natsOpts, nats.Name("eventbridge"), nats.MaxReconnects(-1))...)
	}
	if err != nil {
		return fmt.Errorf("connecting to NATS: %w", err)
	}
	js, err := jetstream.New(m.nc)
	if err != nil {
		return err
	}
	names := stream.Names{Cluster: c.ClusterID}
	store := eventstore.New(js, c.ClusterID, c.Replicas)

	runtimeURL := ""
	runtimeURLs := c.RuntimeURLs()
	if len(runtimeURLs) > 0 {
		runtimeURL = runtimeURLs[0]
	} else {
		w, err := worker.New(worker.Config{
			NATS:                m.nc,
			ClusterID:           c.ClusterID,
			WorkerID:            c.WorkerID,
			RESTAddr:            c.WorkerAddr,
			Replicas:            c.Replicas,
			AllowPrivateTargets: c.AllowPrivateTargets,
			MasterKey:           m.masterKey,
			Logger:              log.With("component", "worker"),
		})
		if err != nil {
			return err
		}
		if err := w.Start(ctx); err != nil {
			return fmt.Errorf("starting the embedded worker: %w", err)
		}
		m.worker = w
		runtimeURL = "http://" + w.Addr()
	}

	buses := persistence.NewBusRepository(db)
	rules := persistence.NewRuleRepository(db)
	targets := persistence.NewTargetRepository(db)
	connections, destinations := persistence.NewConnectionRepository(db), persistence.NewAPIDestinationRepository(db)
	sourceRepo := persistence.NewSourceRepository(db)
	sealer, err := connect.NewSealer(m.masterKey)
	if err != nil {
		return err
	}
	connectorStates := persistence.NewConnectorStateRepository(db)
	m.lease = persistence.NewLease(db, "reconciler", replicaID(c.HTTPAddr), connect.LeaseTTL(c.ReconcileInterval))
	m.adapter = connect.New(connect.Config{
		Runtime: runtimeClient(runtimeURL, runtimeURLs), Buses: buses, Rules: rules, Targets: targets,
		APIDestinations: destinations, Connections: connections, Secrets: sealer,
		Streams: store, Physical: names, Logger: log.With("component", "adapter"),
		Sources:  sourceRepo,
		Interval: c.ReconcileInterval, States: connectorStates, Lease: m.lease,
	})
	ensureDLQStreams(ctx, buses, store, log)
	ensureConnectorAccounts(ctx, m.adapter, accounts, log)
	if held, err := m.adapter.Reconcile(ctx); err != nil {
		log.Warn("first reconciliation incomplete; retrying in the background", "err", err)
	} else if !held {
		log.Info("another control-plane replica holds the reconciler lease; this one serves the API")
	}
	runCtx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.done = make(chan struct{})
	go func() {
		defer close(m.done)
		m.adapter.Run(runCtx)
	}()

	services := web.Services{
		Buses: &bus.Service{Buses: buses, Rules: rules, Store: store, Runtime: m.adapter, Logger: log,
			MaxPerAccount: c.QuotaBuses},
		Rules:   &rule.Service{Rules: rules, Buses: buses, Runtime: m.adapter, Logger: log, MaxPerBus: c.QuotaRulesPerBus},
		Targets: &target.Service{Targets: targets, Rules: rules, Buses: buses, Runtime: m.adapter, Statuses: m.adapter, Logger: log},
	}
	services.Targets.APIDestinations = destinations
	services.Targets.Plugins, services.Targets.Sealer = m.adapter, sealer
	services.Connections = &connection.Service{Connections: connections, Users: destinations, Sealer: sealer,
		MaxPerAccount: c.QuotaConnections}
	services.APIDestinations = &apidestination.Service{Destinations: destinations, Connections: connections,
		Targets: destinations, MaxPerAccount: c.QuotaAPIDestinations}
	eventTypes := persistence.NewEventTypeRepository(db)
	recorder := &eventtype.Recorder{Repo: eventTypes, Logger: log.With("component", "event-types")}
	services.Buses.Observer = recorder
	services.EventTypes = &eventtype.Service{Repo: eventTypes, Buses: buses}
	services.Runtime = &runtime.Service{Runtime: m.adapter, States: connectorStates}
	services.DeadLetters = &deadletter.Service{Store: eventstore.NewDeadLetters(js, c.ClusterID), Buses: buses, Rules: rules,
		Targets: targets, Logger: log.With("component", "dead-letters")}
	services.Sources = &source.Service{Sources: sourceRepo, Buses: buses, Runtime: m.adapter, Statuses: m.adapter, Intake: store,
		Sealer: sealer, Opener: sealer, Logger: log}
	services.Buses.Sources = sourceRepo
	services.Accounts, services.Users, services.APIKeys, services.Auth = id.accounts, id.users, id.keys, id.keys
	// Deleting an account deletes what it owns, the dependent first: sources and rules (with their targets and
	// connectors) before their buses, API destinations before their connections, then dead letters, runtime
	// states, members and keys.
	id.accounts.Purgers = []account.Purger{services.Sources, services.Rules, services.Buses, services.APIDestinations,
		services.Connections, store, connectorStates, id.users, id.keys}
	recCtx, stopRecorder := context.WithCancel(context.Background())
	m.stopRecorder, m.recorderDone = stopRecorder, make(chan struct{})
	go func() {
		defer close(m.recorderDone)
		recorder.Run(recCtx)
	}()
	handler := web.NewRouter(web.Config{Logger: log, Ready: m.ready, TrustedProxies: c.TrustedProxyPrefixes(),
		Console: frontend.Dist(), CORSOrigins: c.CORSOriginList()}, services, rest.New, rocketmq.New)
	ln, err := net.Listen("tcp", c.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", c.HTTPAddr, err)
	}
	m.listener = ln
	m.httpServer = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := m.httpServer.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("HTTP server stopped", "err", err)
		}
	}()
	log.Info("eventbridge serving", "http", ln.Addr().String(), "db", db.Dialect(), "worker", runtimeURL,
		"console", frontend.Built())
	return nil
}

// runtimeClient is the client of the embedded worker (url), or of the workers of --runtime, failing over from
// one to the next when one cannot be reached.
func runtimeClient(url string, urls []string) *rpc.Client {
	if len(urls) > 1 {
		return rpc.NewClusterClient(urls)
	}
	return rpc.NewClient(url)
}

// ensureDLQStreams ensures the dead-letter stream of every account that has a bus (buses created before dead
// letters existed have none; new buses get it when created). A failure is logged: the records given up meanwhile
// are retried, not lost, until the stream exists.
func ensureDLQStreams(ctx context.Context, buses bus.Repository, store *eventstore.Store, log *slog.Logger) {
	all, err := buses.ListAll(ctx)
	if err != nil {
		log.Warn("listing buses to ensure dead-letter streams", "err", err)
		return
	}
	seen := map[string]bool{}
	for _, b := range all {
		if seen[b.AccountID()] {
			continue
		}
		seen[b.AccountID()] = true
		if err := store.EnsureDLQStream(ctx, b.AccountID()); err != nil {
			log.Warn("ensuring a dead-letter stream", "account", b.AccountID(), "err", err)
		}
	}
}

// ensureConnectorAccounts makes real accounts of the accounts that the runtime's "eb.<account>." connectors name
// (an installation made before accounts were created explicitly). A runtime that cannot be reached is logged and
// skipped: the accounts of rows were made by the database's migration.
func ensureConnectorAccounts(ctx context.Context, a *connect.Adapter, accounts *persistence.AccountRepository, log *slog.Logger) {
	ids, err := a.ConnectorAccounts(ctx)
	if err != nil {
		log.Warn("listing the runtime's connectors to find their accounts", "err", err)
		return
	}
	for _, id := range ids {
		acc, err := account.New(id, time.Now())
		if err != nil {
			continue // not one of ours
		}
		if err := accounts.Ensure(ctx, acc); err != nil {
			log.Warn("ensuring the account of a connector", "account", id, "err", err)
		}
	}
}

// AdminAPIKey returns the instance administrator's API key that the control plane wrote into its data directory
// when it created the first administrator ("" when it wrote none).
func (m *Main) AdminAPIKey() string {
	b, err := os.ReadFile(filepath.Join(m.Config.DataDir, AdminAPIKeyFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ready answers /readyz: the database and NATS are reachable.
func (m *Main) ready(ctx context.Context) error {
	if err := m.db.Ping(ctx); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	if !m.nc.IsConnected() {
		return errors.New("NATS is not connected")
	}
	return nil
}

// Close shuts down in order: the API finishes in-flight requests, the reconciler stops, the worker stops its
// tasks cleanly, NATS flushes, the embedded server flushes JetStream to disk, the database closes.
func (m *Main) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	if m.httpServer != nil {
		if err := m.httpServer.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("HTTP server: %w", err))
		}
	}
	if m.cancel != nil {
		m.cancel()
		<-m.done
	}
	if m.lease != nil {
		// Another replica takes over reconciling at once rather than after the lease's time to live.
		if err := m.lease.Release(ctx); err != nil {
			errs = append(errs, fmt.Errorf("reconciler lease: %w", err))
		}
	}
	if m.stopRecorder != nil {
		m.stopRecorder()
		<-m.recorderDone
	}
	if m.worker != nil {
		if err := m.worker.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("worker: %w", err))
		}
	}
	if m.nc != nil {
		if err := m.nc.FlushTimeout(5 * time.Second); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			errs = append(errs, fmt.Errorf("NATS flush: %w", err))
		}
		m.nc.Close()
	}
	if m.natsServer != nil {
		m.natsServer.Shutdown()
	}
	if m.db != nil {
		if err := m.db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("database: %w", err))
		}
	}
	return errors.Join(errs...)
}

// replicaID names this control-plane replica in the reconciler lease: host, listen address and process id, unique
// among replicas sharing a database.
func replicaID(httpAddr string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%s/%d", host, httpAddr, os.Getpid())
}
