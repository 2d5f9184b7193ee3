// Package source holds event sources: what feeds a bus from outside (webhooks, schedules, MQTT, other streams).
// A source is a name, a type that names a source plugin of the worker runtime (type http runs plugin
// http-source) and that plugin's flat config; the runtime adapter runs it as a source connector whose output is
// the bus. Sources of type http are also webhooks: the control plane receives their requests (see webhook.go).
package source

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

// Type names the kind of a source: the name of a source plugin of the worker without its "-source" suffix.
type Type string

// PluginSuffix ends the name of every source plugin.
const PluginSuffix = "-source"

// Plugin is the worker plugin that runs sources of type t (http → http-source).
func (t Type) Plugin() string { return string(t) + PluginSuffix }

// TypeOfPlugin returns the source type of a plugin name, and whether the name is one of a source plugin.
func TypeOfPlugin(plugin string) (Type, bool) {
	t, ok := strings.CutSuffix(plugin, PluginSuffix)
	return Type(t), ok && typeRe.MatchString(t)
}

// Well-known types. Any source plugin the worker lists is a type; these have behaviour in the control plane.
const (
	// HTTP is the webhook source: the control plane receives its requests and stores them as events.
	HTTP Type = "http"
	// EventBus reads a JetStream stream: on the installation's NATS only another bus of the account, named by
	// KeyBus (the control plane fills in that bus's stream and subject); on an external NATS (KeyNATSURL) the stream
	// and subject the config names.
	EventBus Type = "eventbus"
)

// Keys of an eventbus source's config.
const (
	// KeyBus names the bus of the same account whose events the source feeds to its own bus.
	KeyBus = "bus"
	// KeyNATSURL names an external NATS to read from, with KeyStream and KeySubject.
	KeyNATSURL = "nats.url"
	// KeyStream and KeySubject name the stream (and subject) to read: the control plane's, set from KeyBus, unless
	// the source reads an external NATS.
	KeyStream  = "source.stream"
	KeySubject = "source.subject"
)

// State says whether a source feeds its bus.
type State string

// Source states. A disabled source's connector is stopped (it keeps its offsets); a disabled webhook answers 404.
const (
	Enabled  State = "ENABLED"
	Disabled State = "DISABLED"
)

// Errors returned by this package and its repository.
var (
	ErrNotFound      = &domain.Error{Kind: domain.KindNotFound, Code: "SourceNotFound"}
	ErrAlreadyExists = &domain.Error{Kind: domain.KindConflict, Code: "SourceAlreadyExists"}
	// ErrInvalidConfig is a config the source's plugin refuses; the message names every key and its problem.
	ErrInvalidConfig = &domain.Error{Kind: domain.KindInvalid, Code: "InvalidSourceConfig"}
	// ErrUnknownType is a type that no source plugin of the runtime provides.
	ErrUnknownType = &domain.Error{Kind: domain.KindInvalid, Code: "UnknownSourceType"}
	// ErrQuotaExceeded: the bus has as many sources as allowed.
	ErrQuotaExceeded = &domain.Error{Kind: domain.KindLimitExceeded, Code: "SourceQuotaExceeded"}
)

// Limits of a source's declaration.
const (
	MaxConfigKeys     = 100
	MaxConfigValue    = 16 << 10
	DefaultMaxPerBus  = 100
	secretPlaceholder = domain.SecretMask
)

// SecretPlaceholder is what answers show for the value of a secret key; sent back in a PUT or PATCH, it keeps the
// stored value.
const SecretPlaceholder = secretPlaceholder

var (
	typeRe      = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,47}$`)
	configKeyRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
)

// reservedKeys are set by the control plane on every source connector; a config may not set them.
var reservedKeys = []string{"connector.class", "tasks.max", "output.subject", "output.stream", "transforms", "errors.tolerance",
	"errors.deadletterqueue.topic.name"}

// reservedHTTPKeys are also set by the control plane on webhook sources (where the http-source reads its intake).
var reservedHTTPKeys = []string{"source.stream", "source.subject", "source.start"}

// Spec is what a caller declares about a source.
type Spec struct {
	Name        string
	Type        Type
	Description string
	// Config is the plugin's keys and their values, as a connector config has them (strings).
	Config map[string]string
}

// Source feeds a bus. Its config holds the values of secret keys sealed (enc:v1:...); secretKeys names them.
type Source struct {
	id          string
	accountID   string
	busID       string
	name        string
	typ         Type
	description string
	config      map[string]string
	secretKeys  []string
	state       State
	token       string
	createdAt   time.Time
	updatedAt   time.Time
	// received counts the webhook requests the control plane stored on the bus directly (see Webhook.Direct).
	received uint64
}

// ValidateType checks the form of a type: 1 to 48 characters of a-z, 0-9 and '-'.
func ValidateType(t Type) error {
	if t == "" {
		return domain.Invalid("type", "type is required: the name of a source plugin of the runtime without -source (http, schedule, mqtt, eventbus, ...)")
	}
	if !typeRe.MatchString(string(t)) {
		return ErrUnknownType.With("type %q is not a source type: 1 to 48 characters of a-z, 0-9 and '-'", t).WithField("type")
	}
	return nil
}

// validateConfig checks the form of a config: key names, sizes, and no key the control plane sets itself.
func validateConfig(t Type, cfg map[string]string) error {
	if len(cfg) > MaxConfigKeys {
		return domain.Invalid("config", "config has %d keys; at most %d are allowed", len(cfg), MaxConfigKeys)
	}
	if t == EventBus {
		if err := validateEventBus(cfg); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		field := "config." + k
		if !configKeyRe.MatchString(k) {
			return domain.Invalid(field, "config key %q is not a key name (A-Z, a-z, 0-9, '_', '.' and '-')", k)
		}
		if slices.Contains(reservedKeys, k) || strings.HasPrefix(k, "transforms.") || strings.HasPrefix(k, "eb.") ||
			(t == HTTP && slices.Contains(reservedHTTPKeys, k)) {
			return domain.Invalid(field, "config key %q is set by the control plane and may not be given", k)
		}
		if k == KeyBus && t != EventBus {
			return domain.Invalid(field, "config key %q is for eventbus sources (another bus of the account to read)", k)
		}
		if strings.HasPrefix(cfg[k], SealedPrefix) {
			return domain.Invalid(field, "%s is a sealed value (%s...), which is not taken as input: give the plaintext, or %s to keep the stored secret",
				field, SealedPrefix, domain.SecretMask)
		}
		if len(cfg[k]) > MaxConfigValue {
			return domain.Invalid(field, "the value of config key %q is %d bytes; at most %d are allowed", k, len(cfg[k]), MaxConfigValue)
		}
	}
	return nil
}

// validateEventBus keeps an eventbus source to what its account may read: on the installation's NATS another bus
// of the account by name (never a stream or subject, which could name another account's bus or the runtime's own
// buckets), or any stream of an external NATS (dialled through the worker's egress guard).
func validateEventBus(cfg map[string]string) error {
	external := cfg[KeyNATSURL] != ""
	raw := cfg[KeyStream] != "" || cfg[KeySubject] != ""
	switch {
	case !external && raw:
		field := KeyStream
		if cfg[KeyStream] == "" {
			field = KeySubject
		}
		return domain.Invalid("config."+field, "config.%s names a stream to read on an external NATS (with config.%s); "+
			"on this installation's NATS an eventbus source reads another bus of the account: give config.%s", field, KeyNATSURL, KeyBus)
	case external && cfg[KeyBus] != "":
		return domain.Invalid("config."+KeyBus, "config.%s names a bus of the account; with config.%s the source reads an "+
			"external NATS: give config.%s", KeyBus, KeyNATSURL, KeyStream)
	case !external && cfg[KeyBus] == "":
		return domain.Invalid("config."+KeyBus, "config.%s is required: the bus of the account to read (or config.%s and "+
			"config.%s for a stream of an external NATS)", KeyBus, KeyNATSURL, KeyStream)
	}
	return nil
}

// New validates the form of a new source of a bus and returns it, enabled, with a fresh id (and a fresh webhook
// token for type http). Its config is checked by the plugin later (Service.Create).
func New(accountID, busID string, spec Spec, now time.Time) (*Source, error) {
	if err := domain.ValidateName("name", spec.Name); err != nil {
		return nil, err
	}
	s := &Source{id: domain.NewID(), accountID: accountID, busID: busID, name: spec.Name, typ: spec.Type,
		state: Enabled, createdAt: now.UTC()}
	if err := s.Change(spec, now); err != nil {
		return nil, err
	}
	if s.typ == HTTP {
		s.token = NewToken()
	}
	return s, nil
}

// Change replaces the description and the config after validating their form; the type cannot change
// (ErrValidation naming type). Values of secret keys must be sealed by the caller afterwards (Seal).
func (s *Source) Change(spec Spec, now time.Time) error {
	if err := ValidateType(spec.Type); err != nil {
		return err
	}
	if s.typ != "" && spec.Type != s.typ {
		return domain.Invalid("type", "type %q differs from the source's %q; the type of a source cannot change (delete it and create another)", spec.Type, s.typ)
	}
	if err := domain.ValidateDescription(spec.Description); err != nil {
		return err
	}
	if err := validateConfig(spec.Type, spec.Config); err != nil {
		return err
	}
	cfg := maps.Clone(spec.Config)
	if cfg == nil {
		cfg = map[string]string{}
	}
	// A secret sent back as the placeholder keeps its stored value.
	for _, k := range s.secretKeys {
		if cfg[k] == secretPlaceholder {
			cfg[k] = s.config[k]
		}
	}
	s.typ, s.description, s.config, s.updatedAt = spec.Type, spec.Description, cfg, now.UTC()
	return nil
}

// Sealer seals a secret value for its owner (the source's account and id, and the config key) before it is kept.
type Sealer = domain.Sealer

// Opener opens what a Sealer sealed for the same owner.
type Opener = domain.Opener

// SealedPrefix starts every sealed value.
const SealedPrefix = domain.SealedPrefix

// owner is the owner of the source's secret config value of key.
func (s *Source) owner(key string) domain.SecretOwner {
	return domain.SecretOwner{Account: s.accountID, Kind: "source", ID: s.id, Field: key}
}

// OpenedConfig returns the source's config with its secret values opened, for the runtime adapter, which hands
// them to the source's connector sealed for it. Errors name the key, never a value.
func (s *Source) OpenedConfig(open Opener) (map[string]string, error) {
	out := s.Config()
	for _, k := range s.secretKeys {
		v := out[k]
		if !strings.HasPrefix(v, SealedPrefix) {
			continue
		}
		if open == nil {
			return nil, fmt.Errorf("source %s: config key %s is sealed and this deployment cannot open it", s.id, k)
		}
		p, err := open.Open(s.owner(k), v)
		if err != nil {
			return nil, fmt.Errorf("source %s: config key %s: %w", s.id, k, err)
		}
		out[k] = p
	}
	return out, nil
}

// Reseal replaces every sealed value with what f makes of it (the start-up migration); changed tells whether one
// changed.
func (s *Source) Reseal(f domain.Resealer) (changed bool, err error) {
	for _, k := range s.secretKeys {
		v := s.config[k]
		if !strings.HasPrefix(v, SealedPrefix) {
			continue
		}
		nv, err := f(s.owner(k), v)
		if err != nil {
			return changed, fmt.Errorf("source %s: config key %s: %w", s.id, k, err)
		}
		if nv != v {
			s.config[k], changed = nv, true
		}
	}
	return changed, nil
}

// Seal records which keys are secret and seals their values that are not sealed yet.
func (s *Source) Seal(secretKeys []string, sealer Sealer) error {
	keys := slices.Clone(secretKeys)
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := s.config[k]
		if !ok || v == "" || strings.HasPrefix(v, SealedPrefix) {
			continue
		}
		if sealer == nil {
			return domain.Invalid("config."+k, "config key %q is secret and this deployment cannot seal secrets", k)
		}
		sealed, err := sealer.Seal(s.owner(k), v)
		if err != nil {
			return domain.ErrInternal.With("sealing config key %q", k)
		}
		s.config[k] = sealed
	}
	s.secretKeys = keys
	return nil
}

// Enable makes the source feed its bus again.
func (s *Source) Enable(now time.Time) { s.state, s.updatedAt = Enabled, now.UTC() }

// Disable stops the source: its connector stops (keeping its offsets) and a webhook answers 404.
func (s *Source) Disable(now time.Time) { s.state, s.updatedAt = Disabled, now.UTC() }

// RotateToken gives a webhook source a new token; the former one answers 404 from then on. Errors: validation
// for a source of another type.
func (s *Source) RotateToken(now time.Time) error {
	if s.typ != HTTP {
		return domain.Invalid("type", "only sources of type http have a webhook token; %q is of type %q", s.name, s.typ)
	}
	s.token, s.updatedAt = NewToken(), now.UTC()
	return nil
}

// NewToken returns a new webhook token: 256 random bits, URL-safe base64 without padding (43 characters).
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// UnmarshalFromDatabase rebuilds a source from storage without validation.
func UnmarshalFromDatabase(id, accountID, busID, name string, typ Type, description string, config map[string]string,
	secretKeys []string, state State, token string, createdAt, updatedAt time.Time, received uint64) *Source {
	if config == nil {
		config = map[string]string{}
	}
	return &Source{id: id, accountID: accountID, busID: busID, name: name, typ: typ, description: description,
		config: config, secretKeys: secretKeys, state: state, token: token, createdAt: createdAt, updatedAt: updatedAt,
		received: received}
}

func (s *Source) ID() string          { return s.id }
func (s *Source) AccountID() string   { return s.accountID }
func (s *Source) BusID() string       { return s.busID }
func (s *Source) Name() string        { return s.name }
func (s *Source) Type() Type          { return s.typ }
func (s *Source) Description() string { return s.description }
func (s *Source) State() State        { return s.state }
func (s *Source) Enabled() bool       { return s.state == Enabled }

// Token is the webhook token of a source of type http ("" for other types).
func (s *Source) Token() string { return s.token }

// Config is the stored config: values of secret keys sealed. Connector configs carry it as it is.
func (s *Source) Config() map[string]string { return maps.Clone(s.config) }

// Redacted is the config as answers show it: the value of every secret key replaced by SecretPlaceholder.
func (s *Source) Redacted() map[string]string {
	out := maps.Clone(s.config)
	for _, k := range s.secretKeys {
		if _, ok := out[k]; ok {
			out[k] = secretPlaceholder
		}
	}
	return out
}

// SecretKeys names the keys whose values are sealed, sorted.
func (s *Source) SecretKeys() []string { return slices.Clone(s.secretKeys) }

func (s *Source) CreatedAt() time.Time { return s.createdAt }

// Received is how many webhook requests the control plane stored on the bus directly, as stored by every replica
// (each adds what it stored about once a second); what its connector moved from the intake its tasks count.
func (s *Source) Received() uint64     { return s.received }
func (s *Source) UpdatedAt() time.Time { return s.updatedAt }

// Repository stores sources. Names are unique per bus; tokens are unique.
type Repository interface {
	// Create stores a new source; ErrAlreadyExists when the bus has a source of that name; ErrQuotaExceeded when
	// the bus has max sources already (checked in the same transaction).
	Create(ctx context.Context, s *Source, max int) error
	// Get returns ErrNotFound when the bus has no source of that name.
	Get(ctx context.Context, busID, name string) (*Source, error)
	// GetByToken returns ErrNotFound when no source has that webhook token.
	GetByToken(ctx context.Context, token string) (*Source, error)
	// List returns one page of a bus's sources ordered by name (page.Prefix filters names), and the next
	// page's token ("" at the end).
	List(ctx context.Context, busID string, page domain.Page) ([]*Source, string, error)
	// ListByBus returns every source of a bus, ordered by name (for the runtime adapter).
	ListByBus(ctx context.Context, busID string) ([]*Source, error)
	// NamesByBus returns the names of a bus's sources, sorted.
	NamesByBus(ctx context.Context, busID string) ([]string, error)
	// Update loads the source with its row locked, lets fn change it and stores it in one transaction;
	// ErrNotFound when it does not exist; fn's error is returned as is and nothing is stored.
	Update(ctx context.Context, busID, name string, fn func(*Source) error) (*Source, error)
	// Delete removes a source; ErrNotFound when it does not exist.
	Delete(ctx context.Context, busID, name string) error
	// AddReceived adds to the received count of each source by id (in one transaction); a source deleted
	// meanwhile is skipped.
	AddReceived(ctx context.Context, counts map[string]uint64) error
}
