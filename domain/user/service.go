package user

import (
	"context"
	"errors"
	"sync"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/account"
)

// Service holds the use cases of users and memberships. Users are managed by instance administrators; an
// account's administrators manage its members.
type Service struct {
	Users    Repository
	Accounts account.Repository
	Hasher   PasswordHasher
	Clock    domain.Clock
	// Sessions, when set, are ended when a user's password changes or the user is disabled or deleted.
	Sessions SessionEnder

	dummyOnce sync.Once
	dummy     string
}

// SessionEnder ends the console sessions of a user (*session.Service is one).
type SessionEnder interface {
	EndSessionsOf(ctx context.Context, userID string) error
}

// Spec declares a new user.
type Spec struct {
	Username      string
	Password      string
	InstanceAdmin bool
}

// Create creates a user. Errors: validation, ErrAlreadyExists.
func (s *Service) Create(ctx context.Context, spec Spec) (*User, error) {
	u, err := New(spec.Username, spec.Password, spec.InstanceAdmin, s.Hasher, s.Clock.Now())
	if err != nil {
		return nil, err
	}
	if err := s.Users.Create(ctx, u); err != nil {
		return nil, err
	}
	return u, nil
}

// Get returns ErrNotFound for an unknown user.
func (s *Service) Get(ctx context.Context, username string) (*User, error) {
	name, err := NormalizeUsername("username", username)
	if err != nil {
		return nil, ErrNotFound.With("user %q not found", username)
	}
	return s.Users.Get(ctx, name)
}

// List returns a page of users.
func (s *Service) List(ctx context.Context, page domain.Page) ([]*User, string, error) {
	return s.Users.List(ctx, page)
}

// Patch changes a user's password, disabled flag or instance-administrator flag. It refuses to leave the
// installation without an enabled instance administrator (ErrLastAdmin). Errors: validation, ErrNotFound.
func (s *Service) Patch(ctx context.Context, username string, p Patch) (*User, error) {
	u, err := s.Get(ctx, username)
	if err != nil {
		return nil, err
	}
	demotes := u.InstanceAdmin() && !u.Disabled() &&
		((p.Disabled != nil && *p.Disabled) || (p.InstanceAdmin != nil && !*p.InstanceAdmin))
	if demotes {
		if err := s.keepAnAdmin(ctx, u); err != nil {
			return nil, err
		}
	}
	out, err := s.Users.Update(ctx, u.Username(), func(u *User) error { return u.Apply(p, s.Hasher, s.Clock.Now()) })
	if err != nil {
		return nil, err
	}
	if p.Password != nil || (p.Disabled != nil && *p.Disabled) {
		if err := s.endSessions(ctx, out.ID()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ChangePassword changes the password of the user id after checking its current one, and ends its sessions.
// Errors: access.ErrForbidden for a wrong current password, validation of the new one, ErrNotFound.
func (s *Service) ChangePassword(ctx context.Context, id, current, next string) error {
	u, err := s.Users.GetByID(ctx, id)
	if err != nil {
		return err
	}
	if ok, verr := s.Hasher.Verify(current, u.PasswordHash()); verr != nil || !ok {
		return access.ErrForbidden.With("the current password is wrong").WithField("currentPassword")
	}
	if next == current {
		return domain.Invalid("newPassword", "the new password is the current one")
	}
	if err := CheckPassword(next); err != nil {
		if de, ok := domain.As(err); ok {
			return de.WithField("newPassword")
		}
		return err
	}
	_, err = s.Patch(ctx, u.Username(), Patch{Password: &next})
	return err
}

func (s *Service) endSessions(ctx context.Context, userID string) error {
	if s.Sessions == nil {
		return nil
	}
	return s.Sessions.EndSessionsOf(ctx, userID)
}

// Delete deletes a user and its memberships; not the last enabled instance administrator. Errors: ErrNotFound,
// ErrLastAdmin.
func (s *Service) Delete(ctx context.Context, username string) error {
	u, err := s.Get(ctx, username)
	if err != nil {
		return err
	}
	if u.InstanceAdmin() && !u.Disabled() {
		if err := s.keepAnAdmin(ctx, u); err != nil {
			return err
		}
	}
	if err := s.Users.Delete(ctx, u.Username()); err != nil {
		return err
	}
	return s.endSessions(ctx, u.ID()) // the rows went with the user; this forgets the cached ones
}

func (s *Service) keepAnAdmin(ctx context.Context, u *User) error {
	n, err := s.Users.CountInstanceAdmins(ctx)
	if err != nil {
		return err
	}
	if n <= 1 {
		return ErrLastAdmin.With("user %q is the last enabled instance administrator; make another one first", u.Username())
	}
	return nil
}

// Authenticate checks a login name and password and returns the user's principal. An unknown name, a wrong
// password and a disabled user all answer access.ErrUnauthenticated, after the same slow hash.
func (s *Service) Authenticate(ctx context.Context, username, password string) (*access.Principal, error) {
	u, err := s.Get(ctx, username)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	encoded := s.dummyHash()
	if u != nil {
		encoded = u.PasswordHash()
	}
	ok, verr := s.Hasher.Verify(password, encoded)
	if verr != nil || !ok || u == nil || u.Disabled() {
		return nil, access.Unauthenticated()
	}
	return s.Principal(ctx, u)
}

// dummyHash is a hash that no password matches in practice, verified for unknown users so that they take as
// long as known ones.
func (s *Service) dummyHash() string {
	s.dummyOnce.Do(func() {
		s.dummy, _ = s.Hasher.Hash(domain.NewID() + domain.NewID())
	})
	return s.dummy
}

// PrincipalByID returns the principal of the user id (session.Users): access.ErrUnauthenticated when there is no
// such user or it is disabled.
func (s *Service) PrincipalByID(ctx context.Context, id string) (*access.Principal, error) {
	u, err := s.Users.GetByID(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, access.Unauthenticated()
	}
	if err != nil {
		return nil, err
	}
	if u.Disabled() {
		return nil, access.Unauthenticated()
	}
	return s.Principal(ctx, u)
}

// Principal returns the principal of u with its memberships.
func (s *Service) Principal(ctx context.Context, u *User) (*access.Principal, error) {
	ms, err := s.Users.Memberships(ctx, u.ID())
	if err != nil {
		return nil, err
	}
	roles := make(map[string]access.Role, len(ms))
	for _, m := range ms {
		roles[m.AccountID] = m.Role
	}
	return access.UserPrincipal(u.ID(), u.Username(), u.InstanceAdmin(), roles), nil
}

// SetMember gives the user named username role in the account (created tells whether it was a member before).
// Errors: validation, ErrNotFound (the user), account.ErrNotFound.
func (s *Service) SetMember(ctx context.Context, accountID, username string, role access.Role) (Membership, bool, error) {
	if _, err := access.ParseRole("role", string(role)); err != nil {
		return Membership{}, false, err
	}
	if _, err := s.Accounts.Get(ctx, accountID); err != nil {
		return Membership{}, false, err
	}
	u, err := s.Get(ctx, username)
	if err != nil {
		return Membership{}, false, err
	}
	m := Membership{AccountID: accountID, UserID: u.ID(), Username: u.Username(), Role: role, CreatedAt: s.Clock.Now()}
	created, err := s.Users.PutMembership(ctx, m)
	return m, created, err
}

// RemoveMember ends a membership. Errors: ErrNotFound (the user), ErrMembershipNotFound.
func (s *Service) RemoveMember(ctx context.Context, accountID, username string) error {
	u, err := s.Get(ctx, username)
	if err != nil {
		return err
	}
	return s.Users.DeleteMembership(ctx, accountID, u.ID())
}

// Members returns a page of the account's members.
func (s *Service) Members(ctx context.Context, accountID string, page domain.Page) ([]Membership, string, error) {
	return s.Users.Members(ctx, accountID, page)
}

// Memberships returns the memberships of the user named username.
func (s *Service) Memberships(ctx context.Context, username string) ([]Membership, error) {
	u, err := s.Get(ctx, username)
	if err != nil {
		return nil, err
	}
	return s.Users.Memberships(ctx, u.ID())
}

// PurgeAccount deletes the account's memberships (account.Purger).
func (s *Service) PurgeAccount(ctx context.Context, accountID string) error {
	return s.Users.DeleteMembershipsOf(ctx, accountID)
}

var _ account.Purger = (*Service)(nil)
