// Package migrations holds the versioned database schema of the control plane, one folder of goose SQL migrations
// per dialect (mysql/, sqlite/), embedded in the binary. Both folders describe the same tables and columns; a test
// checks that they do. The schema is only ever changed by adding a migration here, never by gorm's AutoMigrate.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/pressly/goose/v3"
)

// Dialects of the migrations.
const (
	MySQL  = "mysql"
	SQLite = "sqlite"
)

// LockName is the MySQL named lock (GET_LOCK) held while migrating, so that control-plane replicas starting
// together migrate once: the first applies the migrations, the others wait and then find nothing to do.
const LockName = "eventbridge_migrations"

// lockTimeout is how long a replica waits for another one's migrations.
const lockTimeout = 60 * time.Second

//go:embed mysql/*.sql sqlite/*.sql
var files embed.FS

// Up applies every migration of dialect ("mysql" or "sqlite") that db does not have yet; it is a no-op on an
// up-to-date database. On MySQL the whole of it runs under the named lock LockName, taken with GET_LOCK on one
// dedicated connection and released with RELEASE_LOCK; it fails when the lock cannot be taken within 60 seconds.
//
// The lock wraps goose entirely rather than being goose's session locker: goose checks for pending migrations
// before it locks, and that check creates its version table and then inserts the zero version, two statements
// on MySQL (DDL commits at once). A replica starting at the same moment could see the table without the row
// and fail with "missing zero version migration" (seen in CI with three replicas).
func Up(ctx context.Context, db *sql.DB, dialect string) error {
	return UpThen(ctx, db, dialect, nil)
}

// UpThen is Up followed by then (when not nil), both under the lock on MySQL: what then does once per installation
// (creating the first administrator) is done by one control-plane replica of several starting together. On SQLite
// one process owns the database and no lock is taken.
func UpThen(ctx context.Context, db *sql.DB, dialect string, then func(context.Context) error) (err error) {
	if dialect == MySQL {
		conn, err := db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("migrations: %w", err)
		}
		defer conn.Close()
		l := mysqlLocker{name: LockName, timeout: lockTimeout}
		if err := l.SessionLock(ctx, conn); err != nil {
			return fmt.Errorf("migrations: %w", err)
		}
		defer func() {
			if uerr := l.SessionUnlock(context.WithoutCancel(ctx), conn); uerr != nil && err == nil {
				err = fmt.Errorf("migrations: %w", uerr)
			}
		}()
	}
	if err := up(ctx, db, dialect); err != nil {
		return err
	}
	if then != nil {
		return then(ctx)
	}
	return nil
}

func up(ctx context.Context, db *sql.DB, dialect string) error {
	var (
		gooseDialect goose.Dialect
		opts         = []goose.ProviderOption{goose.WithLogger(goose.NopLogger()), goose.WithDisableGlobalRegistry(true)}
	)
	switch dialect {
	case MySQL:
		gooseDialect = goose.DialectMySQL
	case SQLite:
		gooseDialect = goose.DialectSQLite3
	default:
		return fmt.Errorf("migrations: unknown dialect %q (want %q or %q)", dialect, MySQL, SQLite)
	}
	fsys, err := fs.Sub(files, dialect)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	p, err := goose.NewProvider(gooseDialect, db, fsys, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrations: applying %s migrations: %w", dialect, err)
	}
	return nil
}

// mysqlLocker is a MySQL named lock held by one connection (it has goose's SessionLocker shape). A named lock
// belongs to its connection: if the process dies the server releases it with the connection.
type mysqlLocker struct {
	name    string
	timeout time.Duration
}

func (l mysqlLocker) SessionLock(ctx context.Context, conn *sql.Conn) error {
	var got sql.NullInt64
	err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", l.name, int(l.timeout/time.Second)).Scan(&got)
	switch {
	case err != nil:
		return fmt.Errorf("taking lock %q: %w", l.name, err)
	case !got.Valid:
		return fmt.Errorf("taking lock %q: GET_LOCK failed", l.name)
	case got.Int64 != 1:
		return fmt.Errorf("taking lock %q: another process has held it for %s; is a migration stuck?", l.name, l.timeout)
	}
	return nil
}

func (l mysqlLocker) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	var released sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT RELEASE_LOCK(?)", l.name).Scan(&released); err != nil {
		return fmt.Errorf("releasing lock %q: %w", l.name, err)
	}
	if !released.Valid || released.Int64 != 1 {
		return errors.New("releasing lock " + l.name + ": this connection did not hold it")
	}
	return nil
}
