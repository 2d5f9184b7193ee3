package migrations

import (
	"time"

	"github.com/pressly/goose/v3/lock"
)

// NewMySQLLocker returns the MySQL session locker of Up over another lock name and wait, for tests.
func NewMySQLLocker(name string, timeout time.Duration) lock.SessionLocker {
	return mysqlLocker{name: name, timeout: timeout}
}
