package domain

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"time"
)

// Bearer tokens of the product (API keys, console sessions) are "<prefix>_<id>_<secret>": the prefix names the kind
// (so that secret scanners and people recognise one), the id finds the stored credential, and the secret is
// TokenSecretBytes random bytes in unpadded base64url, of which only a SHA-256 is stored.
const TokenSecretBytes = 32

var tokenEncoding = base64.RawURLEncoding

// NewToken returns a token of prefix and id with a new random secret, and the secret.
func NewToken(prefix, id string) (token, secret string) {
	var b [TokenSecretBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	secret = tokenEncoding.EncodeToString(b[:])
	return prefix + "_" + id + "_" + secret, secret
}

// ParseToken splits a token of prefix into its id and secret; ok is false when it does not have the form.
func ParseToken(prefix, token string) (id, secret string, ok bool) {
	rest, found := strings.CutPrefix(token, prefix+"_")
	if !found {
		return "", "", false
	}
	id, secret, found = strings.Cut(rest, "_")
	if !found || !IsID(id) || len(secret) != tokenEncoding.EncodedLen(TokenSecretBytes) {
		return "", "", false
	}
	if _, err := tokenEncoding.DecodeString(secret); err != nil {
		return "", "", false
	}
	return id, secret, true
}

// MaxCredentialLifetime bounds the expiry of a credential (an API key, an access key).
const MaxCredentialLifetime = 10 * 365 * 24 * time.Hour

// ValidateExpiry checks the expiry of a credential created at now: zero (never) or in the future and at most
// MaxCredentialLifetime away. Errors are validation errors of field expiresAt.
func ValidateExpiry(expiresAt, now time.Time) error {
	if expiresAt.IsZero() {
		return nil
	}
	if !expiresAt.After(now) {
		return Invalid("expiresAt", "expiresAt %s is not in the future", expiresAt.UTC().Format(time.RFC3339))
	}
	if expiresAt.Sub(now) > MaxCredentialLifetime {
		return Invalid("expiresAt", "expiresAt is more than 10 years away")
	}
	return nil
}
