package connect

import (
	"context"
	"errors"
	"net/http"
	"sort"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/runtime"
	"github.com/eventbridge-go/eventbridge/rpc"
)

var _ runtime.Runtime = (*Adapter)(nil)

// runtimeErr maps an error of the worker REST API to the domain: notFound (nil to keep it) for a 404, domain
// ErrUnavailable for a worker that cannot be reached or answers 502 to 504; anything else stays as it is (an
// internal failure).
func runtimeErr(err error, notFound *domain.Error) error {
	if err == nil {
		return nil
	}
	var re *rpc.Error
	if !errors.As(err, &re) {
		if errors.Is(err, context.Canceled) {
			return err
		}
		// A transport failure: connection refused, timeout, DNS.
		e := domain.ErrUnavailable.With("the worker runtime cannot be reached")
		e.Err = err
		return e
	}
	switch {
	case re.Status == http.StatusNotFound && notFound != nil:
		e := notFound.With("%s", re.Message)
		e.Err = err
		return e
	case re.Status == http.StatusBadGateway || re.Status == http.StatusServiceUnavailable || re.Status == http.StatusGatewayTimeout:
		e := domain.ErrUnavailable.With("the worker runtime is unavailable")
		e.Err = err
		return e
	}
	return err
}

// Workers lists the runtime's live workers (GET /getClusterInfo).
func (a *Adapter) Workers(ctx context.Context) ([]runtime.Worker, error) {
	info, err := a.cfg.Runtime.ClusterInfo(ctx)
	if err != nil {
		return nil, runtimeErr(err, nil)
	}
	out := make([]runtime.Worker, 0, len(info.Workers))
	for _, w := range info.Workers {
		out = append(out, runtime.Worker{ID: w.WorkerID, URL: w.URL, Version: w.Version, Started: w.Started,
			LastHeartbeat: w.LastHeartbeat})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Connectors lists every connector of the runtime with its state (GET /connectors?expand=status&expand=info),
// ordered by name.
func (a *Adapter) Connectors(ctx context.Context) ([]runtime.Connector, error) {
	all, err := a.cfg.Runtime.ListConnectors(ctx)
	if err != nil {
		return nil, runtimeErr(err, nil)
	}
	out := make([]runtime.Connector, 0, len(all))
	for name, c := range all {
		rc := runtime.Connector{Name: name, State: rpc.StateUnassigned}
		if c.Info != nil {
			rc.Type = c.Info.Type
		}
		if st := c.Status; st != nil {
			if st.Type != "" {
				rc.Type = st.Type
			}
			rc.State, rc.WorkerID, rc.Trace = st.Connector.State, st.Connector.WorkerID, st.Connector.Trace
			for _, ts := range st.Tasks {
				rc.Tasks = append(rc.Tasks, taskOf(ts))
			}
		}
		out = append(out, rc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func taskOf(ts rpc.TaskState) runtime.Task {
	t := runtime.Task{ID: ts.ID, State: ts.State, WorkerID: ts.WorkerID, Trace: ts.Trace, Health: factsOf(ts.Health)}
	if c := ts.Counters; c != nil {
		t.Counters = &runtime.Counters{Read: c.Read, Written: c.Written, Retried: c.Retried, Dropped: c.Dropped,
			Failed: c.Failed, Filtered: c.Filtered, DeadLettered: c.DeadLettered, Matched: c.Matched,
			Unmatched: c.Unmatched, Routed: c.Routed}
	}
	return t
}

// Pause pauses a connector (PUT /connectors/{c}/pause).
func (a *Adapter) Pause(ctx context.Context, connector string) error {
	return runtimeErr(a.cfg.Runtime.PauseConnector(ctx, connector), runtime.ErrConnectorNotFound)
}

// Resume resumes a paused or stopped connector (PUT /connectors/{c}/resume).
func (a *Adapter) Resume(ctx context.Context, connector string) error {
	return runtimeErr(a.cfg.Runtime.ResumeConnector(ctx, connector), runtime.ErrConnectorNotFound)
}

// Stop stops a connector (PUT /connectors/{c}/stop).
func (a *Adapter) Stop(ctx context.Context, connector string) error {
	return runtimeErr(a.cfg.Runtime.StopConnector(ctx, connector), runtime.ErrConnectorNotFound)
}

// Restart restarts a connector (POST /connectors/{c}/restart?includeTasks=&onlyFailed=).
func (a *Adapter) Restart(ctx context.Context, connector string, includeTasks, onlyFailed bool) error {
	_, err := a.cfg.Runtime.RestartConnector(ctx, connector, includeTasks, onlyFailed)
	return runtimeErr(err, runtime.ErrConnectorNotFound)
}

// RestartTask restarts one task (POST /connectors/{c}/tasks/{t}/restart). The worker answers 404 both for a
// connector and for a task it does not have; the connector's status tells which.
func (a *Adapter) RestartTask(ctx context.Context, connector string, task int) error {
	err := a.cfg.Runtime.RestartTask(ctx, connector, task)
	if !rpc.IsNotFound(err) {
		return runtimeErr(err, nil)
	}
	if _, serr := a.cfg.Runtime.ConnectorStatus(ctx, connector); serr != nil {
		return runtimeErr(serr, runtime.ErrConnectorNotFound)
	}
	return runtimeErr(err, runtime.ErrTaskNotFound)
}

// Plugins lists the connector plugins of the runtime (GET /connector-plugins).
func (a *Adapter) Plugins(ctx context.Context) ([]runtime.Plugin, error) {
	ps, err := a.cfg.Runtime.ListPlugins(ctx)
	if err != nil {
		return nil, runtimeErr(err, nil)
	}
	out := make([]runtime.Plugin, 0, len(ps))
	for _, p := range ps {
		out = append(out, runtime.Plugin{Class: p.Class, Type: p.Type, Version: p.Version})
	}
	return out, nil
}

// PluginSchema returns the JSON Schema of a plugin's config (GET /connector-plugins/{p}/schema).
func (a *Adapter) PluginSchema(ctx context.Context, plugin string) (map[string]any, error) {
	schema, err := a.cfg.Runtime.PluginSchema(ctx, plugin)
	if err != nil {
		return nil, runtimeErr(err, runtime.ErrPluginNotFound)
	}
	return schema, nil
}
