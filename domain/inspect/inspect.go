// Package inspect answers "what happened to my event": an event tested against every rule of a bus, the events
// stored on a bus searched by time, attributes and pattern, and a live tail of the events stored from now on.
// It reads; it changes nothing.
package inspect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/domain/deadletter"
	"github.com/eventbridge-go/eventbridge/domain/pattern"
	"github.com/eventbridge-go/eventbridge/domain/rule"
)

// Stored is an event as a bus holds it: its place in the bus's stream and the time it was stored.
type Stored struct {
	Sequence uint64
	// Index is the event's place in the record batch stored at Sequence (0 for a message of one event).
	Index int
	Time  time.Time
	Event *event.Event
}

// Filter selects events by the time they were stored (both ends included, zero unbounded), by their type,
// source, subject and id (exact values, empty selects all) and by an event pattern (nil selects all).
type Filter struct {
	From, To                  time.Time
	Type, Source, Subject, ID string
	Pattern                   *pattern.Pattern
}

// NewFilter validates a filter: From is not after To, the pattern compiles with a rule's checks. Errors name the
// parameter (from, to, pattern).
func NewFilter(from, to time.Time, typ, source, subject, id string, eventPattern []byte) (Filter, error) {
	f := Filter{From: from, To: to, Type: typ, Source: source, Subject: subject, ID: id}
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		return Filter{}, domain.Invalid("from", "from (%s) is after to (%s)", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))
	}
	if len(eventPattern) > 0 {
		p, err := compile(eventPattern)
		if err != nil {
			return Filter{}, err
		}
		f.Pattern = p
	}
	return f, nil
}

// compile checks a pattern as a rule's is and compiles it.
func compile(eventPattern []byte) (*pattern.Pattern, error) {
	compact, err := rule.CompilePattern(eventPattern)
	if err != nil {
		return nil, err
	}
	p, err := pattern.Compile(compact)
	if err != nil {
		return nil, rule.ErrInvalidEventPattern.With("invalid pattern: %s", err)
	}
	return p, nil
}

// Matches reports whether f selects the event ev stored at the time at.
func (f Filter) Matches(at time.Time, ev *event.Event) bool {
	switch {
	case !f.From.IsZero() && at.Before(f.From), !f.To.IsZero() && at.After(f.To):
		return false
	case f.Type != "" && ev.Type() != f.Type, f.Source != "" && ev.Source() != f.Source,
		f.Subject != "" && ev.Subject() != f.Subject, f.ID != "" && ev.ID() != f.ID:
		return false
	case f.Pattern == nil:
		return true
	}
	body, err := cloudevent.MatchView(ev)
	if err != nil {
		return false
	}
	ok, err := f.Pattern.Match(body)
	return err == nil && ok
}

// Query asks a store for one page of a bus's events.
type Query struct {
	Filter Filter
	// After is where the scan starts (zero: from Filter.From, else the first event).
	After domain.Position
	// Limit is the number of matching events at most returned.
	Limit int
	// MaxScan bounds the number of stored messages read, matching or not.
	MaxScan int
}

// ScanLimit is the number of stored messages (an event, or a record batch's events) one page of a search reads
// at most, matching or not: a page with a selective filter may hold fewer events than its limit, even none, and a
// next token.
const ScanLimit = 10_000

// Store reads the events stored on buses.
type Store interface {
	// Events scans the events put on the bus (every way in: PutEvents, webhooks, sources) in the order they were
	// stored and returns those q.Filter selects, at most q.Limit, and where the next page starts when more may
	// follow (the zero Position at the end). It reads at most q.MaxScan messages.
	Events(ctx context.Context, b *bus.Bus, q Query) ([]Stored, domain.Position, error)
	// Get returns the events the bus stored at seq (one, or a record batch's in order); ErrEventNotFound when it
	// holds none there.
	Get(ctx context.Context, b *bus.Bus, seq uint64) ([]Stored, error)
	// Tail calls fn with every event stored on the bus from the moment it is listening, in order, until ctx ends
	// (nil) or fn returns an error (returned). ready, when not nil, is called once it listens.
	Tail(ctx context.Context, b *bus.Bus, ready func(), fn func(Stored) error) error
}

// Service holds the use cases of inspecting a bus.
type Service struct {
	Buses bus.Repository
	Rules rule.Repository
	Store Store
	// Logs reads the bus logs.
	Logs Log
	// DeadLetters reads the accounts' dead letters (for traces).
	DeadLetters deadletter.Store
	// Tails bounds the live tails (nil: none bounded).
	Tails *Tails
	// TailRate is how many events per second one tail sends at most (0: DefaultTailRate); beyond it, events are
	// counted as skipped and the client is told how many.
	TailRate int
}

// Verdict is how one rule of a bus takes an event.
type Verdict struct {
	Rule  *rule.Rule
	Match bool
	// Explanation is why the event does not match the rule's pattern; nil on a match.
	Explanation *pattern.Explanation
}

// TestEvent matches an event (a CloudEvent in the JSON format) against every rule of the bus, enabled or not, in
// the order of their names, as the bus's router would match it once stored: the event is read and written back
// in the JSON format first, so its data is seen as the router sees it. Errors: bus.ErrNotFound; ErrInvalidEvent
// naming the problem.
func (s *Service) TestEvent(ctx context.Context, accountID, busName string, raw []byte) ([]Verdict, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, err
	}
	ev, err := cloudevent.Unmarshal(raw)
	if err != nil {
		return nil, bus.ErrInvalidEvent.With("event: %s", err)
	}
	if err := ev.Validate(); err != nil {
		return nil, bus.ErrInvalidEvent.With("event: %s", err)
	}
	body, err := cloudevent.MatchView(ev)
	if err != nil {
		return nil, bus.ErrInvalidEvent.With("event: %s", err)
	}
	return s.verdicts(ctx, b, body)
}

// verdicts matches the JSON form of an event that the matcher sees (cloudevent.MatchView) against every rule of the
// bus, in the order of their names.
func (s *Service) verdicts(ctx context.Context, b *bus.Bus, body []byte) ([]Verdict, error) {
	rules, err := s.Rules.ListByBus(ctx, b.ID())
	if err != nil {
		return nil, err
	}
	out := make([]Verdict, 0, len(rules))
	for _, r := range sortedByName(rules) {
		p, err := pattern.Compile(r.MatchPattern())
		if err != nil { // stored patterns compiled when they were stored
			return nil, fmt.Errorf("rule %s of bus %s: %w", r.Name(), b.Name(), err)
		}
		x, err := pattern.Explain(p, body)
		if err != nil {
			return nil, bus.ErrInvalidEvent.With("event: %s", err)
		}
		out = append(out, Verdict{Rule: r, Match: x == nil, Explanation: x})
	}
	return out, nil
}

// Search returns one page of the events stored on the bus that f selects, oldest first, and the next page's token
// ("" at the end). A page reads at most ScanLimit events. Errors: bus.ErrNotFound; domain.ErrValidation
// (nextToken); the store's errors.
func (s *Service) Search(ctx context.Context, accountID, busName string, f Filter, page domain.Page) ([]Stored, string, error) {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil, "", err
	}
	after, err := page.AfterPosition()
	if err != nil {
		return nil, "", err
	}
	evs, next, err := s.Store.Events(ctx, b, Query{Filter: f, After: after, Limit: page.Size(), MaxScan: ScanLimit})
	if err != nil {
		return nil, "", fmt.Errorf("searching the events of bus %s: %w", busName, err)
	}
	return evs, domain.PositionToken(next), nil
}

// DefaultTailRate is how many events per second a tail sends at most unless Service.TailRate says otherwise.
const DefaultTailRate = 100

// TailEvent is what a tail sends: an event, or a note that some were skipped over the rate.
type TailEvent struct {
	Stored
	// Skipped is the number of matching events not sent since the last one sent (over the rate).
	Skipped uint64
}

// Tail sends to fn every event stored on the bus from now on that f selects (f.From and f.To are ignored), at
// most TailRate a second: matching events beyond it are counted and reported with the next one sent. It returns
// when ctx ends (nil) or fn fails (its error). ready is called once the tail listens. Errors: bus.ErrNotFound;
// ErrTooManyTails when the account has as many tails as Tails allows.
func (s *Service) Tail(ctx context.Context, accountID, busName string, f Filter, ready func(), fn func(TailEvent) error) error {
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return err
	}
	release, err := s.Tails.acquire(accountID)
	if err != nil {
		return err
	}
	defer release()
	f.From, f.To = time.Time{}, time.Time{}
	rate := s.TailRate
	if rate <= 0 {
		rate = DefaultTailRate
	}
	lim := newLimiter(rate)
	var skipped uint64
	err = s.Store.Tail(ctx, b, ready, func(st Stored) error {
		if !f.Matches(st.Time, st.Event) {
			return nil
		}
		if !lim.allow(time.Now()) {
			skipped++
			return nil
		}
		te := TailEvent{Stored: st, Skipped: skipped}
		skipped = 0
		return fn(te)
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}
