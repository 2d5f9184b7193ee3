package worker_test

import (
	"context"
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
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/eventbus"
)

func startSourceWorker(t *testing.T, env *jetstreamtest.Env) (*worker.Worker, *rpc.Client) {
	t.Helper()
	r := connector.NewRegistry()
	require.NoError(t, r.Register(eventbus.SourcePlugin()))
	w, err := worker.New(worker.Config{Token: testToken, NATS: env.Conn, WorkerID: "w1", RESTAddr: "127.0.0.1:0", Registry: r,
		StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	return w, rpc.NewClient(w.URL(), rpc.WithToken(testToken))
}

// A source connector through the REST API: it feeds the bus, reports its type, state and counters, keeps its
// offsets in KV (changed only while stopped), and resumes from them after a restart of the worker.
func TestSourceConnector(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := busEnv(t)
	env.Stream(t, "ORIGIN", "origin.>")
	for i := range 5 {
		env.Publish(t, "origin.events", jetstreamtest.Event(fmt.Sprintf("o%d", i), "origin.event", nil))
	}
	w, client := startSourceWorker(t, env)
	defer func() { _ = w.Close(ctx) }()
	name := "eb.acct.orders.source.mirror"
	cfg := map[string]string{
		connector.KeyClass: eventbus.SourceName, connector.KeyOutputSubject: names.BusIn(bus),
		connector.KeyOutputStream: names.BusStream(bus), eventbus.KeySourceStream: "ORIGIN",
	}
	status, _, body := call(t, "POST", w.URL()+"/connectors", mustJSON(rpc.CreateConnectorRequest{Name: name, Config: cfg}))
	require.Equal(t, http.StatusCreated, status, "%s", body)
	assert.Contains(t, string(body), `"type":"source"`)

	onBus := func() []string {
		var ids []string
		for _, m := range env.Messages(t, names.BusStream(bus), names.BusIn(bus)) {
			ids = append(ids, m.Event.ID())
		}
		return ids
	}
	require.Eventually(t, func() bool { return len(onBus()) == 5 }, wait, tick)
	assert.Equal(t, []string{"o0", "o1", "o2", "o3", "o4"}, onBus())

	st, err := client.ConnectorStatus(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, rpc.TypeSource, st.Type)
	require.Len(t, st.Tasks, 1)
	assert.Equal(t, rpc.StateRunning, st.Tasks[0].State)
	require.Eventually(t, func() bool {
		st, err := client.ConnectorStatus(ctx, name)
		require.NoError(t, err)
		return st.Tasks[0].Counters.Read == 5 && st.Tasks[0].Counters.Written == 5
	}, wait, tick)

	c := w.URL() + "/connectors/" + name
	want := `{"offsets":[{"partition":{"stream":"ORIGIN"},"offset":{"sequence":5}}]}`
	require.Eventually(t, func() bool {
		_, _, body := call(t, "GET", c+"/offsets", "")
		return strings.TrimSpace(string(body)) == want
	}, wait, tick)

	// Offsets change only while stopped.
	status, _, body = call(t, "PATCH", c+"/offsets", `{"offsets":[{"partition":{"stream":"ORIGIN"},"offset":{"sequence":2}}]}`)
	assert.Equal(t, http.StatusBadRequest, status, "%s", body)
	require.NoError(t, client.StopConnector(ctx, name))
	status, _, body = call(t, "PATCH", c+"/offsets", `{"offsets":[{"partition":{"stream":"ORIGIN"},"offset":{"sequence":2}}]}`)
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.JSONEq(t, `{"message":"The offsets for this connector have been altered successfully"}`, string(body))
	status, _, body = call(t, "PATCH", c+"/offsets", `{"offsets":[{"partition":{},"offset":{"sequence":2}}]}`)
	assert.Equal(t, http.StatusBadRequest, status, "%s", body)
	_, _, body = call(t, "GET", c+"/offsets", "")
	assert.JSONEq(t, `{"offsets":[{"partition":{"stream":"ORIGIN"},"offset":{"sequence":2}}]}`, string(body))

	// Resumed, it reads after sequence 2: three records, stored once (the bus already holds them).
	require.NoError(t, client.ResumeConnector(ctx, name))
	require.Eventually(t, func() bool {
		st, err := client.ConnectorStatus(ctx, name)
		require.NoError(t, err)
		return len(st.Tasks) == 1 && st.Tasks[0].Counters.Read == 3
	}, wait, tick)
	assert.Len(t, onBus(), 5, "records read again are stored once")

	// A restarted worker resumes after the last stored offset.
	require.NoError(t, w.Close(ctx))
	env.Publish(t, "origin.events", jetstreamtest.Event("o5", "origin.event", nil))
	w, client = startSourceWorker(t, env)
	require.Eventually(t, func() bool { return len(onBus()) == 6 }, wait, tick)
	require.Eventually(t, func() bool {
		st, err := client.ConnectorStatus(ctx, name)
		require.NoError(t, err)
		return len(st.Tasks) == 1 && st.Tasks[0].Counters.Read == 1
	}, wait, tick, "only the new record was read")

	// Reset: the source starts its stream again.
	c = w.URL() + "/connectors/" + name
	require.NoError(t, client.StopConnector(ctx, name))
	status, _, body = call(t, "DELETE", c+"/offsets", "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	_, _, body = call(t, "GET", c+"/offsets", "")
	assert.JSONEq(t, `{"offsets":[]}`, string(body))
	require.NoError(t, client.ResumeConnector(ctx, name))
	require.Eventually(t, func() bool {
		st, err := client.ConnectorStatus(ctx, name)
		require.NoError(t, err)
		return len(st.Tasks) == 1 && st.Tasks[0].Counters.Read == 6
	}, wait, tick)

	// A bad config names each problem.
	delete(cfg, connector.KeyOutputSubject)
	cfg[eventbus.KeyStartPolicy] = "sometime"
	status, _, body = call(t, "POST", w.URL()+"/connectors", mustJSON(rpc.CreateConnectorRequest{Name: "bad", Config: cfg}))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, string(body), connector.KeyOutputSubject)
	assert.Contains(t, string(body), eventbus.KeyStartPolicy)
}
