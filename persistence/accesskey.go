package persistence

import (
	"context"
	"database/sql"
	"time"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/accesskey"
)

var _ accesskey.Repository = (*AccessKeyRepository)(nil)

type accessKeyRow struct {
	ID        string `gorm:"column:id;primaryKey"`
	AccountID string `gorm:"column:account_id"`
	Name      string `gorm:"column:name"`
	Role      string `gorm:"column:role"`
	// SealedSecret is the secret access key sealed for the key (accesskey.SecretOwner).
	SealedSecret string       `gorm:"column:sealed_secret"`
	CreatedBy    string       `gorm:"column:created_by"`
	CreatedAt    time.Time    `gorm:"column:created_at;autoCreateTime:false"`
	ExpiresAt    sql.NullTime `gorm:"column:expires_at"`
	LastUsedAt   sql.NullTime `gorm:"column:last_used_at"`
	RevokedAt    sql.NullTime `gorm:"column:revoked_at"`
}

func (accessKeyRow) TableName() string { return "access_keys" }

func accessKeyToRow(k *accesskey.Key) accessKeyRow {
	return accessKeyRow{ID: k.ID(), AccountID: k.AccountID(), Name: k.Name(), Role: string(k.Role()), SealedSecret: k.SealedSecret(),
		CreatedBy: k.CreatedBy(), CreatedAt: toDB(k.CreatedAt()), ExpiresAt: nullTime(k.ExpiresAt()),
		LastUsedAt: nullTime(k.LastUsedAt()), RevokedAt: nullTime(k.RevokedAt())}
}

func accessKeyFromRow(r accessKeyRow) *accesskey.Key {
	return accesskey.UnmarshalFromDatabase(r.ID, r.AccountID, r.Name, access.Role(r.Role), r.SealedSecret, r.CreatedBy,
		fromDB(r.CreatedAt), fromNullTime(r.ExpiresAt), fromNullTime(r.LastUsedAt), fromNullTime(r.RevokedAt))
}

// AccessKeyRepository stores access keys in the access_keys table.
type AccessKeyRepository struct {
	db *DB
}

// NewAccessKeyRepository returns the access key repository of db.
func NewAccessKeyRepository(db *DB) *AccessKeyRepository { return &AccessKeyRepository{db: db} }

func accessKeyNotFound(id string) error {
	return accesskey.ErrNotFound.With("access key %q not found", id)
}

// Create inserts a key. In one transaction, with the account's row locked so that concurrent creations take
// turns, it counts the account's live keys of the key's name (accesskey.ErrTooManyWithName at
// accesskey.MaxLiveWithName).
func (r *AccessKeyRepository) Create(ctx context.Context, k *accesskey.Key, now time.Time) error {
	row := accessKeyToRow(k)
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		if err := lockAccount(tx, k.AccountID()); err != nil {
			return err
		}
		var n int64
		if err := live(tx.Model(&accessKeyRow{}), now).Where("account_id = ? AND name = ?", k.AccountID(), k.Name()).Count(&n).Error; err != nil {
			return err
		}
		if n >= accesskey.MaxLiveWithName {
			return accesskey.ErrTooManyWithName.With("account %q already has %d live access keys named %q; revoke one to rotate",
				k.AccountID(), n, k.Name())
		}
		return tx.Create(&row).Error
	})
	return translate(err, "storing access key "+k.ID(), outcomes{
		duplicate:     accesskey.ErrTooManyWithName.With("an access key with id %q exists", k.ID()),
		missingParent: domain.Invalid("account", "account %q does not exist", k.AccountID()),
	})
}

// Get returns the key with id, revoked or not.
func (r *AccessKeyRepository) Get(ctx context.Context, id string) (*accesskey.Key, error) {
	var row accessKeyRow
	if err := r.db.session(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return nil, translate(err, "reading access key "+id, outcomes{notFound: accessKeyNotFound(id)})
	}
	return accessKeyFromRow(row), nil
}

// List returns one page of the account's keys that are not revoked, ordered by name and id.
func (r *AccessKeyRepository) List(ctx context.Context, accountID string, page domain.Page) ([]*accesskey.Key, string, error) {
	q := r.db.session(ctx).Where("account_id = ? AND revoked_at IS NULL", accountID)
	if key, err := domain.DecodeKeyToken(page.Token); err == nil && page.Token != "" && len(key) == 2 {
		q = q.Where("name > ? OR (name = ? AND id > ?)", key[0], key[0], key[1])
	}
	var rows []accessKeyRow
	if err := q.Order("name, id").Limit(pageLimit(page) + 1).Find(&rows).Error; err != nil {
		return nil, "", translate(err, "listing access keys of account "+accountID, outcomes{})
	}
	rows, next := cutKeyPage(rows, page, func(r accessKeyRow) []string { return []string{r.Name, r.ID} })
	return fromRows(rows, accessKeyFromRow), next, nil
}

// Revoke marks the account's key revoked; accesskey.ErrNotFound when the account has no unrevoked key with id.
func (r *AccessKeyRepository) Revoke(ctx context.Context, accountID, id string, now time.Time) error {
	res := r.db.session(ctx).Model(&accessKeyRow{}).Where("id = ? AND account_id = ? AND revoked_at IS NULL", id, accountID).
		Update("revoked_at", toDB(now))
	if res.Error != nil {
		return translate(res.Error, "revoking access key "+id, outcomes{})
	}
	if res.RowsAffected == 0 {
		return accessKeyNotFound(id)
	}
	return nil
}

// Touch records the key's last use.
func (r *AccessKeyRepository) Touch(ctx context.Context, id string, t time.Time) error {
	err := r.db.session(ctx).Model(&accessKeyRow{}).Where("id = ?", id).Update("last_used_at", toDB(t)).Error
	return translate(err, "recording the use of access key "+id, outcomes{})
}

// DeleteAccount deletes every key of the account.
func (r *AccessKeyRepository) DeleteAccount(ctx context.Context, accountID string) error {
	err := r.db.session(ctx).Where("account_id = ?", accountID).Delete(&accessKeyRow{}).Error
	return translate(err, "deleting the access keys of account "+accountID, outcomes{})
}
