package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
)

var _ bus.Repository = (*BusRepository)(nil)

type busRow struct {
	ID                     string    `gorm:"column:id;primaryKey"`
	AccountID              string    `gorm:"column:account_id"`
	Name                   string    `gorm:"column:name"`
	Description            string    `gorm:"column:description"`
	RetentionMaxAgeSeconds int64     `gorm:"column:retention_max_age_seconds"`
	RetentionMaxBytes      int64     `gorm:"column:retention_max_bytes"`
	LogLevel               string    `gorm:"column:log_level"`
	LogIncludeDetail       string    `gorm:"column:log_include_detail"`
	CreatedAt              time.Time `gorm:"column:created_at;autoCreateTime:false"`
	UpdatedAt              time.Time `gorm:"column:updated_at;autoUpdateTime:false"`
}

func (busRow) TableName() string { return "buses" }

func busToRow(b *bus.Bus) busRow {
	created := toDB(b.CreatedAt())
	return busRow{
		ID: b.ID(), AccountID: b.AccountID(), Name: b.Name(), Description: b.Description(),
		RetentionMaxAgeSeconds: int64(b.Retention().MaxAge / time.Second), RetentionMaxBytes: b.Retention().MaxBytes,
		LogLevel: b.Log().Level, LogIncludeDetail: b.Log().IncludeDetail,
		CreatedAt: created, UpdatedAt: created,
	}
}

func busFromRow(row busRow) *bus.Bus {
	retention := bus.Retention{MaxAge: time.Duration(row.RetentionMaxAgeSeconds) * time.Second, MaxBytes: row.RetentionMaxBytes}
	return bus.UnmarshalFromDatabase(row.ID, row.AccountID, row.Name, row.Description, retention, fromDB(row.CreatedAt)).
		WithLog(bus.LogConfig{Level: row.LogLevel, IncludeDetail: row.LogIncludeDetail})
}

// BusRepository stores buses in the buses table. Names are unique per account and case-sensitive. The retention's
// maximum age is stored in whole seconds.
type BusRepository struct {
	db *DB
}

// NewBusRepository returns the bus repository of db.
func NewBusRepository(db *DB) *BusRepository { return &BusRepository{db: db} }

// Create stores a new bus; bus.ErrAlreadyExists when the account has a bus of that name.
func (r *BusRepository) Create(ctx context.Context, b *bus.Bus) error {
	row := busToRow(b)
	err := r.db.session(ctx).Create(&row).Error
	return translate(err, "storing bus "+b.Name(), outcomes{
		duplicate: bus.ErrAlreadyExists.With("bus %q already exists", b.Name()),
	})
}

// Get returns bus.ErrNotFound when the account has no bus of that name.
func (r *BusRepository) Get(ctx context.Context, accountID, name string) (*bus.Bus, error) {
	var row busRow
	err := r.db.hotRead(ctx).Where("account_id = ? AND name = ?", accountID, name).Take(&row).Error
	if err != nil {
		return nil, translate(err, "reading bus "+name, outcomes{notFound: bus.ErrNotFound.With("bus %q not found", name)})
	}
	return busFromRow(row), nil
}

// GetByID returns bus.ErrNotFound when no bus has that id.
func (r *BusRepository) GetByID(ctx context.Context, id string) (*bus.Bus, error) {
	var row busRow
	err := r.db.hotRead(ctx).Where("id = ?", id).Take(&row).Error
	if err != nil {
		return nil, translate(err, "reading bus "+id, outcomes{notFound: bus.ErrNotFound.With("bus %s not found", id)})
	}
	return busFromRow(row), nil
}

// List returns one page of the account's buses ordered by name and the next page's token ("" at the end).
func (r *BusRepository) List(ctx context.Context, accountID string, page domain.Page) ([]*bus.Bus, string, error) {
	var rows []busRow
	err := pageQuery(r.db.session(ctx).Where("account_id = ?", accountID), page).Find(&rows).Error
	if err != nil {
		return nil, "", translate(err, "listing buses", outcomes{})
	}
	rows, next := cutPage(rows, page, func(row busRow) string { return row.Name })
	return fromRows(rows, busFromRow), next, nil
}

// CountByAccount counts the account's buses.
func (r *BusRepository) CountByAccount(ctx context.Context, accountID string) (int, error) {
	var n int64
	if err := r.db.session(ctx).Model(&busRow{}).Where("account_id = ?", accountID).Count(&n).Error; err != nil {
		return 0, translate(err, "counting buses", outcomes{})
	}
	return int(n), nil
}

// Update loads the account's bus with its row locked, lets fn change it and stores its description, retention
// and update time, in one transaction. bus.ErrNotFound when it does not exist; fn's error is returned as is.
func (r *BusRepository) Update(ctx context.Context, accountID, name string, fn func(*bus.Bus) error) (*bus.Bus, error) {
	var (
		stored busRow
		fnErr  error
	)
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var row busRow
		if err := forUpdate(tx).Where("account_id = ? AND name = ?", accountID, name).Take(&row).Error; err != nil {
			return err
		}
		b := busFromRow(row)
		if fnErr = fn(b); fnErr != nil {
			return fnErr
		}
		stored = busToRow(b)
		stored.CreatedAt, stored.UpdatedAt = row.CreatedAt, toDB(time.Now())
		return tx.Model(&busRow{}).Where("id = ?", row.ID).Updates(map[string]any{
			"description":               stored.Description,
			"retention_max_age_seconds": stored.RetentionMaxAgeSeconds,
			"retention_max_bytes":       stored.RetentionMaxBytes,
			"log_level":                 stored.LogLevel,
			"log_include_detail":        stored.LogIncludeDetail,
			"updated_at":                stored.UpdatedAt,
		}).Error
	})
	if fnErr != nil {
		return nil, fnErr
	}
	if err != nil {
		return nil, translate(err, "updating bus "+name, outcomes{notFound: bus.ErrNotFound.With("bus %q not found", name)})
	}
	return busFromRow(stored), nil
}

// Stamp returns a stamp of every bus that changes with every create, update and delete of one (connect.Stamper).
func (r *BusRepository) Stamp(ctx context.Context) (string, error) {
	return stamp(r.db.session(ctx).Model(&busRow{}), "buses")
}

// ListAll returns every bus of every account, ordered by account and name.
func (r *BusRepository) ListAll(ctx context.Context) ([]*bus.Bus, error) {
	var rows []busRow
	if err := r.db.hotRead(ctx).Order("account_id").Order("name").Find(&rows).Error; err != nil {
		return nil, translate(err, "listing buses", outcomes{})
	}
	return fromRows(rows, busFromRow), nil
}

// Delete removes a bus: bus.ErrNotFound when it does not exist, bus.ErrNotEmpty while it has rules. The bus row
// is locked while its rules are counted, and the rules' foreign key refuses a rule created meanwhile.
func (r *BusRepository) Delete(ctx context.Context, id string) error {
	name := id
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var row busRow
		if err := forUpdate(tx).Where("id = ?", id).Take(&row).Error; err != nil {
			return err
		}
		name = row.Name
		var rules int64
		if err := tx.Model(&ruleRow{}).Where("bus_id = ?", id).Count(&rules).Error; err != nil {
			return err
		}
		if rules > 0 {
			return bus.ErrNotEmpty.With("bus %q still has %d rule(s); delete them first", name, rules)
		}
		return tx.Where("id = ?", id).Delete(&busRow{}).Error
	})
	return translate(err, "deleting bus "+name, outcomes{
		notFound:   bus.ErrNotFound.With("bus %s not found", id),
		referenced: bus.ErrNotEmpty.With("bus %q still has rules; delete them first", name),
	})
}
