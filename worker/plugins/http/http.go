// Package http is the http sink plugin: it delivers each CloudEvent in one HTTP request, in the binary or
// structured content mode of the CloudEvents HTTP binding, and refuses non-public addresses unless allowed.
//
// Authentication (auth.type): none, basic, api_key or oauth_client_credentials (a cached token, refreshed shortly
// before it expires and once when the target answers 401, the request then being sent once more), or deauthorized
// (no request is sent: every event fails at once, permanently, naming auth.connection, whose credentials were
// dropped). Requests may
// be rate-limited (rate_limit_per_second, a token bucket of each task: a connector of N tasks sends up to N times
// that rate) and signed as Standard Webhooks (webhook.signing_secret).
package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/cloudevents/sdk-go/v2/types"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/domain/transform"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/egress"
)

// Name is the plugin's connector.class.
const Name = "http"

// Config keys of the http sink.
const (
	KeyURL     = "url"
	KeyMethod  = "method"
	KeyHeaders = "headers"
	// KeySecretHeaders holds headers whose values are secret (an API destination's secret invocation headers): a
	// JSON object of strings, stored and handed to the worker encrypted as a whole.
	KeySecretHeaders = "secret_headers"
	// KeyBodyParams and KeySecretBodyParams are members added to the JSON object of every request's data (an API
	// destination's invocation body parameters), JSON objects of strings; the secret one is encrypted as a whole.
	KeyBodyParams       = "body_parameters"
	KeySecretBodyParams = "secret_body_parameters"
	// KeyOAuthSecretExtraParams are extra form parameters of the token request whose values are secret, a JSON
	// object of strings encrypted as a whole.
	KeyOAuthSecretExtraParams = "auth.oauth.secret_extra_params"
	// KeyPathParams fills the "*" path segments of the URL from each event: a JSON array of JSON paths over the
	// event ($.data.customerId), one per "*", in order.
	KeyPathParams = "url.path_parameters"
	KeyMode       = "mode"
	KeyTimeout    = "timeout"

	KeyAuthType          = "auth.type"
	KeyAuthUsername      = "auth.username"
	KeyAuthPassword      = "auth.password"
	KeyAuthAPIKeyHeader  = "auth.api_key.header"
	KeyAuthAPIKeyValue   = "auth.api_key.value"
	KeyOAuthTokenURL     = "auth.oauth.token_url"
	KeyOAuthClientID     = "auth.oauth.client_id"
	KeyOAuthClientSecret = "auth.oauth.client_secret"
	KeyOAuthScopes       = "auth.oauth.scopes"
	KeyOAuthExtraParams  = "auth.oauth.extra_params"
	KeyOAuthAuthStyle    = "auth.oauth.auth_style"
	KeyAuthConnection    = "auth.connection"

	KeyRateLimit = "rate_limit_per_second"

	KeyWebhookSigningSecret = "webhook.signing_secret"
)

// maxInFlight is the runtime's bound of concurrent writes of a task (delivery.MaxInFlight): it bounds the queue of a
// rate limit, and the connections the task opens to its target.
const maxInFlight = 64

// Content modes.
const (
	ModeBinary     = "binary"
	ModeStructured = "structured"
)

func init() { connector.Register(Plugin()) }

// Plugin returns the http sink plugin.
func Plugin() connector.Plugin {
	return connector.Plugin{
		Name:    Name,
		Type:    connector.TypeSink,
		Version: "1.0.0",
		Doc:     "Delivers each event in an HTTP request (CloudEvents HTTP binding).",
		Spec: connector.Spec{
			{Name: KeyURL, Title: "Endpoint URL", Type: connector.TypeString, Required: true, Check: checkURL,
				Example: "https://api.example.com/orders",
				Doc: `Target URL (http or https); its "*" path segments are filled from each event (url.path_parameters). ` +
					"Redirects are not followed, and a loopback, private or link-local address is refused unless the operator allowed it."},
			{Name: KeyMethod, Title: "HTTP method", Type: connector.TypeEnum, Default: http.MethodPost,
				Enum: []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodGet},
				Doc:  "HTTP method of the requests."},
			{Name: KeyHeaders, Title: "Headers", Type: connector.TypeJSON, Check: checkHeaders,
				Example: `{"X-Team": "shop"}`,
				Doc: `Extra request headers, a JSON object of strings: {"X-Team": "shop"}. The event's own headers (ce-*, ` +
					`Content-Type, Content-Length, and webhook-* when requests are signed) are not overridden, and traceparent ` +
					`and tracestate give way to the trace context (the worker's span, or the event's) when there is one.`},
			{Name: KeyBodyParams, Title: "Body parameters", Type: connector.TypeJSON,
				Example: `{"source": "eventbridge"}`,
				Doc:     `Members added to the JSON object of each event's data before it is sent, a JSON object of strings: {"source": "eventbridge"}. Data that is not a JSON object is sent as it is.`},
			{Name: KeySecretBodyParams, Title: "Secret body parameters", Type: connector.TypeJSON, Secret: true,
				Doc: `Like body_parameters, with secret values; encrypted as a whole (enc:v1). They win over body_parameters of the same name.`},
			{Name: KeyOAuthSecretExtraParams, Title: "Secret token request parameters", Type: connector.TypeJSON, Secret: true,
				Doc: `Extra form parameters of the token request with secret values, a JSON object of strings encrypted as a whole (enc:v1); they win over auth.oauth.extra_params of the same name.`},
			{Name: KeyPathParams, Title: "Path parameters", Type: connector.TypeJSON,
				Example: `["$.data.customerId"]`,
				Doc:     `JSON paths over the event that fill the URL's "*" path segments, in order, one per segment: ["$.data.customerId"]. A value missing in an event dead-letters it.`},
			{Name: KeySecretHeaders, Title: "Secret headers", Type: connector.TypeJSON, Check: checkHeaders, Secret: true,
				Doc: `Request headers whose values are secret, a JSON object of strings, encrypted as a whole (enc:v1): {"X-Token": "..."}. Added after headers: a secret header replaces a header of the same name.`},
			{Name: KeyMode, Title: "Content mode", Type: connector.TypeEnum, Default: ModeBinary, Enum: []string{ModeBinary, ModeStructured},
				Doc: "binary: ce-* headers and the data as body; structured: the event as application/cloudevents+json."},
			{Name: KeyTimeout, Title: "Request timeout", Type: connector.TypeDuration, Default: "5s", Check: checkPositive,
				Example: "30s",
				Doc:     "Timeout of one request, connection included (a Go duration: 500ms, 5s, 1m); the token request of OAuth has the same."},
			{Name: KeyAuthType, Title: "Authentication", Type: connector.TypeEnum, Default: AuthNone,
				Enum: []string{AuthNone, AuthBasic, AuthAPIKey, AuthOAuth, AuthDeauthorized},
				Doc: "Authentication of the requests: none, basic (auth.username, auth.password), api_key (auth.api_key.*), oauth_client_credentials (auth.oauth.*), " +
					"or deauthorized: no request is sent, every event fails permanently (the credentials of auth.connection were dropped)."},
			{Name: KeyAuthConnection, Title: "Connection name", Type: connector.TypeString,
				Example: "billing-api",
				Doc:     "Name of the connection the credentials come from, which errors name."},
			{Name: KeyAuthUsername, Title: "User name", Type: connector.TypeString,
				Doc: "User name of basic authentication (auth.type basic; required then)."},
			{Name: KeyAuthPassword, Title: "Password", Type: connector.TypeString, Secret: true,
				Doc: "Password of basic authentication (auth.type basic)."},
			{Name: KeyAuthAPIKeyHeader, Title: "API key header", Type: connector.TypeString, Default: DefaultAPIKeyHdr, Check: checkHeaderName,
				Example: "X-Auth-Token",
				Doc:     "Header carrying the API key (auth.type api_key)."},
			{Name: KeyAuthAPIKeyValue, Title: "API key", Type: connector.TypeString, Secret: true,
				Doc: "The API key sent in auth.api_key.header (auth.type api_key; required then)."},
			{Name: KeyOAuthTokenURL, Title: "Token URL", Type: connector.TypeString, Check: checkURL,
				Example: "https://auth.example.com/oauth2/token",
				Doc:     "Token endpoint of the OAuth 2.0 client-credentials grant (auth.type oauth_client_credentials; required then); it is subject to the same address checks as url."},
			{Name: KeyOAuthClientID, Title: "Client ID", Type: connector.TypeString,
				Doc: "OAuth client id (auth.type oauth_client_credentials; required then)."},
			{Name: KeyOAuthClientSecret, Title: "Client secret", Type: connector.TypeString, Secret: true,
				Doc: "OAuth client secret (auth.type oauth_client_credentials; required then)."},
			{Name: KeyOAuthScopes, Title: "Scopes", Type: connector.TypeString,
				Example: "orders:write events:read",
				Doc:     "OAuth scopes asked for in the token request, separated by spaces or commas; empty asks for none."},
			{Name: KeyOAuthExtraParams, Title: "Token request parameters", Type: connector.TypeJSON, Check: checkStringMap,
				Example: `{"audience": "https://api.example.com"}`,
				Doc:     `Extra form parameters of the token request, a JSON object of strings: {"audience": "https://api.example.com"}.`},
			{Name: KeyOAuthAuthStyle, Title: "Client authentication style", Type: connector.TypeEnum, Default: OAuthStyleHeader,
				Enum: []string{OAuthStyleHeader, OAuthStyleBody},
				Doc:  "How the client authenticates to the token endpoint: header (HTTP Basic) or body (client_id and client_secret form parameters)."},
			{Name: KeyRateLimit, Title: "Rate limit (requests per second)", Type: connector.TypeInt, Default: "0", Min: connector.Min(0),
				Doc: "Maximum requests per second of each task to the destination (a token bucket per task: N tasks send up to N times this rate); 0 is unlimited."},
			{Name: KeyWebhookSigningSecret, Title: "Webhook signing secret", Type: connector.TypeString, Secret: true, Check: checkWebhookSecret,
				Doc: "When set, requests are signed as Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature: HMAC-SHA256). A whsec_ secret is base64 after the prefix; another is used as is."},
		},
		NewSink: New,
	}
}

func checkURL(v string) error {
	u, err := url.Parse(v)
	if err != nil {
		return errors.New("is not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("must be an http or https URL")
	}
	if u.Host == "" {
		return errors.New("must name a host")
	}
	return nil
}

func checkHeaders(v string) error {
	var h map[string]string
	if err := json.Unmarshal([]byte(v), &h); err != nil {
		return errors.New("must be a JSON object of strings")
	}
	for k := range h {
		if err := checkHeaderName(k); err != nil {
			return err
		}
	}
	return nil
}

func checkHeaderName(k string) error {
	if k == "" || strings.ContainsAny(k, " \t\r\n:") {
		return fmt.Errorf("%q is not a header name", k)
	}
	return nil
}

func checkPositive(v string) error {
	if d, _ := time.ParseDuration(v); d <= 0 {
		return errors.New("must be positive")
	}
	return nil
}

// Sink delivers events over HTTP with one keep-alive client per task. Safe for concurrent Write.
type Sink struct {
	url        string
	method     string
	headers    map[string]string
	structured bool
	timeout    time.Duration
	client     *http.Client
	auth       authenticator
	limiter    *bucket // nil: unlimited
	signingKey []byte  // nil: not signed
	now        func() time.Time
	// pathParams fill the "*" segments of url, one each, in order (none: url is used as it is).
	pathParams transform.Paths
	// bodyParams are added to the JSON object of each event's data.
	bodyParams map[string]string
}

var (
	_ connector.Sink           = (*Sink)(nil)
	_ connector.WriteTimeouter = (*Sink)(nil)
)

// options are what tests replace: the clock.
type options struct {
	now func() time.Time
}

// New builds a sink from a validated config; no I/O.
func New(cfg connector.Values, env connector.Env) (connector.Sink, error) {
	s, err := newSink(cfg, env, options{})
	if err != nil {
		return nil, err // not a nil *Sink in a non-nil interface
	}
	return s, nil
}

func newSink(cfg connector.Values, env connector.Env, o options) (*Sink, error) {
	s := &Sink{
		url:        cfg.String(KeyURL),
		method:     cfg.String(KeyMethod),
		structured: cfg.String(KeyMode) == ModeStructured,
		timeout:    cfg.Duration(KeyTimeout),
		now:        o.now,
	}
	if s.now == nil {
		s.now = time.Now
	}
	if err := cfg.JSON(KeyHeaders, &s.headers); err != nil {
		return nil, err
	}
	for _, key := range []string{KeyBodyParams, KeySecretBodyParams} {
		if cfg.String(key) == "" {
			continue
		}
		var params map[string]string
		if err := json.Unmarshal([]byte(cfg.String(key)), &params); err != nil {
			return nil, connector.FieldErrors{{Key: key, Message: "must be a JSON object of strings"}}
		}
		if s.bodyParams == nil {
			s.bodyParams = map[string]string{}
		}
		for k, v := range params {
			s.bodyParams[k] = v
		}
	}
	if raw := cfg.String(KeyPathParams); raw != "" {
		var exprs []string
		if err := json.Unmarshal([]byte(raw), &exprs); err != nil {
			return nil, connector.FieldErrors{{Key: KeyPathParams, Message: "must be a JSON array of JSON paths"}}
		}
		paths, err := transform.CompilePaths(exprs)
		if err != nil {
			return nil, connector.FieldErrors{{Key: KeyPathParams, Message: err.Error()}}
		}
		if stars := countStars(s.url); stars != paths.Len() {
			return nil, connector.FieldErrors{{Key: KeyPathParams, Message: fmt.Sprintf(
				"has %d paths and the url %d \"*\" path segments; give one path per segment", paths.Len(), stars)}}
		}
		s.pathParams = paths
	}
	if cfg.String(KeySecretHeaders) != "" {
		var secret map[string]string
		if err := json.Unmarshal([]byte(cfg.String(KeySecretHeaders)), &secret); err != nil {
			return nil, connector.FieldErrors{{Key: KeySecretHeaders, Message: "must be a JSON object of strings"}}
		}
		if s.headers == nil {
			s.headers = map[string]string{}
		}
		for k, v := range secret {
			s.headers[k] = v
		}
	}
	if err := checkAuth(cfg); err != nil {
		return nil, err
	}
	if s.timeout <= 0 {
		s.timeout = 5 * time.Second
	}
	policy := env.Egress
	policy.Timeout = s.timeout
	guard, err := egress.New(policy)
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	transport := &http.Transport{
		Proxy:               nil,               // a proxy would hide the target's address from the check, and env is not ours to read
		DialContext:         guard.DialContext, // every connection, the token endpoint's too, resolved and checked
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        maxInFlight,
		MaxIdleConnsPerHost: maxInFlight,
		// Without a bound, a write that found no idle connection dialed a new one while another was being put
		// back: 64 writes in flight opened 64–116 connections over 641 deliveries (http2_test.go). With it, a write
		// waits for the first free one, and a task holds at most one connection per write in flight.
		MaxConnsPerHost:       maxInFlight,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   s.timeout,
		ExpectContinueTimeout: time.Second,
	}
	s.client = &http.Client{
		Transport: transport,
		Timeout:   s.timeout,
		// A redirect is not followed: it would change the method of a POST and the target must be fixed anyway.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	auth, err := newAuth(cfg, s.client, s.timeout)
	if err != nil {
		return nil, err
	}
	if oa, ok := auth.(*oauthAuth); ok {
		oa.now = s.now
	}
	s.auth = auth
	if r := cfg.Int(KeyRateLimit); r > 0 {
		s.limiter = newBucket(float64(r), int(r))
	}
	if secret := cfg.String(KeyWebhookSigningSecret); secret != "" {
		if s.signingKey, err = webhookKey(secret); err != nil {
			return nil, connector.FieldErrors{{Key: KeyWebhookSigningSecret, Message: err.Error()}}
		}
	}
	return s, nil
}

// Connect does nothing: connections are opened by the first requests and kept alive.
func (s *Sink) Connect(context.Context) error { return nil }

// Idle closes the idle connections of a task that parked (connector.Idler).
func (s *Sink) Idle() { s.client.CloseIdleConnections() }

// Close closes the idle connections.
func (s *Sink) Close() error {
	s.client.CloseIdleConnections()
	return nil
}

// WriteTimeout bounds one Write: the timeout of one request; with OAuth, four (a token request, the request, a
// token refresh after a 401 and the request again); with a rate limit, plus the longest wait of a full queue
// (twice with OAuth, the retry after a 401 taking a token too).
func (s *Sink) WriteTimeout() time.Duration {
	d, waits := s.timeout, 1.0
	if _, ok := s.auth.(*oauthAuth); ok {
		d, waits = 4*s.timeout, 2
	}
	if s.limiter != nil {
		d += time.Duration(waits * float64(maxInFlight) / s.limiter.rate * float64(time.Second))
	}
	return d
}

// Write sends e in one request. A 2xx answer is acceptance. 429, 408, 5xx, timeouts and connection errors are
// retryable errors (with the answer's Retry-After, if any, as connector.RetryAfter); other answers (4xx, redirects), a refused non-public address and an event that cannot be
// encoded are permanent, as Amazon EventBridge treats them. With OAuth, a 401 refreshes the token and sends the
// request once more; token endpoint errors are retryable.
func (s *Sink) Write(ctx context.Context, e *event.Event) error {
	hdr, body, err := s.encode(ctx, e)
	if err != nil {
		return err
	}
	target, err := s.urlOf(e)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		if s.limiter != nil { // every request to the destination takes a token, a retry after a 401 too
			if err := s.limiter.wait(ctx); err != nil {
				return fmt.Errorf("http: waiting for the rate limit: %w", err)
			}
		}
		code, token, err := s.send(ctx, target, hdr, body, e.ID())
		if code == http.StatusUnauthorized && attempt == 0 && s.auth.invalidate(token) {
			// The retry's headers are a copy: the transport may still read the first request's.
			hdr = hdr.Clone()
			continue
		}
		return err
	}
}

// countStars counts the path segments of raw that are "*".
func countStars(raw string) int {
	u, err := url.Parse(raw)
	if err != nil {
		return 0
	}
	n := 0
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "*" {
			n++
		}
	}
	return n
}

// urlOf returns the URL of e's request: the configured one with its "*" path segments filled from e. A value the
// event lacks is permanent: the event can never be delivered.
func (s *Sink) urlOf(e *event.Event) (string, error) {
	if s.pathParams.Len() == 0 {
		return s.url, nil
	}
	values, err := s.pathParams.Texts(e)
	if err != nil {
		return "", connector.Permanent(fmt.Errorf("http: path parameter: %w", err))
	}
	u, err := url.Parse(s.url)
	if err != nil {
		return "", connector.Permanent(fmt.Errorf("http: url: %w", err))
	}
	segs := strings.Split(u.Path, "/")
	raw := strings.Split(u.EscapedPath(), "/")
	i := 0
	for j, seg := range segs {
		if seg == "*" && i < len(values) {
			segs[j], raw[j] = values[i], url.PathEscape(values[i])
			i++
		}
	}
	u.Path, u.RawPath = strings.Join(segs, "/"), strings.Join(raw, "/")
	return u.String(), nil
}

// encode returns the headers and body of e's request.
func (s *Sink) encode(ctx context.Context, e *event.Event) (http.Header, []byte, error) {
	// Only the headers and the body are written: send makes the request itself.
	req := &http.Request{Header: make(http.Header, len(s.headers)+8)}
	var err error
	for k, v := range s.headers {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "ce-") || lk == "content-type" || lk == "content-length" ||
			strings.HasPrefix(lk, "webhook-") && s.signingKey != nil {
			continue // the event's own headers are not overridden
		}
		req.Header.Set(k, v)
	}
	var body []byte
	if s.structured {
		// The JSON format as the spec says (cloudevent.Marshal), not the SDK's: it writes the data of a +json type
		// as a string.
		if body, err = cloudevent.Marshal(e); err != nil {
			return nil, nil, connector.Permanent(fmt.Errorf("http: encoding the event: %w", err))
		}
		req.Header.Set("Content-Type", "application/cloudevents+json")
	} else if binaryHeaders(e, req.Header) {
		if data := e.Data(); len(data) > 0 {
			body = data // read only from here on: send reads it, addBodyParams makes another
		}
	} else if err := cehttp.WriteRequest(ctx, binding.ToMessage(e), req); err != nil {
		return nil, nil, connector.Permanent(fmt.Errorf("http: encoding the event: %w", err))
	}
	percentEncode(req.Header)
	propagateTraceContext(ctx, e, req.Header)
	if !s.structured && req.Body != nil {
		if req.ContentLength > 0 {
			body = make([]byte, req.ContentLength)
			_, err = io.ReadFull(req.Body, body)
		} else {
			body, err = io.ReadAll(req.Body)
		}
		_ = req.Body.Close()
		if err != nil {
			return nil, nil, connector.Permanent(fmt.Errorf("http: encoding the event: %w", err))
		}
	}
	if len(s.bodyParams) > 0 {
		body = s.addBodyParams(body)
		req.Header.Del("Content-Length")
	}
	return req.Header, body, nil
}

// binaryHeaders sets on h the headers of e in binary mode as the SDK's HTTP binding writes them (cehttp.WriteRequest
// of binding.ToMessage(e): its attributes as Ce- headers but datacontenttype as Content-Type, blank ones left out,
// the time in UTC, each extension as Ce- and its name with the first letter upper-cased) when e is a v1.0 event
// whose extensions are strings, booleans or Integers with names that start with a lower-case letter; ok false: it
// is not, and the SDK writes them. The SDK's writer builds the source's text and a binding message for every event
// delivered, and its body is a copy of the data (TestBinaryHeadersAsTheSDKWrites).
func binaryHeaders(e *event.Event, h http.Header) (ok bool) {
	ec, isV1 := e.Context.(*event.EventContextV1)
	if !isV1 {
		return false
	}
	for k, v := range ec.Extensions {
		switch v.(type) {
		case string, bool, int32:
		default:
			return false
		}
		if k == "" || k[0] < 'a' || k[0] > 'z' {
			return false
		}
	}
	// One array holds every header's value, as Header.Clone makes them: a value of its own each would be an
	// allocation per header of every event delivered. Each value's slice ends at its capacity, so an append to one
	// copies it rather than writing over the next.
	vals := make([]string, 0, 8+len(ec.Extensions)) // the eight attributes and the extensions
	put := func(key, v string) {
		vals = append(vals, v)
		n := len(vals)
		h[key] = vals[n-1 : n : n]
	}
	set := func(key, v string) {
		if v != "" {
			put(key, v)
		}
	}
	set("Ce-Id", ec.ID)
	set("Ce-Source", cloudevent.Source(e))
	set("Ce-Specversion", event.CloudEventsVersionV1)
	set("Ce-Type", ec.Type)
	if ec.DataContentType != nil {
		set("Content-Type", *ec.DataContentType)
	}
	if ec.DataSchema != nil {
		set("Ce-Dataschema", ec.DataSchema.String())
	}
	if ec.Subject != nil {
		set("Ce-Subject", *ec.Subject)
	}
	if ec.Time != nil && !ec.Time.IsZero() {
		set("Ce-Time", types.FormatTime(ec.Time.Time))
	}
	for k, v := range ec.Extensions {
		key := "Ce-" + string(k[0]-'a'+'A') + k[1:]
		switch v := v.(type) {
		case string:
			put(key, v)
		case bool:
			put(key, strconv.FormatBool(v))
		case int32:
			put(key, strconv.Itoa(int(v)))
		}
	}
	return true
}

// addBodyParams adds the body parameters to the JSON object of the data: the body itself in binary mode, its
// "data" member in structured mode. Data that is not a JSON object is left as it is.
func (s *Sink) addBodyParams(body []byte) []byte {
	merge := func(raw []byte) ([]byte, bool) {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			return raw, false
		}
		for k, v := range s.bodyParams {
			b, _ := json.Marshal(v)
			obj[k] = b
		}
		out, err := json.Marshal(obj)
		return out, err == nil
	}
	if !s.structured {
		out, _ := merge(body)
		return out
	}
	var envelope map[string]json.RawMessage
	if json.Unmarshal(body, &envelope) != nil {
		return body
	}
	data, ok := merge(envelope["data"])
	if !ok {
		return body
	}
	envelope["data"] = data
	out, err := json.Marshal(envelope)
	if err != nil {
		return body
	}
	return out
}

// send makes one request and returns its status (0 without an answer), the auth token it used and its outcome.
func (s *Sink) send(ctx context.Context, target string, hdr http.Header, body []byte, id string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, s.method, target, bytes.NewReader(body))
	if err != nil {
		return 0, "", connector.Permanent(fmt.Errorf("http: building the request: %w", err))
	}
	req.Header = hdr // encode made it for this event; a retry after a 401 sends a copy
	token, err := s.auth.apply(ctx, req)
	if err != nil {
		return 0, "", err
	}
	if s.signingKey != nil {
		signWebhook(req.Header, s.signingKey, id, s.now(), body)
	}
	resp, err := s.client.Do(req) // the client's Timeout bounds the request, its answer's body included
	if err != nil {
		if errors.Is(err, egress.ErrRefused) {
			return 0, token, connector.Permanent(fmt.Errorf("http: %s %s: %w", s.method, s.url, err))
		}
		return 0, token, fmt.Errorf("http: %s %s: %w", s.method, s.url, err)
	}
	defer resp.Body.Close()
	code := resp.StatusCode
	if code >= 200 && code < 300 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
		return code, token, nil
	}
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	err = connector.WithStatus(fmt.Errorf("http: %s %s answered %d: %s", s.method, s.url, code,
		strings.TrimSpace(string(snippet))), code, strings.TrimSpace(string(snippet)))
	if Retryable(code) {
		if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return code, token, connector.RetryAfter(err, d)
		}
		return code, token, err
	}
	return code, token, connector.Permanent(err)
}

// ParseRetryAfter reads a Retry-After header, delay-seconds or an HTTP date, as a delay from now. A date in the
// past is a delay of 0 (ok); an absent or unreadable header is not ok.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		const maxSeconds = int64(1<<63-1) / int64(time.Second)
		return time.Duration(min(n, maxSeconds)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// Retryable reports whether a non-2xx status is worth retrying: 408, 429 and 5xx.
func Retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// percentEncode encodes the values of the ce-* headers in place as the CloudEvents HTTP binding (3.1.3.2) says: a
// space, '"', '%' and every byte outside printable ASCII become %XX (UTF-8 bytes, upper-case hex); the SDK writes
// them raw.
func percentEncode(h http.Header) {
	const hex = "0123456789ABCDEF"
	for k, vs := range h {
		if len(k) < 3 || !strings.EqualFold(k[:3], "ce-") {
			continue
		}
		for i, v := range vs {
			if !needsPercent(v) {
				continue
			}
			var b strings.Builder
			for j := 0; j < len(v); j++ {
				c := v[j]
				if percented(c) {
					b.WriteByte('%')
					b.WriteByte(hex[c>>4])
					b.WriteByte(hex[c&15])
					continue
				}
				b.WriteByte(c)
			}
			vs[i] = b.String()
		}
	}
}

// needsPercent reports whether percentEncode changes v.
func needsPercent(v string) bool {
	for j := 0; j < len(v); j++ {
		if percented(v[j]) {
			return true
		}
	}
	return false
}

// percented reports whether percentEncode writes c as %XX.
func percented(c byte) bool { return c <= ' ' || c >= 0x7f || c == '"' || c == '%' }

// traceparentRe is a W3C trace context traceparent: version, trace id, parent id, flags, in lowercase hex.
var traceparentRe = regexp.MustCompile(`^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$`)

// maxTracestate bounds the tracestate propagated (W3C: 32 list members of at most 256 characters; receivers may
// drop more than 512 characters).
const maxTracestate = 512

// propagateTraceContext sends the event's trace context (the CloudEvents distributed-tracing extension's
// traceparent and tracestate) as the W3C Trace Context headers, so that a receiver that traces continues the
// producer's trace; they replace configured headers of those names. A traceparent that is not one (W3C's format,
// version ff, an all-zero trace or parent id) is not propagated, and then neither is tracestate. The event itself
// is unchanged (in binary mode it also travels as ce-traceparent). When the worker traces, ctx holds the span of
// this attempt, and the headers carry that span's context instead: the hop to the target is its child, in the
// trace the event started in.
func propagateTraceContext(ctx context.Context, e *event.Event, h http.Header) {
	if trace.SpanContextFromContext(ctx).IsValid() {
		h.Del("Tracestate")
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
		return
	}
	tp, ok := e.Extensions()["traceparent"].(string)
	if !ok || !traceparentRe.MatchString(tp) || strings.HasPrefix(tp, "ff-") ||
		tp[3:35] == strings.Repeat("0", 32) || tp[36:52] == strings.Repeat("0", 16) {
		return
	}
	h.Set("Traceparent", tp)
	h.Del("Tracestate")
	if ts, ok := e.Extensions()["tracestate"].(string); ok && ts != "" && len(ts) <= maxTracestate && isPrintableASCII(ts) {
		h.Set("Tracestate", ts)
	}
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
