package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/herder"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

const (
	secretPassword = "hunter2-secret"
	secretSigning  = "signing-secret-plaintext-42"
)

// logBuffer collects a worker's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startKeyedWorker(t *testing.T, env *jetstreamtest.Env, key []byte, log io.Writer) (*worker.Worker, *rpc.Client) {
	t.Helper()
	w, err := worker.New(worker.Config{
		Token: testToken, NATS: env.Conn, WorkerID: "w1", RESTAddr: "127.0.0.1:0", AllowPrivateTargets: true,
		Registry: registry(t), StopTimeout: 5 * time.Second, MasterKey: key,
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	return w, rpc.NewClient(w.URL(), rpc.WithToken(testToken))
}

// authTarget accepts only requests with the right basic authentication and a valid Standard Webhooks signature.
type authTarget struct {
	srv *httptest.Server

	mu      sync.Mutex
	got     []string
	refused int
}

func newAuthTarget(t *testing.T) *authTarget {
	tg := &authTarget{}
	tg.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		user, pass, ok := r.BasicAuth()
		ts, _ := strconv.ParseInt(r.Header.Get(httpsink.HeaderWebhookTimestamp), 10, 64)
		sig := httpsink.WebhookSignature([]byte(secretSigning), r.Header.Get(httpsink.HeaderWebhookID), ts, body)
		tg.mu.Lock()
		defer tg.mu.Unlock()
		if !ok || user != "svc" || pass != secretPassword || r.Header.Get(httpsink.HeaderWebhookSignature) != sig {
			tg.refused++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		tg.got = append(tg.got, r.Header.Get("Ce-Id"))
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(tg.srv.Close)
	return tg
}

func (tg *authTarget) has(id string) bool {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	for _, g := range tg.got {
		if g == id {
			return true
		}
	}
	return false
}

func secretConfig(url string) map[string]string {
	cfg := targetConfig("r1", url)
	cfg[httpsink.KeyAuthType] = httpsink.AuthBasic
	cfg[httpsink.KeyAuthUsername] = "svc"
	cfg[httpsink.KeyAuthPassword] = secretPassword
	cfg[httpsink.KeyWebhookSigningSecret] = secretSigning
	return cfg
}

// fetch answers the body of a request, which must succeed.
func fetch(t *testing.T, method, url string, body any) string {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Less(t, resp.StatusCode, 300, "%s %s: %s", method, url, data)
	return string(data)
}

func assertNoPlaintext(t *testing.T, where, s string) {
	t.Helper()
	assert.NotContains(t, s, secretPassword, "%s holds the password in plain text", where)
	assert.NotContains(t, s, secretSigning, "%s holds the signing secret in plain text", where)
}

func TestSecretsAreEncryptedEverywhereButTheTask(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	ctx := context.Background()
	key := bytes.Repeat([]byte{0x42}, 32)
	var log logBuffer
	w, client := startKeyedWorker(t, env, key, &log)
	hook := newAuthTarget(t)
	name := targetName("r1")
	cfg := secretConfig(hook.srv.URL)

	created := fetch(t, http.MethodPost, w.URL()+"/connectors", rpc.CreateConnectorRequest{Name: name, Config: cfg})
	assertNoPlaintext(t, "POST /connectors", created)

	// The task decrypted the secrets: the target authenticates and verifies every request.
	env.Publish(t, names.RuleSubject(bus, "r1"), jetstreamtest.Event("e1", "t", map[string]any{"id": "e1"}))
	require.Eventually(t, func() bool { return hook.has("e1") }, wait, tick)
	hook.mu.Lock()
	assert.Zero(t, hook.refused, "no request was refused by the target")
	hook.mu.Unlock()

	stored, err := client.GetConnectorConfig(ctx, name)
	require.NoError(t, err)
	for _, k := range []string{httpsink.KeyAuthPassword, httpsink.KeyWebhookSigningSecret} {
		assert.True(t, rpc.IsEncrypted(stored[k]), "%s is returned encrypted: %q", k, stored[k])
		plain, err := rpc.OpenSecret(key, rpc.ConnectorBinding(worker.DefaultClusterID, name, k), stored[k])
		require.NoError(t, err, "sealed for its connector and key")
		assert.Equal(t, cfg[k], plain)
	}
	assert.Equal(t, "svc", stored[httpsink.KeyAuthUsername], "values that are not secret are kept as given")

	for _, path := range []string{
		"/connectors/" + name, "/connectors/" + name + "/config", "/connectors/" + name + "/status",
		"/connectors/" + name + "/tasks", "/connectors/" + name + "/tasks/0/status",
		"/connectors?expand=info&expand=status", "/allocated/connectors", "/allocated/tasks",
	} {
		assertNoPlaintext(t, "GET "+path, fetch(t, http.MethodGet, w.URL()+path, nil))
	}
	validated := fetch(t, http.MethodPut, w.URL()+"/connector-plugins/"+httpsink.Name+"/config/validate", cfg)
	assertNoPlaintext(t, "validate (plaintext)", validated)
	assert.Contains(t, validated, `"error_count":0`)
	named := maps.Clone(stored)
	named["name"] = name
	validated = fetch(t, http.MethodPut, w.URL()+"/connector-plugins/"+httpsink.Name+"/config/validate", named)
	assert.Contains(t, validated, `"error_count":0`, "a sealed config validates as its plaintext, for the connector it names")
	validated = fetch(t, http.MethodPut, w.URL()+"/connector-plugins/"+httpsink.Name+"/config/validate", stored)
	assert.Contains(t, validated, "cannot be opened", "without the connector's name its sealed values open for none")

	kv, err := env.JS.KeyValue(ctx, names.Bucket(herder.BucketPurpose))
	require.NoError(t, err)
	entry, err := kv.Get(ctx, name)
	require.NoError(t, err)
	assertNoPlaintext(t, "the KV value", string(entry.Value()))
	assert.Contains(t, string(entry.Value()), rpc.SecretPrefixV2)
	// Nor any value of any bucket of the worker: task configs, status, offsets.
	tasks, err := env.JS.KeyValue(ctx, names.Bucket(herder.TasksBucketPurpose))
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := tasks.Get(ctx, name+".0"); return err == nil }, wait, tick,
		"the task config is stored")
	buckets := 0
	for bucket := range env.JS.KeyValueStoreNames(ctx).Name() {
		buckets++
		kv, err := env.JS.KeyValue(ctx, bucket)
		require.NoError(t, err)
		keys, err := kv.ListKeys(ctx)
		require.NoError(t, err)
		for k := range keys.Keys() {
			e, err := kv.Get(ctx, k)
			require.NoError(t, err)
			assertNoPlaintext(t, "KV "+bucket+" "+k, string(e.Value()))
		}
	}
	assert.GreaterOrEqual(t, buckets, 4, "connectors, tasks, status and offsets buckets were read")

	// Putting the same config again, in plain text or as returned, changes nothing: the ciphertext is kept.
	rev := entry.Revision()
	put := fetch(t, http.MethodPut, w.URL()+"/connectors/"+name+"/config", cfg)
	assertNoPlaintext(t, "PUT config (plaintext)", put)
	_, err = client.PutConnectorConfig(ctx, name, stored)
	require.NoError(t, err)
	again, err := client.GetConnectorConfig(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, stored, again)
	entry, err = kv.Get(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, rev, entry.Revision(), "an unchanged config is not stored again")

	// A changed secret is encrypted anew and the task uses it.
	changed := maps.Clone(cfg)
	changed[httpsink.KeyAuthPassword] = "other-password-xyz"
	info, err := client.PutConnectorConfig(ctx, name, changed)
	require.NoError(t, err)
	assert.True(t, rpc.IsEncrypted(info.Config[httpsink.KeyAuthPassword]))
	assert.NotEqual(t, stored[httpsink.KeyAuthPassword], info.Config[httpsink.KeyAuthPassword])
	assert.NotContains(t, mustJSON(info), "other-password-xyz")

	require.NoError(t, w.Close(ctx))
	assertNoPlaintext(t, "the worker's log", log.String())
	assert.NotContains(t, log.String(), "other-password-xyz")
	assert.Contains(t, log.String(), "worker started", "the log was captured")
}

func TestPlaintextSecretWithoutMasterKeyIsRefused(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	var log logBuffer
	w, client := startKeyedWorker(t, env, nil, &log)
	name := targetName("r1")
	code, er := raw(t, http.MethodPost, w.URL()+"/connectors",
		mustJSON(rpc.CreateConnectorRequest{Name: name, Config: secretConfig("http://127.0.0.1:1")}))
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, er.Message, httpsink.KeyAuthPassword)
	assert.Contains(t, er.Message, "--master-key")
	assertNoPlaintext(t, "the error", er.Message)
	names, err := client.ListConnectorNames(context.Background())
	require.NoError(t, err)
	assert.Empty(t, names, "nothing was stored")

	// A config without secret values needs no key.
	_, err = client.CreateConnector(context.Background(), rpc.CreateConnectorRequest{Name: name, Config: targetConfig("r1", "http://127.0.0.1:1")})
	require.NoError(t, err)
	assertNoPlaintext(t, "the worker's log", log.String())
}

func TestWrongMasterKeyFailsWithoutLeaking(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	ctx := context.Background()
	hook := newAuthTarget(t)
	name := targetName("r1")
	var log logBuffer
	w1, client := startKeyedWorker(t, env, bytes.Repeat([]byte{1}, 32), &log)
	_, err := client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: name, Config: secretConfig(hook.srv.URL)})
	require.NoError(t, err)
	stored, err := client.GetConnectorConfig(ctx, name)
	require.NoError(t, err)
	require.NoError(t, w1.Close(ctx))

	// A worker with another key loads the stored connector and cannot decrypt it.
	_, client = startKeyedWorker(t, env, bytes.Repeat([]byte{2}, 32), &log)
	st, err := client.ConnectorStatus(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, rpc.StateFailed, st.Connector.State)
	assert.Contains(t, st.Connector.Trace, httpsink.KeyAuthPassword)
	assert.Contains(t, st.Connector.Trace, "cannot be opened")
	assertNoPlaintext(t, "the trace", st.Connector.Trace)
	assert.NotContains(t, st.Connector.Trace, strings.TrimPrefix(stored[httpsink.KeyAuthPassword], rpc.SecretPrefix),
		"the trace does not show the ciphertext either")

	// Nor can a config encrypted under another key be put.
	_, err = client.PutConnectorConfig(ctx, targetName("r2"), stored)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot be opened")
	assertNoPlaintext(t, "the worker's log", log.String())
}

// TestVersion1SecretsAreSealedAgainAtStart: a connector whose config an earlier release stored with version 1
// secrets (bound to nothing) has them sealed again for itself when a worker starts, and its task opens them; a v2
// value copied from another connector's config into its KV record does not open.
func TestVersion1SecretsAreSealedAgainAtStart(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	ctx := context.Background()
	key := bytes.Repeat([]byte{0x42}, 32)
	var log logBuffer
	w, _ := startKeyedWorker(t, env, key, &log)
	hook := newAuthTarget(t)
	name := targetName("v1")
	cfg := secretConfig(hook.srv.URL)
	fetch(t, http.MethodPost, w.URL()+"/connectors", rpc.CreateConnectorRequest{Name: name, Config: cfg})
	require.NoError(t, w.Close(ctx))

	// What an earlier release stored: the same config, its secrets in version 1.
	kv, err := env.JS.KeyValue(ctx, names.Bucket(herder.BucketPurpose))
	require.NoError(t, err)
	e, err := kv.Get(ctx, name)
	require.NoError(t, err)
	var rec map[string]any
	require.NoError(t, json.Unmarshal(e.Value(), &rec))
	stored := rec["config"].(map[string]any)
	for _, k := range []string{httpsink.KeyAuthPassword, httpsink.KeyWebhookSigningSecret} {
		v1, err := rpc.EncryptSecret(key, cfg[k])
		require.NoError(t, err)
		stored[k] = v1
	}
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	_, err = kv.Put(ctx, name, b)
	require.NoError(t, err)

	w2, client := startKeyedWorker(t, env, key, &log)
	got, err := client.GetConnectorConfig(ctx, name)
	require.NoError(t, err)
	for _, k := range []string{httpsink.KeyAuthPassword, httpsink.KeyWebhookSigningSecret} {
		assert.True(t, strings.HasPrefix(got[k], rpc.SecretPrefixV2), "%s is sealed again in version 2: %q", k, got[k])
		p, err := rpc.OpenSecret(key, rpc.ConnectorBinding(worker.DefaultClusterID, name, k), got[k])
		require.NoError(t, err)
		assert.Equal(t, cfg[k], p)
	}
	env.Publish(t, names.RuleSubject(bus, "r1"), jetstreamtest.Event("m1", "t", map[string]any{"id": "m1"})) // secretConfig's topic
	require.Eventually(t, func() bool { return hook.has("m1") }, wait, tick, "the task opens the secrets sealed again")
	assert.Contains(t, log.String(), "sealed a connector's secrets again")
	_ = w2
}
