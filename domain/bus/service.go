package bus

import (
	"time"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// Size limits of events put on a bus.
const (
	// MaxEventSize is the largest encoded event (one batch entry) accepted.
	MaxEventSize = 256 << 10
	// MaxRequestSize is the largest PutEvents request body accepted.
	MaxRequestSize = 1 << 20
)

// Errors of event validation.
var (
	ErrInvalidEvent  = &domain.Error{Kind: domain.KindInvalid, Code: "InvalidEvent"}
	ErrEventTooLarge = &domain.Error{Kind: domain.KindTooLarge, Code: "EventTooLarge"}
	// ErrBusFull: a bus with a retention.maxBytes of its own holds that much of events not yet delivered.
	ErrBusFull = &domain.Error{Kind: domain.KindLimitExceeded, Code: "BusFull"}
)

// EventStore is where events put on a bus are stored (a stream per bus).
type EventStore interface {
	// CreateStream creates (or updates the limits of) the bus's stream, and its account's log stream when the
	// bus's log records anything. Idempotent.
	CreateStream(ctx context.Context, b *Bus) error
	// DeleteStream deletes the bus's stream and everything in it. Idempotent.
	DeleteStream(ctx context.Context, b *Bus) error
	// Put stores events on the bus and returns one result per event, in order. It returns only after the store
	// acknowledged every event it stored: an acknowledged event survives a crash of the process. An event that may
	// not be stored (the store's own checks) is ErrInvalidEvent or ErrEventTooLarge, naming the field.
	Put(ctx context.Context, b *Bus, events []*event.Event) []PutResult
}

// PutResult is the outcome of putting one event: stored (Err nil); stored before (Duplicate: an event of the same
// source and id within the duplicate window, which is not stored again); or not stored (Err).
type PutResult struct {
	Err       error
	Duplicate bool
}

// Runtime is the part of the runtime adapter that keeps a bus's connectors in step with the declared state.
type Runtime interface {
	// SyncBus makes the runtime run what is declared on the bus now; it returns once the runtime applied it.
	SyncBus(ctx context.Context, b *Bus) error
	// RemoveBus removes every connector of the bus.
	RemoveBus(ctx context.Context, b *Bus) error
}

// RuleCounter tells which rules a bus has (deleting a bus with rules is refused, naming them).
type RuleCounter interface {
	NamesByBus(ctx context.Context, busID string) ([]string, error)
}

// SourceCounter tells which sources a bus has (deleting a bus with sources is refused, naming them).
type SourceCounter interface {
	NamesByBus(ctx context.Context, busID string) ([]string, error)
}

// ArchiveCounter tells which archives a bus has (deleting a bus with archives is refused, naming them).
type ArchiveCounter interface {
	NamesByBus(ctx context.Context, busID string) ([]string, error)
}

// DefaultMaxPerAccount is the default quota of buses per account.
const DefaultMaxPerAccount = 100

// Service holds the use cases of buses and of the events put on them.
type Service struct {
	Buses Repository
	Rules RuleCounter
	// Sources, when set, refuses deleting a bus that sources feed.
	Sources SourceCounter
	// Archives, when set, refuses deleting a bus that has archives.
	Archives ArchiveCounter
	Store    EventStore
	Runtime  Runtime
	Logger   *slog.Logger
	Clock    domain.Clock
	// MaxPerAccount is the quota of buses per account (DefaultMaxPerAccount when 0).
	MaxPerAccount int
	// Observer, when set, sees every event stored through PutEvents. cmd/eventbridge sets none: event types are
	// learned from what the buses' routers report, which includes webhooks and sources (adapter/eventtypes); the web
	// tests, which run no router, record through it.
	Observer Observer
	// Throttle, when set, admits the events of each PutEvents at the account's rate.
	Throttle account.Throttle
	// MaxRetention is the installation's per-bus maximum retention (a zero field bounds nothing).
	MaxRetention Retention
	// Storage, when set, refuses what does not fit the account's storage quota or the installation's budget: a
	// bus's own retention.maxBytes, and events while the account's stored events fill its quota.
	Storage account.Storage
	// LookupTTL overrides DefaultLookupTTL (tests); negative reads the bus on every PutEvents call.
	LookupTTL time.Duration

	putBuses domain.Believed[*Bus] // the buses PutEvents read, by account and name
}

// DefaultLookupTTL is how long PutEvents believes a bus it read without reading it again. Reading it was most of
// the cost of a PutEvents call of 10 events (SQLite, profile of BenchmarkSideBySide/putevents). A bus deleted
// through this replica is forgotten at once; one deleted through another replica within this lifetime has its
// events refused by its deleted stream (503, "put it again"; the bus is read again then, and the next call is
// answered 404).
const DefaultLookupTTL = 500 * time.Millisecond

func (s *Service) lookupTTL() time.Duration {
	if s.LookupTTL != 0 {
		return s.LookupTTL
	}
	return DefaultLookupTTL
}

// putKey is a bus's key in putBuses.
func putKey(accountID, name string) string { return accountID + "/" + name }

// putBus returns the bus PutEvents stores on, read at most every LookupTTL.
func (s *Service) putBus(ctx context.Context, accountID, name string) (*Bus, error) {
	b, _, err := s.putBuses.Lookup(putKey(accountID, name), s.Clock.Now(), s.lookupTTL(), func(*Bus, bool) (*Bus, bool, error) {
		b, err := s.Buses.Get(ctx, accountID, name)
		return b, err == nil, err
	})
	return b, err
}

// Observer sees the events stored on buses. Observe must be cheap and must not block.
type Observer interface {
	Observe(busID string, e *event.Event)
}

// Create creates a bus, its stream and its router. Errors: validation, ErrAlreadyExists.
func (s *Service) Create(ctx context.Context, accountID, name, description string, retention Retention) (*Bus, error) {
	return s.CreateWithLog(ctx, accountID, name, description, retention, LogConfig{})
}

// CreateWithLog creates a bus whose log records what log says (its account's log stream is made when it records
// anything), its stream and its router. Errors: validation, ErrAlreadyExists.
func (s *Service) CreateWithLog(ctx context.Context, accountID, name, description string, retention Retention, log LogConfig) (*Bus, error) {
	b, err := New(accountID, name, description, retention, s.Clock.Now())
	if err != nil {
		return nil, err
	}
	if err := b.Apply(Patch{Log: &log}); err != nil {
		return nil, err
	}
	return s.Add(ctx, b)
}

// Add creates a bus made with New (with its id: a caller may have prepared what goes on it), its stream and its
// router. Errors: validation, ErrAlreadyExists, ErrQuotaExceeded.
func (s *Service) Add(ctx context.Context, b *Bus) (*Bus, error) {
	accountID := b.AccountID()
	if err := b.Retention().Above(s.MaxRetention); err != nil {
		return nil, err
	}
	quota := s.MaxPerAccount
	if quota <= 0 {
		quota = DefaultMaxPerAccount
	}
	n, err := s.Buses.CountByAccount(ctx, accountID)
	if err != nil {
		return nil, err
	}
	if n >= quota {
		return nil, ErrQuotaExceeded.With("quota exceeded: buses per account (%d); account %q has %d", quota, accountID, n)
	}
	if err := s.reserve(ctx, b, b.Retention().MaxBytes, 0); err != nil {
		return nil, err
	}
	if err := s.Buses.Create(ctx, b); err != nil {
		s.unreserve(b)
		return nil, err
	}
	if err := s.Store.CreateStream(ctx, b); err != nil {
		s.unreserve(b)
		if derr := s.Buses.Delete(context.WithoutCancel(ctx), b.ID()); derr != nil {
			s.Logger.Error("removing bus after failed stream creation", "bus", b.ID(), "err", derr)
		}
		return nil, fmt.Errorf("creating stream of bus %s: %w", b.Name(), err)
	}
	s.sync(ctx, b)
	return b, nil
}

// reserve takes a bus's own maxBytes from its account's storage in place of before; 0 reserves nothing.
func (s *Service) reserve(ctx context.Context, b *Bus, maxBytes, before int64) error {
	if s.Storage == nil || maxBytes == before {
		return nil
	}
	return s.Storage.Reserve(ctx, b.AccountID(), b.ID(), "retention.maxBytes", maxBytes, before)
}

// unreserve gives back what reserve took when what it was taken for did not happen.
func (s *Service) unreserve(b *Bus) {
	if s.Storage != nil {
		s.Storage.Unreserve(b.ID())
	}
}

// sync asks the runtime to apply the bus's declared state. A failure is logged, not returned: the reconciler
// retries, and the resources show their runtime state meanwhile.
func (s *Service) sync(ctx context.Context, b *Bus) {
	if err := s.Runtime.SyncBus(ctx, b); err != nil {
		s.Logger.Warn("runtime not in step yet; the reconciler will retry", "bus", b.ID(), "err", err)
	}
}

// Get returns ErrNotFound for an unknown bus.
func (s *Service) Get(ctx context.Context, accountID, name string) (*Bus, error) {
	return s.Buses.Get(ctx, accountID, name)
}

// List returns a page of the account's buses.
func (s *Service) List(ctx context.Context, accountID string, page domain.Page) ([]*Bus, string, error) {
	return s.Buses.List(ctx, accountID, page)
}

// Delete deletes a bus with no rules and no sources, its router and its stream. Errors: ErrNotFound, ErrNotEmpty.
func (s *Service) Delete(ctx context.Context, accountID, name string) error {
	b, err := s.Buses.Get(ctx, accountID, name)
	if err != nil {
		return err
	}
	rules, err := s.Rules.NamesByBus(ctx, b.ID())
	if err != nil {
		return err
	}
	if len(rules) > 0 {
		return ErrNotEmpty.With("bus %q still has %d rule(s): %s; delete them first", name, len(rules), strings.Join(rules, ", "))
	}
	if s.Sources != nil {
		sources, err := s.Sources.NamesByBus(ctx, b.ID())
		if err != nil {
			return err
		}
		if len(sources) > 0 {
			return ErrNotEmpty.With("bus %q still has %d source(s): %s; delete them first", name, len(sources), strings.Join(sources, ", "))
		}
	}
	if s.Archives != nil {
		archives, err := s.Archives.NamesByBus(ctx, b.ID())
		if err != nil {
			return err
		}
		if len(archives) > 0 {
			return ErrNotEmpty.With("bus %q still has %d archive(s): %s; delete them first", name, len(archives), strings.Join(archives, ", "))
		}
	}
	if err := s.Buses.Delete(ctx, b.ID()); err != nil {
		return err
	}
	s.putBuses.Forget(putKey(accountID, name))
	ctx = context.WithoutCancel(ctx)
	if err := s.Runtime.RemoveBus(ctx, b); err != nil {
		s.Logger.Warn("removing connectors of a deleted bus; the reconciler will retry", "bus", b.ID(), "err", err)
	}
	if err := s.Store.DeleteStream(ctx, b); err != nil {
		s.Logger.Error("deleting stream of a deleted bus", "bus", b.ID(), "err", err)
	}
	return nil
}

// Update changes a bus's description and retention; the stream's limits follow. A retention over the maximum, or
// one the event store has no room for, leaves the bus as it was. Errors: validation, ErrNotFound,
// ErrRetentionAboveMaximum, ErrInsufficientStorage.
func (s *Service) Update(ctx context.Context, accountID, name string, p Patch) (*Bus, error) {
	var before Retention
	var logBefore LogConfig
	b, err := s.Buses.Update(ctx, accountID, name, func(b *Bus) error {
		before, logBefore = b.Retention(), b.Log()
		if err := b.Apply(p); err != nil {
			return err
		}
		if p.MaxAge == nil && p.MaxBytes == nil {
			return nil // a bus made before a lower maximum keeps its retention and may change the rest
		}
		if err := b.Retention().Above(s.MaxRetention); err != nil {
			return err
		}
		return s.reserve(ctx, b, b.Retention().MaxBytes, before.MaxBytes)
	})
	if err != nil {
		return nil, err
	}
	logChanged := b.Log() != logBefore
	if p.MaxAge != nil || p.MaxBytes != nil || (logChanged && b.Log().On()) {
		if err := s.Store.CreateStream(ctx, b); err != nil {
			s.unreserve(b)
			back := Patch{MaxAge: &before.MaxAge, MaxBytes: &before.MaxBytes, Log: &logBefore}
			if _, rerr := s.Buses.Update(context.WithoutCancel(ctx), accountID, b.Name(), func(b *Bus) error { return b.Apply(back) }); rerr != nil {
				s.Logger.Error("restoring the retention of a bus whose stream kept the old one", "bus", b.ID(), "err", rerr)
			}
			return nil, fmt.Errorf("updating the stream of bus %s: %w", b.Name(), err)
		}
	}
	if logChanged {
		s.putBuses.Forget(putKey(accountID, name))
		s.sync(ctx, b) // the router and the targets write what the new level records
	}
	return b, nil
}

// ValidateEvent checks one event before it is stored: the CloudEvents required attributes and the size of its
// encoded form.
func ValidateEvent(e *event.Event, encodedSize int) error {
	if encodedSize > MaxEventSize {
		return ErrEventTooLarge.With("event is %d bytes; at most %d are allowed", encodedSize, MaxEventSize)
	}
	if err := cloudevent.Validate(e); err != nil {
		return ErrInvalidEvent.With("invalid CloudEvent: %s", err.Error())
	}
	return nil
}

// PutEvents stores events on a bus and returns one result per event in order. It fails as a whole only when the
// bus does not exist (ErrNotFound), the account puts events faster than its rate (account.ErrThrottled), or what
// it keeps fills its storage quota or the installation's budget (account.ErrStorageQuotaExceeded,
// account.ErrStorageBudgetExceeded). Events must have passed ValidateEvent. An event the store refuses keeps the
// store's domain error (ErrInvalidEvent, ErrEventTooLarge: permanent; ErrBusFull, ErrInsufficientStorage: put it
// again later); any other failure of the store is domain.ErrUnavailable (put it again).
func (s *Service) PutEvents(ctx context.Context, accountID, busName string, events []*event.Event) ([]PutResult, error) {
	b, err := s.putBus(ctx, accountID, busName)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, nil
	}
	if s.Throttle != nil {
		if err := s.Throttle.Admit(ctx, accountID, len(events)); err != nil {
			return nil, err
		}
	}
	if s.Storage != nil {
		if err := s.Storage.AdmitPut(accountID); err != nil {
			return nil, err
		}
	}
	results := s.Store.Put(ctx, b, events)
	for i, r := range results {
		if r.Err == nil && !r.Duplicate && s.Observer != nil {
			s.Observer.Observe(b.ID(), events[i])
		}
		var de *domain.Error
		if r.Err != nil && !errors.As(r.Err, &de) {
			s.Logger.Warn("storing event", "bus", b.ID(), "event", events[i].ID(), "err", r.Err)
			s.putBuses.Forget(putKey(accountID, busName)) // deleted meanwhile, maybe: the next call reads it again
			unavailable := domain.ErrUnavailable.With("the event store did not acknowledge the event; put it again")
			unavailable.RetryAfter = time.Second
			results[i].Err = unavailable
		}
	}
	return results, nil
}

// EachOfAccount calls fn with every bus of the account, in name order, until fn fails.
func EachOfAccount(ctx context.Context, buses Repository, accountID string, fn func(*Bus) error) error {
	page := domain.Page{Limit: domain.MaxPageLimit}
	for {
		bs, next, err := buses.List(ctx, accountID, page)
		if err != nil {
			return err
		}
		for _, b := range bs {
			if err := fn(b); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		page.Token = next
	}
}

// PurgeAccount deletes every bus of the account with its router and stream (account.Purger); their rules and
// sources must be gone first (the rule and source services' purges), else ErrNotEmpty.
func (s *Service) PurgeAccount(ctx context.Context, accountID string) error {
	var names []string
	if err := EachOfAccount(ctx, s.Buses, accountID, func(b *Bus) error { names = append(names, b.Name()); return nil }); err != nil {
		return err
	}
	for _, n := range names {
		if err := s.Delete(ctx, accountID, n); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	return nil
}
