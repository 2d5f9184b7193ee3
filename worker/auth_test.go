package worker_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/rpc/rpctest"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/rest"
)

// answer is what a request got: status, WWW-Authenticate challenges and body.
type answer struct {
	status     int
	challenges []string
	body       string
}

// send sends a request over the worker's listener; auth sets its Authorization (nil: none).
func send(t *testing.T, method, url, body string, auth func(*http.Request)) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != nil {
		auth(req)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{resp.StatusCode, resp.Header.Values("WWW-Authenticate"), string(b)}
}

// concrete fills a route's pattern with values: a connector, task and plugin that do not exist, so that no request
// of the test changes anything even when let in.
func concrete(pattern string) string {
	return strings.NewReplacer("{$}", "", "{c}", "nope", "{t}", "0", "{p}", "nope").Replace(pattern)
}

// Every route of the table but GET / and GET /healthz answers 401 without the cluster token or with a wrong one,
// the same answer in both cases, and lets in Bearer and Basic (user "worker") with the token.
func TestRESTRequiresTheClusterToken(t *testing.T) {
	t.Parallel()
	w, _ := startWorker(t, busEnv(t))
	routes := w.Routes()
	require.Greater(t, len(routes), 25, "the table holds every route")

	var public, names []string
	for _, rt := range routes {
		names = append(names, rt.Name)
		if rt.Public {
			public = append(public, rt.Method+" "+concrete(rt.Pattern))
		}
	}
	assert.ElementsMatch(t, []string{"GET /", "GET /healthz"}, public, "only these answer without the token")
	slices.Sort(names)
	assert.Equal(t, len(names), len(slices.Compact(names)), "route names are unique: %v", names)
	assert.Contains(t, names, "metrics", "the metrics are behind the token too")

	bearer := func(token string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
	}
	basic := func(user, pass string) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth(user, pass) }
	}
	refused := []struct {
		name string
		auth func(*http.Request)
	}{
		{"no token", nil},
		{"wrong token", bearer(strings.Repeat("x", len(testToken)))},
		{"token with a suffix", bearer(testToken + "x")},
		{"token prefix", bearer(testToken[:len(testToken)-1])},
		{"empty bearer", bearer("")},
		{"basic with another user", basic("admin", testToken)},
		{"basic with a wrong password", basic(rpc.TokenUser, "nope")},
		{"token in another scheme", func(r *http.Request) { r.Header.Set("Authorization", "Token "+testToken) }},
	}
	accepted := []struct {
		name string
		auth func(*http.Request)
	}{
		{"bearer", bearer(testToken)},
		{"bearer, scheme in lower case", func(r *http.Request) { r.Header.Set("Authorization", "bearer "+testToken) }},
		{"basic", basic(rpc.TokenUser, testToken)},
	}

	for _, rt := range routes {
		path := concrete(rt.Pattern)
		body := ""
		if rt.Method != http.MethodGet && rt.Method != http.MethodDelete {
			body = "{}"
		}
		t.Run(rt.Name, func(t *testing.T) {
			url := w.URL() + path
			if rt.Public {
				a := send(t, rt.Method, url, body, nil)
				assert.Equal(t, http.StatusOK, a.status, "%s %s: %s", rt.Method, path, a.body)
				return
			}
			var first *answer
			for _, r := range refused {
				a := send(t, rt.Method, url, body, r.auth)
				require.Equal(t, http.StatusUnauthorized, a.status, "%s: %s %s: %s", r.name, rt.Method, path, a.body)
				var er rpc.ErrorResponse
				require.NoError(t, json.Unmarshal([]byte(a.body), &er), "Kafka Connect's error shape: %s", a.body)
				assert.Equal(t, 401, er.ErrorCode)
				assert.NotEmpty(t, er.Message)
				assert.NotContains(t, a.body, testToken)
				assert.Equal(t, []string{`Bearer realm="eventbridge-worker"`, `Basic realm="eventbridge-worker", charset="UTF-8"`},
					a.challenges, r.name)
				if first == nil {
					first = &a
				}
				assert.Equal(t, *first, a, "%s answers as a missing token does", r.name)
			}
			for _, r := range accepted {
				a := send(t, rt.Method, url, body, r.auth)
				assert.NotEqual(t, http.StatusUnauthorized, a.status, "%s: %s %s: %s", r.name, rt.Method, path, a.body)
				assert.Less(t, a.status, 500, "%s: %s %s: %s", r.name, rt.Method, path, a.body)
			}
		})
	}

	// A path no route takes answers 401 without the token too (nothing tells which paths exist), and 404 or 405
	// with it.
	for _, tt := range []struct {
		method, path string
		want         int
	}{{"GET", "/nope", 404}, {"POST", "/connectors/nope/config", 405}, {"POST", "/healthz", 405}} {
		assert.Equal(t, http.StatusUnauthorized, send(t, tt.method, w.URL()+tt.path, "", nil).status, tt.path)
		assert.Equal(t, tt.want, send(t, tt.method, w.URL()+tt.path, "", bearer(testToken)).status, tt.path)
	}
	a := send(t, http.MethodGet, w.URL()+"/healthz", "", nil)
	assert.JSONEq(t, `{"status":"ok"}`, a.body)

	// The client sends its token; a client with another one gets a 401 error.
	_, err := rpc.NewClient(w.URL(), rpc.WithToken(testToken)).ListConnectorNames(context.Background())
	require.NoError(t, err)
	_, err = rpc.NewClient(w.URL(), rpc.WithToken(strings.Repeat("y", 40))).ListConnectorNames(context.Background())
	assert.True(t, rpc.IsUnauthorized(err), "%v", err)
	_, err = rpc.NewClient(w.URL()).ServerInfo(context.Background())
	assert.NoError(t, err, "GET / needs no token")
}

// A handler made without a token lets no one in on the routes that are not public.
func TestRESTWithoutTokenRefusesEveryone(t *testing.T) {
	t.Parallel()
	w, _ := startWorker(t, busEnv(t))
	h := rest.NewHandler(w.Herder(), rest.Config{})
	for _, auth := range []string{"", "Bearer ", "Basic d29ya2VyOg=="} { // the last is worker:""
		req, err := http.NewRequest(http.MethodGet, "/connectors", nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := &recorder{header: http.Header{}}
		h.ServeHTTP(rec, req)
		assert.Equal(t, http.StatusUnauthorized, rec.code, "%q", auth)
	}
}

type recorder struct {
	header http.Header
	code   int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// A worker refuses to be made without a valid cluster token.
func TestWorkerRequiresAToken(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	for _, tt := range []struct{ name, token, want string }{
		{"none", "", "cluster token is required"},
		{"too short", "short", "visible ASCII"},
		{"with a space", strings.Repeat("a", 20) + " " + strings.Repeat("b", 20), "visible ASCII"},
	} {
		_, err := worker.New(worker.Config{NATS: env.Conn, Token: tt.token})
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), tt.want, tt.name)
		if tt.token != "" {
			assert.NotContains(t, err.Error(), tt.token, "errors never show the token")
		}
	}
}

// With MetricsAddr the metrics are served without the token on their own listener, and only they; the REST
// listener still wants the token for them.
func TestMetricsListener(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	w, err := worker.New(worker.Config{Token: testToken, NATS: env.Conn, WorkerID: "m1", RESTAddr: "127.0.0.1:0",
		MetricsAddr: "127.0.0.1:0", Registry: registry(t), StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	require.NotEmpty(t, w.MetricsAddr())
	base := "http://" + w.MetricsAddr()

	a := send(t, http.MethodGet, base+worker.MetricsPath, "", nil)
	assert.Equal(t, http.StatusOK, a.status)
	assert.Contains(t, a.body, "go_goroutines")
	assert.Equal(t, http.StatusOK, send(t, http.MethodHead, base+worker.MetricsPath, "", nil).status)
	assert.Equal(t, http.StatusNotFound, send(t, http.MethodGet, base+"/connectors", "", nil).status, "the API is not on the metrics listener")
	assert.Equal(t, http.StatusNotFound, send(t, http.MethodPost, base+worker.MetricsPath, "", nil).status)
	assert.Equal(t, http.StatusUnauthorized, send(t, http.MethodGet, w.URL()+worker.MetricsPath, "", nil).status)

	require.NoError(t, w.Close(context.Background()))
	_, err = http.Get(base + worker.MetricsPath)
	assert.Error(t, err, "Close stops the metrics listener")
}

// With TLS the REST listener serves HTTPS: a client that trusts the CA reaches it, one that does not is refused.
func TestRESTOverTLS(t *testing.T) {
	t.Parallel()
	files := rpctest.NewTLSFiles(t)
	cfg, err := serverTLS(files)
	require.NoError(t, err)
	env := busEnv(t)
	w, err := worker.New(worker.Config{Token: testToken, NATS: env.Conn, WorkerID: "tls1", RESTAddr: "127.0.0.1:0",
		TLS: cfg, Registry: registry(t), StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	require.True(t, strings.HasPrefix(w.URL(), "https://"), w.URL())

	pool, err := rpc.ReadCAFile(files.CA)
	require.NoError(t, err)
	names, err := rpc.NewClient(w.URL(), rpc.WithToken(testToken), rpc.WithRootCAs(pool)).ListConnectorNames(context.Background())
	require.NoError(t, err)
	assert.Empty(t, names)
	_, err = rpc.NewClient(w.URL(), rpc.WithToken(testToken)).ListConnectorNames(context.Background())
	require.Error(t, err, "the system's CAs do not know the test CA")
	assert.Contains(t, err.Error(), "certificate")
	_, err = rpc.NewClient("http://"+w.Addr(), rpc.WithToken(testToken)).ListConnectorNames(context.Background())
	assert.Error(t, err, "no plain HTTP on a TLS listener")
}

func serverTLS(f rpctest.TLSFiles) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
