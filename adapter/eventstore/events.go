package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/inspect"
	"github.com/eventbridge-go/eventbridge/stream"
)

// Events reads the events put on bus streams (their .in subject): searched by scans with short-lived consumers
// that acknowledge nothing, tailed with an ordered consumer that starts at the next event stored.
type Events struct {
	js    jetstream.JetStream
	names stream.Names
}

var _ inspect.Store = (*Events)(nil)

// NewEvents returns the reader of bus events of the installation named cluster on the JetStream context js.
func NewEvents(js jetstream.JetStream, cluster string) *Events {
	return &Events{js: js, names: stream.Names{Cluster: cluster}}
}

// Events scans the bus's .in subject from q.After (or from q.Filter.From's time on a first page), keeps what
// q.Filter selects and stops at q.Limit matches, after q.MaxScan messages read, at the first event stored after
// q.Filter.To, or at the end; it returns where the next page starts when more may follow (inside a record batch
// when the page filled up in one), else the zero Position.
func (s *Events) Events(ctx context.Context, b *bus.Bus, q inspect.Query) ([]inspect.Stored, domain.Position, error) {
	st, err := s.js.Stream(ctx, s.names.BusStream(b.ID()))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, domain.Position{}, nil
	}
	if err != nil {
		return nil, domain.Position{}, fmt.Errorf("reading the stream of bus %s: %w", b.Name(), err)
	}
	maxScan := q.MaxScan
	if maxScan <= 0 {
		maxScan = inspect.ScanLimit
	}
	var out []inspect.Stored
	var cut domain.Position // where the page ended inside a record batch
	next, err := scan(ctx, st, scanQuery{subject: s.names.BusIn(b.ID()), after: q.After.After, from: q.Filter.From, to: q.Filter.To,
		limit: q.Limit, maxScan: maxScan, what: "the stream of bus " + b.Name()},
		func(seq uint64, at time.Time, m jetstream.Msg) int {
			evs, err := stream.DecodeAll(&nats.Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()})
			if err != nil {
				return 0
			}
			first := 0
			if seq == q.After.After+1 {
				first = q.After.Skip // what the previous page returned of this batch
			}
			kept := 0
			for i := first; i < len(evs); i++ {
				if len(out) == q.Limit {
					cut = domain.Position{After: seq - 1, Skip: i}
					break
				}
				if q.Filter.Matches(at, evs[i]) {
					out = append(out, inspect.Stored{Sequence: seq, Index: i, Time: at, Event: evs[i]})
					kept++
				}
			}
			return kept
		})
	if err != nil {
		return nil, domain.Position{}, err
	}
	if cut.Skip > 0 {
		return out, cut, nil
	}
	return out, domain.Position{After: next}, nil
}

// Tail reads the bus's .in subject from the next event stored, through an ordered consumer (in memory, removed
// when the tail ends), and calls fn with each event in order.
func (s *Events) Tail(ctx context.Context, b *bus.Bus, ready func(), fn func(inspect.Stored) error) error {
	cons, err := s.js.OrderedConsumer(ctx, s.names.BusStream(b.ID()), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{s.names.BusIn(b.ID())},
		DeliverPolicy:  jetstream.DeliverNewPolicy,
	})
	if err != nil {
		return fmt.Errorf("tailing bus %s: %w", b.Name(), err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(64))
	if err != nil {
		return fmt.Errorf("tailing bus %s: %w", b.Name(), err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	if ready != nil {
		ready()
	}
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("tailing bus %s: %w", b.Name(), err)
		}
		md, err := m.Metadata()
		if err != nil {
			continue
		}
		evs, err := stream.DecodeAll(&nats.Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()})
		if err != nil {
			continue
		}
		for i, ev := range evs {
			if err := fn(inspect.Stored{Sequence: md.Sequence.Stream, Index: i, Time: md.Timestamp, Event: ev}); err != nil {
				return err
			}
		}
	}
}

// Get returns the events stored on the bus's .in subject at seq: one, or the events of a record batch in order;
// inspect.ErrEventNotFound when there is none.
func (s *Events) Get(ctx context.Context, b *bus.Bus, seq uint64) ([]inspect.Stored, error) {
	st, err := s.js.Stream(ctx, s.names.BusStream(b.ID()))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, inspect.ErrEventNotFound.With("bus %q holds no event %d", b.Name(), seq)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the stream of bus %s: %w", b.Name(), err)
	}
	m, err := st.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) || (err == nil && m.Subject != s.names.BusIn(b.ID())) {
		return nil, inspect.ErrEventNotFound.With("bus %q holds no event %d", b.Name(), seq)
	}
	if err != nil {
		return nil, fmt.Errorf("reading event %d of bus %s: %w", seq, b.Name(), err)
	}
	evs, err := stream.DecodeAll(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
	if err != nil {
		return nil, fmt.Errorf("event %d of bus %s: %w", seq, b.Name(), err)
	}
	out := make([]inspect.Stored, len(evs))
	for i, ev := range evs {
		out[i] = inspect.Stored{Sequence: seq, Index: i, Time: m.Time, Event: ev}
	}
	return out, nil
}
