// Package connection holds connections: how an account authorizes the calls that its API destinations make
// (BASIC, API_KEY or OAUTH_CLIENT_CREDENTIALS), plus parameters added to every call. Secrets are write-only: a
// connection holds them sealed (encrypted by the Sealer port) from the moment it is built, and never gives back
// their plaintext.
package connection

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

// AuthorizationType is how calls through a connection are authorized.
type AuthorizationType string

// Authorization types, as Amazon EventBridge names them.
const (
	Basic                  AuthorizationType = "BASIC"
	APIKey                 AuthorizationType = "API_KEY"
	OAuthClientCredentials AuthorizationType = "OAUTH_CLIENT_CREDENTIALS"
)

// Limits of a connection's fields.
const (
	// MaxParameters is the largest number of entries of one parameter list (headers, query string or body).
	MaxParameters = 50
	// MaxScopes is the largest number of OAuth scopes.
	MaxScopes = 50
	// MaxValueLength is the longest key, value, user name, client id or secret, in bytes.
	MaxValueLength = 512
	// MaxEndpointLength is the longest authorization endpoint, in bytes.
	MaxEndpointLength = 2048
	// DefaultMaxPerAccount is the default quota of connections per account.
	DefaultMaxPerAccount = 100
)

// Errors returned by this package and its repository.
var (
	ErrNotFound      = &domain.Error{Kind: domain.KindNotFound, Code: "ConnectionNotFound"}
	ErrAlreadyExists = &domain.Error{Kind: domain.KindConflict, Code: "ConnectionAlreadyExists"}
	// ErrInUse refuses deleting a connection that API destinations use.
	ErrInUse = &domain.Error{Kind: domain.KindConflict, Code: "ConnectionInUse"}
	// ErrQuotaExceeded refuses a connection over the account's quota.
	ErrQuotaExceeded = &domain.Error{Kind: domain.KindLimitExceeded, Code: "ConnectionQuotaExceeded"}
)

// Sealer seals a secret for its owner (the connection's account and id, and the field) before it is kept.
type Sealer = domain.Sealer

// Fields of a connection's secrets as their owner names them (domain.SecretOwner.Field); a parameter's is
// "<list>:<key>" with list one of ParamLists.
const (
	FieldBasicPassword     = "basic.password"
	FieldAPIKeyValue       = "apiKey.value"
	FieldOAuthClientSecret = "oauth.clientSecret"
)

// owner is the owner of the connection's secret in field.
func (c *Connection) owner(field string) domain.SecretOwner {
	return domain.SecretOwner{Account: c.accountID, Kind: "connection", ID: c.id, Field: field}
}

// eachSecret calls fn with the owner field and a pointer to every secret value of spec that is set: the
// authorization's and the secret parameters' (invocation and OAuth).
func eachSecret(spec *Spec, fn func(field string, v *string) error) error {
	var err error
	do := func(field string, v *string) {
		if err == nil && *v != "" {
			err = fn(field, v)
		}
	}
	params := func(prefix string, p *HTTPParameters) {
		for list, ps := range map[string][]Parameter{"header": p.HeaderParameters, "query": p.QueryStringParameters, "body": p.BodyParameters} {
			for i := range ps {
				if ps[i].IsValueSecret {
					do(prefix+"."+list+":"+ps[i].Key, &ps[i].Value)
				}
			}
		}
	}
	if spec.Basic != nil {
		do(FieldBasicPassword, &spec.Basic.Password)
	}
	if spec.APIKey != nil {
		do(FieldAPIKeyValue, &spec.APIKey.APIKeyValue)
	}
	if spec.OAuth != nil {
		do(FieldOAuthClientSecret, &spec.OAuth.ClientSecret)
		params("oauth", &spec.OAuth.HTTPParameters)
	}
	params("invocation", &spec.InvocationHTTPParameters)
	return err
}

// clone returns a deep copy of spec (its parameters and pointers are not shared).
func (spec Spec) clone() Spec {
	out := spec
	cp := func(l []Parameter) []Parameter { return append([]Parameter(nil), l...) }
	cpp := func(p HTTPParameters) HTTPParameters {
		return HTTPParameters{HeaderParameters: cp(p.HeaderParameters), QueryStringParameters: cp(p.QueryStringParameters),
			BodyParameters: cp(p.BodyParameters)}
	}
	if spec.Basic != nil {
		b := *spec.Basic
		out.Basic = &b
	}
	if spec.APIKey != nil {
		k := *spec.APIKey
		out.APIKey = &k
	}
	if spec.OAuth != nil {
		o := *spec.OAuth
		o.Scopes = append([]string(nil), o.Scopes...)
		o.HTTPParameters = cpp(o.HTTPParameters)
		out.OAuth = &o
	}
	out.InvocationHTTPParameters = cpp(spec.InvocationHTTPParameters)
	return out
}

// Opened returns the connection's declaration with its secrets opened, for the runtime adapter, which hands them to
// a connector sealed for it. Errors name the field, never a value.
func (c *Connection) Opened(open domain.Opener) (Spec, error) {
	out := c.spec.clone()
	err := eachSecret(&out, func(field string, v *string) error {
		if open == nil {
			return fmt.Errorf("connection %s: secret %s is sealed and this deployment cannot open it", c.id, field)
		}
		p, err := open.Open(c.owner(field), *v)
		if err != nil {
			return fmt.Errorf("connection %s: secret %s: %w", c.id, field, err)
		}
		*v = p
		return nil
	})
	return out, err
}

// Reseal replaces every sealed value with what f makes of it (the start-up migration); changed tells whether one
// changed.
func (c *Connection) Reseal(f domain.Resealer) (changed bool, err error) {
	next := c.spec.clone()
	err = eachSecret(&next, func(field string, v *string) error {
		nv, err := f(c.owner(field), *v)
		if err != nil {
			return fmt.Errorf("connection %s: secret %s: %w", c.id, field, err)
		}
		if nv != *v {
			*v, changed = nv, true
		}
		return nil
	})
	if err == nil && changed {
		c.spec = next
	}
	return changed, err
}

// Parameter is a key and a value added to a request. A secret value is sealed in a Connection; in a Spec an
// empty secret value means "keep the sealed value of the parameter with the same key".
type Parameter struct {
	Key           string
	Value         string
	IsValueSecret bool
}

// HTTPParameters are added to a request: headers, query string parameters and body parameters.
type HTTPParameters struct {
	HeaderParameters      []Parameter
	QueryStringParameters []Parameter
	BodyParameters        []Parameter
}

// IsZero reports whether p has no parameter at all.
func (p HTTPParameters) IsZero() bool {
	return len(p.HeaderParameters) == 0 && len(p.QueryStringParameters) == 0 && len(p.BodyParameters) == 0
}

// BasicAuth is a user name and a password (sealed in a Connection).
type BasicAuth struct {
	Username string
	Password string
}

// APIKeyAuth is a header and its value (sealed in a Connection).
type APIKeyAuth struct {
	// APIKeyName is the name of the header that carries the key.
	APIKeyName  string
	APIKeyValue string
}

// OAuthParameters describe the OAuth 2.0 client-credentials grant that gets the token of the calls.
type OAuthParameters struct {
	// AuthorizationEndpoint is the token endpoint: an absolute http or https URL.
	AuthorizationEndpoint string
	// HTTPMethod of the token request: GET, POST or PUT.
	HTTPMethod string
	ClientID   string
	// ClientSecret is sealed in a Connection.
	ClientSecret string
	Scopes       []string
	// HTTPParameters are added to the token request.
	HTTPParameters HTTPParameters
}

// Spec is what a caller declares about a connection. Exactly the parameters of AuthorizationType are set.
// Secrets are plaintext here; empty secrets keep the connection's sealed ones on Change.
type Spec struct {
	Name                     string
	Description              string
	AuthorizationType        AuthorizationType
	Basic                    *BasicAuth
	APIKey                   *APIKeyAuth
	OAuth                    *OAuthParameters
	InvocationHTTPParameters HTTPParameters
}

// State tells whether a connection can authorize calls, in Amazon EventBridge's words.
type State string

// States of a connection. A connection is AUTHORIZED from its creation: it holds its credentials (an OAuth token
// is fetched when a call needs one). Deauthorize drops its secrets and makes it DEAUTHORIZED: the calls of the
// targets that use it are then refused, each event dead-lettered, until a change gives the secrets again.
const (
	Authorized   State = "AUTHORIZED"
	Deauthorized State = "DEAUTHORIZED"
)

// Connection is an account's way to authorize calls to HTTP endpoints. Every secret it holds is sealed.
type Connection struct {
	id        string
	accountID string
	spec      Spec
	createdAt time.Time
	updatedAt time.Time
	// authorizedAt is when it last became AUTHORIZED; deauthorizedAt, when it became DEAUTHORIZED (zero while
	// it is AUTHORIZED).
	authorizedAt   time.Time
	deauthorizedAt time.Time
}

// New validates spec, seals its secrets with sealer and returns a new connection with a fresh id.
// Errors: validation errors naming the field (never quoting a secret), the sealer's error.
func New(accountID string, spec Spec, sealer Sealer, now time.Time) (*Connection, error) {
	if err := domain.ValidateAccountID(accountID); err != nil {
		return nil, err
	}
	if err := domain.ValidateName("name", spec.Name); err != nil {
		return nil, err
	}
	c := &Connection{id: domain.NewID(), accountID: accountID, spec: Spec{Name: spec.Name}, createdAt: now.UTC(), authorizedAt: now.UTC()}
	if err := c.Change(spec, sealer, now); err != nil {
		return nil, err
	}
	return c, nil
}

// Change replaces the description, the authorization and the invocation parameters after validating them; the
// name stays. A secret left empty keeps the sealed value the connection has for it (same authorization type; for
// a parameter, the secret parameter with the same key in the same list); without one it is a validation error.
// A DEAUTHORIZED connection has no secret to keep: a change that gives none keeps it DEAUTHORIZED; one that gives
// a secret must give them all, and makes it AUTHORIZED again.
func (c *Connection) Change(spec Spec, sealer Sealer, now time.Time) error {
	stayDeauthorized := c.State() == Deauthorized && !givesSecret(spec)
	if err := domain.ValidateDescription(spec.Description); err != nil {
		return err
	}
	next := Spec{Name: c.spec.Name, Description: spec.Description, AuthorizationType: spec.AuthorizationType}
	old := c.spec
	const ap = "authParameters."
	present := map[AuthorizationType]bool{Basic: spec.Basic != nil, APIKey: spec.APIKey != nil, OAuthClientCredentials: spec.OAuth != nil}
	fields := map[AuthorizationType]string{
		Basic: ap + "basicAuthParameters", APIKey: ap + "apiKeyAuthParameters", OAuthClientCredentials: ap + "oauthParameters",
	}
	switch spec.AuthorizationType {
	case Basic, APIKey, OAuthClientCredentials:
	case "":
		return domain.Invalid("authorizationType", "authorizationType is required (BASIC, API_KEY or OAUTH_CLIENT_CREDENTIALS)")
	default:
		return domain.Invalid("authorizationType", "authorizationType must be BASIC, API_KEY or OAUTH_CLIENT_CREDENTIALS, not %q",
			truncated(string(spec.AuthorizationType)))
	}
	if t := spec.AuthorizationType; !present[t] {
		return domain.Invalid(fields[t], "%s is required when authorizationType is %s", fields[t], t)
	}
	for _, t := range []AuthorizationType{Basic, APIKey, OAuthClientCredentials} {
		if t != spec.AuthorizationType && present[t] {
			return domain.Invalid(fields[t], "%s must be absent when authorizationType is %s", fields[t], spec.AuthorizationType)
		}
	}
	s := secrets{sealer: sealer, owner: c.owner, optional: stayDeauthorized}
	switch spec.AuthorizationType {
	case Basic:
		f := fields[Basic] + "."
		b := *spec.Basic
		if err := validateText(f+"username", b.Username, true); err != nil {
			return err
		}
		var kept string
		if old.AuthorizationType == Basic && old.Basic != nil {
			kept = old.Basic.Password
		}
		if b.Password, s.err = s.seal(f+"password", FieldBasicPassword, b.Password, kept); s.err != nil {
			return s.err
		}
		next.Basic = &b
	case APIKey:
		f := fields[APIKey] + "."
		k := *spec.APIKey
		if k.APIKeyName == "" {
			return domain.Invalid(f+"apiKeyName", "%sapiKeyName is required", f)
		}
		if !headerNameRe.MatchString(k.APIKeyName) {
			return domain.Invalid(f+"apiKeyName", "%sapiKeyName must be a valid HTTP header name", f)
		}
		var kept string
		if old.AuthorizationType == APIKey && old.APIKey != nil {
			kept = old.APIKey.APIKeyValue
		}
		if k.APIKeyValue, s.err = s.seal(f+"apiKeyValue", FieldAPIKeyValue, k.APIKeyValue, kept); s.err != nil {
			return s.err
		}
		next.APIKey = &k
	case OAuthClientCredentials:
		o, err := s.oauth(fields[OAuthClientCredentials]+".", *spec.OAuth, old)
		if err != nil {
			return err
		}
		next.OAuth = &o
	}
	inv, err := s.params(ap+"invocationHttpParameters.", "invocation", spec.InvocationHTTPParameters, old.InvocationHTTPParameters)
	if err != nil {
		return err
	}
	next.InvocationHTTPParameters = inv
	c.spec, c.updatedAt = next, now.UTC()
	if c.State() == Deauthorized && !stayDeauthorized {
		c.deauthorizedAt, c.authorizedAt = time.Time{}, now.UTC()
	}
	return nil
}

// givesSecret reports whether spec holds a secret value (a password, a key, a client secret or a secret
// parameter's value).
func givesSecret(spec Spec) bool {
	spec = spec.clone()
	found := errors.New("found")
	return eachSecret(&spec, func(string, *string) error { return found }) != nil
}

// Deauthorize drops every secret of the connection (they are gone, not kept aside) and makes it DEAUTHORIZED; the
// rest of its declaration stays, for a change to give the secrets again. A DEAUTHORIZED connection stays as it is.
func (c *Connection) Deauthorize(now time.Time) {
	if c.State() == Deauthorized {
		return
	}
	_ = eachSecret(&c.spec, func(_ string, v *string) error { *v = ""; return nil })
	c.deauthorizedAt, c.updatedAt = now.UTC(), now.UTC()
}

// State is AUTHORIZED or DEAUTHORIZED.
func (c *Connection) State() State {
	if c.deauthorizedAt.IsZero() {
		return Authorized
	}
	return Deauthorized
}

// AuthorizedAt is when the connection last became AUTHORIZED (its creation, or the change that authorized it again).
func (c *Connection) AuthorizedAt() time.Time { return c.authorizedAt }

// DeauthorizedAt is when the connection became DEAUTHORIZED; zero while it is AUTHORIZED.
func (c *Connection) DeauthorizedAt() time.Time { return c.deauthorizedAt }

var (
	headerNameRe = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$")
	scopeRe      = regexp.MustCompile(`^[\x21\x23-\x5B\x5D-\x7E]{1,256}$`) // RFC 6749 scope-token
)

// secrets seals the secrets of one change, for their owner.
type secrets struct {
	sealer Sealer
	owner  func(field string) domain.SecretOwner
	// optional lets every secret be missing (a change of a DEAUTHORIZED connection that gives none).
	optional bool
	err      error
}

// seal returns the sealed form of plaintext, or kept when plaintext is empty and something is kept. Its errors
// never contain the plaintext.
func (s *secrets) seal(field, ownerField, plaintext, kept string) (string, error) {
	if plaintext == "" {
		if kept != "" || s.optional {
			return kept, nil
		}
		return "", domain.Invalid(field, "%s is required", field)
	}
	if err := validateText(field, plaintext, true); err != nil {
		return "", err
	}
	if strings.HasPrefix(plaintext, "enc:") {
		return "", domain.Invalid(field, "%s is a sealed value (enc:...), which is not taken as input: give the plaintext, or leave it empty to keep the stored one", field)
	}
	if s.sealer == nil {
		return "", domain.ErrInternal.With("no sealer to encrypt %s", field)
	}
	sealed, err := s.sealer.Seal(s.owner(ownerField), plaintext)
	if err != nil {
		return "", domain.ErrInternal.With("encrypting %s failed", field)
	}
	return sealed, nil
}

func (s *secrets) oauth(f string, o OAuthParameters, old Spec) (OAuthParameters, error) {
	var oldOAuth OAuthParameters
	if old.AuthorizationType == OAuthClientCredentials && old.OAuth != nil {
		oldOAuth = *old.OAuth
	}
	if o.AuthorizationEndpoint == "" {
		return o, domain.Invalid(f+"authorizationEndpoint", "%sauthorizationEndpoint is required", f)
	}
	u, err := url.Parse(o.AuthorizationEndpoint)
	if len(o.AuthorizationEndpoint) > MaxEndpointLength || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return o, domain.Invalid(f+"authorizationEndpoint", "%sauthorizationEndpoint must be an absolute http or https URL of at most %d bytes",
			f, MaxEndpointLength)
	}
	o.HTTPMethod = strings.ToUpper(o.HTTPMethod)
	switch o.HTTPMethod {
	case http.MethodGet, http.MethodPost, http.MethodPut:
	case "":
		return o, domain.Invalid(f+"httpMethod", "%shttpMethod is required (GET, POST or PUT)", f)
	default:
		return o, domain.Invalid(f+"httpMethod", "%shttpMethod must be GET, POST or PUT, not %q", f, truncated(o.HTTPMethod))
	}
	cp := f + "clientParameters."
	if err := validateText(cp+"clientId", o.ClientID, true); err != nil {
		return o, err
	}
	if o.ClientSecret, err = s.seal(cp+"clientSecret", FieldOAuthClientSecret, o.ClientSecret, oldOAuth.ClientSecret); err != nil {
		return o, err
	}
	if len(o.Scopes) > MaxScopes {
		return o, domain.Invalid(f+"scopes", "%sscopes has %d entries; at most %d are allowed", f, len(o.Scopes), MaxScopes)
	}
	for _, sc := range o.Scopes {
		if !scopeRe.MatchString(sc) {
			return o, domain.Invalid(f+"scopes", "%sscopes: each scope must be 1 to 256 printable characters without spaces, quotes or backslashes", f)
		}
	}
	o.Scopes = append([]string(nil), o.Scopes...)
	if o.HTTPParameters, err = s.params(f+"oauthHttpParameters.", "oauth", o.HTTPParameters, oldOAuth.HTTPParameters); err != nil {
		return o, err
	}
	return o, nil
}

// params validates and seals a set of parameters; old holds the sealed values that empty secrets keep.
func (s *secrets) params(f, ownerPrefix string, p, old HTTPParameters) (HTTPParameters, error) {
	var out HTTPParameters
	var err error
	if out.HeaderParameters, err = s.list(f+"headerParameters", ownerPrefix+".header", p.HeaderParameters, old.HeaderParameters, true); err != nil {
		return out, err
	}
	if out.QueryStringParameters, err = s.list(f+"queryStringParameters", ownerPrefix+".query", p.QueryStringParameters, old.QueryStringParameters, false); err != nil {
		return out, err
	}
	if out.BodyParameters, err = s.list(f+"bodyParameters", ownerPrefix+".body", p.BodyParameters, old.BodyParameters, false); err != nil {
		return out, err
	}
	return out, nil
}

func (s *secrets) list(field, ownerList string, in, old []Parameter, headers bool) ([]Parameter, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > MaxParameters {
		return nil, domain.Invalid(field, "%s has %d entries; at most %d are allowed", field, len(in), MaxParameters)
	}
	out := make([]Parameter, len(in))
	seen := make(map[string]bool, len(in))
	for i, p := range in {
		f := field + "[" + strconv.Itoa(i) + "]."
		if headers {
			if !headerNameRe.MatchString(p.Key) {
				return nil, domain.Invalid(f+"key", "%skey must be a valid HTTP header name", f)
			}
		} else if err := validateText(f+"key", p.Key, true); err != nil {
			return nil, err
		}
		k := p.Key
		if headers {
			k = http.CanonicalHeaderKey(k)
		}
		if seen[k] {
			return nil, domain.Invalid(f+"key", "%skey %q is given twice", f, truncated(p.Key))
		}
		seen[k] = true
		if p.IsValueSecret {
			var kept string
			for _, o := range old {
				if o.IsValueSecret && o.Key == p.Key {
					kept = o.Value
				}
			}
			var err error
			if p.Value, err = s.seal(f+"value", ownerList+":"+p.Key, p.Value, kept); err != nil {
				return nil, err
			}
		} else if err := validateText(f+"value", p.Value, false); err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// validateText checks a key, a value or a name: at most MaxValueLength bytes, no control characters. Its errors
// never quote the value, which may be a secret.
func validateText(field, v string, required bool) error {
	if v == "" {
		if required {
			return domain.Invalid(field, "%s is required", field)
		}
		return nil
	}
	if len(v) > MaxValueLength {
		return domain.Invalid(field, "%s is %d bytes long; at most %d are allowed", field, len(v), MaxValueLength)
	}
	if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return domain.Invalid(field, "%s contains a control character", field)
	}
	return nil
}

func truncated(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// Stored is what storage keeps of a connection besides its declaration.
type Stored struct {
	ID, AccountID                string
	CreatedAt, UpdatedAt         time.Time
	AuthorizedAt, DeauthorizedAt time.Time
}

// UnmarshalFromDatabase rebuilds a connection from storage without validation; the secrets in spec are sealed. A
// zero AuthorizedAt (a connection stored before it was kept) is its creation time.
func UnmarshalFromDatabase(st Stored, spec Spec) *Connection {
	if st.AuthorizedAt.IsZero() {
		st.AuthorizedAt = st.CreatedAt
	}
	return &Connection{id: st.ID, accountID: st.AccountID, spec: spec, createdAt: st.CreatedAt, updatedAt: st.UpdatedAt,
		authorizedAt: st.AuthorizedAt, deauthorizedAt: st.DeauthorizedAt}
}

func (c *Connection) ID() string                           { return c.id }
func (c *Connection) AccountID() string                    { return c.accountID }
func (c *Connection) Name() string                         { return c.spec.Name }
func (c *Connection) Description() string                  { return c.spec.Description }
func (c *Connection) AuthorizationType() AuthorizationType { return c.spec.AuthorizationType }
func (c *Connection) CreatedAt() time.Time                 { return c.createdAt }
func (c *Connection) UpdatedAt() time.Time                 { return c.updatedAt }

// Sealed returns the connection's declaration with its secrets sealed (for storage and for the runtime adapter,
// which hands the sealed values to connectors). Callers must not show the secrets to anyone.
func (c *Connection) Sealed() Spec { return c.spec.clone() }

// Redacted returns the connection's declaration with every secret emptied (what callers may see). Given back to
// Change, it keeps every secret as it is.
func (c *Connection) Redacted() Spec {
	s := c.spec.clone()
	if s.Basic != nil {
		s.Basic.Password = ""
	}
	if s.APIKey != nil {
		s.APIKey.APIKeyValue = ""
	}
	if s.OAuth != nil {
		s.OAuth.ClientSecret = ""
		redactParams(&s.OAuth.HTTPParameters)
	}
	redactParams(&s.InvocationHTTPParameters)
	return s
}

func redactParams(p *HTTPParameters) {
	for _, l := range [][]Parameter{p.HeaderParameters, p.QueryStringParameters, p.BodyParameters} {
		for i := range l {
			if l[i].IsValueSecret {
				l[i].Value = ""
			}
		}
	}
}

// Repository stores connections. Names are unique per account.
type Repository interface {
	// Create stores a new connection; ErrAlreadyExists when the account has a connection of that name;
	// ErrQuotaExceeded when the account already has max connections (checked in the same transaction).
	Create(ctx context.Context, c *Connection, max int) error
	// Get returns ErrNotFound when the account has no connection of that name.
	Get(ctx context.Context, accountID, name string) (*Connection, error)
	// List returns one page of an account's connections ordered by name, and the token of the next page.
	List(ctx context.Context, accountID string, page domain.Page) ([]*Connection, string, error)
	// Update loads the connection, lets fn change it and stores it in one transaction; ErrNotFound when it does
	// not exist; fn's error is returned as is and nothing is stored.
	Update(ctx context.Context, accountID, name string, fn func(*Connection) error) (*Connection, error)
	// Delete removes a connection; ErrNotFound when it does not exist; ErrInUse while an API destination
	// references it.
	Delete(ctx context.Context, id string) error
}

// Users tells which API destinations use a connection (deleting a connection in use is refused).
type Users interface {
	// DestinationsUsing returns the names of the API destinations that use the connection, ordered by name.
	DestinationsUsing(ctx context.Context, connectionID string) ([]string, error)
}
