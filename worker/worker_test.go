package worker_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/herder"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
	"github.com/eventbridge-go/eventbridge/worker/plugins/router"
)

const (
	wait = 15 * time.Second
	tick = 10 * time.Millisecond
	bus  = "b1"
)

var names = stream.Names{Cluster: "eb"}

// testToken is the cluster token of the tests' workers.
const testToken = "worker-test-cluster-token-0123456789"

func registry(t *testing.T) *connector.Registry {
	r := connector.NewRegistry()
	require.NoError(t, r.Register(router.Plugin()))
	require.NoError(t, r.Register(httpsink.Plugin()))
	return r
}

func startWorker(t *testing.T, env *jetstreamtest.Env) (*worker.Worker, *rpc.Client) {
	t.Helper()
	return startWorkerStopping(t, env, 5*time.Second)
}

// startWorkerStopping starts a worker whose tasks stop within stopTimeout.
func startWorkerStopping(t *testing.T, env *jetstreamtest.Env, stopTimeout time.Duration) (*worker.Worker, *rpc.Client) {
	t.Helper()
	w, err := worker.New(worker.Config{
		Token: testToken, NATS: env.Conn, WorkerID: "w1", RESTAddr: "127.0.0.1:0", AllowPrivateTargets: true,
		Registry: registry(t), StopTimeout: stopTimeout,
	})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	return w, rpc.NewClient(w.URL(), rpc.WithToken(testToken))
}

func busEnv(t *testing.T) *jetstreamtest.Env {
	env := jetstreamtest.Start(t)
	require.NoError(t, names.EnsureBusStream(context.Background(), env.JS, bus, time.Hour, -1, 1))
	return env
}

// target is an HTTP target that records the ids of the events it accepted. It answers 503 to the first
// failFirst requests and holds requests while hold is set.
type target struct {
	srv *httptest.Server

	mu        sync.Mutex
	got       []string
	requests  int
	failFirst int
	hold      chan struct{}
	held      int
}

func newTarget(t *testing.T) *target {
	tg := &target{}
	tg.srv = httptest.NewServer(tg)
	t.Cleanup(tg.srv.Close)
	return tg
}

func (tg *target) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	tg.mu.Lock()
	tg.requests++
	fail := tg.requests <= tg.failFirst
	hold := tg.hold
	if hold != nil {
		tg.held++
	}
	tg.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if fail {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	tg.mu.Lock()
	tg.got = append(tg.got, r.Header.Get("Ce-Id"))
	tg.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (tg *target) Got() []string {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]string(nil), tg.got...)
}

func (tg *target) has(id string) bool { return slices.Contains(tg.Got(), id) }

func (tg *target) Held() int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.held
}

func fastRetries(cfg map[string]string) map[string]string {
	cfg[connector.KeyRetryDelayInitial] = "20"
	cfg[connector.KeyRetryDelayMax] = "100"
	return cfg
}

func routerName() string { return "eb.acct.orders.router" }

func routerConfig(t *testing.T, rules ...router.Rule) map[string]string {
	b, err := json.Marshal(rules)
	require.NoError(t, err)
	return fastRetries(map[string]string{
		connector.KeyClass:   router.Name,
		connector.KeyTopics:  names.BusIn(bus),
		connector.KeyStream:  names.BusStream(bus),
		connector.KeyDurable: names.RouterConsumer(bus),
		router.KeyRules:      string(b),
	})
}

func rule(id, typ string, from uint64) router.Rule {
	return router.Rule{ID: id, Subject: names.RuleSubject(bus, id), Pattern: json.RawMessage(`{"type": ["` + typ + `"]}`), FromSequence: from}
}

func targetName(ruleID string) string { return "eb.acct.orders." + ruleID + ".hook" }

func targetConfig(ruleID, url string) map[string]string {
	return fastRetries(map[string]string{
		connector.KeyClass:   httpsink.Name,
		connector.KeyTopics:  names.RuleSubject(bus, ruleID),
		connector.KeyStream:  names.BusStream(bus),
		connector.KeyDurable: names.TargetConsumer(ruleID, "t1"),
		httpsink.KeyURL:      url,
		httpsink.KeyTimeout:  "2s",
	})
}

func put(t *testing.T, env *jetstreamtest.Env, id, typ string) uint64 {
	return env.Publish(t, names.BusIn(bus), jetstreamtest.Event(id, typ, map[string]any{"id": id}))
}

// raw sends a request and returns the status and the decoded error answer (if any).
func raw(t *testing.T, method, url, body string) (int, rpc.ErrorResponse) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var er rpc.ErrorResponse
	if resp.StatusCode >= 300 {
		require.NoError(t, json.Unmarshal(data, &er), "error answers are JSON: %s", data)
		assert.Equal(t, resp.StatusCode, er.ErrorCode)
	}
	return resp.StatusCode, er
}

func consumerExists(t *testing.T, env *jetstreamtest.Env, durable string) bool {
	_, err := env.JS.Consumer(context.Background(), names.BusStream(bus), durable)
	if err != nil {
		require.ErrorIs(t, err, jetstream.ErrConsumerNotFound)
		return false
	}
	return true
}

func TestAPIErrors(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	w, client := startWorker(t, env)
	ctx := context.Background()
	base := w.URL()

	info, err := client.ServerInfo(ctx)
	require.NoError(t, err)
	assert.Equal(t, "w1", info.WorkerID)
	assert.Equal(t, "eb", info.ClusterID)
	assert.Equal(t, herder.Version, info.Version)

	plugins, err := client.ListPlugins(ctx)
	require.NoError(t, err)
	assert.Equal(t, []rpc.PluginInfo{{Class: "http", Type: "sink", Version: "1.0.0"}, {Class: "router", Type: "sink", Version: "1.0.0"}}, plugins)

	valid := targetConfig("r1", "http://127.0.0.1:1")
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range valid {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	tests := []struct {
		name     string
		req      rpc.CreateConnectorRequest
		wantKeys []string // named in the message
	}{
		{"unknown plugin", rpc.CreateConnectorRequest{Name: "c1", Config: with(connector.KeyClass, "kafka")},
			[]string{"connector.class", `unknown plugin "kafka"`}},
		{"every problem named", rpc.CreateConnectorRequest{Name: "c1", Config: with(httpsink.KeyURL, "", httpsink.KeyMode, "zip", connector.KeyTasksMax, "0")},
			[]string{"3 error(s)", "tasks.max", "url: is required", "mode"}},
		{"bad rule table", rpc.CreateConnectorRequest{Name: "c1", Config: routerConfig(t, router.Rule{ID: "r1", Subject: "x", Pattern: json.RawMessage(`{"a": [{"bad": 1}]}`)})},
			[]string{"router.rules", `unsupported operator "bad"`}},
		{"bad name", rpc.CreateConnectorRequest{Name: "a b", Config: valid}, []string{"connector name"}},
		{"no name", rpc.CreateConnectorRequest{Config: valid}, []string{"name is required"}},
		{"no config", rpc.CreateConnectorRequest{Name: "c1"}, []string{"config is required"}},
		{"name differs", rpc.CreateConnectorRequest{Name: "c1", Config: with("name", "c2")}, []string{"differs"}},
		{"bad initial state", rpc.CreateConnectorRequest{Name: "c1", Config: valid, InitialState: "FLYING"}, []string{"initial_state"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.CreateConnector(ctx, tt.req)
			require.Error(t, err)
			assert.True(t, rpc.IsBadRequest(err), "%v", err)
			for _, k := range tt.wantKeys {
				assert.Contains(t, err.Error(), k)
			}
		})
	}
	assert.Empty(t, mustList(t, client), "nothing was created")

	for _, r := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/connectors", "{not json", 400},
		{"POST", "/connectors", `{"name": "c1", "config": {"a": 1}}`, 400},
		{"PUT", "/connectors/c1/config", "[1,2]", 400},
		{"PUT", "/connectors/c1/config", "", 400},
		{"GET", "/connectors/nope", "", 404},
		{"GET", "/connectors/nope/config", "", 404},
		{"GET", "/connectors/nope/status", "", 404},
		{"GET", "/connectors/nope/tasks", "", 404},
		{"GET", "/connectors/nope/tasks/0/status", "", 404},
		{"PUT", "/connectors/nope/pause", "", 404},
		{"PUT", "/connectors/nope/resume", "", 404},
		{"PUT", "/connectors/nope/stop", "", 404},
		{"DELETE", "/connectors/nope", "", 404},
		{"GET", "/nowhere", "", 404},
		{"PATCH", "/connectors", "", 405},
	} {
		status, er := raw(t, r.method, base+r.path, r.body)
		assert.Equal(t, r.status, status, "%s %s: %s", r.method, r.path, er.Message)
		assert.NotEmpty(t, er.Message, "%s %s", r.method, r.path)
	}
}

func mustList(t *testing.T, c *rpc.Client) []string {
	names, err := c.ListConnectorNames(context.Background())
	require.NoError(t, err)
	return names
}

// The channel end to end: PutEvents → router → rule subject → http target, driven through the REST API.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	_, client := startWorker(t, env)
	ctx := context.Background()
	hook := newTarget(t)

	// A target connector answers once its consumer exists.
	created, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r1"), Config: targetConfig("r1", hook.srv.URL)})
	require.NoError(t, err)
	assert.Equal(t, targetName("r1"), created.Name)
	assert.Equal(t, "sink", created.Type)
	assert.Equal(t, []rpc.TaskID{{Connector: targetName("r1"), Task: 0}}, created.Tasks)
	assert.True(t, consumerExists(t, env, names.TargetConsumer("r1", "t1")))

	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(), Config: routerConfig(t, rule("r1", "order.created", 0))})
	require.NoError(t, err)
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(), Config: routerConfig(t)})
	assert.True(t, rpc.IsConflict(err), "%v", err)

	put(t, env, "e1", "order.created")
	put(t, env, "e2", "order.paid")
	require.Eventually(t, func() bool { return hook.has("e1") }, wait, tick)

	// Reads.
	info, err := client.GetConnector(ctx, targetName("r1"))
	require.NoError(t, err)
	assert.Equal(t, targetConfig("r1", hook.srv.URL), info.Config)
	cfg, err := client.GetConnectorConfig(ctx, targetName("r1"))
	require.NoError(t, err)
	assert.Equal(t, targetConfig("r1", hook.srv.URL), cfg)
	st, err := client.ConnectorStatus(ctx, targetName("r1"))
	require.NoError(t, err)
	assert.Equal(t, rpc.StateRunning, st.Connector.State)
	assert.Equal(t, "w1", st.Connector.WorkerID)
	require.Len(t, st.Tasks, 1)
	assert.Equal(t, rpc.StateRunning, st.Tasks[0].State)
	assert.Equal(t, "w1", st.Tasks[0].WorkerID)
	require.Eventually(t, func() bool {
		st, err := client.ConnectorStatus(ctx, routerName())
		return err == nil && len(st.Tasks) == 1 && st.Tasks[0].Counters.Written == 2
	}, wait, tick, "the router read both events")
	tasks, err := client.ListTasks(ctx, targetName("r1"))
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	assert.Equal(t, rpc.TaskID{Connector: targetName("r1"), Task: 0}, tasks[0].ID)
	ts, err := client.TaskStatus(ctx, targetName("r1"), 0)
	require.NoError(t, err)
	assert.Equal(t, rpc.StateRunning, ts.State)
	assert.Equal(t, []string{targetName("r1"), routerName()}, mustList(t, client), "sorted")
	all, err := client.ListConnectors(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, rpc.StateRunning, all[routerName()].Status.Connector.State)
	assert.Equal(t, router.Name, all[routerName()].Info.Config[connector.KeyClass])

	// Paused: routed events wait in the stream; resumed: they are delivered.
	require.NoError(t, client.PauseConnector(ctx, targetName("r1")))
	st, err = client.ConnectorStatus(ctx, targetName("r1"))
	require.NoError(t, err)
	assert.Equal(t, rpc.StatePaused, st.Connector.State)
	assert.Equal(t, rpc.StatePaused, st.Tasks[0].State)
	put(t, env, "e3", "order.created")
	require.Eventually(t, func() bool {
		return env.ConsumerInfo(t, names.BusStream(bus), names.TargetConsumer("r1", "t1")).NumPending == 1
	}, wait, tick, "the routed event waits for the paused target")
	assert.False(t, hook.has("e3"))
	require.NoError(t, client.ResumeConnector(ctx, targetName("r1")))
	require.Eventually(t, func() bool { return hook.has("e3") }, wait, tick)

	// A rule added to the router receives the events stored after it, none before; a new target's consumer
	// exists before its PUT answers.
	hook2 := newTarget(t)
	_, createdNow, err := putConfig(client, targetName("r2"), targetConfig("r2", hook2.srv.URL))
	require.NoError(t, err)
	assert.True(t, createdNow)
	assert.True(t, consumerExists(t, env, names.TargetConsumer("r2", "t1")))
	seq4 := put(t, env, "e4", "order.paid") // before the rule: never delivered to it
	require.Eventually(t, func() bool {
		return env.ConsumerInfo(t, names.BusStream(bus), names.RouterConsumer(bus)).AckFloor.Stream >= seq4
	}, wait, tick)
	last, err := names.LastSequence(ctx, env.JS, bus)
	require.NoError(t, err)
	_, createdNow, err = putConfig(client, routerName(), routerConfig(t, rule("r1", "order.created", 0), rule("r2", "order.paid", last)))
	require.NoError(t, err)
	assert.False(t, createdNow)
	put(t, env, "e5", "order.paid")
	require.Eventually(t, func() bool { return hook2.has("e5") }, wait, tick)
	assert.Equal(t, []string{"e5"}, hook2.Got())

	// Delete: tasks stop, the consumer goes, the name is free.
	require.NoError(t, client.DeleteConnector(ctx, targetName("r1")))
	assert.False(t, consumerExists(t, env, names.TargetConsumer("r1", "t1")))
	_, err = client.GetConnector(ctx, targetName("r1"))
	assert.True(t, rpc.IsNotFound(err), "%v", err)
	assert.Equal(t, []string{targetName("r2"), routerName()}, mustList(t, client))
	assert.Equal(t, []string{"e1", "e3"}, hook.Got(), "each event delivered once")
}

func putConfig(c *rpc.Client, name string, cfg map[string]string) (*rpc.ConnectorInfo, bool, error) {
	req, err := http.NewRequest(http.MethodPut, c.BaseURL+"/connectors/"+name+"/config", strings.NewReader(mustJSON(cfg)))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	var info rpc.ConnectorInfo
	if resp.StatusCode >= 300 {
		var er rpc.ErrorResponse
		_ = json.NewDecoder(resp.Body).Decode(&er)
		return nil, false, &rpc.Error{Status: resp.StatusCode, Code: er.ErrorCode, Message: er.Message}
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return nil, false, err
	}
	return &info, resp.StatusCode == http.StatusCreated, nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestInitialStates(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	_, client := startWorker(t, env)
	ctx := context.Background()
	hook := newTarget(t)
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(), Config: routerConfig(t, rule("r1", "t", 0), rule("r2", "t", 0))})
	require.NoError(t, err)

	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r1"), Config: targetConfig("r1", hook.srv.URL), InitialState: rpc.StatePaused})
	require.NoError(t, err)
	st, err := client.ConnectorStatus(ctx, targetName("r1"))
	require.NoError(t, err)
	assert.Equal(t, rpc.StatePaused, st.Connector.State)
	assert.True(t, consumerExists(t, env, names.TargetConsumer("r1", "t1")), "a paused connector's consumer exists: events wait for it")

	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r2"), Config: targetConfig("r2", hook.srv.URL), InitialState: rpc.StateStopped})
	require.NoError(t, err)
	st, err = client.ConnectorStatus(ctx, targetName("r2"))
	require.NoError(t, err)
	assert.Equal(t, rpc.StateStopped, st.Connector.State)
	assert.Empty(t, st.Tasks)
	info, err := client.GetConnector(ctx, targetName("r2"))
	require.NoError(t, err)
	assert.Empty(t, info.Tasks, "a stopped connector has no tasks")
	assert.True(t, consumerExists(t, env, names.TargetConsumer("r2", "t1")))

	put(t, env, "e1", "t")
	require.Eventually(t, func() bool {
		return env.ConsumerInfo(t, names.BusStream(bus), names.TargetConsumer("r2", "t1")).NumPending == 1 &&
			env.ConsumerInfo(t, names.BusStream(bus), names.TargetConsumer("r1", "t1")).NumPending == 1
	}, wait, tick)
	assert.Empty(t, hook.Got())
	require.NoError(t, client.ResumeConnector(ctx, targetName("r1")))
	require.NoError(t, client.ResumeConnector(ctx, targetName("r2")))
	require.Eventually(t, func() bool { return len(hook.Got()) == 2 }, wait, tick)
	require.NoError(t, client.StopConnector(ctx, targetName("r2")))
	st, err = client.ConnectorStatus(ctx, targetName("r2"))
	require.NoError(t, err)
	assert.Equal(t, rpc.StateStopped, st.Connector.State)
}

// A worker closed and created again on the same NATS runs its persisted connectors, in their target states, and
// delivers what was put meanwhile.
func TestRestartRunsPersistedConnectors(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	ctx := context.Background()
	hook := newTarget(t)
	w1, client := startWorker(t, env)
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(), Config: routerConfig(t, rule("r1", "t", 0), rule("r2", "t", 0))})
	require.NoError(t, err)
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r1"), Config: targetConfig("r1", hook.srv.URL)})
	require.NoError(t, err)
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r2"), Config: targetConfig("r2", hook.srv.URL), InitialState: rpc.StatePaused})
	require.NoError(t, err)
	put(t, env, "e1", "t")
	require.Eventually(t, func() bool { return hook.has("e1") }, wait, tick)
	require.NoError(t, w1.Close(ctx))

	put(t, env, "e2", "t") // while no worker runs
	_, client = startWorker(t, env)
	assert.Equal(t, []string{targetName("r1"), targetName("r2"), routerName()}, mustList(t, client))
	require.Eventually(t, func() bool { return hook.has("e2") }, wait, tick)
	st, err := client.ConnectorStatus(ctx, targetName("r2"))
	require.NoError(t, err)
	assert.Equal(t, rpc.StatePaused, st.Connector.State, "the target state survives a restart")
	st, err = client.ConnectorStatus(ctx, routerName())
	require.NoError(t, err)
	assert.Equal(t, rpc.StateRunning, st.Connector.State)
	assert.Equal(t, []string{"e1", "e2"}, hook.Got())
}

func TestRetriesAndDrops(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	_, client := startWorker(t, env)
	ctx := context.Background()
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(), Config: routerConfig(t, rule("r1", "t", 0), rule("r2", "t", 0))})
	require.NoError(t, err)

	flaky := newTarget(t)
	flaky.failFirst = 3
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r1"), Config: targetConfig("r1", flaky.srv.URL)})
	require.NoError(t, err)

	down := newTarget(t)
	down.failFirst = 1 << 30
	cfg := targetConfig("r2", down.srv.URL)
	cfg[connector.KeyRetryMaxAttempts] = "2"
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r2"), Config: cfg})
	require.NoError(t, err)

	put(t, env, "e1", "t")
	require.Eventually(t, func() bool { return flaky.has("e1") }, wait, tick, "delivered after 3 failures")
	require.Eventually(t, func() bool {
		st, err := client.ConnectorStatus(ctx, targetName("r2"))
		return err == nil && st.Tasks[0].Counters.Dropped == 1
	}, wait, tick, "dropped once its attempts are exhausted")

	// The target records e1 before it answers: the task counts the write once it has the answer.
	var st *rpc.ConnectorStatus
	require.Eventually(t, func() bool {
		st, err = client.ConnectorStatus(ctx, targetName("r1"))
		return err == nil && len(st.Tasks) == 1 && st.Tasks[0].Counters.Written == 1
	}, wait, tick, "written once")
	assert.Equal(t, uint64(3), st.Tasks[0].Counters.Retried)
	down.mu.Lock()
	assert.Equal(t, 3, down.requests, "2 retries: 3 attempts")
	down.mu.Unlock()
	info := env.ConsumerInfo(t, names.BusStream(bus), names.TargetConsumer("r2", "t1"))
	assert.Equal(t, 0, info.NumAckPending, "a dropped record is acked")
}

// A config change restarts the tasks; the record being written is finished or handed back, never lost.
func TestConfigChangeLosesNothing(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	_, client := startWorker(t, env)
	ctx := context.Background()
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(), Config: routerConfig(t, rule("r1", "t", 0))})
	require.NoError(t, err)
	hook := newTarget(t)
	hook.hold = make(chan struct{})
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r1"), Config: targetConfig("r1", hook.srv.URL)})
	require.NoError(t, err)
	put(t, env, "e1", "t")
	require.Eventually(t, func() bool { return hook.Held() == 1 }, wait, tick)

	changed := targetConfig("r1", hook.srv.URL)
	changed[connector.KeyTasksMax] = "2"
	done := make(chan error, 1)
	go func() {
		_, _, err := putConfig(client, targetName("r1"), changed)
		done <- err
	}()
	hook.mu.Lock()
	close(hook.hold)
	hook.hold = nil
	hook.mu.Unlock()
	require.NoError(t, <-done)
	info, err := client.GetConnector(ctx, targetName("r1"))
	require.NoError(t, err)
	assert.Len(t, info.Tasks, 2)
	put(t, env, "e2", "t")
	require.Eventually(t, func() bool { return hook.has("e1") && hook.has("e2") }, wait, tick)
	require.Eventually(t, func() bool {
		i := env.ConsumerInfo(t, names.BusStream(bus), names.TargetConsumer("r1", "t1"))
		return i.NumAckPending == 0 && i.NumPending == 0
	}, wait, tick)
	assert.Equal(t, 2*64, env.ConsumerInfo(t, names.BusStream(bus), names.TargetConsumer("r1", "t1")).Config.MaxAckPending)
}

// A restart that waits for a record being written (up to StopTimeout) delays no other task: while a target's old
// task holds a delivery, its task is RESTARTING, and a target created meanwhile starts and delivers. The new task
// starts once the old one stopped, however long that took.
func TestSlowRestartDelaysNoOtherTask(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	_, client := startWorkerStopping(t, env, time.Minute) // longer than the test: the held delivery ends the stop
	ctx := context.Background()
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(), Config: routerConfig(t, rule("r1", "t", 0))})
	require.NoError(t, err)
	slow := newTarget(t)
	slow.hold = make(chan struct{})
	patient := targetConfig("r1", slow.srv.URL)
	patient[httpsink.KeyTimeout] = "50s" // the held delivery outlasts the test's hold
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r1"), Config: patient})
	require.NoError(t, err)
	put(t, env, "e1", "t")
	require.Eventually(t, func() bool { return slow.Held() == 1 }, wait, tick)

	changed := targetConfig("r1", slow.srv.URL)
	changed[httpsink.KeyTimeout] = "3s"
	changedDone := make(chan error, 1)
	go func() {
		_, _, err := putConfig(client, targetName("r1"), changed)
		changedDone <- err
	}()
	require.Eventually(t, func() bool {
		st, err := client.ConnectorStatus(ctx, targetName("r1"))
		return err == nil && len(st.Tasks) == 1 && st.Tasks[0].State == rpc.StateRestarting
	}, wait, tick, "the restart waits for the held delivery")

	other := newTarget(t)
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r2"), Config: targetConfig("r2", other.srv.URL)})
	require.NoError(t, err)
	env.Publish(t, names.RuleSubject(bus, "r2"), jetstreamtest.Event("e2", "t", nil))
	require.Eventually(t, func() bool { return other.has("e2") }, wait, tick)
	select {
	case err := <-changedDone:
		t.Fatalf("the restart ended before the held delivery was let go: %v", err)
	default:
	}
	st, err := client.ConnectorStatus(ctx, targetName("r1"))
	require.NoError(t, err)
	assert.Equal(t, rpc.StateRestarting, st.Tasks[0].State, "still stopping while r2 started and delivered")

	// Held longer than a start may take (2 s): the new task's start gets its time from when the old one stopped.
	time.Sleep(3 * time.Second)
	slow.mu.Lock()
	close(slow.hold)
	slow.hold = nil
	slow.mu.Unlock()
	require.NoError(t, <-changedDone)
	require.Eventually(t, func() bool { return slow.has("e1") }, wait, tick)
	require.Eventually(t, func() bool {
		st, err := client.ConnectorStatus(ctx, targetName("r1"))
		return err == nil && len(st.Tasks) == 1 && st.Tasks[0].State == rpc.StateRunning
	}, wait, tick)
}

// A connector whose consumer cannot be created is stored FAILED; the same PUT once the stream exists starts it.
func TestFailedStartIsReportedAndRetried(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t) // no bus stream yet
	_, client := startWorker(t, env)
	ctx := context.Background()
	hook := newTarget(t)
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r1"), Config: targetConfig("r1", hook.srv.URL)})
	var rerr *rpc.Error
	require.ErrorAs(t, err, &rerr)
	assert.Equal(t, http.StatusInternalServerError, rerr.Status)
	assert.Contains(t, rerr.Message, "stream not found")
	st, err := client.ConnectorStatus(ctx, targetName("r1"))
	require.NoError(t, err)
	assert.Equal(t, rpc.StateFailed, st.Connector.State)
	assert.Contains(t, st.Connector.Trace, "stream not found")

	require.NoError(t, names.EnsureBusStream(ctx, env.JS, bus, time.Hour, -1, 1))
	_, created, err := putConfig(client, targetName("r1"), targetConfig("r1", hook.srv.URL))
	require.NoError(t, err)
	assert.False(t, created)
	st, err = client.ConnectorStatus(ctx, targetName("r1"))
	require.NoError(t, err)
	assert.Equal(t, rpc.StateRunning, st.Connector.State)
	assert.Empty(t, st.Connector.Trace)
	env.Publish(t, names.RuleSubject(bus, "r1"), jetstreamtest.Event("e1", "t", nil))
	require.Eventually(t, func() bool { return hook.has("e1") }, wait, tick)
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	_, err := worker.New(worker.Config{})
	assert.Error(t, err, "a NATS connection is required")
}

// A listing of every connector has an ETag; a request that sends it as If-None-Match while nothing changed is
// answered 304 Not Modified without a body, and one with another tag gets the listing.
func TestListingNotModified(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	w, client := startWorker(t, env)
	ctx := context.Background()
	hook := newTarget(t)
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: targetName("r1"), Config: targetConfig("r1", hook.srv.URL)})
	require.NoError(t, err)
	get := func(ifNoneMatch string) (int, string, []byte) {
		req, err := http.NewRequest(http.MethodGet, w.URL()+"/connectors?expand=status&expand=info", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+testToken)
		if ifNoneMatch != "" {
			req.Header.Set("If-None-Match", ifNoneMatch)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header.Get("ETag"), body
	}
	var tag string
	require.Eventually(t, func() bool { // the task has started and its status is written: nothing changes then
		code, etag, body := get("")
		if code != http.StatusOK || etag == "" || !strings.Contains(string(body), `"RUNNING"`) {
			return false
		}
		code, again, body := get(etag)
		tag = etag
		return code == http.StatusNotModified && again == etag && len(body) == 0
	}, wait, tick, "an unchanged listing is answered 304 to the holder of its tag")

	code, etag, body := get(`"another"`)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, tag, etag)
	assert.Contains(t, string(body), targetName("r1"))

	code, etag, _ = get(tag)
	require.Equal(t, http.StatusNotModified, code)
	req, err := http.NewRequest(http.MethodGet, w.URL()+"/connectors?expand=status&expand=info", nil)
	require.NoError(t, err)
	req.Header.Set("If-None-Match", etag)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a tag is no credential")

	require.NoError(t, client.PauseConnector(ctx, targetName("r1")))
	require.Eventually(t, func() bool {
		code, etag, body := get(tag)
		return code == http.StatusOK && etag != tag && strings.Contains(string(body), `"PAUSED"`)
	}, wait, tick, "a change gives the listing a new tag")
}
