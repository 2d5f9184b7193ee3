package source_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/source"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func webhookOf(t *testing.T, cfg map[string]string) *source.Webhook {
	t.Helper()
	s, err := source.New("acc", "bus1", source.Spec{Name: "hook", Type: source.HTTP, Config: cfg}, now)
	require.NoError(t, err)
	w, err := source.WebhookOf(s, nil)
	require.NoError(t, err)
	return w
}

func request(method, ip string, header map[string]string, body string) source.Request {
	h := http.Header{}
	for k, v := range header {
		h.Set(k, v)
	}
	var addr netip.Addr
	if ip != "" {
		addr = netip.MustParseAddr(ip)
	}
	return source.Request{Method: method, ClientIP: addr, Header: h, Path: "/webhook/putEvents",
		Query: url.Values{"token": {"T"}, "k": {"v"}}, Body: []byte(body)}
}

func reasonOf(err error) source.Reason {
	var r *source.Refusal
	if errors.As(err, &r) {
		return r.Reason
	}
	return ""
}

func TestWebhookAdmit(t *testing.T) {
	t.Parallel()
	cfg := map[string]string{
		source.KeyMethods:  "post, PUT",
		source.KeyIPs:      "10.0.0.0/8, 192.168.1.7, 2001:db8::/32",
		source.KeyReferers: "example.com, *.shop.example",
	}
	w := webhookOf(t, cfg)
	ref := map[string]string{"Referer": "https://example.com/page"}
	for _, tc := range []struct {
		name   string
		req    source.Request
		reason source.Reason
	}{
		{"allowed POST from a CIDR", request("POST", "10.1.2.3", ref, ""), ""},
		{"allowed PUT from an exact address", request("PUT", "192.168.1.7", ref, ""), ""},
		{"IPv4-mapped IPv6 counts as IPv4", request("POST", "::ffff:10.9.9.9", ref, ""), ""},
		{"IPv6 CIDR", request("POST", "2001:db8::1", ref, ""), ""},
		{"wildcard referer subdomain", request("POST", "10.0.0.1", map[string]string{"Referer": "http://a.b.shop.example/x"}, ""), ""},
		{"refused method first", request("GET", "8.8.8.8", nil, ""), source.RefusedMethod},
		{"refused DELETE", request("DELETE", "10.0.0.1", ref, ""), source.RefusedMethod},
		{"refused IP", request("POST", "192.168.1.8", ref, ""), source.RefusedIP},
		{"no client IP", request("POST", "", ref, ""), source.RefusedIP},
		{"refused referer", request("POST", "10.0.0.1", map[string]string{"Referer": "https://evil.example/"}, ""), source.RefusedReferer},
		{"wildcard does not match the bare domain", request("POST", "10.0.0.1", map[string]string{"Referer": "https://shop.example/"}, ""), source.RefusedReferer},
		{"suffix without a dot is not a subdomain", request("POST", "10.0.0.1", map[string]string{"Referer": "https://badexample.com/"}, ""), source.RefusedReferer},
		{"missing referer", request("POST", "10.0.0.1", nil, ""), source.RefusedReferer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := w.Admit(tc.req)
			if tc.reason == "" {
				assert.NoError(t, err)
				return
			}
			assert.Equal(t, tc.reason, reasonOf(err), "%v", err)
		})
	}
}

func TestWebhookDefaultsAllowPOSTFromAnywhere(t *testing.T) {
	t.Parallel()
	w := webhookOf(t, nil)
	assert.NoError(t, w.Admit(request("POST", "203.0.113.9", nil, "")))
	assert.Equal(t, source.RefusedMethod, reasonOf(w.Admit(request("PUT", "203.0.113.9", nil, ""))))
	assert.NoError(t, w.Verify(request("POST", "203.0.113.9", nil, "x"), now), "no scheme, no signature")
}

func TestWebhookConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  map[string]string
		key  string
	}{
		{"bad method", map[string]string{source.KeyMethods: "POST,FETCH"}, source.KeyMethods},
		{"bad CIDR", map[string]string{source.KeyIPs: "10.0.0.0/33"}, source.KeyIPs},
		{"bad address", map[string]string{source.KeyIPs: "localhost"}, source.KeyIPs},
		{"scheme without secret", map[string]string{source.KeySignatureScheme: "github"}, source.KeySignatureSecret},
		{"hmac without header", map[string]string{source.KeySignatureScheme: "hmac-sha256", source.KeySignatureSecret: "s"}, source.KeySignatureHeader},
		{"unknown scheme", map[string]string{source.KeySignatureScheme: "md5"}, source.KeySignatureScheme},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := source.New("acc", "bus1", source.Spec{Name: "hook", Type: source.HTTP, Config: tc.cfg}, now)
			require.NoError(t, err)
			_, err = source.WebhookOf(s, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.key)
		})
	}
}

func hmacHex(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))
}

func TestWebhookSignatures(t *testing.T) {
	t.Parallel()
	body := `{"ref":"refs/heads/main"}`
	github := webhookOf(t, map[string]string{source.KeySignatureScheme: "github", source.KeySignatureSecret: "gh-secret"})
	custom := webhookOf(t, map[string]string{source.KeySignatureScheme: "hmac-sha256", source.KeySignatureSecret: "k",
		source.KeySignatureHeader: "X-Signature"})
	key := []byte("0123456789abcdef0123456789abcdef")
	whsec := "whsec_" + base64.StdEncoding.EncodeToString(key)
	std := webhookOf(t, map[string]string{source.KeySignatureScheme: "standard-webhooks", source.KeySignatureSecret: whsec})
	stdSig := func(id string, ts time.Time, body string) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "." + body))
		return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	stdHeaders := func(id string, ts time.Time, sig string) map[string]string {
		return map[string]string{"webhook-id": id, "webhook-timestamp": strconv.FormatInt(ts.Unix(), 10), "webhook-signature": sig}
	}
	for _, tc := range []struct {
		name string
		w    *source.Webhook
		req  source.Request
		ok   bool
	}{
		{"github good", github, request("POST", "", map[string]string{"X-Hub-Signature-256": "sha256=" + hmacHex("gh-secret", body)}, body), true},
		{"github upper-case hex", github, request("POST", "", map[string]string{"X-Hub-Signature-256": "sha256=" + upper(hmacHex("gh-secret", body))}, body), true},
		{"github wrong secret", github, request("POST", "", map[string]string{"X-Hub-Signature-256": "sha256=" + hmacHex("other", body)}, body), false},
		{"github body changed", github, request("POST", "", map[string]string{"X-Hub-Signature-256": "sha256=" + hmacHex("gh-secret", body)}, body+" "), false},
		{"github missing", github, request("POST", "", nil, body), false},
		{"github without sha256=", github, request("POST", "", map[string]string{"X-Hub-Signature-256": hmacHex("gh-secret", body)}, body), false},
		{"hmac-sha256 good", custom, request("POST", "", map[string]string{"X-Signature": hmacHex("k", body)}, body), true},
		{"hmac-sha256 bad", custom, request("POST", "", map[string]string{"X-Signature": hmacHex("j", body)}, body), false},
		{"hmac-sha256 not hex", custom, request("POST", "", map[string]string{"X-Signature": "zz"}, body), false},
		{"standard-webhooks good", std, request("POST", "", stdHeaders("msg_1", now, stdSig("msg_1", now, body)), body), true},
		{"standard-webhooks one of several signatures", std, request("POST", "", stdHeaders("msg_1", now, "v1,AAAA "+stdSig("msg_1", now, body)), body), true},
		{"standard-webhooks 4 minutes old", std, request("POST", "", stdHeaders("msg_1", now.Add(-4*time.Minute), stdSig("msg_1", now.Add(-4*time.Minute), body)), body), true},
		{"standard-webhooks 6 minutes old", std, request("POST", "", stdHeaders("msg_1", now.Add(-6*time.Minute), stdSig("msg_1", now.Add(-6*time.Minute), body)), body), false},
		{"standard-webhooks 6 minutes ahead", std, request("POST", "", stdHeaders("msg_1", now.Add(6*time.Minute), stdSig("msg_1", now.Add(6*time.Minute), body)), body), false},
		{"standard-webhooks other id", std, request("POST", "", stdHeaders("msg_2", now, stdSig("msg_1", now, body)), body), false},
		{"standard-webhooks missing headers", std, request("POST", "", nil, body), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.w.Verify(tc.req, now)
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			assert.Equal(t, source.RefusedSignature, reasonOf(err), "%v", err)
		})
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

type fakeOpener struct{}

func (fakeOpener) Open(_ domain.SecretOwner, c string) (string, error) {
	return c[len("enc:v1:"):], nil
}

func TestWebhookOpensSealedSecret(t *testing.T) {
	t.Parallel()
	_, err := source.New("acc", "bus1", source.Spec{Name: "hook", Type: source.HTTP,
		Config: map[string]string{source.KeySignatureScheme: "github", source.KeySignatureSecret: "enc:v1:gh"}}, now)
	require.ErrorIs(t, err, domain.ErrValidation, "a sealed value is never taken as input")
	s, err := source.New("acc", "bus1", source.Spec{Name: "hook", Type: source.HTTP,
		Config: map[string]string{source.KeySignatureScheme: "github", source.KeySignatureSecret: "gh"}}, now)
	require.NoError(t, err)
	require.NoError(t, s.Seal([]string{source.KeySignatureSecret}, upperSealer{}))
	require.Equal(t, "enc:v1:gh", s.Config()[source.KeySignatureSecret])
	_, err = source.WebhookOf(s, nil)
	require.Error(t, err, "a sealed secret needs an opener")
	w, err := source.WebhookOf(s, fakeOpener{})
	require.NoError(t, err)
	assert.NoError(t, w.Verify(request("POST", "", map[string]string{"X-Hub-Signature-256": "sha256=" + hmacHex("gh", "b")}, "b"), now))
}

func TestWebhookEvent(t *testing.T) {
	t.Parallel()
	w := webhookOf(t, map[string]string{source.KeySignatureScheme: "hmac-sha256", source.KeySignatureSecret: "k",
		source.KeySignatureHeader: "X-Signature"})
	req := request("POST", "10.0.0.1", map[string]string{
		"Content-Type": "application/json", "Authorization": "Bearer x", "Cookie": "c=1", "Proxy-Authorization": "p",
		"X-Api-Key": "k", "X-Signature": "abc", "X-Hub-Signature-256": "sha256=00", "Webhook-Signature": "v1,x", "X-Team": "shop",
	}, `{"order": 7}`)
	e, err := w.Event(req, now)
	require.NoError(t, err)
	assert.Equal(t, source.HTTPEventType, e.Type())
	assert.Equal(t, "eventbridge:webhook:hook", e.Source())
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, e.ID())
	assert.Equal(t, now, e.Time())
	require.NoError(t, e.Validate())
	var d map[string]any
	require.NoError(t, json.Unmarshal(e.Data(), &d))
	assert.Equal(t, map[string]any{"order": float64(7)}, d["body"], "a JSON body is parsed")
	assert.Equal(t, map[string]any{"Content-Type": "application/json", "X-Team": "shop"}, d["headers"], "no credentials, no signatures")
	assert.Equal(t, "POST", d["httpMethod"])
	assert.Equal(t, "/webhook/putEvents", d["path"])
	assert.Equal(t, map[string]any{"k": "v"}, d["queryString"], "no token")

	e2, err := w.Event(request("PUT", "", nil, "plain text"), now)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(e2.Data(), &d))
	assert.Equal(t, "plain text", d["body"], "a body that is not JSON is text")
	assert.NotEqual(t, e.ID(), e2.ID())

	big := `{"z": 1, "a": 12345678901234567890123, "s": "<b>"}`
	e3, err := w.Event(request("POST", "", nil, big), now)
	require.NoError(t, err)
	var raw struct{ Body json.RawMessage }
	require.NoError(t, json.Unmarshal(e3.Data(), &raw))
	assert.Equal(t, `{"z":1,"a":12345678901234567890123,"s":"\u003cb\u003e"}`, string(raw.Body),
		"a JSON body keeps its keys' order and its numbers' digits")
}

func TestSourceForm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		spec  source.Spec
		field string
	}{
		{"bad name", source.Spec{Name: "a.b", Type: "schedule"}, "name"},
		{"no type", source.Spec{Name: "a"}, "type"},
		{"bad type", source.Spec{Name: "a", Type: "Schedule!"}, "type"},
		{"reserved key", source.Spec{Name: "a", Type: "schedule", Config: map[string]string{"connector.class": "x"}}, "config.connector.class"},
		{"reserved output key", source.Spec{Name: "a", Type: "schedule", Config: map[string]string{"output.subject": "x"}}, "config.output.subject"},
		{"reserved intake key of http", source.Spec{Name: "a", Type: source.HTTP, Config: map[string]string{"source.subject": "x"}}, "config.source.subject"},
		{"bad key", source.Spec{Name: "a", Type: "schedule", Config: map[string]string{"a b": "x"}}, "config.a b"},
		{"long description", source.Spec{Name: "a", Type: "schedule", Description: string(make([]byte, 600))}, "description"},
		{"eventbus: a raw stream of this installation", source.Spec{Name: "a", Type: source.EventBus,
			Config: map[string]string{"source.stream": "eb_KV_connectors"}}, "config.source.stream"},
		{"eventbus: a raw subject of this installation", source.Spec{Name: "a", Type: source.EventBus,
			Config: map[string]string{"source.subject": "eb.bus.x.in"}}, "config.source.subject"},
		{"eventbus: a bus and a raw stream", source.Spec{Name: "a", Type: source.EventBus,
			Config: map[string]string{"bus": "b", "source.stream": "S"}}, "config.source.stream"},
		{"eventbus: nothing to read", source.Spec{Name: "a", Type: source.EventBus}, "config.bus"},
		{"eventbus: a bus on an external NATS", source.Spec{Name: "a", Type: source.EventBus,
			Config: map[string]string{"bus": "b", "nats.url": "nats://nats.example.com:4222"}}, "config.bus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := source.New("acc", "bus1", tc.spec, now)
			de, ok := domain.As(err)
			require.True(t, ok, "a domain error: %v", err)
			assert.Equal(t, tc.field, de.Field)
		})
	}
	// The intake keys belong to other types' plugins: an eventbus source reads a stream of an external NATS, or a
	// bus of its account by name.
	_, err := source.New("acc", "bus1", source.Spec{Name: "a", Type: "eventbus",
		Config: map[string]string{"source.stream": "S", "nats.url": "nats://nats.example.com:4222"}}, now)
	assert.NoError(t, err)
	_, err = source.New("acc", "bus1", source.Spec{Name: "a", Type: "eventbus", Config: map[string]string{"bus": "other"}}, now)
	assert.NoError(t, err)
}

type upperSealer struct{}

func (upperSealer) Seal(_ domain.SecretOwner, p string) (string, error) { return "enc:v1:" + p, nil }

func TestSourceSecretsAndChange(t *testing.T) {
	t.Parallel()
	s, err := source.New("acc", "bus1", source.Spec{Name: "hook", Type: source.HTTP,
		Config: map[string]string{source.KeySignatureSecret: "s1", source.KeyMethods: "POST"}}, now)
	require.NoError(t, err)
	require.NoError(t, s.Seal([]string{source.KeySignatureSecret}, upperSealer{}))
	assert.Equal(t, "enc:v1:s1", s.Config()[source.KeySignatureSecret])
	assert.Equal(t, "***", s.Redacted()[source.KeySignatureSecret])
	assert.Equal(t, "POST", s.Redacted()[source.KeyMethods])

	// The placeholder keeps the stored value; a new value is sealed again.
	require.NoError(t, s.Change(source.Spec{Name: "hook", Type: source.HTTP,
		Config: map[string]string{source.KeySignatureSecret: "***", source.KeyMethods: "PUT"}}, now))
	require.NoError(t, s.Seal([]string{source.KeySignatureSecret}, upperSealer{}))
	assert.Equal(t, "enc:v1:s1", s.Config()[source.KeySignatureSecret], "not sealed twice")
	require.NoError(t, s.Change(source.Spec{Name: "hook", Type: source.HTTP,
		Config: map[string]string{source.KeySignatureSecret: "s2"}}, now))
	require.NoError(t, s.Seal([]string{source.KeySignatureSecret}, upperSealer{}))
	assert.Equal(t, "enc:v1:s2", s.Config()[source.KeySignatureSecret])

	err = s.Change(source.Spec{Name: "hook", Type: "schedule"}, now)
	de, ok := domain.As(err)
	require.True(t, ok)
	assert.Equal(t, "type", de.Field, "the type cannot change")

	old := s.Token()
	require.NoError(t, s.RotateToken(now))
	assert.NotEqual(t, old, s.Token())
	sched, err := source.New("acc", "bus1", source.Spec{Name: "tick", Type: "schedule"}, now)
	require.NoError(t, err)
	assert.Empty(t, sched.Token())
	assert.Error(t, sched.RotateToken(now), "only webhooks have tokens")
}
