// Package eventtype holds the event types seen on each bus: the (source, type) pairs of the events put on it, with
// when they were first and last seen, how many there were, and a JSON Schema of their data inferred from samples.
// They are recorded from traffic by a Recorder that aggregates in memory and writes periodically, never once per
// event.
package eventtype

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
)

// EventType is one (source, type) pair seen on a bus.
type EventType struct {
	BusID     string
	Source    string
	Type      string
	FirstSeen time.Time
	LastSeen  time.Time
	Count     int64
	// Schema describes the JSON data of the samples; nil when no sample had JSON data.
	Schema *Schema
	// SchemaVersion counts the schemas the type had: 1 for the first, one more each time the inferred schema
	// changed. SchemaSince is when the current one was first seen (zero for the first).
	SchemaVersion int
	SchemaSince   time.Time
	// Previous are the schemas the type had before, oldest first, at most MaxSchemaVersions.
	Previous []SchemaVersion
}

// SchemaVersion is a schema an event type had, with the first and last time events of the type were seen while it
// was the type's schema.
type SchemaVersion struct {
	Version             int
	Schema              *Schema
	FirstSeen, LastSeen time.Time
}

// MaxSchemaVersions is how many previous schemas of a type are kept; older ones are deleted.
const MaxSchemaVersions = 20

// Key identifies an event type.
type Key struct {
	BusID, Source, Type string
}

// Repository stores event types.
type Repository interface {
	// Merge adds observations to the stored event types in one transaction: counts add up, first and last seen
	// widen, schemas merge (with Merge).
	Merge(ctx context.Context, observed []*EventType) error
	// ListByBus returns one page of a bus's event types ordered by source and type, and the next page's token.
	ListByBus(ctx context.Context, busID string, page domain.Page) ([]*EventType, string, error)
}

// Recorder defaults.
const (
	// DefaultFlushInterval is how often a Recorder writes what it aggregated.
	DefaultFlushInterval = 5 * time.Second
	// DefaultSamples is how many events of one type per flush interval have their data inferred.
	DefaultSamples = 10
	// MaxPending bounds the event types a Recorder holds between flushes; events of further types are counted
	// as dropped until the next flush.
	MaxPending = 10000
)

// Recorder aggregates the event types of the events put on buses in memory and writes them every interval. Safe
// for concurrent use.
type Recorder struct {
	Repo     Repository
	Interval time.Duration
	// Samples is how many events per type and interval have their data's schema inferred (the rest are counted).
	Samples int
	Logger  *slog.Logger
	Clock   domain.Clock

	mu      sync.Mutex
	pending map[Key]*pending
	dropped int64
}

type pending struct {
	et      EventType
	sampled int
}

// Observe records one event stored on a bus. It costs a map lookup, plus a JSON parse of the data for the first
// Samples events of its type in the interval.
func (r *Recorder) Observe(busID string, e *event.Event) {
	now := r.now()
	o := Observation{BusID: busID, Source: e.Source(), Type: e.Type(), Count: 1, FirstSeen: now, LastSeen: now}
	if isJSON(e.DataContentType()) && len(e.Data()) > 0 {
		o.Samples = [][]byte{e.Data()}
	}
	r.Add(o)
}

// Observation is what was seen of one event type on a bus: how many events, when the first and the last were
// stored, and the JSON data of some of them.
type Observation struct {
	BusID, Source, Type string
	Count               int64
	FirstSeen, LastSeen time.Time
	// Samples are JSON data of some of the events.
	Samples [][]byte
}

// Add records an observation (a router's report, or one event): counts add up, first and last seen widen, and the
// schema of the first Samples samples of the type in the interval is inferred and merged.
func (r *Recorder) Add(o Observation) {
	k := Key{BusID: o.BusID, Source: o.Source, Type: o.Type}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = map[Key]*pending{}
	}
	p, ok := r.pending[k]
	if !ok {
		if len(r.pending) >= MaxPending {
			r.dropped += o.Count
			return
		}
		p = &pending{et: EventType{BusID: o.BusID, Source: o.Source, Type: o.Type, FirstSeen: o.FirstSeen, LastSeen: o.LastSeen}}
		r.pending[k] = p
	}
	if o.FirstSeen.Before(p.et.FirstSeen) {
		p.et.FirstSeen = o.FirstSeen
	}
	if o.LastSeen.After(p.et.LastSeen) {
		p.et.LastSeen = o.LastSeen
	}
	p.et.Count += o.Count
	samples := r.Samples
	if samples <= 0 {
		samples = DefaultSamples
	}
	for _, data := range o.Samples {
		if p.sampled >= samples {
			break
		}
		if len(data) > 0 {
			p.sampled++
			p.et.Schema = Merge(p.et.Schema, Infer(data))
		}
	}
}

func isJSON(contentType string) bool {
	return contentType == "" || contentType == event.ApplicationJSON || contentType == "text/json" ||
		len(contentType) > 5 && contentType[len(contentType)-5:] == "+json"
}

func (r *Recorder) now() time.Time {
	if r.Clock != nil {
		return r.Clock.Now().UTC()
	}
	return time.Now().UTC()
}

// Flush writes what was aggregated since the last flush. On failure the aggregates are kept and merged with the
// next ones.
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	batch := r.pending
	dropped := r.dropped
	r.pending, r.dropped = nil, 0
	r.mu.Unlock()
	if dropped > 0 && r.Logger != nil {
		r.Logger.Warn("event types: too many distinct types in one interval; some were not recorded", "events", dropped)
	}
	if len(batch) == 0 {
		return nil
	}
	observed := make([]*EventType, 0, len(batch))
	for _, p := range batch {
		et := p.et
		observed = append(observed, &et)
	}
	if err := r.Repo.Merge(ctx, observed); err != nil {
		r.putBack(batch)
		return err
	}
	return nil
}

// putBack merges a batch that could not be written into what was aggregated since.
func (r *Recorder) putBack(batch map[Key]*pending) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = map[Key]*pending{}
	}
	for k, p := range batch {
		cur, ok := r.pending[k]
		if !ok {
			r.pending[k] = p
			continue
		}
		cur.et.Count += p.et.Count
		cur.et.FirstSeen = p.et.FirstSeen
		cur.et.Schema = Merge(p.et.Schema, cur.et.Schema)
	}
}

// Run flushes every Interval until ctx ends, then flushes once more.
func (r *Recorder) Run(ctx context.Context) {
	every := r.Interval
	if every <= 0 {
		every = DefaultFlushInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if err := r.Flush(context.WithoutCancel(ctx)); err != nil && r.Logger != nil {
				r.Logger.Warn("event types: last flush failed", "err", err)
			}
			return
		case <-t.C:
			if err := r.Flush(ctx); err != nil && r.Logger != nil {
				r.Logger.Warn("event types: flush failed; retried at the next one", "err", err)
			}
		}
	}
}

// Service lists the event types of a bus.
type Service struct {
	Repo  Repository
	Buses bus.Repository
}

// List returns a page of the event types seen on an account's bus. Errors: bus.ErrNotFound.
func (s *Service) List(ctx context.Context, accountID, busName string, page domain.Page) ([]*EventType, string, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, "", err
	}
	return s.Repo.ListByBus(ctx, b.ID(), page)
}
