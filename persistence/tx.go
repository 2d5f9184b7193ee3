package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/eventbridge-go/eventbridge/domain"
)

// session returns a gorm session bound to ctx.
func (db *DB) session(ctx context.Context) *gorm.DB { return db.gorm.WithContext(ctx) }

// hotRead returns a gorm session bound to ctx that prepares its statements once and reuses them: for the reads
// made on every event (PutEvents reads its bus on every call, and preparing the query each time was a third of
// that read: SQLite, profile of the PutEvents benchmark), and the runtime adapter's reads of a bus's rules,
// targets, sources, archives and replays, made at every change of the bus and for every bus at each full
// reconciliation pass (at 2,000 buses, preparing them was a fifth of a full pass's CPU). Never inside transact's
// fn (see DB.prepared).
func (db *DB) hotRead(ctx context.Context) *gorm.DB { return db.prepared.WithContext(ctx) }

// transact runs fn in one transaction, committed when fn returns nil and rolled back otherwise; fn's error comes
// back as it is. fn must use tx only: on SQLite the transaction holds the one connection, so any other use of db
// inside fn would wait for ever.
func (db *DB) transact(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return db.session(ctx).Transaction(fn)
}

// forUpdate makes a query lock the rows it reads until the end of the transaction (SELECT ... FOR UPDATE) on
// MySQL. The SQLite dialect drops the clause: there the single connection already serializes transactions.
func forUpdate(tx *gorm.DB) *gorm.DB {
	return tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
}

// toDB is how a time is stored: UTC with microsecond precision (DATETIME(6) on MySQL, which MySQL would round and
// MariaDB truncate; truncating here makes both dialects store the same value).
func toDB(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// fromDB returns a stored time in UTC.
func fromDB(t time.Time) time.Time { return t.UTC() }

// pageLimit is the number of items of a page (the default for a zero Page).
func pageLimit(p domain.Page) int {
	switch {
	case p.Limit <= 0:
		return domain.DefaultPageLimit
	case p.Limit > domain.MaxPageLimit:
		return domain.MaxPageLimit
	}
	return p.Limit
}

// pageQuery restricts q to one page ordered by name: the names after p's position (and with p's prefix),
// limit+1 rows so that the caller knows whether another page follows.
func pageQuery(q *gorm.DB, p domain.Page) *gorm.DB {
	if after := p.After(); after != "" {
		q = q.Where("name > ?", after)
	}
	if p.Prefix != "" {
		// Names are [A-Za-z0-9_-]: every name with the prefix sorts before prefix+"~" (0x7e), and a range uses
		// the index where LIKE would need its wildcard '_' escaped.
		q = q.Where("name >= ? AND name < ?", p.Prefix, p.Prefix+"~")
	}
	return q.Order("name").Limit(pageLimit(p) + 1)
}

// cutPage cuts the extra row fetched by pageQuery and returns the rows of the page and the next page's token
// ("" on the last page).
func cutPage[R any](rows []R, p domain.Page, name func(R) string) ([]R, string) {
	limit := pageLimit(p)
	if len(rows) <= limit {
		return rows, ""
	}
	rows = rows[:limit]
	return rows, domain.EncodePageToken(name(rows[limit-1]))
}

// fromRows rebuilds the aggregates of rows with from.
func fromRows[R, A any](rows []R, from func(R) A) []A {
	out := make([]A, len(rows))
	for i, row := range rows {
		out[i] = from(row)
	}
	return out
}
