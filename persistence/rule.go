package persistence

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/rule"
)

var _ rule.Repository = (*RuleRepository)(nil)

type ruleRow struct {
	ID           string `gorm:"column:id;primaryKey"`
	AccountID    string `gorm:"column:account_id"`
	BusID        string `gorm:"column:bus_id"`
	Name         string `gorm:"column:name"`
	Description  string `gorm:"column:description"`
	EventPattern string `gorm:"column:event_pattern"`
	// PatternSyntax is the syntax of the pattern: '' (CloudEvents) or 'aws'.
	PatternSyntax string `gorm:"column:pattern_syntax"`
	State         string `gorm:"column:state"`
	// Layout is the rule's layout (a JSON object); NULL when it has none.
	Layout    *string   `gorm:"column:layout"`
	CreatedAt time.Time `gorm:"column:created_at;autoCreateTime:false"`
	UpdatedAt time.Time `gorm:"column:updated_at;autoUpdateTime:false"`
}

func (ruleRow) TableName() string { return "rules" }

func ruleToRow(r *rule.Rule) ruleRow {
	row := ruleRow{
		ID: r.ID(), AccountID: r.AccountID(), BusID: r.BusID(), Name: r.Name(), Description: r.Description(),
		EventPattern: string(r.EventPattern()), PatternSyntax: string(r.Syntax()), State: string(r.State()),
		CreatedAt: toDB(r.CreatedAt()), UpdatedAt: toDB(r.UpdatedAt()),
	}
	if l := r.Layout(); l != nil {
		s := string(l)
		row.Layout = &s
	}
	return row
}

// changes are the columns a change of the rule writes.
func (row ruleRow) changes() map[string]any {
	return map[string]any{
		"description":    row.Description,
		"event_pattern":  row.EventPattern,
		"pattern_syntax": row.PatternSyntax,
		"state":          row.State,
		"layout":         row.Layout,
		"updated_at":     row.UpdatedAt,
	}
}

func ruleFromRow(row ruleRow) *rule.Rule {
	r := rule.UnmarshalFromDatabase(row.ID, row.AccountID, row.BusID, row.Name, row.Description,
		[]byte(row.EventPattern), rule.Syntax(row.PatternSyntax), rule.State(row.State), fromDB(row.CreatedAt), fromDB(row.UpdatedAt))
	if row.Layout != nil {
		r.WithLayout([]byte(*row.Layout))
	}
	return r
}

// RuleRepository stores rules in the rules table. Names are unique per bus and case-sensitive.
type RuleRepository struct {
	db *DB
}

// NewRuleRepository returns the rule repository of db.
func NewRuleRepository(db *DB) *RuleRepository { return &RuleRepository{db: db} }

// Create stores a new rule: rule.ErrAlreadyExists when the bus has a rule of that name, bus.ErrNotFound when
// the bus does not exist.
func (r *RuleRepository) Create(ctx context.Context, ru *rule.Rule) error {
	row := ruleToRow(ru)
	err := r.db.session(ctx).Create(&row).Error
	return translate(err, "storing rule "+ru.Name(), outcomes{
		duplicate:     rule.ErrAlreadyExists.With("rule %q already exists on this bus", ru.Name()),
		missingParent: bus.ErrNotFound.With("bus %s not found", ru.BusID()),
	})
}

// Get returns rule.ErrNotFound when the bus has no rule of that name.
func (r *RuleRepository) Get(ctx context.Context, busID, name string) (*rule.Rule, error) {
	var row ruleRow
	if err := r.db.session(ctx).Where("bus_id = ? AND name = ?", busID, name).Take(&row).Error; err != nil {
		return nil, translate(err, "reading rule "+name, outcomes{notFound: ruleNotFound(name)})
	}
	return ruleFromRow(row), nil
}

// GetByID returns rule.ErrNotFound when no rule has that id.
func (r *RuleRepository) GetByID(ctx context.Context, id string) (*rule.Rule, error) {
	var row ruleRow
	if err := r.db.session(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return nil, translate(err, "reading rule "+id, outcomes{notFound: rule.ErrNotFound.With("rule %s not found", id)})
	}
	return ruleFromRow(row), nil
}

// List returns one page of the bus's rules ordered by name and the next page's token ("" at the end).
func (r *RuleRepository) List(ctx context.Context, busID string, page domain.Page) ([]*rule.Rule, string, error) {
	var rows []ruleRow
	if err := pageQuery(r.db.session(ctx).Where("bus_id = ?", busID), page).Find(&rows).Error; err != nil {
		return nil, "", translate(err, "listing rules", outcomes{})
	}
	rows, next := cutPage(rows, page, func(row ruleRow) string { return row.Name })
	return fromRows(rows, ruleFromRow), next, nil
}

// ListByBus returns every rule of the bus ordered by name.
func (r *RuleRepository) ListByBus(ctx context.Context, busID string) ([]*rule.Rule, error) {
	var rows []ruleRow
	if err := r.db.hotRead(ctx).Where("bus_id = ?", busID).Order("name").Find(&rows).Error; err != nil {
		return nil, translate(err, "listing rules", outcomes{})
	}
	return fromRows(rows, ruleFromRow), nil
}

// StampsByBus returns, by bus id, a stamp of the bus's rules that changes with every create, update and delete
// of one of them (connect.BusStamper).
func (r *RuleRepository) StampsByBus(ctx context.Context) (map[string]string, error) {
	return stampsByBus(r.db.session(ctx).Model(&ruleRow{}), "rules")
}

// NamesByBus returns the names of the bus's rules, sorted.
func (r *RuleRepository) NamesByBus(ctx context.Context, busID string) ([]string, error) {
	var names []string
	if err := r.db.session(ctx).Model(&ruleRow{}).Where("bus_id = ?", busID).Order("name").Pluck("name", &names).Error; err != nil {
		return nil, translate(err, "listing rules", outcomes{})
	}
	return names, nil
}

// CountByBus counts the bus's rules.
func (r *RuleRepository) CountByBus(ctx context.Context, busID string) (int, error) {
	var n int64
	if err := r.db.session(ctx).Model(&ruleRow{}).Where("bus_id = ?", busID).Count(&n).Error; err != nil {
		return 0, translate(err, "counting rules", outcomes{})
	}
	return int(n), nil
}

// Update loads the rule with its row locked, lets fn change it and stores its description, pattern and its syntax, state and
// update time, in one transaction. rule.ErrNotFound when it does not exist; fn's error is returned as is and
// nothing is stored. It returns the rule as stored.
func (r *RuleRepository) Update(ctx context.Context, busID, name string, fn func(*rule.Rule) error) (*rule.Rule, error) {
	var (
		stored ruleRow
		fnErr  error
	)
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var row ruleRow
		if err := forUpdate(tx).Where("bus_id = ? AND name = ?", busID, name).Take(&row).Error; err != nil {
			return err
		}
		ru := ruleFromRow(row)
		if fnErr = fn(ru); fnErr != nil {
			return fnErr
		}
		stored = ruleToRow(ru)
		return tx.Model(&ruleRow{}).Where("id = ?", row.ID).Updates(stored.changes()).Error
	})
	if fnErr != nil {
		return nil, fnErr
	}
	if err != nil {
		return nil, translate(err, "updating rule "+name, outcomes{notFound: ruleNotFound(name)})
	}
	return ruleFromRow(stored), nil
}

// Delete removes the rule and its targets in one transaction; rule.ErrNotFound when it does not exist.
func (r *RuleRepository) Delete(ctx context.Context, busID, name string) error {
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var row ruleRow
		if err := forUpdate(tx).Where("bus_id = ? AND name = ?", busID, name).Take(&row).Error; err != nil {
			return err
		}
		if err := tx.Where("rule_id = ?", row.ID).Delete(&targetRow{}).Error; err != nil {
			return err
		}
		return tx.Where("id = ?", row.ID).Delete(&ruleRow{}).Error
	})
	return translate(err, "deleting rule "+name, outcomes{notFound: ruleNotFound(name)})
}

func ruleNotFound(name string) error { return rule.ErrNotFound.With("rule %q not found", name) }
