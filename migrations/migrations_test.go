package migrations_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/migrations"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
)

// schema maps each table to its column names in declaration order.
type schema map[string][]string

func sqliteSchema(t *testing.T, db *sql.DB) schema {
	t.Helper()
	rows, err := db.Query(`SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid`)
	require.NoError(t, err)
	return scanSchema(t, rows)
}

func mysqlSchema(t *testing.T, db *sql.DB) schema {
	t.Helper()
	rows, err := db.Query(`SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = DATABASE() ORDER BY table_name, ordinal_position`)
	require.NoError(t, err)
	return scanSchema(t, rows)
}

func scanSchema(t *testing.T, rows *sql.Rows) schema {
	t.Helper()
	defer rows.Close()
	s := schema{}
	for rows.Next() {
		var table, column string
		require.NoError(t, rows.Scan(&table, &column))
		s[table] = append(s[table], column)
	}
	require.NoError(t, rows.Err())
	return s
}

func openMySQL(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestBothDialectsGiveTheSameSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	lite, err := persistence.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "eb.db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lite.Close() })
	require.NoError(t, migrations.Up(ctx, lite.SQL(), migrations.SQLite))
	require.NoError(t, migrations.Up(ctx, lite.SQL(), migrations.SQLite), "a second Up finds nothing to do")

	// Three replicas start together on an empty database: the named lock lets one migrate, the others then find
	// nothing to do, and every one succeeds.
	dsn := persistencetest.NewMySQLDatabase(t)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range errs {
		db := openMySQL(t, dsn)
		wg.Go(func() { errs[i] = migrations.Up(ctx, db, migrations.MySQL) })
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "replica %d", i)
	}
	my := openMySQL(t, dsn)

	want := map[string][]string{
		"accounts": {"id", "created_at", "put_events_per_second"},
		"buses": {"id", "account_id", "name", "description", "retention_max_age_seconds", "retention_max_bytes",
			"created_at", "updated_at", "log_level", "log_include_detail"},
		"rules": {"id", "account_id", "bus_id", "name", "description", "event_pattern", "state", "created_at", "updated_at",
			"layout", "pattern_syntax"},
		"targets": {"id", "account_id", "bus_id", "rule_id", "name", "type", "config", "retry_max_attempts",
			"retry_max_event_age_seconds", "created_at", "updated_at", "input_transformer", "api_destination", "format", "role_arn"},
		"connections":        {"id", "account_id", "name", "description", "authorization_type", "auth_parameters", "created_at", "updated_at", "authorized_at", "deauthorized_at"},
		"event_types":        {"bus_id", "source", "type", "first_seen", "last_seen", "count", "data_schema", "schema_version", "schema_since"},
		"event_type_schemas": {"bus_id", "source", "type", "version", "data_schema", "first_seen", "last_seen"},
		"api_destinations": {"id", "account_id", "name", "description", "connection_id", "invocation_endpoint", "http_method",
			"invocation_rate_limit_per_second", "created_at", "updated_at"},
		"connector_states": {"connector", "account_id", "state", "updated_at"},
		"leases":           {"name", "holder", "expires_at"},
		"tags":             {"account_id", "resource_id", "tag_key", "tag_value"},
	}
	liteSchema, mySchema := sqliteSchema(t, lite.SQL()), mysqlSchema(t, my)
	assert.Equal(t, liteSchema, mySchema, "sqlite and mysql schemas differ")
	for table, columns := range want {
		assert.Equal(t, columns, liteSchema[table], "sqlite table %s", table)
		assert.Equal(t, columns, mySchema[table], "mysql table %s", table)
	}
	assert.Contains(t, mySchema, "goose_db_version")

	// Each migration was applied once, whatever the number of replicas.
	files, err := filepath.Glob("mysql/*.sql") // the embedded files are these

	require.NoError(t, err)
	require.NotEmpty(t, files)
	var applied int
	require.NoError(t, my.QueryRow("SELECT COUNT(*) FROM goose_db_version WHERE version_id > 0").Scan(&applied))
	assert.Equal(t, len(files), applied)

	// Names and ids are case-sensitive on MySQL as on SQLite: every text column is utf8mb4_bin.
	rows, err := my.Query(`SELECT table_name, column_name, collation_name FROM information_schema.columns
		WHERE table_schema = DATABASE() AND table_name <> 'goose_db_version' AND collation_name IS NOT NULL`)
	require.NoError(t, err)
	defer rows.Close()
	var textColumns int
	for rows.Next() {
		var table, column, collation string
		require.NoError(t, rows.Scan(&table, &column, &collation))
		assert.Equal(t, "utf8mb4_bin", collation, "%s.%s", table, column)
		textColumns++
	}
	require.NoError(t, rows.Err())
	assert.Greater(t, textColumns, 10)
}

func TestUpRefusesUnknownDialect(t *testing.T) {
	t.Parallel()
	err := migrations.Up(context.Background(), &sql.DB{}, "postgres")
	require.ErrorContains(t, err, `unknown dialect "postgres"`)
}

func TestMySQLLockIsExclusive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMySQL(t, persistencetest.NewMySQLDatabase(t))
	name := fmt.Sprintf("eb_test_lock_%d", time.Now().UnixNano()) // named locks are server-wide
	conn := func() *sql.Conn {
		c, err := db.Conn(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	first, second := conn(), conn()
	locker := migrations.NewMySQLLocker(name, time.Second)

	require.NoError(t, locker.SessionLock(ctx, first))
	start := time.Now()
	err := locker.SessionLock(ctx, second)
	require.ErrorContains(t, err, "another process has held it", "a second connection must wait for the lock")
	assert.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond, "GET_LOCK waited for the timeout")
	require.Error(t, locker.SessionUnlock(ctx, second), "a connection cannot release a lock it does not hold")

	require.NoError(t, locker.SessionUnlock(ctx, first))
	require.NoError(t, locker.SessionLock(ctx, second), "the lock is free once released")
	require.NoError(t, locker.SessionUnlock(ctx, second))
}
