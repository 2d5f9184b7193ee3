// Package user holds the users of an installation: a login name, a password (stored only as a slow hash), a
// disabled flag, an instance-administrator flag, and memberships in accounts with one role each.
package user

import (
	"context"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
)

// Password length limits, in bytes.
const (
	MinPasswordLength = 8
	MaxPasswordLength = 256
)

var usernameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._@+-]{0,63}$`)

// NormalizeUsername returns the stored form of a login name (lower case) or a validation error.
func NormalizeUsername(field, s string) (string, error) {
	n := strings.ToLower(s)
	if !usernameRe.MatchString(n) {
		return "", domain.Invalid(field, "%s %q must be 1 to 64 characters of a-z, 0-9, '.', '_', '@', '+' and '-', starting with a letter or digit", field, s)
	}
	return n, nil
}

// CheckPassword reports a password too short or too long to be taken.
func CheckPassword(p string) error {
	switch {
	case len(p) < MinPasswordLength:
		return domain.Invalid("password", "password must be at least %d characters long", MinPasswordLength)
	case len(p) > MaxPasswordLength:
		return domain.Invalid("password", "password must be at most %d bytes long", MaxPasswordLength)
	case !utf8.ValidString(p):
		return domain.Invalid("password", "password must be UTF-8 text")
	}
	return nil
}

// PasswordHasher hashes passwords with a slow, salted hash (argon2id) and checks them. Implementations are
// safe for concurrent use.
type PasswordHasher interface {
	// Hash returns the encoded hash of password, salt and parameters included.
	Hash(password string) (string, error)
	// Verify reports whether password matches the encoded hash, in constant time over the hash.
	Verify(password, encoded string) (bool, error)
}

// User is a person who signs in to the console.
type User struct {
	id            string
	username      string
	passwordHash  string
	disabled      bool
	instanceAdmin bool
	createdAt     time.Time
	updatedAt     time.Time
}

// New returns a user with a validated name; the password is hashed with h.
func New(username, password string, instanceAdmin bool, h PasswordHasher, now time.Time) (*User, error) {
	name, err := NormalizeUsername("username", username)
	if err != nil {
		return nil, err
	}
	hash, err := hashPassword(h, password)
	if err != nil {
		return nil, err
	}
	now = now.UTC()
	return &User{id: domain.NewID(), username: name, passwordHash: hash, instanceAdmin: instanceAdmin,
		createdAt: now, updatedAt: now}, nil
}

func hashPassword(h PasswordHasher, password string) (string, error) {
	if err := CheckPassword(password); err != nil {
		return "", err
	}
	return h.Hash(password)
}

// UnmarshalFromDatabase rebuilds a user from storage without validation.
func UnmarshalFromDatabase(id, username, passwordHash string, disabled, instanceAdmin bool, createdAt, updatedAt time.Time) *User {
	return &User{id: id, username: username, passwordHash: passwordHash, disabled: disabled, instanceAdmin: instanceAdmin,
		createdAt: createdAt, updatedAt: updatedAt}
}

func (u *User) ID() string           { return u.id }
func (u *User) Username() string     { return u.username }
func (u *User) PasswordHash() string { return u.passwordHash }
func (u *User) Disabled() bool       { return u.disabled }
func (u *User) InstanceAdmin() bool  { return u.instanceAdmin }
func (u *User) CreatedAt() time.Time { return u.createdAt }
func (u *User) UpdatedAt() time.Time { return u.updatedAt }

// Patch is a change of a user; nil fields stay.
type Patch struct {
	Password      *string
	Disabled      *bool
	InstanceAdmin *bool
}

// Apply changes the user; the new password is hashed with h.
func (u *User) Apply(p Patch, h PasswordHasher, now time.Time) error {
	if p.Password != nil {
		hash, err := hashPassword(h, *p.Password)
		if err != nil {
			return err
		}
		u.passwordHash = hash
	}
	if p.Disabled != nil {
		u.disabled = *p.Disabled
	}
	if p.InstanceAdmin != nil {
		u.instanceAdmin = *p.InstanceAdmin
	}
	u.updatedAt = now.UTC()
	return nil
}

// Membership is a user's role in an account.
type Membership struct {
	AccountID string
	UserID    string
	// Username is the member's login name (read with the membership).
	Username  string
	Role      access.Role
	CreatedAt time.Time
}

// Repository stores users and memberships.
type Repository interface {
	// Create stores a new user; ErrAlreadyExists when its name is taken.
	Create(ctx context.Context, u *User) error
	// Get returns the user named username; ErrNotFound.
	Get(ctx context.Context, username string) (*User, error)
	// GetByID returns the user id; ErrNotFound.
	GetByID(ctx context.Context, id string) (*User, error)
	// List returns a page of users ordered by name (Page.Token from the previous page).
	List(ctx context.Context, page domain.Page) ([]*User, string, error)
	// Update reads the user, calls fn and stores what it left, in one transaction; ErrNotFound.
	Update(ctx context.Context, username string, fn func(*User) error) (*User, error)
	// Delete deletes the user with its memberships and sessions; ErrNotFound.
	Delete(ctx context.Context, username string) error
	// CountInstanceAdmins counts the instance administrators that are not disabled.
	CountInstanceAdmins(ctx context.Context) (int, error)

	// PutMembership creates or changes a membership; created tells which.
	PutMembership(ctx context.Context, m Membership) (created bool, err error)
	// DeleteMembership deletes one; ErrMembershipNotFound.
	DeleteMembership(ctx context.Context, accountID, userID string) error
	// Memberships are the user's memberships, ordered by account.
	Memberships(ctx context.Context, userID string) ([]Membership, error)
	// Members are a page of the account's memberships ordered by user name.
	Members(ctx context.Context, accountID string, page domain.Page) ([]Membership, string, error)
	// DeleteMembershipsOf deletes every membership of the account.
	DeleteMembershipsOf(ctx context.Context, accountID string) error
}

// Errors of users.
var (
	ErrNotFound           = &domain.Error{Kind: domain.KindNotFound, Code: "UserNotFound"}
	ErrAlreadyExists      = &domain.Error{Kind: domain.KindConflict, Code: "UserAlreadyExists"}
	ErrMembershipNotFound = &domain.Error{Kind: domain.KindNotFound, Code: "MemberNotFound"}
	// ErrLastAdmin refuses leaving the installation without an instance administrator.
	ErrLastAdmin = &domain.Error{Kind: domain.KindConflict, Code: "LastInstanceAdmin"}
)
