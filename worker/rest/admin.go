package rest

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/eventbridge-go/eventbridge/rpc"
)

// boolParam reads an optional boolean query parameter; on a bad value it answers 400 and returns ok false.
func boolParam(w http.ResponseWriter, r *http.Request, name string) (v, ok bool) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, true
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("query parameter %s=%q must be true or false", name, s))
		return false, false
	}
	return v, true
}

// restartConnector answers as Kafka Connect 3.x (KIP-745): 204 when neither includeTasks nor onlyFailed is set
// (the connector alone restarts), else 202 with the connector's status. The restart has run when the answer
// comes, so the states are those after it rather than RESTARTING.
func (a *Handler) restartConnector(w http.ResponseWriter, r *http.Request) {
	includeTasks, ok := boolParam(w, r, "includeTasks")
	if !ok {
		return
	}
	onlyFailed, ok := boolParam(w, r, "onlyFailed")
	if !ok {
		return
	}
	st, err := a.h.Restart(r.Context(), r.PathValue("c"), includeTasks, onlyFailed)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if !includeTasks && !onlyFailed {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusAccepted, st)
}

func (a *Handler) restartTask(w http.ResponseWriter, r *http.Request) {
	t, err := strconv.Atoi(r.PathValue("t"))
	if err != nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("task %q not found", r.PathValue("t")))
		return
	}
	if err := a.h.RestartTask(r.Context(), r.PathValue("c"), t); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *Handler) getOffsets(w http.ResponseWriter, r *http.Request) {
	off, err := a.h.Offsets(r.Context(), r.PathValue("c"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, off)
}

func (a *Handler) alterOffsets(w http.ResponseWriter, r *http.Request) {
	var req rpc.ConnectorOffsets
	if !a.decode(w, r, &req) {
		return
	}
	msg, err := a.h.AlterOffsets(r.Context(), r.PathValue("c"), req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rpc.Message{Message: msg})
}

func (a *Handler) resetOffsets(w http.ResponseWriter, r *http.Request) {
	msg, err := a.h.ResetOffsets(r.Context(), r.PathValue("c"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rpc.Message{Message: msg})
}

func (a *Handler) pluginConfig(w http.ResponseWriter, r *http.Request) {
	keys, err := a.h.PluginConfig(r.PathValue("p"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, keys)
}

func (a *Handler) pluginSchema(w http.ResponseWriter, r *http.Request) {
	s, err := a.h.PluginSchema(r.PathValue("p"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/schema+json")
	w.WriteHeader(http.StatusOK)
	_ = jsonEncode(w, s)
}

// validateConfig answers 200 with every problem of the config as data; 400 only when the body is not a config.
func (a *Handler) validateConfig(w http.ResponseWriter, r *http.Request) {
	var cfg map[string]string
	if !a.decode(w, r, &cfg) {
		return
	}
	if cfg == nil {
		writeError(w, http.StatusBadRequest, "the body must be a JSON object of strings")
		return
	}
	out, err := a.h.ValidateConfig(r.PathValue("p"), cfg)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *Handler) clusterInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.h.ClusterInfo())
}

func (a *Handler) allocatedConnectors(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.h.AllocatedConnectors())
}

func (a *Handler) allocatedTasks(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.h.AllocatedTasks())
}
