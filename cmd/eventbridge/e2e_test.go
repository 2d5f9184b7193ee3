package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
)

// startMain runs the control plane in process on free loopback ports with its state in dataDir.
func startMain(t *testing.T, dataDir string, extra ...string) *Main {
	t.Helper()
	m := NewMain()
	args := append([]string{
		"--http-addr", "127.0.0.1:0", "--worker-addr", "127.0.0.1:0", "--data-dir", dataDir,
		"--allow-private-targets", "--log-level", "warn",
	}, extra...)
	require.NoError(t, m.ParseFlags(args, func(string) string { return "" }))
	require.NoError(t, m.Run(context.Background()))
	return m
}

// workerClient is a client of the embedded worker's REST API with the cluster token.
func workerClient(m *Main) *rpc.Client {
	return rpc.NewClient("http://"+m.WorkerAddr(), rpc.WithToken(m.ClusterToken()))
}

// writeTokenFile writes a new cluster token to a file of t and returns its path and the token.
func writeTokenFile(t *testing.T) (path, token string) {
	t.Helper()
	token, err := rpc.NewToken()
	require.NoError(t, err)
	path = filepath.Join(t.TempDir(), "cluster-token")
	require.NoError(t, os.WriteFile(path, []byte(token+"\n"), 0o600))
	return path, token
}

// api is a small client of the control plane's REST API for tests, with an API key.
type api struct {
	t    testing.TB
	base string
	key  string
	// account, when set, is sent as X-Account-Id.
	account string
}

// apiOf is a client of m's API with the instance administrator's key that m made at its first start.
func apiOf(t testing.TB, m *Main) api {
	t.Helper()
	key := m.AdminAPIKey()
	require.NotEmpty(t, key, "the control plane wrote its administrator's key into its data directory")
	return api{t: t, base: "http://" + m.HTTPAddr(), key: key}
}

func (a api) do(method, path, contentType string, body []byte) (int, []byte) {
	a.t.Helper()
	req, err := http.NewRequest(method, a.base+path, bytes.NewReader(body))
	require.NoError(a.t, err)
	if a.key != "" {
		req.Header.Set("Authorization", "Bearer "+a.key)
	}
	if a.account != "" {
		req.Header.Set("X-Account-Id", a.account)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(a.t, err)
	return resp.StatusCode, b
}

// must sends a JSON request and requires the status.
func (a api) must(method, path string, body any, want int) []byte {
	a.t.Helper()
	var b []byte
	if body != nil {
		var err error
		b, err = json.Marshal(body)
		require.NoError(a.t, err)
	}
	status, out := a.do(method, path, "application/json", b)
	require.Equalf(a.t, want, status, "%s %s: %s", method, path, out)
	return out
}

// putBatch sends events in batch mode and requires every entry to be stored.
func (a api) putBatch(bus string, events []map[string]any) {
	a.t.Helper()
	b, err := json.Marshal(events)
	require.NoError(a.t, err)
	status, out := a.do(http.MethodPost, "/api/v1/buses/"+bus+"/events", "application/cloudevents-batch+json", b)
	require.Equal(a.t, http.StatusOK, status, string(out))
	var res struct {
		FailedEntryCount int `json:"failedEntryCount"`
		Entries          []struct {
			EventID string `json:"eventId"`
		} `json:"entries"`
	}
	require.NoError(a.t, json.Unmarshal(out, &res))
	require.Zero(a.t, res.FailedEntryCount, string(out))
	require.Len(a.t, res.Entries, len(events))
}

// receiver is an HTTP target that records the ids of the CloudEvents it receives (binary mode).
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	ids map[string]int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{ids: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		id := req.Header.Get("ce-id")
		if id == "" {
			http.Error(w, "no ce-id", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.ids[id]++
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) snapshot() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.ids))
	for k, v := range r.ids {
		out[k] = v
	}
	return out
}

// waitFor waits until every id in want arrived, then requires that nothing else did and nothing twice.
func (r *receiver) waitFor(t *testing.T, want map[string]bool) {
	t.Helper()
	require.Eventuallyf(t, func() bool {
		got := r.snapshot()
		for id := range want {
			if got[id] == 0 {
				return false
			}
		}
		return true
	}, 60*time.Second, 50*time.Millisecond, "waiting for %d events", len(want))
	got := r.snapshot()
	var extra, dup []string
	for id, n := range got {
		if !want[id] {
			extra = append(extra, id)
		}
		if n > 1 {
			dup = append(dup, id)
		}
	}
	sort.Strings(extra)
	require.Empty(t, extra, "events delivered that do not match")
	require.Empty(t, dup, "events delivered twice")
}

// targetCounters reads the counters of the one task of the target at path; ok is false while it has none.
func (a api) targetCounters(path string) (read, delivered uint64, ok bool) {
	a.t.Helper()
	var tg struct {
		Status struct {
			Tasks []struct {
				Counters *struct{ Read, Delivered uint64 } `json:"counters"`
			} `json:"tasks"`
		} `json:"status"`
	}
	require.NoError(a.t, json.Unmarshal(a.must("GET", path, nil, 200), &tg))
	if len(tg.Status.Tasks) != 1 || tg.Status.Tasks[0].Counters == nil {
		return 0, 0, false
	}
	return tg.Status.Tasks[0].Counters.Read, tg.Status.Tasks[0].Counters.Delivered, true
}

func event(id, source, typ string, data map[string]any) map[string]any {
	return map[string]any{"specversion": "1.0", "id": id, "source": source, "type": typ,
		"datacontenttype": "application/json", "data": data}
}

func httpTarget(url string) map[string]any {
	return map[string]any{"type": "http", "config": map[string]any{"url": url},
		"retryPolicy": map[string]any{"maximumRetryAttempts": 185, "maximumEventAgeInSeconds": 86400}}
}

// TestEndToEnd puts 1,000 events on a bus with two rules whose targets must receive exactly the matching ones,
// then restarts the process on the same data directory and checks that everything still runs.
func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	m := startMain(t, dir)
	a := apiOf(t, m)

	created, other := newReceiver(t), newReceiver(t)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "orders"}, 201)
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "created",
		"eventPattern": map[string]any{"type": []any{"order.created"}}}, 201)
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "shop",
		"eventPattern": map[string]any{"source": []any{map[string]any{"prefix": "shop"}}, "data": map[string]any{"region": []any{"eu", "us"}}}}, 201)
	a.must("PUT", "/api/v1/buses/orders/rules/created/targets/hook", httpTarget(created.srv.URL+"/created"), 201)
	a.must("PUT", "/api/v1/buses/orders/rules/shop/targets/hook", httpTarget(other.srv.URL), 201)

	wantCreated, wantShop := map[string]bool{}, map[string]bool{}
	send := func(from, to int) {
		for start := from; start < to; start += 100 {
			var batch []map[string]any
			for i := start; i < start+100 && i < to; i++ {
				id := fmt.Sprintf("evt-%05d", i)
				typ := "order.updated"
				if i%2 == 0 {
					typ = "order.created"
					wantCreated[id] = true
				}
				source, region := "crm", "eu"
				if i%3 == 0 {
					source = "shop.web"
				}
				if i%5 == 0 {
					region = "apac"
				}
				if i%3 == 0 && i%5 != 0 {
					wantShop[id] = true
				}
				batch = append(batch, event(id, source, typ, map[string]any{"n": i, "region": region}))
			}
			a.putBatch("orders", batch)
		}
	}
	send(0, 1000)
	created.waitFor(t, wantCreated)
	other.waitFor(t, wantShop)
	require.Len(t, wantCreated, 500)
	require.Len(t, wantShop, 267)

	// The target's runtime status comes from the worker, with its task's counters.
	out := a.must("GET", "/api/v1/buses/orders/rules/created/targets/hook", nil, 200)
	require.Contains(t, string(out), `"RUNNING"`)
	require.Eventually(t, func() bool {
		read, delivered, ok := a.targetCounters("/api/v1/buses/orders/rules/created/targets/hook")
		return ok && delivered == 500 && read == 500
	}, 30*time.Second, 50*time.Millisecond, "the task counted the 500 events it delivered")

	require.NoError(t, m.Close())

	m = startMain(t, dir)
	defer func() { require.NoError(t, m.Close()) }()
	a.base = "http://" + m.HTTPAddr()
	send(1000, 1200)
	created.waitFor(t, wantCreated)
	other.waitFor(t, wantShop)
}

// TestDisableEnable: events put while a rule is disabled never reach its target; events put after enable do.
func TestDisableEnable(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	r := newReceiver(t)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "b1"}, 201)
	a.must("POST", "/api/v1/buses/b1/rules", map[string]any{"name": "all",
		"eventPattern": map[string]any{"source": []any{"app"}}}, 201)
	a.must("PUT", "/api/v1/buses/b1/rules/all/targets/t1", httpTarget(r.srv.URL), 201)

	batch := func(prefix string, n int) ([]map[string]any, map[string]bool) {
		var evs []map[string]any
		ids := map[string]bool{}
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("%s-%d", prefix, i)
			evs = append(evs, event(id, "app", "t", map[string]any{"i": i}))
			ids[id] = true
		}
		return evs, ids
	}
	before, want := batch("before", 50)
	a.putBatch("b1", before)
	r.waitFor(t, want)

	out := a.must("POST", "/api/v1/buses/b1/rules/all/disable", nil, 200)
	require.Contains(t, string(out), `"DISABLED"`)
	during, _ := batch("during", 50)
	a.putBatch("b1", during)
	out = a.must("POST", "/api/v1/buses/b1/rules/all/enable", nil, 200)
	require.Contains(t, string(out), `"ENABLED"`)
	after, afterIDs := batch("after", 50)
	a.putBatch("b1", after)
	for id := range afterIDs {
		want[id] = true
	}
	// Everything put after enable arrives, and nothing put while disabled (waitFor refuses extras).
	r.waitFor(t, want)
	for id := range r.snapshot() {
		require.False(t, strings.HasPrefix(id, "during-"), "event %s put while the rule was disabled was delivered", id)
	}
}

// TestInputTransformerEndToEnd: a target declared with an input transformer through the API receives the
// transformed data, and test-input-transformer answers the same output for the same event.
func TestInputTransformerEndToEnd(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	type delivery struct{ id, contentType, body string }
	got := make(chan delivery, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- delivery{id: r.Header.Get("ce-id"), contentType: r.Header.Get("Content-Type"), body: string(b)}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	transformer := map[string]any{
		"inputPathsMap": map[string]any{"id": "$.data.orderId", "sku": "$.data.items[0].sku", "customer": "$.data.customer"},
		"inputTemplate": `{"order": <id>, "sku": <sku>, "customer": <customer>, "text": "Order <id> from <ce.source>"}`,
	}
	a.must("POST", "/api/v1/buses", map[string]any{"name": "orders"}, 201)
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "created",
		"eventPattern": map[string]any{"type": []any{"order.created"}}}, 201)
	target := httpTarget(srv.URL)
	target["inputTransformer"] = transformer
	a.must("PUT", "/api/v1/buses/orders/rules/created/targets/hook", target, 201)

	ev := event("evt-1", "shop.web", "order.created", map[string]any{"orderId": "o-1",
		"items": []any{map[string]any{"sku": "x1"}}, "customer": map[string]any{"name": "Zoë \"Z\""}})
	a.putBatch("orders", []map[string]any{ev})
	var d delivery
	select {
	case d = <-got:
	case <-time.After(60 * time.Second):
		t.Fatal("the target received nothing")
	}
	require.Equal(t, "evt-1", d.id)
	require.Equal(t, "application/json", d.contentType)
	want := `{"order": "o-1", "sku": "x1", "customer": {"name": "Zoë \"Z\""}, "text": "Order o-1 from shop.web"}`
	require.JSONEq(t, want, d.body)

	out := a.must("POST", "/api/v1/test-input-transformer", map[string]any{"inputTransformer": transformer, "event": ev}, 200)
	var res struct {
		Output      json.RawMessage `json:"output"`
		ContentType string          `json:"contentType"`
	}
	require.NoError(t, json.Unmarshal(out, &res))
	require.Equal(t, "application/json", res.ContentType)
	require.JSONEq(t, want, string(res.Output), "the test endpoint answers what the target receives")
}
