package source

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
)

// Keys of the http source's config that the control plane enforces when it receives a webhook request. They are
// the http-source plugin's keys (worker/plugins/webhook); a test in cmd/eventbridge checks that they agree.
const (
	// KeyMethods is a comma-separated subset of GET, POST, PUT, PATCH, DELETE (default POST).
	KeyMethods = "http.methods"
	// KeyIPs is a comma-separated list of IP addresses and CIDR prefixes, IPv4 or IPv6; empty allows any client.
	KeyIPs = "http.ips"
	// KeyReferers is a comma-separated list of host names, "*.example.com" allowing every subdomain; empty
	// allows any referer (and none).
	KeyReferers = "http.referers"
	// KeySignatureScheme is none (default), github, standard-webhooks or hmac-sha256.
	KeySignatureScheme = "http.signature.scheme"
	// KeySignatureHeader is the header holding the hex HMAC of the hmac-sha256 scheme.
	KeySignatureHeader = "http.signature.header"
	// KeySignatureSecret is the secret of the signature (sealed in storage).
	KeySignatureSecret = "http.signature.secret"
)

// Signature schemes.
const (
	SchemeNone             = "none"
	SchemeGitHub           = "github"
	SchemeStandardWebhooks = "standard-webhooks"
	SchemeHMACSHA256       = "hmac-sha256"
)

// Webhook request limits and the event it becomes.
const (
	// MaxWebhookBody is the largest request body a webhook accepts.
	MaxWebhookBody = 256 << 10
	// StandardWebhooksTolerance is how far webhook-timestamp may be from now.
	StandardWebhooksTolerance = 5 * time.Minute
	// HTTPEventType is the type of the events webhook requests become.
	HTTPEventType = "eventbridge:Events:HTTPEvent"
	// EventSourcePrefix prefixes the source name in the events' source attribute: eventbridge:webhook:<source>.
	EventSourcePrefix = "eventbridge:webhook:"
	// TokenParam is the query parameter that carries the token on /webhook/putEvents.
	TokenParam = "token"
)

// Headers of the signature schemes.
const (
	HeaderGitHubSignature = "X-Hub-Signature-256"
	HeaderWebhookID       = "Webhook-Id"
	HeaderWebhookTime     = "Webhook-Timestamp"
	HeaderWebhookSig      = "Webhook-Signature"
)

// credentialHeaders are never copied into the event.
var credentialHeaders = []string{"Authorization", "Cookie", "Proxy-Authorization", "X-Api-Key", HeaderGitHubSignature,
	"X-Hub-Signature", HeaderWebhookSig}

// ErrWebhookNotFound answers every request whose token names no enabled webhook source, with no hint whether it
// ever existed.
var ErrWebhookNotFound = &domain.Error{Kind: domain.KindNotFound, Code: "NotFound", Message: "not found"}

// Reason says why a webhook request was refused.
type Reason string

// Reasons of refusal. The web layer answers 403 for a method, client IP or referer, 401 for a signature.
const (
	RefusedMethod    Reason = "method"
	RefusedIP        Reason = "ip"
	RefusedReferer   Reason = "referer"
	RefusedSignature Reason = "signature"
)

// Refusal is a webhook request that a check of its source refused.
type Refusal struct {
	Reason  Reason
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Webhook is the parsed receiving side of an http source: what the control plane checks before it stores a
// request. Build it with WebhookOf.
type Webhook struct {
	Source *Source
	// Bus is the source's bus, where its requests are stored (set by Service.ByToken).
	Bus      *bus.Bus
	Methods  []string
	Prefixes []netip.Prefix
	Referers []string
	Scheme   string
	Header   string
	secret   string
}

// Request is what a webhook check and the event need of an HTTP request.
type Request struct {
	Method string
	// ClientIP is the TCP peer's address (or the first untrusted X-Forwarded-For hop behind trusted proxies).
	ClientIP netip.Addr
	Header   http.Header
	Path     string
	Query    url.Values
	Body     []byte
}

var allowedMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

func splitList(v string) []string {
	var out []string
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ParseMethods reads http.methods (default POST).
func ParseMethods(v string) ([]string, error) {
	ms := splitList(strings.ToUpper(v))
	if len(ms) == 0 {
		return []string{http.MethodPost}, nil
	}
	for _, m := range ms {
		if !slices.Contains(allowedMethods, m) {
			return nil, invalidKey(KeyMethods, "%q is not one of GET, POST, PUT, PATCH, DELETE", m)
		}
	}
	return ms, nil
}

// ParseIPs reads http.ips: addresses (as /32 or /128 prefixes) and CIDR prefixes.
func ParseIPs(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range splitList(v) {
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, invalidKey(KeyIPs, "%q is not an IP address or CIDR prefix", s)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, invalidKey(KeyIPs, "%q is not an IP address or CIDR prefix", s)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// invalidKey is an ErrInvalidConfig about one key of the config.
func invalidKey(key, format string, args ...any) error {
	return ErrInvalidConfig.With("config.%s: %s", key, fmt.Sprintf(format, args...)).WithField("config." + key)
}

// WebhookOf parses the webhook settings of an http source; open decrypts the signature secret. Errors:
// ErrInvalidConfig naming the key (Service checks it before storing a config, as the plugin does).
func WebhookOf(s *Source, open Opener) (*Webhook, error) {
	cfg := s.config
	w := &Webhook{Source: s, Referers: splitList(strings.ToLower(cfg[KeyReferers])), Header: cfg[KeySignatureHeader]}
	var err error
	if w.Methods, err = ParseMethods(cfg[KeyMethods]); err != nil {
		return nil, err
	}
	if w.Prefixes, err = ParseIPs(cfg[KeyIPs]); err != nil {
		return nil, err
	}
	w.Scheme = strings.ToLower(strings.TrimSpace(cfg[KeySignatureScheme]))
	switch w.Scheme {
	case "", SchemeNone:
		w.Scheme = SchemeNone
		return w, nil
	case SchemeGitHub, SchemeStandardWebhooks, SchemeHMACSHA256:
	default:
		return nil, invalidKey(KeySignatureScheme, "%q is not none, github, standard-webhooks or hmac-sha256", w.Scheme)
	}
	if w.Scheme == SchemeHMACSHA256 && w.Header == "" {
		return nil, invalidKey(KeySignatureHeader, "it is required by scheme %s", w.Scheme)
	}
	secret := cfg[KeySignatureSecret]
	if strings.HasPrefix(secret, SealedPrefix) {
		if open == nil {
			return nil, invalidKey(KeySignatureSecret, "it is sealed and this deployment cannot open it")
		}
		if secret, err = open.Open(s.owner(KeySignatureSecret), secret); err != nil {
			return nil, invalidKey(KeySignatureSecret, "it cannot be opened with this deployment's master key")
		}
	}
	if secret == "" {
		return nil, invalidKey(KeySignatureSecret, "it is required by scheme %s", w.Scheme)
	}
	w.secret = secret
	return w, nil
}

// Admit checks what can be checked before the body is read, in this order: the method, the client IP, the
// referer. It returns a *Refusal naming the check that failed.
func (w *Webhook) Admit(r Request) error {
	if !slices.Contains(w.Methods, r.Method) {
		return &Refusal{Reason: RefusedMethod, Message: fmt.Sprintf("method %s is not allowed; allowed: %s", r.Method, strings.Join(w.Methods, ", "))}
	}
	if len(w.Prefixes) > 0 && !AllowedIP(w.Prefixes, r.ClientIP) {
		return &Refusal{Reason: RefusedIP, Message: "the client address is not allowed"}
	}
	if len(w.Referers) > 0 && !AllowedReferer(w.Referers, r.Header.Get("Referer")) {
		return &Refusal{Reason: RefusedReferer, Message: "the referer is not allowed"}
	}
	return nil
}

// AllowedIP reports whether ip is in one of prefixes (IPv4-mapped IPv6 addresses count as IPv4).
func AllowedIP(prefixes []netip.Prefix, ip netip.Addr) bool {
	if !ip.IsValid() {
		return false
	}
	ip = ip.Unmap()
	for _, p := range prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// AllowedReferer reports whether the host of the Referer header matches one of hosts: exactly, or as a subdomain
// of a "*.example.com" entry (which does not match example.com itself). A missing or unreadable referer matches
// nothing.
func AllowedReferer(hosts []string, referer string) bool {
	if referer == "" {
		return false
	}
	u, err := url.Parse(referer)
	if err != nil || u.Hostname() == "" {
		return false
	}
	host := strings.ToLower(u.Hostname())
	for _, h := range hosts {
		if suffix, ok := strings.CutPrefix(h, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
			continue
		}
		if host == h {
			return true
		}
	}
	return false
}

// Verify checks the signature of a request with its body, as the source's scheme says; now bounds the
// timestamp of standard-webhooks. It returns a *Refusal (RefusedSignature) when the signature is missing or wrong.
func (w *Webhook) Verify(r Request, now time.Time) error {
	refuse := func(msg string) error { return &Refusal{Reason: RefusedSignature, Message: msg} }
	switch w.Scheme {
	case SchemeNone:
		return nil
	case SchemeGitHub:
		sig, ok := strings.CutPrefix(r.Header.Get(HeaderGitHubSignature), "sha256=")
		if !ok {
			return refuse("the " + HeaderGitHubSignature + " header is missing or not sha256=<hex>")
		}
		if !equalHex(sig, hmacSHA256([]byte(w.secret), r.Body)) {
			return refuse("the signature does not match")
		}
	case SchemeHMACSHA256:
		sig := strings.TrimSpace(r.Header.Get(w.Header))
		if sig == "" {
			return refuse("the " + w.Header + " header is missing")
		}
		if !equalHex(sig, hmacSHA256([]byte(w.secret), r.Body)) {
			return refuse("the signature does not match")
		}
	case SchemeStandardWebhooks:
		return w.verifyStandard(r, now)
	}
	return nil
}

func (w *Webhook) verifyStandard(r Request, now time.Time) error {
	refuse := func(msg string) error { return &Refusal{Reason: RefusedSignature, Message: msg} }
	id, ts, sigs := r.Header.Get(HeaderWebhookID), r.Header.Get(HeaderWebhookTime), r.Header.Get(HeaderWebhookSig)
	if id == "" || ts == "" || sigs == "" {
		return refuse("the webhook-id, webhook-timestamp and webhook-signature headers are required")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return refuse("webhook-timestamp is not a number of seconds")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > StandardWebhooksTolerance || d < -StandardWebhooksTolerance {
		return refuse("webhook-timestamp is more than 5 minutes away from now")
	}
	key, err := StandardWebhooksKey(w.secret)
	if err != nil {
		return refuse("the source's secret is not a whsec_<base64> secret")
	}
	want := hmacSHA256(key, []byte(id+"."+ts+"."+string(r.Body)))
	for s := range strings.FieldsSeq(sigs) {
		v, b64, ok := strings.Cut(s, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return refuse("the signature does not match")
}

// StandardWebhooksKey decodes a Standard Webhooks secret: whsec_ and the base64 of the key.
func StandardWebhooksKey(secret string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
}

func hmacSHA256(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)
}

func equalHex(s string, want []byte) bool {
	got, err := hex.DecodeString(strings.TrimSpace(strings.ToLower(s)))
	return err == nil && hmac.Equal(got, want)
}

// HTTPData is the data of the event a webhook request becomes.
type HTTPData struct {
	// Body is the request body: as sent when it is JSON (keys in their order, numbers with all their digits;
	// compacted), else the text (absent when empty).
	Body any `json:"body"`
	// Headers are the request's headers without credentials and signatures; several values are joined by ", ".
	Headers map[string]string `json:"headers"`
	// HTTPMethod is the method of the request.
	HTTPMethod string `json:"httpMethod"`
	// Path is the path of the request.
	Path string `json:"path"`
	// QueryString is the query parameters without the token; several values are joined by ",".
	QueryString map[string]string `json:"queryString"`
}

// Event makes the CloudEvent a webhook request becomes: type HTTPEventType, source eventbridge:webhook:<source
// name>, a new UUID as id, time now, data HTTPData as JSON. The headers in the data have no credentials
// (Authorization, Cookie, Proxy-Authorization, X-Api-Key) and no signature.
func (w *Webhook) Event(r Request, now time.Time) (*event.Event, error) {
	d := HTTPData{Headers: map[string]string{}, HTTPMethod: r.Method, Path: r.Path, QueryString: map[string]string{}}
	if len(r.Body) > 0 {
		if json.Valid(r.Body) {
			// As sent: its keys in their order, its numbers with all their digits (compacted by the encoding).
			d.Body = json.RawMessage(r.Body)
		} else {
			d.Body = strings.ToValidUTF8(string(r.Body), "\uFFFD")
		}
	}
	drop := slices.Clone(credentialHeaders)
	if w.Scheme == SchemeHMACSHA256 && w.Header != "" {
		drop = append(drop, w.Header)
	}
	for k, vs := range r.Header {
		if slices.ContainsFunc(drop, func(h string) bool { return strings.EqualFold(h, k) }) {
			continue
		}
		d.Headers[http.CanonicalHeaderKey(k)] = strings.Join(vs, ", ")
	}
	for k, vs := range r.Query {
		if k == TokenParam {
			continue
		}
		d.QueryString[k] = strings.Join(vs, ",")
	}
	e := event.New()
	e.SetID(NewUUID())
	e.SetSource(EventSourcePrefix + w.Source.Name())
	e.SetType(HTTPEventType)
	e.SetTime(now.UTC())
	if err := e.SetData(event.ApplicationJSON, d); err != nil {
		return nil, fmt.Errorf("encoding the webhook event: %w", err)
	}
	return &e, nil
}

// NewUUID returns a random (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
