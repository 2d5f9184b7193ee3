package web_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/health"
	"github.com/eventbridge-go/eventbridge/domain/runtime"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/web/rest"
)

// fakeWorkers is the worker runtime at its process boundary: one worker, a router connector per bus of buses
// (or the fixed connectors when buses is nil), the http plugin. down makes every call fail as an unreachable
// runtime does. It records the actions it was asked for.
type fakeWorkers struct {
	buses      bus.Repository
	connectors []string
	down       bool

	mu      sync.Mutex
	actions []string
}

var _ runtime.Runtime = (*fakeWorkers)(nil)

func (f *fakeWorkers) unreachable() error {
	if f.down {
		return domain.ErrUnavailable.With("the worker runtime cannot be reached")
	}
	return nil
}

func (f *fakeWorkers) Workers(context.Context) ([]runtime.Worker, error) {
	if err := f.unreachable(); err != nil {
		return nil, err
	}
	return []runtime.Worker{{ID: "w1", URL: "http://127.0.0.1:8083", Version: "test"}}, nil
}

func (f *fakeWorkers) names(ctx context.Context) ([]string, error) {
	if f.buses == nil {
		return f.connectors, nil
	}
	bs, err := f.buses.ListAll(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range bs {
		out = append(out, "eb."+b.AccountID()+"."+b.Name()+".router")
	}
	return out, nil
}

func (f *fakeWorkers) Connectors(ctx context.Context) ([]runtime.Connector, error) {
	if err := f.unreachable(); err != nil {
		return nil, err
	}
	names, err := f.names(ctx)
	if err != nil {
		return nil, err
	}
	var out []runtime.Connector
	for _, n := range names {
		out = append(out, runtime.Connector{Name: n, Type: "sink", State: "RUNNING", WorkerID: "w1",
			Tasks: []runtime.Task{{ID: 0, State: "RUNNING", WorkerID: "w1", Counters: &runtime.Counters{Read: 3, Written: 2, DeadLettered: 1},
				// Twelve failed attempts in a row, a record waiting: FAILING, with its last failure.
				Health: &health.Facts{FailuresSinceSuccess: 12, RetryScheduled: true, FailingSince: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC),
					LastFailure: &health.Failure{At: time.Date(2026, 12, 3, 9, 30, 0, 0, time.UTC), Attempt: 12, Class: "connection-refused",
						Message: "dial tcp 127.0.0.1:1: connect: connection refused"}}}}})
	}
	return out, nil
}

func (f *fakeWorkers) act(ctx context.Context, action, connector string, task int) error {
	if err := f.unreachable(); err != nil {
		return err
	}
	names, err := f.names(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		if n == connector {
			if task > 0 {
				return runtime.ErrTaskNotFound
			}
			f.mu.Lock()
			f.actions = append(f.actions, action+" "+connector)
			f.mu.Unlock()
			return nil
		}
	}
	return runtime.ErrConnectorNotFound
}

func (f *fakeWorkers) Pause(ctx context.Context, c string) error  { return f.act(ctx, "pause", c, 0) }
func (f *fakeWorkers) Resume(ctx context.Context, c string) error { return f.act(ctx, "resume", c, 0) }
func (f *fakeWorkers) Stop(ctx context.Context, c string) error   { return f.act(ctx, "stop", c, 0) }
func (f *fakeWorkers) Restart(ctx context.Context, c string, includeTasks, onlyFailed bool) error {
	action := "restart"
	if includeTasks {
		action += " includeTasks"
	}
	if onlyFailed {
		action += " onlyFailed"
	}
	return f.act(ctx, action, c, 0)
}
func (f *fakeWorkers) RestartTask(ctx context.Context, c string, task int) error {
	return f.act(ctx, "restart-task", c, task)
}

func (f *fakeWorkers) Plugins(context.Context) ([]runtime.Plugin, error) {
	if err := f.unreachable(); err != nil {
		return nil, err
	}
	return []runtime.Plugin{{Class: "http", Type: "sink", Version: "test"}}, nil
}

func (f *fakeWorkers) PluginSchema(_ context.Context, plugin string) (map[string]any, error) {
	if err := f.unreachable(); err != nil {
		return nil, err
	}
	if plugin != "http" {
		return nil, runtime.ErrPluginNotFound
	}
	return map[string]any{"type": "object", "properties": map[string]any{"url": map[string]any{"type": "string"}}}, nil
}

// withRuntime gives e's router a runtime service on a fake runtime with one router connector per bus.
func withRuntime(e *env) *env {
	e.services.Runtime = &runtime.Service{Runtime: &fakeWorkers{buses: e.buses}}
	e.router = newRouter(web.Config{Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, e.services)
	return e
}

func TestRuntimeRoutes(t *testing.T) {
	t.Parallel()
	const own, othersConn = "eb.default.orders.router", "eb.other.orders.router"
	tests := []struct {
		name        string
		down        bool
		method, url string
		account     string
		wantStatus  int
		wantCode    string
		wantBody    string // a JSON the answer must equal, when not ""
		wantAction  string // the action the runtime was asked for, when not ""
	}{
		{name: "workers", method: "GET", url: "/api/v1/runtime/workers", wantStatus: 200,
			wantBody: `{"workers":[{"id":"w1","url":"http://127.0.0.1:8083","version":"test"}]}`},
		{name: "connectors of the account only", method: "GET", url: "/api/v1/runtime/connectors", wantStatus: 200,
			wantBody: `{"connectors":[{"name":"eb.default.orders.router","type":"sink","state":"RUNNING","workerId":"w1","tasks":[{"id":0,"state":"RUNNING","workerId":"w1","counters":{"read":3,"written":2,"retried":0,"dropped":0,"failed":0,"filtered":0,"deadLettered":1,"matched":0,"unmatched":0,"routed":0}}],` +
				`"health":"FAILING","lastFailure":{"at":"2026-12-03T09:30:00Z","attempt":12,"errorClass":"connection-refused","message":"dial tcp 127.0.0.1:1: connect: connection refused"}}]}`},
		{name: "connectors of an account with none", method: "GET", url: "/api/v1/runtime/connectors", account: "nobody",
			wantStatus: 200, wantBody: `{"connectors":[]}`},
		{name: "pause", method: "POST", url: "/api/v1/runtime/connectors/" + own + "/pause", wantStatus: 202, wantAction: "pause " + own},
		{name: "resume", method: "POST", url: "/api/v1/runtime/connectors/" + own + "/resume", wantStatus: 202, wantAction: "resume " + own},
		{name: "stop", method: "POST", url: "/api/v1/runtime/connectors/" + own + "/stop", wantStatus: 202, wantAction: "stop " + own},
		{name: "restart", method: "POST", url: "/api/v1/runtime/connectors/" + own + "/restart", wantStatus: 202, wantAction: "restart " + own},
		{name: "restart with flags", method: "POST", url: "/api/v1/runtime/connectors/" + own + "/restart?includeTasks=true&onlyFailed=true",
			wantStatus: 202, wantAction: "restart includeTasks onlyFailed " + own},
		{name: "restart with a flag that is no boolean", method: "POST", url: "/api/v1/runtime/connectors/" + own + "/restart?onlyFailed=yes please",
			wantStatus: 400, wantCode: web.CodeMalformedRequest},
		{name: "restart a task", method: "POST", url: "/api/v1/runtime/connectors/" + own + "/tasks/0/restart", wantStatus: 202,
			wantAction: "restart-task " + own},
		{name: "restart a task the connector does not have", method: "POST", url: "/api/v1/runtime/connectors/" + own + "/tasks/3/restart",
			wantStatus: 404, wantCode: "TaskNotFound"},
		{name: "restart a task that is no number", method: "POST", url: "/api/v1/runtime/connectors/" + own + "/tasks/x/restart",
			wantStatus: 400, wantCode: web.CodeMalformedRequest},
		{name: "pause a connector of another account", method: "POST", url: "/api/v1/runtime/connectors/" + othersConn + "/pause",
			wantStatus: 404, wantCode: "ConnectorNotFound"},
		{name: "pause a connector that does not exist", method: "POST", url: "/api/v1/runtime/connectors/eb.default.nope.router/pause",
			wantStatus: 404, wantCode: "ConnectorNotFound"},
		{name: "pause a connector that is not of the control plane", method: "POST", url: "/api/v1/runtime/connectors/mine/pause",
			wantStatus: 404, wantCode: "ConnectorNotFound"},
		{name: "plugins", method: "GET", url: "/api/v1/runtime/plugins", wantStatus: 200,
			wantBody: `{"plugins":[{"class":"http","type":"sink","version":"test"}]}`},
		{name: "plugin schema", method: "GET", url: "/api/v1/runtime/plugins/http/schema", wantStatus: 200,
			wantBody: `{"type":"object","properties":{"url":{"type":"string"}}}`},
		{name: "schema of a plugin that does not exist", method: "GET", url: "/api/v1/runtime/plugins/nope/schema", wantStatus: 404,
			wantCode: "PluginNotFound"},
		{name: "workers while the runtime is down", down: true, method: "GET", url: "/api/v1/runtime/workers", wantStatus: 503,
			wantCode: "ServiceUnavailable"},
		{name: "connectors while the runtime is down", down: true, method: "GET", url: "/api/v1/runtime/connectors", wantStatus: 503,
			wantCode: "ServiceUnavailable"},
		{name: "pause while the runtime is down", down: true, method: "POST", url: "/api/v1/runtime/connectors/" + own + "/pause",
			wantStatus: 503, wantCode: "ServiceUnavailable"},
		{name: "schema while the runtime is down", down: true, method: "GET", url: "/api/v1/runtime/plugins/http/schema", wantStatus: 503,
			wantCode: "ServiceUnavailable"},
	}
	var ids web.Services
	key := withIdentity(t, persistencetest.Open(t, persistence.SQLite), &ids)
	ensureAccount(t, ids, "nobody")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeWorkers{connectors: []string{own, othersConn}, down: tc.down}
			s := ids
			s.Runtime = &runtime.Service{Runtime: f}
			h := newRouter(web.Config{}, s)
			req := localRequest(tc.method, strings.ReplaceAll(tc.url, " ", "%20"), nil)
			req.Header.Set("Authorization", "Bearer "+key)
			if tc.account != "" {
				req.Header.Set(rest.AccountHeader, tc.account)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equalf(t, tc.wantStatus, rec.Code, "answer: %s", rec.Body)
			if tc.wantCode != "" {
				var p web.Problem
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
				assert.Equal(t, tc.wantCode, p.Code)
				assert.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
			}
			if tc.wantBody != "" {
				assert.JSONEq(t, tc.wantBody, rec.Body.String())
			}
			if tc.wantAction != "" {
				assert.Equal(t, []string{tc.wantAction}, f.actions)
			} else {
				assert.Empty(t, f.actions, "the runtime was asked for nothing")
			}
		})
	}
}
