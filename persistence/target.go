package persistence

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/domain/transform"
)

var _ target.Repository = (*TargetRepository)(nil)

type targetRow struct {
	ID                      string    `gorm:"column:id;primaryKey"`
	AccountID               string    `gorm:"column:account_id"`
	BusID                   string    `gorm:"column:bus_id"`
	RuleID                  string    `gorm:"column:rule_id"`
	Name                    string    `gorm:"column:name"`
	Type                    string    `gorm:"column:type"`
	Config                  string    `gorm:"column:config"`
	RetryMaxAttempts        int       `gorm:"column:retry_max_attempts"`
	RetryMaxEventAgeSeconds int       `gorm:"column:retry_max_event_age_seconds"`
	CreatedAt               time.Time `gorm:"column:created_at;autoCreateTime:false"`
	UpdatedAt               time.Time `gorm:"column:updated_at;autoUpdateTime:false"`
	// InputTransformer is the JSON form of the target's transform.Spec; NULL when it has none.
	InputTransformer *string `gorm:"column:input_transformer"`
	// APIDestination is the name of the API destination of an api-destination target; NULL for other types.
	APIDestination *string `gorm:"column:api_destination"`
	// Format is what the target receives: cloudevents or aws ('' before there were formats: cloudevents).
	Format string `gorm:"column:format"`
	// RoleARN is the role ARN the target was declared with ('' for none).
	RoleARN string `gorm:"column:role_arn"`
}

func (targetRow) TableName() string { return "targets" }

// httpConfigJSON is the stored form of an http target's configuration (the config column).
type httpConfigJSON struct {
	URL    string `json:"url"`
	Method string `json:"method"`
	// Headers hold the values of secret headers sealed (enc:...).
	Headers       map[string]string `json:"headers"`
	SecretHeaders []string          `json:"secretHeaders,omitempty"`
	Mode          string            `json:"mode"`
	// Timeout is a Go duration ("5s").
	Timeout string `json:"timeout"`
	// DeadLetterBus is kept with the config of every type.
	DeadLetterBus string `json:"deadLetterBus,omitempty"`
}

// pluginConfigJSON is the stored form of a plugin target's config: the sink plugin's keys, secret values sealed.
type pluginConfigJSON struct {
	Config        map[string]string `json:"config"`
	DeadLetterBus string            `json:"deadLetterBus,omitempty"`
}

// refConfigJSON is the stored form of the config of the other target types: what they name.
type refConfigJSON struct {
	APIDestination      string   `json:"apiDestination,omitempty"`
	PathParameterValues []string `json:"pathParameterValues,omitempty"`
	Bus                 string   `json:"bus,omitempty"`
	DeadLetterBus       string   `json:"deadLetterBus,omitempty"`
}

func targetToRow(t *target.Target) (targetRow, error) {
	var (
		config []byte
		err    error
		dest   *string
	)
	switch t.Type() {
	case target.HTTP:
		c := t.HTTP()
		config, err = json.Marshal(httpConfigJSON{
			URL: c.URL, Method: c.Method, Headers: c.Headers, SecretHeaders: c.SecretHeaders, Mode: string(c.Mode),
			Timeout: c.Timeout.String(), DeadLetterBus: t.DeadLetterBus(),
		})
	case target.APIDestination, target.Bus, target.Log:
		config, err = json.Marshal(refConfigJSON{APIDestination: t.APIDestination(), PathParameterValues: t.PathParameterValues(),
			Bus: t.Bus(), DeadLetterBus: t.DeadLetterBus()})
		if name := t.APIDestination(); name != "" {
			dest = &name
		}
	default:
		if !t.Type().IsPlugin() {
			return targetRow{}, fmt.Errorf("storing target %s: type %q has no stored form", t.Name(), t.Type())
		}
		config, err = json.Marshal(pluginConfigJSON{Config: t.Config(), DeadLetterBus: t.DeadLetterBus()})
	}
	if err != nil {
		return targetRow{}, fmt.Errorf("encoding the config of target %s: %w", t.Name(), err)
	}
	var transformer *string
	if tr := t.Transformer(); !tr.IsZero() {
		b, err := json.Marshal(tr)
		if err != nil {
			return targetRow{}, fmt.Errorf("encoding the input transformer of target %s: %w", t.Name(), err)
		}
		s := string(b)
		transformer = &s
	}
	return targetRow{
		ID: t.ID(), AccountID: t.AccountID(), BusID: t.BusID(), RuleID: t.RuleID(), Name: t.Name(),
		Type: string(t.Type()), Config: string(config), InputTransformer: transformer, APIDestination: dest, Format: string(t.Format()),
		RoleARN:          t.RoleARN(),
		RetryMaxAttempts: t.RetryPolicy().MaximumRetryAttempts, RetryMaxEventAgeSeconds: t.RetryPolicy().MaximumEventAgeInSeconds,
		CreatedAt: toDB(t.CreatedAt()), UpdatedAt: toDB(t.UpdatedAt()),
	}, nil
}

// changes are the columns a change of the target writes.
func (row targetRow) changes() map[string]any {
	return map[string]any{
		"type":                        row.Type,
		"config":                      row.Config,
		"input_transformer":           row.InputTransformer,
		"api_destination":             row.APIDestination,
		"format":                      row.Format,
		"role_arn":                    row.RoleARN,
		"retry_max_attempts":          row.RetryMaxAttempts,
		"retry_max_event_age_seconds": row.RetryMaxEventAgeSeconds,
		"updated_at":                  row.UpdatedAt,
	}
}

func targetFromRow(row targetRow) (*target.Target, error) {
	var (
		c    target.HTTPConfig
		refs target.Refs
	)
	switch target.Type(row.Type) {
	case target.APIDestination, target.Bus, target.Log:
		var j refConfigJSON
		if err := json.Unmarshal([]byte(row.Config), &j); err != nil {
			return nil, fmt.Errorf("reading the config of target %s: %w", row.ID, err)
		}
		refs = target.Refs{APIDestination: j.APIDestination, Bus: j.Bus, DeadLetterBus: j.DeadLetterBus,
			PathParameterValues: j.PathParameterValues}
	case target.HTTP:
		var j httpConfigJSON
		if err := json.Unmarshal([]byte(row.Config), &j); err != nil {
			return nil, fmt.Errorf("reading the config of target %s: %w", row.ID, err)
		}
		refs.DeadLetterBus = j.DeadLetterBus
		c = target.HTTPConfig{URL: j.URL, Method: j.Method, Headers: j.Headers, SecretHeaders: j.SecretHeaders, Mode: target.Mode(j.Mode)}
		if j.Timeout != "" {
			d, err := time.ParseDuration(j.Timeout)
			if err != nil {
				return nil, fmt.Errorf("reading the config of target %s: timeout: %w", row.ID, err)
			}
			c.Timeout = d
		}
	default:
		if !target.Type(row.Type).IsPlugin() {
			return nil, fmt.Errorf("reading target %s: unknown type %q", row.ID, row.Type)
		}
		var j pluginConfigJSON
		if err := json.Unmarshal([]byte(row.Config), &j); err != nil {
			return nil, fmt.Errorf("reading the config of target %s: %w", row.ID, err)
		}
		refs = target.Refs{DeadLetterBus: j.DeadLetterBus, Config: j.Config}
	}
	var transformer transform.Spec
	if row.InputTransformer != nil && *row.InputTransformer != "" {
		var err error
		if transformer, err = transform.ParseSpec([]byte(*row.InputTransformer)); err != nil {
			return nil, fmt.Errorf("reading the input transformer of target %s: %w", row.ID, err)
		}
	}
	retry := target.RetryPolicy{MaximumRetryAttempts: row.RetryMaxAttempts, MaximumEventAgeInSeconds: row.RetryMaxEventAgeSeconds}
	return target.UnmarshalFromDatabase(row.ID, row.AccountID, row.BusID, row.RuleID, row.Name, target.Type(row.Type),
		c, transformer, retry, fromDB(row.CreatedAt), fromDB(row.UpdatedAt)).WithRefs(refs).WithFormat(target.Format(row.Format)).WithRoleARN(row.RoleARN), nil
}

func targetsFromRows(rows []targetRow) ([]*target.Target, error) {
	out := make([]*target.Target, len(rows))
	for i, row := range rows {
		t, err := targetFromRow(row)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// TargetRepository stores targets in the targets table, their type's configuration as JSON in the config column
// and their input transformer, if any, as JSON in the input_transformer column.
// Names are unique per rule and case-sensitive.
type TargetRepository struct {
	db *DB
}

// NewTargetRepository returns the target repository of db.
func NewTargetRepository(db *DB) *TargetRepository { return &TargetRepository{db: db} }

// Create stores a new target. In one transaction, with the rule's row locked so that concurrent creations on one
// rule take turns, it checks that the rule exists (rule.ErrNotFound) and has fewer than target.MaxPerRule targets
// (target.ErrLimitExceeded), then inserts (target.ErrAlreadyExists when the rule has a target of that name).
func (r *TargetRepository) Create(ctx context.Context, t *target.Target) error {
	row, err := targetToRow(t)
	if err != nil {
		return err
	}
	err = r.db.transact(ctx, func(tx *gorm.DB) error {
		if err := forUpdate(tx).Where("id = ?", t.RuleID()).Take(&ruleRow{}).Error; err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&targetRow{}).Where("rule_id = ?", t.RuleID()).Count(&n).Error; err != nil {
			return err
		}
		if n >= target.MaxPerRule {
			return target.ErrLimitExceeded.With("a rule may have at most %d targets; this one has %d", target.MaxPerRule, n)
		}
		return tx.Create(&row).Error
	})
	return translate(err, "storing target "+t.Name(), outcomes{
		notFound:      rule.ErrNotFound.With("rule %s not found", t.RuleID()),
		duplicate:     target.ErrAlreadyExists.With("target %q already exists on this rule", t.Name()),
		missingParent: rule.ErrNotFound.With("rule %s not found", t.RuleID()),
	})
}

// Get returns target.ErrNotFound when the rule has no target of that name.
func (r *TargetRepository) Get(ctx context.Context, ruleID, name string) (*target.Target, error) {
	var row targetRow
	if err := r.db.session(ctx).Where("rule_id = ? AND name = ?", ruleID, name).Take(&row).Error; err != nil {
		return nil, translate(err, "reading target "+name, outcomes{notFound: targetNotFound(name)})
	}
	return targetFromRow(row)
}

// ListByRule returns the rule's targets ordered by name.
func (r *TargetRepository) ListByRule(ctx context.Context, ruleID string) ([]*target.Target, error) {
	var rows []targetRow
	if err := r.db.session(ctx).Where("rule_id = ?", ruleID).Order("name").Find(&rows).Error; err != nil {
		return nil, translate(err, "listing targets", outcomes{})
	}
	return targetsFromRows(rows)
}

// ListByBus returns the targets of every rule of the bus, ordered by rule id and name.
func (r *TargetRepository) ListByBus(ctx context.Context, busID string) ([]*target.Target, error) {
	var rows []targetRow
	if err := r.db.hotRead(ctx).Where("bus_id = ?", busID).Order("rule_id").Order("name").Find(&rows).Error; err != nil {
		return nil, translate(err, "listing targets", outcomes{})
	}
	return targetsFromRows(rows)
}

// StampsByBus returns, by bus id, a stamp of the bus's targets that changes with every create, update and delete
// of one of them (connect.BusStamper).
func (r *TargetRepository) StampsByBus(ctx context.Context) (map[string]string, error) {
	return stampsByBus(r.db.session(ctx).Model(&targetRow{}), "targets")
}

// Update loads the target with its row locked, lets fn change it and stores its type, configuration, input
// transformer, retry policy and update time, in one transaction. target.ErrNotFound when it does not exist; fn's
// error is returned as is and nothing is stored. It returns the target as stored.
func (r *TargetRepository) Update(ctx context.Context, ruleID, name string, fn func(*target.Target) error) (*target.Target, error) {
	var (
		stored targetRow
		fnErr  error
	)
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var row targetRow
		if err := forUpdate(tx).Where("rule_id = ? AND name = ?", ruleID, name).Take(&row).Error; err != nil {
			return err
		}
		t, err := targetFromRow(row)
		if err != nil {
			return err
		}
		if fnErr = fn(t); fnErr != nil {
			return fnErr
		}
		if stored, err = targetToRow(t); err != nil {
			return err
		}
		return tx.Model(&targetRow{}).Where("id = ?", row.ID).Updates(stored.changes()).Error
	})
	if fnErr != nil {
		return nil, fnErr
	}
	if err != nil {
		return nil, translate(err, "updating target "+name, outcomes{notFound: targetNotFound(name)})
	}
	return targetFromRow(stored)
}

// Delete removes a target; target.ErrNotFound when it does not exist.
func (r *TargetRepository) Delete(ctx context.Context, ruleID, name string) error {
	res := r.db.session(ctx).Where("rule_id = ? AND name = ?", ruleID, name).Delete(&targetRow{})
	if res.Error != nil {
		return translate(res.Error, "deleting target "+name, outcomes{})
	}
	if res.RowsAffected == 0 {
		return targetNotFound(name)
	}
	return nil
}

func targetNotFound(name string) error { return target.ErrNotFound.With("target %q not found", name) }
