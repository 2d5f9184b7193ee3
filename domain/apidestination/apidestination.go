// Package apidestination holds API destinations: HTTP endpoints that targets deliver to, called with the
// authorization of a connection of the same account and at a bounded rate.
package apidestination

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

// Limits and defaults.
const (
	// DefaultRateLimitPerSecond is the invocation rate of a destination that declares none.
	DefaultRateLimitPerSecond = 300
	MaxRateLimitPerSecond     = 300
	// MaxPathParameters is the largest number of '*' path segments of an endpoint.
	MaxPathParameters = 10
	// MaxEndpointLength is the longest invocation endpoint, in bytes.
	MaxEndpointLength = 2048
	// DefaultMaxPerAccount is the default quota of API destinations per account.
	DefaultMaxPerAccount = 100
)

// Errors returned by this package and its repository.
var (
	ErrNotFound      = &domain.Error{Kind: domain.KindNotFound, Code: "ApiDestinationNotFound"}
	ErrAlreadyExists = &domain.Error{Kind: domain.KindConflict, Code: "ApiDestinationAlreadyExists"}
	// ErrInUse refuses deleting an API destination that targets use.
	ErrInUse = &domain.Error{Kind: domain.KindConflict, Code: "ApiDestinationInUse"}
	// ErrQuotaExceeded refuses an API destination over the account's quota.
	ErrQuotaExceeded = &domain.Error{Kind: domain.KindLimitExceeded, Code: "ApiDestinationQuotaExceeded"}
)

// Methods are the HTTP methods an API destination may call with.
var Methods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
	http.MethodHead, http.MethodOptions}

// Spec is what a caller declares about an API destination.
type Spec struct {
	Name        string
	Description string
	// Connection is the name of a connection of the same account.
	Connection string
	// InvocationEndpoint is an absolute http or https URL; path segments "*" are path parameters, filled from
	// the event at delivery.
	InvocationEndpoint string
	HTTPMethod         string
	// InvocationRateLimitPerSecond is between 1 and 300; 0 means the default (300).
	InvocationRateLimitPerSecond int
}

// ConnectionRef names the connection of an API destination.
type ConnectionRef struct {
	ID   string
	Name string
}

// APIDestination is an HTTP endpoint of an account, called through a connection.
type APIDestination struct {
	id          string
	accountID   string
	name        string
	description string
	connection  ConnectionRef
	endpoint    string
	method      string
	rateLimit   int
	createdAt   time.Time
	updatedAt   time.Time
}

// New validates spec and returns a new API destination with a fresh id that uses conn (the connection that
// spec.Connection names, looked up by the caller).
func New(accountID string, spec Spec, conn ConnectionRef, now time.Time) (*APIDestination, error) {
	if err := domain.ValidateAccountID(accountID); err != nil {
		return nil, err
	}
	if err := domain.ValidateName("name", spec.Name); err != nil {
		return nil, err
	}
	d := &APIDestination{id: domain.NewID(), accountID: accountID, name: spec.Name, createdAt: now.UTC()}
	if err := d.Change(spec, conn, now); err != nil {
		return nil, err
	}
	return d, nil
}

// Validate checks the fields of spec that need no lookup, in the order of the API (the name is checked by New).
func Validate(spec Spec) error {
	if err := domain.ValidateDescription(spec.Description); err != nil {
		return err
	}
	if spec.Connection == "" {
		return domain.Invalid("connection", "connection is required (the name of a connection)")
	}
	if err := domain.ValidateName("connection", spec.Connection); err != nil {
		return err
	}
	if err := validateEndpoint(spec.InvocationEndpoint); err != nil {
		return err
	}
	switch m := spec.HTTPMethod; {
	case m == "":
		return domain.Invalid("httpMethod", "httpMethod is required (%s)", strings.Join(Methods, ", "))
	case !isMethod(m):
		return domain.Invalid("httpMethod", "httpMethod must be one of %s, not %q", strings.Join(Methods, ", "), truncated(m))
	}
	if r := spec.InvocationRateLimitPerSecond; r < 0 || r > MaxRateLimitPerSecond {
		return domain.Invalid("invocationRateLimitPerSecond", "invocationRateLimitPerSecond must be between 1 and %d", MaxRateLimitPerSecond)
	}
	return nil
}

// Change replaces the description, the connection, the endpoint, the method and the rate after validating them;
// the name stays.
func (d *APIDestination) Change(spec Spec, conn ConnectionRef, now time.Time) error {
	spec.HTTPMethod = strings.ToUpper(spec.HTTPMethod)
	if err := Validate(spec); err != nil {
		return err
	}
	if conn.ID == "" || conn.Name != spec.Connection {
		return domain.ErrInternal.With("API destination %q: the connection looked up is not %q", d.name, spec.Connection)
	}
	rate := spec.InvocationRateLimitPerSecond
	if rate == 0 {
		rate = DefaultRateLimitPerSecond
	}
	d.description, d.connection, d.endpoint, d.method, d.rateLimit = spec.Description, conn, spec.InvocationEndpoint, spec.HTTPMethod, rate
	d.updatedAt = now.UTC()
	return nil
}

func isMethod(m string) bool {
	for _, x := range Methods {
		if strings.EqualFold(m, x) {
			return true
		}
	}
	return false
}

// validateEndpoint checks an invocation endpoint: an absolute http(s) URL whose '*' occur only as whole path
// segments, at most MaxPathParameters of them.
func validateEndpoint(s string) error {
	const f = "invocationEndpoint"
	if s == "" {
		return domain.Invalid(f, "invocationEndpoint is required")
	}
	if len(s) > MaxEndpointLength {
		return domain.Invalid(f, "invocationEndpoint is %d bytes long; at most %d are allowed", len(s), MaxEndpointLength)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return domain.Invalid(f, "invocationEndpoint %q must be an absolute http or https URL without user information", truncated(s))
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return domain.Invalid(f, "invocationEndpoint must not have a fragment (#...)")
	}
	if strings.Contains(u.Host, "*") || strings.Contains(u.RawQuery, "*") {
		return domain.Invalid(f, "invocationEndpoint: '*' may only stand for a whole path segment")
	}
	n := 0
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		switch {
		case seg == "*":
			n++
		case strings.Contains(seg, "*"):
			return domain.Invalid(f, "invocationEndpoint: '*' may only stand for a whole path segment, not part of %q", truncated(seg))
		}
	}
	if n > MaxPathParameters {
		return domain.Invalid(f, "invocationEndpoint has %d path parameters ('*'); at most %d are allowed", n, MaxPathParameters)
	}
	return nil
}

func truncated(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// UnmarshalFromDatabase rebuilds an API destination from storage without validation.
func UnmarshalFromDatabase(id, accountID, name, description string, conn ConnectionRef, endpoint, method string, rateLimit int,
	createdAt, updatedAt time.Time) *APIDestination {
	return &APIDestination{id: id, accountID: accountID, name: name, description: description, connection: conn,
		endpoint: endpoint, method: method, rateLimit: rateLimit, createdAt: createdAt, updatedAt: updatedAt}
}

func (d *APIDestination) ID() string                 { return d.id }
func (d *APIDestination) AccountID() string          { return d.accountID }
func (d *APIDestination) Name() string               { return d.name }
func (d *APIDestination) Description() string        { return d.description }
func (d *APIDestination) Connection() ConnectionRef  { return d.connection }
func (d *APIDestination) InvocationEndpoint() string { return d.endpoint }
func (d *APIDestination) HTTPMethod() string         { return d.method }

// InvocationRateLimitPerSecond is the most calls per second the destination receives.
func (d *APIDestination) InvocationRateLimitPerSecond() int { return d.rateLimit }
func (d *APIDestination) CreatedAt() time.Time              { return d.createdAt }
func (d *APIDestination) UpdatedAt() time.Time              { return d.updatedAt }

// PathParameters is the number of '*' path segments of the endpoint.
func (d *APIDestination) PathParameters() int {
	u, err := url.Parse(d.endpoint)
	if err != nil {
		return 0
	}
	n := 0
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if seg == "*" {
			n++
		}
	}
	return n
}

// Repository stores API destinations. Names are unique per account.
type Repository interface {
	// Create stores a new API destination; ErrAlreadyExists when the account has one of that name;
	// ErrQuotaExceeded when the account already has max of them (checked in the same transaction);
	// connection.ErrNotFound when its connection was deleted meanwhile.
	Create(ctx context.Context, d *APIDestination, max int) error
	// Get returns ErrNotFound when the account has no API destination of that name.
	Get(ctx context.Context, accountID, name string) (*APIDestination, error)
	// List returns one page of an account's API destinations ordered by name, and the token of the next page.
	List(ctx context.Context, accountID string, page domain.Page) ([]*APIDestination, string, error)
	// Update loads the API destination, lets fn change it and stores it in one transaction; ErrNotFound when it
	// does not exist; fn's error is returned as is and nothing is stored.
	Update(ctx context.Context, accountID, name string, fn func(*APIDestination) error) (*APIDestination, error)
	// Delete removes an API destination; ErrNotFound when it does not exist.
	Delete(ctx context.Context, id string) error
}

// TargetRef names a target of an account: its bus, its rule and its own name.
type TargetRef struct {
	Bus    string
	Rule   string
	Target string
}

func (r TargetRef) String() string { return r.Bus + "/" + r.Rule + "/" + r.Target }

// TargetRefs tells which targets deliver to an API destination (deleting one in use is refused).
type TargetRefs interface {
	// TargetsUsing returns the targets of the account that deliver to the API destination of that name, ordered
	// by bus, rule and target name.
	TargetsUsing(ctx context.Context, accountID, name string) ([]TargetRef, error)
}
