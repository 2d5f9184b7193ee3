package persistence

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/channel"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/target"
)

// ChannelRepository reads and writes a rule, its targets and its bus's sources together (channel.Repository).
type ChannelRepository struct {
	db *DB
}

var _ channel.Repository = (*ChannelRepository)(nil)

// NewChannelRepository returns the channel repository of db.
func NewChannelRepository(db *DB) *ChannelRepository { return &ChannelRepository{db: db} }

// Read reads the rule, its targets and the bus's sources in one transaction (on MySQL a consistent snapshot of
// the three tables under REPEATABLE READ; on SQLite the one connection).
func (r *ChannelRepository) Read(ctx context.Context, busID, ruleName string) (*rule.Rule, []*target.Target, []*source.Source, error) {
	var (
		rr      ruleRow
		trows   []targetRow
		srows   []sourceRow
		noRule  bool
		readErr error
	)
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("bus_id = ? AND name = ?", busID, ruleName).Take(&rr).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				noRule = true
			} else {
				return err
			}
		} else if err := tx.Where("rule_id = ?", rr.ID).Order("name").Find(&trows).Error; err != nil {
			return err
		}
		return tx.Where("bus_id = ?", busID).Order("name").Find(&srows).Error
	})
	if err != nil {
		return nil, nil, nil, translate(err, "reading the channel of rule "+ruleName, outcomes{})
	}
	srcs, readErr := sourcesFromRows(srows)
	if readErr != nil {
		return nil, nil, nil, readErr
	}
	if noRule {
		return nil, nil, srcs, ruleNotFound(ruleName)
	}
	ts, readErr := targetsFromRows(trows)
	if readErr != nil {
		return nil, nil, nil, readErr
	}
	return ruleFromRow(rr), ts, srcs, nil
}

// Apply stores a plan in one transaction, with the bus's row locked so that changes of one bus's channels take
// turns (and the quotas counted in it hold).
func (r *ChannelRepository) Apply(ctx context.Context, p channel.Plan) error {
	rows := struct {
		rule                        ruleRow
		createSources, replaceSrcs  []sourceRow
		createTargets, replaceTrgts []targetRow
	}{rule: ruleToRow(p.Rule)}
	for _, s := range p.CreateSources {
		row, err := sourceToRow(s)
		if err != nil {
			return err
		}
		rows.createSources = append(rows.createSources, row)
	}
	for _, s := range p.ReplaceSources {
		row, err := sourceToRow(s)
		if err != nil {
			return err
		}
		rows.replaceSrcs = append(rows.replaceSrcs, row)
	}
	for _, t := range p.CreateTargets {
		row, err := targetToRow(t)
		if err != nil {
			return err
		}
		rows.createTargets = append(rows.createTargets, row)
	}
	for _, t := range p.ReplaceTargets {
		row, err := targetToRow(t)
		if err != nil {
			return err
		}
		rows.replaceTrgts = append(rows.replaceTrgts, row)
	}
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var buses []busRow
		if err := forUpdate(tx).Where("id = ?", p.BusID).Find(&buses).Error; err != nil {
			return err
		}
		if len(buses) == 0 {
			return bus.ErrNotFound.With("bus %s not found", p.BusID)
		}
		if p.CreateRule {
			var n int64
			if err := tx.Model(&ruleRow{}).Where("bus_id = ?", p.BusID).Count(&n).Error; err != nil {
				return err
			}
			if n >= int64(p.MaxRules) {
				return rule.ErrQuotaExceeded.With("quota exceeded: rules per bus (%d); the bus has %d", p.MaxRules, n)
			}
			if err := tx.Create(&rows.rule).Error; err != nil {
				return translate(err, "storing rule "+rows.rule.Name, outcomes{
					duplicate: rule.ErrAlreadyExists.With("rule %q was created by another request meanwhile", rows.rule.Name),
				})
			}
		} else if err := update(tx, &ruleRow{}, rows.rule.ID, rows.rule.changes(), "rule "+rows.rule.Name); err != nil {
			return err
		}
		if len(rows.createSources) > 0 {
			var n int64
			if err := tx.Model(&sourceRow{}).Where("bus_id = ?", p.BusID).Count(&n).Error; err != nil {
				return err
			}
			if n+int64(len(rows.createSources)) > int64(p.MaxSources) {
				return source.ErrQuotaExceeded.With("a bus may have at most %d sources; this one has %d", p.MaxSources, n)
			}
			for i := range rows.createSources {
				if err := tx.Create(&rows.createSources[i]).Error; err != nil {
					return translate(err, "storing source "+rows.createSources[i].Name, outcomes{
						duplicate: channel.ErrChanged.With("source %q was created by another request meanwhile", rows.createSources[i].Name),
					})
				}
			}
		}
		for _, row := range rows.replaceSrcs {
			if err := update(tx, &sourceRow{}, row.ID, row.changes(), "source "+row.Name); err != nil {
				return err
			}
		}
		if len(p.DeleteTargets) > 0 {
			if err := tx.Where("rule_id = ? AND id IN ?", rows.rule.ID, p.DeleteTargets).Delete(&targetRow{}).Error; err != nil {
				return err
			}
		}
		for _, row := range rows.replaceTrgts {
			if err := update(tx, &targetRow{}, row.ID, row.changes(), "target "+row.Name); err != nil {
				return err
			}
		}
		for i := range rows.createTargets {
			if err := tx.Create(&rows.createTargets[i]).Error; err != nil {
				return translate(err, "storing target "+rows.createTargets[i].Name, outcomes{
					duplicate: channel.ErrChanged.With("target %q was created by another request meanwhile", rows.createTargets[i].Name),
				})
			}
		}
		var n int64
		if err := tx.Model(&targetRow{}).Where("rule_id = ?", rows.rule.ID).Count(&n).Error; err != nil {
			return err
		}
		if n > target.MaxPerRule {
			return target.ErrLimitExceeded.With("a rule may have at most %d targets; this one would have %d", target.MaxPerRule, n)
		}
		return nil
	})
	return translate(err, "storing the channel of rule "+rows.rule.Name, outcomes{})
}

// update writes changes to the row of model with id: channel.ErrChanged when there is none any more (another
// request deleted what the plan read). MySQL counts only the rows an update changed, so a row left as it was is
// looked for.
func update(tx *gorm.DB, model any, id string, changes map[string]any, what string) error {
	res := tx.Model(model).Where("id = ?", id).Updates(changes)
	if res.Error != nil || res.RowsAffected > 0 {
		return res.Error
	}
	var n int64
	if err := tx.Model(model).Where("id = ?", id).Count(&n).Error; err != nil {
		return err
	}
	if n == 0 {
		return channel.ErrChanged.With("%s was deleted by another request meanwhile; read the channel again", what)
	}
	return nil
}
