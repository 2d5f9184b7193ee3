// Package webhook is the http-source plugin: the source connector of a webhook source. The control plane's
// webhook endpoint checks each request (token, method, client IP, referer, signature, size), turns it into a
// CloudEvent of type eventbridge:Events:HTTPEvent and stores it, acknowledged, on the bus's .in subject. Earlier
// versions stored it on the intake subject of the source on the bus's stream (stream.Names.SourceSubject) first;
// this connector moves what is stored there onto the bus's .in subject, reading the intake as the eventbus-source
// plugin reads a local stream, so that what they left is delivered.
//
// The webhook's settings (http.*) are enforced by the control plane, which reads them from the connector's config
// by the key names below; they are validated here so that the worker's validate endpoint refuses a wrong value
// naming its key, and the console renders them as a form from this plugin's spec.
package webhook

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/plugins/eventbus"
)

// Name is the plugin's connector.class.
const Name = "http-source"

// EventType is the CloudEvent type of the requests a webhook received.
const EventType = "eventbridge:Events:HTTPEvent"

// Config keys of the plugin.
const (
	// KeySourceStream is the stream holding the intake: the bus's stream.
	KeySourceStream = eventbus.KeySourceStream
	// KeySourceSubject is the intake subject of the source on that stream.
	KeySourceSubject = eventbus.KeySourceSubject

	// KeyMethods lists the HTTP methods the webhook accepts, comma-separated.
	KeyMethods = "http.methods"
	// KeyIPs lists the client IPs and CIDRs the webhook accepts, comma-separated; empty accepts any.
	KeyIPs = "http.ips"
	// KeyReferers lists the Referer host names the webhook accepts (*.example.com allowed); empty accepts any.
	KeyReferers = "http.referers"
	// KeySignatureScheme is how requests are signed: none, github, standard-webhooks or hmac-sha256.
	KeySignatureScheme = "http.signature.scheme"
	// KeySignatureHeader is the header holding the hex HMAC-SHA256 of the body (scheme hmac-sha256).
	KeySignatureHeader = "http.signature.header"
	// KeySignatureSecret is the signing secret (a secret value: stored encrypted).
	KeySignatureSecret = "http.signature.secret"
)

// Signature schemes.
const (
	// SchemeNone accepts unsigned requests.
	SchemeNone = "none"
	// SchemeGitHub checks X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>.
	SchemeGitHub = "github"
	// SchemeStandardWebhooks checks webhook-id, webhook-timestamp and webhook-signature: v1,<base64 HMAC-SHA256 of
	// id.timestamp.body> under the key of a whsec_<base64> secret.
	SchemeStandardWebhooks = "standard-webhooks"
	// SchemeHMACSHA256 checks the hex HMAC-SHA256 of the body in the header http.signature.header.
	SchemeHMACSHA256 = "hmac-sha256"
)

// methods are the HTTP methods a webhook may accept.
var methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// DefaultMethods is the default of http.methods.
const DefaultMethods = "POST"

// StandardWebhooksSecretPrefix starts a Standard Webhooks secret; the base64 key follows.
const StandardWebhooksSecretPrefix = "whsec_"

func init() { connector.Register(Plugin()) }

// Plugin returns the http-source plugin.
func Plugin() connector.Plugin {
	bus := eventbus.SourcePlugin().Spec
	stream, _ := bus.Field(eventbus.KeySourceStream)
	stream.Title = "Intake stream"
	stream.Doc = "The stream holding the source's intake: the bus's stream. Set by the control plane."
	stream.Example = "eb_BUS_q4xbm2n7vd3kza6e"
	subject, _ := bus.Field(eventbus.KeySourceSubject)
	subject.Required = true
	subject.Title = "Intake subject"
	subject.Doc = "The source's intake subject on that stream (<cluster>.bus.<busId>.source.<sourceId>). Set by the control plane."
	subject.Example = "eb.bus.q4xbm2n7vd3kza6e.source.m2c7xq4kz5vd3bna"
	return connector.Plugin{
		Name:    Name,
		Type:    connector.TypeSource,
		Version: "1.0.0",
		Doc: "The connector of a webhook source: moves the requests stored on the source's intake subject " +
			"(CloudEvents of type " + EventType + ") onto the bus, in order (the control plane stores the requests " +
			"it accepts on the bus itself; earlier versions stored them on the intake); its position is the offset {\"sequence\": N} of partition {\"stream\": S}. The http.* keys are " +
			"the webhook's settings, enforced by the control plane. Only task 0 reads.",
		Spec: connector.Spec{
			stream,
			subject,
			{Name: KeyMethods, Title: "Accepted methods", Type: connector.TypeString, Default: DefaultMethods, Check: checkMethods,
				Example: "POST,PUT",
				Doc: "HTTP methods the webhook accepts, comma-separated, from GET, POST, PUT, PATCH, DELETE (any case); another " +
					"method is refused with 403."},
			{Name: KeyIPs, Title: "Allowed client IPs", Type: connector.TypeString, Check: checkIPs,
				Example: "203.0.113.7,10.0.0.0/8",
				Doc: "Client IP addresses and CIDR ranges (IPv4 and IPv6) the webhook accepts, comma-separated: " +
					"203.0.113.7, 10.0.0.0/8, 2001:db8::/32. Empty accepts any client; another is refused with 403."},
			{Name: KeyReferers, Title: "Allowed referers", Type: connector.TypeString, Check: checkReferers,
				Example: "example.com,*.example.com",
				Doc: "Host names the Referer header must name, comma-separated; *.example.com matches every " +
					"subdomain of example.com. Empty accepts any request; another is refused with 403."},
			{Name: KeySignatureScheme, Title: "Signature scheme", Type: connector.TypeEnum, Default: SchemeNone,
				Enum: []string{SchemeNone, SchemeGitHub, SchemeStandardWebhooks, SchemeHMACSHA256},
				Doc: "How requests are signed: none; github (X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>); " +
					"standard-webhooks (webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256 of " +
					"id.timestamp.body>, secret whsec_<base64>); hmac-sha256 (hex HMAC-SHA256 of the body in " +
					"http.signature.header). A request without a valid signature is refused."},
			{Name: KeySignatureHeader, Title: "Signature header", Type: connector.TypeString, Check: checkHeaderName,
				Example: "X-Signature",
				Doc:     "Header holding the hex HMAC-SHA256 of the body when http.signature.scheme is hmac-sha256 (required then); other schemes ignore it."},
			{Name: KeySignatureSecret, Title: "Signing secret", Type: connector.TypeString, Secret: true,
				Doc: "Signing secret; required unless http.signature.scheme is none. For standard-webhooks: whsec_<base64>."},
		},
		NewSource: NewSource,
	}
}

// parseMethods parses a value of http.methods into upper-case method names (any case is accepted, as the control
// plane reads it; empty elements are skipped), or says what is wrong with it.
func parseMethods(v string) ([]string, error) {
	var out []string
	for m := range strings.SplitSeq(v, ",") {
		m = strings.ToUpper(strings.TrimSpace(m))
		if m == "" {
			continue
		}
		if !slices.Contains(methods, m) {
			return nil, fmt.Errorf("%q is not one of %s", m, strings.Join(methods, ", "))
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%q names no method: list some of %s", v, strings.Join(methods, ", "))
	}
	return out, nil
}

func checkMethods(v string) error {
	_, err := parseMethods(v)
	return err
}

// parsePrefixes parses a value of http.ips into address ranges (a single IP is a /32 or /128), or says what is
// wrong with it.
func parsePrefixes(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for s := range strings.SplitSeq(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, fmt.Errorf("%q has an empty element", v)
		}
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR range (like 10.0.0.0/8 or 2001:db8::/32)", s)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("%q is not an IP address (like 203.0.113.7 or 2001:db8::1) or a CIDR range", s)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

func checkIPs(v string) error {
	_, err := parsePrefixes(v)
	return err
}

// parseReferers parses a value of http.referers into lower-case host names, *.domain wildcards kept, or says what is
// wrong with it.
func parseReferers(v string) ([]string, error) {
	var out []string
	for h := range strings.SplitSeq(v, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			return nil, fmt.Errorf("%q has an empty element", v)
		}
		if err := checkHost(strings.TrimPrefix(h, "*.")); err != nil {
			return nil, fmt.Errorf("%q is not a host name or *.domain wildcard: %w", h, err)
		}
		out = append(out, h)
	}
	return out, nil
}

func checkReferers(v string) error {
	_, err := parseReferers(v)
	return err
}

// checkHost accepts DNS host names: dot-separated labels of letters, digits and inner hyphens.
func checkHost(h string) error {
	if len(h) > 253 {
		return errors.New("longer than 253 characters")
	}
	for label := range strings.SplitSeq(h, ".") {
		switch {
		case label == "":
			return errors.New("it has an empty label")
		case len(label) > 63:
			return errors.New("a label is longer than 63 characters")
		case strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-"):
			return errors.New("a label starts or ends with '-'")
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return fmt.Errorf("%q is not allowed (a host name has letters, digits, '-' and '.'; no scheme, port or path)", r)
			}
		}
	}
	return nil
}

// checkHeaderName accepts HTTP header field names (RFC 9110 tokens).
func checkHeaderName(v string) error {
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return fmt.Errorf("%q is not an HTTP header name: %q is not allowed", v, r)
		}
	}
	return nil
}

// standardWebhooksKey returns the HMAC key of a Standard Webhooks secret: the standard (padded) base64 bytes
// after whsec_, as the control plane decodes them.
func standardWebhooksKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, StandardWebhooksSecretPrefix)
	if !ok {
		return nil, errors.New("a standard-webhooks secret is whsec_ followed by the base64 key")
	}
	k, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(k) == 0 {
		return nil, errors.New("a standard-webhooks secret is whsec_ followed by the base64 key; what follows whsec_ is not base64")
	}
	return k, nil
}

// checkSignature finds what the spec cannot say: a scheme's required keys.
func checkSignature(cfg connector.Values) connector.FieldErrors {
	var errs connector.FieldErrors
	scheme, secret := cfg.String(KeySignatureScheme), cfg.String(KeySignatureSecret)
	if scheme != SchemeNone && secret == "" {
		errs = append(errs, connector.FieldError{Key: KeySignatureSecret,
			Message: fmt.Sprintf("is required when %s is %s", KeySignatureScheme, scheme)})
	}
	if scheme == SchemeStandardWebhooks && secret != "" {
		if _, err := standardWebhooksKey(secret); err != nil {
			errs = append(errs, connector.FieldError{Key: KeySignatureSecret, Message: err.Error()})
		}
	}
	if scheme == SchemeHMACSHA256 && cfg.String(KeySignatureHeader) == "" {
		errs = append(errs, connector.FieldError{Key: KeySignatureHeader,
			Message: fmt.Sprintf("is required when %s is %s: the header holding the hex HMAC-SHA256 of the body", KeySignatureScheme, SchemeHMACSHA256)})
	}
	return errs
}

// NewSource builds the source: the signature settings are checked, then the intake is read by an eventbus
// source on the worker's own NATS, from the first message the intake holds.
func NewSource(cfg connector.Values, env connector.Env) (connector.Source, error) {
	if errs := checkSignature(cfg); len(errs) > 0 {
		return nil, errs
	}
	bus := eventbus.SourcePlugin()
	inner, err := eventbus.NewSource(bus.FullSpec().Values(map[string]string{
		eventbus.KeySourceStream:  cfg.String(KeySourceStream),
		eventbus.KeySourceSubject: cfg.String(KeySourceSubject),
		eventbus.KeyStartPolicy:   "all",
	}), env)
	if err != nil {
		return nil, err
	}
	if env.Task != 0 {
		return idle{}, nil
	}
	return inner, nil
}

// idle is a task other than 0: one reader keeps the intake's order.
type idle struct{}

func (idle) Connect(context.Context) error { return nil }
func (idle) Read(ctx context.Context) ([]connector.SourceRecord, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (idle) Commit(context.Context, []connector.SourceRecord) error { return nil }
func (idle) Close() error                                           { return nil }
