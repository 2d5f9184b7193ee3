// Command eventbridge is the control plane. By default it also starts the embedded NATS server and an embedded
// worker, so one process runs everything: `eventbridge` with no flags serves on 127.0.0.1:8080 with its state in
// ./data. The data directory (mode 0700) also holds the secrets generated on first start: master.key,
// cluster-token (the worker REST API's token) and nats-credentials (the embedded NATS server's user:password).
// `eventbridge --help` lists every flag with its environment variable; `eventbridge --version` prints the version.
package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/eventbridge-go/eventbridge/adapter/auditlog"
	"github.com/eventbridge-go/eventbridge/adapter/connect"
	"github.com/eventbridge-go/eventbridge/adapter/eventstore"
	"github.com/eventbridge-go/eventbridge/adapter/eventtypes"
	"github.com/eventbridge-go/eventbridge/adapter/metrics"
	"github.com/eventbridge-go/eventbridge/adapter/password"
	"github.com/eventbridge-go/eventbridge/adapter/storagequota"
	"github.com/eventbridge-go/eventbridge/adapter/throttle"
	"github.com/eventbridge-go/eventbridge/domain/accesskey"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/domain/apikey"
	"github.com/eventbridge-go/eventbridge/domain/archive"
	"github.com/eventbridge-go/eventbridge/domain/audit"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/channel"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/domain/deadletter"
	"github.com/eventbridge-go/eventbridge/domain/eventtype"
	"github.com/eventbridge-go/eventbridge/domain/health"
	"github.com/eventbridge-go/eventbridge/domain/history"
	"github.com/eventbridge-go/eventbridge/domain/inspect"
	"github.com/eventbridge-go/eventbridge/domain/replay"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/runtime"
	"github.com/eventbridge-go/eventbridge/domain/session"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/tag"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/domain/user"
	"github.com/eventbridge-go/eventbridge/frontend"
	"github.com/eventbridge-go/eventbridge/gcpace"
	"github.com/eventbridge-go/eventbridge/migrations"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/tracing"
	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/web/aws"
	"github.com/eventbridge-go/eventbridge/web/rest"
	"github.com/eventbridge-go/eventbridge/web/rocketmq"
	"github.com/eventbridge-go/eventbridge/worker"
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
	// Files and directories the process makes are its owner's only (0600, 0700): the data directory holds keys,
	// credentials, the database and the events.
	syscall.Umask(0o077)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain()
	if code, run := m.cli(os.Args[1:], os.Getenv, os.Stdout, os.Stderr); !run {
		stop()
		os.Exit(code)
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

// cli reads args and getenv with ParseConfig. It returns run true when the control plane should start; otherwise
// the exit status: 0 after --help (usage on stderr) or --version (printed on stdout), 2 after an error (on stderr).
func (m *Main) cli(args []string, getenv func(string) string, stdout, stderr io.Writer) (code int, run bool) {
	c, err := parseConfig(args, getenv, stderr)
	switch {
	case err == nil:
		m.setConfig(c)
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		return 0, false
	case errors.Is(err, ErrVersion):
		fmt.Fprintln(stdout, "eventbridge", Version())
		return 0, false
	default:
		fmt.Fprintln(stderr, "eventbridge:", err)
		return 2, false
	}
}

// version is the release, set at build time with -ldflags "-X main.version=1.2.3"; empty takes the module version
// Go recorded in the binary.
var version string

// Version is the binary's version (worker.BuildVersion of version).
func Version() string { return worker.BuildVersion(version) }

// Main is the control-plane program: ParseFlags, Run, then Close. End-to-end tests drive it in process.
type Main struct {
	Config Config
	Logger *slog.Logger
	// TracerProvider, when set before Run, traces the API, the event store and the embedded worker with it
	// instead of what Config.Tracing says (tests set an in-memory one).
	TracerProvider trace.TracerProvider
	// tracing is the provider Run started from Config.Tracing (nil when off), shut down by Close.
	tracing *tracing.Provider
	// levels are the named loggers of the process (nil until ParseFlags).
	levels *loggers.Levels

	masterKey    []byte
	clusterToken string
	natsCreds    *ebjs.Credentials
	natsServer   *ebjs.Server
	nc           *nats.Conn
	// putNC is PutEvents' connection: the event store publishes events on it (eventstore.Store.Publisher).
	putNC *nats.Conn
	// workerNC is the embedded worker's connection and workerLeaseNC that of its lease and membership heartbeat (nil
	// with --runtime-url).
	workerNC, workerLeaseNC *nats.Conn
	// readyProbe stores a message on the readiness stream; readiness remembers its last outcome for a second.
	readyProbe func(context.Context) error
	readyMu    sync.Mutex
	readyAt    time.Time
	readyErr   error
	db         *persistence.DB
	worker     *worker.Worker
	adapter    *connect.Adapter
	lease      *persistence.Lease
	httpServer *http.Server
	listener   net.Listener
	identity   identity
	cancel     context.CancelFunc
	done       chan struct{}
	// background are the loops on the run context besides the adapter's (housekeeping).
	background sync.WaitGroup
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
	m.setConfig(c)
	return nil
}

func (m *Main) setConfig(c Config) {
	m.Config = c
	// Every logger writes through m.levels, which the embedded worker's /admin/loggers changes at run time;
	// --log-level is root's.
	m.levels = loggers.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: loggers.LevelTrace}), c.SlogLevel())
	m.Logger = m.levels.Logger(loggers.Root)
}

// HTTPAddr is the address the API listens on (useful with port 0).
func (m *Main) HTTPAddr() string { return m.listener.Addr().String() }

// HTTPURL is the base URL of the API: http://, or https:// with --tls-cert.
func (m *Main) HTTPURL() string { return m.Config.HTTPScheme() + "://" + m.HTTPAddr() }

// WorkerAddr is the address of the embedded worker's REST API ("" with a remote runtime).
func (m *Main) WorkerAddr() string {
	if m.worker == nil {
		return ""
	}
	return m.worker.Addr()
}

// WorkerMetricsAddr is the address of the embedded worker's --metrics-addr listener ("" without one).
func (m *Main) WorkerMetricsAddr() string {
	if m.worker == nil {
		return ""
	}
	return m.worker.MetricsAddr()
}

// ClusterToken is the cluster token the control plane sends to the workers and the embedded worker requires
// ("" before Run).
func (m *Main) ClusterToken() string { return m.clusterToken }

// NATSCredentials are the credentials of the NATS connection: the embedded server's, or those of
// --nats-credentials-file (nil before Run, or with --nats and no file).
func (m *Main) NATSCredentials() *ebjs.Credentials { return m.natsCreds }

// Run starts everything and returns once the API serves: the database (migrated), NATS (embedded unless
// --nats), the embedded worker (unless --runtime), the runtime adapter (reconciled once) and the HTTP API.
func (m *Main) Run(ctx context.Context) error {
	c := m.Config
	log := m.Logger
	gcpace.Start(int64(c.GCHeadroomMiB)<<20, log) // for the process's life
	if err := privateDir(c.DataDir, log); err != nil {
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
	if err := m.readSecrets(); err != nil {
		return err
	}
	if m.TracerProvider == nil {
		if m.tracing, err = tracing.Start(ctx, c.Tracing, log); err != nil {
			return fmt.Errorf("tracing: %w", err)
		}
		m.TracerProvider = m.tracing.TracerProvider()
	}
	tracer := tracing.Tracer(m.TracerProvider)
	var serverTLS *tls.Config
	if c.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		serverTLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	clientOpts := []rpc.Option{rpc.WithToken(m.clusterToken)}
	if c.RuntimeCAFile != "" {
		pool, err := rpc.ReadCAFile(c.RuntimeCAFile)
		if err != nil {
			return fmt.Errorf("--runtime-ca-file: %w", err)
		}
		clientOpts = append(clientOpts, rpc.WithRootCAs(pool))
	}

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
	sessionRepo := persistence.NewSessionRepository(db)
	sessions := &session.Service{Sessions: sessionRepo, Failures: sessionRepo, Users: id.users,
		Config: session.Config{IdleTimeout: c.SessionIdleTimeout, MaxAge: c.SessionMaxAge}, Logger: log.With("component", "sessions")}
	id.users.Sessions = sessions
	m.identity = id
	sealer, err := connect.NewSealer(m.masterKey)
	if err != nil {
		return err
	}
	if err := migrations.UpThen(ctx, db.SQL(), db.Dialect(), func(ctx context.Context) error {
		if err := bootstrap(ctx, c, id, log); err != nil {
			return err
		}
		return resealDatabase(ctx, db, sealer, log)
	}); err != nil {
		return fmt.Errorf("migrating the database: %w", err)
	}

	natsOpts := []nats.Option{
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("NATS disconnected", "err", err) }),
		nats.ReconnectHandler(func(*nats.Conn) { log.Info("NATS reconnected") }),
		worker.LogNATSErrors(log),
	}
	if c.NATS == "" {
		srv, err := ebjs.StartServer(ebjs.ServerConfig{
			StoreDir:     filepath.Join(c.DataDir, "nats"),
			Listen:       c.NATSListen,
			SyncAlways:   c.FsyncAlways(),
			SyncInterval: c.FsyncInterval(),
			FlushFailed: func(err error) {
				log.Error("flushing the event store to disk; the next flush tries again", "err", err)
			},
			Credentials: m.natsCreds,
			MaxStore:    c.StorageBudget,
		})
		if err != nil {
			return err
		}
		m.natsServer = srv
	} else if m.natsCreds != nil {
		natsOpts = append(natsOpts, m.natsCreds.Option())
	}
	connectNATS := func(name string) (*nats.Conn, error) {
		if m.natsServer != nil {
			return m.natsServer.Connect(name, natsOpts...)
		}
		return nats.Connect(c.NATS, append(natsOpts, nats.Name(name), nats.MaxReconnects(-1))...)
	}
	if m.nc, err = connectNATS("eventbridge"); err != nil {
		return fmt.Errorf("connecting to NATS: %w", err)
	}
	js, err := jetstream.New(m.nc)
	if err != nil {
		return err
	}
	names := stream.Names{Cluster: c.ClusterID}
	store := eventstore.New(js, c.ClusterID, c.Replicas)
	if m.putNC, err = connectNATS("eventbridge-put"); err != nil {
		return fmt.Errorf("connecting to NATS: %w", err)
	}
	if store.Publisher, err = jetstream.New(m.putNC); err != nil {
		return err
	}
	store.DLQ = stream.DLQLimits{MaxAge: c.DeadLetterRetention, MaxBytes: c.DeadLetterMaxBytes}
	store.Log = stream.LogLimits{MaxAge: c.BusLogRetention, MaxBytes: c.BusLogMaxBytes}
	store.Tracer = tracer
	if err := names.EnsureReadyStream(ctx, js, c.Replicas); err != nil {
		return err
	}
	m.readyProbe = func(ctx context.Context) error { return names.ProbeWrite(ctx, js) }

	runtimeURL := ""
	runtimeURLs := c.RuntimeURLs()
	if len(runtimeURLs) > 0 {
		runtimeURL = runtimeURLs[0]
	} else {
		// The embedded worker has a connection of its own, as a separate worker process has: its tasks' records,
		// acks and copies do not queue behind PutEvents' publishes and acknowledgements in one connection's read
		// and write loops (both ends), which cost a PutEvents call about a fifth of its latency while the router reads
		// (docs/benchmarks.md).
		if m.workerNC, err = connectNATS("eventbridge-worker"); err != nil {
			return fmt.Errorf("connecting the worker to NATS: %w", err)
		}
		// And its lease a third, which thousands of its tasks waking at once do not crowd (worker.Config.LeaseNATS).
		if m.workerLeaseNC, err = connectNATS("eventbridge-worker-lease"); err != nil {
			return fmt.Errorf("connecting the worker's lease to NATS: %w", err)
		}
		w, err := worker.New(worker.Config{
			NATS:                m.workerNC,
			LeaseNATS:           m.workerLeaseNC,
			ClusterID:           c.ClusterID,
			WorkerID:            c.WorkerID,
			RESTAddr:            c.WorkerAddr,
			Token:               m.clusterToken,
			MetricsAddr:         c.MetricsAddr,
			Replicas:            c.Replicas,
			AllowPrivateTargets: c.AllowPrivateTargets,
			EgressAllow:         c.EgressAllowList(),
			MasterKey:           m.masterKey,
			LeaseTTL:            c.LeaseTTL,
			// an in-process server that listens nowhere: no other worker can join, so the lease TTL may change
			SoleWorker: c.NATS == "" && c.NATSListen == "",
			Limits:     c.Listener,
			Logger:     log.With("component", "worker"),
			Loggers:    m.levels,
			Tracer:     tracer,
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
	archives, replays := persistence.NewArchiveRepository(db), persistence.NewReplayRepository(db)
	connectorStates := persistence.NewConnectorStateRepository(db)
	// The rows a sync of a bus reads are stamped by bus, so that a full reconciliation pass syncs the buses whose
	// rows changed, not every bus.
	_ = []connect.BusStamper{rules, targets, sourceRepo, archives, replays}
	m.lease = persistence.NewLease(db, "reconciler", replicaID(c.HTTPAddr), connect.LeaseTTL(c.ReconcileInterval))
	// The control plane's metrics read the health and counters of targets and sources from the runtime when
	// scraped, through the adapter made next.
	mx := metrics.New(metrics.Config{Health: c.Health, Logger: log.With("component", "metrics"),
		Reports: func(ctx context.Context, rules health.Rules, now time.Time) ([]target.Report, []source.Report, error) {
			return m.adapter.Reports(ctx, rules, now)
		}})
	m.adapter = connect.New(connect.Config{
		Runtime: runtimeClient(runtimeURL, runtimeURLs, clientOpts...), Buses: buses, Rules: rules, Targets: targets,
		APIDestinations: destinations, Connections: connections, Secrets: sealer,
		Streams: store, Physical: names, Logger: log.With("component", "adapter"),
		Sources:  sourceRepo,
		Interval: c.ReconcileInterval, States: connectorStates, Lease: m.lease, Passes: mx.Reconciled, Health: c.Health,
		EventTypesInterval: c.EventTypesInterval, Archives: archives, Replays: replays, AWSRegion: c.AWSRegion,
	})
	ensureDLQStreams(ctx, buses, store, log)
	ensureConnectorAccounts(ctx, m.adapter, accounts, log)
	// Secret headers that an earlier version stored in clear are sealed before the runtime is reconciled, so that
	// they reach the connectors' configs sealed.
	if n, err := (&target.Service{Targets: targets, Buses: buses, Sealer: sealer}).SealStoredHeaders(ctx); err != nil {
		log.Warn("sealing the secret headers stored in clear; retried at the next start", "err", err)
	} else if n > 0 {
		log.Info("sealed the secret headers that targets stored in clear", "targets", n)
	}
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
	auditRepo := persistence.NewAuditRepository(db)
	auditLog := &audit.Service{Entries: auditRepo, Retention: c.AuditRetention}
	auditRecorder := &audit.Recorder{Entries: auditRepo, Logger: log.With("component", "audit")}
	merger := &auditlog.Merger{JS: js, Names: names, Replicas: c.Replicas, Entries: auditRepo, Logger: log.With("component", "audit")}
	m.background.Add(3)
	go func() {
		defer m.background.Done()
		housekeeping(runCtx, log, sessions.Sweep, auditLog.Sweep)
	}()
	go func() {
		defer m.background.Done()
		merger.Run(runCtx) // the workers' REST calls, from the audit stream
	}()
	go func() {
		defer m.background.Done()
		auditRecorder.Run(runCtx) // writes the reads it holds when the run ends, after the API has stopped
	}()
	if m.natsServer != nil {
		m.background.Add(1)
		go func() {
			defer m.background.Done()
			m.healStore(runCtx, log.With("component", "event-store"), c.DataDir)
		}()
	}

	services := web.Services{
		Buses: &bus.Service{Buses: buses, Rules: rules, Archives: archives, Store: store, Runtime: m.adapter, Logger: log,
			MaxPerAccount: c.QuotaBuses, MaxRetention: c.MaxBusRetention},
		Archives: &archive.Service{Archives: archives, Buses: buses, Store: store, Runtime: m.adapter, Logger: log},
		Replays: &replay.Service{Replays: replays, Archives: archives, Store: store, Buses: buses, Rules: rules, Targets: targets,
			Runtime: m.adapter, Logger: log.With("component", "replays")},
		Rules: &rule.Service{Rules: rules, Buses: buses, Runtime: m.adapter, Logger: log, MaxPerBus: c.QuotaRulesPerBus,
			Counters: m.adapter},
		Targets: &target.Service{Targets: targets, Rules: rules, Buses: buses, Runtime: m.adapter, Statuses: m.adapter, Logger: log,
			Health: c.Health},
	}
	services.Targets.APIDestinations = destinations
	services.Targets.Plugins, services.Targets.Sealer = m.adapter, sealer
	services.Connections = &connection.Service{Connections: connections, Users: destinations, Sealer: sealer,
		MaxPerAccount: c.QuotaConnections}
	services.APIDestinations = &apidestination.Service{Destinations: destinations, Connections: connections,
		Targets: destinations, MaxPerAccount: c.QuotaAPIDestinations}
	eventTypes := persistence.NewEventTypeRepository(db)
	// Event types are learned from what the buses' routers report (every way in: PutEvents, webhooks, sources),
	// not from PutEvents, which would count its events twice.
	recorder := &eventtype.Recorder{Repo: eventTypes, Interval: c.EventTypesInterval, Logger: log.With("component", "event-types")}
	typesMerger := &eventtypes.Merger{JS: js, Names: names, Replicas: c.Replicas, Recorder: recorder,
		Logger: log.With("component", "event-types")}
	m.background.Add(1)
	go func() {
		defer m.background.Done()
		typesMerger.Run(runCtx) // the routers' reports, from the event-types stream
	}()
	services.EventTypes = &eventtype.Service{Repo: eventTypes, Buses: buses}
	services.Runtime = &runtime.Service{Runtime: m.adapter, States: connectorStates, Health: c.Health}
	busLog, deadLetters := eventstore.NewBusLog(js, c.ClusterID), eventstore.NewDeadLetters(js, c.ClusterID)
	services.Replays.Log = busLog
	services.DeadLetters = &deadletter.Service{Store: deadLetters, Buses: buses, Rules: rules,
		Targets: targets, Logger: log.With("component", "dead-letters"), Log: busLog}
	// The metrics history: one replica at a time (a lease) samples the runtime's counters into the event store.
	hourRes, dayRes := history.Resolutions(c.MetricsHistoryInterval)
	historyStore := eventstore.NewHistory(js, c.ClusterID, c.Replicas)
	services.History = &history.Service{Store: historyStore, Hour: hourRes, Day: dayRes}
	sampler := &history.Sampler{Source: m.adapter, Store: historyStore, Every: c.MetricsHistoryInterval,
		Lease:  persistence.NewLease(db, "metrics-history", replicaID(c.HTTPAddr), 3*c.MetricsHistoryInterval+5*time.Second),
		Logger: log.With("component", "metrics-history")}
	m.background.Add(1)
	go func() {
		defer m.background.Done()
		sampler.Run(runCtx)
	}()
	services.Inspect = &inspect.Service{Buses: buses, Rules: rules, Store: eventstore.NewEvents(js, c.ClusterID), Logs: busLog, DeadLetters: deadLetters,
		Tails: inspect.NewTails(inspect.DefaultTailsPerAccount)}
	services.Sources = &source.Service{Sources: sourceRepo, Buses: buses, Runtime: m.adapter, Statuses: m.adapter, Intake: store,
		Sealer: sealer, Opener: sealer, Logger: log, Health: c.Health}
	services.Buses.Sources = sourceRepo
	m.background.Add(1)
	go func() {
		defer m.background.Done()
		services.Sources.RunCounts(runCtx, 0) // adds the last webhook requests' counts once the API has stopped
	}()
	services.Channels = &channel.Service{Buses: services.Buses, Channels: persistence.NewChannelRepository(db), Rules: services.Rules,
		Targets: services.Targets, Sources: services.Sources, Runtime: m.adapter, Logger: log}
	services.Accounts, services.Users, services.APIKeys, services.Auth = id.accounts, id.users, id.keys, id.keys
	services.AccessKeys = &accesskey.Service{Keys: persistence.NewAccessKeyRepository(db), Accounts: accounts, Sealer: sealer,
		Opener: sealer, Logger: log.With("component", "access-keys")}
	services.Tags = &tag.Service{Tags: persistence.NewTagRepository(db)}
	services.Sessions = sessions
	services.Audit, services.AuditLog = auditRecorder, auditLog
	// Deleting an account deletes what it owns, the dependent first: sources and rules (with their targets and
	// connectors) before their buses, API destinations before their connections, then dead letters, runtime
	// states, members and keys.
	// Every PutEvents of every dialect and every webhook request, at its account's rate (this replica's buckets).
	putThrottle := &throttle.Throttle{Accounts: accounts, Default: c.PutEventsRate}
	services.Buses.Throttle, services.Sources.Throttle = putThrottle, putThrottle
	// What every account keeps in the event store, against its quota and the installation's budget.
	budget := c.StorageBudget
	if budget == 0 && m.natsServer != nil {
		budget = m.natsServer.MaxStore()
	}
	meter := &storagequota.Meter{JS: js, Names: names, Buses: buses, Quota: c.AccountStorageQuota, Budget: budget,
		Interval: c.StorageCheckInterval, Logger: log.With("component", "storage")}
	services.Buses.Storage, services.Sources.Storage = meter, meter
	m.background.Add(2)
	go func() {
		defer m.background.Done()
		meter.Run(runCtx)
	}()
	go func() {
		defer m.background.Done()
		services.Replays.Watch(runCtx, replayWatchInterval, replayIdleWatchInterval)
	}()
	id.accounts.Purgers = []account.Purger{services.Sources, services.Replays, services.Archives, services.Rules, services.Buses, services.APIDestinations,
		services.Connections, store, connectorStates, id.users, id.keys, services.AccessKeys, services.Tags, putThrottle}
	recCtx, stopRecorder := context.WithCancel(context.Background())
	m.stopRecorder, m.recorderDone = stopRecorder, make(chan struct{})
	go func() {
		defer close(m.recorderDone)
		recorder.Run(recCtx)
	}()
	handler := web.NewRouter(web.Config{Logger: log, Ready: m.ready, TrustedProxies: c.TrustedProxyPrefixes(),
		Console: frontend.Dist(), CORSOrigins: c.CORSOriginList(), PublicURLs: c.PublicURLList(),
		WebhookBaseURL: c.WebhookBaseURL(), Metrics: mx, Tracer: tracer, AWSRegion: c.AWSRegion}, services,
		rest.New, rocketmq.New, aws.New)
	ln, err := net.Listen("tcp", c.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", c.HTTPAddr, err)
	}
	ln = c.Listener.Listen(ln)
	if serverTLS != nil {
		ln = tls.NewListener(ln, serverTLS)
	}
	m.listener = ln
	m.httpServer = c.Listener.Server(handler, slog.NewLogLogger(log.Handler(), slog.LevelWarn))
	go func() {
		if err := m.httpServer.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("HTTP server stopped", "err", err)
		}
	}()
	log.Info("eventbridge serving", "http", m.HTTPURL(), "db", db.Dialect(), "worker", runtimeURL,
		"console", frontend.Built())
	return nil
}

// HousekeepingInterval spaces the deletion of ended sessions, old counts of failed sign-ins and audit entries
// past their retention.
const HousekeepingInterval = 10 * time.Minute

// replayWatchInterval is how often the progress of running replays is read from the runtime; while none is
// unfinished, the replays are read every replayIdleWatchInterval (and at once when this replica starts or cancels
// one).
const (
	replayWatchInterval     = time.Second
	replayIdleWatchInterval = 10 * time.Second
)

// housekeeping runs each of jobs at once and then every HousekeepingInterval until ctx ends; a failure is
// logged and tried again next time.
func housekeeping(ctx context.Context, log *slog.Logger, jobs ...func(context.Context) error) {
	t := time.NewTicker(HousekeepingInterval)
	defer t.Stop()
	for {
		for _, job := range jobs {
			if err := job(ctx); err != nil && ctx.Err() == nil {
				log.Warn("housekeeping", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// runtimeClient is the client of the embedded worker (url), or of the workers of --runtime, failing over from
// one to the next when one cannot be reached.
func runtimeClient(url string, urls []string, opts ...rpc.Option) *rpc.Client {
	if len(urls) > 1 {
		return rpc.NewClusterClient(urls, opts...)
	}
	return rpc.NewClient(url, opts...)
}

// readSecrets reads the cluster token and the NATS credentials, generating the defaults of the data directory on
// first start. Errors name files, never their content.
func (m *Main) readSecrets() error {
	c := m.Config
	path, generated := c.ClusterTokenPath()
	if generated {
		if err := ensureSecretFile(path, rpc.NewToken); err != nil {
			return fmt.Errorf("generating the cluster token: %w", err)
		}
	}
	token, err := rpc.ReadTokenFile(path)
	if err != nil {
		return err
	}
	m.clusterToken = token

	path, generated = c.NATSCredentialsPath()
	if path == "" {
		return nil
	}
	if generated {
		err := ensureSecretFile(path, func() (string, error) {
			creds, err := ebjs.NewCredentials()
			return creds.FileLine(), err
		})
		if err != nil {
			return fmt.Errorf("generating the NATS credentials: %w", err)
		}
	}
	creds, err := ebjs.ReadCredentialsFile(path)
	if err != nil {
		return err
	}
	m.natsCreds = &creds
	return nil
}

// privateDir creates dir with mode 0700, or takes group and other permissions away from an existing one: it holds
// the keys, the token and the NATS credentials. A directory this process may not change keeps its mode, logged.
func privateDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// Everything below the data directory is its owner's only: the database and its -wal and -shm files, keys,
	// tokens, credentials and the JetStream store. main's umask (0077) makes new files so; what an earlier version
	// made with wider modes is narrowed here, once per start.
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		perm := info.Mode().Perm()
		if perm&0o077 == 0 || info.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		if err := os.Chmod(path, perm&0o700); err != nil {
			log.Warn("a file of the data directory is readable by others and its mode cannot be changed", "path", path,
				"mode", perm.String(), "err", err)
		}
		return nil
	})
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
	seen, logged := map[string]bool{}, map[string]bool{}
	for _, b := range all {
		if !seen[b.AccountID()] {
			seen[b.AccountID()] = true
			if err := store.EnsureDLQStream(ctx, b.AccountID()); err != nil {
				log.Warn("ensuring a dead-letter stream", "account", b.AccountID(), "err", err)
			}
		}
		// The log stream of an account with a bus that logs gets this start's limits (--bus-log-*).
		if b.Log().On() && !logged[b.AccountID()] {
			logged[b.AccountID()] = true
			if err := store.EnsureLogStream(ctx, b.AccountID()); err != nil {
				log.Warn("ensuring a bus-log stream", "account", b.AccountID(), "err", err)
			}
		}
		// A stream made by an earlier version gets the limits of its bus's retention as this version keeps them (no
		// 1 GiB reserved by default; new messages refused rather than old ones discarded when a size is full).
		if err := store.EnsureBusLimits(ctx, b); err != nil {
			log.Warn("ensuring the limits of a bus's stream", "bus", b.ID(), "err", err)
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
	return m.storeTakesWrites(ctx)
}

// Healing the embedded event store: when its write probe has timed out for healAfter while the process can open
// files again, the embedded nats-server is restarted in place, at most once per healEvery. The store is probed
// every healProbeEvery while it takes writes (not every second: a write to the store, idle or not) and every
// readyProbeInterval once a probe timed out.
const (
	healAfter      = 10 * time.Second
	healEvery      = time.Minute
	healProbeEvery = 5 * time.Second
)

// healStore watches the embedded event store's write probe and restarts the embedded nats-server when the store
// stopped taking writes and the cause has passed: nats-server's file store refuses every write to a stream once it
// failed to write one of its files (out of file descriptors, say) until the stream is loaded again, which a
// restart does. A probe that fails quickly (a missing stream, a refusal) is not this and heals nothing.
func (m *Main) healStore(ctx context.Context, log *slog.Logger, dataDir string) {
	t := time.NewTimer(healProbeEvery)
	defer t.Stop()
	var failingSince, lastRestart time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := m.storeTakesWrites(ctx)
		timedOut := errors.Is(err, context.DeadlineExceeded)
		wait := healProbeEvery
		if timedOut {
			wait = readyProbeInterval
		}
		t.Reset(wait)
		switch {
		case !timedOut:
			failingSince = time.Time{}
			continue
		case failingSince.IsZero():
			failingSince = time.Now()
			continue
		case time.Since(failingSince) < healAfter || time.Since(lastRestart) < healEvery || !canOpenFiles(dataDir):
			continue
		}
		log.Error("the event store has taken no write for a while although the process can open files again: "+
			"restarting the embedded NATS server", "since", failingSince, "err", err)
		lastRestart = time.Now()
		if err := m.natsServer.Restart(); err != nil {
			log.Error("restarting the embedded NATS server", "err", err)
			continue
		}
		failingSince = time.Time{}
		log.Warn("the embedded NATS server restarted; clients reconnect")
	}
}

// canOpenFiles reports whether the process can create a file in dir (it has file descriptors to spare).
func canOpenFiles(dir string) bool {
	f, err := os.CreateTemp(dir, ".fd-probe-*")
	if err != nil {
		return false
	}
	_ = f.Close()
	_ = os.Remove(f.Name())
	return true
}

// readyProbeInterval is how long readiness believes the last write probe: probes at most once a second, however
// often /readyz is asked.
const readyProbeInterval = time.Second

// readyProbeTimeout bounds one write probe: a store that does not acknowledge within it is not ready.
const readyProbeTimeout = 2 * time.Second

// storeTakesWrites is nil when the event store acknowledged a write in the last second (a probe on the readiness
// stream), so that /readyz fails while PutEvents could not be stored.
func (m *Main) storeTakesWrites(ctx context.Context) error {
	if m.readyProbe == nil {
		return nil
	}
	m.readyMu.Lock()
	defer m.readyMu.Unlock()
	if !m.readyAt.IsZero() && time.Since(m.readyAt) < readyProbeInterval {
		return m.readyErr
	}
	pctx, cancel := context.WithTimeout(ctx, readyProbeTimeout)
	defer cancel()
	m.readyErr, m.readyAt = m.readyProbe(pctx), time.Now()
	return m.readyErr
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
		m.background.Wait()
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
	for _, nc := range []*nats.Conn{m.workerNC, m.workerLeaseNC, m.putNC, m.nc} {
		if nc == nil {
			continue
		}
		if err := nc.FlushTimeout(5 * time.Second); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			errs = append(errs, fmt.Errorf("NATS flush: %w", err))
		}
		nc.Close()
	}
	if m.natsServer != nil {
		if !m.natsServer.ShutdownWithin(m.Config.NATSStopTimeout) {
			m.Logger.Warn("the embedded NATS server did not stop in time; exiting, its remaining streams as after a crash",
				"waited", m.Config.NATSStopTimeout)
		}
	}
	if m.db != nil {
		if err := m.db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("database: %w", err))
		}
	}
	if err := m.tracing.Shutdown(ctx); err != nil {
		m.Logger.Warn("tracing: exporting the last spans", "err", err)
	}
	return errors.Join(errs...)
}

// replicaID names this control-plane replica in the reconciler lease: host, listen address and process id, unique
// among replicas sharing a database.
func replicaID(httpAddr string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%s/%d", host, httpAddr, os.Getpid())
}
