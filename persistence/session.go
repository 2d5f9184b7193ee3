package persistence

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/eventbridge-go/eventbridge/domain/session"
)

var (
	_ session.Repository        = (*SessionRepository)(nil)
	_ session.FailureRepository = (*SessionRepository)(nil)
)

type sessionRow struct {
	ID     string `gorm:"column:id;primaryKey"`
	UserID string `gorm:"column:user_id"`
	// Username is the user's login name at sign-in, for lists.
	Username string `gorm:"column:username"`
	// SecretHash is the hex SHA-256 of the session's secret.
	SecretHash string    `gorm:"column:secret_hash"`
	CreatedAt  time.Time `gorm:"column:created_at;autoCreateTime:false"`
	LastSeenAt time.Time `gorm:"column:last_seen_at"`
	ExpiresAt  time.Time `gorm:"column:expires_at"`
	ClientAddr string    `gorm:"column:client_addr"`
	UserAgent  string    `gorm:"column:user_agent"`
}

func (sessionRow) TableName() string { return "sessions" }

type loginFailureRow struct {
	UserKey       string    `gorm:"column:user_key;primaryKey"`
	ClientAddr    string    `gorm:"column:client_addr;primaryKey"`
	Failures      int       `gorm:"column:failures"`
	LastFailureAt time.Time `gorm:"column:last_failure_at"`
}

func (loginFailureRow) TableName() string { return "login_failures" }

func sessionToRow(s *session.Session) sessionRow {
	h := s.SecretHash()
	return sessionRow{ID: s.ID(), UserID: s.UserID(), Username: s.Username(), SecretHash: hex.EncodeToString(h[:]),
		CreatedAt: toDB(s.CreatedAt()), LastSeenAt: toDB(s.LastSeenAt()), ExpiresAt: toDB(s.ExpiresAt()),
		ClientAddr: s.Client().Addr, UserAgent: s.Client().UserAgent}
}

func sessionFromRow(r sessionRow) (*session.Session, error) {
	var h [sha256.Size]byte
	if b, err := hex.DecodeString(r.SecretHash); err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("reading session %s: malformed secret hash", r.ID)
	} else {
		copy(h[:], b)
	}
	return session.UnmarshalFromDatabase(r.ID, r.UserID, r.Username, h, fromDB(r.CreatedAt), fromDB(r.LastSeenAt),
		fromDB(r.ExpiresAt), session.Client{Addr: r.ClientAddr, UserAgent: r.UserAgent}), nil
}

// SessionRepository stores console sessions in the sessions table and the counts of failed sign-ins in
// login_failures.
type SessionRepository struct {
	db *DB
}

// NewSessionRepository returns the session repository of db.
func NewSessionRepository(db *DB) *SessionRepository { return &SessionRepository{db: db} }

func sessionNotFound(id string) error { return session.ErrNotFound.With("session %q not found", id) }

// Create inserts a session.
func (r *SessionRepository) Create(ctx context.Context, s *session.Session) error {
	row := sessionToRow(s)
	return translate(r.db.session(ctx).Create(&row).Error, "storing a session", outcomes{
		missingParent: session.ErrNotFound.With("the user of the session no longer exists"),
	})
}

// Get returns session.ErrNotFound when there is no session id.
func (r *SessionRepository) Get(ctx context.Context, id string) (*session.Session, error) {
	var row sessionRow
	if err := r.db.session(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return nil, translate(err, "reading session "+id, outcomes{notFound: sessionNotFound(id)})
	}
	return sessionFromRow(row)
}

// ListByUser returns the user's sessions, newest first.
func (r *SessionRepository) ListByUser(ctx context.Context, userID string) ([]*session.Session, error) {
	var rows []sessionRow
	if err := r.db.session(ctx).Where("user_id = ?", userID).Order("created_at DESC, id").Find(&rows).Error; err != nil {
		return nil, translate(err, "listing sessions", outcomes{})
	}
	out := make([]*session.Session, 0, len(rows))
	for _, row := range rows {
		s, err := sessionFromRow(row)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Delete deletes a session; session.ErrNotFound when there is none.
func (r *SessionRepository) Delete(ctx context.Context, id string) error {
	res := r.db.session(ctx).Where("id = ?", id).Delete(&sessionRow{})
	if res.Error != nil {
		return translate(res.Error, "deleting session "+id, outcomes{})
	}
	if res.RowsAffected == 0 {
		return sessionNotFound(id)
	}
	return nil
}

// DeleteByUser deletes every session of the user.
func (r *SessionRepository) DeleteByUser(ctx context.Context, userID string) (int, error) {
	res := r.db.session(ctx).Where("user_id = ?", userID).Delete(&sessionRow{})
	return int(res.RowsAffected), translate(res.Error, "deleting the sessions of a user", outcomes{})
}

// Touch records a use of the session (never moving it back).
func (r *SessionRepository) Touch(ctx context.Context, id string, at time.Time) error {
	err := r.db.session(ctx).Model(&sessionRow{}).Where("id = ? AND last_seen_at < ?", id, toDB(at)).
		Update("last_seen_at", toDB(at)).Error
	return translate(err, "recording the use of session "+id, outcomes{})
}

// DeleteEnded deletes the sessions expired at now or idle since before idleBefore.
func (r *SessionRepository) DeleteEnded(ctx context.Context, idleBefore, now time.Time) (int, error) {
	res := r.db.session(ctx).Where("expires_at <= ? OR last_seen_at < ?", toDB(now), toDB(idleBefore)).Delete(&sessionRow{})
	return int(res.RowsAffected), translate(res.Error, "deleting ended sessions", outcomes{})
}

// Attempt counts a sign-in attempt (session.FailureRepository): the count's row is made if missing and then
// locked, so that concurrent attempts on every replica take turns on it.
func (r *SessionRepository) Attempt(ctx context.Context, user, addr string, since, now time.Time,
	decide func(session.Failures) time.Duration) (session.Failures, time.Duration, error) {
	var f session.Failures
	var wait time.Duration
	err := r.db.transact(ctx, func(tx *gorm.DB) error {
		blank := loginFailureRow{UserKey: user, ClientAddr: addr, LastFailureAt: toDB(now)}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&blank).Error; err != nil {
			return err
		}
		var row loginFailureRow
		if err := forUpdate(tx).Where("user_key = ? AND client_addr = ?", user, addr).Take(&row).Error; err != nil {
			return err
		}
		if row.Failures > 0 && !row.LastFailureAt.Before(toDB(since)) {
			f.Pair, f.PairLast = row.Failures, fromDB(row.LastFailureAt)
		}
		var total struct{ N int }
		if err := tx.Model(&loginFailureRow{}).Select("COALESCE(SUM(failures), 0) AS n").
			Where("user_key = ? AND last_failure_at >= ?", user, toDB(since)).Scan(&total).Error; err != nil {
			return err
		}
		f.User = total.N
		if wait = decide(f); wait > 0 {
			return nil
		}
		return tx.Model(&loginFailureRow{}).Where("user_key = ? AND client_addr = ?", user, addr).
			Updates(map[string]any{"failures": f.Pair + 1, "last_failure_at": toDB(now)}).Error
	})
	return f, wait, translate(err, "counting a sign-in attempt", outcomes{})
}

// ClearFailures deletes the count of user from addr.
func (r *SessionRepository) ClearFailures(ctx context.Context, user, addr string) error {
	err := r.db.session(ctx).Where("user_key = ? AND client_addr = ?", user, addr).Delete(&loginFailureRow{}).Error
	return translate(err, "clearing failed sign-ins", outcomes{})
}

// DeleteFailuresBefore deletes the counts whose latest failure is before t.
func (r *SessionRepository) DeleteFailuresBefore(ctx context.Context, t time.Time) error {
	err := r.db.session(ctx).Where("last_failure_at < ?", toDB(t)).Delete(&loginFailureRow{}).Error
	return translate(err, "deleting old counts of failed sign-ins", outcomes{})
}
