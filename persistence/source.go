package persistence

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/source"
)

var (
	_ source.Repository = (*SourceRepository)(nil)
	_ bus.SourceCounter = (*SourceRepository)(nil)
)

type sourceRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	AccountID   string `gorm:"column:account_id"`
	BusID       string `gorm:"column:bus_id"`
	Name        string `gorm:"column:name"`
	Type        string `gorm:"column:type"`
	Description string `gorm:"column:description"`
	State       string `gorm:"column:state"`
	// Config is the JSON object of the config, secret values sealed; SecretKeys the JSON array of secret keys.
	Config     string    `gorm:"column:config"`
	SecretKeys string    `gorm:"column:secret_keys"`
	Token      *string   `gorm:"column:token"`
	CreatedAt  time.Time `gorm:"column:created_at;autoCreateTime:false"`
	UpdatedAt  time.Time `gorm:"column:updated_at;autoUpdateTime:false"`
	// Received counts the webhook requests stored on the bus directly; only AddReceived writes it.
	Received uint64 `gorm:"column:received"`
}

func (sourceRow) TableName() string { return "sources" }

func sourceToRow(s *source.Source) (sourceRow, error) {
	cfg, err := json.Marshal(s.Config())
	if err != nil {
		return sourceRow{}, fmt.Errorf("encoding the config of source %s: %w", s.Name(), err)
	}
	keys := s.SecretKeys()
	if keys == nil {
		keys = []string{}
	}
	secrets, err := json.Marshal(keys)
	if err != nil {
		return sourceRow{}, fmt.Errorf("encoding the secret keys of source %s: %w", s.Name(), err)
	}
	row := sourceRow{
		ID: s.ID(), AccountID: s.AccountID(), BusID: s.BusID(), Name: s.Name(), Type: string(s.Type()),
		Description: s.Description(), State: string(s.State()), Config: string(cfg), SecretKeys: string(secrets),
		CreatedAt: toDB(s.CreatedAt()), UpdatedAt: toDB(s.UpdatedAt()),
	}
	if t := s.Token(); t != "" {
		row.Token = &t
	}
	return row, nil
}

// changes are the columns a change of the source writes.
func (row sourceRow) changes() map[string]any {
	return map[string]any{
		"description": row.Description,
		"state":       row.State,
		"config":      row.Config,
		"secret_keys": row.SecretKeys,
		"token":       row.Token,
		"updated_at":  row.UpdatedAt,
	}
}

func sourceFromRow(row sourceRow) (*source.Source, error) {
	var cfg map[string]string
	if err := json.Unmarshal([]byte(row.Config), &cfg); err != nil {
		return nil, fmt.Errorf("reading the config of source %s: malformed JSON", row.ID)
	}
	var keys []string
	if err := json.Unmarshal([]byte(row.SecretKeys), &keys); err != nil {
		return nil, fmt.Errorf("reading the secret keys of source %s: malformed JSON", row.ID)
	}
	token := ""
	if row.Token != nil {
		token = *row.Token
	}
	return source.UnmarshalFromDatabase(row.ID, row.AccountID, row.BusID, row.Name, source.Type(row.Type), row.Description,
		cfg, keys, source.State(row.State), token, fromDB(row.CreatedAt), fromDB(row.UpdatedAt), row.Received), nil
}

func sourcesFromRows(rows []sourceRow) ([]*source.Source, error) {
	out := make([]*source.Source, len(rows))
	for i, row := range rows {
		s, err := sourceFromRow(row)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// SourceRepository stores sources in the sources table, their config as a JSON object with secret values sealed
// (the domain seals them before they reach the repository). Names are unique per bus and case-sensitive; webhook
// tokens are unique.
type SourceRepository struct {
	db *DB
}

// NewSourceRepository returns the source repository of db.
func NewSourceRepository(db *DB) *SourceRepository { return &SourceRepository{db: db} }

// Create stores a new source. In one transaction, with the bus's row locked so that concurrent creations on one
// bus take turns, it counts the bus's sources (source.ErrQuotaExceeded at max) and inserts
// (source.ErrAlreadyExists for a name taken, bus.ErrNotFound when the bus is gone).
func (r *SourceRepository) Create(ctx context.Context, s *source.Source, max int) error {
	row, err := sourceToRow(s)
	if err != nil {
		return err
	}
	err = r.db.transact(ctx, func(tx *gorm.DB) error {
		var buses []busRow
		if err := forUpdate(tx).Where("id = ?", s.BusID()).Find(&buses).Error; err != nil {
			return err
		}
		if len(buses) == 0 {
			return bus.ErrNotFound.With("bus %s not found", s.BusID())
		}
		var n int64
		if err := tx.Model(&sourceRow{}).Where("bus_id = ?", s.BusID()).Count(&n).Error; err != nil {
			return err
		}
		if n >= int64(max) {
			return source.ErrQuotaExceeded.With("a bus may have at most %d sources; this one has %d", max, n)
		}
		return tx.Create(&row).Error
	})
	return translate(err, "storing source "+s.Name(), outcomes{
		duplicate:     source.ErrAlreadyExists.With("source %q already exists on this bus", s.Name()),
		missingParent: bus.ErrNotFound.With("bus %s not found", s.BusID()),
	})
}

// Get returns source.ErrNotFound when the bus has no source of that name.
func (r *SourceRepository) Get(ctx context.Context, busID, name string) (*source.Source, error) {
	var row sourceRow
	if err := r.db.session(ctx).Where("bus_id = ? AND name = ?", busID, name).Take(&row).Error; err != nil {
		return nil, translate(err, "reading source "+name, outcomes{notFound: sourceNotFound(name)})
	}
	return sourceFromRow(row)
}

// GetByToken returns source.ErrNotFound when no source has that webhook token.
func (r *SourceRepository) GetByToken(ctx context.Context, token string) (*source.Source, error) {
	var row sourceRow
	if err := r.db.session(ctx).Where("token = ?", token).Take(&row).Error; err != nil {
		return nil, translate(err, "reading a source by token", outcomes{notFound: source.ErrNotFound.With("no source has this token")})
	}
	return sourceFromRow(row)
}

// List returns one page of the bus's sources ordered by name and the next page's token ("" at the end).
func (r *SourceRepository) List(ctx context.Context, busID string, page domain.Page) ([]*source.Source, string, error) {
	var rows []sourceRow
	if err := pageQuery(r.db.session(ctx).Where("bus_id = ?", busID), page).Find(&rows).Error; err != nil {
		return nil, "", translate(err, "listing sources", outcomes{})
	}
	rows, next := cutPage(rows, page, func(row sourceRow) string { return row.Name })
	out, err := sourcesFromRows(rows)
	return out, next, err
}

// ListByBus returns every source of the bus ordered by name.
func (r *SourceRepository) ListByBus(ctx context.Context, busID string) ([]*source.Source, error) {
	var rows []sourceRow
	if err := r.db.hotRead(ctx).Where("bus_id = ?", busID).Order("name").Find(&rows).Error; err != nil {
		return nil, translate(err, "listing sources", outcomes{})
	}
	return sourcesFromRows(rows)
}

// StampsByBus returns, by bus id, a stamp of the bus's sources that changes with every create, update and delete
// of one of them (connect.BusStamper).
func (r *SourceRepository) StampsByBus(ctx context.Context) (map[string]string, error) {
	return stampsByBus(r.db.session(ctx).Model(&sourceRow{}), "sources")
}

// NamesByBus returns the names of the bus's sources, sorted.
func (r *SourceRepository) NamesByBus(ctx context.Context, busID string) ([]string, error) {
	var names []string
	if err := r.db.session(ctx).Model(&sourceRow{}).Where("bus_id = ?", busID).Order("name").Pluck("name", &names).Error; err != nil {
		return nil, translate(err, "listing sources", outcomes{})
	}
	return names, nil
}

// Update loads the source with its row locked, lets fn change it and stores its description, state, config,
// secret keys and token in one transaction. source.ErrNotFound when it does not exist; fn's error is returned as
// is and nothing is stored. It returns the source as stored.
func (r *SourceRepository) Update(ctx context.Context, busID, name string, fn func(*source.Source) error) (*source.Source, error) {
	var (
		stored sourceRow
		fnErr  error
	)
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var row sourceRow
		if err := forUpdate(tx).Where("bus_id = ? AND name = ?", busID, name).Take(&row).Error; err != nil {
			return err
		}
		s, err := sourceFromRow(row)
		if err != nil {
			return err
		}
		if fnErr = fn(s); fnErr != nil {
			return fnErr
		}
		if stored, err = sourceToRow(s); err != nil {
			return err
		}
		return tx.Model(&sourceRow{}).Where("id = ?", row.ID).Updates(stored.changes()).Error
	})
	if fnErr != nil {
		return nil, fnErr
	}
	if err != nil {
		return nil, translate(err, "updating source "+name, outcomes{notFound: sourceNotFound(name)})
	}
	return sourceFromRow(stored)
}

// Delete removes a source; source.ErrNotFound when it does not exist.
func (r *SourceRepository) Delete(ctx context.Context, busID, name string) error {
	res := r.db.session(ctx).Where("bus_id = ? AND name = ?", busID, name).Delete(&sourceRow{})
	if res.Error != nil {
		return translate(res.Error, "deleting source "+name, outcomes{})
	}
	if res.RowsAffected == 0 {
		return sourceNotFound(name)
	}
	return nil
}

// AddReceived adds to the received count of each source by id, in one transaction, in the order of the ids (so
// that two replicas adding at once lock the rows in the same order); a source deleted meanwhile is skipped.
func (r *SourceRepository) AddReceived(ctx context.Context, counts map[string]uint64) error {
	if len(counts) == 0 {
		return nil
	}
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		for _, id := range slices.Sorted(maps.Keys(counts)) {
			if err := tx.Model(&sourceRow{}).Where("id = ?", id).
				UpdateColumn("received", gorm.Expr("received + ?", counts[id])).Error; err != nil {
				return err
			}
		}
		return nil
	})
	return translate(err, "counting webhook requests", outcomes{})
}

func sourceNotFound(name string) error {
	return source.ErrNotFound.With("source %q not found", name)
}
