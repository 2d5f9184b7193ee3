package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/connect"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/plugins/webhook"
)

// delivery is one request an HTTP target made: its headers and its body.
type delivery struct {
	header http.Header
	body   []byte
}

// bodyReceiver is an HTTP target that keeps every request it receives.
type bodyReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []delivery
}

func newBodyReceiver(t *testing.T) *bodyReceiver {
	r := &bodyReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{header: req.Header.Clone(), body: b})
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// byID waits for the delivery of the event id.
func (r *bodyReceiver) byID(t *testing.T, id string) delivery {
	t.Helper()
	var out delivery
	require.Eventuallyf(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, d := range r.got {
			if d.header.Get("ce-id") == id {
				out = d
				return true
			}
		}
		return false
	}, 60*time.Second, 50*time.Millisecond, "waiting for event %s", id)
	return out
}

func (r *bodyReceiver) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, d := range r.got {
		out = append(out, d.header.Get("ce-id"))
	}
	return out
}

// hook sends one request to a webhook URL and returns the status and the answer.
func hook(t *testing.T, method, url string, header map[string]string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

type sourceAnswer struct {
	Name    string            `json:"name"`
	Type    string            `json:"type"`
	State   string            `json:"state"`
	Config  map[string]string `json:"config"`
	Webhook *struct {
		Token string   `json:"token"`
		URLs  []string `json:"urls"`
	} `json:"webhook"`
	Status struct {
		State    string                       `json:"state"`
		Counters *struct{ Read, Written int } `json:"counters"`
	} `json:"status"`
}

func decodeSource(t *testing.T, b []byte) sourceAnswer {
	t.Helper()
	var s sourceAnswer
	require.NoErrorf(t, json.Unmarshal(b, &s), "answer: %s", b)
	return s
}

// TestWebhookSourceEndToEnd creates an http source through the API and drives its webhook: allowed and refused
// methods, client addresses, referers, sizes and signatures; the events reach an HTTP target through a rule;
// disable, enable, delete, and the bus's deletion refused while the source exists.
func TestWebhookSourceEndToEnd(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	r := newBodyReceiver(t)

	a.must("POST", "/api/v1/buses", map[string]any{"name": "shop"}, 201)
	a.must("POST", "/api/v1/buses/shop/rules", map[string]any{"name": "hooks",
		"eventPattern": map[string]any{"type": []any{source.HTTPEventType}}}, 201)
	a.must("PUT", "/api/v1/buses/shop/rules/hooks/targets/receiver", httpTarget(r.srv.URL), 201)

	// Bad configs are refused naming the key, before anything is stored.
	status, out := a.do("POST", "/api/v1/buses/shop/sources", "application/json",
		[]byte(`{"name": "bad", "type": "http", "config": {"http.methods": "POST,FETCH"}}`))
	require.Equal(t, http.StatusBadRequest, status, string(out))
	assert.Contains(t, string(out), "http.methods")
	status, out = a.do("POST", "/api/v1/buses/shop/sources", "application/json", []byte(`{"name": "bad", "type": "nosuch"}`))
	require.Equal(t, http.StatusBadRequest, status, string(out))
	assert.Equal(t, "UnknownSourceType", problemCode(t, out))

	created := decodeSource(t, a.must("POST", "/api/v1/buses/shop/sources", map[string]any{
		"name": "github", "type": "http", "description": "pushes",
		"config": map[string]any{
			"http.methods": "POST,PUT", "http.ips": "127.0.0.1, ::1", "http.referers": "*.example.com",
			"http.signature.scheme": "github", "http.signature.secret": "gh-secret",
		},
	}, 201))
	require.NotNil(t, created.Webhook)
	assert.Equal(t, "***", created.Config["http.signature.secret"], "secrets are never answered")
	require.Len(t, created.Webhook.URLs, 2)
	assert.Equal(t, "http://"+m.HTTPAddr()+"/webhook/putEvents?token="+created.Webhook.Token, created.Webhook.URLs[0])
	url := created.Webhook.URLs[0]
	pathURL := created.Webhook.URLs[1]

	// The secret is sealed in the database and in the connector config.
	connector := connect.SourceName("default", "shop", "github")
	var cfg map[string]string
	require.Eventually(t, func() bool {
		states, _ := a.connectorStates()
		return states[connector] == "RUNNING"
	}, 30*time.Second, 50*time.Millisecond)
	workerCfg, err := connectorConfig(m, connector)
	require.NoError(t, err)
	cfg = workerCfg
	assert.True(t, strings.HasPrefix(cfg["http.signature.secret"], "enc:v2:"), "sealed for the connector in its config")
	assert.Equal(t, stream.Names{Cluster: m.Config.ClusterID}.BusStream(b0(t, m, "shop")), cfg[webhook.KeySourceStream],
		"the http-source reads the intake in the bus's stream")
	assert.Contains(t, cfg[webhook.KeySourceSubject], ".source.", "the http-source reads the source's intake subject")
	repo := persistence.NewSourceRepository(m.db)
	b, err := persistence.NewBusRepository(m.db).Get(context.Background(), "default", "shop")
	require.NoError(t, err)
	stored, err := repo.Get(context.Background(), b.ID(), "github")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(stored.Config()["http.signature.secret"], "enc:v2:"), "sealed in the database")

	body := []byte(`{"ref": "refs/heads/main", "commits": 3}`)
	sign := func(b []byte) string {
		h := hmac.New(sha256.New, []byte("gh-secret"))
		h.Write(b)
		return "sha256=" + hex.EncodeToString(h.Sum(nil))
	}
	good := map[string]string{"Content-Type": "application/json", "Referer": "https://shop.example.com/admin",
		"X-Hub-Signature-256": sign(body), "Authorization": "Bearer secret-token", "Cookie": "session=1", "X-Team": "shop"}
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for hk, hv := range good {
			h[hk] = hv
		}
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
		return h
	}

	// Refusals, in the order of the checks.
	for _, tc := range []struct {
		name   string
		method string
		url    string
		header map[string]string
		body   []byte
		status int
	}{
		{"wrong token", "POST", strings.Replace(url, created.Webhook.Token, source.NewToken(), 1), good, body, 404},
		{"no token", "POST", "http://" + m.HTTPAddr() + "/webhook/putEvents", good, body, 404},
		{"refused method", "GET", url, good, nil, 403},
		{"refused referer", "POST", url, with("Referer", "https://evil.example.org/"), body, 403},
		{"missing referer", "POST", url, with("Referer", ""), body, 403},
		{"body over 256 KiB", "POST", url, good, bytes.Repeat([]byte("a"), 300<<10), 413},
		{"bad signature", "POST", url, with("X-Hub-Signature-256", sign([]byte("other"))), body, 401},
		{"no signature", "POST", url, with("X-Hub-Signature-256", ""), body, 401},
	} {
		status, out := hook(t, tc.method, tc.url, tc.header, tc.body)
		assert.Equalf(t, tc.status, status, "%s: %s", tc.name, out)
		if tc.status == 404 {
			assert.NotContains(t, string(out), "github", "%s: no hint", tc.name)
		}
	}

	// A source that allows other addresses refuses this client (127.0.0.1).
	other := decodeSource(t, a.must("POST", "/api/v1/buses/shop/sources", map[string]any{
		"name": "office", "type": "http", "config": map[string]any{"http.ips": "10.0.0.0/8"}}, 201))
	status, out = hook(t, "POST", other.Webhook.URLs[1], nil, body)
	assert.Equal(t, http.StatusForbidden, status, string(out))
	a.must("DELETE", "/api/v1/buses/shop/sources/office", nil, 204)

	// Accepted: the event reaches the target with the request, without credentials.
	status, out = hook(t, "POST", url+"&team=a", good, body)
	require.Equal(t, http.StatusOK, status, string(out))
	var ans struct {
		EventID string `json:"eventId"`
	}
	require.NoError(t, json.Unmarshal(out, &ans))
	require.NotEmpty(t, ans.EventID)
	d := r.byID(t, ans.EventID)
	assert.Equal(t, source.HTTPEventType, d.header.Get("ce-type"))
	assert.Equal(t, "eventbridge:webhook:github", d.header.Get("ce-source"))
	var data struct {
		Body        map[string]any    `json:"body"`
		Headers     map[string]string `json:"headers"`
		HTTPMethod  string            `json:"httpMethod"`
		Path        string            `json:"path"`
		QueryString map[string]string `json:"queryString"`
	}
	require.NoError(t, json.Unmarshal(d.body, &data), string(d.body))
	assert.Equal(t, map[string]any{"ref": "refs/heads/main", "commits": float64(3)}, data.Body)
	assert.Equal(t, "POST", data.HTTPMethod)
	assert.Equal(t, "/webhook/putEvents", data.Path)
	assert.Equal(t, map[string]string{"team": "a"}, data.QueryString, "the token is not in the event")
	assert.Equal(t, "shop", data.Headers["X-Team"])
	for _, h := range []string{"Authorization", "Cookie", "X-Hub-Signature-256"} {
		assert.NotContains(t, data.Headers, h)
	}
	assert.NotContains(t, string(d.body), "secret-token")

	// The path form, with PUT.
	status, out = hook(t, "PUT", pathURL, good, body)
	require.Equal(t, http.StatusOK, status, string(out))
	require.NoError(t, json.Unmarshal(out, &ans))
	r.byID(t, ans.EventID)

	// Stored once, on the bus's .in subject, not on the source's intake; counted for the source by the control
	// plane (read and written), its connector having moved nothing.
	js, err := jetstream.New(m.nc)
	require.NoError(t, err)
	bst, err := js.Stream(context.Background(), stream.Names{Cluster: m.Config.ClusterID}.BusStream(b.ID()))
	require.NoError(t, err)
	info, err := bst.Info(context.Background(), jetstream.WithSubjectFilter(cfg[webhook.KeySourceSubject]))
	require.NoError(t, err)
	assert.Empty(t, info.State.Subjects, "nothing on the source's intake subject")
	counted := decodeSource(t, a.must("GET", "/api/v1/buses/shop/sources/github", nil, 200))
	require.NotNil(t, counted.Status.Counters)
	assert.Equal(t, struct{ Read, Written int }{2, 2}, *counted.Status.Counters)

	// Disabled: the webhook answers 404 and the connector is stopped; enabled again, both work.
	a.must("POST", "/api/v1/buses/shop/sources/github/disable", nil, 200)
	status, _ = hook(t, "POST", url, good, body)
	assert.Equal(t, http.StatusNotFound, status)
	require.Eventually(t, func() bool {
		states, _ := a.connectorStates()
		return states[connector] == "STOPPED"
	}, 30*time.Second, 50*time.Millisecond, "the connector of a disabled source is stopped")
	got := decodeSource(t, a.must("GET", "/api/v1/buses/shop/sources/github", nil, 200))
	assert.Equal(t, "DISABLED", got.State)
	assert.Equal(t, "STOPPED", got.Status.State)

	a.must("POST", "/api/v1/buses/shop/sources/github/enable", nil, 200)
	require.Eventually(t, func() bool {
		states, _ := a.connectorStates()
		return states[connector] == "RUNNING"
	}, 30*time.Second, 50*time.Millisecond)
	status, out = hook(t, "POST", url, good, body)
	require.Equal(t, http.StatusOK, status, string(out))
	require.NoError(t, json.Unmarshal(out, &ans))
	r.byID(t, ans.EventID)

	// A rotated token replaces the former one.
	rotated := decodeSource(t, a.must("POST", "/api/v1/buses/shop/sources/github/rotate-token", nil, 200))
	require.NotEqual(t, created.Webhook.Token, rotated.Webhook.Token)
	status, _ = hook(t, "POST", url, good, body)
	assert.Equal(t, http.StatusNotFound, status)
	status, out = hook(t, "POST", rotated.Webhook.URLs[0], good, body)
	require.Equal(t, http.StatusOK, status, string(out))

	// The bus cannot be deleted while the source feeds it, and the answer names the source.
	a.must("DELETE", "/api/v1/buses/shop/rules/hooks", nil, 204)
	status, out = a.do("DELETE", "/api/v1/buses/shop", "", nil)
	require.Equal(t, http.StatusConflict, status, string(out))
	assert.Contains(t, string(out), "github")

	a.must("DELETE", "/api/v1/buses/shop/sources/github", nil, 204)
	require.Eventually(t, func() bool {
		states, _ := a.connectorStates()
		_, ok := states[connector]
		return !ok
	}, 30*time.Second, 50*time.Millisecond, "the connector of a deleted source is gone")
	status, _ = hook(t, "POST", rotated.Webhook.URLs[0], good, body)
	assert.Equal(t, http.StatusNotFound, status)
	a.must("DELETE", "/api/v1/buses/shop", nil, 204)
	assert.NotEmpty(t, r.ids())
}

// b0 is the id of a bus of the default account.
func b0(t *testing.T, m *Main, name string) string {
	t.Helper()
	b, err := persistence.NewBusRepository(m.db).Get(context.Background(), "default", name)
	require.NoError(t, err)
	return b.ID()
}

// connectorConfig reads a connector's config from the embedded worker.
func connectorConfig(m *Main, name string) (map[string]string, error) {
	return workerClient(m).GetConnectorConfig(context.Background(), name)
}

// TestEventBusSourceEndToEnd: an eventbus source on one bus reads another bus's stream; the events put on the
// other bus reach the first bus's target. Disabled, its connector is stopped; deleted, it is gone.
func TestEventBusSourceEndToEnd(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	r := newReceiver(t)

	a.must("POST", "/api/v1/buses", map[string]any{"name": "upstream"}, 201)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "downstream"}, 201)
	a.must("POST", "/api/v1/buses/downstream/rules", map[string]any{"name": "all",
		"eventPattern": map[string]any{"source": []any{"crm"}}}, 201)
	a.must("PUT", "/api/v1/buses/downstream/rules/all/targets/hook", httpTarget(r.srv.URL), 201)

	up, err := persistence.NewBusRepository(m.db).Get(context.Background(), "default", "upstream")
	require.NoError(t, err)
	names := stream.Names{Cluster: m.Config.ClusterID}
	// A stream of this installation's NATS is never named: not another account's bus, not the runtime's KV.
	for _, raw := range []string{names.BusStream(up.ID()), "KV_" + m.Config.ClusterID + "_connectors"} {
		status, out := a.do("POST", "/api/v1/buses/downstream/sources", "application/json",
			[]byte(`{"name": "feed", "type": "eventbus", "config": {"source.stream": "`+raw+`"}}`))
		require.Equal(t, http.StatusBadRequest, status, string(out))
		assert.Contains(t, string(out), `"field":"config.source.stream"`)
	}
	status, out := a.do("POST", "/api/v1/buses/downstream/sources", "application/json",
		[]byte(`{"name": "feed", "type": "eventbus", "config": {"nats.url": "nats://nats.example.com:4222", "source.stream": "a.b"}}`))
	require.Equal(t, http.StatusBadRequest, status, string(out))
	assert.Equal(t, "InvalidSourceConfig", problemCode(t, out), "an external NATS's stream is checked by the plugin")
	assert.Contains(t, string(out), "config.source.stream")

	created := decodeSource(t, a.must("POST", "/api/v1/buses/downstream/sources", map[string]any{
		"name": "feed", "type": "eventbus", "config": map[string]any{"bus": "upstream", "source.batch.size": 50},
	}, 201))
	assert.Equal(t, "50", created.Config["source.batch.size"], "numbers are kept as strings")
	assert.Nil(t, created.Webhook, "only http sources have webhooks")
	connector := connect.SourceName("default", "downstream", "feed")
	a.waitState(connector, "RUNNING")

	a.putBatch("upstream", []map[string]any{event("u1", "crm", "c", map[string]any{"n": 1}), event("u2", "crm", "c", map[string]any{"n": 2})})
	r.waitFor(t, map[string]bool{"u1": true, "u2": true})
	got := decodeSource(t, a.must("GET", "/api/v1/buses/downstream/sources/feed", nil, 200))
	assert.Equal(t, "RUNNING", got.Status.State)

	a.must("POST", "/api/v1/buses/downstream/sources/feed/disable", nil, 200)
	require.Eventually(t, func() bool {
		states, _ := a.connectorStates()
		return states[connector] == "STOPPED"
	}, 30*time.Second, 50*time.Millisecond, "the connector of a disabled source is stopped")
	a.must("POST", "/api/v1/buses/downstream/sources/feed/enable", nil, 200)
	a.putBatch("upstream", []map[string]any{event("u3", "crm", "c", map[string]any{"n": 3})})
	r.waitFor(t, map[string]bool{"u1": true, "u2": true, "u3": true})

	a.must("DELETE", "/api/v1/buses/downstream/rules/all", nil, 204)
	status, out = a.do("DELETE", "/api/v1/buses/downstream", "", nil)
	require.Equal(t, http.StatusConflict, status, string(out))
	assert.Contains(t, string(out), "feed", "the refusal names the source")
	a.must("DELETE", "/api/v1/buses/downstream/sources/feed", nil, 204)
	require.Eventually(t, func() bool {
		states, _ := a.connectorStates()
		_, ok := states[connector]
		return !ok
	}, 30*time.Second, 50*time.Millisecond, "the connector of a deleted source is gone")
	a.must("DELETE", "/api/v1/buses/downstream", nil, 204)
}

// TestWebhookKeysAgreeWithThePlugin: the control plane enforces the webhook's keys by the names of domain/source
// (web and domain may not import worker/...); they must be the http-source plugin's.
func TestWebhookKeysAgreeWithThePlugin(t *testing.T) {
	assert.Equal(t, webhook.Name, source.HTTP.Plugin())
	assert.Equal(t, webhook.EventType, source.HTTPEventType)
	for ours, theirs := range map[string]string{
		source.KeyMethods: webhook.KeyMethods, source.KeyIPs: webhook.KeyIPs, source.KeyReferers: webhook.KeyReferers,
		source.KeySignatureScheme: webhook.KeySignatureScheme, source.KeySignatureHeader: webhook.KeySignatureHeader,
		source.KeySignatureSecret: webhook.KeySignatureSecret,
		source.SchemeNone:         webhook.SchemeNone, source.SchemeGitHub: webhook.SchemeGitHub,
		source.SchemeStandardWebhooks: webhook.SchemeStandardWebhooks, source.SchemeHMACSHA256: webhook.SchemeHMACSHA256,
	} {
		assert.Equal(t, theirs, ours)
	}
	p, ok := connector.Lookup(webhook.Name)
	require.True(t, ok, "the http-source plugin is registered in the control plane's embedded worker")
	secret := false
	for _, f := range p.FullSpec() {
		if f.Name == source.KeySignatureSecret {
			secret = f.Secret
		}
	}
	assert.True(t, secret, "the plugin marks the signature secret secret, so the control plane seals it")
}

// TestTrustedProxiesFlag: --trusted-proxies (EB_TRUSTED_PROXIES) takes IPs and CIDRs; anything else is refused,
// naming the flag.
func TestTrustedProxiesFlag(t *testing.T) {
	env := func(string) string { return "" }
	c, err := ParseConfig([]string{"--trusted-proxies", "10.0.0.0/8, 192.168.0.1,::1"}, env)
	require.NoError(t, err)
	require.Len(t, c.TrustedProxyPrefixes(), 3)
	assert.True(t, c.TrustedProxyPrefixes()[1].Contains(netip.MustParseAddr("192.168.0.1")))
	c, err = ParseConfig(nil, func(k string) string {
		if k == "EB_TRUSTED_PROXIES" {
			return "172.16.0.0/12"
		}
		return ""
	})
	require.NoError(t, err)
	assert.Len(t, c.TrustedProxyPrefixes(), 1)
	c, err = ParseConfig(nil, env)
	require.NoError(t, err)
	assert.Empty(t, c.TrustedProxyPrefixes(), "no proxy is trusted by default")
	_, err = ParseConfig([]string{"--trusted-proxies", "proxy.local"}, env)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--trusted-proxies")
}

// TestWebhookSignatureSchemesEndToEnd: the http-source plugin accepts the configs of every scheme, and the
// control plane verifies what senders of each scheme send (Standard Webhooks, a plain HMAC header).
func TestWebhookSignatureSchemesEndToEnd(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "shop"}, 201)
	key := []byte("a 24-byte key for signing")
	std := decodeSource(t, a.must("POST", "/api/v1/buses/shop/sources", map[string]any{"name": "std", "type": "http",
		"config": map[string]any{"http.signature.scheme": "standard-webhooks",
			"http.signature.secret": "whsec_" + base64.StdEncoding.EncodeToString(key)}}, 201))
	custom := decodeSource(t, a.must("POST", "/api/v1/buses/shop/sources", map[string]any{"name": "custom", "type": "http",
		"config": map[string]any{"http.signature.scheme": "hmac-sha256", "http.signature.header": "X-Signature",
			"http.signature.secret": "k2"}}, 201))
	status, out := a.do("POST", "/api/v1/buses/shop/sources", "application/json",
		[]byte(`{"name": "nosecret", "type": "http", "config": {"http.signature.scheme": "github"}}`))
	require.Equal(t, http.StatusBadRequest, status, string(out))
	assert.Contains(t, string(out), "http.signature.secret", "a scheme without a secret is refused, naming the key")

	body := []byte(`{"type": "invoice.paid"}`)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("msg_1." + ts + "." + string(body)))
	good := map[string]string{"webhook-id": "msg_1", "webhook-timestamp": ts,
		"webhook-signature": "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))}
	status, out = hook(t, "POST", std.Webhook.URLs[0], good, body)
	assert.Equal(t, http.StatusOK, status, string(out))
	stale := map[string]string{"webhook-id": "msg_1", "webhook-timestamp": strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10),
		"webhook-signature": good["webhook-signature"]}
	status, out = hook(t, "POST", std.Webhook.URLs[0], stale, body)
	assert.Equal(t, http.StatusUnauthorized, status, string(out))

	h := hmac.New(sha256.New, []byte("k2"))
	h.Write(body)
	status, out = hook(t, "POST", custom.Webhook.URLs[0], map[string]string{"X-Signature": hex.EncodeToString(h.Sum(nil))}, body)
	assert.Equal(t, http.StatusOK, status, string(out))
	status, out = hook(t, "POST", custom.Webhook.URLs[0], map[string]string{"X-Signature": "00"}, body)
	assert.Equal(t, http.StatusUnauthorized, status, string(out))
}

// An eventbus source may name another bus of the account (config.bus) instead of a stream: the control plane
// fills in that bus's stream and subject.
func TestEventBusSourceByBusName(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	r := newReceiver(t)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "upstream"}, 201)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "downstream"}, 201)
	a.must("POST", "/api/v1/buses/downstream/rules", map[string]any{"name": "all",
		"eventPattern": map[string]any{"source": []any{"crm"}}}, 201)
	a.must("PUT", "/api/v1/buses/downstream/rules/all/targets/hook", httpTarget(r.srv.URL), 201)
	// Another account with a bus named "secret": answered as a bus that does not exist.
	a.must("POST", "/api/v1/accounts", map[string]any{"id": "other"}, 201)
	other := a
	other.account = "other"
	other.must("POST", "/api/v1/buses", map[string]any{"name": "secret"}, 201)
	nope := a.must("POST", "/api/v1/buses/downstream/sources", map[string]any{"name": "x", "type": "eventbus",
		"config": map[string]any{"bus": "nosuch"}}, 400)
	theirs := a.must("POST", "/api/v1/buses/downstream/sources", map[string]any{"name": "x", "type": "eventbus",
		"config": map[string]any{"bus": "secret"}}, 400)
	assert.Equal(t, strings.ReplaceAll(string(nope), "nosuch", "secret"), string(theirs), "another account's bus is a bus that does not exist")

	for _, tc := range []struct {
		name   string
		source map[string]any
		field  string
	}{
		{"its own bus", map[string]any{"name": "loop", "type": "eventbus", "config": map[string]any{"bus": "downstream"}}, "config.bus"},
		{"a bus that does not exist", map[string]any{"name": "nope", "type": "eventbus", "config": map[string]any{"bus": "nope"}}, "config.bus"},
		{"both a bus and a stream", map[string]any{"name": "both", "type": "eventbus",
			"config": map[string]any{"bus": "upstream", "source.stream": "S"}}, "config.source.stream"},
		{"a bus of another account", map[string]any{"name": "theirs", "type": "eventbus",
			"config": map[string]any{"bus": "secret"}}, "config.bus"},
		{"bus on another type", map[string]any{"name": "tick", "type": "schedule",
			"config": map[string]any{"bus": "upstream", "schedule.expression": "rate(1 minute)"}}, "config.bus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := a.must("POST", "/api/v1/buses/downstream/sources", tc.source, 400)
			assert.Contains(t, string(out), `"field":"`+tc.field+`"`)
		})
	}

	created := decodeSource(t, a.must("POST", "/api/v1/buses/downstream/sources", map[string]any{
		"name": "feed", "type": "eventbus", "config": map[string]any{"bus": "upstream"}}, 201))
	assert.Equal(t, "upstream", created.Config["bus"], "the source keeps the bus's name")
	a.waitState(connect.SourceName("default", "downstream", "feed"), "RUNNING")
	a.putBatch("upstream", []map[string]any{event("b1", "crm", "c", map[string]any{"n": 1})})
	r.waitFor(t, map[string]bool{"b1": true})
}
