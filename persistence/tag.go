package persistence

import (
	"context"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/tag"
)

var _ tag.Repository = (*TagRepository)(nil)

type tagRow struct {
	AccountID  string `gorm:"column:account_id;primaryKey"`
	ResourceID string `gorm:"column:resource_id;primaryKey"`
	Key        string `gorm:"column:tag_key;primaryKey"`
	Value      string `gorm:"column:tag_value"`
}

func (tagRow) TableName() string { return "tags" }

// TagRepository stores tags in the tags table.
type TagRepository struct {
	db *DB
}

// NewTagRepository returns the tag repository of db.
func NewTagRepository(db *DB) *TagRepository { return &TagRepository{db: db} }

// Set upserts the tags, in one transaction with the account's row locked (concurrent changes take turns), and
// refuses with tag.ErrTooMany when the resource would hold more than tag.MaxPerResource.
func (r *TagRepository) Set(ctx context.Context, accountID, resourceID string, tags []tag.Tag) error {
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		if err := lockAccount(tx, accountID); err != nil {
			return err
		}
		var keys []string
		if err := tx.Model(&tagRow{}).Where("account_id = ? AND resource_id = ?", accountID, resourceID).
			Pluck("tag_key", &keys).Error; err != nil {
			return err
		}
		have := make(map[string]bool, len(keys))
		for _, k := range keys {
			have[k] = true
		}
		rows := make([]tagRow, 0, len(tags))
		n := len(keys)
		for _, t := range tags {
			if !have[t.Key] {
				n++
			}
			rows = append(rows, tagRow{AccountID: accountID, ResourceID: resourceID, Key: t.Key, Value: t.Value})
		}
		if n > tag.MaxPerResource {
			return tag.ErrTooMany.With("the resource would have %d tags; at most %d are allowed", n, tag.MaxPerResource)
		}
		return tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&rows).Error
	})
	return translate(err, "tagging resource "+resourceID, outcomes{
		missingParent: domain.Invalid("account", "account %q does not exist", accountID),
	})
}

// Remove deletes the tags of keys.
func (r *TagRepository) Remove(ctx context.Context, accountID, resourceID string, keys []string) error {
	err := r.db.session(ctx).Where("account_id = ? AND resource_id = ? AND tag_key IN ?", accountID, resourceID, keys).
		Delete(&tagRow{}).Error
	return translate(err, "untagging resource "+resourceID, outcomes{})
}

// List returns the resource's tags sorted by key.
func (r *TagRepository) List(ctx context.Context, accountID, resourceID string) ([]tag.Tag, error) {
	var rows []tagRow
	if err := r.db.session(ctx).Where("account_id = ? AND resource_id = ?", accountID, resourceID).Order("tag_key").
		Find(&rows).Error; err != nil {
		return nil, translate(err, "listing the tags of resource "+resourceID, outcomes{})
	}
	out := make([]tag.Tag, len(rows))
	for i, row := range rows {
		out[i] = tag.Tag{Key: row.Key, Value: row.Value}
	}
	return out, nil
}

// DeleteAccount deletes every tag of the account.
func (r *TagRepository) DeleteAccount(ctx context.Context, accountID string) error {
	err := r.db.session(ctx).Where("account_id = ?", accountID).Delete(&tagRow{}).Error
	return translate(err, "deleting the tags of account "+accountID, outcomes{})
}
