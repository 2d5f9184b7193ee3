package persistence

import (
	"errors"
	"fmt"
	"strings"

	gosqlite "github.com/glebarez/go-sqlite"
	"github.com/go-sql-driver/mysql"
	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain"
)

// outcomes names the domain error that each expected database failure of one call stands for. A nil field means
// the failure is unexpected there and is returned wrapped, as an internal error.
type outcomes struct {
	// notFound replaces gorm.ErrRecordNotFound.
	notFound error
	// duplicate replaces a duplicate key on insert or update.
	duplicate error
	// missingParent replaces a foreign key violation on insert (the referenced row does not exist).
	missingParent error
	// referenced replaces a foreign key violation on delete (other rows still reference the row).
	referenced error
}

// translate is the one place where database errors become domain errors (gorm's own TranslateError is off, so the
// drivers' errors arrive here as they are). Domain errors (made inside a transaction) pass through; anything else
// is wrapped with what was being done.
func translate(err error, doing string, o outcomes) error {
	if err == nil {
		return nil
	}
	switch {
	case o.notFound != nil && errors.Is(err, gorm.ErrRecordNotFound):
		return o.notFound
	case o.duplicate != nil && isDuplicateKey(err):
		return o.duplicate
	case o.missingParent != nil && isForeignKey(err, mysqlNoReferencedRow):
		return o.missingParent
	case o.referenced != nil && isForeignKey(err, mysqlRowIsReferenced):
		return o.referenced
	}
	if _, ok := domain.As(err); ok {
		return err
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// MySQL and SQLite error codes.
const (
	mysqlDuplicateEntry   = 1062 // ER_DUP_ENTRY
	mysqlRowIsReferenced  = 1451 // ER_ROW_IS_REFERENCED_2: delete or update of a parent row
	mysqlNoReferencedRow  = 1452 // ER_NO_REFERENCED_ROW_2: insert or update of a child row
	sqliteConstraintFK    = 787  // SQLITE_CONSTRAINT_FOREIGNKEY
	sqliteConstraintPK    = 1555 // SQLITE_CONSTRAINT_PRIMARYKEY
	sqliteConstraintUniq  = 2067 // SQLITE_CONSTRAINT_UNIQUE
	sqliteConstraintMask  = 0xff
	sqliteConstraintGroup = 19 // SQLITE_CONSTRAINT
)

func isDuplicateKey(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == mysqlDuplicateEntry
	}
	var se *gosqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqliteConstraintUniq || se.Code() == sqliteConstraintPK ||
			(se.Code()&sqliteConstraintMask == sqliteConstraintGroup && strings.Contains(se.Error(), "UNIQUE constraint failed"))
	}
	return false
}

// isForeignKey reports a foreign key violation. MySQL tells a missing parent (mysqlCode 1452) from a parent
// still referenced (1451); SQLite does not, and the caller knows which it can be.
func isForeignKey(err error, mysqlCode uint16) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == mysqlCode
	}
	var se *gosqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqliteConstraintFK
	}
	return false
}
