// Package target holds targets: where the events a rule selects are delivered, how, and with which retries.
package target

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/transform"
)

// Type names the kind of a target; it selects the sink plugin that delivers.
type Type string

// Target types.
const (
	// HTTP delivers each event with an HTTP request to a URL.
	HTTP Type = "http"
	// APIDestination delivers each event to an API destination of the account (its endpoint, method,
	// connection's authorization and rate limit).
	APIDestination Type = "api-destination"
	// Bus puts each event on another bus of the same account.
	Bus Type = "bus"
	// Log writes each event to the worker's log.
	Log Type = "log"
)

// Types lists the built-in target types. Any other type names a sink plugin of the worker runtime (mqtt, ...),
// configured with that plugin's own keys (Spec.Config), which the runtime validates.
func Types() []Type { return []Type{HTTP, APIDestination, Bus, Log} }

// pluginType is the form of a sink plugin's name.
var pluginType = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// IsPlugin reports whether t names a sink plugin rather than a built-in type.
func (t Type) IsPlugin() bool { return !slices.Contains(Types(), t) && t != "" }

// SecretMask is how a secret value of a plugin target's config is answered (domain.SecretMask). Given back
// unchanged in a replacement, it keeps the stored secret.
const SecretMask = domain.SecretMask

// reserved reports whether a connector config key is one the control plane sets for every target, which a
// plugin target's config cannot set.
func reserved(key string) bool {
	switch key {
	case "connector.class", "tasks.max", "topics", "transforms":
		return true
	}
	for _, p := range []string{"transforms.", "errors.", "jetstream.", "eb."} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// SealedPrefix starts every sealed value.
const SealedPrefix = domain.SealedPrefix

// PublicConfig is Config with every sealed value replaced by SecretMask, for answers.
func (t *Target) PublicConfig() map[string]string {
	if t.config == nil {
		return nil
	}
	out := make(map[string]string, len(t.config))
	for k, v := range t.config {
		if strings.HasPrefix(v, SealedPrefix) {
			v = SecretMask
		}
		out[k] = v
	}
	return out
}

// checkPluginConfig checks what the control plane can check of a plugin target's config without the runtime: the
// plugin's name, and keys that are present and not the control plane's own.
func checkPluginConfig(t Type, cfg map[string]string) error {
	if !pluginType.MatchString(string(t)) || strings.HasSuffix(string(t), "-source") {
		return domain.Invalid("type", "type %q is not supported: use http, api-destination, bus, log or the name of a "+
			"sink plugin of the runtime (GET /api/v1/runtime/plugins)", t)
	}
	for k := range cfg {
		switch {
		case k == "":
			return domain.Invalid("config", "config has an empty key")
		case reserved(k):
			return domain.Invalid("config."+k, "config.%s is set by the control plane (topics, jetstream.*, errors.*, "+
				"transforms*, connector.class, tasks.max and eb.* are); use retryPolicy, deadLetterConfig and the input "+
				"transformer instead", k)
		}
	}
	return nil
}

// MaxPerRule is how many targets a rule may have.
const MaxPerRule = 5

// Errors returned by this package and its repository.
var (
	ErrNotFound      = &domain.Error{Kind: domain.KindNotFound, Code: "TargetNotFound"}
	ErrAlreadyExists = &domain.Error{Kind: domain.KindConflict, Code: "TargetAlreadyExists"}
	ErrLimitExceeded = &domain.Error{Kind: domain.KindLimitExceeded, Code: "LimitExceeded"}
)

// Format is what a target receives of an event.
type Format string

const (
	// FormatCloudEvents delivers the CloudEvent, and its transformer sees the CloudEvent's JSON form: the default of
	// targets made through /api/v1 and the RocketMQ EventBridge API.
	FormatCloudEvents Format = "cloudevents"
	// FormatAWS delivers the event as Amazon EventBridge does, its envelope (version, id, detail-type, source,
	// account, time, region, resources, detail) as the data, and its transformer sees that envelope ($.detail...):
	// the default of targets made through the AWS API. A bus target forwards the event itself and has no format of
	// its own.
	FormatAWS Format = "aws"
)

// Mode is how an HTTP target encodes the CloudEvent.
type Mode string

const (
	// Binary puts attributes in ce-* headers and data in the body.
	Binary Mode = "binary"
	// Structured sends the whole event as application/cloudevents+json.
	Structured Mode = "structured"
)

// HTTP target defaults and limits.
const (
	DefaultMethod  = http.MethodPost
	DefaultMode    = Binary
	DefaultTimeout = 5 * time.Second
	MaxTimeout     = 60 * time.Second
	MaxHeaders     = 50
)

// HTTPConfig is the configuration of an http target.
type HTTPConfig struct {
	URL    string
	Method string
	// Headers are added to every request. The values of secret headers (IsSecretHeader) are sealed in a stored
	// target (enc:...), answered as SecretMask, and handed to the worker sealed; SecretMask in a Spec keeps the
	// stored value.
	Headers map[string]string
	// SecretHeaders names headers whose values are secret besides DefaultSecretHeaders (canonical form).
	SecretHeaders []string
	Mode          Mode
	Timeout       time.Duration
}

// DefaultSecretHeaders are the headers whose values are always secret.
var DefaultSecretHeaders = []string{"Authorization", "Cookie", "Proxy-Authorization", "X-Api-Key"}

// MaxSecretHeaders bounds SecretHeaders.
const MaxSecretHeaders = 20

// IsSecretHeader reports whether the header named name (any case) has a secret value.
func (c HTTPConfig) IsSecretHeader(name string) bool {
	n := textproto.CanonicalMIMEHeaderKey(name)
	return slices.Contains(DefaultSecretHeaders, n) ||
		slices.ContainsFunc(c.SecretHeaders, func(s string) bool { return textproto.CanonicalMIMEHeaderKey(s) == n })
}

// PublicHeaders are the headers with every secret value replaced by SecretMask, for answers (nil stays nil).
func (c HTTPConfig) PublicHeaders() map[string]string {
	if c.Headers == nil {
		return nil
	}
	out := make(map[string]string, len(c.Headers))
	for k, v := range c.Headers {
		if c.IsSecretHeader(k) {
			v = SecretMask
		}
		out[k] = v
	}
	return out
}

var headerNameRe = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$")

// normalize fills defaults and validates. Fields are named as in the API (config.url, ...).
func (c HTTPConfig) normalize() (HTTPConfig, error) {
	u, err := url.Parse(c.URL)
	if c.URL == "" {
		return c, domain.Invalid("config.url", "config.url is required")
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, domain.Invalid("config.url", "config.url %q must be an absolute http or https URL", c.URL)
	}
	if c.Method == "" {
		c.Method = DefaultMethod
	}
	c.Method = strings.ToUpper(c.Method)
	switch c.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodGet:
	default:
		return c, domain.Invalid("config.method", "config.method must be one of POST, PUT, PATCH, DELETE, GET, not %q", c.Method)
	}
	if c.Mode == "" {
		c.Mode = DefaultMode
	}
	if c.Mode != Binary && c.Mode != Structured {
		return c, domain.Invalid("config.mode", "config.mode must be binary or structured, not %q", c.Mode)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Timeout < 100*time.Millisecond || c.Timeout > MaxTimeout {
		return c, domain.Invalid("config.timeout", "config.timeout must be between 100ms and %s", MaxTimeout)
	}
	if len(c.Headers) > MaxHeaders {
		return c, domain.Invalid("config.headers", "config.headers has %d entries; at most %d are allowed", len(c.Headers), MaxHeaders)
	}
	for k, v := range c.Headers {
		if !headerNameRe.MatchString(k) {
			return c, domain.Invalid("config.headers", "config.headers: %q is not a valid header name", k)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return c, domain.Invalid("config.headers", "config.headers: the value of %q contains a control character", k)
		}
	}
	if len(c.SecretHeaders) > MaxSecretHeaders {
		return c, domain.Invalid("config.secretHeaders", "config.secretHeaders names %d headers; at most %d are allowed",
			len(c.SecretHeaders), MaxSecretHeaders)
	}
	var secret []string
	for _, h := range c.SecretHeaders {
		if !headerNameRe.MatchString(h) {
			return c, domain.Invalid("config.secretHeaders", "config.secretHeaders: %q is not a valid header name", h)
		}
		if n := textproto.CanonicalMIMEHeaderKey(h); !slices.Contains(secret, n) && !slices.Contains(DefaultSecretHeaders, n) {
			secret = append(secret, n)
		}
	}
	slices.Sort(secret)
	c.SecretHeaders = secret
	return c, nil
}

// owner is the owner of the target's secret of field: "config.<key>" of a plugin target, "headers.<Name>" of an http
// target's secret header.
func (t *Target) owner(field string) domain.SecretOwner {
	return domain.SecretOwner{Account: t.accountID, Kind: "target", ID: t.id, Field: field}
}

func headerField(name string) string { return "headers." + textproto.CanonicalMIMEHeaderKey(name) }

// OpenedConfig returns a plugin target's config with its sealed values opened, and the keys that were sealed, for
// the runtime adapter, which hands them to the target's connector sealed for it. Errors name the key, never a value.
func (t *Target) OpenedConfig(open domain.Opener) (cfg map[string]string, secretKeys []string, err error) {
	cfg = t.Config()
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if !strings.HasPrefix(cfg[k], SealedPrefix) {
			continue
		}
		if open == nil {
			return nil, nil, fmt.Errorf("target %s: config key %s is sealed and this deployment cannot open it", t.id, k)
		}
		if cfg[k], err = open.Open(t.owner("config."+k), cfg[k]); err != nil {
			return nil, nil, fmt.Errorf("target %s: config key %s: %w", t.id, k, err)
		}
		secretKeys = append(secretKeys, k)
	}
	return cfg, secretKeys, nil
}

// OpenedSecretHeaders returns an http target's secret headers with their values opened, for the runtime adapter.
func (t *Target) OpenedSecretHeaders(open domain.Opener) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range t.http.Headers {
		if !t.http.IsSecretHeader(k) {
			continue
		}
		if strings.HasPrefix(v, SealedPrefix) {
			if open == nil {
				return nil, fmt.Errorf("target %s: header %s is sealed and this deployment cannot open it", t.id, k)
			}
			p, err := open.Open(t.owner(headerField(k)), v)
			if err != nil {
				return nil, fmt.Errorf("target %s: header %s: %w", t.id, k, err)
			}
			v = p
		}
		out[k] = v
	}
	return out, nil
}

// Reseal replaces every sealed value with what f makes of it (the start-up migration); changed tells whether one
// changed.
func (t *Target) Reseal(f domain.Resealer) (changed bool, err error) {
	apply := func(m map[string]string, field func(string) string) error {
		for k, v := range m {
			if !strings.HasPrefix(v, SealedPrefix) {
				continue
			}
			nv, err := f(t.owner(field(k)), v)
			if err != nil {
				return fmt.Errorf("target %s: %s: %w", t.id, field(k), err)
			}
			if nv != v {
				m[k], changed = nv, true
			}
		}
		return nil
	}
	t.config, t.http.Headers = maps.Clone(t.config), maps.Clone(t.http.Headers)
	if err := apply(t.config, func(k string) string { return "config." + k }); err != nil {
		return changed, err
	}
	return changed, apply(t.http.Headers, headerField)
}

// SealClearHeaders seals the values of secret headers the target holds in clear (stored before secret headers were
// sealed); changed tells whether there were any.
func (t *Target) SealClearHeaders(sealer domain.Sealer) (changed bool, err error) {
	if !t.hasClearSecretHeaders() {
		return false, nil
	}
	headers := maps.Clone(t.http.Headers)
	for k, v := range headers {
		if !t.http.IsSecretHeader(k) || v == "" || strings.HasPrefix(v, SealedPrefix) {
			continue
		}
		if headers[k], err = sealer.Seal(t.owner(headerField(k)), v); err != nil {
			return false, domain.ErrInternal.With("sealing config.headers.%s", k)
		}
	}
	t.http.Headers = headers
	return true, nil
}

// hasClearSecretHeaders reports whether an http target holds a secret header's value unsealed.
func (t *Target) hasClearSecretHeaders() bool {
	if t.typ != HTTP {
		return false
	}
	for k, v := range t.http.Headers {
		if t.http.IsSecretHeader(k) && v != "" && !strings.HasPrefix(v, SealedPrefix) {
			return true
		}
	}
	return false
}

// sealSecretHeaders returns c's headers with the values of secret headers sealed, and SecretMask replaced by the
// stored sealed value of the header.
func (t *Target) sealSecretHeaders(c HTTPConfig, sealer domain.Sealer) (map[string]string, error) {
	if c.Headers == nil {
		return nil, nil
	}
	out := make(map[string]string, len(c.Headers))
	for k, v := range c.Headers {
		field := "config.headers." + k
		switch {
		case !c.IsSecretHeader(k):
		case v == SecretMask:
			old, ok := "", false
			if t.typ == HTTP {
				old, ok = t.http.Headers[k]
			}
			if !ok || !strings.HasPrefix(old, SealedPrefix) {
				return nil, domain.Invalid(field, "%s is %s, the mask of a stored secret, but the target has none stored: give the value", field, SecretMask)
			}
			v = old
		case sealer == nil:
			return nil, domain.Invalid(field, "%s is secret and this deployment cannot seal secrets", field)
		default:
			sealed, err := sealer.Seal(t.owner(headerField(k)), v)
			if err != nil {
				return nil, domain.ErrInternal.With("sealing %s", field)
			}
			v = sealed
		}
		out[k] = v
	}
	return out, nil
}

// RetryPolicy bounds redelivery of an event that failed: by attempts and by the event's age.
type RetryPolicy struct {
	MaximumRetryAttempts     int
	MaximumEventAgeInSeconds int
}

// Retry policy defaults and limits, as Amazon EventBridge has them.
const (
	DefaultMaximumRetryAttempts     = 185
	DefaultMaximumEventAgeInSeconds = 86400
)

// DefaultRetryPolicy is the policy of a target that declares none.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaximumRetryAttempts: DefaultMaximumRetryAttempts, MaximumEventAgeInSeconds: DefaultMaximumEventAgeInSeconds}
}

func (p RetryPolicy) validate() error {
	if p.MaximumRetryAttempts < 0 || p.MaximumRetryAttempts > 185 {
		return domain.Invalid("retryPolicy.maximumRetryAttempts", "retryPolicy.maximumRetryAttempts must be between 0 and 185")
	}
	if p.MaximumEventAgeInSeconds < 60 || p.MaximumEventAgeInSeconds > 86400 {
		return domain.Invalid("retryPolicy.maximumEventAgeInSeconds", "retryPolicy.maximumEventAgeInSeconds must be between 60 and 86400")
	}
	return nil
}

// Target delivers a rule's events.
type Target struct {
	id          string
	accountID   string
	busID       string
	ruleID      string
	name        string
	typ         Type
	http        HTTPConfig
	transformer transform.Spec
	format      Format
	roleARN     string
	retryPolicy RetryPolicy
	createdAt   time.Time
	updatedAt   time.Time

	apiDestination string
	pathParams     []string
	bus            string
	deadLetterBus  string
	config         map[string]string
}

// Spec is what a caller declares about a target.
type Spec struct {
	Name string
	Type Type
	HTTP HTTPConfig
	// Format is what the target receives of an event; empty is FormatCloudEvents.
	Format Format
	// RoleARN is the IAM role Amazon EventBridge would assume to call the target. It is kept and answered, for
	// clients that declare one (Terraform's role_arn), and grants nothing here: the roles of the API keys and
	// access keys that change the target say who may do what.
	RoleARN string
	// Transformer is what the target makes of an event before delivering it: at most one of inputTransformer,
	// input, inputPath and transform for the data, and attributes to set, validated by compiling it. The zero
	// Spec delivers the event as it is.
	Transformer transform.Spec
	RetryPolicy RetryPolicy
	// APIDestination names the API destination of an api-destination target.
	APIDestination string
	// PathParameterValues fill the "*" path segments of the API destination's endpoint, one JSON path over the
	// event each ($.data.customerId), in order.
	PathParameterValues []string
	// Bus names the destination bus of a bus target (another bus of the same account).
	Bus string
	// DeadLetterBus, when set, names a bus of the same account that receives the events this target gives up,
	// with the reason, the attempts and the target; otherwise they go to the account's dead-letter stream.
	DeadLetterBus string
	// Config holds the keys of a plugin target's sink plugin, secret values in plaintext (sealed by Change).
	// SecretMask for a key keeps the stored value.
	Config map[string]string
	// SecretKeys names the keys of Config whose values are secret, as the runtime's plugin says.
	SecretKeys []string
}

// New validates and returns a new target of a rule with a fresh id.
func New(accountID, busID, ruleID string, spec Spec, sealer domain.Sealer, now time.Time) (*Target, error) {
	if err := domain.ValidateTargetName("name", spec.Name); err != nil {
		return nil, err
	}
	t := &Target{id: domain.NewID(), accountID: accountID, busID: busID, ruleID: ruleID, name: spec.Name, createdAt: now.UTC()}
	if err := t.Change(spec, sealer, now); err != nil {
		return nil, err
	}
	return t, nil
}

// Change replaces the type, the configuration, the transformer and the retry policy after validating them. The
// name stays. A transformer that does not compile is a validation error naming its field (inputTemplate, ...).
func (t *Target) Change(spec Spec, sealer domain.Sealer, now time.Time) error {
	var c HTTPConfig
	switch spec.Type {
	case HTTP:
		var err error
		if c, err = spec.HTTP.normalize(); err != nil {
			return err
		}
		if c.Headers, err = t.sealSecretHeaders(c, sealer); err != nil {
			return err
		}
	case APIDestination:
		if err := domain.ValidateName("config.apiDestination", spec.APIDestination); err != nil {
			return err
		}
		if _, err := transform.CompilePaths(spec.PathParameterValues); err != nil {
			return domain.Invalid("config.pathParameterValues", "config.pathParameterValues: %s", err.Error())
		}
	case Bus:
		if err := domain.ValidateBusName("config.bus", spec.Bus); err != nil {
			return err
		}
	case Log:
	case "":
		return domain.Invalid("type", "type is required (http, api-destination, bus, log or a sink plugin of the runtime)")
	default:
		if err := checkPluginConfig(spec.Type, spec.Config); err != nil {
			return err
		}
	}
	if !spec.Type.IsPlugin() && len(spec.Config) > 0 {
		return domain.Invalid("config", "config keys of a sink plugin are for plugin targets, not %s targets", spec.Type)
	}
	var cfg map[string]string
	if spec.Type.IsPlugin() {
		cfg = map[string]string{}
		for k, v := range spec.Config {
			switch {
			case v == SecretMask:
				old, ok := t.config[k]
				if !ok || t.typ != spec.Type {
					return domain.Invalid("config."+k, "config.%s is %s, the mask of a stored secret, but the target has none stored: give the value", k, SecretMask)
				}
				v = old
			case v != "" && slices.Contains(spec.SecretKeys, k):
				if sealer == nil {
					return domain.Invalid("config."+k, "config.%s is secret and this deployment cannot seal secrets", k)
				}
				sealed, err := sealer.Seal(t.owner("config."+k), v)
				if err != nil {
					return domain.ErrInternal.With("sealing config.%s", k)
				}
				v = sealed
			}
			cfg[k] = v
		}
	}
	if spec.DeadLetterBus != "" {
		if err := domain.ValidateBusName("deadLetterConfig.bus", spec.DeadLetterBus); err != nil {
			return err
		}
	}
	format := spec.Format
	switch {
	case format == "":
		format = FormatCloudEvents
	case format != FormatCloudEvents && format != FormatAWS:
		return domain.Invalid("format", "format must be %s or %s, not %q", FormatCloudEvents, FormatAWS, format)
	case format == FormatAWS && spec.Type == Bus:
		return domain.Invalid("format", "a bus target forwards the event itself: its format is %s", FormatCloudEvents)
	}
	if !spec.Transformer.IsZero() {
		if _, err := transform.CompileWith(spec.Transformer, transform.Options{Envelope: format == FormatAWS}); err != nil {
			return err
		}
	}
	if err := spec.RetryPolicy.validate(); err != nil {
		return err
	}
	if err := validateRoleARN(spec.RoleARN); err != nil {
		return err
	}
	t.typ, t.http, t.transformer, t.retryPolicy, t.updatedAt = spec.Type, c, spec.Transformer, spec.RetryPolicy, now.UTC()
	t.format, t.roleARN = format, spec.RoleARN
	t.apiDestination, t.bus, t.deadLetterBus, t.pathParams, t.config = "", "", spec.DeadLetterBus, nil, cfg
	switch spec.Type {
	case APIDestination:
		t.apiDestination, t.pathParams = spec.APIDestination, slices.Clone(spec.PathParameterValues)
	case Bus:
		t.bus = spec.Bus
	}
	return nil
}

// UnmarshalFromDatabase rebuilds a target from storage without validation; transformer is the zero Spec when
// the target has none.
func UnmarshalFromDatabase(id, accountID, busID, ruleID, name string, typ Type, httpConfig HTTPConfig, transformer transform.Spec,
	retry RetryPolicy, createdAt, updatedAt time.Time) *Target {
	return &Target{id: id, accountID: accountID, busID: busID, ruleID: ruleID, name: name, typ: typ,
		http: httpConfig, transformer: transformer, retryPolicy: retry, createdAt: createdAt, updatedAt: updatedAt}
}

func (t *Target) ID() string        { return t.id }
func (t *Target) AccountID() string { return t.accountID }
func (t *Target) BusID() string     { return t.busID }
func (t *Target) RuleID() string    { return t.ruleID }
func (t *Target) Name() string      { return t.name }
func (t *Target) Type() Type        { return t.typ }
func (t *Target) HTTP() HTTPConfig  { return t.http }

// Transformer is the target's input transformer; the zero Spec when it delivers events as they are.
func (t *Target) Transformer() transform.Spec { return t.transformer }

func (t *Target) RetryPolicy() RetryPolicy { return t.retryPolicy }

// APIDestination names the API destination of an api-destination target ("" for other types).
func (t *Target) APIDestination() string { return t.apiDestination }

// PathParameterValues are the JSON paths that fill the API destination's path parameters.
func (t *Target) PathParameterValues() []string { return slices.Clone(t.pathParams) }

// Bus names the destination bus of a bus target ("" for other types).
func (t *Target) Bus() string { return t.bus }

// DeadLetterBus names the bus that receives the events the target gives up ("": the account's dead-letter stream).
func (t *Target) DeadLetterBus() string { return t.deadLetterBus }

// Format is what the target receives of an event.
func (t *Target) Format() Format {
	if t.format == "" {
		return FormatCloudEvents
	}
	return t.format
}

// MaxRoleARNLength is the longest role ARN, as Amazon EventBridge's RoleArn.
const MaxRoleARNLength = 1600

// validateRoleARN checks that a role ARN, when given, is an ARN of at most MaxRoleARNLength bytes.
func validateRoleARN(v string) error {
	switch {
	case v == "":
		return nil
	case len(v) > MaxRoleARNLength:
		return domain.Invalid("roleArn", "roleArn is %d bytes long; at most %d are allowed", len(v), MaxRoleARNLength)
	case !strings.HasPrefix(v, "arn:") || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return domain.Invalid("roleArn", "roleArn must be an ARN (arn:aws:iam::123456789012:role/name) without spaces or control characters")
	}
	return nil
}

// RoleARN is the role ARN the target was declared with ("" for none); it grants nothing here.
func (t *Target) RoleARN() string { return t.roleARN }

// WithRoleARN sets the role ARN of a target read from storage.
func (t *Target) WithRoleARN(arn string) *Target {
	t.roleARN = arn
	return t
}

// WithFormat sets the format of a target read from storage ("" is FormatCloudEvents).
func (t *Target) WithFormat(f Format) *Target {
	t.format = f
	return t
}

// Config is the plugin config of a plugin target, secret values sealed (nil for built-in types).
func (t *Target) Config() map[string]string { return maps.Clone(t.config) }

// Refs are the references of a target to other resources of its account, and a plugin target's config, for
// UnmarshalFromDatabase.
type Refs struct {
	APIDestination, Bus, DeadLetterBus string
	PathParameterValues                []string
	Config                             map[string]string
}

// WithRefs sets the references of a target read from storage.
func (t *Target) WithRefs(r Refs) *Target {
	t.apiDestination, t.bus, t.deadLetterBus, t.pathParams = r.APIDestination, r.Bus, r.DeadLetterBus, r.PathParameterValues
	t.config = r.Config
	return t
}
func (t *Target) CreatedAt() time.Time { return t.createdAt }
func (t *Target) UpdatedAt() time.Time { return t.updatedAt }

// Repository stores targets. Names are unique per rule.
type Repository interface {
	// Create stores a new target; ErrAlreadyExists when the rule has a target of that name; ErrLimitExceeded
	// when the rule already has MaxPerRule targets (checked in the same transaction).
	Create(ctx context.Context, t *Target) error
	// Get returns ErrNotFound when the rule has no target of that name.
	Get(ctx context.Context, ruleID, name string) (*Target, error)
	// ListByRule returns a rule's targets ordered by name.
	ListByRule(ctx context.Context, ruleID string) ([]*Target, error)
	// ListByBus returns the targets of every rule of a bus.
	ListByBus(ctx context.Context, busID string) ([]*Target, error)
	// Update loads the target, lets fn change it and stores it in one transaction; ErrNotFound when it does not
	// exist; fn's error is returned as is and nothing is stored.
	Update(ctx context.Context, ruleID, name string, fn func(*Target) error) (*Target, error)
	// Delete removes a target; ErrNotFound when it does not exist.
	Delete(ctx context.Context, ruleID, name string) error
}
