package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/user"
)

var _ user.Repository = (*UserRepository)(nil)

type userRow struct {
	ID            string    `gorm:"column:id;primaryKey"`
	Username      string    `gorm:"column:username"`
	PasswordHash  string    `gorm:"column:password_hash"`
	Disabled      bool      `gorm:"column:disabled"`
	InstanceAdmin bool      `gorm:"column:instance_admin"`
	CreatedAt     time.Time `gorm:"column:created_at;autoCreateTime:false"`
	UpdatedAt     time.Time `gorm:"column:updated_at;autoUpdateTime:false"`
}

func (userRow) TableName() string { return "users" }

type membershipRow struct {
	AccountID string    `gorm:"column:account_id;primaryKey"`
	UserID    string    `gorm:"column:user_id;primaryKey"`
	Role      string    `gorm:"column:role"`
	CreatedAt time.Time `gorm:"column:created_at;autoCreateTime:false"`
	// Username is read from users with the membership.
	Username string `gorm:"column:username;->"`
}

func (membershipRow) TableName() string { return "memberships" }

func userToRow(u *user.User) userRow {
	return userRow{ID: u.ID(), Username: u.Username(), PasswordHash: u.PasswordHash(), Disabled: u.Disabled(),
		InstanceAdmin: u.InstanceAdmin(), CreatedAt: toDB(u.CreatedAt()), UpdatedAt: toDB(u.UpdatedAt())}
}

func userFromRow(r userRow) *user.User {
	return user.UnmarshalFromDatabase(r.ID, r.Username, r.PasswordHash, r.Disabled, r.InstanceAdmin, fromDB(r.CreatedAt), fromDB(r.UpdatedAt))
}

func membershipFromRow(r membershipRow) user.Membership {
	return user.Membership{AccountID: r.AccountID, UserID: r.UserID, Username: r.Username, Role: access.Role(r.Role),
		CreatedAt: fromDB(r.CreatedAt)}
}

// UserRepository stores users in the users table and their memberships in memberships.
type UserRepository struct {
	db *DB
}

// NewUserRepository returns the user repository of db.
func NewUserRepository(db *DB) *UserRepository { return &UserRepository{db: db} }

func userNotFound(name string) error { return user.ErrNotFound.With("user %q not found", name) }

// Create inserts a new user; user.ErrAlreadyExists when its name is taken.
func (r *UserRepository) Create(ctx context.Context, u *user.User) error {
	row := userToRow(u)
	return translate(r.db.session(ctx).Create(&row).Error, "storing user "+u.Username(), outcomes{
		duplicate: user.ErrAlreadyExists.With("user %q already exists", u.Username()),
	})
}

// Get returns user.ErrNotFound when no user has the name.
func (r *UserRepository) Get(ctx context.Context, username string) (*user.User, error) {
	var row userRow
	if err := r.db.session(ctx).Where("username = ?", username).Take(&row).Error; err != nil {
		return nil, translate(err, "reading user "+username, outcomes{notFound: userNotFound(username)})
	}
	return userFromRow(row), nil
}

// GetByID returns user.ErrNotFound when no user has the id.
func (r *UserRepository) GetByID(ctx context.Context, id string) (*user.User, error) {
	var row userRow
	if err := r.db.session(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return nil, translate(err, "reading user "+id, outcomes{notFound: user.ErrNotFound.With("user %q not found", id)})
	}
	return userFromRow(row), nil
}

// List returns one page of users ordered by name and the next page's token.
func (r *UserRepository) List(ctx context.Context, page domain.Page) ([]*user.User, string, error) {
	q := r.db.session(ctx)
	if key, err := domain.DecodeKeyToken(page.Token); err == nil && page.Token != "" {
		q = q.Where("username > ?", key[0])
	}
	var rows []userRow
	if err := q.Order("username").Limit(pageLimit(page) + 1).Find(&rows).Error; err != nil {
		return nil, "", translate(err, "listing users", outcomes{})
	}
	rows, next := cutKeyPage(rows, page, func(r userRow) []string { return []string{r.Username} })
	return fromRows(rows, userFromRow), next, nil
}

// Update changes a user in one transaction, its row locked.
func (r *UserRepository) Update(ctx context.Context, username string, fn func(*user.User) error) (*user.User, error) {
	var out *user.User
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var row userRow
		if err := forUpdate(tx).Where("username = ?", username).Take(&row).Error; err != nil {
			return err
		}
		u := userFromRow(row)
		if err := fn(u); err != nil {
			return err
		}
		if err := tx.Model(&userRow{}).Where("id = ?", row.ID).Updates(map[string]any{
			"password_hash": u.PasswordHash(), "disabled": u.Disabled(), "instance_admin": u.InstanceAdmin(),
			"updated_at": toDB(u.UpdatedAt()),
		}).Error; err != nil {
			return err
		}
		out = u
		return nil
	})
	return out, translate(err, "changing user "+username, outcomes{notFound: userNotFound(username)})
}

// Delete deletes the user with its memberships and sessions in one transaction.
func (r *UserRepository) Delete(ctx context.Context, username string) error {
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var row userRow
		if err := forUpdate(tx).Where("username = ?", username).Take(&row).Error; err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", row.ID).Delete(&membershipRow{}).Error; err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", row.ID).Delete(&sessionRow{}).Error; err != nil {
			return err
		}
		return tx.Where("id = ?", row.ID).Delete(&userRow{}).Error
	})
	return translate(err, "deleting user "+username, outcomes{notFound: userNotFound(username)})
}

// CountInstanceAdmins counts the enabled instance administrators.
func (r *UserRepository) CountInstanceAdmins(ctx context.Context) (int, error) {
	var n int64
	err := r.db.session(ctx).Model(&userRow{}).Where("instance_admin = ? AND disabled = ?", true, false).Count(&n).Error
	return int(n), translate(err, "counting instance administrators", outcomes{})
}

// PutMembership inserts or changes a membership; created tells which.
func (r *UserRepository) PutMembership(ctx context.Context, m user.Membership) (bool, error) {
	created := false
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var rows []membershipRow
		if err := forUpdate(tx).Where("account_id = ? AND user_id = ?", m.AccountID, m.UserID).Find(&rows).Error; err != nil {
			return err
		}
		if len(rows) > 0 {
			return tx.Model(&membershipRow{}).Where("account_id = ? AND user_id = ?", m.AccountID, m.UserID).
				Update("role", string(m.Role)).Error
		}
		created = true
		row := membershipRow{AccountID: m.AccountID, UserID: m.UserID, Role: string(m.Role), CreatedAt: toDB(m.CreatedAt)}
		return tx.Omit("username").Create(&row).Error
	})
	return created, translate(err, "storing a membership of account "+m.AccountID, outcomes{})
}

// DeleteMembership deletes a membership; user.ErrMembershipNotFound when there is none.
func (r *UserRepository) DeleteMembership(ctx context.Context, accountID, userID string) error {
	res := r.db.session(ctx).Where("account_id = ? AND user_id = ?", accountID, userID).Delete(&membershipRow{})
	if res.Error != nil {
		return translate(res.Error, "deleting a membership of account "+accountID, outcomes{})
	}
	if res.RowsAffected == 0 {
		return user.ErrMembershipNotFound.With("the user is not a member of account %q", accountID)
	}
	return nil
}

func (r *UserRepository) membershipQuery(ctx context.Context) *gorm.DB {
	return r.db.session(ctx).Table("memberships").
		Select("memberships.account_id, memberships.user_id, memberships.role, memberships.created_at, users.username").
		Joins("JOIN users ON users.id = memberships.user_id")
}

// Memberships returns the user's memberships ordered by account.
func (r *UserRepository) Memberships(ctx context.Context, userID string) ([]user.Membership, error) {
	var rows []membershipRow
	err := r.membershipQuery(ctx).Where("memberships.user_id = ?", userID).Order("memberships.account_id").Find(&rows).Error
	if err != nil {
		return nil, translate(err, "reading memberships", outcomes{})
	}
	return fromRows(rows, membershipFromRow), nil
}

// Members returns one page of the account's memberships ordered by user name.
func (r *UserRepository) Members(ctx context.Context, accountID string, page domain.Page) ([]user.Membership, string, error) {
	q := r.membershipQuery(ctx).Where("memberships.account_id = ?", accountID)
	if key, err := domain.DecodeKeyToken(page.Token); err == nil && page.Token != "" {
		q = q.Where("users.username > ?", key[0])
	}
	var rows []membershipRow
	if err := q.Order("users.username").Limit(pageLimit(page) + 1).Find(&rows).Error; err != nil {
		return nil, "", translate(err, "listing members of account "+accountID, outcomes{})
	}
	rows, next := cutKeyPage(rows, page, func(r membershipRow) []string { return []string{r.Username} })
	return fromRows(rows, membershipFromRow), next, nil
}

// DeleteMembershipsOf deletes every membership of the account.
func (r *UserRepository) DeleteMembershipsOf(ctx context.Context, accountID string) error {
	err := r.db.session(ctx).Where("account_id = ?", accountID).Delete(&membershipRow{}).Error
	return translate(err, "deleting the memberships of account "+accountID, outcomes{})
}

// cutKeyPage is cutPage for lists whose page token is a composite key (domain.EncodeKeyToken).
func cutKeyPage[R any](rows []R, p domain.Page, key func(R) []string) ([]R, string) {
	limit := pageLimit(p)
	if len(rows) <= limit {
		return rows, ""
	}
	rows = rows[:limit]
	return rows, domain.EncodeKeyToken(key(rows[limit-1])...)
}
