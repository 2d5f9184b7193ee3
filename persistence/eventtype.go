package persistence

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/eventtype"
)

var _ eventtype.Repository = (*EventTypeRepository)(nil)

type eventTypeRow struct {
	BusID      string    `gorm:"column:bus_id;primaryKey"`
	Source     string    `gorm:"column:source;primaryKey"`
	Type       string    `gorm:"column:type;primaryKey"`
	FirstSeen  time.Time `gorm:"column:first_seen"`
	LastSeen   time.Time `gorm:"column:last_seen"`
	Count      int64     `gorm:"column:count"`
	DataSchema string    `gorm:"column:data_schema"`
}

func (eventTypeRow) TableName() string { return "event_types" }

func eventTypeFromRow(row eventTypeRow) *eventtype.EventType {
	et := &eventtype.EventType{BusID: row.BusID, Source: row.Source, Type: row.Type, FirstSeen: fromDB(row.FirstSeen),
		LastSeen: fromDB(row.LastSeen), Count: row.Count}
	if row.DataSchema != "" && row.DataSchema != "null" {
		var s eventtype.Schema
		if json.Unmarshal([]byte(row.DataSchema), &s) == nil {
			et.Schema = &s
		}
	}
	return et
}

// EventTypeRepository stores event types in the event_types table, one row per (bus, source, type); they go with
// their bus (ON DELETE CASCADE).
type EventTypeRepository struct {
	db *DB
}

// NewEventTypeRepository returns the event type repository of db.
func NewEventTypeRepository(db *DB) *EventTypeRepository { return &EventTypeRepository{db: db} }

// Sizes of the key columns; longer sources and types are cut (with a marker) to fit.
const (
	maxEventTypeSource = 255
	maxEventTypeType   = 255
)

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s[:n-3])
	for len(string(r)) > n-3 {
		r = r[:len(r)-1]
	}
	return string(r) + "..."
}

// Merge adds the observations in one transaction: each row is read locked, merged and written back, or inserted.
// Observations of buses deleted meanwhile are skipped.
func (r *EventTypeRepository) Merge(ctx context.Context, observed []*eventtype.EventType) error {
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		for _, o := range observed {
			source, typ := cut(o.Source, maxEventTypeSource), cut(o.Type, maxEventTypeType)
			var row eventTypeRow
			err := forUpdate(tx).Where("bus_id = ? AND source = ? AND type = ?", o.BusID, source, typ).Take(&row).Error
			switch {
			case err == nil:
				cur := eventTypeFromRow(row)
				schema := eventtype.Merge(cur.Schema, o.Schema)
				first, last := cur.FirstSeen, cur.LastSeen
				if o.FirstSeen.Before(first) {
					first = o.FirstSeen
				}
				if o.LastSeen.After(last) {
					last = o.LastSeen
				}
				if err := tx.Model(&eventTypeRow{}).Where("bus_id = ? AND source = ? AND type = ?", o.BusID, source, typ).
					Updates(map[string]any{"first_seen": toDB(first), "last_seen": toDB(last), "count": row.Count + o.Count,
						"data_schema": schemaText(schema)}).Error; err != nil {
					return err
				}
			case isNotFound(err):
				var buses int64
				if err := tx.Model(&busRow{}).Where("id = ?", o.BusID).Count(&buses).Error; err != nil {
					return err
				}
				if buses == 0 {
					continue // the bus was deleted since
				}
				row := eventTypeRow{BusID: o.BusID, Source: source, Type: typ, FirstSeen: toDB(o.FirstSeen),
					LastSeen: toDB(o.LastSeen), Count: o.Count, DataSchema: schemaText(o.Schema)}
				if err := tx.Create(&row).Error; err != nil {
					return err
				}
			default:
				return err
			}
		}
		return nil
	})
	return translate(err, "storing event types", outcomes{})
}

func isNotFound(err error) bool { return errors.Is(err, gorm.ErrRecordNotFound) }

func schemaText(s *eventtype.Schema) string {
	if s == nil {
		return ""
	}
	b, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	return string(b)
}

// ListByBus returns one page of the bus's event types ordered by source then type, and the next page's token.
func (r *EventTypeRepository) ListByBus(ctx context.Context, busID string, page domain.Page) ([]*eventtype.EventType, string, error) {
	q := r.db.session(ctx).Where("bus_id = ?", busID)
	if page.Token != "" {
		after := page.AfterKey()
		if len(after) != 2 {
			return nil, "", domain.Invalid("nextToken", "nextToken is not a token of this list")
		}
		q = q.Where("source > ? OR (source = ? AND type > ?)", after[0], after[0], after[1])
	}
	limit := pageLimit(page)
	var rows []eventTypeRow
	if err := q.Order("source").Order("type").Limit(limit + 1).Find(&rows).Error; err != nil {
		return nil, "", translate(err, "listing event types", outcomes{})
	}
	next := ""
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		next = domain.EncodeKeyToken(last.Source, last.Type)
	}
	return fromRows(rows, eventTypeFromRow), next, nil
}
