package archive

import (
	"context"
	"errors"
	"log/slog"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/rule"
)

// DefaultMaxPerAccount is the default quota of archives per account.
const DefaultMaxPerAccount = 100

// Service holds the use cases of archives.
type Service struct {
	Archives Repository
	Buses    bus.Repository
	Store    Store
	// Runtime applies the bus's archives to its router (an archive is a pseudo-rule of the router).
	Runtime rule.Runtime
	Logger  *slog.Logger
	Clock   domain.Clock
	// MaxPerAccount is the quota of archives per account; 0 means DefaultMaxPerAccount.
	MaxPerAccount int
}

// Spec is what a caller declares about an archive.
type Spec struct {
	Name          string
	Description   string
	EventPattern  []byte
	RetentionDays int
}

// Patch is a change of an archive: the fields that are set are replaced. EventPattern JSON null removes the
// pattern (every event is archived).
type Patch struct {
	Description   *string
	EventPattern  []byte
	RetentionDays *int
}

// View is an archive with what it holds.
type View struct {
	*Archive
	BusName string
	Stats   Stats
}

// Create creates an archive of a bus and its stream, then answers once the bus's router archives: every event the
// bus stores from then on that matches the pattern is archived, none before. A stream that cannot be created leaves
// nothing behind. Errors: bus.ErrNotFound, ErrAlreadyExists, ErrQuotaExceeded, rule.ErrInvalidEventPattern,
// validation, bus.ErrInsufficientStorage.
func (s *Service) Create(ctx context.Context, accountID, busName string, spec Spec) (View, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return View{}, err
	}
	a, err := New(accountID, b.ID(), spec.Name, spec.Description, spec.EventPattern, spec.RetentionDays, s.Clock.Now())
	if err != nil {
		return View{}, err
	}
	quota := s.MaxPerAccount
	if quota <= 0 {
		quota = DefaultMaxPerAccount
	}
	n, err := s.Archives.CountByAccount(ctx, accountID)
	if err != nil {
		return View{}, err
	}
	if n >= quota {
		return View{}, ErrQuotaExceeded.With("quota exceeded: archives per account (%d); account %q has %d", quota, accountID, n)
	}
	if err := s.Archives.Create(ctx, a); err != nil {
		return View{}, err
	}
	if err := s.Store.EnsureArchiveStream(ctx, a); err != nil {
		if derr := s.Archives.Delete(context.WithoutCancel(ctx), accountID, a.Name()); derr != nil {
			s.Logger.Error("removing an archive whose stream could not be created", "archive", a.ID(), "err", derr)
		}
		return View{}, err
	}
	s.sync(ctx, b)
	return View{Archive: a, BusName: b.Name()}, nil
}

// Get returns the archive with what it holds. Archive names are unique per account; busName, when not "", is the
// bus the caller expects it on. Errors: bus.ErrNotFound, ErrNotFound (also when the archive is another bus's).
func (s *Service) Get(ctx context.Context, accountID, busName, name string) (View, error) {
	a, err := s.find(ctx, accountID, busName, name)
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, a), nil
}

// find returns the account's archive of that name, on the bus named busName unless it is "".
func (s *Service) find(ctx context.Context, accountID, busName, name string) (*Archive, error) {
	busID := ""
	if busName != "" {
		b, err := s.Buses.Get(ctx, accountID, busName)
		if err != nil {
			return nil, err
		}
		busID = b.ID()
	}
	a, err := s.Archives.Get(ctx, accountID, name)
	if err != nil {
		return nil, err
	}
	if busID != "" && a.BusID() != busID {
		return nil, ErrNotFound.With("archive %q not found on bus %q", name, busName)
	}
	return a, nil
}

// List returns a page of the account's archives, those of one bus when busName is not "" (bus.ErrNotFound when
// it does not exist), with what each holds.
func (s *Service) List(ctx context.Context, accountID, busName string, page domain.Page) ([]View, string, error) {
	busID := ""
	if busName != "" {
		b, err := s.Buses.Get(ctx, accountID, busName)
		if err != nil {
			return nil, "", err
		}
		busID = b.ID()
	}
	as, next, err := s.Archives.List(ctx, accountID, busID, page)
	if err != nil {
		return nil, "", err
	}
	out := make([]View, len(as))
	for i, a := range as {
		out[i] = s.view(ctx, a)
	}
	return out, next, nil
}

// view reads the archive's bus name and stats; what cannot be read is left empty and logged (an archive is still
// shown while the event store does not answer).
func (s *Service) view(ctx context.Context, a *Archive) View {
	v := View{Archive: a}
	if b, err := s.Buses.GetByID(ctx, a.BusID()); err == nil {
		v.BusName = b.Name()
	}
	st, err := s.Store.ArchiveStats(ctx, a)
	if err != nil {
		s.Logger.Warn("reading what an archive holds", "archive", a.ID(), "err", err)
	}
	v.Stats = st
	return v
}

// Update changes the fields of p; a new pattern applies to the events stored after the call answered, a new
// retention to every event the archive holds. Errors: bus.ErrNotFound, ErrNotFound, rule.ErrInvalidEventPattern,
// validation.
func (s *Service) Update(ctx context.Context, accountID, busName, name string, p Patch) (View, error) {
	if _, err := s.find(ctx, accountID, busName, name); err != nil {
		return View{}, err
	}
	a, err := s.Archives.Update(ctx, accountID, name, func(a *Archive) error {
		desc, pattern, days := a.Description(), a.EventPattern(), a.RetentionDays()
		if p.Description != nil {
			desc = *p.Description
		}
		if p.EventPattern != nil {
			pattern = p.EventPattern
		}
		if p.RetentionDays != nil {
			days = *p.RetentionDays
		}
		return a.Change(desc, pattern, days, s.Clock.Now())
	})
	if err != nil {
		return View{}, err
	}
	if err := s.Store.EnsureArchiveStream(ctx, a); err != nil {
		s.Logger.Warn("giving an archive's stream its retention", "archive", a.ID(), "err", err)
	}
	if b, err := s.Buses.GetByID(ctx, a.BusID()); err == nil {
		s.sync(ctx, b)
	}
	return s.view(ctx, a), nil
}

// Delete deletes an archive and every event it holds; the bus's router stops archiving first. Errors:
// bus.ErrNotFound, ErrNotFound.
func (s *Service) Delete(ctx context.Context, accountID, busName, name string) error {
	a, err := s.find(ctx, accountID, busName, name)
	if err != nil {
		return err
	}
	if err := s.Archives.Delete(ctx, accountID, name); err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	if b, err := s.Buses.GetByID(ctx, a.BusID()); err == nil {
		s.sync(ctx, b)
	}
	if err := s.Store.DeleteArchiveStream(ctx, a); err != nil {
		s.Logger.Error("deleting the stream of a deleted archive", "archive", a.ID(), "err", err)
	}
	return nil
}

func (s *Service) sync(ctx context.Context, b *bus.Bus) {
	if err := s.Runtime.SyncBus(ctx, b); err != nil {
		s.Logger.Warn("runtime not in step yet; the reconciler will retry", "bus", b.ID(), "err", err)
	}
}

// PurgeAccount deletes every archive of the account with its events (account.Purger).
func (s *Service) PurgeAccount(ctx context.Context, accountID string) error {
	for {
		as, _, err := s.Archives.List(ctx, accountID, "", domain.Page{Limit: domain.MaxPageLimit})
		if err != nil || len(as) == 0 {
			return err
		}
		for _, a := range as {
			if err := s.Delete(ctx, accountID, "", a.Name()); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
	}
}
