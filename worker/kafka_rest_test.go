package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/herder"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/attribute"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

// runningTarget starts a worker running the http target connector of rule r1 (targetName("r1")) towards a new
// receiver.
func runningTarget(t *testing.T) (*jetstreamtest.Env, *worker.Worker, *rpc.Client, *target) {
	t.Helper()
	env := busEnv(t)
	w, client := startWorker(t, env)
	tg := newTarget(t)
	_, err := client.CreateConnector(context.Background(), rpc.CreateConnectorRequest{Name: targetName("r1"), Config: targetConfig("r1", tg.srv.URL)})
	require.NoError(t, err)
	return env, w, client, tg
}

// startWorkerWith starts another worker of env's cluster, with its id and plugins.
func startWorkerWith(t *testing.T, env *jetstreamtest.Env, id string, reg *connector.Registry) *worker.Worker {
	t.Helper()
	w, err := worker.New(worker.Config{Token: testToken, NATS: env.Conn, WorkerID: id, RESTAddr: "127.0.0.1:0",
		AllowPrivateTargets: true, Registry: reg, StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	return w
}

// TestEmptyListsAreEmptyArrays: on a worker with no connector, every GET route of the table that takes no path
// parameter answers without a null anywhere but a logger's last_modified (Kafka Connect answers GET /connectors with [], and tools such as
// kcctl fail on null), and the lists and maps are empty: [] and {}.
func TestEmptyListsAreEmptyArrays(t *testing.T) {
	t.Parallel()
	w, _ := startWorker(t, busEnv(t))
	want := map[string]string{
		"/connectors":           `[]`,
		"/allocated/connectors": `{}`,
		"/allocated/tasks":      `[]`,
	}
	walked := 0
	for _, rt := range w.Routes() {
		if rt.Method != http.MethodGet || strings.Contains(rt.Pattern, "{") && rt.Pattern != "/{$}" || rt.Name == "metrics" {
			continue
		}
		path := strings.TrimSuffix(rt.Pattern, "{$}")
		paths := []string{path}
		if path == "/connectors" {
			paths = append(paths, path+"?expand=status", path+"?expand=info", path+"?expand=info&expand=status")
			want[path+"?expand=status"], want[path+"?expand=info"], want[path+"?expand=info&expand=status"] = `{}`, `{}`, `{}`
		}
		for _, p := range paths {
			walked++
			status, _, body := call(t, "GET", w.URL()+p, "")
			require.Equal(t, http.StatusOK, status, "%s: %s", p, body)
			if want[p] != "" {
				assert.JSONEq(t, want[p], string(body), p)
			}
			// A logger's last_modified is null until set through the API, as in Kafka Connect (KIP-976).
			assert.NotContains(t, strings.ReplaceAll(string(body), `"last_modified":null`, ""), "null", "%s: %s", p, body)
		}
	}
	assert.GreaterOrEqual(t, walked, 10, "the GET routes of the table")
}

// TestConnectorPluginsWithTransforms: GET /connector-plugins lists connectors only, as in Kafka Connect;
// connectorsOnly=false adds every transform plugin with the type "transformation".
func TestConnectorPluginsWithTransforms(t *testing.T) {
	t.Parallel()
	reg := registry(t)
	require.NoError(t, reg.RegisterTransform(attribute.SetPlugin()))
	w := startWorkerWith(t, busEnv(t), "w1", reg)

	list := func(query string) []rpc.PluginInfo {
		status, _, body := call(t, "GET", w.URL()+"/connector-plugins"+query, "")
		require.Equal(t, http.StatusOK, status, "%s", body)
		var out []rpc.PluginInfo
		require.NoError(t, json.Unmarshal(body, &out))
		return out
	}
	types := func(ps []rpc.PluginInfo) map[string]string {
		out := map[string]string{}
		for _, p := range ps {
			assert.NotEmpty(t, p.Version, p.Class)
			out[p.Class] = p.Type
		}
		return out
	}
	connectorsOnly := map[string]string{"router": "sink", httpsink.Name: "sink"}
	assert.Equal(t, connectorsOnly, types(list("")))
	assert.Equal(t, connectorsOnly, types(list("?connectorsOnly=true")))
	all := types(list("?connectorsOnly=false"))
	assert.Equal(t, herder.PluginTypeTransformation, all[attribute.SetPlugin().Name])
	assert.Len(t, all, 3)
	status, _, body := call(t, "GET", w.URL()+"/connector-plugins?connectorsOnly=maybe", "")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, string(body), "connectorsOnly")
}

// TestPatchConnectorConfig: PATCH /connectors/{c}/config merges (KIP-477): keys given are set, keys set to null
// are removed, the rest is kept; the answer is the connector's info with the merged config, and the runtime runs
// it. An unknown connector is 404, a merged config the plugin refuses 400 with nothing changed, a body that is not
// an object of strings and nulls 400.
func TestPatchConnectorConfig(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	w, client := startWorker(t, env)
	ctx := context.Background()
	tg := newTarget(t)
	name := targetName("r1")
	cfg := targetConfig("r1", tg.srv.URL)
	cfg[connector.KeyRetryTimeout] = "60000"
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: name, Config: cfg})
	require.NoError(t, err)
	c := w.URL() + "/connectors/" + name

	status, _, body := call(t, "PATCH", c+"/config", fmt.Sprintf(`{"%s": "5s", "%s": null}`, httpsink.KeyTimeout, connector.KeyRetryTimeout))
	require.Equal(t, http.StatusOK, status, "%s", body)
	var info rpc.ConnectorInfo
	require.NoError(t, json.Unmarshal(body, &info))
	assert.Equal(t, name, info.Name)
	assert.Equal(t, rpc.TypeSink, info.Type)
	assert.Equal(t, []rpc.TaskID{{Connector: name, Task: 0}}, info.Tasks)
	want := targetConfig("r1", tg.srv.URL)
	want[httpsink.KeyTimeout] = "5s"
	delete(want, connector.KeyRetryTimeout)
	assert.Equal(t, want, info.Config)
	got, err := client.GetConnectorConfig(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the merged config is stored")

	// The connector runs it: events are delivered.
	put := env.Publish(t, names.RuleSubject(bus, "r1"), jetstreamtest.Event("after-patch", "t", nil))
	require.NotZero(t, put)
	require.Eventually(t, func() bool { return tg.has("after-patch") }, wait, tick)

	for _, bad := range []struct{ path, body, says string }{
		{w.URL() + "/connectors/nope/config", `{"a": "b"}`, "nope"},
		{c + "/config", fmt.Sprintf(`{"%s": "not a duration"}`, httpsink.KeyTimeout), httpsink.KeyTimeout},
		{c + "/config", `["a"]`, ""},
		{c + "/config", `{"a": 1}`, ""},
	} {
		status, _, body := call(t, "PATCH", bad.path, bad.body)
		if strings.Contains(bad.path, "nope") {
			assert.Equal(t, http.StatusNotFound, status, "%s", body)
		} else {
			assert.Equal(t, http.StatusBadRequest, status, "%s: %s", bad.body, body)
		}
		assert.Contains(t, string(body), bad.says)
	}
	got, err = client.GetConnectorConfig(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, want, got, "a refused patch changes nothing")
}

// TestAlterOffsetsWithKafkaSinkKeys: a sink's offsets may be written in Kafka Connect's form, {"kafka_topic": S,
// "kafka_partition": 0} and {"kafka_offset": N} with N the next record to read; the connector then delivers from
// stream sequence N+1 and reads back {"sequence": N}. Another partition, or other keys, are 400 naming both forms.
func TestAlterOffsetsWithKafkaSinkKeys(t *testing.T) {
	t.Parallel()
	env, w, client, tg := runningTarget(t)
	ctx := context.Background()
	name, subject := targetName("r1"), names.RuleSubject(bus, "r1")
	var seqs []uint64
	for i := range 4 {
		seqs = append(seqs, env.Publish(t, subject, jetstreamtest.Event(fmt.Sprintf("k%d", i), "t", nil)))
	}
	require.Eventually(t, func() bool { return len(tg.Got()) == 4 }, wait, tick)
	require.NoError(t, client.StopConnector(ctx, name))
	c := w.URL() + "/connectors/" + name

	for _, bad := range []struct{ body, says string }{
		{fmt.Sprintf(`{"offsets":[{"partition":{"kafka_topic":%q,"kafka_partition":1},"offset":{"kafka_offset":1}}]}`, subject), "kafka_partition"},
		{fmt.Sprintf(`{"offsets":[{"partition":{"kafka_topic":%q,"kafka_partition":0},"offset":{"kafka_offset":-1}}]}`, subject), "kafka_offset"},
		{fmt.Sprintf(`{"offsets":[{"partition":{"kafka_topic":%q,"kafka_partition":0},"offset":{"offset":1}}]}`, subject), "kafka_offset"},
		{`{"offsets":[{"partition":{"kafka_topic":"other","kafka_partition":0},"offset":{"kafka_offset":1}}]}`, "kafka_topic"},
	} {
		status, _, body := call(t, "PATCH", c+"/offsets", bad.body)
		assert.Equal(t, http.StatusBadRequest, status, "%s: %s", bad.body, body)
		assert.Contains(t, string(body), bad.says, bad.body)
	}

	// Next record to read: the one of offset seqs[1] (stream sequence seqs[2]).
	body := fmt.Sprintf(`{"offsets":[{"partition":{"kafka_topic":%q,"kafka_partition":0},"offset":{"kafka_offset":%d}}]}`, subject, seqs[1])
	status, _, out := call(t, "PATCH", c+"/offsets", body)
	require.Equal(t, http.StatusOK, status, "%s", out)
	assert.JSONEq(t, `{"message":"The offsets for this connector have been altered successfully"}`, string(out))
	off, err := client.GetOffsets(ctx, name)
	require.NoError(t, err)
	require.Len(t, off.Offsets, 1)
	assert.Equal(t, seqs[1], seqOf(t, off.Offsets[0]))
	require.NoError(t, client.ResumeConnector(ctx, name))
	require.Eventually(t, func() bool { return len(tg.Got()) == 6 }, wait, tick)
	assert.ElementsMatch(t, []string{"k2", "k3"}, tg.Got()[4:], "delivered again from the next record to read")

	// A null offset resets the partition in Kafka's form too.
	require.NoError(t, client.StopConnector(ctx, name))
	status, _, out = call(t, "PATCH", c+"/offsets", fmt.Sprintf(`{"offsets":[{"partition":{"kafka_topic":%q,"kafka_partition":0},"offset":null}]}`, subject))
	require.Equal(t, http.StatusOK, status, "%s", out)
	require.NoError(t, client.ResumeConnector(ctx, name))
	require.Eventually(t, func() bool { return len(tg.Got()) == 10 }, wait, tick)
}

// TestAdminLoggers: /admin/loggers lists root and the worker's loggers, a plugin's tasks log through
// "eventbridge.plugin.<class>", PUT sets a logger and every logger under it and answers their names, with Kafka
// Connect's statuses (404 for an unknown logger or level, 400 without a level); scope=cluster answers 204 and
// reaches every worker of the cluster.
func TestAdminLoggers(t *testing.T) {
	t.Parallel()
	env, w1, _, _ := runningTarget(t)
	w2 := startWorkerWith(t, env, "w2", registry(t))

	list := func(base string) map[string]struct {
		Level        string `json:"level"`
		LastModified *int64 `json:"last_modified"`
	} {
		status, _, body := call(t, "GET", base+"/admin/loggers", "")
		require.Equal(t, http.StatusOK, status, "%s", body)
		var out map[string]struct {
			Level        string `json:"level"`
			LastModified *int64 `json:"last_modified"`
		}
		require.NoError(t, json.Unmarshal(body, &out))
		return out
	}
	base := w1.URL()
	require.Eventually(t, func() bool { _, ok := list(base)["eventbridge.plugin."+httpsink.Name]; return ok }, wait, tick,
		"the task's logger is listed once it runs")
	all := list(base)
	for _, name := range []string{"root", "eventbridge.worker.herder", "eventbridge.worker.rest"} {
		assert.Contains(t, all, name)
	}
	assert.Nil(t, all["root"].LastModified, "never set through the API")

	status, _, body := call(t, "PUT", base+"/admin/loggers/eventbridge.plugin", `{"level": "debug"}`)
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.JSONEq(t, `["eventbridge.plugin", "eventbridge.plugin.http"]`, string(body))
	status, _, body = call(t, "GET", base+"/admin/loggers/eventbridge.plugin.http", "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.Contains(t, string(body), `"level":"DEBUG"`)
	assert.NotContains(t, string(body), `"last_modified":null`)

	for _, bad := range []struct {
		method, path, body string
		status             int
		says               string
	}{
		{"GET", "/admin/loggers/no.such.logger", "", http.StatusNotFound, "Logger no.such.logger not found."},
		{"PUT", "/admin/loggers/root", `{"level": "LOUD"}`, http.StatusNotFound, "invalid log level 'LOUD'."},
		{"PUT", "/admin/loggers/root", `{}`, http.StatusBadRequest, "Desired 'level' parameter was not specified in request."},
		{"PUT", "/admin/loggers/root", `[1]`, http.StatusBadRequest, ""},
	} {
		status, _, body := call(t, bad.method, base+bad.path, bad.body)
		assert.Equal(t, bad.status, status, "%s %s: %s", bad.method, bad.path, body)
		assert.Contains(t, string(body), bad.says)
	}

	// scope=cluster: 204, and every worker applies it.
	status, _, body = call(t, "PUT", base+"/admin/loggers/eventbridge.worker?scope=cluster", `{"level": "WARN"}`)
	require.Equal(t, http.StatusNoContent, status, "%s", body)
	for _, w := range []*worker.Worker{w1, w2} {
		require.Eventually(t, func() bool { return list(w.URL())["eventbridge.worker.herder"].Level == "WARN" }, wait, tick, w.URL())
	}
	assert.Equal(t, "DEBUG", list(base)["eventbridge.plugin.http"].Level, "a level set on another name stays")
	_, set := list(w2.URL())["eventbridge.plugin"]
	assert.False(t, set, "a level set with the worker's scope stays on its worker")
}

// TestConnectorTopics: GET /connectors/{c}/topics answers the subjects a sink read since it was created or its
// topics were reset, in Kafka Connect's shape; PUT .../topics/reset answers 202 and empties it until the next
// record; a deleted connector's topics go with it; an unknown connector is 404.
func TestConnectorTopics(t *testing.T) {
	t.Parallel()
	env, w, client, tg := runningTarget(t)
	ctx := context.Background()
	name, subject := targetName("r1"), names.RuleSubject(bus, "r1")
	c := w.URL() + "/connectors/" + name
	topics := func() string {
		status, _, body := call(t, "GET", c+"/topics", "")
		require.Equal(t, http.StatusOK, status, "%s", body)
		return string(body)
	}
	assert.JSONEq(t, fmt.Sprintf(`{%q: {"topics": []}}`, name), topics(), "nothing read yet")

	env.Publish(t, subject, jetstreamtest.Event("t1", "t", nil))
	want := fmt.Sprintf(`{%q: {"topics": [%q]}}`, name, subject)
	require.Eventually(t, func() bool { return strings.Contains(topics(), subject) }, wait, tick)
	assert.JSONEq(t, want, topics())

	status, _, body := call(t, "PUT", c+"/topics/reset", "")
	require.Equal(t, http.StatusAccepted, status, "%s", body)
	assert.JSONEq(t, fmt.Sprintf(`{%q: {"topics": []}}`, name), topics(), "reset")
	env.Publish(t, subject, jetstreamtest.Event("t2", "t", nil))
	require.Eventually(t, func() bool { return strings.Contains(topics(), subject) }, wait, tick, "used again after the reset")

	for _, r := range []struct{ method, path string }{{"GET", "/topics"}, {"PUT", "/topics/reset"}} {
		status, _, body := call(t, r.method, w.URL()+"/connectors/nope"+r.path, "")
		assert.Equal(t, http.StatusNotFound, status, "%s", body)
	}

	// Created again STOPPED (so that nothing reads), a deleted connector has no topics left.
	require.NoError(t, client.DeleteConnector(ctx, name))
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: name, Config: targetConfig("r1", tg.srv.URL),
		InitialState: rpc.StateStopped})
	require.NoError(t, err)
	assert.JSONEq(t, fmt.Sprintf(`{%q: {"topics": []}}`, name), topics(), "the deleted connector's topics went with it")
}
