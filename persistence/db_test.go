package persistence_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
)

func TestOpenSQLite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "nested", "dir", "eventbridge.db")
	db, err := persistence.Open(ctx, "sqlite://"+path, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })

	_, err = os.Stat(path)
	require.NoError(t, err, "the file and its directories are created")
	assert.Equal(t, persistence.SQLite, db.Dialect())
	require.NoError(t, db.Ping(ctx))
	assert.Equal(t, 1, db.SQL().Stats().MaxOpenConnections, "one connection: one writer")

	for pragma, want := range map[string]string{
		"journal_mode": "wal",
		"busy_timeout": "5000",
		"foreign_keys": "1",
		"synchronous":  "1", // NORMAL
	} {
		var got string
		require.NoError(t, db.SQL().QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got))
		assert.Equal(t, want, got, "PRAGMA %s", pragma)
	}
}

func TestOpenMySQLForcesParseTimeAndUTC(t *testing.T) {
	t.Parallel()
	cfg, err := mysql.ParseDSN(persistencetest.NewMySQLDatabase(t))
	require.NoError(t, err)
	cfg.ParseTime = false
	cfg.Loc = time.Local
	db, err := persistence.Open(ctx, "mysql://"+cfg.FormatDSN(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })

	assert.Equal(t, persistence.MySQL, db.Dialect())
	require.NoError(t, db.Ping(ctx))
	var now time.Time // scanning DATETIME into time.Time needs parseTime=true
	require.NoError(t, db.SQL().QueryRowContext(ctx, "SELECT UTC_TIMESTAMP(6)").Scan(&now))
	assert.Equal(t, time.UTC, now.Location())
	assert.WithinDuration(t, time.Now(), now, time.Minute)
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, dsn, want string
		notWant         string
	}{
		{name: "no scheme", dsn: "./data/eventbridge.db", want: "want sqlite://"},
		{name: "unknown scheme", dsn: "postgres://u:p@localhost/db", want: `unknown scheme "postgres"`},
		{name: "empty sqlite path", dsn: "sqlite://", want: "path of the database file is missing"},
		{name: "sqlite options", dsn: "sqlite://x.db?_pragma=foo", want: "must not contain '?'"},
		{name: "bad mysql dsn", dsn: "mysql://no-slash", want: "database mysql://"},
		{
			name: "unreachable mysql hides the password", dsn: "mysql://root:s3cret@tcp(127.0.0.1:1)/eb",
			want: "mysql://root:xxxxx@tcp(127.0.0.1:1)/eb", notWant: "s3cret",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, err := persistence.Open(ctx, tc.dsn, nil)
			require.Error(t, err)
			assert.Nil(t, db)
			assert.ErrorContains(t, err, tc.want)
			if tc.notWant != "" {
				assert.NotContains(t, err.Error(), tc.notWant)
			}
		})
	}
}

// TestNoDeadlockOfAStatementUsedInAndOutOfATransaction: the same statement run at once inside a transaction and
// outside one, on SQLite's single connection, while it is used for the first time. With gorm's prepared statements
// for every use, the caller outside the transaction prepared it and waited for the connection, which the
// transaction held while it waited for that statement: both for ever (go-gorm/gorm#7350). A fresh database per
// round makes every round a first use.
func TestNoDeadlockOfAStatementUsedInAndOutOfATransaction(t *testing.T) {
	t.Parallel()
	done := make(chan error, 1)
	go func() {
		for range 40 {
			db := persistencetest.Open(t, persistence.SQLite)
			r := repos{db: db, accounts: persistence.NewAccountRepository(db), buses: persistence.NewBusRepository(db),
				rules: persistence.NewRuleRepository(db)}
			b := createBus(t, r, newAccount(), "orders")
			createRule(t, r, b, "created")
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(2)
				go func() { defer wg.Done(); _ = r.buses.Delete(ctx, b.ID()) }() // counts the rules in a transaction
				go func() { defer wg.Done(); _, _ = r.rules.CountByBus(ctx, b.ID()) }()
			}
			wg.Wait()
		}
		done <- nil
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("a transaction and a read outside it waited for each other: deadlock")
	}
}
