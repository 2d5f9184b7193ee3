// Package rest serves the worker REST API in the Kafka Connect dialect (paths, verbs, status codes and
// {"error_code","message"} errors) over a Herder. Wire types are those of package rpc. Every route but GET / and
// GET /healthz requires the installation's cluster token (Bearer, or Basic with user "worker"); the routes are
// declared once in a table (Handler.Routes).
package rest

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/herder"
	"github.com/eventbridge-go/eventbridge/worker/loggers"
)

// Herder is what the API needs of the runtime; *herder.Herder implements it. Changes block until the runtime
// runs them; errors are those documented by package herder.
type Herder interface {
	ServerInfo() rpc.ServerInfo
	Plugins(connectorsOnly bool) []rpc.PluginInfo
	Connectors() []string
	// ExpandedJSON is the info and/or status of every connector whose name starts with prefix, a JSON object by
	// name (GET /connectors?expand=...), with its entity tag ("" for none); a nil body with a tag equal to
	// ifNoneMatch means the caller's copy is current.
	ExpandedJSON(info, status bool, prefix, ifNoneMatch string) (body []byte, etag string, err error)
	Info(name string) (rpc.ConnectorInfo, error)
	Config(name string) (map[string]string, error)
	Status(name string) (rpc.ConnectorStatus, error)
	TaskStatus(name string, task int) (rpc.TaskState, error)
	Create(ctx context.Context, name string, cfg map[string]string, initialState string) (rpc.ConnectorInfo, error)
	PutConfig(ctx context.Context, name string, cfg map[string]string) (rpc.ConnectorInfo, bool, error)
	PatchConfig(ctx context.Context, name string, patch map[string]*string) (rpc.ConnectorInfo, error)
	Topics(ctx context.Context, name string) ([]string, error)
	ResetTopics(ctx context.Context, name string) error
	Pause(ctx context.Context, name string) error
	Resume(ctx context.Context, name string) error
	Stop(ctx context.Context, name string) error
	Delete(ctx context.Context, name string) error
	Restart(ctx context.Context, name string, includeTasks, onlyFailed bool) (rpc.ConnectorStatus, error)
	RestartTask(ctx context.Context, name string, task int) error
	Offsets(ctx context.Context, name string) (rpc.ConnectorOffsets, error)
	AlterOffsets(ctx context.Context, name string, offsets rpc.ConnectorOffsets) (string, error)
	ResetOffsets(ctx context.Context, name string) (string, error)
	PluginConfig(plugin string) ([]rpc.ConfigKeyInfo, error)
	PluginSchema(plugin string) (map[string]any, error)
	ValidateConfig(plugin string, cfg map[string]string) (rpc.ConfigInfos, error)
	ClusterInfo() rpc.ClusterInfo
	AllocatedConnectors() map[string]map[string]string
	AllocatedTasks() []rpc.AllocatedTask
}

var _ Herder = (*herder.Herder)(nil)

// MaxBodyBytes bounds request bodies (a router's rule table is the largest config).
const MaxBodyBytes = 16 << 20

// Config configures the API.
type Config struct {
	// Token is the cluster token every route but the public ones requires (see Route.Public and package rpc's
	// token rules). An empty token refuses every request to a route that is not public.
	Token  string
	Logger *slog.Logger
	// Metrics serves GET /metrics (route "metrics", behind the token like the rest); nil serves no metrics.
	Metrics http.Handler
	// Audit receives the record of every call of a route that is not public, refused ones included, once it is
	// answered (the worker publishes them to the audit stream); nil records nothing.
	Audit func(ctx context.Context, rec stream.AuditRecord)
	// WorkerID names the worker in its audit records.
	WorkerID string
	// Loggers are the worker's loggers that /admin/loggers reads and changes; nil serves a set of its own.
	Loggers *loggers.Levels
	// SetClusterLevel sends a level to every worker of the cluster (PUT /admin/loggers/{logger}?scope=cluster);
	// nil refuses that scope.
	SetClusterLevel func(ctx context.Context, logger, level string) error
}

// Route is one operation of the API, declared once in the table NewHandler registers from.
type Route struct {
	// Name is stable, for logs and tests: "connectors.list", "connectors.offsets.reset", ...
	Name string
	// Method and Pattern are those of http.ServeMux ("GET", "/connectors/{c}/status"; "/{$}" is the root alone).
	// A GET route answers HEAD too.
	Method, Pattern string
	// Public routes answer without the cluster token: GET / (the worker's version, as Kafka Connect's) and
	// GET /healthz (for load balancers and container health checks). Nothing else is public.
	Public  bool
	Handler http.HandlerFunc
}

// Audited reports whether the calls of the route are recorded (Config.Audit): every route but the public ones and
// the metrics, whose scrapes are no control operation.
func (r Route) Audited() bool { return !r.Public && r.Name != "metrics" }

// Handler is the API's http.Handler.
type Handler struct {
	h       Herder
	log     *slog.Logger
	mux     *http.ServeMux
	routes  []Route
	metrics http.Handler
	audit   func(ctx context.Context, rec stream.AuditRecord)
	worker  string
	loggers *loggers.Levels
	cluster func(ctx context.Context, logger, level string) error
	// tokenSum is the SHA-256 of the token: comparing digests of equal length keeps the comparison's time
	// independent of the token's length as well as of its content.
	tokenSum [sha256.Size]byte
	noToken  bool
}

// NewHandler returns the API over h, with the routes of its table (Routes).
func NewHandler(h Herder, cfg Config) *Handler {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Handler{h: h, log: log, mux: http.NewServeMux(), metrics: cfg.Metrics, audit: cfg.Audit, worker: cfg.WorkerID,
		tokenSum: sha256.Sum256([]byte(cfg.Token)), noToken: cfg.Token == "", loggers: cfg.Loggers, cluster: cfg.SetClusterLevel}
	if a.loggers == nil {
		a.loggers = loggers.New(log.Handler(), loggers.LowestEnabled(log))
	}
	a.routes = a.table()
	for _, rt := range a.routes {
		handler := rt.Handler
		if !rt.Public {
			handler = a.authenticated(handler)
		}
		if rt.Audited() {
			handler = a.audited(rt.Name, handler)
		}
		a.mux.Handle(rt.Method+" "+rt.Pattern, handler)
	}
	return a
}

// table declares every route of the API.
func (a *Handler) table() []Route {
	routes := []Route{
		{Name: "server.info", Method: http.MethodGet, Pattern: "/{$}", Public: true, Handler: a.serverInfo},
		{Name: "health", Method: http.MethodGet, Pattern: "/healthz", Public: true, Handler: a.health},
		{Name: "connectors.list", Method: http.MethodGet, Pattern: "/connectors", Handler: a.listConnectors},
		{Name: "connectors.create", Method: http.MethodPost, Pattern: "/connectors", Handler: a.createConnector},
		{Name: "connectors.get", Method: http.MethodGet, Pattern: "/connectors/{c}", Handler: a.getConnector},
		{Name: "connectors.delete", Method: http.MethodDelete, Pattern: "/connectors/{c}", Handler: a.deleteConnector},
		{Name: "connectors.config.get", Method: http.MethodGet, Pattern: "/connectors/{c}/config", Handler: a.getConfig},
		{Name: "connectors.config.put", Method: http.MethodPut, Pattern: "/connectors/{c}/config", Handler: a.putConfig},
		{Name: "connectors.config.patch", Method: http.MethodPatch, Pattern: "/connectors/{c}/config", Handler: a.patchConfig},
		{Name: "connectors.status", Method: http.MethodGet, Pattern: "/connectors/{c}/status", Handler: a.getStatus},
		{Name: "connectors.topics.get", Method: http.MethodGet, Pattern: "/connectors/{c}/topics", Handler: a.getTopics},
		{Name: "connectors.topics.reset", Method: http.MethodPut, Pattern: "/connectors/{c}/topics/reset", Handler: a.resetTopics},
		{Name: "connectors.tasks.list", Method: http.MethodGet, Pattern: "/connectors/{c}/tasks", Handler: a.listTasks},
		{Name: "connectors.tasks.status", Method: http.MethodGet, Pattern: "/connectors/{c}/tasks/{t}/status", Handler: a.getTaskStatus},
		{Name: "connectors.pause", Method: http.MethodPut, Pattern: "/connectors/{c}/pause", Handler: a.change(http.StatusAccepted, Herder.Pause)},
		{Name: "connectors.resume", Method: http.MethodPut, Pattern: "/connectors/{c}/resume", Handler: a.change(http.StatusAccepted, Herder.Resume)},
		{Name: "connectors.stop", Method: http.MethodPut, Pattern: "/connectors/{c}/stop", Handler: a.change(http.StatusNoContent, Herder.Stop)},
		{Name: "connectors.restart", Method: http.MethodPost, Pattern: "/connectors/{c}/restart", Handler: a.restartConnector},
		{Name: "connectors.tasks.restart", Method: http.MethodPost, Pattern: "/connectors/{c}/tasks/{t}/restart", Handler: a.restartTask},
		{Name: "connectors.offsets.get", Method: http.MethodGet, Pattern: "/connectors/{c}/offsets", Handler: a.getOffsets},
		{Name: "connectors.offsets.alter", Method: http.MethodPatch, Pattern: "/connectors/{c}/offsets", Handler: a.alterOffsets},
		{Name: "connectors.offsets.reset", Method: http.MethodDelete, Pattern: "/connectors/{c}/offsets", Handler: a.resetOffsets},
		{Name: "plugins.list", Method: http.MethodGet, Pattern: "/connector-plugins", Handler: a.listPlugins},
		{Name: "loggers.list", Method: http.MethodGet, Pattern: "/admin/loggers", Handler: a.listLoggers},
		{Name: "loggers.get", Method: http.MethodGet, Pattern: "/admin/loggers/{logger}", Handler: a.getLogger},
		{Name: "loggers.set", Method: http.MethodPut, Pattern: "/admin/loggers/{logger}", Handler: a.setLogger},
		{Name: "plugins.config", Method: http.MethodGet, Pattern: "/connector-plugins/{p}/config", Handler: a.pluginConfig},
		{Name: "plugins.schema", Method: http.MethodGet, Pattern: "/connector-plugins/{p}/schema", Handler: a.pluginSchema},
		{Name: "plugins.validate", Method: http.MethodPut, Pattern: "/connector-plugins/{p}/config/validate", Handler: a.validateConfig},
		// RocketMQ Connect's views.
		{Name: "rocketmq.clusterInfo", Method: http.MethodGet, Pattern: "/getClusterInfo", Handler: a.clusterInfo},
		{Name: "rocketmq.allocatedConnectors", Method: http.MethodGet, Pattern: "/allocated/connectors", Handler: a.allocatedConnectors},
		{Name: "rocketmq.allocatedTasks", Method: http.MethodGet, Pattern: "/allocated/tasks", Handler: a.allocatedTasks},
		{Name: "rocketmq.pluginList", Method: http.MethodGet, Pattern: "/plugin/list", Handler: a.listPlugins},
	}
	if a.metrics != nil {
		routes = append(routes, Route{Name: "metrics", Method: http.MethodGet, Pattern: MetricsPath, Handler: a.metrics.ServeHTTP})
	}
	return routes
}

// MetricsPath is where the API serves the worker's metrics when Config.Metrics is set.
const MetricsPath = "/metrics"

// Routes returns the routes the handler serves, in the order of its table.
func (a *Handler) Routes() []Route { return slices.Clone(a.routes) }

// ServeHTTP routes r; a request no route takes is answered 404 or 405 in the API's error format, after the token
// check, so that without the token every path but the public ones answers the same 401.
func (a *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h, pattern := a.mux.Handler(r); pattern == "" {
		if !a.authorized(r) {
			a.unauthorized(w, r)
			return
		}
		probe := &statusProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		if probe.code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", probe.header.Get("Allow"))
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path))
			return
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("no resource at %s", r.URL.Path))
		return
	}
	a.mux.ServeHTTP(w, r)
}

// Realm names the worker REST API in WWW-Authenticate challenges.
const Realm = "eventbridge-worker"

// unauthorizedMessage is the one answer to a missing or wrong token: the two cases are not told apart.
const unauthorizedMessage = "this API requires the cluster token, as a Bearer token or as the password of HTTP Basic " +
	"with user " + rpc.TokenUser

// authenticated serves next only to a request that carries the cluster token.
func (a *Handler) authenticated(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !a.authorized(r) {
			a.unauthorized(w, r)
			return
		}
		next(w, r)
	}
}

// audited records each call of the route name once next has answered it: the operation, the connector or plugin
// it named, whether it carried the token, the status and the client's address; never a body, query or header.
func (a *Handler) audited(name string, next http.HandlerFunc) http.HandlerFunc {
	if a.audit == nil {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next(sw, r)
		rec := stream.AuditRecord{ID: stream.NewAuditID(), Time: start.UTC(), Worker: a.worker, Operation: name,
			Connector: r.PathValue("c"), Authenticated: a.authorized(r), Status: sw.code}
		switch {
		case rec.Connector != "":
			rec.Resource = "connectors/" + rec.Connector
			if t := r.PathValue("t"); t != "" {
				rec.Resource += "/tasks/" + t
			}
		case r.PathValue("p") != "":
			rec.Resource = "connector-plugins/" + r.PathValue("p")
		default:
			rec.Resource = strings.Trim(r.URL.Path, "/")
		}
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			rec.ClientAddr = host
		}
		a.audit(r.Context(), rec)
	}
}

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	code    int
	written bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.written {
		w.code, w.written = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.written = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes of long answers).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// authorized reports whether r carries the cluster token, as a Bearer token or as the password of HTTP Basic with
// user rpc.TokenUser, comparing in constant time.
func (a *Handler) authorized(r *http.Request) bool {
	if a.noToken {
		return false
	}
	var presented string
	auth := r.Header.Get("Authorization")
	if scheme, rest, ok := strings.Cut(auth, " "); ok && strings.EqualFold(scheme, "Bearer") {
		presented = strings.TrimSpace(rest)
	} else if user, pass, ok := r.BasicAuth(); ok && user == rpc.TokenUser {
		presented = pass
	} else {
		return false
	}
	sum := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(sum[:], a.tokenSum[:]) == 1
}

func (a *Handler) unauthorized(w http.ResponseWriter, r *http.Request) {
	a.log.Debug("request without the cluster token refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
	w.Header().Add("WWW-Authenticate", `Bearer realm="`+Realm+`"`)
	w.Header().Add("WWW-Authenticate", `Basic realm="`+Realm+`", charset="UTF-8"`)
	writeError(w, http.StatusUnauthorized, unauthorizedMessage)
}

// statusProbe records what the mux would answer to a request without a route.
type statusProbe struct {
	header http.Header
	code   int
}

func (p *statusProbe) Header() http.Header { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) {
	if p.code == 0 {
		p.code = http.StatusOK
	}
	return len(b), nil
}
func (p *statusProbe) WriteHeader(code int) {
	if p.code == 0 {
		p.code = code
	}
}

func (a *Handler) serverInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.h.ServerInfo())
}

// health answers that the worker serves; it takes no token (load balancers, container health checks).
func (a *Handler) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// listPlugins answers the connector plugins, and with connectorsOnly=false the transform plugins too.
func (a *Handler) listPlugins(w http.ResponseWriter, r *http.Request) {
	connectorsOnly := true
	if v := r.URL.Query().Get("connectorsOnly"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("connectorsOnly %q is not true or false", v))
			return
		}
		connectorsOnly = b
	}
	writeJSON(w, http.StatusOK, a.h.Plugins(connectorsOnly))
}

// listConnectors answers the names, or with expand=status and/or expand=info a map name → {status, info}. With
// prefix=P (an extension of Kafka Connect's API) the map holds only the connectors whose names start with P, so a
// caller interested in one bus does not read every status of the cluster. A map of every connector has an ETag,
// and a request whose If-None-Match is that tag is answered 304 Not Modified without a body: the control plane
// lists thousands of connectors every few seconds, and while nothing changes it need not read them again.
func (a *Handler) listConnectors(w http.ResponseWriter, r *http.Request) {
	expand := r.URL.Query()["expand"]
	info, status := slices.Contains(expand, "info"), slices.Contains(expand, "status")
	prefix := r.URL.Query().Get("prefix")
	if !info && !status {
		names := a.h.Connectors()
		if prefix != "" {
			names = slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, prefix) })
		}
		writeJSON(w, http.StatusOK, names)
		return
	}
	body, etag, err := a.h.ExpandedJSON(info, status, prefix, r.Header.Get("If-None-Match"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if etag != "" {
		w.Header().Set("ETag", etag)
		if body == nil {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func (a *Handler) createConnector(w http.ResponseWriter, r *http.Request) {
	var req rpc.CreateConnectorRequest
	if !a.decode(w, r, &req) {
		return
	}
	if req.Name == "" {
		writeError(w, http.StatusBadRequest, "name is required")
		return
	}
	if req.Config == nil {
		writeError(w, http.StatusBadRequest, "config is required")
		return
	}
	info, err := a.h.Create(r.Context(), req.Name, req.Config, req.InitialState)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, info)
}

func (a *Handler) getConnector(w http.ResponseWriter, r *http.Request) {
	info, err := a.h.Info(r.PathValue("c"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func (a *Handler) deleteConnector(w http.ResponseWriter, r *http.Request) {
	if err := a.h.Delete(r.Context(), r.PathValue("c")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *Handler) getConfig(w http.ResponseWriter, r *http.Request) {
	cfg, err := a.h.Config(r.PathValue("c"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, cfg)
}

// putConfig creates (201) or updates (200) a connector.
func (a *Handler) putConfig(w http.ResponseWriter, r *http.Request) {
	var cfg map[string]string
	if !a.decode(w, r, &cfg) {
		return
	}
	if cfg == nil {
		writeError(w, http.StatusBadRequest, "the body must be a JSON object of strings")
		return
	}
	info, created, err := a.h.PutConfig(r.Context(), r.PathValue("c"), cfg)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	writeJSON(w, code, info)
}

// getTopics answers the subjects the connector read or wrote since it was created or its topics were reset, in
// Kafka Connect's shape: {"<connector>": {"topics": [...]}}.
func (a *Handler) getTopics(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("c")
	topics, err := a.h.Topics(r.Context(), name)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]rpc.ActiveTopics{name: {Topics: topics}})
}

// resetTopics forgets the connector's active topics (202, as Kafka Connect).
func (a *Handler) resetTopics(w http.ResponseWriter, r *http.Request) {
	if err := a.h.ResetTopics(r.Context(), r.PathValue("c")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// listLoggers answers root and every logger of the worker with its level (Kafka Connect's GET /admin/loggers).
func (a *Handler) listLoggers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.loggers.List())
}

// getLogger answers one logger's effective level; 404 for a name no logger has.
func (a *Handler) getLogger(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("logger")
	info, ok := a.loggers.Get(name)
	if !ok {
		writeError(w, http.StatusNotFound, "Logger "+name+" not found.")
		return
	}
	writeJSON(w, http.StatusOK, info)
}

// setLogger sets the level of a logger and of every logger whose name starts with it, on this worker (answering
// the names changed) or, with scope=cluster, on every worker of the cluster (204), as Kafka Connect does; an
// unknown level is 404 and a missing one 400, as there.
func (a *Handler) setLogger(w http.ResponseWriter, r *http.Request) {
	var body map[string]string
	if !a.decode(w, r, &body) {
		return
	}
	name, given := r.PathValue("logger"), body["level"]
	if given == "" {
		writeError(w, http.StatusBadRequest, "Desired 'level' parameter was not specified in request.")
		return
	}
	level, ok := loggers.ParseLevel(given)
	if !ok {
		writeError(w, http.StatusNotFound, "invalid log level '"+given+"'.")
		return
	}
	if strings.EqualFold(r.URL.Query().Get("scope"), "cluster") {
		if a.cluster == nil {
			writeError(w, http.StatusBadRequest, "scope=cluster needs a worker connected to its cluster")
			return
		}
		if err := a.cluster(r.Context(), name, loggers.LevelName(level)); err != nil {
			writeError(w, http.StatusServiceUnavailable, "the level did not reach the cluster: "+err.Error())
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusOK, a.loggers.Set(name, level))
}

// patchConfig merges the body into the connector's config (Kafka Connect's PATCH, KIP-477): a key set to null is
// removed, the others are set; the answer is the connector's info with the merged config.
func (a *Handler) patchConfig(w http.ResponseWriter, r *http.Request) {
	var patch map[string]*string
	if !a.decode(w, r, &patch) {
		return
	}
	if patch == nil {
		writeError(w, http.StatusBadRequest, "the body must be a JSON object of strings and nulls")
		return
	}
	info, err := a.h.PatchConfig(r.Context(), r.PathValue("c"), patch)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func (a *Handler) getStatus(w http.ResponseWriter, r *http.Request) {
	st, err := a.h.Status(r.PathValue("c"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (a *Handler) listTasks(w http.ResponseWriter, r *http.Request) {
	info, err := a.h.Info(r.PathValue("c"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := []rpc.TaskInfo{}
	for _, t := range info.Tasks {
		out = append(out, rpc.TaskInfo{ID: t, Config: info.Config})
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *Handler) getTaskStatus(w http.ResponseWriter, r *http.Request) {
	t, err := strconv.Atoi(r.PathValue("t"))
	if err != nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("task %q not found", r.PathValue("t")))
		return
	}
	st, err := a.h.TaskStatus(r.PathValue("c"), t)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (a *Handler) change(code int, op func(Herder, context.Context, string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := op(a.h, r.Context(), r.PathValue("c")); err != nil {
			a.fail(w, r, err)
			return
		}
		w.WriteHeader(code)
	}
}

// decode reads a JSON body into v; on failure it answers 400 (413 when too large) and returns false.
func (a *Handler) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", MaxBodyBytes))
			return false
		}
		writeError(w, http.StatusBadRequest, "malformed JSON body: "+err.Error())
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "malformed JSON body: unexpected data after the JSON value")
		return false
	}
	return true
}

// fail answers the error of a herder operation, with the one mapping of errors to statuses. Internal details of
// unexpected errors are logged, not returned.
func (a *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var fe connector.FieldErrors
	var se *herder.StartError
	switch {
	case errors.Is(err, herder.ErrNotFound), errors.Is(err, herder.ErrPluginNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, herder.ErrExists):
		writeError(w, http.StatusConflict, err.Error())
	case errors.As(err, &se):
		// Stored, but FAILED; the trace is also the connector's status, so the caller may as well see it now.
		a.log.Warn("connector did not start", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, err.Error())
	case errors.As(err, &fe), errors.Is(err, herder.ErrInvalid):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, herder.ErrClosed), errors.Is(err, herder.ErrNotStarted):
		writeError(w, http.StatusServiceUnavailable, err.Error())
	default:
		a.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "internal error; the worker's log has the details")
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = jsonEncode(w, v)
}

func jsonEncode(w http.ResponseWriter, v any) error { return json.NewEncoder(w).Encode(v) }

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, rpc.ErrorResponse{ErrorCode: code, Message: msg})
}
