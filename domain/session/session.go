// Package session holds console sessions: a user who signed in with a password gets a session, a row of the
// database that every control-plane replica reads, so that any of them can end it. The browser holds the
// session's token in a cookie; a request authenticated by it must also carry the session's CSRF token (CSRFToken),
// which a cross-site page cannot read.
//
// A token reads "ebs_<id>_<secret>": id is the session's public id (16 base32 characters), secret 32 random bytes
// in unpadded base64url, stored only as its SHA-256 (full entropy: a slow hash would add nothing). A session ends
// when it has not been used for the idle timeout, at its absolute expiry, at logout, when its user revokes it, and
// when its user's password changes or the user is disabled or deleted.
//
// Signing in is throttled (throttle.go): failed attempts are counted in the database per user and client address,
// so that every replica agrees, and slow down further attempts without ever locking a user out.
package session

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

// Prefix starts every session token.
const Prefix = "ebs"

// Defaults of Config.
const (
	DefaultIdleTimeout = time.Hour
	DefaultMaxAge      = 12 * time.Hour
)

// Client is where a sign-in came from, kept with the session so that its user recognises it.
type Client struct {
	// Addr is the client's IP address (after trusted proxies).
	Addr string
	// UserAgent is the User-Agent header, cut to MaxUserAgent bytes.
	UserAgent string
}

// MaxUserAgent bounds the stored User-Agent.
const MaxUserAgent = 255

// Session is a signed-in user's session, without its secret.
type Session struct {
	id         string
	userID     string
	username   string
	secretHash [sha256.Size]byte
	createdAt  time.Time
	lastSeenAt time.Time
	expiresAt  time.Time // absolute expiry
	client     Client
}

// New returns a new session of the user for client, expiring at now+maxAge at the latest, and its token, which is
// never stored.
func New(userID, username string, client Client, maxAge time.Duration, now time.Time) (*Session, string) {
	id := domain.NewID()
	token, secret := domain.NewToken(Prefix, id)
	now = now.UTC().Truncate(time.Microsecond)
	if len(client.UserAgent) > MaxUserAgent {
		client.UserAgent = strings.ToValidUTF8(client.UserAgent[:MaxUserAgent], "")
	}
	s := &Session{id: id, userID: userID, username: username, secretHash: sha256.Sum256([]byte(secret)),
		createdAt: now, lastSeenAt: now, expiresAt: now.Add(maxAge), client: client}
	return s, token
}

// UnmarshalFromDatabase rebuilds a stored session.
func UnmarshalFromDatabase(id, userID, username string, secretHash [sha256.Size]byte, createdAt, lastSeenAt, expiresAt time.Time,
	client Client) *Session {
	return &Session{id: id, userID: userID, username: username, secretHash: secretHash, createdAt: createdAt,
		lastSeenAt: lastSeenAt, expiresAt: expiresAt, client: client}
}

func (s *Session) ID() string                    { return s.id }
func (s *Session) UserID() string                { return s.userID }
func (s *Session) Username() string              { return s.username }
func (s *Session) SecretHash() [sha256.Size]byte { return s.secretHash }
func (s *Session) CreatedAt() time.Time          { return s.createdAt }
func (s *Session) LastSeenAt() time.Time         { return s.lastSeenAt }
func (s *Session) ExpiresAt() time.Time          { return s.expiresAt }
func (s *Session) Client() Client                { return s.client }

// IdleExpiresAt is when the session ends unless it is used before: its last use plus idle.
func (s *Session) IdleExpiresAt(idle time.Duration) time.Time { return s.lastSeenAt.Add(idle) }

// Live reports whether the session is usable at now: before its absolute expiry and used within idle.
func (s *Session) Live(now time.Time, idle time.Duration) bool {
	return now.Before(s.expiresAt) && now.Before(s.IdleExpiresAt(idle))
}

// parse splits a token into its id and secret; ok is false when it does not have the form of a session token.
func parse(token string) (id, secret string, ok bool) { return domain.ParseToken(Prefix, token) }

// CSRFToken is the CSRF token of the session whose token is token: derived from the session's secret with a
// label of its own, so that it names one session, is never stored, and reveals nothing of the secret (or of the
// hash kept to look the session up).
func CSRFToken(token string) string {
	sum := sha256.Sum256([]byte("eventbridge session csrf\x00" + token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
