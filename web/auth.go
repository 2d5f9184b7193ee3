package web

import (
	"context"
	"errors"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/session"
)

// Authenticator turns the credential of a request (an API key today) into its principal. Its errors are
// access.ErrUnauthenticated for a credential that does not authenticate, whatever the reason, and others for a
// failure to check it (a database that cannot be reached). *apikey.Service is one.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (*access.Principal, error)
}

// SessionAuthenticator turns the session cookie's token into its principal and session (*session.Service is
// one); its errors are as Authenticator's.
type SessionAuthenticator interface {
	Authenticate(ctx context.Context, token string) (*access.Principal, *session.Session, error)
}

// AccountReader tells whether an account exists (*account.Service is one).
type AccountReader interface {
	Get(ctx context.Context, id string) (*account.Account, error)
}

// Realm is the realm of the WWW-Authenticate challenge of a 401.
const Realm = "eventbridge"

const (
	principalKey    = "eventbridge.principal"
	sessionKey      = "eventbridge.session"
	sessionTokenKey = "eventbridge.sessionToken"
)

// SessionOf returns the session that authenticated the request and its token; nil when none did (an API key, or
// a public operation).
func SessionOf(c *gin.Context) (*session.Session, string) {
	v, _ := c.Get(sessionKey)
	s, _ := v.(*session.Session)
	if s == nil {
		return nil, ""
	}
	return s, c.GetString(sessionTokenKey)
}

// PrincipalOf returns the authenticated caller of the request (nil for a public operation).
func PrincipalOf(c *gin.Context) *access.Principal {
	p, _ := c.Get(principalKey)
	pr, _ := p.(*access.Principal)
	return pr
}

// Can reports whether the caller of the request has permission perm in the request's account.
func Can(c *gin.Context, perm access.Permission) bool {
	p := PrincipalOf(c)
	return p != nil && p.Can(AccountOf(c), perm)
}

// MayPutOn answers access.ErrForbidden when the caller may not put events on the bus named busName (a key
// restricted to other buses), and access.ErrUnauthenticated when the request has no caller.
func MayPutOn(c *gin.Context, busName string) error {
	p := PrincipalOf(c)
	switch {
	case p == nil:
		return access.Unauthenticated()
	case !p.MayPutOn(busName):
		return access.ErrForbidden.With("this API key may put events only on the buses %s, not on %q",
			strings.Join(p.Buses(), ", "), busName)
	}
	return nil
}

// bearer returns the token of an "Authorization: Bearer <token>" header ("" when there is none). The scheme is
// case-insensitive (RFC 9110).
func bearer(c *gin.Context) string {
	h := c.GetHeader("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// guard is the access control of one operation of a dialect: authentication, the account the request selects,
// and the operation's permission there. It answers in the dialect's error shape and stops the chain on failure.
type guard struct {
	d        Dialect
	perm     access.Permission
	auth     Authenticator
	sessions SessionAuthenticator
	accounts AccountReader
	// anyBody lets a body of any type through (PutEvents, webhooks); other bodies must be JSON.
	anyBody bool
}

func (g guard) handle(c *gin.Context) {
	p, err := g.authenticate(c)
	if err != nil {
		g.fail(c, err)
		return
	}
	c.Set(principalKey, p)
	if !g.anyBody && !requireJSON(c, g.fail) {
		return
	}
	if g.perm.Scope() == access.ScopeAccount {
		id, err := g.selectAccount(c, p)
		if err != nil {
			g.fail(c, err)
			return
		}
		SetAccount(c, id)
	}
	if !p.Can(AccountOf(c), g.perm) {
		g.fail(c, access.Denied(p, AccountOf(c), g.perm))
		return
	}
	c.Next()
}

// authenticate authenticates the request in the dialect's own way when it has one (Dialect.Authenticate), else by
// its API key (Authorization: Bearer), else by its session cookie; a state-changing request that the cookie
// authenticates must also pass the CSRF check.
func (g guard) authenticate(c *gin.Context) (*access.Principal, error) {
	if g.d.Authenticate != nil {
		return g.d.Authenticate(c)
	}
	if token := bearer(c); token != "" {
		if g.auth == nil {
			return nil, access.Unauthenticated()
		}
		return g.auth.Authenticate(c.Request.Context(), token)
	}
	token, err := c.Cookie(SessionCookie)
	if err != nil || token == "" || g.sessions == nil {
		return nil, access.Unauthenticated()
	}
	p, sess, err := g.sessions.Authenticate(c.Request.Context(), token)
	if errors.Is(err, access.ErrUnauthenticated) {
		ClearSessionCookie(c) // ended or unknown: the browser may forget it
	}
	if err != nil {
		return nil, err
	}
	if !safeMethod(c.Request.Method) {
		if err := checkCSRF(c, token, c.GetStringSlice(originsKey)); err != nil {
			return nil, err
		}
	}
	c.Set(sessionKey, sess)
	c.Set(sessionTokenKey, token)
	return p, nil
}

// selectAccount returns the account the request names in the dialect's way, or the caller's home account when it
// names none. A caller that is neither a member of it nor an instance administrator is refused (403); an instance
// administrator naming an account that does not exist gets account.ErrNotFound.
func (g guard) selectAccount(c *gin.Context, p *access.Principal) (string, error) {
	id := ""
	if g.d.Account != nil {
		var err error
		if id, err = g.d.Account(c); err != nil {
			return "", err
		}
	}
	if id == "" {
		return p.HomeAccount(), nil
	}
	if err := domain.ValidateAccountID(id); err != nil {
		return "", err
	}
	if p.MemberOf(id) {
		return id, nil // a member's account exists (memberships and keys go with their account)
	}
	if !p.InstanceAdmin() {
		return "", access.Denied(p, id, g.perm)
	}
	if g.accounts == nil {
		return "", account.ErrNotFound.With("account %q not found", id)
	}
	if _, err := g.accounts.Get(c.Request.Context(), id); err != nil {
		return "", err
	}
	return id, nil
}

// fail answers err in the dialect's shape; a 401 carries the challenge.
func (g guard) fail(c *gin.Context, err error) {
	if errors.Is(err, access.ErrUnauthenticated) && g.d.Authenticate == nil {
		c.Header("WWW-Authenticate", `Bearer realm="`+Realm+`"`)
	}
	g.d.WriteError(c, err)
}

// Sealed returns v when the caller may read sealed-but-readable values (access.ReadSecrets: webhook tokens), else
// domain.SecretMask. (Secrets proper, such as passwords and secret headers, are write-only for everyone.)
func Sealed(c *gin.Context, v string) string {
	if Can(c, access.ReadSecrets) {
		return v
	}
	return domain.SecretMask
}
