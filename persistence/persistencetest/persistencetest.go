// Package persistencetest opens fresh, migrated databases for tests of the packages that store things: the
// repository tests and the web layer's API tests run their scenarios against each dialect.
//
// SQLite databases live in t.TempDir(). MySQL databases are created on the server that the environment variable
// EB_TEST_MYSQL_DSN names (a go-sql-driver DSN without a database; default root@tcp(127.0.0.1:3306)/), one
// database per call, dropped when the test ends. A server that cannot be reached fails the test: tests run
// against MySQL in CI, they do not skip. Set EB_TEST_MYSQL=skip to skip the MySQL runs explicitly.
package persistencetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/eventbridge-go/eventbridge/migrations"
	"github.com/eventbridge-go/eventbridge/persistence"
)

// Environment variables read by this package.
const (
	EnvMySQLDSN = "EB_TEST_MYSQL_DSN"
	EnvMySQL    = "EB_TEST_MYSQL"
)

// DefaultMySQLDSN is the server of the MySQL runs when EB_TEST_MYSQL_DSN is not set.
const DefaultMySQLDSN = "root@tcp(127.0.0.1:3306)/"

// Dialects are the dialects to run every repository scenario against.
func Dialects() []string { return []string{persistence.SQLite, persistence.MySQL} }

// Open returns a fresh database of dialect ("sqlite" or "mysql") with every migration applied, closed (and on
// MySQL dropped) when the test ends.
func Open(t testing.TB, dialect string) *persistence.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var dsn string
	switch dialect {
	case persistence.SQLite:
		dsn = "sqlite://" + filepath.Join(t.TempDir(), "eventbridge.db")
	case persistence.MySQL:
		dsn = "mysql://" + NewMySQLDatabase(t)
	default:
		t.Fatalf("persistencetest: unknown dialect %q", dialect)
	}
	db, err := persistence.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatalf("persistencetest: %v", err)
	}
	// Registered after NewMySQLDatabase's cleanup, so it runs before the database is dropped.
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("persistencetest: closing the database: %v", err)
		}
	})
	if err := migrations.Up(ctx, db.SQL(), db.Dialect()); err != nil {
		t.Fatalf("persistencetest: %v", err)
	}
	return db
}

// NewMySQLDatabase creates an empty database eb_test_<random> on the test server and returns the go-sql-driver
// DSN of it (parseTime=true, loc=UTC). The database is dropped when the test ends. It skips the test when
// EB_TEST_MYSQL=skip and fails it when the server cannot be reached.
func NewMySQLDatabase(t testing.TB) string {
	t.Helper()
	if os.Getenv(EnvMySQL) == "skip" {
		t.Skipf("persistencetest: %s=skip: not running against MySQL", EnvMySQL)
	}
	serverDSN := os.Getenv(EnvMySQLDSN)
	if serverDSN == "" {
		serverDSN = DefaultMySQLDSN
	}
	cfg, err := mysql.ParseDSN(serverDSN)
	if err != nil {
		t.Fatalf("persistencetest: %s: %v", EnvMySQLDSN, err)
	}
	cfg.DBName = ""
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatalf("persistencetest: %s: %v", EnvMySQLDSN, err)
	}
	server := sql.OpenDB(connector)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := server.PingContext(ctx); err != nil {
		_ = server.Close()
		t.Fatalf("persistencetest: MySQL at %s (%s) does not answer: %v; start it, point %s at another server, "+
			"or set %s=skip to skip the MySQL runs", cfg.Addr, EnvMySQLDSN, err, EnvMySQLDSN, EnvMySQL)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "eb_test_" + hex.EncodeToString(b[:])
	if _, err := server.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		_ = server.Close()
		t.Fatalf("persistencetest: creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		defer server.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := server.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Errorf("persistencetest: dropping database %s: %v", name, err)
		}
	})
	cfg.DBName = name
	return cfg.FormatDSN()
}
