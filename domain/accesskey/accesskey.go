// Package accesskey holds access keys: AWS-style credentials (an access key id and a secret access key) with which
// the Amazon EventBridge API's clients sign their requests (Signature Version 4), each belonging to one account
// with one role and an optional expiry.
//
// Unlike an API key's, the secret cannot be kept as a hash: verifying a signature needs it. It is kept sealed under
// the master key for its key (domain.SecretOwner{Kind: "access-key"}), shown once when the key is created, and opened
// only to verify signatures.
package accesskey

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
)

// IDPrefix starts every access key id, as AWS's long-term keys' (AKIA...): 20 upper-case characters in all.
const IDPrefix = "AKIA"

// MaxLiveWithName is how many live access keys of one name an account may hold: two, to rotate one without
// downtime.
const MaxLiveWithName = 2

// Errors of access keys.
var (
	ErrNotFound        = &domain.Error{Kind: domain.KindNotFound, Code: "AccessKeyNotFound"}
	ErrTooManyWithName = &domain.Error{Kind: domain.KindConflict, Code: "AccessKeyNameInUse"}
)

// Key is an access key; its secret is sealed.
type Key struct {
	id           string
	accountID    string
	name         string
	role         access.Role
	sealedSecret string
	createdBy    string
	createdAt    time.Time
	expiresAt    time.Time // zero: never
	lastUsedAt   time.Time // zero: never used
	revokedAt    time.Time // zero: live
}

// Spec declares a new access key.
type Spec struct {
	Name string
	Role access.Role
	// ExpiresAt, when not zero, ends the key's validity.
	ExpiresAt time.Time
}

// SecretOwner is what a key's secret is sealed for.
func SecretOwner(accountID, id string) domain.SecretOwner {
	return domain.SecretOwner{Account: accountID, Kind: "access-key", ID: id, Field: "secretAccessKey"}
}

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// New returns a new access key of the account with its secret access key (40 characters, which is not kept but
// sealed by sealer). Errors: validation; the sealer's.
func New(accountID string, spec Spec, createdBy string, sealer domain.Sealer, now time.Time) (*Key, string, error) {
	if err := domain.ValidateAccountID(accountID); err != nil {
		return nil, "", err
	}
	if err := domain.ValidateName("name", spec.Name); err != nil {
		return nil, "", err
	}
	if _, err := access.ParseRole("role", string(spec.Role)); err != nil {
		return nil, "", err
	}
	now = now.UTC().Truncate(time.Microsecond)
	if err := domain.ValidateExpiry(spec.ExpiresAt, now); err != nil {
		return nil, "", err
	}
	raw := make([]byte, 10+30)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", err
	}
	id := IDPrefix + idEncoding.EncodeToString(raw[:10])  // 16 characters of [A-Z2-7]
	secret := base64.StdEncoding.EncodeToString(raw[10:]) // 40 characters, as AWS's
	sealed, err := sealer.Seal(SecretOwner(accountID, id), secret)
	if err != nil {
		return nil, "", err
	}
	k := &Key{id: id, accountID: accountID, name: spec.Name, role: spec.Role, sealedSecret: sealed, createdBy: createdBy,
		createdAt: now}
	if !spec.ExpiresAt.IsZero() {
		k.expiresAt = spec.ExpiresAt.UTC().Truncate(time.Microsecond)
	}
	return k, secret, nil
}

// UnmarshalFromDatabase rebuilds a key from storage without validation.
func UnmarshalFromDatabase(id, accountID, name string, role access.Role, sealedSecret, createdBy string,
	createdAt, expiresAt, lastUsedAt, revokedAt time.Time) *Key {
	return &Key{id: id, accountID: accountID, name: name, role: role, sealedSecret: sealedSecret, createdBy: createdBy,
		createdAt: createdAt, expiresAt: expiresAt, lastUsedAt: lastUsedAt, revokedAt: revokedAt}
}

func (k *Key) ID() string           { return k.id }
func (k *Key) AccountID() string    { return k.accountID }
func (k *Key) Name() string         { return k.name }
func (k *Key) Role() access.Role    { return k.role }
func (k *Key) SealedSecret() string { return k.sealedSecret }
func (k *Key) CreatedBy() string    { return k.createdBy }
func (k *Key) CreatedAt() time.Time { return k.createdAt }
func (k *Key) ExpiresAt() time.Time { return k.expiresAt }
func (k *Key) LastUsedAt() time.Time {
	return k.lastUsedAt
}
func (k *Key) RevokedAt() time.Time { return k.revokedAt }
func (k *Key) Revoked() bool        { return !k.revokedAt.IsZero() }

// Live reports whether the key authenticates at now: neither revoked nor expired.
func (k *Key) Live(now time.Time) bool {
	return !k.Revoked() && (k.expiresAt.IsZero() || now.Before(k.expiresAt))
}

// Principal is the caller the key authenticates.
func (k *Key) Principal() *access.Principal {
	return access.AccessKeyPrincipal(k.id, k.name, k.accountID, k.role, k.expiresAt)
}

// Repository stores access keys.
type Repository interface {
	// Create stores a new key, refusing it with ErrTooManyWithName when its account already holds MaxLiveWithName
	// live keys of its name (counted in the same transaction).
	Create(ctx context.Context, k *Key, now time.Time) error
	// Get returns the key with id, revoked or not; ErrNotFound.
	Get(ctx context.Context, id string) (*Key, error)
	// List returns a page of the account's keys that are not revoked, ordered by name then creation.
	List(ctx context.Context, accountID string, page domain.Page) ([]*Key, string, error)
	// Revoke marks the account's key revoked at now; ErrNotFound when the account has no live key with id.
	Revoke(ctx context.Context, accountID, id string, now time.Time) error
	// Touch records that the key was used at t.
	Touch(ctx context.Context, id string, t time.Time) error
	// DeleteAccount deletes every key of the account.
	DeleteAccount(ctx context.Context, accountID string) error
}
