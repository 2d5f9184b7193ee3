package persistence

import (
	"context"
	"encoding/json"
	"time"

	"gorm.io/gorm"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/replay"
)

var _ replay.Repository = (*ReplayRepository)(nil)

type replayRow struct {
	ID               string     `gorm:"column:id;primaryKey"`
	AccountID        string     `gorm:"column:account_id"`
	Name             string     `gorm:"column:name"`
	Description      string     `gorm:"column:description"`
	ArchiveID        string     `gorm:"column:archive_id"`
	ArchiveName      string     `gorm:"column:archive_name"`
	BusID            string     `gorm:"column:bus_id"`
	EventStartTime   time.Time  `gorm:"column:event_start_time"`
	EventEndTime     time.Time  `gorm:"column:event_end_time"`
	Destination      string     `gorm:"column:destination"`
	Rate             int        `gorm:"column:rate"`
	EndSequence      uint64     `gorm:"column:end_sequence"`
	State            string     `gorm:"column:state"`
	StateReason      string     `gorm:"column:state_reason"`
	Replayed         uint64     `gorm:"column:replayed"`
	Duplicates       uint64     `gorm:"column:duplicates"`
	LastReplayedTime *time.Time `gorm:"column:last_replayed_time"`
	StartedAt        time.Time  `gorm:"column:started_at;autoCreateTime:false"`
	EndedAt          *time.Time `gorm:"column:ended_at"`
	UpdatedAt        time.Time  `gorm:"column:updated_at;autoUpdateTime:false"`
}

func (replayRow) TableName() string { return "replays" }

// destinationJSON is how a replay's destination is stored.
type destinationJSON struct {
	RuleIDs        []string `json:"ruleIds,omitempty"`
	RuleNames      []string `json:"ruleNames,omitempty"`
	TargetRuleID   string   `json:"targetRuleId,omitempty"`
	TargetRuleName string   `json:"targetRuleName,omitempty"`
	TargetID       string   `json:"targetId,omitempty"`
	TargetName     string   `json:"targetName,omitempty"`
}

func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	v := toDB(t)
	return &v
}

func replayToRow(r *replay.Replay) replayRow {
	d := r.Destination
	dest, _ := json.Marshal(destinationJSON{RuleIDs: d.RuleIDs, RuleNames: d.RuleNames, TargetRuleID: d.TargetRuleID,
		TargetRuleName: d.TargetRuleName, TargetID: d.TargetID, TargetName: d.TargetName})
	return replayRow{ID: r.ID, AccountID: r.AccountID, Name: r.Name, Description: r.Description, ArchiveID: r.ArchiveID,
		ArchiveName: r.ArchiveName, BusID: r.BusID, EventStartTime: toDB(r.EventStartTime), EventEndTime: toDB(r.EventEndTime),
		Destination: string(dest), Rate: r.Rate, EndSequence: r.EndSequence, State: string(r.State), StateReason: r.StateReason,
		Replayed: r.Progress.Replayed, Duplicates: r.Progress.Duplicates, LastReplayedTime: optionalTime(r.Progress.LastReplayedTime),
		StartedAt: toDB(r.StartedAt), EndedAt: optionalTime(r.EndedAt), UpdatedAt: toDB(r.UpdatedAt)}
}

func replayFromRow(row replayRow) *replay.Replay {
	var d destinationJSON
	_ = json.Unmarshal([]byte(row.Destination), &d) // written by replayToRow
	r := &replay.Replay{ID: row.ID, AccountID: row.AccountID, Name: row.Name, Description: row.Description,
		ArchiveID: row.ArchiveID, ArchiveName: row.ArchiveName, BusID: row.BusID,
		EventStartTime: fromDB(row.EventStartTime), EventEndTime: fromDB(row.EventEndTime),
		Destination: replay.Destination{RuleIDs: d.RuleIDs, RuleNames: d.RuleNames, TargetRuleID: d.TargetRuleID,
			TargetRuleName: d.TargetRuleName, TargetID: d.TargetID, TargetName: d.TargetName},
		Rate: row.Rate, EndSequence: row.EndSequence, State: replay.State(row.State), StateReason: row.StateReason,
		Progress:  replay.Progress{Replayed: row.Replayed, Duplicates: row.Duplicates},
		StartedAt: fromDB(row.StartedAt), UpdatedAt: fromDB(row.UpdatedAt)}
	if row.LastReplayedTime != nil {
		r.Progress.LastReplayedTime = fromDB(*row.LastReplayedTime)
	}
	if row.EndedAt != nil {
		r.EndedAt = fromDB(*row.EndedAt)
	}
	return r
}

// ReplayRepository stores replays in the replays table. Names are unique per account and case-sensitive.
type ReplayRepository struct {
	db *DB
}

// NewReplayRepository returns the replay repository of db.
func NewReplayRepository(db *DB) *ReplayRepository { return &ReplayRepository{db: db} }

func replayNotFound(name string) error { return replay.ErrNotFound.With("replay %q not found", name) }

var unfinished = []string{string(replay.Starting), string(replay.Running), string(replay.Cancelling)}

// Create stores a new replay: replay.ErrAlreadyExists when the account has one of that name.
func (r *ReplayRepository) Create(ctx context.Context, rp *replay.Replay) error {
	row := replayToRow(rp)
	err := r.db.session(ctx).Create(&row).Error
	return translate(err, "storing replay "+rp.Name, outcomes{
		duplicate: replay.ErrAlreadyExists.With("replay %q already exists", rp.Name),
	})
}

// Get returns replay.ErrNotFound when the account has no replay of that name.
func (r *ReplayRepository) Get(ctx context.Context, accountID, name string) (*replay.Replay, error) {
	var row replayRow
	if err := r.db.session(ctx).Where("account_id = ? AND name = ?", accountID, name).Take(&row).Error; err != nil {
		return nil, translate(err, "reading replay "+name, outcomes{notFound: replayNotFound(name)})
	}
	return replayFromRow(row), nil
}

// List returns one page of the account's replays that f selects, ordered by name.
func (r *ReplayRepository) List(ctx context.Context, accountID string, f replay.Filter, page domain.Page) ([]*replay.Replay, string, error) {
	q := r.db.session(ctx).Where("account_id = ?", accountID)
	if f.State != "" {
		q = q.Where("state = ?", string(f.State))
	}
	if f.ArchiveName != "" {
		q = q.Where("archive_name = ?", f.ArchiveName)
	}
	page.Prefix = f.NamePrefix
	var rows []replayRow
	if err := pageQuery(q, page).Find(&rows).Error; err != nil {
		return nil, "", translate(err, "listing replays", outcomes{})
	}
	rows, next := cutPage(rows, page, func(row replayRow) string { return row.Name })
	return fromRows(rows, replayFromRow), next, nil
}

// ListActiveByBus returns the bus's replays in STARTING or RUNNING, ordered by name.
func (r *ReplayRepository) ListActiveByBus(ctx context.Context, busID string) ([]*replay.Replay, error) {
	var rows []replayRow
	if err := r.db.hotRead(ctx).Where("bus_id = ? AND state IN ?", busID, []string{string(replay.Starting), string(replay.Running)}).
		Order("name").Find(&rows).Error; err != nil {
		return nil, translate(err, "listing replays", outcomes{})
	}
	return fromRows(rows, replayFromRow), nil
}

// StampsByBus returns, by bus id, a stamp of the bus's replays that changes with every create, update and delete
// of one of them (connect.BusStamper).
func (r *ReplayRepository) StampsByBus(ctx context.Context) (map[string]string, error) {
	return stampsByBus(r.db.session(ctx).Model(&replayRow{}), "replays")
}

// ListUnfinished returns every account's replays in STARTING, RUNNING or CANCELLING.
func (r *ReplayRepository) ListUnfinished(ctx context.Context) ([]*replay.Replay, error) {
	var rows []replayRow
	if err := r.db.hotRead(ctx).Where("state IN ?", unfinished).Order("id").Find(&rows).Error; err != nil {
		return nil, translate(err, "listing replays", outcomes{})
	}
	return fromRows(rows, replayFromRow), nil
}

// CountUnfinished counts the account's replays in STARTING, RUNNING or CANCELLING.
func (r *ReplayRepository) CountUnfinished(ctx context.Context, accountID string) (int, error) {
	var n int64
	if err := r.db.session(ctx).Model(&replayRow{}).Where("account_id = ? AND state IN ?", accountID, unfinished).Count(&n).Error; err != nil {
		return 0, translate(err, "counting replays", outcomes{})
	}
	return int(n), nil
}

// Update loads the replay with its row locked, lets fn change it and stores it whole, in one transaction.
func (r *ReplayRepository) Update(ctx context.Context, accountID, name string, fn func(*replay.Replay) error) (*replay.Replay, error) {
	var (
		stored replayRow
		fnErr  error
	)
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		var row replayRow
		if err := forUpdate(tx).Where("account_id = ? AND name = ?", accountID, name).Take(&row).Error; err != nil {
			return err
		}
		rp := replayFromRow(row)
		if fnErr = fn(rp); fnErr != nil {
			return fnErr
		}
		stored = replayToRow(rp)
		return tx.Model(&replayRow{}).Where("id = ?", row.ID).Select("*").Updates(&stored).Error
	})
	if fnErr != nil {
		return nil, fnErr
	}
	if err != nil {
		return nil, translate(err, "updating replay "+name, outcomes{notFound: replayNotFound(name)})
	}
	return replayFromRow(stored), nil
}

// DeleteByAccount removes every replay of the account.
func (r *ReplayRepository) DeleteByAccount(ctx context.Context, accountID string) error {
	return translate(r.db.session(ctx).Where("account_id = ?", accountID).Delete(&replayRow{}).Error, "deleting replays", outcomes{})
}
