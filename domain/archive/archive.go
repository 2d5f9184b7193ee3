// Package archive holds archives: the events of a bus that match an optional event pattern, kept for a number of
// days (or indefinitely) so that they can be replayed, with Amazon EventBridge's semantics.
package archive

import (
	"context"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/rule"
)

// State is an archive's state. Archives are ENABLED from their creation (a creation that fails leaves nothing).
type State string

// Enabled: the bus's router copies the matching events into the archive.
const Enabled State = "ENABLED"

// MaxRetentionDays bounds retentionDays (about 100 years); 0 keeps events indefinitely.
const MaxRetentionDays = 36500

// Errors returned by this package and its repository.
var (
	ErrNotFound      = &domain.Error{Kind: domain.KindNotFound, Code: "ArchiveNotFound"}
	ErrAlreadyExists = &domain.Error{Kind: domain.KindConflict, Code: "ArchiveAlreadyExists"}
	// ErrQuotaExceeded: the account has as many archives as its quota allows.
	ErrQuotaExceeded = &domain.Error{Kind: domain.KindLimitExceeded, Code: "ArchiveQuotaExceeded"}
)

// Archive keeps the events of one bus that match its pattern.
type Archive struct {
	id            string
	accountID     string
	busID         string
	name          string
	description   string
	eventPattern  []byte
	retentionDays int
	createdAt     time.Time
	updatedAt     time.Time
}

// New validates and returns a new archive of a bus with a fresh id. Archive names are unique per account, as in
// Amazon EventBridge.
func New(accountID, busID, name, description string, eventPattern []byte, retentionDays int, now time.Time) (*Archive, error) {
	if err := domain.ValidateName("name", name); err != nil {
		return nil, err
	}
	a := &Archive{id: domain.NewID(), accountID: accountID, busID: busID, name: name, createdAt: now.UTC()}
	if err := a.Change(description, eventPattern, retentionDays, now); err != nil {
		return nil, err
	}
	return a, nil
}

// UnmarshalFromDatabase rebuilds an archive from storage without validation.
func UnmarshalFromDatabase(id, accountID, busID, name, description string, eventPattern []byte, retentionDays int,
	createdAt, updatedAt time.Time) *Archive {
	return &Archive{id: id, accountID: accountID, busID: busID, name: name, description: description,
		eventPattern: eventPattern, retentionDays: retentionDays, createdAt: createdAt, updatedAt: updatedAt}
}

// Change replaces the description, the pattern (nil or empty: every event of the bus) and the retention after
// validating them. Errors: validation, rule.ErrInvalidEventPattern.
func (a *Archive) Change(description string, eventPattern []byte, retentionDays int, now time.Time) error {
	if err := domain.ValidateDescription(description); err != nil {
		return err
	}
	var p []byte
	if len(eventPattern) > 0 && string(eventPattern) != "null" {
		var err error
		if p, err = rule.CompilePattern(eventPattern); err != nil {
			return err
		}
	}
	if retentionDays < 0 || retentionDays > MaxRetentionDays {
		return domain.Invalid("retentionDays", "retentionDays must be between 0 (indefinitely) and %d, not %d",
			MaxRetentionDays, retentionDays)
	}
	a.description, a.eventPattern, a.retentionDays, a.updatedAt = description, p, retentionDays, now.UTC()
	return nil
}

func (a *Archive) ID() string        { return a.id }
func (a *Archive) AccountID() string { return a.accountID }
func (a *Archive) BusID() string     { return a.busID }
func (a *Archive) Name() string      { return a.name }
func (a *Archive) Description() string {
	return a.description
}

// EventPattern is the archive's pattern, nil when it keeps every event of its bus.
func (a *Archive) EventPattern() []byte { return a.eventPattern }

// RetentionDays is how many days events are kept; 0 is indefinitely.
func (a *Archive) RetentionDays() int { return a.retentionDays }

// Retention is RetentionDays as a duration; 0 is indefinitely.
func (a *Archive) Retention() time.Duration { return time.Duration(a.retentionDays) * 24 * time.Hour }

func (a *Archive) State() State         { return Enabled }
func (a *Archive) CreatedAt() time.Time { return a.createdAt }
func (a *Archive) UpdatedAt() time.Time { return a.updatedAt }

// Stats are what an archive holds, read from the event store.
type Stats struct {
	Events uint64
	Bytes  uint64
	// LastSequence is the sequence of the last event archived (0: none yet); a replay replays up to it.
	LastSequence uint64
}

// Repository stores archives. Names are unique per account.
type Repository interface {
	// Create stores a new archive; ErrAlreadyExists when the account has an archive of that name.
	Create(ctx context.Context, a *Archive) error
	// Get returns ErrNotFound when the account has no archive of that name.
	Get(ctx context.Context, accountID, name string) (*Archive, error)
	// List returns one page of the account's archives ordered by name, only those of busID when it is not "", and
	// the next page's token ("" at the end).
	List(ctx context.Context, accountID, busID string, page domain.Page) ([]*Archive, string, error)
	// ListByBus returns every archive of a bus (for the router's table).
	ListByBus(ctx context.Context, busID string) ([]*Archive, error)
	// NamesByBus returns the names of a bus's archives, sorted.
	NamesByBus(ctx context.Context, busID string) ([]string, error)
	// CountByAccount counts the account's archives.
	CountByAccount(ctx context.Context, accountID string) (int, error)
	// Update loads the archive, lets fn change it and stores it, in one transaction. ErrNotFound when it does
	// not exist; fn's error is returned as is and nothing is stored.
	Update(ctx context.Context, accountID, name string, fn func(*Archive) error) (*Archive, error)
	// Delete removes the archive; ErrNotFound when it does not exist.
	Delete(ctx context.Context, accountID, name string) error
}

// Store keeps an archive's events: one stream per archive in the event store.
type Store interface {
	// EnsureArchiveStream creates the archive's stream, or gives it the archive's retention.
	EnsureArchiveStream(ctx context.Context, a *Archive) error
	// DeleteArchiveStream deletes the stream and every event in it; nothing when it does not exist.
	DeleteArchiveStream(ctx context.Context, a *Archive) error
	// ArchiveStats reads what the archive's stream holds.
	ArchiveStats(ctx context.Context, a *Archive) (Stats, error)
}
