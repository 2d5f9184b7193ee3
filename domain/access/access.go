// Package access is who may do what: the roles a user or an API key holds in an account, the permissions each
// role grants (the matrix of docs/identity.md), and the Principal, the authenticated caller of a request. It holds
// no storage and no transport: the web layer authenticates a request into a Principal and asks it, for the
// permission its operation names, whether the call may go on.
package access

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

// Role is what a member or an API key may do in one account.
type Role string

// The roles, from most to least powerful; Publisher only puts events.
const (
	Admin     Role = "admin"
	Editor    Role = "editor"
	Operator  Role = "operator"
	Viewer    Role = "viewer"
	Publisher Role = "publisher"
)

// Roles are every role, from most to least powerful.
var Roles = []Role{Admin, Editor, Operator, Viewer, Publisher}

// ParseRole returns the role named s, or a validation error about field naming the roles.
func ParseRole(field, s string) (Role, error) {
	r := Role(s)
	if slices.Contains(Roles, r) {
		return r, nil
	}
	return "", domain.Invalid(field, "%s %q is not a role; one of admin, editor, operator, viewer, publisher", field, s)
}

// Permission is what an operation needs. Each operation of every API dialect names one.
type Permission string

// The permissions. Account permissions are granted by a role in the account the request selects; instance
// permissions (Instance) by being an instance administrator; Authenticated by any valid credential.
const (
	// Read reads buses, rules, targets, sources, connections, API destinations, event types, the runtime and dead
	// letters.
	Read Permission = "resources.read"
	// Write creates, changes and deletes buses, rules, targets, sources, connections and API destinations.
	Write Permission = "resources.write"
	// Operate acts on the runtime (pause, resume, stop, restart), redrives and discards dead letters, replays.
	Operate Permission = "runtime.operate"
	// PutEvents puts events on buses, in every dialect.
	PutEvents Permission = "events.put"
	// Test runs the pure functions: an event pattern or an input transformer against an event.
	Test Permission = "patterns.test"
	// ReadSecrets reads webhook tokens and the other values that are sealed but readable (an http target's
	// headers). Without it they are answered masked.
	ReadSecrets Permission = "secrets.read"
	// ManageAccess manages the account's members and API keys (and its audit log).
	ManageAccess Permission = "access.manage"

	// ManageInstance manages accounts and users: instance administrators only.
	ManageInstance Permission = "instance.manage"
	// Authenticated is granted to every authenticated caller whatever its role (who am I).
	Authenticated Permission = "authenticated"
)

// descriptions say what each permission allows, for people (docs/identity.md, the console).
var descriptions = map[Permission]string{
	Read:           "read buses, rules, targets, sources, connections, API destinations, event types, runtime, dead letters",
	Write:          "create, change, delete buses, rules, targets, sources, connections, API destinations",
	Operate:        "runtime actions (pause, resume, stop, restart), redrive and discard dead letters, replays",
	PutEvents:      "put events (every PutEvents of every dialect)",
	Test:           "test a pattern or a transformer (pure functions)",
	ReadSecrets:    "read webhook tokens and other sealed-but-readable values",
	ManageAccess:   "members, API keys, audit log",
	ManageInstance: "accounts and users (instance administrators only)",
	Authenticated:  "who am I (any valid credential)",
}

// Description says what p allows.
func (p Permission) Description() string { return descriptions[p] }

// Permissions are every permission, account permissions first, in the order of the matrix.
var Permissions = []Permission{Read, Write, Operate, PutEvents, Test, ReadSecrets, ManageAccess, ManageInstance, Authenticated}

// grants is the matrix: what each role may do in its account.
var grants = map[Role][]Permission{
	Admin:     {Read, Write, Operate, PutEvents, Test, ReadSecrets, ManageAccess},
	Editor:    {Read, Write, Operate, PutEvents, Test, ReadSecrets},
	Operator:  {Read, Operate, Test},
	Viewer:    {Read, Test},
	Publisher: {PutEvents, Test},
}

// Grants reports whether role r grants the account permission p.
func (r Role) Grants(p Permission) bool { return slices.Contains(grants[r], p) }

// Scope is where a permission applies.
type Scope int

const (
	// ScopeAccount permissions apply in the account a request selects, by the caller's role there.
	ScopeAccount Scope = iota
	// ScopeInstance permissions apply to the whole installation (instance administrators).
	ScopeInstance
	// ScopeAnyone permissions need only a valid credential.
	ScopeAnyone
)

// Scope returns where p applies.
func (p Permission) Scope() Scope {
	switch p {
	case ManageInstance:
		return ScopeInstance
	case Authenticated:
		return ScopeAnyone
	}
	return ScopeAccount
}

// Valid reports whether p is one of Permissions.
func (p Permission) Valid() bool { return slices.Contains(Permissions, p) }

// Kind is what authenticated a principal.
type Kind string

const (
	// KindAPIKey is an API key: one account, one role.
	KindAPIKey Kind = "apiKey"
	// KindUser is a user (a console session): roles by membership.
	KindUser Kind = "user"
	// KindAccessKey is an access key of the Amazon EventBridge API: one account, one role.
	KindAccessKey Kind = "accessKey"
)

// Principal is the authenticated caller of a request: an API key or a user. It is immutable once built.
type Principal struct {
	kind Kind
	// id is the key's id or the user's id; name is the key's name or the user's login name.
	id, name string
	// instanceAdmin is admin in every account and manages accounts and users.
	instanceAdmin bool
	// roles maps the accounts the principal belongs to to its role there (one entry for a key).
	roles map[string]Role
	// home is the account a request that names none selects.
	home string
	// buses, when not nil, are the only buses the principal may put events on (a bus-scoped key).
	buses []string
	// expiresAt is the key's expiry (zero: never).
	expiresAt time.Time
}

// KeyPrincipal is the principal of an API key of account with role; instanceAdmin keys are admin everywhere;
// buses, when not empty, restrict PutEvents to those buses.
func KeyPrincipal(id, name, account string, role Role, instanceAdmin bool, buses []string, expiresAt time.Time) *Principal {
	p := &Principal{kind: KindAPIKey, id: id, name: name, instanceAdmin: instanceAdmin,
		roles: map[string]Role{account: role}, home: account, expiresAt: expiresAt}
	if len(buses) > 0 {
		p.buses = slices.Clone(buses)
	}
	return p
}

// AccessKeyPrincipal is the principal of an access key of account with role.
func AccessKeyPrincipal(id, name, account string, role Role, expiresAt time.Time) *Principal {
	return &Principal{kind: KindAccessKey, id: id, name: name, roles: map[string]Role{account: role}, home: account,
		expiresAt: expiresAt}
}

// UserPrincipal is the principal of a user with its memberships (account → role).
func UserPrincipal(id, name string, instanceAdmin bool, memberships map[string]Role) *Principal {
	p := &Principal{kind: KindUser, id: id, name: name, instanceAdmin: instanceAdmin, roles: make(map[string]Role, len(memberships))}
	for a, r := range memberships {
		p.roles[a] = r
	}
	accounts := p.Accounts()
	switch {
	case slices.Contains(accounts, domain.DefaultAccountID) || instanceAdmin || len(accounts) == 0:
		p.home = domain.DefaultAccountID
	default:
		p.home = accounts[0]
	}
	return p
}

func (p *Principal) Kind() Kind           { return p.kind }
func (p *Principal) ID() string           { return p.id }
func (p *Principal) Name() string         { return p.name }
func (p *Principal) InstanceAdmin() bool  { return p.instanceAdmin }
func (p *Principal) ExpiresAt() time.Time { return p.expiresAt }
func (p *Principal) HomeAccount() string  { return p.home }
func (p *Principal) Buses() []string      { return slices.Clone(p.buses) }
func (p *Principal) String() string       { return fmt.Sprintf("%s %s (%s)", p.kind, p.name, p.id) }

// Accounts are the accounts the principal is a member of (its key's account), sorted. An instance administrator
// reaches every account besides these.
func (p *Principal) Accounts() []string {
	out := make([]string, 0, len(p.roles))
	for a := range p.roles {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// MemberOf reports whether the principal is a member of account (its key's account, or a user's membership).
func (p *Principal) MemberOf(account string) bool {
	_, ok := p.roles[account]
	return ok
}

// RoleIn returns the principal's role in account: admin for an instance administrator, its membership's role
// otherwise; false when it has none there.
func (p *Principal) RoleIn(account string) (Role, bool) {
	if p.instanceAdmin {
		return Admin, true
	}
	r, ok := p.roles[account]
	return r, ok
}

// Can reports whether the principal has permission perm in account (ignored for instance and anyone scopes).
func (p *Principal) Can(account string, perm Permission) bool {
	switch perm.Scope() {
	case ScopeInstance:
		return p.instanceAdmin
	case ScopeAnyone:
		return true
	}
	r, ok := p.RoleIn(account)
	return ok && r.Grants(perm)
}

// MayPutOn reports whether the principal may put events on the bus named bus (given it has PutEvents): a
// bus-scoped key only on its buses.
func (p *Principal) MayPutOn(bus string) bool {
	return p.buses == nil || slices.Contains(p.buses, bus)
}

// Errors of authentication and authorization.
var (
	// ErrUnauthenticated is a request without valid credentials: missing, unknown, wrong, expired or revoked,
	// all answered alike (HTTP 401).
	ErrUnauthenticated = &domain.Error{Kind: domain.KindUnauthenticated, Code: "Unauthenticated"}
	// ErrForbidden is an authenticated request its credentials do not permit (HTTP 403).
	ErrForbidden = &domain.Error{Kind: domain.KindForbidden, Code: "Forbidden"}
)

// UnauthenticatedMessage is the one message of ErrUnauthenticated, whatever was wrong with the credentials.
const UnauthenticatedMessage = "missing or invalid credentials: send an API key as Authorization: Bearer ebk_..."

// Unauthenticated is ErrUnauthenticated with its one message.
func Unauthenticated() error { return ErrUnauthenticated.With(UnauthenticatedMessage) }

// Denied is ErrForbidden naming the permission that p lacks in account.
func Denied(p *Principal, account string, perm Permission) error {
	switch perm.Scope() {
	case ScopeInstance:
		return ErrForbidden.With("%s is not an instance administrator: permission %q is needed", p.what(), perm)
	}
	r, ok := p.RoleIn(account)
	if !ok {
		return ErrForbidden.With("%s is not a member of account %q", p.what(), account)
	}
	return ErrForbidden.With("%s has role %q in account %q, which lacks the permission %q", p.what(), r, account, perm)
}

func (p *Principal) what() string {
	switch p.kind {
	case KindAPIKey:
		return fmt.Sprintf("API key %q", p.name)
	case KindAccessKey:
		return fmt.Sprintf("access key %q", p.name)
	}
	return fmt.Sprintf("user %q", p.name)
}
