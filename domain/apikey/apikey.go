// Package apikey holds API keys: credentials of programs, each belonging to one account with one role, an
// optional expiry and an optional list of buses it may put events on.
//
// A key reads "ebk_<id>_<secret>": id is the key's public internal id (16 base32 characters), secret 32 random
// bytes in unpadded base64url. The secret is shown once, when the key is created, and stored only as its SHA-256:
// it has full entropy, so a slow hash would add nothing. A key is looked up by id and its secret compared in
// constant time.
package apikey

import (
	"context"
	"crypto/sha256"
	"slices"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
)

// Prefix starts every key, so that secret scanners and people recognise one.
const Prefix = "ebk"

// MaxLiveWithName is how many live keys of one name an account may hold: two, to rotate one without downtime.
const MaxLiveWithName = 2

// Key is an API key without its secret.
type Key struct {
	id            string
	accountID     string
	name          string
	role          access.Role
	instanceAdmin bool
	buses         []string
	secretHash    [sha256.Size]byte
	createdBy     string
	createdAt     time.Time
	expiresAt     time.Time // zero: never
	lastUsedAt    time.Time // zero: never used
	revokedAt     time.Time // zero: live
}

// Spec declares a new key.
type Spec struct {
	Name string
	Role access.Role
	// InstanceAdmin makes the key an instance administrator's (admin in every account); only an instance
	// administrator may create one.
	InstanceAdmin bool
	// ExpiresAt, when not zero, ends the key's validity.
	ExpiresAt time.Time
	// Buses, when not empty, are the only buses the key may put events on.
	Buses []string
}

// New returns a new key of the account and its token ("ebk_<id>_<secret>"), which is never stored.
func New(accountID string, spec Spec, createdBy string, now time.Time) (*Key, string, error) {
	id := domain.NewID()
	token, secret := domain.NewToken(Prefix, id)
	k, err := build(id, accountID, spec, secret, createdBy, now)
	if err != nil {
		return nil, "", err
	}
	return k, token, nil
}

// FromToken returns the key of a token made elsewhere (a bootstrap key file), so that the token authenticates
// as the key. Errors: validation (a token that is not "ebk_<id>_<secret>" with a 32-byte secret).
func FromToken(token, accountID string, spec Spec, createdBy string, now time.Time) (*Key, error) {
	id, secret, ok := parse(token)
	if !ok {
		return nil, domain.Invalid("token", "an API key must read %s_<16 base32 characters>_<43 base64url characters>", Prefix)
	}
	return build(id, accountID, spec, secret, createdBy, now)
}

func build(id, accountID string, spec Spec, secret, createdBy string, now time.Time) (*Key, error) {
	if err := domain.ValidateAccountID(accountID); err != nil {
		return nil, err
	}
	if err := domain.ValidateName("name", spec.Name); err != nil {
		return nil, err
	}
	if _, err := access.ParseRole("role", string(spec.Role)); err != nil {
		return nil, err
	}
	now = now.UTC().Truncate(time.Microsecond)
	if err := domain.ValidateExpiry(spec.ExpiresAt, now); err != nil {
		return nil, err
	}
	if spec.InstanceAdmin && spec.Role != access.Admin {
		return nil, domain.Invalid("role", "an instance administrator's key has role admin")
	}
	var buses []string
	if len(spec.Buses) > 0 {
		if !spec.Role.Grants(access.PutEvents) {
			return nil, domain.Invalid("buses", "buses restricts the buses a key puts events on; role %q cannot put events", spec.Role)
		}
		if len(spec.Buses) > 100 {
			return nil, domain.Invalid("buses", "a key names at most 100 buses")
		}
		for _, b := range spec.Buses {
			if err := domain.ValidateBusName("buses", b); err != nil {
				return nil, err
			}
			if !slices.Contains(buses, b) {
				buses = append(buses, b)
			}
		}
	}
	k := &Key{id: id, accountID: accountID, name: spec.Name, role: spec.Role, instanceAdmin: spec.InstanceAdmin,
		buses: buses, secretHash: sha256.Sum256([]byte(secret)), createdBy: createdBy, createdAt: now}
	if !spec.ExpiresAt.IsZero() {
		k.expiresAt = spec.ExpiresAt.UTC().Truncate(time.Microsecond)
	}
	return k, nil
}

// parse splits a token into its id and secret; ok is false when it does not have the form of a key.
func parse(token string) (id, secret string, ok bool) { return domain.ParseToken(Prefix, token) }

// UnmarshalFromDatabase rebuilds a key from storage without validation.
func UnmarshalFromDatabase(id, accountID, name string, role access.Role, instanceAdmin bool, buses []string,
	secretHash [sha256.Size]byte, createdBy string, createdAt, expiresAt, lastUsedAt, revokedAt time.Time) *Key {
	return &Key{id: id, accountID: accountID, name: name, role: role, instanceAdmin: instanceAdmin, buses: buses,
		secretHash: secretHash, createdBy: createdBy, createdAt: createdAt, expiresAt: expiresAt,
		lastUsedAt: lastUsedAt, revokedAt: revokedAt}
}

func (k *Key) ID() string                    { return k.id }
func (k *Key) AccountID() string             { return k.accountID }
func (k *Key) Name() string                  { return k.name }
func (k *Key) Role() access.Role             { return k.role }
func (k *Key) InstanceAdmin() bool           { return k.instanceAdmin }
func (k *Key) Buses() []string               { return slices.Clone(k.buses) }
func (k *Key) SecretHash() [sha256.Size]byte { return k.secretHash }
func (k *Key) CreatedBy() string             { return k.createdBy }
func (k *Key) CreatedAt() time.Time          { return k.createdAt }
func (k *Key) ExpiresAt() time.Time          { return k.expiresAt }
func (k *Key) LastUsedAt() time.Time         { return k.lastUsedAt }
func (k *Key) RevokedAt() time.Time          { return k.revokedAt }
func (k *Key) Revoked() bool                 { return !k.revokedAt.IsZero() }

// Expired reports whether the key's expiry has passed at now.
func (k *Key) Expired(now time.Time) bool { return !k.expiresAt.IsZero() && !now.Before(k.expiresAt) }

// Live reports whether the key authenticates at now: neither revoked nor expired.
func (k *Key) Live(now time.Time) bool { return !k.Revoked() && !k.Expired(now) }

// DisplayPrefix is the public part of the token, "ebk_<id>", which lists show so that people recognise a key.
func (k *Key) DisplayPrefix() string { return Prefix + "_" + k.id }

// Principal is the caller that the key authenticates.
func (k *Key) Principal() *access.Principal {
	return access.KeyPrincipal(k.id, k.name, k.accountID, k.role, k.instanceAdmin, k.buses, k.expiresAt)
}

// Repository stores keys.
type Repository interface {
	// Create stores a new key, refusing it with ErrTooManyWithName when its account already holds
	// MaxLiveWithName live keys of its name (counted in the same transaction).
	Create(ctx context.Context, k *Key, now time.Time) error
	// Get returns the key with id, revoked or not; ErrNotFound.
	Get(ctx context.Context, id string) (*Key, error)
	// List returns a page of the account's keys that are not revoked, ordered by name then creation.
	List(ctx context.Context, accountID string, page domain.Page) ([]*Key, string, error)
	// Revoke marks the account's key revoked at now; ErrNotFound when the account has no live key with id.
	Revoke(ctx context.Context, accountID, id string, now time.Time) error
	// Touch records that the key was used at t.
	Touch(ctx context.Context, id string, t time.Time) error
	// CountInstanceAdminKeys counts the live instance administrators' keys.
	CountInstanceAdminKeys(ctx context.Context, now time.Time) (int, error)
	// DeleteAccount deletes every key of the account.
	DeleteAccount(ctx context.Context, accountID string) error
}

// Errors of keys.
var (
	ErrNotFound        = &domain.Error{Kind: domain.KindNotFound, Code: "ApiKeyNotFound"}
	ErrTooManyWithName = &domain.Error{Kind: domain.KindConflict, Code: "ApiKeyNameInUse"}
)
