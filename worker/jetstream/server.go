// Package jetstream is what only the worker runtime and the binaries need of NATS JetStream beyond the shared
// physical model (package stream): the embedded nats-server and the compare-and-set conflict check of KV writes.
package jetstream

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// ServerConfig configures the embedded NATS server.
type ServerConfig struct {
	// StoreDir holds JetStream's files.
	StoreDir string
	// Listen is host:port of a TCP listener for clients; empty means in-process connections only.
	Listen string
	// SyncAlways flushes every write to disk; otherwise writes are flushed every SyncInterval (0: nats-server's
	// default), by the server itself where the system can flush StoreDir's file system in one call (see flusher).
	SyncAlways   bool
	SyncInterval time.Duration
	// FlushFailed, when set, is told of each flush of the file system that failed; the next one tries again.
	FlushFailed func(error)
	// ServerName names the server (default "eventbridge").
	ServerName string
	// MaxStore bounds the file storage of JetStream, which the maximum sizes of streams (a bus reserves its
	// retention's maxBytes) are counted against; 0 lets the server derive it from the free disk space.
	MaxStore int64
	// Credentials, when set, are the only user and password the server accepts, from in-process and TCP clients
	// alike: a client without them, or with another password, is refused. Connect sends them. cmd/eventbridge
	// always sets them.
	Credentials *Credentials
	// AllowAnonymous lets a server with a TCP listener (Listen) run without Credentials; without it StartServer
	// refuses that, so that a listener never serves every KV bucket to anyone who connects. For tests.
	AllowAnonymous bool
	// MaxPayload bounds a message's headers and body (0: 8 MiB). A NATS cluster's servers default to 1 MiB.
	MaxPayload int32
}

// Server is an embedded nats-server with JetStream. Restart replaces the running nats-server with a new one on the
// same files; the in-process connections Connect made reconnect to it by themselves.
type Server struct {
	mu    sync.RWMutex
	ns    *server.Server
	opts  *server.Options
	creds *Credentials
	// flusher flushes StoreDir's file system every SyncInterval, when the server does it for nats-server.
	flusher  *flusher
	closeFS  func() error
	stopOnce sync.Once
}

// StartServer starts an embedded nats-server with JetStream and waits until it accepts connections. Errors are
// config errors (a listener without credentials, invalid credentials, a bad address) and the server's.
func StartServer(cfg ServerConfig) (*Server, error) {
	if cfg.StoreDir == "" {
		return nil, errors.New("jetstream: StoreDir is required")
	}
	if cfg.Credentials != nil {
		if err := cfg.Credentials.Validate(); err != nil {
			return nil, fmt.Errorf("jetstream: %w", err)
		}
	} else if cfg.Listen != "" && !cfg.AllowAnonymous {
		return nil, errors.New("jetstream: a server listening on TCP needs credentials: anonymous clients could read every stream and KV bucket")
	}
	name := cfg.ServerName
	if name == "" {
		name = "eventbridge"
	}
	opts := &server.Options{
		ServerName:         name,
		JetStream:          true,
		StoreDir:           filepath.Clean(cfg.StoreDir),
		NoSigs:             true,
		NoLog:              true,
		SyncAlways:         cfg.SyncAlways,
		SyncInterval:       cfg.SyncInterval,
		MaxPayload:         cmp.Or(cfg.MaxPayload, 8<<20),
		JetStreamMaxMemory: 256 << 20,
		JetStreamMaxStore:  cfg.MaxStore,
	}
	if cfg.Credentials != nil {
		opts.Username, opts.Password = cfg.Credentials.User, cfg.Credentials.Password
	}
	if cfg.Listen == "" {
		opts.DontListen = true
	} else {
		host, port, err := net.SplitHostPort(cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("jetstream: listen address %q: %w", cfg.Listen, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("jetstream: listen port %q: %w", port, err)
		}
		opts.Host, opts.Port = host, p
	}
	srv := &Server{opts: opts, creds: cfg.Credentials}
	if !cfg.SyncAlways && cfg.SyncInterval > 0 && cfg.SyncInterval < serverSyncInterval {
		if err := os.MkdirAll(opts.StoreDir, 0o700); err != nil {
			return nil, fmt.Errorf("jetstream: store directory: %w", err)
		}
		if flush, closeFS, err := openFileSystem(opts.StoreDir); err == nil {
			opts.SyncInterval = serverSyncInterval
			srv.flusher, srv.closeFS = newFlusher(cfg.SyncInterval, flush, cfg.FlushFailed), closeFS
		} else if !errors.Is(err, errors.ErrUnsupported) {
			return nil, fmt.Errorf("jetstream: store directory: %w", err)
		}
	}
	ns, err := startNATS(opts)
	if err != nil {
		srv.stopFlushing()
		return nil, err
	}
	srv.ns = ns
	return srv, nil
}

// Flushes counts the flushes of the store's file system the server made itself (see flusher); 0 when nats-server
// flushes each stream.
func (s *Server) Flushes() uint64 {
	if s.flusher == nil {
		return 0
	}
	return s.flusher.flushes.Load()
}

// stopFlushing flushes the store's file system a last time and stops. Safe to call twice.
func (s *Server) stopFlushing() {
	if s.flusher == nil {
		return
	}
	s.stopOnce.Do(func() {
		s.flusher.stop()
		_ = s.closeFS()
	})
}

// startNATS starts a nats-server with a copy of opts and waits until it accepts connections.
func startNATS(opts *server.Options) (*server.Server, error) {
	ns, err := server.NewServer(opts.Clone())
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("jetstream: embedded server did not become ready in 30s")
	}
	return ns, nil
}

// Restart shuts the nats-server down (JetStream flushes its files) and starts a new one on the same store: what a
// process restart would do for the event store, without one. nats-server's file store refuses every later write to
// a stream once it failed to write one of its files (a "critical write error", e.g. when the process ran out of
// file descriptors) until the stream is loaded again; a restart loads every stream again. Clients of Connect
// reconnect by themselves (in process, with MaxReconnects -1); acknowledgements in flight are lost, so records are
// delivered again, as after any restart.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	ns, err := startNATS(s.opts)
	if err != nil {
		return err
	}
	s.ns = ns
	return nil
}

// InProcessConn is a connection to the running nats-server (nats.InProcessConnProvider), the one Restart started
// last.
func (s *Server) InProcessConn() (net.Conn, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ns.InProcessConn()
}

// MaxStore is the file storage JetStream may use: ServerConfig.MaxStore, or what the server derived from the free
// disk space (three quarters of it) when that was 0.
func (s *Server) MaxStore() int64 {
	if c := s.server().JetStreamConfig(); c != nil {
		return c.MaxStore
	}
	return 0
}

func (s *Server) server() *server.Server {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ns
}

// Connect opens a client connection to the embedded server (in process, no TCP), with the server's credentials.
func (s *Server) Connect(name string, opts ...nats.Option) (*nats.Conn, error) {
	base := []nats.Option{nats.InProcessServer(s), nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond)}
	if s.creds != nil {
		base = append(base, s.creds.Option())
	}
	return nats.Connect("", append(base, opts...)...)
}

// ClientURL is the TCP URL of the server, or "" when it has no listener.
func (s *Server) ClientURL() string {
	ns := s.server()
	if ns.Addr() == nil {
		return ""
	}
	return ns.ClientURL()
}

// Shutdown stops the server; JetStream flushes its files first. Safe to call twice.
func (s *Server) Shutdown() {
	ns := s.server()
	ns.Shutdown()
	ns.WaitForShutdown()
	s.stopFlushing()
}

// ShutdownWithin stops the server as Shutdown does, waiting at most d, and reports whether it finished. The server
// stops its streams and consumers one at a time (about 10 ms per consumer in nats-server 2.15, which waits for each
// consumer's state flusher); when d ends first, it goes on in the background and what it has not stopped when the
// process exits is left as after a crash: acknowledged messages are on disk, consumers come back at their last
// flushed state (10 times a second while they change).
func (s *Server) ShutdownWithin(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		s.Shutdown()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
