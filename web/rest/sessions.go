package rest

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/audit"
	"github.com/eventbridge-go/eventbridge/domain/session"
	"github.com/eventbridge-go/eventbridge/web"
)

// SignIn is a user's name and password.
type SignIn struct {
	Username string `json:"username" example:"alice"`
	Password string `json:"password" example:"correct horse battery staple"`
} //@name SignIn

// Session is a console session of the caller.
type Session struct {
	ID       string `json:"id" example:"q4x7yfa4d5ek3mbw"`
	Username string `json:"username" example:"alice"`
	// Current marks the session of the request.
	Current    bool      `json:"current"`
	CreatedAt  time.Time `json:"createdAt"`
	LastSeenAt time.Time `json:"lastSeenAt"`
	// ExpiresAt is the absolute end; IdleExpiresAt the end unless it is used before.
	ExpiresAt     time.Time `json:"expiresAt"`
	IdleExpiresAt time.Time `json:"idleExpiresAt"`
	ClientAddress string    `json:"clientAddress" example:"192.0.2.10"`
	UserAgent     string    `json:"userAgent" example:"Mozilla/5.0"`
	// CSRFToken, on the session of the request only, is what every request that changes something must send in
	// X-CSRF-Token besides the cookie.
	CSRFToken string `json:"csrfToken,omitempty" example:"9eHcJ3mX1Qk..."`
} //@name Session

// SessionList is the caller's live sessions, newest first.
type SessionList struct {
	Sessions []Session `json:"sessions"`
} //@name SessionList

// PasswordChange is a user's new password with the current one.
type PasswordChange struct {
	CurrentPassword string `json:"currentPassword"`
	NewPassword     string `json:"newPassword"`
} //@name PasswordChange

func (a *api) sessionOf(s *session.Session, current string, token string) Session {
	out := Session{ID: s.ID(), Username: s.Username(), Current: s.ID() == current, CreatedAt: s.CreatedAt(),
		LastSeenAt: s.LastSeenAt(), ExpiresAt: s.ExpiresAt(), IdleExpiresAt: s.IdleExpiresAt(a.s.Sessions.IdleTimeout()),
		ClientAddress: s.Client().Addr, UserAgent: s.Client().UserAgent}
	if token != "" {
		out.CSRFToken = session.CSRFToken(token)
	}
	return out
}

var errNoSessions = &domain.Error{Kind: domain.KindNotFound, Code: "SessionNotFound"}

// currentSession returns the session that authenticated the request, or SessionNotFound for an API key.
func currentSession(c *gin.Context) (*session.Session, string, error) {
	s, token := web.SessionOf(c)
	if s == nil {
		return nil, "", errNoSessions.With("this request is authenticated by an API key, not by a session")
	}
	return s, token, nil
}

var errNotAUser = &domain.Error{Kind: domain.KindConflict, Code: "NotAUser"}

// createSession signs a user in.
//
//	@Summary		Sign in
//	@Description	Checks the user name and password and sets the session cookie (eb_session: HttpOnly, SameSite=Lax,
//	@Description	Secure on an https public URL). The cookie authenticates the requests of the console like an
//	@Description	API key; those that change something must also send the answer's csrfToken in X-CSRF-Token and
//	@Description	come from this server's origin. An unknown user, a wrong password and a disabled user answer alike
//	@Description	(401); after three failures from one address, attempts on that user name must wait, twice as long
//	@Description	after each failure (429 with Retry-After).
//	@Tags			sessions
//	@Accept			json
//	@Produce		json
//	@Param			credentials	body		SignIn	true	"user name and password"
//	@Success		201			{object}	Session
//	@Failure		400			{object}	web.Problem	"MalformedRequest"
//	@Failure		401			{object}	web.Problem	"Unauthenticated: invalid user name or password"
//	@Failure		403			{object}	web.Problem	"CrossSiteRequestRefused: from another site"
//	@Failure		415			{object}	web.Problem	"UnsupportedMediaType: not JSON"
//	@Failure		429			{object}	web.Problem	"TooManySignInAttempts"
//	@Router			/api/v1/session [post]
func (a *api) createSession(c *gin.Context, in *SignIn) (int, any, error) {
	if a.s.Sessions == nil {
		return 0, nil, domain.ErrUnavailable.With("this server does not sign users in")
	}
	if err := web.CheckSignIn(c); err != nil {
		return 0, nil, err
	}
	// A failed sign-in's entry names the user it tried only when there is one: a password typed into the name
	// field is never kept. Every sign-in looks the name up, so that the lookup tells nothing by its time.
	if u, err := a.s.Users.Get(c.Request.Context(), in.Username); err == nil {
		web.SetAuditActor(c, audit.ActorAnonymous, u.ID(), u.Username())
	} else {
		web.SetAuditActor(c, audit.ActorAnonymous, "", "")
	}
	web.SetAuditResource(c, "session")
	s, token, err := a.s.Sessions.Login(c.Request.Context(), in.Username, in.Password,
		session.Client{Addr: web.ClientAddr(c), UserAgent: c.GetHeader("User-Agent")})
	if err != nil {
		return 0, nil, err
	}
	web.SetAuditActor(c, string(access.KindUser), s.UserID(), s.Username())
	web.SetAuditResource(c, "session/"+s.ID())
	web.SetSessionCookie(c, token, s.ExpiresAt())
	return http.StatusCreated, a.sessionOf(s, s.ID(), token), nil
}

// getSession answers the session of the request, with its CSRF token.
//
//	@Summary	The current session
//	@Tags		sessions
//	@Produce	json
//	@Security	BearerAuth
//	@Success	200	{object}	Session
//	@Failure	401	{object}	web.Problem	"Unauthenticated"
//	@Failure	404	{object}	web.Problem	"SessionNotFound: authenticated by an API key"
//	@Router		/api/v1/session [get]
func (a *api) getSession(c *gin.Context) (int, any, error) {
	s, token, err := currentSession(c)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, a.sessionOf(s, s.ID(), token), nil
}

// deleteSession signs out: the session of the request ends and its cookie is cleared.
//
//	@Summary	Sign out
//	@Tags		sessions
//	@Security	BearerAuth
//	@Success	204
//	@Failure	401	{object}	web.Problem	"Unauthenticated"
//	@Failure	403	{object}	web.Problem	"CrossSiteRequestRefused"
//	@Failure	404	{object}	web.Problem	"SessionNotFound: authenticated by an API key"
//	@Router		/api/v1/session [delete]
func (a *api) deleteSession(c *gin.Context) (int, any, error) {
	s, _, err := currentSession(c)
	if err != nil {
		return 0, nil, err
	}
	if err := a.s.Sessions.Logout(c.Request.Context(), s.ID()); err != nil {
		return 0, nil, err
	}
	web.ClearSessionCookie(c)
	return http.StatusNoContent, nil, nil
}

// listSessions answers the caller's live sessions.
//
//	@Summary	List my sessions
//	@Tags		sessions
//	@Produce	json
//	@Security	BearerAuth
//	@Success	200	{object}	SessionList
//	@Failure	401	{object}	web.Problem	"Unauthenticated"
//	@Router		/api/v1/me/sessions [get]
func (a *api) listSessions(c *gin.Context) (int, any, error) {
	p := web.PrincipalOf(c)
	if p.Kind() != access.KindUser {
		return http.StatusOK, SessionList{Sessions: []Session{}}, nil // an API key has none
	}
	ss, err := a.s.Sessions.List(c.Request.Context(), p.ID())
	if err != nil {
		return 0, nil, err
	}
	current := ""
	if s, _ := web.SessionOf(c); s != nil {
		current = s.ID()
	}
	out := SessionList{Sessions: make([]Session, 0, len(ss))}
	for _, s := range ss {
		out.Sessions = append(out.Sessions, a.sessionOf(s, current, ""))
	}
	return http.StatusOK, out, nil
}

// revokeSession ends one of the caller's sessions (on every replica within half a second).
//
//	@Summary	End one of my sessions
//	@Tags		sessions
//	@Security	BearerAuth
//	@Param		session	path	string	true	"session id"
//	@Success	204
//	@Failure	401	{object}	web.Problem	"Unauthenticated"
//	@Failure	404	{object}	web.Problem	"SessionNotFound"
//	@Router		/api/v1/me/sessions/{session} [delete]
func (a *api) revokeSession(c *gin.Context) (int, any, error) {
	p := web.PrincipalOf(c)
	if p.Kind() != access.KindUser {
		return 0, nil, session.ErrNotFound.With("session %q not found: an API key has no sessions", c.Param("session"))
	}
	if err := a.s.Sessions.Revoke(c.Request.Context(), p.ID(), c.Param("session")); err != nil {
		return 0, nil, err
	}
	if s, _ := web.SessionOf(c); s != nil && s.ID() == c.Param("session") {
		web.ClearSessionCookie(c)
	}
	return http.StatusNoContent, nil, nil
}

// changePassword changes the caller's password; every session of the caller ends, this one included.
//
//	@Summary	Change my password
//	@Tags		sessions
//	@Accept		json
//	@Security	BearerAuth
//	@Param		change	body	PasswordChange	true	"the current and the new password"
//	@Success	204
//	@Failure	400	{object}	web.Problem	"ValidationError: newPassword"
//	@Failure	401	{object}	web.Problem	"Unauthenticated"
//	@Failure	403	{object}	web.Problem	"Forbidden: a wrong current password"
//	@Failure	409	{object}	web.Problem	"NotAUser: an API key has no password"
//	@Router		/api/v1/me/password [put]
func (a *api) changePassword(c *gin.Context, in *PasswordChange) (int, any, error) {
	p := web.PrincipalOf(c)
	if p.Kind() != access.KindUser {
		return 0, nil, errNotAUser.With("this request is authenticated by an API key, which has no password; sign in as a user")
	}
	if err := a.s.Users.ChangePassword(c.Request.Context(), p.ID(), in.CurrentPassword, in.NewPassword); err != nil {
		return 0, nil, err
	}
	web.ClearSessionCookie(c)
	return http.StatusNoContent, nil, nil
}
