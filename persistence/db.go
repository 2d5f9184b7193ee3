// Package persistence stores the domain's aggregates in MySQL (MariaDB) or SQLite with gorm. It implements the
// domain's Repository ports, owns every transaction and turns driver errors into domain errors. The schema
// belongs to package migrations; gorm never creates or alters tables.
package persistence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/go-sql-driver/mysql"
	gormmysql "gorm.io/driver/mysql"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"
)

// Dialects of a DB.
const (
	MySQL  = "mysql"
	SQLite = "sqlite"
)

// MySQL pool settings: a few control-plane replicas share one server.
const (
	mysqlMaxOpenConns    = 20
	mysqlMaxIdleConns    = 10
	mysqlConnMaxLifetime = 5 * time.Minute
	mysqlConnMaxIdleTime = time.Minute
	mysqlDialTimeout     = 10 * time.Second
)

// sqlitePragmas are run on the connection when it opens: write-ahead log, wait up to 5 s for a lock held by another
// process, enforce foreign keys, fsync at checkpoints only (safe with WAL). _time_format=sqlite writes times as
// "2006-01-02 15:04:05.999999999-07:00", which the driver parses back from DATETIME columns.
const sqlitePragmas = "_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(ON)" +
	"&_pragma=synchronous(NORMAL)&_time_format=sqlite"

// DB is an open database: a gorm handle over one database/sql pool. Safe for concurrent use.
type DB struct {
	gorm *gorm.DB
	// prepared is gorm with prepared statements, for the hot reads made outside transactions (hotRead).
	prepared *gorm.DB
	sql      *sql.DB
	dialect  string
}

// Open connects to the database that dsn names and checks that it answers:
//
//   - sqlite://<path>, e.g. sqlite://./data/eventbridge.db or sqlite:///var/lib/eb/eventbridge.db: a SQLite file
//     (pure-Go driver), created with its parent directory if missing, in WAL mode, with ONE connection: every
//     statement and transaction of the process goes through it one at a time, so there is one writer.
//   - mysql://<go-sql-driver DSN>, e.g. mysql://user:pass@tcp(host:3306)/eventbridge: MySQL 8 or MariaDB 10.11;
//     parseTime=true and loc=UTC are forced.
//
// It does not migrate: call migrations.Up(ctx, db.SQL(), db.Dialect()) before serving. logger may be nil.
func Open(ctx context.Context, dsn string, logger *slog.Logger) (*DB, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return nil, fmt.Errorf("database %q: want sqlite://<path> or mysql://<user>:<password>@tcp(<host>:<port>)/<database>", redact(dsn))
	}
	var (
		db  *DB
		err error
	)
	switch scheme {
	case SQLite:
		db, err = openSQLite(ctx, rest)
		if err == nil {
			logger.Info("database opened", "dialect", SQLite, "path", rest)
		}
	case MySQL:
		db, err = openMySQL(ctx, rest)
		if err == nil {
			logger.Info("database opened", "dialect", MySQL, "dsn", redact(dsn))
		}
	default:
		return nil, fmt.Errorf("database %q: unknown scheme %q; want sqlite:// or mysql://", redact(dsn), scheme)
	}
	return db, err
}

func openSQLite(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("database sqlite://: the path of the database file is missing")
	}
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("database sqlite://%s: options are not accepted; the path must not contain '?'", path)
	}
	if path != ":memory:" {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, fmt.Errorf("database sqlite://%s: creating its directory: %w", path, err)
		}
	}
	sqlDB, err := sql.Open(sqlite.DriverName, path+"?"+sqlitePragmas)
	if err != nil {
		return nil, fmt.Errorf("database sqlite://%s: %w", path, err)
	}
	// One connection: SQLite has one writer anyway, and a single connection makes transactions queue in the
	// process instead of failing with SQLITE_BUSY. It also keeps a :memory: database alive.
	sqlDB.SetMaxOpenConns(1)
	sqlDB.SetMaxIdleConns(1)
	sqlDB.SetConnMaxLifetime(0)
	sqlDB.SetConnMaxIdleTime(0)
	return newDB(ctx, sqlDB, SQLite, sqlite.Dialector{DriverName: sqlite.DriverName, Conn: sqlDB}, "sqlite://"+path)
}

func openMySQL(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("database mysql://%s: %w", redactMySQL(dsn), err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	if cfg.Timeout == 0 {
		cfg.Timeout = mysqlDialTimeout
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("database mysql://%s: %w", redactMySQL(dsn), err)
	}
	sqlDB := sql.OpenDB(connector)
	sqlDB.SetMaxOpenConns(mysqlMaxOpenConns)
	sqlDB.SetMaxIdleConns(mysqlMaxIdleConns)
	sqlDB.SetConnMaxLifetime(mysqlConnMaxLifetime)
	sqlDB.SetConnMaxIdleTime(mysqlConnMaxIdleTime)
	return newDB(ctx, sqlDB, MySQL, gormmysql.New(gormmysql.Config{Conn: sqlDB}), "mysql://"+redactMySQL(dsn))
}

// newDB checks that sqlDB answers and puts gorm over it. name is the redacted DSN for error messages.
func newDB(ctx context.Context, sqlDB *sql.DB, dialect string, dialector gorm.Dialector, name string) (*DB, error) {
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	g, err := gorm.Open(dialector, &gorm.Config{
		// Errors come back to the callers, which log them with context; gorm itself says nothing.
		Logger: gormlogger.Discard,
		// The repositories open a transaction where one is needed; single statements need none.
		SkipDefaultTransaction: true,
		// The cache of prepared statements, which only hotRead uses, is bounded.
		PrepareStmtMaxSize: 512,
		PrepareStmtTTL:     time.Hour,
		NowFunc:            func() time.Time { return time.Now().UTC() },
	})
	if err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	// Prepared statements for the hot reads only, never in a transaction. gorm prepares a statement once for every
	// user and makes the others wait for it; the one preparing it outside a transaction waits for a connection,
	// so a transaction that holds the last one (SQLite's only one) and runs the same statement waited for ever
	// (go-gorm/gorm#7350, #7465; it hung this package's tests). Transactions therefore never use prepared
	// statements, and the reads that do never hold a connection while they wait.
	prepared := g.Session(&gorm.Session{PrepareStmt: true})
	return &DB{gorm: g, prepared: prepared, sql: sqlDB, dialect: dialect}, nil
}

// SQL returns the database/sql pool (for migrations).
func (db *DB) SQL() *sql.DB { return db.sql }

// Dialect returns "mysql" or "sqlite".
func (db *DB) Dialect() string { return db.dialect }

// Ping checks that the database answers (readiness).
func (db *DB) Ping(ctx context.Context) error {
	if err := db.sql.PingContext(ctx); err != nil {
		return fmt.Errorf("pinging the %s database: %w", db.dialect, err)
	}
	return nil
}

// Close closes every connection. The repositories of db must not be used afterwards.
func (db *DB) Close() error { return db.sql.Close() }

// redact hides the password of a DSN for messages.
func redact(dsn string) string {
	if rest, ok := strings.CutPrefix(dsn, "mysql://"); ok {
		return "mysql://" + redactMySQL(rest)
	}
	return dsn
}

// redactMySQL hides the password of a go-sql-driver DSN (user:password@...).
func redactMySQL(dsn string) string {
	at := strings.LastIndex(dsn, "@")
	if at < 0 {
		return dsn
	}
	user, _, hasPassword := strings.Cut(dsn[:at], ":")
	if !hasPassword {
		return dsn
	}
	return user + ":xxxxx" + dsn[at:]
}

// stamp is the count of a table's rows and their latest updated_at, as text: it changes with every create, update
// and delete of a row that sets updated_at.
func stamp(q *gorm.DB, what string) (string, error) {
	var out struct {
		N    int64
		Last sql.NullString
	}
	if err := q.Select("COUNT(*) AS n, MAX(updated_at) AS last").Scan(&out).Error; err != nil {
		return "", fmt.Errorf("reading the stamp of %s: %w", what, err)
	}
	return stampText(out.N, out.Last), nil
}

// stampText is a stamp as text: the count of rows and their latest updated_at.
func stampText(n int64, last sql.NullString) string {
	return strconv.FormatInt(n, 10) + "/" + last.String
}

// stampsByBus is stamp for each bus of a table with a bus_id column: by bus id, the count of its rows and their
// latest updated_at, for the buses that have rows (a bus without any has no entry). One grouped query for every
// bus, so that the runtime adapter's full pass learns which buses changed without reading each bus's rows.
func stampsByBus(q *gorm.DB, what string) (map[string]string, error) {
	var rows []struct {
		BusID string
		N     int64
		Last  sql.NullString
	}
	if err := q.Select("bus_id, COUNT(*) AS n, MAX(updated_at) AS last").Group("bus_id").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("reading the stamps of %s by bus: %w", what, err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.BusID] = stampText(r.N, r.Last)
	}
	return out, nil
}
