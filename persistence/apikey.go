package persistence

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/apikey"
)

var _ apikey.Repository = (*APIKeyRepository)(nil)

type apiKeyRow struct {
	ID            string `gorm:"column:id;primaryKey"`
	AccountID     string `gorm:"column:account_id"`
	Name          string `gorm:"column:name"`
	Role          string `gorm:"column:role"`
	InstanceAdmin bool   `gorm:"column:instance_admin"`
	// Buses is a JSON array of bus names, '' for every bus.
	Buses string `gorm:"column:buses"`
	// SecretHash is the hex SHA-256 of the key's secret.
	SecretHash string       `gorm:"column:secret_hash"`
	CreatedBy  string       `gorm:"column:created_by"`
	CreatedAt  time.Time    `gorm:"column:created_at;autoCreateTime:false"`
	ExpiresAt  sql.NullTime `gorm:"column:expires_at"`
	LastUsedAt sql.NullTime `gorm:"column:last_used_at"`
	RevokedAt  sql.NullTime `gorm:"column:revoked_at"`
}

func (apiKeyRow) TableName() string { return "api_keys" }

func nullTime(t time.Time) sql.NullTime {
	if t.IsZero() {
		return sql.NullTime{}
	}
	return sql.NullTime{Time: toDB(t), Valid: true}
}

func fromNullTime(t sql.NullTime) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return fromDB(t.Time)
}

func apiKeyToRow(k *apikey.Key) apiKeyRow {
	buses := ""
	if b := k.Buses(); len(b) > 0 {
		j, _ := json.Marshal(b) // a []string always marshals
		buses = string(j)
	}
	h := k.SecretHash()
	return apiKeyRow{ID: k.ID(), AccountID: k.AccountID(), Name: k.Name(), Role: string(k.Role()), InstanceAdmin: k.InstanceAdmin(),
		Buses: buses, SecretHash: hex.EncodeToString(h[:]), CreatedBy: k.CreatedBy(), CreatedAt: toDB(k.CreatedAt()),
		ExpiresAt: nullTime(k.ExpiresAt()), LastUsedAt: nullTime(k.LastUsedAt()), RevokedAt: nullTime(k.RevokedAt())}
}

func apiKeyFromRow(r apiKeyRow) (*apikey.Key, error) {
	var buses []string
	if r.Buses != "" {
		if err := json.Unmarshal([]byte(r.Buses), &buses); err != nil {
			return nil, fmt.Errorf("reading API key %s: malformed buses", r.ID)
		}
	}
	var h [sha256.Size]byte
	if b, err := hex.DecodeString(r.SecretHash); err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("reading API key %s: malformed secret hash", r.ID)
	} else {
		copy(h[:], b)
	}
	return apikey.UnmarshalFromDatabase(r.ID, r.AccountID, r.Name, access.Role(r.Role), r.InstanceAdmin, buses, h, r.CreatedBy,
		fromDB(r.CreatedAt), fromNullTime(r.ExpiresAt), fromNullTime(r.LastUsedAt), fromNullTime(r.RevokedAt)), nil
}

// APIKeyRepository stores API keys in the api_keys table.
type APIKeyRepository struct {
	db *DB
}

// NewAPIKeyRepository returns the API key repository of db.
func NewAPIKeyRepository(db *DB) *APIKeyRepository { return &APIKeyRepository{db: db} }

func apiKeyNotFound(id string) error { return apikey.ErrNotFound.With("API key %q not found", id) }

// live restricts q to keys neither revoked nor expired at now.
func live(q *gorm.DB, now time.Time) *gorm.DB {
	return q.Where("revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", toDB(now))
}

// Create inserts a key. In one transaction, with the account's row locked so that concurrent creations take
// turns, it counts the account's live keys of the key's name (apikey.ErrTooManyWithName at
// apikey.MaxLiveWithName).
func (r *APIKeyRepository) Create(ctx context.Context, k *apikey.Key, now time.Time) error {
	row := apiKeyToRow(k)
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		if err := lockAccount(tx, k.AccountID()); err != nil {
			return err
		}
		var n int64
		if err := live(tx.Model(&apiKeyRow{}), now).Where("account_id = ? AND name = ?", k.AccountID(), k.Name()).Count(&n).Error; err != nil {
			return err
		}
		if n >= apikey.MaxLiveWithName {
			return apikey.ErrTooManyWithName.With("account %q already has %d live API keys named %q; revoke one to rotate",
				k.AccountID(), n, k.Name())
		}
		return tx.Create(&row).Error
	})
	return translate(err, "storing API key "+k.ID(), outcomes{
		duplicate:     apikey.ErrTooManyWithName.With("an API key with id %q exists", k.ID()),
		missingParent: domain.Invalid("account", "account %q does not exist", k.AccountID()),
	})
}

// Get returns the key with id, revoked or not.
func (r *APIKeyRepository) Get(ctx context.Context, id string) (*apikey.Key, error) {
	var row apiKeyRow
	if err := r.db.session(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return nil, translate(err, "reading API key "+id, outcomes{notFound: apiKeyNotFound(id)})
	}
	return apiKeyFromRow(row)
}

// List returns one page of the account's keys that are not revoked, ordered by name and id.
func (r *APIKeyRepository) List(ctx context.Context, accountID string, page domain.Page) ([]*apikey.Key, string, error) {
	q := r.db.session(ctx).Where("account_id = ? AND revoked_at IS NULL", accountID)
	if key, err := domain.DecodeKeyToken(page.Token); err == nil && page.Token != "" && len(key) == 2 {
		q = q.Where("name > ? OR (name = ? AND id > ?)", key[0], key[0], key[1])
	}
	var rows []apiKeyRow
	if err := q.Order("name, id").Limit(pageLimit(page) + 1).Find(&rows).Error; err != nil {
		return nil, "", translate(err, "listing API keys of account "+accountID, outcomes{})
	}
	rows, next := cutKeyPage(rows, page, func(r apiKeyRow) []string { return []string{r.Name, r.ID} })
	out := make([]*apikey.Key, 0, len(rows))
	for _, row := range rows {
		k, err := apiKeyFromRow(row)
		if err != nil {
			return nil, "", err
		}
		out = append(out, k)
	}
	return out, next, nil
}

// Revoke marks the account's key revoked; apikey.ErrNotFound when the account has no unrevoked key with id.
func (r *APIKeyRepository) Revoke(ctx context.Context, accountID, id string, now time.Time) error {
	res := r.db.session(ctx).Model(&apiKeyRow{}).Where("id = ? AND account_id = ? AND revoked_at IS NULL", id, accountID).
		Update("revoked_at", toDB(now))
	if res.Error != nil {
		return translate(res.Error, "revoking API key "+id, outcomes{})
	}
	if res.RowsAffected == 0 {
		return apiKeyNotFound(id)
	}
	return nil
}

// Touch records the key's last use.
func (r *APIKeyRepository) Touch(ctx context.Context, id string, t time.Time) error {
	err := r.db.session(ctx).Model(&apiKeyRow{}).Where("id = ?", id).Update("last_used_at", toDB(t)).Error
	return translate(err, "recording the use of API key "+id, outcomes{})
}

// CountInstanceAdminKeys counts the live instance administrators' keys.
func (r *APIKeyRepository) CountInstanceAdminKeys(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := live(r.db.session(ctx).Model(&apiKeyRow{}), now).Where("instance_admin = ?", true).Count(&n).Error
	return int(n), translate(err, "counting instance administrators' API keys", outcomes{})
}

// DeleteAccount deletes every key of the account.
func (r *APIKeyRepository) DeleteAccount(ctx context.Context, accountID string) error {
	err := r.db.session(ctx).Where("account_id = ?", accountID).Delete(&apiKeyRow{}).Error
	return translate(err, "deleting the API keys of account "+accountID, outcomes{})
}
