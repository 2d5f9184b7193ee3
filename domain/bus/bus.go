// Package bus holds event buses: named channels of an account that events are put on and rules read from.
package bus

import (
	"context"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

// Retention bounds how long and how much of a bus's events are kept. MaxBytes 0 gives the bus no size of its own:
// what it keeps counts against its account's storage quota, and nothing is reserved up front. A MaxBytes of its own
// is reserved in the event store and counts against the quota in full.
type Retention struct {
	MaxAge   time.Duration
	MaxBytes int64
}

// Retention defaults and limits.
const (
	DefaultMaxAge   = 72 * time.Hour
	DefaultMaxBytes = int64(0)
	MinMaxAge       = time.Minute
	MaxMaxAge       = 365 * 24 * time.Hour
	MinMaxBytes     = int64(1 << 20)
)

// Errors returned by this package and its repository.
var (
	ErrNotFound      = &domain.Error{Kind: domain.KindNotFound, Code: "BusNotFound"}
	ErrAlreadyExists = &domain.Error{Kind: domain.KindConflict, Code: "BusAlreadyExists"}
	ErrNotEmpty      = &domain.Error{Kind: domain.KindConflict, Code: "BusNotEmpty"}
	// ErrQuotaExceeded: the account has as many buses as its quota allows.
	ErrQuotaExceeded = &domain.Error{Kind: domain.KindLimitExceeded, Code: "BusQuotaExceeded"}
	// ErrRetentionAboveMaximum: a retention over the installation's per-bus maximum.
	ErrRetentionAboveMaximum = &domain.Error{Kind: domain.KindLimitExceeded, Code: "RetentionAboveMaximum"}
	// ErrInsufficientStorage: the event store (its storage budget) has no room left for what a bus's retention
	// would reserve.
	ErrInsufficientStorage = &domain.Error{Kind: domain.KindLimitExceeded, Code: "InsufficientStorage"}
)

// Above returns ErrRetentionAboveMaximum naming the first field of r over max (a zero field of max bounds
// nothing), or nil.
func (r Retention) Above(max Retention) error {
	if max.MaxBytes > 0 && r.MaxBytes > max.MaxBytes {
		return ErrRetentionAboveMaximum.WithField("retention.maxBytes").With(
			"retention.maxBytes %d is over the installation's maximum of %d bytes per bus", r.MaxBytes, max.MaxBytes)
	}
	if max.MaxAge > 0 && r.MaxAge > max.MaxAge {
		return ErrRetentionAboveMaximum.WithField("retention.maxAge").With(
			"retention.maxAge %s is over the installation's maximum of %s per bus", r.MaxAge, max.MaxAge)
	}
	return nil
}

// LogConfig is what a bus's log records (Amazon EventBridge's LogConfig): Level OFF records nothing, ERROR the
// failures (failed attempts, dead letters, drops), INFO also what succeeds (events read by the router, rules
// matched, attempts that succeed, redrives), TRACE also the rules an event did not match, with why. IncludeDetail
// FULL adds the event to the record of its receipt and the start of the answer to failed attempts.
type LogConfig struct {
	Level         string
	IncludeDetail string
}

// Log levels and details.
const (
	LogOff   = "OFF"
	LogError = "ERROR"
	LogInfo  = "INFO"
	LogTrace = "TRACE"

	LogDetailNone = "NONE"
	LogDetailFull = "FULL"
)

// normalize fills empty fields with OFF and NONE and validates.
func (l LogConfig) normalize() (LogConfig, error) {
	if l.Level == "" {
		l.Level = LogOff
	}
	if l.IncludeDetail == "" {
		l.IncludeDetail = LogDetailNone
	}
	switch l.Level {
	case LogOff, LogError, LogInfo, LogTrace:
	default:
		return l, domain.Invalid("logConfig.level", "logConfig.level %q is not a level; one of OFF, ERROR, INFO, TRACE", l.Level)
	}
	switch l.IncludeDetail {
	case LogDetailNone, LogDetailFull:
	default:
		return l, domain.Invalid("logConfig.includeDetail", "logConfig.includeDetail %q is not NONE or FULL", l.IncludeDetail)
	}
	return l, nil
}

// On reports whether the log records anything.
func (l LogConfig) On() bool { return l.Level != "" && l.Level != LogOff }

// Bus is an event bus of an account. Its internal id names its stream, so the name is free to change.
type Bus struct {
	id          string
	accountID   string
	name        string
	description string
	retention   Retention
	log         LogConfig
	createdAt   time.Time
}

// New validates and returns a new bus with a fresh id. A zero retention field takes its default.
func New(accountID, name, description string, retention Retention, now time.Time) (*Bus, error) {
	if err := domain.ValidateAccountID(accountID); err != nil {
		return nil, err
	}
	if err := domain.ValidateBusName("name", name); err != nil {
		return nil, err
	}
	if err := domain.ValidateDescription(description); err != nil {
		return nil, err
	}
	retention, err := retention.normalize()
	if err != nil {
		return nil, err
	}
	return &Bus{
		id: domain.NewID(), accountID: accountID, name: name, description: description,
		retention: retention, log: LogConfig{Level: LogOff, IncludeDetail: LogDetailNone}, createdAt: now.UTC(),
	}, nil
}

// normalize fills a zero MaxAge with its default and validates (MaxBytes 0 is a bus without a size of its own).
func (r Retention) normalize() (Retention, error) {
	if r.MaxAge == 0 {
		r.MaxAge = DefaultMaxAge
	}
	if r.MaxAge < MinMaxAge || r.MaxAge > MaxMaxAge {
		return r, domain.Invalid("retention.maxAge", "retention.maxAge must be between %s and %s", MinMaxAge, MaxMaxAge)
	}
	if r.MaxBytes != 0 && r.MaxBytes < MinMaxBytes {
		return r, domain.Invalid("retention.maxBytes", "retention.maxBytes must be 0 (no size of its own) or at least %d", MinMaxBytes)
	}
	return r, nil
}

// Patch is a change of a bus: the fields that are set are replaced.
type Patch struct {
	Description *string
	// MaxAge and MaxBytes replace the retention's fields; zero restores the default (for MaxBytes: no size of its
	// own).
	MaxAge   *time.Duration
	MaxBytes *int64
	// Log replaces the log config; its empty fields take OFF and NONE.
	Log *LogConfig
}

// Apply validates p and changes b; b is unchanged when p is invalid.
func (b *Bus) Apply(p Patch) error {
	desc, r := b.description, b.retention
	if p.Description != nil {
		if err := domain.ValidateDescription(*p.Description); err != nil {
			return err
		}
		desc = *p.Description
	}
	if p.MaxAge != nil {
		r.MaxAge = *p.MaxAge
	}
	if p.MaxBytes != nil {
		r.MaxBytes = *p.MaxBytes
	}
	r, err := r.normalize()
	if err != nil {
		return err
	}
	log := b.log
	if p.Log != nil {
		if log, err = p.Log.normalize(); err != nil {
			return err
		}
	}
	b.description, b.retention, b.log = desc, r, log
	return nil
}

// UnmarshalFromDatabase rebuilds a bus from storage without validation.
func UnmarshalFromDatabase(id, accountID, name, description string, retention Retention, createdAt time.Time) *Bus {
	return &Bus{id: id, accountID: accountID, name: name, description: description, retention: retention, createdAt: createdAt}
}

// WithLog returns b with the stored log config l (storage; empty fields read as OFF and NONE).
func (b *Bus) WithLog(l LogConfig) *Bus {
	if n, err := l.normalize(); err == nil {
		b.log = n
	} else {
		b.log = LogConfig{Level: LogOff, IncludeDetail: LogDetailNone}
	}
	return b
}

func (b *Bus) ID() string           { return b.id }
func (b *Bus) AccountID() string    { return b.accountID }
func (b *Bus) Name() string         { return b.name }
func (b *Bus) Description() string  { return b.description }
func (b *Bus) Retention() Retention { return b.retention }
func (b *Bus) Log() LogConfig {
	if b.log.Level == "" {
		return LogConfig{Level: LogOff, IncludeDetail: LogDetailNone}
	}
	return b.log
}
func (b *Bus) CreatedAt() time.Time { return b.createdAt }

// Repository stores buses. Names are unique per account.
type Repository interface {
	// Create stores a new bus; ErrAlreadyExists when the account has a bus of that name.
	Create(ctx context.Context, b *Bus) error
	// Get returns ErrNotFound when the account has no bus of that name.
	Get(ctx context.Context, accountID, name string) (*Bus, error)
	// GetByID returns ErrNotFound when no bus has that id.
	GetByID(ctx context.Context, id string) (*Bus, error)
	// List returns one page of an account's buses ordered by name, and the token of the next page ("" at the end).
	List(ctx context.Context, accountID string, page domain.Page) ([]*Bus, string, error)
	// ListAll returns every bus of every account (for reconciliation).
	ListAll(ctx context.Context) ([]*Bus, error)
	// Delete removes a bus; ErrNotEmpty while it has rules, ErrNotFound when it does not exist.
	Delete(ctx context.Context, id string) error
	// Update loads the account's bus with its row locked, lets fn change it and stores its description and
	// retention; fn's error is returned as is and nothing is stored. ErrNotFound when it does not exist.
	Update(ctx context.Context, accountID, name string, fn func(*Bus) error) (*Bus, error)
	// CountByAccount counts the account's buses.
	CountByAccount(ctx context.Context, accountID string) (int, error)
}
