package persistence

import (
	"context"
	"time"

	"gorm.io/gorm/clause"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/account"
)

var _ account.Repository = (*AccountRepository)(nil)

type accountRow struct {
	ID                 string    `gorm:"column:id;primaryKey"`
	CreatedAt          time.Time `gorm:"column:created_at;autoCreateTime:false"`
	PutEventsPerSecond int       `gorm:"column:put_events_per_second"`
}

func (r accountRow) account() *account.Account {
	return account.UnmarshalFromDatabase(r.ID, fromDB(r.CreatedAt), account.Limits{PutEventsPerSecond: r.PutEventsPerSecond})
}

func (accountRow) TableName() string { return "accounts" }

// AccountRepository stores accounts in the accounts table.
type AccountRepository struct {
	db *DB
}

// NewAccountRepository returns the account repository of db.
func NewAccountRepository(db *DB) *AccountRepository { return &AccountRepository{db: db} }

// Create inserts a new account; account.ErrAlreadyExists when its id is taken.
func (r *AccountRepository) Create(ctx context.Context, a *account.Account) error {
	row := accountRow{ID: a.ID(), CreatedAt: toDB(a.CreatedAt()), PutEventsPerSecond: a.Limits().PutEventsPerSecond}
	err := r.db.session(ctx).Create(&row).Error
	return translate(err, "storing account "+a.ID(), outcomes{
		duplicate: account.ErrAlreadyExists.With("account %q already exists", a.ID()),
	})
}

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
	return row.account(), nil
}

// List returns one page of accounts ordered by id and the next page's token.
func (r *AccountRepository) List(ctx context.Context, page domain.Page) ([]*account.Account, string, error) {
	q := r.db.session(ctx)
	if after := page.After(); after != "" {
		q = q.Where("id > ?", after)
	}
	if page.Prefix != "" {
		q = q.Where("id >= ? AND id < ?", page.Prefix, page.Prefix+"~")
	}
	var rows []accountRow
	if err := q.Order("id").Limit(pageLimit(page) + 1).Find(&rows).Error; err != nil {
		return nil, "", translate(err, "listing accounts", outcomes{})
	}
	rows, next := cutPage(rows, page, func(r accountRow) string { return r.ID })
	return fromRows(rows, accountRow.account), next, nil
}

// Delete deletes the account's row; account.ErrNotFound when there is none.
func (r *AccountRepository) Delete(ctx context.Context, id string) error {
	res := r.db.session(ctx).Where("id = ?", id).Delete(&accountRow{})
	if res.Error != nil {
		return translate(res.Error, "deleting account "+id, outcomes{})
	}
	if res.RowsAffected == 0 { // MySQL counts changed rows: the same limits again change none
		_, err := r.Get(ctx, id)
		return err
	}
	return nil
}

// SetLimits stores the account's limits; account.ErrNotFound when there is no such account.
func (r *AccountRepository) SetLimits(ctx context.Context, id string, limits account.Limits) error {
	res := r.db.session(ctx).Model(&accountRow{}).Where("id = ?", id).
		Update("put_events_per_second", limits.PutEventsPerSecond)
	if res.Error != nil {
		return translate(res.Error, "storing the limits of account "+id, outcomes{})
	}
	if res.RowsAffected == 0 { // MySQL counts changed rows: the same limits again change none
		_, err := r.Get(ctx, id)
		return err
	}
	return nil
}
