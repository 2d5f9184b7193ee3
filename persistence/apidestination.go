package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/domain/connection"
)

var (
	_ apidestination.Repository = (*APIDestinationRepository)(nil)
	_ apidestination.TargetRefs = (*APIDestinationRepository)(nil)
)

type apiDestinationRow struct {
	ID                           string    `gorm:"column:id;primaryKey"`
	AccountID                    string    `gorm:"column:account_id"`
	Name                         string    `gorm:"column:name"`
	Description                  string    `gorm:"column:description"`
	ConnectionID                 string    `gorm:"column:connection_id"`
	InvocationEndpoint           string    `gorm:"column:invocation_endpoint"`
	HTTPMethod                   string    `gorm:"column:http_method"`
	InvocationRateLimitPerSecond int       `gorm:"column:invocation_rate_limit_per_second"`
	CreatedAt                    time.Time `gorm:"column:created_at;autoCreateTime:false"`
	UpdatedAt                    time.Time `gorm:"column:updated_at;autoUpdateTime:false"`
}

func (apiDestinationRow) TableName() string { return "api_destinations" }

// apiDestinationView is a row joined with the name of its connection.
type apiDestinationView struct {
	ID                           string    `gorm:"column:id"`
	AccountID                    string    `gorm:"column:account_id"`
	Name                         string    `gorm:"column:name"`
	Description                  string    `gorm:"column:description"`
	ConnectionID                 string    `gorm:"column:connection_id"`
	ConnectionName               string    `gorm:"column:connection_name"`
	InvocationEndpoint           string    `gorm:"column:invocation_endpoint"`
	HTTPMethod                   string    `gorm:"column:http_method"`
	InvocationRateLimitPerSecond int       `gorm:"column:invocation_rate_limit_per_second"`
	CreatedAt                    time.Time `gorm:"column:created_at"`
	UpdatedAt                    time.Time `gorm:"column:updated_at"`
}

func apiDestinationToRow(d *apidestination.APIDestination) apiDestinationRow {
	return apiDestinationRow{
		ID: d.ID(), AccountID: d.AccountID(), Name: d.Name(), Description: d.Description(), ConnectionID: d.Connection().ID,
		InvocationEndpoint: d.InvocationEndpoint(), HTTPMethod: d.HTTPMethod(), InvocationRateLimitPerSecond: d.InvocationRateLimitPerSecond(),
		CreatedAt: toDB(d.CreatedAt()), UpdatedAt: toDB(d.UpdatedAt()),
	}
}

func apiDestinationFromView(v apiDestinationView) *apidestination.APIDestination {
	return apidestination.UnmarshalFromDatabase(v.ID, v.AccountID, v.Name, v.Description,
		apidestination.ConnectionRef{ID: v.ConnectionID, Name: v.ConnectionName}, v.InvocationEndpoint, v.HTTPMethod,
		v.InvocationRateLimitPerSecond, fromDB(v.CreatedAt), fromDB(v.UpdatedAt))
}

// APIDestinationRepository stores API destinations in the api_destinations table. A destination references its
// connection by id (a foreign key) and reads its name by a join, so a connection in use cannot be deleted. Names
// are unique per account and case-sensitive. It also answers which targets deliver to a destination (the
// targets' api_destination column).
type APIDestinationRepository struct {
	db *DB
}

// NewAPIDestinationRepository returns the API destination repository of db.
func NewAPIDestinationRepository(db *DB) *APIDestinationRepository {
	return &APIDestinationRepository{db: db}
}

// selectAPIDestinations selects API destinations with the names of their connections.
func selectAPIDestinations(tx *gorm.DB) *gorm.DB {
	return tx.Table("api_destinations AS d").Select("d.id, d.account_id, d.name, d.description, d.connection_id, " +
		"c.name AS connection_name, d.invocation_endpoint, d.http_method, d.invocation_rate_limit_per_second, d.created_at, d.updated_at").
		Joins("JOIN connections AS c ON c.id = d.connection_id")
}

// Create stores a new API destination. In one transaction, with the account's row locked, it counts the
// account's destinations (apidestination.ErrQuotaExceeded at max) and inserts (apidestination.ErrAlreadyExists
// for a name taken; connection.ErrNotFound when the connection was deleted meanwhile).
func (r *APIDestinationRepository) Create(ctx context.Context, d *apidestination.APIDestination, max int) error {
	row := apiDestinationToRow(d)
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		if err := lockAccount(tx, d.AccountID()); err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&apiDestinationRow{}).Where("account_id = ?", d.AccountID()).Count(&n).Error; err != nil {
			return err
		}
		if n >= int64(max) {
			return apidestination.ErrQuotaExceeded.With("an account may have at most %d API destinations; this one has %d", max, n)
		}
		return tx.Create(&row).Error
	})
	return translate(err, "storing API destination "+d.Name(), outcomes{
		duplicate:     apidestination.ErrAlreadyExists.With("API destination %q already exists", d.Name()),
		missingParent: connection.ErrNotFound.With("connection %q not found", d.Connection().Name).WithField("connection"),
	})
}

// Stamp changes whenever an API destination is created, changed or deleted (see ConnectionRepository.Stamp).
func (r *APIDestinationRepository) Stamp(ctx context.Context) (string, error) {
	return stamp(r.db.session(ctx).Model(&apiDestinationRow{}), "API destinations")
}

// Get returns apidestination.ErrNotFound when the account has no API destination of that name.
func (r *APIDestinationRepository) Get(ctx context.Context, accountID, name string) (*apidestination.APIDestination, error) {
	var v apiDestinationView
	if err := selectAPIDestinations(r.db.session(ctx)).Where("d.account_id = ? AND d.name = ?", accountID, name).Take(&v).Error; err != nil {
		return nil, translate(err, "reading API destination "+name, outcomes{notFound: apiDestinationNotFound(name)})
	}
	return apiDestinationFromView(v), nil
}

// List returns one page of the account's API destinations ordered by name and the next page's token.
func (r *APIDestinationRepository) List(ctx context.Context, accountID string, page domain.Page) ([]*apidestination.APIDestination, string, error) {
	q := selectAPIDestinations(r.db.session(ctx)).Where("d.account_id = ?", accountID)
	if after := page.After(); after != "" {
		q = q.Where("d.name > ?", after)
	}
	var vs []apiDestinationView
	if err := q.Order("d.name").Limit(pageLimit(page) + 1).Find(&vs).Error; err != nil {
		return nil, "", translate(err, "listing API destinations", outcomes{})
	}
	vs, next := cutPage(vs, page, func(v apiDestinationView) string { return v.Name })
	return fromRows(vs, apiDestinationFromView), next, nil
}

// Update loads the API destination with its row locked, lets fn change it and stores it in one transaction.
// apidestination.ErrNotFound when it does not exist; fn's error is returned as is and nothing is stored;
// connection.ErrNotFound when its new connection was deleted meanwhile.
func (r *APIDestinationRepository) Update(ctx context.Context, accountID, name string,
	fn func(*apidestination.APIDestination) error) (*apidestination.APIDestination, error) {
	var (
		stored *apidestination.APIDestination
		fnErr  error
	)
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var row apiDestinationRow
		if err := forUpdate(tx).Where("account_id = ? AND name = ?", accountID, name).Take(&row).Error; err != nil {
			return err
		}
		var v apiDestinationView
		if err := selectAPIDestinations(tx).Where("d.id = ?", row.ID).Take(&v).Error; err != nil {
			return err
		}
		d := apiDestinationFromView(v)
		if fnErr = fn(d); fnErr != nil {
			return fnErr
		}
		stored = d
		next := apiDestinationToRow(d)
		return tx.Model(&apiDestinationRow{}).Where("id = ?", row.ID).Updates(map[string]any{
			"description":                      next.Description,
			"connection_id":                    next.ConnectionID,
			"invocation_endpoint":              next.InvocationEndpoint,
			"http_method":                      next.HTTPMethod,
			"invocation_rate_limit_per_second": next.InvocationRateLimitPerSecond,
			"updated_at":                       next.UpdatedAt,
		}).Error
	})
	if fnErr != nil {
		return nil, fnErr
	}
	if err != nil {
		return nil, translate(err, "updating API destination "+name, outcomes{
			notFound:      apiDestinationNotFound(name),
			missingParent: connection.ErrNotFound.With("the connection was deleted meanwhile").WithField("connection"),
		})
	}
	return stored, nil
}

// Delete removes an API destination; apidestination.ErrNotFound when it does not exist.
func (r *APIDestinationRepository) Delete(ctx context.Context, id string) error {
	res := r.db.session(ctx).Where("id = ?", id).Delete(&apiDestinationRow{})
	if res.Error != nil {
		return translate(res.Error, "deleting API destination "+id, outcomes{})
	}
	if res.RowsAffected == 0 {
		return apidestination.ErrNotFound.With("API destination %s not found", id)
	}
	return nil
}

// DestinationsUsing returns the names of the API destinations that use the connection, ordered by name.
func (r *APIDestinationRepository) DestinationsUsing(ctx context.Context, connectionID string) ([]string, error) {
	var names []string
	err := r.db.session(ctx).Model(&apiDestinationRow{}).Where("connection_id = ?", connectionID).Order("name").Pluck("name", &names).Error
	if err != nil {
		return nil, translate(err, "listing the API destinations of a connection", outcomes{})
	}
	return names, nil
}

// TargetsUsing returns the targets of the account whose api_destination column holds name, with the names of
// their buses and rules, ordered by bus, rule and target name.
func (r *APIDestinationRepository) TargetsUsing(ctx context.Context, accountID, name string) ([]apidestination.TargetRef, error) {
	var rows []struct {
		Bus    string `gorm:"column:bus_name"`
		Rule   string `gorm:"column:rule_name"`
		Target string `gorm:"column:target_name"`
	}
	err := r.db.session(ctx).Table("targets AS t").Select("b.name AS bus_name, r.name AS rule_name, t.name AS target_name").
		Joins("JOIN rules AS r ON r.id = t.rule_id").Joins("JOIN buses AS b ON b.id = t.bus_id").
		Where("t.account_id = ? AND t.api_destination = ?", accountID, name).
		Order("b.name").Order("r.name").Order("t.name").Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "listing the targets of an API destination", outcomes{})
	}
	out := make([]apidestination.TargetRef, len(rows))
	for i, row := range rows {
		out[i] = apidestination.TargetRef{Bus: row.Bus, Rule: row.Rule, Target: row.Target}
	}
	return out, nil
}

func apiDestinationNotFound(name string) error {
	return apidestination.ErrNotFound.With("API destination %q not found", name)
}
