package source

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/health"
)

// Runtime is what sources need of the runtime adapter: their plugins' knowledge, and applying a bus's state.
type Runtime interface {
	// SecretKeys returns the keys that the plugin of type t marks secret. ErrUnknownType (naming the types
	// there are) when the runtime has no source plugin t-source; domain.ErrUnavailable when the runtime cannot be
	// reached.
	SecretKeys(ctx context.Context, t Type) ([]string, error)
	// Validate checks s's config with its plugin, with the keys the control plane sets filled in.
	// ErrInvalidConfig naming every key and its problem; domain.ErrUnavailable when the runtime cannot be reached.
	Validate(ctx context.Context, b *bus.Bus, s *Source) error
	// SyncBus makes the runtime run what is declared on the bus now; it returns once the runtime applied it.
	SyncBus(ctx context.Context, b *bus.Bus) error
}

// Intake stores what webhook sources receive: on their bus, once, where the bus's rules read it. (Earlier versions
// stored it on the source's intake subject first, from where the source's connector moved it to the bus; the
// connector still drains what they left there.)
type Intake interface {
	// PutWebhookEvent stores e on bus b and returns once the store acknowledged it; duplicate when the store
	// already held it (the same source and id inside its duplicate window) and did not store it again.
	PutWebhookEvent(ctx context.Context, b *bus.Bus, e *event.Event) (duplicate bool, err error)
	// PurgeSource removes what the source's intake still holds.
	PurgeSource(ctx context.Context, busID, sourceID string) error
}

// Service holds the use cases of sources.
type Service struct {
	Sources Repository
	Buses   bus.Repository
	Runtime Runtime
	// Statuses reads the runtime state of sources; nil shows every source PENDING.
	Statuses StatusReader
	// Intake stores webhook requests; nil refuses them (503).
	Intake Intake
	// Throttle, when set, admits webhook requests at their account's PutEvents rate.
	Throttle account.Throttle
	// Storage, when set, refuses webhook requests while what their account keeps fills its storage quota.
	Storage account.Storage
	// Sealer seals secret config values; Opener opens the signature secrets of webhooks.
	Sealer Sealer
	Opener Opener
	Logger *slog.Logger
	Clock  domain.Clock
	// MaxPerBus is the quota of sources per bus (DefaultMaxPerBus when 0).
	MaxPerBus int
	// LookupTTL overrides DefaultLookupTTL (tests); negative reads the source on every webhook request.
	LookupTTL time.Duration
	// Health holds the thresholds of sources' health (zero fields: the defaults).
	Health health.Rules

	webhooks domain.Believed[*Webhook] // by token

	// received counts the webhook requests this replica stored, by source id, not yet added to the sources'
	// counts (Sources.AddReceived); adding holds those being added.
	countsMu sync.Mutex
	received map[string]uint64
	adding   map[string]uint64
}

// DefaultLookupTTL is how long a webhook request believes the source of its token, read and parsed, without
// reading it again: reading it was most of the cost of a webhook request (SQLite, profile of
// BenchmarkSideBySide/webhook). A change through this replica (disable, new token, new config, delete) is seen at
// once; one through another replica within this lifetime, as for API keys.
const DefaultLookupTTL = 500 * time.Millisecond

func (s *Service) lookupTTL() time.Duration {
	if s.LookupTTL != 0 {
		return s.LookupTTL
	}
	return DefaultLookupTTL
}

// Forget drops the cached webhook of a source, under whichever token.
func (s *Service) Forget(sourceID string) {
	s.webhooks.ForgetIf(func(w *Webhook) bool { return w.Source.ID() == sourceID })
}

// Quota is how many sources a bus may have.
func (s *Service) Quota() int {
	if s.MaxPerBus > 0 {
		return s.MaxPerBus
	}
	return DefaultMaxPerBus
}

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// Prepare seals the secret values of src and has its plugin validate its config.
func (s *Service) Prepare(ctx context.Context, b *bus.Bus, src *Source) error {
	secrets, err := s.Runtime.SecretKeys(ctx, src.Type())
	if err != nil {
		return err
	}
	if err := src.Seal(secrets, s.Sealer); err != nil {
		return err
	}
	if err := s.Runtime.Validate(ctx, b, src); err != nil {
		return err
	}
	if src.Type() == HTTP {
		// The control plane enforces these keys itself: it must be able to read them, whatever the plugin says.
		if _, err := WebhookOf(src, s.Opener); err != nil {
			return err
		}
	}
	return nil
}

// Create creates a source of a bus and answers once the runtime runs its connector (or at once, showing
// PENDING, when the runtime cannot apply it now). Errors: bus.ErrNotFound, validation, ErrUnknownType,
// ErrInvalidConfig, ErrAlreadyExists, ErrQuotaExceeded, domain.ErrUnavailable (the runtime cannot validate).
func (s *Service) Create(ctx context.Context, accountID, busName string, spec Spec) (*Source, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, err
	}
	src, err := New(accountID, b.ID(), spec, s.Clock.Now())
	if err != nil {
		return nil, err
	}
	if err := s.Prepare(ctx, b, src); err != nil {
		return nil, err
	}
	if err := s.Sources.Create(ctx, src, s.Quota()); err != nil {
		return nil, err
	}
	s.sync(ctx, b)
	return src, nil
}

// Get returns bus.ErrNotFound or ErrNotFound when either does not exist.
func (s *Service) Get(ctx context.Context, accountID, busName, name string) (*Source, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, err
	}
	return s.Sources.Get(ctx, b.ID(), name)
}

// List returns a page of a bus's sources ordered by name.
func (s *Service) List(ctx context.Context, accountID, busName string, page domain.Page) ([]*Source, string, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, "", err
	}
	return s.Sources.List(ctx, b.ID(), page)
}

// Put creates the source or replaces its description and config (the type cannot change; a secret value sent
// as SecretPlaceholder keeps the stored one); created tells which. Errors: as Create.
func (s *Service) Put(ctx context.Context, accountID, busName string, spec Spec) (*Source, bool, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, false, err
	}
	if err := domain.ValidateName("name", spec.Name); err != nil {
		return nil, false, err
	}
	cur, err := s.Sources.Get(ctx, b.ID(), spec.Name)
	if errors.Is(err, ErrNotFound) {
		src, err := s.Create(ctx, accountID, busName, spec)
		return src, err == nil, err
	}
	if err != nil {
		return nil, false, err
	}
	src, err := s.change(ctx, b, cur, spec)
	return src, false, err
}

// Patch is a partial change of a source: a nil member keeps what the source has.
type Patch struct {
	Description *string
	// Config sets the keys it holds; a nil value removes the key.
	Config map[string]*string
}

// Patch changes what p declares and keeps the rest. Errors: as Put, ErrNotFound.
func (s *Service) Patch(ctx context.Context, accountID, busName, name string, p Patch) (*Source, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, err
	}
	cur, err := s.Sources.Get(ctx, b.ID(), name)
	if err != nil {
		return nil, err
	}
	spec := Spec{Name: cur.Name(), Type: cur.Type(), Description: cur.Description(), Config: cur.Redacted()}
	if p.Description != nil {
		spec.Description = *p.Description
	}
	for k, v := range p.Config {
		if v == nil {
			delete(spec.Config, k)
		} else {
			spec.Config[k] = *v
		}
	}
	return s.change(ctx, b, cur, spec)
}

// change validates spec as a change of cur (outside any transaction: the plugin is asked over the network), then
// stores it.
func (s *Service) change(ctx context.Context, b *bus.Bus, cur *Source, spec Spec) (*Source, error) {
	next := *cur
	next.config = maps.Clone(cur.config)
	if err := next.Change(spec, s.Clock.Now()); err != nil {
		return nil, err
	}
	if err := s.Prepare(ctx, b, &next); err != nil {
		return nil, err
	}
	out, err := s.Sources.Update(ctx, b.ID(), cur.Name(), func(stored *Source) error {
		stored.description, stored.config, stored.secretKeys, stored.updatedAt = next.description, next.config, next.secretKeys, next.updatedAt
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Forget(out.ID())
	s.sync(ctx, b)
	return out, nil
}

// Enable makes a source feed its bus again (its connector resumes from its offsets).
func (s *Service) Enable(ctx context.Context, accountID, busName, name string) (*Source, error) {
	return s.update(ctx, accountID, busName, name, func(src *Source) error { src.Enable(s.Clock.Now()); return nil })
}

// Disable stops a source: its connector is stopped (its offsets kept) and a webhook answers 404.
func (s *Service) Disable(ctx context.Context, accountID, busName, name string) (*Source, error) {
	return s.update(ctx, accountID, busName, name, func(src *Source) error { src.Disable(s.Clock.Now()); return nil })
}

// RotateToken gives a webhook source a new token; the former one answers 404 from then on.
func (s *Service) RotateToken(ctx context.Context, accountID, busName, name string) (*Source, error) {
	return s.update(ctx, accountID, busName, name, func(src *Source) error { return src.RotateToken(s.Clock.Now()) })
}

func (s *Service) update(ctx context.Context, accountID, busName, name string, fn func(*Source) error) (*Source, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, err
	}
	src, err := s.Sources.Update(ctx, b.ID(), name, fn)
	if err != nil {
		return nil, err
	}
	s.Forget(src.ID())
	s.sync(ctx, b)
	return src, nil
}

// Delete deletes a source, its connector and what its intake still holds. Errors: bus.ErrNotFound, ErrNotFound.
func (s *Service) Delete(ctx context.Context, accountID, busName, name string) error {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return err
	}
	src, err := s.Sources.Get(ctx, b.ID(), name)
	if err != nil {
		return err
	}
	if err := s.Sources.Delete(ctx, b.ID(), name); err != nil {
		return err
	}
	s.Forget(src.ID())
	ctx = context.WithoutCancel(ctx)
	s.sync(ctx, b)
	if src.Type() == HTTP && s.Intake != nil {
		if err := s.Intake.PurgeSource(ctx, b.ID(), src.ID()); err != nil {
			s.log().Warn("purging the intake of a deleted source", "bus", b.ID(), "source", src.ID(), "err", err)
		}
	}
	return nil
}

// ByToken finds the enabled http source of a webhook token and parses its checks. ErrWebhookNotFound when no
// enabled http source has the token, whatever the reason.
func (s *Service) ByToken(ctx context.Context, token string) (*Webhook, error) {
	if token == "" {
		return nil, ErrWebhookNotFound
	}
	w, _, err := s.webhooks.Lookup(token, s.Clock.Now(), s.lookupTTL(), func(*Webhook, bool) (*Webhook, bool, error) {
		w, err := s.byToken(ctx, token)
		return w, err == nil, err
	})
	return w, err
}

// byToken reads the source of a token and parses its checks.
func (s *Service) byToken(ctx context.Context, token string) (*Webhook, error) {
	src, err := s.Sources.GetByToken(ctx, token)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrWebhookNotFound
	}
	if err != nil {
		return nil, err
	}
	if src.Type() != HTTP || !src.Enabled() {
		return nil, ErrWebhookNotFound
	}
	w, err := WebhookOf(src, s.Opener)
	if err != nil {
		// The plugin validated the config: only a stored config the control plane cannot read lands here.
		s.log().Error("a webhook source's config cannot be read", "source", src.ID(), "err", err)
		return nil, domain.ErrInternal.With("the webhook's config cannot be read")
	}
	if w.Bus, err = s.Buses.GetByID(ctx, src.BusID()); err != nil {
		if errors.Is(err, bus.ErrNotFound) {
			return nil, ErrWebhookNotFound
		}
		return nil, err
	}
	return w, nil
}

// Receive verifies the signature of a request that w (found by ByToken, with its bus) admitted, makes it an event
// and stores it on the source's bus; it returns the event's id once the store acknowledged it (duplicate when the
// store held it already: the same event inside the duplicate window), and counts it for the source. Errors:
// *Refusal (signature), bus.ErrInvalidEvent and bus.ErrEventTooLarge (the store's checks refused the event the
// request became: sending it again cannot help), domain.ErrUnavailable (the store did not acknowledge).
func (s *Service) Receive(ctx context.Context, w *Webhook, r Request) (id string, duplicate bool, err error) {
	now := s.Clock.Now()
	if err := w.Verify(r, now); err != nil {
		return "", false, err
	}
	e, err := w.Event(r, now)
	if err != nil {
		return "", false, err
	}
	if s.Intake == nil {
		return "", false, domain.ErrUnavailable.With("this deployment stores no webhook requests")
	}
	if s.Throttle != nil {
		if err := s.Throttle.Admit(ctx, w.Source.AccountID(), 1); err != nil {
			return "", false, err
		}
	}
	if s.Storage != nil {
		if err := s.Storage.AdmitPut(w.Source.AccountID()); err != nil {
			return "", false, err
		}
	}
	duplicate, err = s.Intake.PutWebhookEvent(ctx, w.Bus, e)
	if err != nil {
		var de *domain.Error
		if errors.As(err, &de) {
			return "", false, err // invalid, too large, or no room: the store's own answer
		}
		s.log().Warn("storing a webhook request", "source", w.Source.ID(), "err", err)
		unavailable := domain.ErrUnavailable.With("the event store did not acknowledge the request; send it again")
		unavailable.RetryAfter = time.Second
		return "", false, unavailable
	}
	if !duplicate {
		s.countsMu.Lock()
		if s.received == nil {
			s.received = map[string]uint64{}
		}
		s.received[w.Source.ID()]++
		s.countsMu.Unlock()
	}
	return e.ID(), duplicate, nil
}

// DefaultCountsInterval is how often RunCounts adds the webhook requests a replica stored to their sources' counts.
const DefaultCountsInterval = time.Second

// RunCounts adds the webhook requests this replica stored to their sources' received counts every interval
// (DefaultCountsInterval when 0) until ctx ends, then once more.
func (s *Service) RunCounts(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultCountsInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.AddCounts(context.WithoutCancel(ctx))
			return
		case <-t.C:
			s.AddCounts(ctx)
		}
	}
}

// AddCounts adds the webhook requests this replica stored since the last call to their sources' received counts;
// what could not be added is kept for the next call.
func (s *Service) AddCounts(ctx context.Context) {
	s.countsMu.Lock()
	counts := s.received
	s.received, s.adding = nil, counts
	s.countsMu.Unlock()
	if len(counts) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := s.Sources.AddReceived(ctx, counts)
	s.countsMu.Lock()
	defer s.countsMu.Unlock()
	s.adding = nil
	if err != nil {
		s.log().Warn("counting webhook requests; adding them at the next pass", "sources", len(counts), "err", err)
		if s.received == nil {
			s.received = map[string]uint64{}
		}
		for id, n := range counts {
			s.received[id] += n
		}
	}
}

// receivedBy is what this replica stored for a source that its stored count does not hold yet.
func (s *Service) receivedBy(sourceID string) uint64 {
	s.countsMu.Lock()
	defer s.countsMu.Unlock()
	return s.received[sourceID] + s.adding[sourceID]
}

// sync asks the runtime to apply the bus's declared state. A failure is logged, not returned: the reconciler
// retries, and the source shows its runtime state meanwhile.
func (s *Service) sync(ctx context.Context, b *bus.Bus) {
	if err := s.Runtime.SyncBus(ctx, b); err != nil {
		s.log().Warn("runtime not in step yet; the reconciler will retry", "bus", b.ID(), "err", err)
	}
}

// StatePending means the runtime does not run the source's connector yet (being created, or unreachable).
const StatePending = "PENDING"

// Status is the runtime state of a source's connector.
type Status struct {
	State string
	Tasks []TaskStatus
	// LastError is why a task failed, else the error of the last failed read or store when none succeeded since.
	LastError string
	// Health is decided from the tasks' reports (package health); LastFailure and LastSuccessAt are the latest
	// of its tasks.
	Health        string
	LastFailure   *health.Failure
	LastSuccessAt time.Time
	// Counters are what the source did since it was created, the totals of its tasks (nil when none reported).
	Counters *Counters
}

// Summarize fills the health of st from its state and tasks, with rules, at now, and its counters from the
// tasks' totals.
func (st *Status) Summarize(rules health.Rules, now time.Time) {
	tasks, totals := make([]health.Task, len(st.Tasks)), make([]*Counters, len(st.Tasks))
	for i, t := range st.Tasks {
		tasks[i], totals[i] = health.Task{State: t.State, Facts: t.Health}, t.Totals
	}
	v := health.Judge(st.State, tasks, rules, now)
	st.Health, st.LastFailure, st.LastSuccessAt, st.LastError = v.State, v.LastFailure, v.LastSuccessAt, v.LastError(st.LastError)
	st.Counters = health.Sum(totals)
}

// TaskStatus is the state of one task of a source's connector.
type TaskStatus struct {
	ID       int
	State    string
	WorkerID string
	// Counters are what the task did since it started; nil when it does not run.
	Counters *Counters
	// Health is what the task reported of its reads and stores since it started; nil when it does not run.
	Health *health.Facts
	// Totals are what the task did since the source was created, over all its runs; nil when unknown.
	Totals *Counters
}

// Counters count what a source task did: records read from the outside, written to the bus, and given up.
type Counters struct {
	Read, Written, Failed, Dropped, Filtered uint64
}

// Add returns the sum of c and d.
func (c Counters) Add(d Counters) Counters {
	return Counters{Read: c.Read + d.Read, Written: c.Written + d.Written, Failed: c.Failed + d.Failed,
		Dropped: c.Dropped + d.Dropped, Filtered: c.Filtered + d.Filtered}
}

// Report is the summarized runtime state of one source, named by its account, bus and name (for metrics).
type Report struct {
	Account, Bus, Source string
	Status               *Status
}

// StatusReader reads the runtime state of sources.
type StatusReader interface {
	// SourceStatus returns the state of the source's connector; a connector the runtime does not know is PENDING.
	SourceStatus(ctx context.Context, b *bus.Bus, s *Source) (*Status, error)
}

// Status returns the runtime state of src. It never fails: when the runtime cannot be asked, the state is
// PENDING with the reason in LastError.
func (s *Service) Status(ctx context.Context, src *Source) *Status {
	pending := func(why string) *Status { return &Status{State: StatePending, Health: health.Pending, LastError: why} }
	if s.Statuses == nil {
		return pending("")
	}
	b, err := s.Buses.GetByID(ctx, src.BusID())
	if err != nil {
		return pending("the source's bus is gone")
	}
	st, err := s.Statuses.SourceStatus(ctx, b, src)
	if err != nil {
		s.log().Warn("reading source status", "source", src.ID(), "err", err)
		return pending("the worker runtime could not be reached")
	}
	st.Summarize(s.Health, s.Clock.Now())
	if n := src.Received() + s.receivedBy(src.ID()); n > 0 {
		// The webhook requests stored on the bus directly: read and written by the source, not by its connector.
		c := Counters{Read: n, Written: n}
		if st.Counters != nil {
			c = c.Add(*st.Counters)
		}
		st.Counters = &c
	}
	return st
}

// PurgeAccount deletes every source of every bus of the account with its connector (account.Purger).
func (s *Service) PurgeAccount(ctx context.Context, accountID string) error {
	return bus.EachOfAccount(ctx, s.Buses, accountID, func(b *bus.Bus) error {
		names, err := s.Sources.NamesByBus(ctx, b.ID())
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := s.Delete(ctx, accountID, b.Name(), n); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		return nil
	})
}
