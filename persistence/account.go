package persistence

import (
	"context"
	"time"

	"gorm.io/gorm/clause"

	"github.com/eventbridge-go/eventbridge/domain/account"
)

var _ account.Repository = (*AccountRepository)(nil)

type accountRow struct {
	ID        string    `gorm:"column:id;primaryKey"`
	CreatedAt time.Time `gorm:"column:created_at;autoCreateTime:false"`
}

func (accountRow) TableName() string { return "accounts" }

// AccountRepository stores accounts in the accounts table.
type AccountRepository struct {
	db *DB
}

// NewAccountRepository returns the account repository of db.
func NewAccountRepository(db *DB) *AccountRepository { return &AccountRepository{db: db} }

// Ensure inserts the account unless it exists (INSERT ... ON CONFLICT DO NOTHING on SQLite, ON DUPLICATE KEY
// UPDATE id = id on MySQL), so concurrent calls for one id all succeed and store it once.
func (r *AccountRepository) Ensure(ctx context.Context, a *account.Account) error {
	row := accountRow{ID: a.ID(), CreatedAt: toDB(a.CreatedAt())}
	err := r.db.session(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error
	return translate(err, "storing account "+a.ID(), outcomes{})
}

// Get returns account.ErrNotFound when the account does not exist.
func (r *AccountRepository) Get(ctx context.Context, id string) (*account.Account, error) {
	var row accountRow
	err := r.db.session(ctx).Where("id = ?", id).Take(&row).Error
	if err != nil {
		return nil, translate(err, "reading account "+id, outcomes{
			notFound: account.ErrNotFound.With("account %q not found", id),
		})
	}
	return account.UnmarshalFromDatabase(row.ID, fromDB(row.CreatedAt)), nil
}
