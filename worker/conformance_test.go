package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/herder"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

// call sends a request and returns the status, the Content-Type and the body.
func call(t *testing.T, method, url, body string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if resp.StatusCode >= 300 {
		var er rpc.ErrorResponse
		require.NoError(t, json.Unmarshal(data, &er), "error answers are JSON: %s", data)
		assert.Equal(t, resp.StatusCode, er.ErrorCode)
		assert.NotEmpty(t, er.Message)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), data
}

func seqOf(t *testing.T, o rpc.ConnectorOffset) uint64 {
	n, err := o.Sequence()
	require.NoError(t, err)
	return n
}

func offsetsBody(subject string, seq uint64) string {
	return fmt.Sprintf(`{"offsets":[{"partition":{"subject":%q},"offset":{"sequence":%d}}]}`, subject, seq)
}

func TestConformanceRestartAndOffsets(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	w, client := startWorker(t, env)
	ctx := context.Background()
	base := w.URL()
	tg := newTarget(t)
	name := targetName("r1")
	subject := names.RuleSubject(bus, "r1")
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: name, Config: targetConfig("r1", tg.srv.URL)})
	require.NoError(t, err)
	c := base + "/connectors/" + name

	var seqs []uint64
	for i := range 3 {
		seqs = append(seqs, env.Publish(t, subject, jetstreamtest.Event(fmt.Sprintf("e%d", i), "t", nil)))
	}
	require.Eventually(t, func() bool { return len(tg.Got()) == 3 }, wait, tick)
	require.Eventually(t, func() bool {
		off, err := client.GetOffsets(ctx, name)
		require.NoError(t, err)
		return len(off.Offsets) == 1 && seqOf(t, off.Offsets[0]) == seqs[2]
	}, wait, tick)
	status, ctype, body := call(t, "GET", c+"/offsets", "")
	assert.Equal(t, 200, status)
	assert.Equal(t, "application/json", ctype)
	assert.JSONEq(t, fmt.Sprintf(`{"offsets":[{"partition":{"subject":%q},"offset":{"sequence":%d}}]}`, subject, seqs[2]), string(body))

	// Restart: 204 for the connector alone, 202 with the status when tasks are included.
	status, _, body = call(t, "POST", c+"/restart", "")
	assert.Equal(t, http.StatusNoContent, status)
	assert.Empty(t, body)
	status, _, _ = call(t, "POST", c+"/restart?includeTasks=false&onlyFailed=false", "")
	assert.Equal(t, http.StatusNoContent, status)
	for _, q := range []string{"?includeTasks=true", "?includeTasks=true&onlyFailed=true", "?includeTasks=true&onlyFailed=false",
		"?onlyFailed=true", "?includeTasks=false&onlyFailed=true"} {
		status, _, body = call(t, "POST", c+"/restart"+q, "")
		assert.Equal(t, http.StatusAccepted, status, q)
		var st rpc.ConnectorStatus
		require.NoError(t, json.Unmarshal(body, &st))
		assert.Equal(t, name, st.Name)
		assert.Equal(t, rpc.StateRunning, st.Connector.State)
		require.Len(t, st.Tasks, 1)
		assert.Equal(t, rpc.StateRunning, st.Tasks[0].State)
		assert.Equal(t, "w1", st.Tasks[0].WorkerID)
	}
	st, err := client.RestartConnector(ctx, name, true, false)
	require.NoError(t, err)
	assert.Equal(t, rpc.StateRunning, st.Connector.State)
	st, err = client.RestartConnector(ctx, name, false, false)
	require.NoError(t, err)
	assert.Nil(t, st)
	status, _, body = call(t, "POST", c+"/tasks/0/restart", "")
	assert.Equal(t, http.StatusNoContent, status)
	assert.Empty(t, body)
	require.NoError(t, client.RestartTask(ctx, name, 0))
	ts, err := client.TaskStatus(ctx, name, 0)
	require.NoError(t, err)
	assert.Equal(t, rpc.StateRunning, ts.State)

	// The restarted task still delivers, from where the connector was.
	seqs = append(seqs, env.Publish(t, subject, jetstreamtest.Event("e3", "t", nil)))
	require.Eventually(t, func() bool { return tg.has("e3") }, wait, tick)
	assert.Len(t, tg.Got(), 4, "nothing was delivered twice by the restarts")

	// RocketMQ Connect's views.
	ci, err := client.ClusterInfo(ctx)
	require.NoError(t, err)
	require.Len(t, ci.Workers, 1)
	assert.False(t, ci.Workers[0].Started.IsZero(), "the worker's start is known")
	assert.False(t, ci.Workers[0].LastHeartbeat.Before(ci.Workers[0].Started), "its last heartbeat follows its start")
	ci.Workers[0].Started, ci.Workers[0].LastHeartbeat = time.Time{}, time.Time{}
	assert.Equal(t, rpc.ClusterInfo{ClusterID: "eb", Workers: []rpc.WorkerInfo{{WorkerID: "w1", Version: herder.Version, URL: base}}}, *ci)
	ac, err := client.AllocatedConnectors(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]map[string]string{name: targetConfig("r1", tg.srv.URL)}, ac)
	at, err := client.AllocatedTasks(ctx)
	require.NoError(t, err)
	require.Len(t, at, 1)
	assert.Equal(t, rpc.TaskID{Connector: name, Task: 0}, at[0].ID)
	assert.Equal(t, rpc.StateRunning, at[0].State)
	pl, err := client.PluginList(ctx)
	require.NoError(t, err)
	cp, err := client.ListPlugins(ctx)
	require.NoError(t, err)
	assert.Equal(t, cp, pl)

	// Offsets change only while STOPPED.
	for _, r := range []struct{ method, body string }{{"PATCH", offsetsBody(subject, 1)}, {"DELETE", ""}} {
		status, _, body = call(t, r.method, c+"/offsets", r.body)
		assert.Equal(t, http.StatusBadRequest, status, "%s while running: %s", r.method, body)
		assert.Contains(t, string(body), "STOPPED")
	}
	require.NoError(t, client.StopConnector(ctx, name))
	status, _, _ = call(t, "POST", c+"/tasks/0/restart", "")
	assert.Equal(t, http.StatusNotFound, status, "a stopped connector has no tasks")

	// PATCH: the consumer delivers from the sequence after the offset.
	status, ctype, body = call(t, "PATCH", c+"/offsets", offsetsBody(subject, seqs[1]))
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.Equal(t, "application/json", ctype)
	assert.JSONEq(t, `{"message":"The offsets for this connector have been altered successfully"}`, string(body))
	require.NoError(t, client.ResumeConnector(ctx, name))
	require.Eventually(t, func() bool { return len(tg.Got()) == 6 }, wait, tick)
	assert.ElementsMatch(t, []string{"e2", "e3"}, tg.Got()[4:], "records are written concurrently, in any order")

	// DELETE: from the start of the subject.
	require.NoError(t, client.StopConnector(ctx, name))
	msg, err := client.ResetOffsets(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, "The offsets for this connector have been reset successfully", msg)
	require.NoError(t, client.ResumeConnector(ctx, name))
	require.Eventually(t, func() bool { return len(tg.Got()) == 10 }, wait, tick)
	assert.ElementsMatch(t, []string{"e0", "e1", "e2", "e3"}, tg.Got()[6:])
	require.Eventually(t, func() bool {
		off, err := client.GetOffsets(ctx, name)
		require.NoError(t, err)
		return seqOf(t, off.Offsets[0]) == seqs[3]
	}, wait, tick)

	// The typed client while stopped.
	require.NoError(t, client.StopConnector(ctx, name))
	msg, err = client.AlterOffsets(ctx, name, rpc.ConnectorOffsets{Offsets: []rpc.ConnectorOffset{
		{Partition: map[string]any{"subject": subject}, Offset: map[string]any{"sequence": seqs[3]}}}})
	require.NoError(t, err)
	assert.Contains(t, msg, "altered")
	// A null offset resets the partition to its start.
	status, _, body = call(t, "PATCH", c+"/offsets", fmt.Sprintf(`{"offsets":[{"partition":{"subject":%q},"offset":null}]}`, subject))
	assert.Equal(t, http.StatusOK, status, "%s", body)
	assert.JSONEq(t, `{"message":"The offsets for this connector have been reset successfully"}`, string(body))
	require.NoError(t, client.ResumeConnector(ctx, name))
	require.Eventually(t, func() bool { return len(tg.Got()) == 14 }, wait, tick)
	require.NoError(t, client.StopConnector(ctx, name))

	// Errors.
	for _, r := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/connectors/nope/restart", "", 404},
		{"POST", "/connectors/nope/restart?includeTasks=true", "", 404},
		{"POST", "/connectors/" + name + "/restart?includeTasks=maybe", "", 400},
		{"POST", "/connectors/" + name + "/restart?onlyFailed=2x", "", 400},
		{"POST", "/connectors/nope/tasks/0/restart", "", 404},
		{"POST", "/connectors/" + name + "/tasks/9/restart", "", 404},
		{"POST", "/connectors/" + name + "/tasks/x/restart", "", 404},
		{"GET", "/connectors/" + name + "/restart", "", 405},
		{"GET", "/connectors/nope/offsets", "", 404},
		{"PATCH", "/connectors/nope/offsets", offsetsBody(subject, 1), 404},
		{"DELETE", "/connectors/nope/offsets", "", 404},
		{"PATCH", "/connectors/" + name + "/offsets", "{bad", 400},
		{"PATCH", "/connectors/" + name + "/offsets", `{"offsets":[]}`, 400},
		{"PATCH", "/connectors/" + name + "/offsets", offsetsBody("other.subject", 1), 400},
		{"PATCH", "/connectors/" + name + "/offsets", `{"offsets":[{"partition":{"subject":"x"},"offset":{"sequence":"one"}}]}`, 400},
		{"POST", "/connectors/" + name + "/offsets", "", 405},
	} {
		status, _, body := call(t, r.method, base+r.path, r.body)
		assert.Equal(t, r.status, status, "%s %s: %s", r.method, r.path, body)
	}
	_, err = client.GetOffsets(ctx, "nope")
	assert.True(t, rpc.IsNotFound(err), "%v", err)
	err = client.RestartTask(ctx, "nope", 0)
	assert.True(t, rpc.IsNotFound(err), "%v", err)
}

func TestConformancePlugins(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	w, client := startWorker(t, env)
	ctx := context.Background()
	base := w.URL()

	// GET /connector-plugins/{p}/config: Kafka Connect's config key descriptions.
	keys, err := client.PluginConfig(ctx, httpsink.Name)
	require.NoError(t, err)
	byName := map[string]rpc.ConfigKeyInfo{}
	for i, k := range keys {
		byName[k.Name] = k
		assert.Equal(t, i+1, k.Order)
	}
	url := byName[httpsink.KeyURL]
	assert.True(t, url.Required)
	assert.Equal(t, "STRING", url.Type)
	assert.Equal(t, "HIGH", url.Importance)
	assert.NotEmpty(t, url.Documentation)
	assert.Nil(t, url.DefaultValue)
	tasks := byName[connector.KeyTasksMax]
	assert.Equal(t, "LONG", tasks.Type)
	require.NotNil(t, tasks.DefaultValue)
	assert.Equal(t, "1", *tasks.DefaultValue)
	assert.False(t, tasks.Required)
	status, _, body := call(t, "GET", base+"/connector-plugins/http/config", "")
	assert.Equal(t, 200, status)
	var rawKeys []map[string]any
	require.NoError(t, json.Unmarshal(body, &rawKeys))
	for _, k := range []string{"name", "type", "required", "default_value", "importance", "documentation", "group",
		"width", "display_name", "dependents", "order_in_group", "order"} {
		assert.Contains(t, rawKeys[0], k)
	}

	// GET /connector-plugins/{p}/schema: JSON Schema 2020-12.
	status, ctype, body := call(t, "GET", base+"/connector-plugins/http/schema", "")
	assert.Equal(t, 200, status)
	assert.Equal(t, "application/schema+json", ctype)
	var schema map[string]any
	require.NoError(t, json.Unmarshal(body, &schema))
	assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", schema["$schema"])
	assert.Equal(t, "object", schema["type"])
	assert.Contains(t, schema["required"], httpsink.KeyURL)
	assert.Contains(t, schema["required"], connector.KeyClass)
	props := schema["properties"].(map[string]any)
	tol := props[connector.KeyErrorsTolerance].(map[string]any)
	assert.Equal(t, []any{"none", "all"}, tol["enum"])
	assert.Equal(t, "all", tol["default"])
	assert.NotEmpty(t, tol["description"])
	assert.Equal(t, "int", props[connector.KeyTasksMax].(map[string]any)["x-type"])
	s2, err := client.PluginSchema(ctx, "router")
	require.NoError(t, err)
	assert.Equal(t, "router", s2["title"])

	// PUT /connector-plugins/{p}/config/validate: every problem as data.
	bad := targetConfig("r1", "http://127.0.0.1:1")
	delete(bad, httpsink.KeyURL)
	bad[httpsink.KeyMode] = "zip"
	bad[connector.KeyTasksMax] = "0"
	bad["extra.key"] = "x"
	status, _, body = call(t, "PUT", base+"/connector-plugins/http/config/validate", mustJSON(bad))
	require.Equal(t, 200, status, "%s", body)
	var infos rpc.ConfigInfos
	require.NoError(t, json.Unmarshal(body, &infos))
	assert.Equal(t, "http", infos.Name)
	assert.Equal(t, 3, infos.ErrorCount)
	assert.Equal(t, []string{}, infos.Groups)
	vals := map[string]rpc.ConfigValueInfo{}
	for _, ci := range infos.Configs {
		assert.Equal(t, ci.Definition.Name, ci.Value.Name)
		assert.True(t, ci.Value.Visible)
		assert.NotNil(t, ci.Value.Errors)
		assert.NotNil(t, ci.Value.RecommendedValues)
		vals[ci.Value.Name] = ci.Value
	}
	assert.Equal(t, []string{"is required"}, vals[httpsink.KeyURL].Errors)
	assert.Nil(t, vals[httpsink.KeyURL].Value)
	assert.Len(t, vals[httpsink.KeyMode].Errors, 1)
	assert.NotEmpty(t, vals[httpsink.KeyMode].RecommendedValues)
	assert.Len(t, vals[connector.KeyTasksMax].Errors, 1)
	assert.Empty(t, vals[connector.KeyTopics].Errors)
	assert.Contains(t, vals, "extra.key")
	var rawInfos map[string]any
	require.NoError(t, json.Unmarshal(body, &rawInfos))
	for _, k := range []string{"name", "error_count", "groups", "configs"} {
		assert.Contains(t, rawInfos, k)
	}

	good := targetConfig("r1", "http://127.0.0.1:1")
	delete(good, connector.KeyClass)
	ok, err := client.ValidateConfig(ctx, httpsink.Name, good)
	require.NoError(t, err)
	assert.Equal(t, 0, ok.ErrorCount)

	for _, r := range []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/connector-plugins/kafka/config", "", 404},
		{"GET", "/connector-plugins/kafka/schema", "", 404},
		{"PUT", "/connector-plugins/kafka/config/validate", "{}", 404},
		{"PUT", "/connector-plugins/http/config/validate", "{bad", 400},
		{"PUT", "/connector-plugins/http/config/validate", `{"a": 1}`, 400},
		{"PUT", "/connector-plugins/http/config/validate", `{"connector.class": "router"}`, 400},
		{"POST", "/connector-plugins/http/config/validate", "{}", 405},
		{"POST", "/getClusterInfo", "", 405},
	} {
		status, _, body := call(t, r.method, base+r.path, r.body)
		assert.Equal(t, r.status, status, "%s %s: %s", r.method, r.path, body)
	}
	_, err = client.PluginConfig(ctx, "kafka")
	assert.True(t, rpc.IsNotFound(err), "%v", err)

	// RocketMQ views of an idle worker.
	status, _, body = call(t, "GET", base+"/allocated/connectors", "")
	assert.Equal(t, 200, status)
	assert.JSONEq(t, `{}`, string(body))
	status, _, body = call(t, "GET", base+"/allocated/tasks", "")
	assert.Equal(t, 200, status)
	assert.JSONEq(t, `[]`, string(body))
	status, _, body = call(t, "GET", base+"/getClusterInfo", "")
	assert.Equal(t, 200, status)
	var info map[string]any
	require.NoError(t, json.Unmarshal(body, &info))
	workers, _ := info["workers"].([]any)
	require.Len(t, workers, 1)
	wi, _ := workers[0].(map[string]any)
	for _, k := range []string{"started", "last_heartbeat"} {
		_, err := time.Parse(time.RFC3339Nano, fmt.Sprint(wi[k]))
		assert.NoError(t, err, "%s is an RFC 3339 time", k)
		delete(wi, k)
	}
	assert.Equal(t, map[string]any{"worker_id": "w1", "version": herder.Version, "url": base}, wi)
	assert.Equal(t, "eb", info["cluster_id"])
}

func TestConformanceRestartFailedTask(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	w, client := startWorker(t, env)
	ctx := context.Background()
	tg := newTarget(t)
	tg.failFirst = 1
	name := targetName("r2")
	cfg := targetConfig("r2", tg.srv.URL)
	cfg[connector.KeyRetryMaxAttempts] = "0"
	cfg[connector.KeyErrorsTolerance] = connector.ToleranceNone
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: name, Config: cfg})
	require.NoError(t, err)
	env.Publish(t, names.RuleSubject(bus, "r2"), jetstreamtest.Event("f0", "t", nil))
	require.Eventually(t, func() bool {
		ts, err := client.TaskStatus(ctx, name, 0)
		require.NoError(t, err)
		return ts.State == rpc.StateFailed && ts.Trace != ""
	}, wait, tick)

	// Only the failed task restarts; the record it left in the stream is delivered.
	status, _, body := call(t, "POST", w.URL()+"/connectors/"+name+"/restart?includeTasks=true&onlyFailed=true", "")
	require.Equal(t, http.StatusAccepted, status, "%s", body)
	var st rpc.ConnectorStatus
	require.NoError(t, json.Unmarshal(body, &st))
	require.Len(t, st.Tasks, 1)
	assert.Equal(t, rpc.StateRunning, st.Tasks[0].State)
	assert.Empty(t, st.Tasks[0].Trace)
	require.Eventually(t, func() bool { return tg.has("f0") }, wait, tick)
}

func TestFailedTaskRestartsAutomatically(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	_, client := startWorker(t, env)
	ctx := context.Background()
	tg := newTarget(t)
	tg.failFirst = 2
	name := targetName("r3")
	cfg := targetConfig("r3", tg.srv.URL)
	cfg[connector.KeyRetryMaxAttempts] = "0"
	cfg[connector.KeyErrorsTolerance] = connector.ToleranceNone
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: name, Config: cfg})
	require.NoError(t, err)
	start := time.Now()
	env.Publish(t, names.RuleSubject(bus, "r3"), jetstreamtest.Event("a0", "t", nil))
	// Meanwhile /status says FAILED, why, and when the next restart comes.
	require.Eventually(t, func() bool {
		ts, err := client.TaskStatus(ctx, name, 0)
		require.NoError(t, err)
		return ts.State == rpc.StateFailed && strings.Contains(ts.Trace, "503") &&
			strings.Contains(ts.Trace, "next automatic restart (1)")
	}, wait, tick)
	// Restarted after 1s, it fails again; restarted after 2s more, it delivers.
	require.Eventually(t, func() bool {
		ts, err := client.TaskStatus(ctx, name, 0)
		require.NoError(t, err)
		return ts.State == rpc.StateFailed && strings.Contains(ts.Trace, "next automatic restart (2)")
	}, wait, tick)
	require.Eventually(t, func() bool { return tg.has("a0") }, wait, tick)
	assert.GreaterOrEqual(t, time.Since(start), 3*time.Second, "the back-off doubles")
	ts, err := client.TaskStatus(ctx, name, 0)
	require.NoError(t, err)
	assert.Equal(t, rpc.StateRunning, ts.State)
	assert.Empty(t, ts.Trace)
}
