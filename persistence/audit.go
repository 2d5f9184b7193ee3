package persistence

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/audit"
)

var _ audit.Repository = (*AuditRepository)(nil)

type auditRow struct {
	ID         string    `gorm:"column:id;primaryKey"`
	At         time.Time `gorm:"column:at"`
	Source     string    `gorm:"column:source"`
	AccountID  string    `gorm:"column:account_id"`
	ActorKind  string    `gorm:"column:actor_kind"`
	ActorID    string    `gorm:"column:actor_id"`
	ActorName  string    `gorm:"column:actor_name"`
	Operation  string    `gorm:"column:operation"`
	Resource   string    `gorm:"column:resource"`
	Outcome    string    `gorm:"column:outcome"`
	Status     int       `gorm:"column:status"`
	ErrorCode  string    `gorm:"column:error_code"`
	ClientAddr string    `gorm:"column:client_addr"`
}

func (auditRow) TableName() string { return "audit_entries" }

func auditToRow(e audit.Entry) auditRow {
	return auditRow{ID: e.ID, At: toDB(e.Time), Source: e.Source, AccountID: e.AccountID, ActorKind: e.ActorKind,
		ActorID: e.ActorID, ActorName: e.ActorName, Operation: e.Operation, Resource: e.Resource, Outcome: e.Outcome,
		Status: e.Status, ErrorCode: e.ErrorCode, ClientAddr: e.ClientAddr}
}

func auditFromRow(r auditRow) audit.Entry {
	return audit.Entry{ID: r.ID, Time: fromDB(r.At), Source: r.Source, AccountID: r.AccountID, ActorKind: r.ActorKind,
		ActorID: r.ActorID, ActorName: r.ActorName, Operation: r.Operation, Resource: r.Resource, Outcome: r.Outcome,
		Status: r.Status, ErrorCode: r.ErrorCode, ClientAddr: r.ClientAddr}
}

// AuditRepository stores the audit log in the audit_entries table.
type AuditRepository struct {
	db *DB
}

// NewAuditRepository returns the audit repository of db.
func NewAuditRepository(db *DB) *AuditRepository { return &AuditRepository{db: db} }

// Append inserts entries, skipping those whose id is stored.
func (r *AuditRepository) Append(ctx context.Context, entries []audit.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	rows := make([]auditRow, len(entries))
	for i, e := range entries {
		rows[i] = auditToRow(e)
	}
	err := r.db.session(ctx).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(rows, 100).Error
	return translate(err, "writing audit entries", outcomes{})
}

// likePrefix is a LIKE pattern (escape character '!') for the values that start with p.
func likePrefix(p string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(p) + "%"
}

// where restricts q to the entries f selects; a value ending in "*" is a prefix.
func auditWhere(q *gorm.DB, f audit.Filter) *gorm.DB {
	if !f.AllAccounts {
		q = q.Where("account_id = ?", f.AccountID)
	}
	if !f.From.IsZero() {
		q = q.Where("at >= ?", toDB(f.From))
	}
	if !f.To.IsZero() {
		q = q.Where("at < ?", toDB(f.To))
	}
	if f.Actor != "" {
		q = q.Where("(actor_id = ? OR actor_name = ?)", f.Actor, f.Actor)
	}
	match := func(q *gorm.DB, column, v string) *gorm.DB {
		switch {
		case v == "":
			return q
		case strings.HasSuffix(v, "*"):
			return q.Where(column+" LIKE ? ESCAPE '!'", likePrefix(strings.TrimSuffix(v, "*")))
		}
		return q.Where(column+" = ?", v)
	}
	q = match(q, "operation", f.Operation)
	q = match(q, "resource", f.Resource)
	if f.Outcome != "" {
		q = q.Where("outcome = ?", f.Outcome)
	}
	return q
}

// List returns one page of the entries f selects, newest first (time, then id), and the next page's token.
func (r *AuditRepository) List(ctx context.Context, f audit.Filter, page domain.Page) ([]audit.Entry, string, error) {
	q := auditWhere(r.db.session(ctx).Model(&auditRow{}), f)
	if page.Token != "" {
		key, err := domain.DecodeKeyToken(page.Token)
		if err != nil || len(key) != 2 {
			return nil, "", domain.Invalid("nextToken", "nextToken is not a token this API returned")
		}
		at, err := time.Parse(time.RFC3339Nano, key[0])
		if err != nil {
			return nil, "", domain.Invalid("nextToken", "nextToken is not a token this API returned")
		}
		q = q.Where("(at < ? OR (at = ? AND id < ?))", toDB(at), toDB(at), key[1])
	}
	var rows []auditRow
	if err := q.Order("at DESC, id DESC").Limit(pageLimit(page) + 1).Find(&rows).Error; err != nil {
		return nil, "", translate(err, "listing audit entries", outcomes{})
	}
	next := ""
	if n := pageLimit(page); len(rows) > n {
		rows = rows[:n]
		last := rows[n-1]
		next = domain.EncodeKeyToken(fromDB(last.At).Format(time.RFC3339Nano), last.ID)
	}
	out := make([]audit.Entry, len(rows))
	for i, row := range rows {
		out[i] = auditFromRow(row)
	}
	return out, next, nil
}

// DeleteBefore deletes the entries older than t.
func (r *AuditRepository) DeleteBefore(ctx context.Context, t time.Time) (int, error) {
	res := r.db.session(ctx).Where("at < ?", toDB(t)).Delete(&auditRow{})
	return int(res.RowsAffected), translate(res.Error, "deleting old audit entries", outcomes{})
}
