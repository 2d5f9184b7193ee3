package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/archive"
	"github.com/eventbridge-go/eventbridge/domain/bus"
)

var _ archive.Repository = (*ArchiveRepository)(nil)

type archiveRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	AccountID   string `gorm:"column:account_id"`
	BusID       string `gorm:"column:bus_id"`
	Name        string `gorm:"column:name"`
	Description string `gorm:"column:description"`
	// EventPattern is NULL when the archive keeps every event of its bus.
	EventPattern  *string   `gorm:"column:event_pattern"`
	RetentionDays int       `gorm:"column:retention_days"`
	CreatedAt     time.Time `gorm:"column:created_at;autoCreateTime:false"`
	UpdatedAt     time.Time `gorm:"column:updated_at;autoUpdateTime:false"`
}

func (archiveRow) TableName() string { return "archives" }

func archiveToRow(a *archive.Archive) archiveRow {
	row := archiveRow{ID: a.ID(), AccountID: a.AccountID(), BusID: a.BusID(), Name: a.Name(), Description: a.Description(),
		RetentionDays: a.RetentionDays(), CreatedAt: toDB(a.CreatedAt()), UpdatedAt: toDB(a.UpdatedAt())}
	if p := a.EventPattern(); p != nil {
		s := string(p)
		row.EventPattern = &s
	}
	return row
}

func archiveFromRow(row archiveRow) *archive.Archive {
	var p []byte
	if row.EventPattern != nil {
		p = []byte(*row.EventPattern)
	}
	return archive.UnmarshalFromDatabase(row.ID, row.AccountID, row.BusID, row.Name, row.Description, p,
		row.RetentionDays, fromDB(row.CreatedAt), fromDB(row.UpdatedAt))
}

// ArchiveRepository stores archives in the archives table. Names are unique per account and case-sensitive.
type ArchiveRepository struct {
	db *DB
}

// NewArchiveRepository returns the archive repository of db.
func NewArchiveRepository(db *DB) *ArchiveRepository { return &ArchiveRepository{db: db} }

func archiveNotFound(name string) error {
	return archive.ErrNotFound.With("archive %q not found", name)
}

// Create stores a new archive: archive.ErrAlreadyExists when the account has one of that name, bus.ErrNotFound
// when its bus does not exist.
func (r *ArchiveRepository) Create(ctx context.Context, a *archive.Archive) error {
	row := archiveToRow(a)
	err := r.db.session(ctx).Create(&row).Error
	return translate(err, "storing archive "+a.Name(), outcomes{
		duplicate:     archive.ErrAlreadyExists.With("archive %q already exists", a.Name()),
		missingParent: bus.ErrNotFound.With("bus %s not found", a.BusID()),
	})
}

// Get returns archive.ErrNotFound when the account has no archive of that name.
func (r *ArchiveRepository) Get(ctx context.Context, accountID, name string) (*archive.Archive, error) {
	var row archiveRow
	if err := r.db.session(ctx).Where("account_id = ? AND name = ?", accountID, name).Take(&row).Error; err != nil {
		return nil, translate(err, "reading archive "+name, outcomes{notFound: archiveNotFound(name)})
	}
	return archiveFromRow(row), nil
}

// List returns one page of the account's archives (of busID alone when it is not "") ordered by name.
func (r *ArchiveRepository) List(ctx context.Context, accountID, busID string, page domain.Page) ([]*archive.Archive, string, error) {
	q := r.db.session(ctx).Where("account_id = ?", accountID)
	if busID != "" {
		q = q.Where("bus_id = ?", busID)
	}
	var rows []archiveRow
	if err := pageQuery(q, page).Find(&rows).Error; err != nil {
		return nil, "", translate(err, "listing archives", outcomes{})
	}
	rows, next := cutPage(rows, page, func(row archiveRow) string { return row.Name })
	return fromRows(rows, archiveFromRow), next, nil
}

// ListByBus returns every archive of the bus ordered by name.
func (r *ArchiveRepository) ListByBus(ctx context.Context, busID string) ([]*archive.Archive, error) {
	var rows []archiveRow
	if err := r.db.hotRead(ctx).Where("bus_id = ?", busID).Order("name").Find(&rows).Error; err != nil {
		return nil, translate(err, "listing archives", outcomes{})
	}
	return fromRows(rows, archiveFromRow), nil
}

// StampsByBus returns, by bus id, a stamp of the bus's archives that changes with every create, update and delete
// of one of them (connect.BusStamper).
func (r *ArchiveRepository) StampsByBus(ctx context.Context) (map[string]string, error) {
	return stampsByBus(r.db.session(ctx).Model(&archiveRow{}), "archives")
}

// NamesByBus returns the names of the bus's archives, sorted.
func (r *ArchiveRepository) NamesByBus(ctx context.Context, busID string) ([]string, error) {
	var names []string
	if err := r.db.session(ctx).Model(&archiveRow{}).Where("bus_id = ?", busID).Order("name").Pluck("name", &names).Error; err != nil {
		return nil, translate(err, "listing archives", outcomes{})
	}
	return names, nil
}

// CountByAccount counts the account's archives.
func (r *ArchiveRepository) CountByAccount(ctx context.Context, accountID string) (int, error) {
	var n int64
	if err := r.db.session(ctx).Model(&archiveRow{}).Where("account_id = ?", accountID).Count(&n).Error; err != nil {
		return 0, translate(err, "counting archives", outcomes{})
	}
	return int(n), nil
}

// Update loads the archive with its row locked, lets fn change it and stores its description, pattern, retention
// and update time, in one transaction. archive.ErrNotFound when it does not exist; fn's error is returned as is.
func (r *ArchiveRepository) Update(ctx context.Context, accountID, name string, fn func(*archive.Archive) error) (*archive.Archive, error) {
	var (
		stored archiveRow
		fnErr  error
	)
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var row archiveRow
		if err := forUpdate(tx).Where("account_id = ? AND name = ?", accountID, name).Take(&row).Error; err != nil {
			return err
		}
		a := archiveFromRow(row)
		if fnErr = fn(a); fnErr != nil {
			return fnErr
		}
		stored = archiveToRow(a)
		return tx.Model(&archiveRow{}).Where("id = ?", row.ID).Updates(map[string]any{
			"description":    stored.Description,
			"event_pattern":  stored.EventPattern,
			"retention_days": stored.RetentionDays,
			"updated_at":     stored.UpdatedAt,
		}).Error
	})
	if fnErr != nil {
		return nil, fnErr
	}
	if err != nil {
		return nil, translate(err, "updating archive "+name, outcomes{notFound: archiveNotFound(name)})
	}
	return archiveFromRow(stored), nil
}

// Delete removes the archive; archive.ErrNotFound when it does not exist.
func (r *ArchiveRepository) Delete(ctx context.Context, accountID, name string) error {
	res := r.db.session(ctx).Where("account_id = ? AND name = ?", accountID, name).Delete(&archiveRow{})
	if res.Error != nil {
		return translate(res.Error, "deleting archive "+name, outcomes{})
	}
	if res.RowsAffected == 0 {
		return archiveNotFound(name)
	}
	return nil
}
