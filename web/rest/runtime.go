package rest

import (
	"github.com/eventbridge-go/eventbridge/web"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain/runtime"
)

// The worker runtime seen from the control plane: its workers, the connectors of the request's account with their
// tasks, actions on them, and the plugins the workers offer.
//
// An operator's pause or stop through these routes acts on the runtime only: it is not yet desired state kept in
// the database, so reconciliation does not keep it (a connector it recreates starts running again).

// RuntimeWorker is one live worker of the runtime.
type RuntimeWorker struct {
	ID string `json:"id" example:"embedded"`
	// URL is the worker's REST address when the runtime reports it.
	URL     string `json:"url,omitempty" example:"http://127.0.0.1:8083"`
	Version string `json:"version" example:"0.1.0"`
	// Started is when the worker joined the cluster.
	Started *time.Time `json:"started,omitempty"`
	// LastHeartbeat is when the worker's last heartbeat was stored (every 500 ms while it lives; a worker whose
	// heartbeat is 2 s old leaves the list).
	LastHeartbeat *time.Time `json:"lastHeartbeat,omitempty"`
} //@name RuntimeWorker

// RuntimeWorkerList lists the live workers, ordered by id.
type RuntimeWorkerList struct {
	Workers []RuntimeWorker `json:"workers"`
} //@name RuntimeWorkerList

// RuntimeTaskCounters count what a running task did with records since it started.
type RuntimeTaskCounters struct {
	Read         uint64 `json:"read"`
	Written      uint64 `json:"written"`
	Retried      uint64 `json:"retried"`
	Dropped      uint64 `json:"dropped"`
	Failed       uint64 `json:"failed"`
	Filtered     uint64 `json:"filtered"`
	DeadLettered uint64 `json:"deadLettered"`
	// Matched, Unmatched and Routed are counted by routers only.
	Matched   uint64 `json:"matched"`
	Unmatched uint64 `json:"unmatched"`
	Routed    uint64 `json:"routed"`
} //@name RuntimeTaskCounters

// RuntimeTask is one task of a connector.
type RuntimeTask struct {
	ID       int    `json:"id" example:"0"`
	State    string `json:"state" example:"RUNNING"`
	WorkerID string `json:"workerId" example:"embedded"`
	// Trace is the last error of a FAILED task.
	Trace string `json:"trace,omitempty"`
	// Counters are absent when the task does not run.
	Counters *RuntimeTaskCounters `json:"counters,omitempty"`
} //@name RuntimeTask

// RuntimeConnector is one connector of the account, as the runtime runs it.
type RuntimeConnector struct {
	// Name is eb.<account>.<bus>.router for a bus's router, eb.<account>.<bus>.<rule>.<target> for a target.
	Name string `json:"name" example:"eb.default.orders.created.hook"`
	Type string `json:"type" example:"sink"`
	// State is RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED or RESTARTING.
	State    string `json:"state" example:"RUNNING"`
	WorkerID string `json:"workerId" example:"embedded"`
	// Trace is the last error of a FAILED connector.
	Trace string        `json:"trace,omitempty"`
	Tasks []RuntimeTask `json:"tasks"`
	// Health is decided as a target's (docs/health.md): PENDING, HEALTHY, RETRYING, FAILING, DEAD_LETTERING,
	// PAUSED, STOPPED or FAILED; a connector whose tasks report no deliveries (a router, a source) is HEALTHY while
	// it runs. LastFailure is the latest failed attempt of its tasks since they started, LastSuccessAt the latest
	// success; both are absent when there was none since the tasks started.
	Health        string           `json:"health" example:"HEALTHY"`
	LastFailure   *DeliveryFailure `json:"lastFailure,omitempty"`
	LastSuccessAt *time.Time       `json:"lastSuccessAt,omitempty"`
} //@name RuntimeConnector

// RuntimeConnectorList lists the account's connectors, ordered by name.
type RuntimeConnectorList struct {
	Connectors []RuntimeConnector `json:"connectors"`
} //@name RuntimeConnectorList

// RuntimePlugin is a connector plugin that the workers offer.
type RuntimePlugin struct {
	Class   string `json:"class" example:"http"`
	Type    string `json:"type" example:"sink"`
	Version string `json:"version" example:"0.1.0"`
} //@name RuntimePlugin

// RuntimePluginList lists the plugins the workers offer.
type RuntimePluginList struct {
	Plugins []RuntimePlugin `json:"plugins"`
} //@name RuntimePluginList

// listRuntimeWorkers answers the live workers of the runtime (shared by every account).
//
//	@Summary	List the runtime's workers
//	@Tags		runtime
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Success	200				{object}	RuntimeWorkerList
//	@Failure	503				{object}	web.Problem	"ServiceUnavailable: the runtime cannot be reached"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/runtime/workers [get]
func (a *api) listRuntimeWorkers(c *gin.Context) (int, any, error) {
	ws, err := a.s.Runtime.Workers(c.Request.Context())
	if err != nil {
		return 0, nil, err
	}
	out := RuntimeWorkerList{Workers: make([]RuntimeWorker, 0, len(ws))}
	for _, w := range ws {
		rw := RuntimeWorker{ID: w.ID, URL: w.URL, Version: w.Version}
		if !w.Started.IsZero() {
			rw.Started = &w.Started
		}
		if !w.LastHeartbeat.IsZero() {
			rw.LastHeartbeat = &w.LastHeartbeat
		}
		out.Workers = append(out.Workers, rw)
	}
	return http.StatusOK, out, nil
}

func runtimeConnectorOf(rc runtime.Connector) RuntimeConnector {
	out := RuntimeConnector{Name: rc.Name, Type: rc.Type, State: rc.State, WorkerID: rc.WorkerID, Trace: rc.Trace,
		Tasks: make([]RuntimeTask, 0, len(rc.Tasks)), Health: rc.Health, LastFailure: failureOf(rc.LastFailure),
		LastSuccessAt: timeOrNil(rc.LastSuccessAt)}
	for _, t := range rc.Tasks {
		rt := RuntimeTask{ID: t.ID, State: t.State, WorkerID: t.WorkerID, Trace: t.Trace}
		if k := t.Counters; k != nil {
			rt.Counters = &RuntimeTaskCounters{Read: k.Read, Written: k.Written, Retried: k.Retried, Dropped: k.Dropped,
				Failed: k.Failed, Filtered: k.Filtered, DeadLettered: k.DeadLettered, Matched: k.Matched,
				Unmatched: k.Unmatched, Routed: k.Routed}
		}
		out.Tasks = append(out.Tasks, rt)
	}
	return out
}

// listRuntimeConnectors answers the connectors of the request's account (the ones named eb.<account>.…) with
// their states and tasks, as the runtime reports them now.
//
//	@Summary	List the account's connectors in the runtime
//	@Tags		runtime
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Success	200				{object}	RuntimeConnectorList
//	@Failure	400				{object}	web.Problem
//	@Failure	503				{object}	web.Problem	"ServiceUnavailable: the runtime cannot be reached"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/runtime/connectors [get]
func (a *api) listRuntimeConnectors(c *gin.Context) (int, any, error) {
	cs, err := a.s.Runtime.Connectors(c.Request.Context(), web.AccountOf(c))
	if err != nil {
		return 0, nil, err
	}
	out := RuntimeConnectorList{Connectors: make([]RuntimeConnector, 0, len(cs))}
	for _, rc := range cs {
		out.Connectors = append(out.Connectors, runtimeConnectorOf(rc))
	}
	return http.StatusOK, out, nil
}

// accepted is the answer of a runtime action that the runtime took (202), or its error.
func accepted(err error) (int, any, error) { return http.StatusAccepted, nil, err }

// pauseConnector pauses one of the account's connectors: its tasks stop taking records; the events routed to a
// paused target connector wait in the bus's stream and are delivered on resume. Not yet kept by reconciliation: a
// connector that reconciliation recreates runs again.
//
//	@Summary	Pause a connector
//	@Tags		runtime
//	@Produce	json
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's own)"
//	@Param		connector		path	string	true	"connector name"
//	@Success	202				"the runtime pauses the connector"
//	@Failure	404				{object}	web.Problem	"ConnectorNotFound"
//	@Failure	503				{object}	web.Problem	"ServiceUnavailable: the runtime cannot be reached"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/runtime/connectors/{connector}/pause [post]
func (a *api) pauseConnector(c *gin.Context) (int, any, error) {
	return accepted(a.s.Runtime.Pause(c.Request.Context(), web.AccountOf(c), c.Param("connector")))
}

// resumeConnector resumes one of the account's paused or stopped connectors.
//
//	@Summary	Resume a connector
//	@Tags		runtime
//	@Produce	json
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's own)"
//	@Param		connector		path	string	true	"connector name"
//	@Success	202				"the runtime resumes the connector"
//	@Failure	404				{object}	web.Problem	"ConnectorNotFound"
//	@Failure	503				{object}	web.Problem	"ServiceUnavailable: the runtime cannot be reached"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/runtime/connectors/{connector}/resume [post]
func (a *api) resumeConnector(c *gin.Context) (int, any, error) {
	return accepted(a.s.Runtime.Resume(c.Request.Context(), web.AccountOf(c), c.Param("connector")))
}

// stopConnector stops one of the account's connectors: its tasks end (resume starts them again). Not yet kept by
// reconciliation: a connector that reconciliation recreates runs again.
//
//	@Summary	Stop a connector
//	@Tags		runtime
//	@Produce	json
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's own)"
//	@Param		connector		path	string	true	"connector name"
//	@Success	202				"the runtime stops the connector"
//	@Failure	404				{object}	web.Problem	"ConnectorNotFound"
//	@Failure	503				{object}	web.Problem	"ServiceUnavailable: the runtime cannot be reached"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/runtime/connectors/{connector}/stop [post]
func (a *api) stopConnector(c *gin.Context) (int, any, error) {
	return accepted(a.s.Runtime.Stop(c.Request.Context(), web.AccountOf(c), c.Param("connector")))
}

// boolQuery reads an optional boolean query parameter (false when absent).
func boolQuery(c *gin.Context, name string) (bool, error) {
	s := c.Query(name)
	if s == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, web.Malformed(name, "%s %q is not true or false", name, s)
	}
	return v, nil
}

// restartConnector restarts one of the account's connectors, as Kafka Connect's POST /connectors/{c}/restart:
// the connector only by default, with its tasks when includeTasks, only the failed ones when onlyFailed.
//
//	@Summary	Restart a connector
//	@Tags		runtime
//	@Produce	json
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's own)"
//	@Param		connector		path	string	true	"connector name"
//	@Param		includeTasks	query	bool	false	"restart the tasks too (default false)"
//	@Param		onlyFailed		query	bool	false	"restart only what is FAILED (default false)"
//	@Success	202				"the runtime restarts the connector"
//	@Failure	400				{object}	web.Problem	"MalformedRequest: a flag that is not true or false"
//	@Failure	404				{object}	web.Problem	"ConnectorNotFound"
//	@Failure	503				{object}	web.Problem	"ServiceUnavailable: the runtime cannot be reached"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/runtime/connectors/{connector}/restart [post]
func (a *api) restartConnector(c *gin.Context) (int, any, error) {
	includeTasks, err := boolQuery(c, "includeTasks")
	if err != nil {
		return 0, nil, err
	}
	onlyFailed, err := boolQuery(c, "onlyFailed")
	if err != nil {
		return 0, nil, err
	}
	return accepted(a.s.Runtime.Restart(c.Request.Context(), web.AccountOf(c), c.Param("connector"), includeTasks, onlyFailed))
}

// restartConnectorTask restarts one task of one of the account's connectors.
//
//	@Summary	Restart a task of a connector
//	@Tags		runtime
//	@Produce	json
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's own)"
//	@Param		connector		path	string	true	"connector name"
//	@Param		task			path	int		true	"task number, from 0"
//	@Success	202				"the runtime restarts the task"
//	@Failure	400				{object}	web.Problem	"MalformedRequest: a task that is not a number"
//	@Failure	404				{object}	web.Problem	"ConnectorNotFound or TaskNotFound"
//	@Failure	503				{object}	web.Problem	"ServiceUnavailable: the runtime cannot be reached"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/runtime/connectors/{connector}/tasks/{task}/restart [post]
func (a *api) restartConnectorTask(c *gin.Context) (int, any, error) {
	task, err := strconv.Atoi(c.Param("task"))
	if err != nil || task < 0 {
		return 0, nil, web.Malformed("task", "task %q is not a task number (0, 1, ...)", c.Param("task"))
	}
	return accepted(a.s.Runtime.RestartTask(c.Request.Context(), web.AccountOf(c), c.Param("connector"), task))
}

// listRuntimePlugins answers the connector plugins the workers offer (shared by every account).
//
//	@Summary	List the runtime's plugins
//	@Tags		runtime
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Success	200				{object}	RuntimePluginList
//	@Failure	503				{object}	web.Problem	"ServiceUnavailable: the runtime cannot be reached"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/runtime/plugins [get]
func (a *api) listRuntimePlugins(c *gin.Context) (int, any, error) {
	ps, err := a.s.Runtime.Plugins(c.Request.Context())
	if err != nil {
		return 0, nil, err
	}
	out := RuntimePluginList{Plugins: make([]RuntimePlugin, 0, len(ps))}
	for _, p := range ps {
		out.Plugins = append(out.Plugins, RuntimePlugin{Class: p.Class, Type: p.Type, Version: p.Version})
	}
	return http.StatusOK, out, nil
}

// runtimePluginSchema answers the JSON Schema (2020-12) of a plugin's config, for forms.
//
//	@Summary	Read the JSON Schema of a plugin's config
//	@Tags		runtime
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		plugin			path		string	true	"plugin class"
//	@Success	200				{object}	object	"a JSON Schema"
//	@Failure	404				{object}	web.Problem	"PluginNotFound"
//	@Failure	503				{object}	web.Problem	"ServiceUnavailable: the runtime cannot be reached"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/runtime/plugins/{plugin}/schema [get]
func (a *api) runtimePluginSchema(c *gin.Context) (int, any, error) {
	schema, err := a.s.Runtime.PluginSchema(c.Request.Context(), c.Param("plugin"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, schema, nil
}
