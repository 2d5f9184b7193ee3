// Package rest serves the worker REST API in the Kafka Connect dialect (paths, verbs, status codes and
// {"error_code","message"} errors) over a Herder. Wire types are those of package rpc.
package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/herder"
)

// Herder is what the API needs of the runtime; *herder.Herder implements it. Changes block until the runtime
// runs them; errors are those documented by package herder.
type Herder interface {
	ServerInfo() rpc.ServerInfo
	Plugins() []rpc.PluginInfo
	Connectors() []string
	Expanded(info, status bool) map[string]rpc.ConnectorExpanded
	Info(name string) (rpc.ConnectorInfo, error)
	Config(name string) (map[string]string, error)
	Status(name string) (rpc.ConnectorStatus, error)
	TaskStatus(name string, task int) (rpc.TaskState, error)
	Create(ctx context.Context, name string, cfg map[string]string, initialState string) (rpc.ConnectorInfo, error)
	PutConfig(ctx context.Context, name string, cfg map[string]string) (rpc.ConnectorInfo, bool, error)
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

// Handler is the API's http.Handler.
type Handler struct {
	h   Herder
	log *slog.Logger
	mux *http.ServeMux
}

// NewHandler returns the API over h.
func NewHandler(h Herder, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Handler{h: h, log: log, mux: http.NewServeMux()}
	a.mux.HandleFunc("GET /{$}", a.serverInfo)
	a.mux.HandleFunc("GET /connectors", a.listConnectors)
	a.mux.HandleFunc("POST /connectors", a.createConnector)
	a.mux.HandleFunc("GET /connectors/{c}", a.getConnector)
	a.mux.HandleFunc("DELETE /connectors/{c}", a.deleteConnector)
	a.mux.HandleFunc("GET /connectors/{c}/config", a.getConfig)
	a.mux.HandleFunc("PUT /connectors/{c}/config", a.putConfig)
	a.mux.HandleFunc("GET /connectors/{c}/status", a.getStatus)
	a.mux.HandleFunc("GET /connectors/{c}/tasks", a.listTasks)
	a.mux.HandleFunc("GET /connectors/{c}/tasks/{t}/status", a.getTaskStatus)
	a.mux.HandleFunc("PUT /connectors/{c}/pause", a.change(http.StatusAccepted, Herder.Pause))
	a.mux.HandleFunc("PUT /connectors/{c}/resume", a.change(http.StatusAccepted, Herder.Resume))
	a.mux.HandleFunc("PUT /connectors/{c}/stop", a.change(http.StatusNoContent, Herder.Stop))
	a.mux.HandleFunc("POST /connectors/{c}/restart", a.restartConnector)
	a.mux.HandleFunc("POST /connectors/{c}/tasks/{t}/restart", a.restartTask)
	a.mux.HandleFunc("GET /connectors/{c}/offsets", a.getOffsets)
	a.mux.HandleFunc("PATCH /connectors/{c}/offsets", a.alterOffsets)
	a.mux.HandleFunc("DELETE /connectors/{c}/offsets", a.resetOffsets)
	a.mux.HandleFunc("GET /connector-plugins", a.listPlugins)
	a.mux.HandleFunc("GET /connector-plugins/{p}/config", a.pluginConfig)
	a.mux.HandleFunc("GET /connector-plugins/{p}/schema", a.pluginSchema)
	a.mux.HandleFunc("PUT /connector-plugins/{p}/config/validate", a.validateConfig)
	// RocketMQ Connect's views.
	a.mux.HandleFunc("GET /getClusterInfo", a.clusterInfo)
	a.mux.HandleFunc("GET /allocated/connectors", a.allocatedConnectors)
	a.mux.HandleFunc("GET /allocated/tasks", a.allocatedTasks)
	a.mux.HandleFunc("GET /plugin/list", a.listPlugins)
	return a
}

// ServeHTTP routes r; a request no route takes is answered 404 or 405 in the API's error format.
func (a *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h, pattern := a.mux.Handler(r); pattern == "" {
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

func (a *Handler) listPlugins(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.h.Plugins())
}

// listConnectors answers the names, or with expand=status and/or expand=info a map name → {status, info}.
func (a *Handler) listConnectors(w http.ResponseWriter, r *http.Request) {
	expand := r.URL.Query()["expand"]
	info, status := slices.Contains(expand, "info"), slices.Contains(expand, "status")
	if !info && !status {
		writeJSON(w, http.StatusOK, a.h.Connectors())
		return
	}
	writeJSON(w, http.StatusOK, a.h.Expanded(info, status))
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
