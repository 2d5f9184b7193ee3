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
	// SchemaVersion counts the schemas; SchemaSince is when the current one was first seen (nil: the first).
	SchemaVersion int        `gorm:"column:schema_version"`
	SchemaSince   *time.Time `gorm:"column:schema_since"`
}

func (eventTypeRow) TableName() string { return "event_types" }

// eventTypeSchemaRow is a previous schema of an event type.
type eventTypeSchemaRow struct {
	BusID      string    `gorm:"column:bus_id;primaryKey"`
	Source     string    `gorm:"column:source;primaryKey"`
	Type       string    `gorm:"column:type;primaryKey"`
	Version    int       `gorm:"column:version;primaryKey"`
	DataSchema string    `gorm:"column:data_schema"`
	FirstSeen  time.Time `gorm:"column:first_seen"`
	LastSeen   time.Time `gorm:"column:last_seen"`
}

func (eventTypeSchemaRow) TableName() string { return "event_type_schemas" }

func schemaOf(text string) *eventtype.Schema {
	if text == "" || text == "null" {
		return nil
	}
	var s eventtype.Schema
	if json.Unmarshal([]byte(text), &s) != nil {
		return nil
	}
	return &s
}

func eventTypeFromRow(row eventTypeRow) *eventtype.EventType {
	et := &eventtype.EventType{BusID: row.BusID, Source: row.Source, Type: row.Type, FirstSeen: fromDB(row.FirstSeen),
		LastSeen: fromDB(row.LastSeen), Count: row.Count, Schema: schemaOf(row.DataSchema), SchemaVersion: max(row.SchemaVersion, 1)}
	if row.SchemaSince != nil {
		et.SchemaSince = fromDB(*row.SchemaSince)
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
				changes := map[string]any{"first_seen": toDB(first), "last_seen": toDB(last), "count": row.Count + o.Count,
					"data_schema": schemaText(schema)}
				if row.DataSchema != "" && schemaText(schema) != row.DataSchema {
					// The inferred schema changed: the one before is kept as a version.
					if err := keepSchemaVersion(tx, row, o.FirstSeen); err != nil {
						return err
					}
					changes["schema_version"], changes["schema_since"] = max(row.SchemaVersion, 1)+1, toDB(o.FirstSeen)
				}
				if err := tx.Model(&eventTypeRow{}).Where("bus_id = ? AND source = ? AND type = ?", o.BusID, source, typ).
					Updates(changes).Error; err != nil {
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
					LastSeen: toDB(o.LastSeen), Count: o.Count, DataSchema: schemaText(o.Schema), SchemaVersion: 1}
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

// keepSchemaVersion stores the current schema of row as a previous version, seen from when it became the type's
// schema until the last event before changed (at), and deletes versions beyond eventtype.MaxSchemaVersions.
func keepSchemaVersion(tx *gorm.DB, row eventTypeRow, at time.Time) error {
	version := max(row.SchemaVersion, 1)
	first := row.FirstSeen
	if row.SchemaSince != nil {
		first = *row.SchemaSince
	}
	last := row.LastSeen
	if a := toDB(at); a.Before(last) {
		last = a
	}
	v := eventTypeSchemaRow{BusID: row.BusID, Source: row.Source, Type: row.Type, Version: version,
		DataSchema: row.DataSchema, FirstSeen: first, LastSeen: last}
	if err := tx.Create(&v).Error; err != nil {
		return err
	}
	return tx.Where("bus_id = ? AND source = ? AND type = ? AND version <= ?", row.BusID, row.Source, row.Type,
		version-eventtype.MaxSchemaVersions).Delete(&eventTypeSchemaRow{}).Error
}

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
	out := fromRows(rows, eventTypeFromRow)
	if err := r.previous(ctx, busID, out); err != nil {
		return nil, "", err
	}
	return out, next, nil
}

// previous reads the previous schemas of the event types of one bus, in one query.
func (r *EventTypeRepository) previous(ctx context.Context, busID string, ets []*eventtype.EventType) error {
	var versioned []string
	byKey := map[[2]string]*eventtype.EventType{}
	for _, et := range ets {
		if et.SchemaVersion > 1 {
			versioned = append(versioned, et.Source)
			byKey[[2]string{et.Source, et.Type}] = et
		}
	}
	if len(versioned) == 0 {
		return nil
	}
	var rows []eventTypeSchemaRow
	if err := r.db.session(ctx).Where("bus_id = ? AND source IN ?", busID, versioned).
		Order("source").Order("type").Order("version").Find(&rows).Error; err != nil {
		return translate(err, "listing the schemas of event types", outcomes{})
	}
	for _, v := range rows {
		if et := byKey[[2]string{v.Source, v.Type}]; et != nil {
			et.Previous = append(et.Previous, eventtype.SchemaVersion{Version: v.Version, Schema: schemaOf(v.DataSchema),
				FirstSeen: fromDB(v.FirstSeen), LastSeen: fromDB(v.LastSeen)})
		}
	}
	return nil
}
