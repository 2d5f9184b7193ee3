package persistence

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain/runtime"
)

var _ runtime.DesiredStates = (*ConnectorStateRepository)(nil)

type connectorStateRow struct {
	Connector string    `gorm:"column:connector;primaryKey"`
	AccountID string    `gorm:"column:account_id"`
	State     string    `gorm:"column:state"`
	UpdatedAt time.Time `gorm:"column:updated_at"`
}

func (connectorStateRow) TableName() string { return "connector_states" }

// ConnectorStateRepository stores the states operators set on connectors (table connector_states), one row per
// connector that should not run.
type ConnectorStateRepository struct {
	db *DB
}

// NewConnectorStateRepository returns the desired-state repository of db.
func NewConnectorStateRepository(db *DB) *ConnectorStateRepository {
	return &ConnectorStateRepository{db: db}
}

// SetDesiredState records state for the account's connector; runtime.StateRunning removes the record.
func (r *ConnectorStateRepository) SetDesiredState(ctx context.Context, accountID, connector, state string, now time.Time) error {
	if state == runtime.StateRunning {
		return r.ForgetDesiredState(ctx, connector)
	}
	row := connectorStateRow{Connector: connector, AccountID: accountID, State: state, UpdatedAt: toDB(now)}
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var cur connectorStateRow
		err := forUpdate(tx).Where("connector = ?", connector).Take(&cur).Error
		switch {
		case err == nil:
			return tx.Model(&connectorStateRow{}).Where("connector = ?", connector).
				Updates(map[string]any{"state": state, "updated_at": row.UpdatedAt}).Error
		case errors.Is(err, gorm.ErrRecordNotFound):
			return tx.Create(&row).Error
		default:
			return err
		}
	})
	return translate(err, "storing the desired state of connector "+connector, outcomes{})
}

// PurgeAccount removes the records of every connector of the account (account.Purger).
func (r *ConnectorStateRepository) PurgeAccount(ctx context.Context, accountID string) error {
	err := r.db.session(ctx).Where("account_id = ?", accountID).Delete(&connectorStateRow{}).Error
	return translate(err, "forgetting the connector states of account "+accountID, outcomes{})
}

// ForgetDesiredState removes the record of a connector (none is not an error).
func (r *ConnectorStateRepository) ForgetDesiredState(ctx context.Context, connector string) error {
	err := r.db.session(ctx).Where("connector = ?", connector).Delete(&connectorStateRow{}).Error
	return translate(err, "removing the desired state of connector "+connector, outcomes{})
}

// DesiredStates returns every recorded state by connector name.
func (r *ConnectorStateRepository) DesiredStates(ctx context.Context) (map[string]string, error) {
	var rows []connectorStateRow
	if err := r.db.session(ctx).Find(&rows).Error; err != nil {
		return nil, translate(err, "reading desired connector states", outcomes{})
	}
	out := make(map[string]string, len(rows))
	for _, row := range rows {
		out[row.Connector] = row.State
	}
	return out, nil
}

type leaseRow struct {
	Name      string    `gorm:"column:name;primaryKey"`
	Holder    string    `gorm:"column:holder"`
	ExpiresAt time.Time `gorm:"column:expires_at"`
}

func (leaseRow) TableName() string { return "leases" }

// Lease is one named lease row (table leases): whoever holds it until it expires is the only one doing a job,
// such as reconciling, among the control-plane replicas sharing the database. Holders compare expiry times with
// their own clocks, so the replicas' clocks must agree to well within the lease's time to live.
type Lease struct {
	db     *DB
	name   string
	holder string
	ttl    time.Duration
	now    func() time.Time
}

// NewLease returns the lease name as seen by holder (unique per replica), taken for ttl at a time.
func NewLease(db *DB, name, holder string, ttl time.Duration) *Lease {
	return &Lease{db: db, name: name, holder: holder, ttl: ttl, now: time.Now}
}

// Acquire takes or renews the lease and reports whether the holder has it for the next ttl: true when the lease
// was free, expired or already the holder's. It never waits for another holder. Each step is one statement (a
// conditional update, a read, the insert of a missing row), so concurrent replicas never deadlock on the row.
func (l *Lease) Acquire(ctx context.Context) (bool, error) {
	now := l.now()
	until := toDB(now.Add(l.ttl))
	db := l.db.session(ctx)
	err := db.Model(&leaseRow{}).Where("name = ? AND (holder = ? OR expires_at < ?)", l.name, l.holder, toDB(now)).
		Updates(map[string]any{"holder": l.holder, "expires_at": until}).Error
	if err != nil {
		return false, translate(err, "taking lease "+l.name, outcomes{})
	}
	// MySQL counts only rows whose values changed, so read the row rather than trust the count.
	var cur leaseRow
	err = db.Where("name = ?", l.name).Take(&cur).Error
	switch {
	case err == nil:
		return cur.Holder == l.holder && fromDB(cur.ExpiresAt).Equal(until), nil
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return false, translate(err, "reading lease "+l.name, outcomes{})
	}
	// No row yet (or released): create it; a replica that created it first wins.
	err = db.Create(&leaseRow{Name: l.name, Holder: l.holder, ExpiresAt: until}).Error
	switch {
	case err == nil:
		return true, nil
	case isDuplicateKey(err):
		return false, nil
	}
	return false, translate(err, "taking lease "+l.name, outcomes{})
}

// Release gives the lease up if the holder has it, so another replica takes it at once.
func (l *Lease) Release(ctx context.Context) error {
	err := l.db.session(ctx).Where("name = ? AND holder = ?", l.name, l.holder).Delete(&leaseRow{}).Error
	return translate(err, "releasing lease "+l.name, outcomes{})
}
