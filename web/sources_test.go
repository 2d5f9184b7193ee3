package web_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/web/rest"
)

// fakeSourceRuntime stands for the worker runtime of sources, a process boundary: it knows the plugins
// http-source (secret http.signature.secret) and schedule-source (requires schedule.expression), and validates
// as the worker's validate endpoint would, naming every problem.
type fakeSourceRuntime struct {
	mu          sync.Mutex
	unreachable bool
	synced      []string
}

func newFakeSourceRuntime() *fakeSourceRuntime { return &fakeSourceRuntime{} }

var fakeSourcePlugins = map[source.Type][]string{source.HTTP: {source.KeySignatureSecret}, "schedule": nil}

func (f *fakeSourceRuntime) SecretKeys(_ context.Context, t source.Type) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unreachable {
		return nil, domain.ErrUnavailable.With("the worker runtime cannot be reached to check the source's plugin and config; try again")
	}
	keys, ok := fakeSourcePlugins[t]
	if !ok {
		return nil, source.ErrUnknownType.With("type %q is not a source plugin of the runtime; the source types are: http, schedule", t).WithField("type")
	}
	return keys, nil
}

func (f *fakeSourceRuntime) Validate(_ context.Context, _ *bus.Bus, s *source.Source) error {
	cfg := s.Config()
	var problems []string
	if s.Type() == "schedule" && cfg["schedule.expression"] == "" {
		problems = append(problems, "config.schedule.expression: required")
	}
	if v, ok := cfg["schedule.catchup"]; ok && v != "true" && v != "false" {
		problems = append(problems, "config.schedule.catchup: must be true or false")
	}
	if len(problems) > 0 {
		return source.ErrInvalidConfig.With("the config has %d problem(s): %s", len(problems), strings.Join(problems, "; ")).WithField("config")
	}
	return nil
}

func (f *fakeSourceRuntime) SyncBus(_ context.Context, b *bus.Bus) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced = append(f.synced, b.Name())
	return nil
}

func (f *fakeSourceRuntime) SourceStatus(_ context.Context, _ *bus.Bus, s *source.Source) (*source.Status, error) {
	state := "RUNNING"
	if !s.Enabled() {
		state = "STOPPED"
	}
	return &source.Status{State: state, Tasks: []source.TaskStatus{{ID: 0, State: state, WorkerID: "w1",
		Counters: &source.Counters{Read: 3, Written: 3}}}}, nil
}

func (f *fakeSourceRuntime) setUnreachable(v bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unreachable = v
}

const srcURL = "/api/v1/buses/orders/sources"

func withSource(name string, body map[string]any) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		t.Helper()
		b := map[string]any{"name": name}
		for k, v := range body {
			b[k] = v
		}
		e.must(t, http.MethodPost, srcURL, b, http.StatusCreated)
	}
}

var (
	hookBody = map[string]any{"type": "http", "config": map[string]any{
		"http.methods": "POST,PUT", "http.ips": "192.0.2.0/24", "http.referers": "*.example.com",
		"http.signature.scheme": "github", "http.signature.secret": "gh-secret"}}
	tickBody = map[string]any{"type": "schedule", "config": map[string]any{"schedule.expression": "rate(5 minutes)"}}
)

// tokenOf reads the webhook token of a source of the default account's bus orders.
func (e *env) tokenOf(t *testing.T, name string) string {
	t.Helper()
	var s rest.Source
	require.NoError(t, json.Unmarshal(e.must(t, http.MethodGet, srcURL+"/"+name, nil, http.StatusOK).Body, &s))
	require.NotNil(t, s.Webhook)
	return s.Webhook.Token
}

// storedSource reads a source as stored.
func (e *env) storedSource(t *testing.T, name string) *source.Source {
	t.Helper()
	b, err := e.buses.Get(context.Background(), domain.DefaultAccountID, "orders")
	require.NoError(t, err)
	s, err := e.sources.Get(context.Background(), b.ID(), name)
	require.NoError(t, err)
	return s
}

func TestSourcesAPI(t *testing.T) {
	t.Parallel()
	run(t, []scenario{
		{name: "create an http source", method: http.MethodPost, url: srcURL, body: map[string]any{"name": "github",
			"type": "http", "description": "pushes", "config": map[string]any{"http.methods": "POST", "http.signature.scheme": "github",
				"http.signature.secret": "gh-secret", "http.batch": 10, "http.flag": true}},
			setup: withBus("orders"), status: http.StatusCreated,
			json:   map[string]any{"name": "github", "type": "http", "state": "ENABLED"},
			absent: []string{"gh-secret"},
			after: func(t *testing.T, e *env, resp *response) {
				var s rest.Source
				require.NoError(t, json.Unmarshal(resp.Body, &s))
				assert.JSONEq(t, `"***"`, string(s.Config["http.signature.secret"]), "secrets are answered as ***")
				assert.JSONEq(t, `"10"`, string(s.Config["http.batch"]), "numbers are kept as strings")
				assert.JSONEq(t, `"true"`, string(s.Config["http.flag"]), "booleans are kept as strings")
				require.NotNil(t, s.Webhook)
				assert.Len(t, s.Webhook.Token, 43)
				assert.Equal(t, []string{"http://localhost/webhook/putEvents?token=" + s.Webhook.Token,
					"http://localhost/api/v1/webhooks/" + s.Webhook.Token}, s.Webhook.URLs)
				assert.Equal(t, "RUNNING", s.Status.State)
				require.Len(t, s.Status.Tasks, 1)
				assert.Equal(t, uint64(3), s.Status.Tasks[0].Counters.Written)
				stored := e.storedSource(t, "github")
				assert.True(t, strings.HasPrefix(stored.Config()["http.signature.secret"], "enc:v2:"), "sealed in the database")
			}},
		{name: "create a schedule source has no webhook", method: http.MethodPost, url: srcURL, body: map[string]any{"name": "tick",
			"type": "schedule", "config": map[string]any{"schedule.expression": "rate(5 minutes)"}},
			setup: withBus("orders"), status: http.StatusCreated, absent: []string{`"webhook"`},
		},
		{name: "unknown type", method: http.MethodPost, url: srcURL, body: map[string]any{"name": "x", "type": "nosuch"},
			setup: withBus("orders"), status: http.StatusBadRequest, json: map[string]any{"code": "UnknownSourceType", "field": "type"},
			contains: []string{"http, schedule"}},
		{name: "missing type", method: http.MethodPost, url: srcURL, body: map[string]any{"name": "x"},
			setup: withBus("orders"), status: http.StatusBadRequest, json: map[string]any{"code": "ValidationError", "field": "type"}},
		{name: "every problem of the config is named", method: http.MethodPost, url: srcURL,
			body:  map[string]any{"name": "x", "type": "schedule", "config": map[string]any{"schedule.catchup": "maybe"}},
			setup: withBus("orders"), status: http.StatusBadRequest, json: map[string]any{"code": "InvalidSourceConfig"},
			contains: []string{"config.schedule.expression: required", "config.schedule.catchup: must be true or false"}},
		{name: "a webhook config the control plane cannot enforce", method: http.MethodPost, url: srcURL,
			body:  map[string]any{"name": "x", "type": "http", "config": map[string]any{"http.ips": "10.0.0.0/33"}},
			setup: withBus("orders"), status: http.StatusBadRequest,
			json: map[string]any{"code": "InvalidSourceConfig", "field": "config.http.ips"}},
		{name: "a nested config value", method: http.MethodPost, url: srcURL,
			body:  map[string]any{"name": "x", "type": "schedule", "config": map[string]any{"schedule.expression": []any{"a"}}},
			setup: withBus("orders"), status: http.StatusBadRequest, json: map[string]any{"field": "config.schedule.expression"}},
		{name: "a key the control plane sets", method: http.MethodPost, url: srcURL,
			body:  map[string]any{"name": "x", "type": "schedule", "config": map[string]any{"output.subject": "a"}},
			setup: withBus("orders"), status: http.StatusBadRequest, json: map[string]any{"field": "config.output.subject"}},
		{name: "runtime unreachable", method: http.MethodPost, url: srcURL, body: map[string]any{"name": "x", "type": "schedule"},
			setup:  setups(withBus("orders"), func(t *testing.T, e *env) { e.sourceRuntime.setUnreachable(true) }),
			status: http.StatusServiceUnavailable, json: map[string]any{"code": "ServiceUnavailable"}, contains: []string{"cannot be reached"}},
		{name: "duplicate", method: http.MethodPost, url: srcURL, body: map[string]any{"name": "tick", "type": "schedule",
			"config": map[string]any{"schedule.expression": "rate(1 day)"}},
			setup: setups(withBus("orders"), withSource("tick", tickBody)), status: http.StatusConflict,
			json: map[string]any{"code": "SourceAlreadyExists"}},
		{name: "unknown bus", method: http.MethodPost, url: srcURL, body: map[string]any{"name": "x", "type": "schedule"},
			status: http.StatusNotFound, json: map[string]any{"code": "BusNotFound"}},
		{name: "get unknown", method: http.MethodGet, url: srcURL + "/nope", setup: withBus("orders"),
			status: http.StatusNotFound, json: map[string]any{"code": "SourceNotFound"}},
		{name: "list pages and filters by prefix", method: http.MethodGet, url: srcURL + "?limit=1&namePrefix=t",
			setup:  setups(withBus("orders"), withSource("tick", tickBody), withSource("tock", tickBody), withSource("github", hookBody)),
			status: http.StatusOK, json: map[string]any{"sources.0.name": "tick"}, contains: []string{`"nextToken"`},
			after: func(t *testing.T, e *env, resp *response) {
				next, _ := resp.JSON(t)["nextToken"].(string)
				page2 := e.must(t, http.MethodGet, srcURL+"?limit=1&namePrefix=t&nextToken="+next, nil, http.StatusOK)
				assertJSONPath(t, page2.JSON(t), "sources.0.name", "tock")
				assert.NotContains(t, string(page2.Body), "nextToken")
			}},
		{name: "put creates", method: http.MethodPut, url: srcURL + "/tick", body: tickBody, setup: withBus("orders"),
			status: http.StatusCreated, json: map[string]any{"name": "tick"}},
		{name: "put replaces; *** keeps the secret", method: http.MethodPut, url: srcURL + "/github",
			body: map[string]any{"type": "http", "config": map[string]any{"http.methods": "PUT",
				"http.signature.scheme": "github", "http.signature.secret": "***"}},
			setup: setups(withBus("orders"), withSource("github", hookBody)), status: http.StatusOK,
			after: func(t *testing.T, e *env, resp *response) {
				s := e.storedSource(t, "github")
				assert.Equal(t, "PUT", s.Config()["http.methods"])
				assert.NotContains(t, s.Config(), "http.ips", "a PUT replaces the whole config")
				assert.True(t, strings.HasPrefix(s.Config()["http.signature.secret"], "enc:v2:"), "the secret is kept, sealed")
			}},
		{name: "put cannot change the type", method: http.MethodPut, url: srcURL + "/github", body: tickBody,
			setup: setups(withBus("orders"), withSource("github", hookBody)), status: http.StatusBadRequest,
			json: map[string]any{"field": "type"}},
		{name: "put with another name", method: http.MethodPut, url: srcURL + "/tick", body: map[string]any{"name": "tock", "type": "schedule"},
			setup: withBus("orders"), status: http.StatusBadRequest, json: map[string]any{"field": "name"}},
		{name: "patch sets and removes keys", method: http.MethodPatch, url: srcURL + "/github",
			body:  map[string]any{"description": "new", "config": map[string]any{"http.referers": nil, "http.methods": "GET"}},
			setup: setups(withBus("orders"), withSource("github", hookBody)), status: http.StatusOK,
			json: map[string]any{"description": "new"},
			after: func(t *testing.T, e *env, resp *response) {
				s := e.storedSource(t, "github")
				assert.Equal(t, "GET", s.Config()["http.methods"])
				assert.NotContains(t, s.Config(), "http.referers")
				assert.Equal(t, "192.0.2.0/24", s.Config()["http.ips"], "what the patch does not name is kept")
			}},
		{name: "patch unknown", method: http.MethodPatch, url: srcURL + "/nope", body: map[string]any{"description": "x"},
			setup: withBus("orders"), status: http.StatusNotFound, json: map[string]any{"code": "SourceNotFound"}},
		{name: "disable", method: http.MethodPost, url: srcURL + "/tick/disable",
			setup:  setups(withBus("orders"), withSource("tick", tickBody)),
			status: http.StatusOK, json: map[string]any{"state": "DISABLED", "status.state": "STOPPED"}},
		{name: "enable", method: http.MethodPost, url: srcURL + "/tick/enable",
			setup: setups(withBus("orders"), withSource("tick", tickBody), func(t *testing.T, e *env) {
				e.must(t, http.MethodPost, srcURL+"/tick/disable", nil, http.StatusOK)
			}),
			status: http.StatusOK, json: map[string]any{"state": "ENABLED", "status.state": "RUNNING"}},
		{name: "rotate the token", method: http.MethodPost, url: srcURL + "/github/rotate-token",
			setup: setups(withBus("orders"), withSource("github", hookBody)), status: http.StatusOK,
			after: func(t *testing.T, e *env, resp *response) {
				var s rest.Source
				require.NoError(t, json.Unmarshal(resp.Body, &s))
				assert.Equal(t, s.Webhook.Token, e.storedSource(t, "github").Token())
			}},
		{name: "rotate the token of a schedule", method: http.MethodPost, url: srcURL + "/tick/rotate-token",
			setup: setups(withBus("orders"), withSource("tick", tickBody)), status: http.StatusBadRequest, json: map[string]any{"field": "type"}},
		{name: "delete", method: http.MethodDelete, url: srcURL + "/tick", setup: setups(withBus("orders"), withSource("tick", tickBody)),
			status: http.StatusNoContent,
			after: func(t *testing.T, e *env, _ *response) {
				e.must(t, http.MethodGet, srcURL+"/tick", nil, http.StatusNotFound)
			}},
		{name: "a bus with sources is not deleted; the answer names them", method: http.MethodDelete, url: "/api/v1/buses/orders",
			setup:  setups(withBus("orders"), withSource("tick", tickBody), withSource("github", hookBody)),
			status: http.StatusConflict, json: map[string]any{"code": "BusNotEmpty"}, contains: []string{"github, tick"}},
	})
}

func sign(secret string, body []byte) string {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write(body)
	return "sha256=" + hex.EncodeToString(h.Sum(nil))
}

// intake reads what the webhook source name stored on its intake subject.
func (e *env) intake(t *testing.T, name string) []*nats.Msg {
	t.Helper()
	s := e.storedSource(t, name)
	return e.onSubject(t, s.BusID(), e.names.SourceSubject(s.BusID(), s.ID()))
}

// onBus returns the events stored on the .in subject of the bus of source name that the source's webhook made.
func (e *env) onBus(t *testing.T, name string) []*nats.Msg {
	t.Helper()
	s := e.storedSource(t, name)
	var out []*nats.Msg
	for _, m := range e.onSubject(t, s.BusID(), e.names.BusIn(s.BusID())) {
		if m.Header.Get("ce-source") == "eventbridge:webhook:"+name {
			out = append(out, m)
		}
	}
	return out
}

// onSubject returns the messages of a bus's stream on subject, in order.
func (e *env) onSubject(t *testing.T, busID, subject string) []*nats.Msg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := e.js.Stream(ctx, e.names.BusStream(busID))
	require.NoError(t, err)
	var out []*nats.Msg
	info, err := st.Info(ctx)
	require.NoError(t, err)
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			continue // purged
		}
		if m.Subject == subject {
			out = append(out, &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
		}
	}
	return out
}

func TestWebhooks(t *testing.T) {
	t.Parallel()
	body := []byte(`{"ref": "main"}`)
	good := map[string]string{"Referer": "https://shop.example.com/", "X-Hub-Signature-256": sign("gh-secret", body),
		"Authorization": "Bearer t", "X-Team": "shop"}
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for hk, hv := range good {
			h[hk] = hv
		}
		h[k] = v
		return h
	}
	ready := setups(withBus("orders"), withSource("github", hookBody))
	// The requests of httptest come from 192.0.2.1, which hookBody's http.ips allows.
	send := func(method, path string, header map[string]string, b []byte, status int, code string) func(t *testing.T, e *env, _ *response) {
		return func(t *testing.T, e *env, _ *response) {
			url := strings.ReplaceAll(path, "TOKEN", e.tokenOf(t, "github"))
			resp := e.do(t, method, url, header, b)
			require.Equalf(t, status, resp.Status, "%s %s: %s", method, url, resp.Body)
			if code != "" {
				assert.Equal(t, code, codeOf(t, resp))
				checkProblem(t, resp)
			}
		}
	}
	run(t, []scenario{
		{name: "stored and acknowledged", method: http.MethodGet, url: srcURL + "/github", setup: ready, status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				resp := e.do(t, http.MethodPost, "/webhook/putEvents?token="+e.tokenOf(t, "github")+"&k=v", good, body)
				require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
				id, _ := resp.JSON(t)["eventId"].(string)
				require.NotEmpty(t, id)
				msgs := e.onBus(t, "github")
				require.Len(t, msgs, 1, "stored on the bus's .in subject")
				assert.Empty(t, e.intake(t, "github"), "stored once: not on the source's intake subject")
				ev, err := stream.Decode(msgs[0])
				require.NoError(t, err)
				assert.Equal(t, id, ev.ID())
				assert.Equal(t, source.HTTPEventType, ev.Type())
				assert.Equal(t, "eventbridge:webhook:github", ev.Source())
				var d map[string]any
				require.NoError(t, json.Unmarshal(ev.Data(), &d))
				assert.Equal(t, map[string]any{"ref": "main"}, d["body"])
				assert.Equal(t, map[string]any{"k": "v"}, d["queryString"])
				assert.Equal(t, "shop", d["headers"].(map[string]any)["X-Team"])
				assert.NotContains(t, d["headers"], "Authorization")
				assert.NotContains(t, d["headers"], "X-Hub-Signature-256")
			}},
		{name: "path form with PUT", method: http.MethodGet, url: srcURL + "/github", setup: ready, status: http.StatusOK,
			after: send(http.MethodPut, "/api/v1/webhooks/TOKEN", good, body, http.StatusOK, "")},
		{name: "unknown token", method: http.MethodPost, url: "/webhook/putEvents?token=" + source.NewToken(), headers: good, body: body,
			setup: ready, status: http.StatusNotFound, json: map[string]any{"code": "NotFound", "detail": "not found"}},
		{name: "no token", method: http.MethodPost, url: "/webhook/putEvents", headers: good, body: body,
			setup: ready, status: http.StatusNotFound, json: map[string]any{"code": "NotFound"}},
		{name: "refused method", method: http.MethodGet, url: srcURL + "/github", setup: ready, status: http.StatusOK,
			after: send(http.MethodDelete, "/webhook/putEvents?token=TOKEN", good, nil, http.StatusForbidden, "WebhookRefused")},
		{name: "refused referer", method: http.MethodGet, url: srcURL + "/github", setup: ready, status: http.StatusOK,
			after: send(http.MethodPost, "/webhook/putEvents?token=TOKEN", with("Referer", "https://evil.org/"), body, http.StatusForbidden, "WebhookRefused")},
		{name: "body over 256 KiB", method: http.MethodGet, url: srcURL + "/github", setup: ready, status: http.StatusOK,
			after: send(http.MethodPost, "/webhook/putEvents?token=TOKEN", good, make([]byte, 300<<10), http.StatusRequestEntityTooLarge, "PayloadTooLarge")},
		{name: "bad signature", method: http.MethodGet, url: srcURL + "/github", setup: ready, status: http.StatusOK,
			after: send(http.MethodPost, "/webhook/putEvents?token=TOKEN", with("X-Hub-Signature-256", sign("x", body)), body, http.StatusUnauthorized, "InvalidSignature")},
		{name: "refused client address", method: http.MethodGet, url: srcURL + "/office",
			setup:  setups(withBus("orders"), withSource("office", map[string]any{"type": "http", "config": map[string]any{"http.ips": "10.0.0.0/8"}})),
			status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				resp := e.do(t, http.MethodPost, "/api/v1/webhooks/"+e.tokenOf(t, "office"), nil, body)
				assert.Equal(t, http.StatusForbidden, resp.Status, string(resp.Body))
				assert.Empty(t, e.onBus(t, "office"), "nothing stored")
			}},
		{name: "disabled source answers 404", method: http.MethodPost, url: srcURL + "/github/disable", setup: ready, status: http.StatusOK,
			after: send(http.MethodPost, "/webhook/putEvents?token=TOKEN", good, body, http.StatusNotFound, "NotFound")},
		{name: "a schedule source has no webhook", method: http.MethodGet, url: srcURL + "/tick",
			setup: setups(withBus("orders"), withSource("tick", tickBody)), status: http.StatusOK, absent: []string{"token"}},
		{name: "X-Forwarded-For only behind a trusted proxy", method: http.MethodGet, url: srcURL + "/office",
			setup:  setups(withBus("orders"), withSource("office", map[string]any{"type": "http", "config": map[string]any{"http.ips": "10.1.2.3"}})),
			status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				url := "/api/v1/webhooks/" + e.tokenOf(t, "office")
				xff := map[string]string{"X-Forwarded-For": "10.1.2.3"}
				assert.Equal(t, http.StatusForbidden, e.do(t, http.MethodPost, url, xff, body).Status, "no trusted proxy: the peer is the client")
				trusting := newRouter(web.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}}, e.services)
				for _, tc := range []struct {
					xff    string
					status int
				}{{"10.1.2.3", http.StatusOK}, {"10.1.2.3, 192.0.2.9", http.StatusOK}, {"10.9.9.9", http.StatusForbidden},
					{"10.1.2.3, 10.9.9.9", http.StatusForbidden}, {"garbage", http.StatusForbidden}} {
					req := localRequest(http.MethodPost, url, strings.NewReader(string(body)))
					req.Header.Set("X-Forwarded-For", tc.xff)
					rec := httptest.NewRecorder()
					trusting.ServeHTTP(rec, req)
					assert.Equalf(t, tc.status, rec.Code, "X-Forwarded-For %s: %s", tc.xff, rec.Body)
				}
			}},
		{name: "deleted source: 404 and its intake purged", method: http.MethodGet, url: srcURL + "/github", setup: ready, status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				token := e.tokenOf(t, "github")
				s := e.storedSource(t, "github")
				require.Equal(t, http.StatusOK, e.do(t, http.MethodPost, "/api/v1/webhooks/"+token, good, body).Status)
				// What an earlier version stored on the intake and the connector did not move yet.
				_, err := e.js.Publish(context.Background(), e.names.SourceSubject(s.BusID(), s.ID()), body)
				require.NoError(t, err)
				require.Len(t, e.intake(t, "github"), 1)
				e.must(t, http.MethodDelete, srcURL+"/github", nil, http.StatusNoContent)
				assert.Equal(t, http.StatusNotFound, e.do(t, http.MethodPost, "/api/v1/webhooks/"+token, good, body).Status)
				ctx := context.Background()
				st, err := e.js.Stream(ctx, e.names.BusStream(s.BusID()))
				require.NoError(t, err)
				_, err = st.GetLastMsgForSubject(ctx, e.names.SourceSubject(s.BusID(), s.ID()))
				assert.Error(t, err, "the intake is purged")
				assert.Len(t, e.onSubject(t, s.BusID(), e.names.BusIn(s.BusID())), 1, "what the bus holds is the bus's")
			}},
	})
}

// Webhook requests and PutEvents believe the source of a token and the bus they put on for a short lifetime
// (source.DefaultLookupTTL, bus.DefaultLookupTTL): a change through the same replica is seen at once, one through
// another replica (another service on the same database) once the lifetime is over; a bus deleted by another
// replica refuses events at once (its stream is gone) and is answered 404 from the next call.
func TestWebhookAndPutEventsBelieveWhatTheyRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	now := time.Now()
	clock := func() time.Time { return now }
	e.services.Sources.Clock, e.services.Buses.Clock = clock, clock
	withBus("orders")(t, e)
	withSource("github", map[string]any{"type": "http", "config": map[string]any{}})(t, e)
	token := e.tokenOf(t, "github")
	hook := func() int { return e.do(t, http.MethodPost, "/webhook/putEvents?token="+token, nil, `{"n": 1}`).Status }
	require.Equal(t, http.StatusOK, hook())

	// Another replica disables the source: seen once the lifetime is over.
	s := e.services.Sources
	other := &source.Service{Sources: s.Sources, Buses: s.Buses, Runtime: s.Runtime, Statuses: s.Statuses,
		Intake: s.Intake, Sealer: s.Sealer, Opener: s.Opener, Logger: s.Logger, LookupTTL: -1}
	_, err := other.Disable(context.Background(), domain.DefaultAccountID, "orders", "github")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, hook(), "believed within the lifetime")
	now = now.Add(source.DefaultLookupTTL)
	assert.Equal(t, http.StatusNotFound, hook(), "read again after it")

	// This replica enables it and rotates its token: the old token is refused at once.
	e.must(t, http.MethodPost, srcURL+"/github/enable", nil, http.StatusOK)
	require.Equal(t, http.StatusOK, hook())
	e.must(t, http.MethodPost, srcURL+"/github/rotate-token", nil, http.StatusOK)
	assert.Equal(t, http.StatusNotFound, hook(), "a change through this replica is seen at once")
	token = e.tokenOf(t, "github")
	require.Equal(t, http.StatusOK, hook())

	// PutEvents: a bus deleted through this replica is refused at once.
	put := func(bus string) int {
		return e.do(t, http.MethodPost, "/api/v1/buses/"+bus+"/events", map[string]string{"ce-specversion": "1.0",
			"ce-id": "e-" + strconv.FormatInt(now.UnixNano(), 10), "ce-source": "s", "ce-type": "t"}, `{"n": 1}`).Status
	}
	withBus("spare")(t, e)
	require.Equal(t, http.StatusOK, put("spare"))
	e.must(t, http.MethodDelete, "/api/v1/buses/spare", nil, http.StatusNoContent)
	assert.Equal(t, http.StatusNotFound, put("spare"))

	// A bus deleted through another replica: its stream refuses the event, and the next call reads the bus again.
	withBus("third")(t, e)
	require.Equal(t, http.StatusOK, put("third"))
	b := e.services.Buses
	otherBuses := &bus.Service{Buses: b.Buses, Rules: b.Rules, Sources: b.Sources, Store: b.Store, Runtime: b.Runtime,
		Logger: b.Logger, LookupTTL: -1}
	require.NoError(t, otherBuses.Delete(context.Background(), domain.DefaultAccountID, "third"))
	assert.Equal(t, http.StatusServiceUnavailable, put("third"), "believed, but its stream is gone")
	assert.Equal(t, http.StatusNotFound, put("third"))
}

// A webhook request is stored once, on the bus, and counted for its source by the replica that stored it: the
// source's counters (read and written) show what this replica stored at once, and what every replica stored once
// each added its counts (source.Service.AddCounts, every second in a deployment), on SQLite and MariaDB.
func TestWebhookCountsOfReplicas(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{persistence.SQLite, persistence.MySQL} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, natsServer(t), dialect)
			withBus("orders")(t, e)
			withSource("github", map[string]any{"type": "http", "config": map[string]any{}})(t, e)
			token := e.tokenOf(t, "github")
			counters := func() (read, written uint64) {
				var out struct {
					Status struct {
						Counters *struct{ Read, Written uint64 } `json:"counters"`
					} `json:"status"`
				}
				require.NoError(t, json.Unmarshal(e.must(t, http.MethodGet, srcURL+"/github", nil, http.StatusOK).Body, &out))
				if out.Status.Counters == nil {
					return 0, 0
				}
				return out.Status.Counters.Read, out.Status.Counters.Written
			}
			read, written := counters()
			assert.Zero(t, read+written, "nothing received yet")

			for i := range 3 {
				resp := e.do(t, http.MethodPost, "/webhook/putEvents?token="+token, nil, fmt.Sprintf(`{"n": %d}`, i))
				require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
			}
			read, written = counters()
			assert.Equal(t, [2]uint64{3, 3}, [2]uint64{read, written}, "this replica's requests, before it added them")

			// Another replica on the same database and event store receives two.
			s := e.services.Sources
			other := &source.Service{Sources: s.Sources, Buses: s.Buses, Runtime: s.Runtime, Statuses: s.Statuses,
				Intake: s.Intake, Sealer: s.Sealer, Opener: s.Opener, Logger: s.Logger, Clock: s.Clock}
			ctx := context.Background()
			w, err := other.ByToken(ctx, token)
			require.NoError(t, err)
			for i := range 2 {
				_, _, err := other.Receive(ctx, w, source.Request{Method: http.MethodPost, ClientIP: netip.MustParseAddr("192.0.2.1"),
					Header: http.Header{"Content-Type": {"application/json"}}, Path: "/webhook/putEvents", Body: fmt.Appendf(nil, `{"m": %d}`, i)})
				require.NoError(t, err)
			}
			read, _ = counters()
			assert.EqualValues(t, 3, read, "the other replica's requests are its own until it adds them")
			other.AddCounts(ctx)
			read, _ = counters()
			assert.EqualValues(t, 5, read, "added by the other replica")
			s.AddCounts(ctx)
			s.AddCounts(ctx) // nothing new: nothing added twice
			read, written = counters()
			assert.Equal(t, [2]uint64{5, 5}, [2]uint64{read, written}, "both replicas' requests, stored")
			assert.Len(t, e.onBus(t, "github"), 5, "every request stored once, on the bus")
			assert.Empty(t, e.intake(t, "github"))
		})
	}
}
