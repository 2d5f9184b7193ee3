package rule

import (
	"context"

	"github.com/eventbridge-go/eventbridge/domain/bus"
)

// Counters count what a rule did since it was created: the events routed to it (Matched) and what its targets did
// with them, summed over its targets (read, delivered, retried, dead-lettered, dropped, failed, filtered). They
// survive pauses, restarts and moves between workers, as the targets' do.
type Counters struct {
	Matched, Read, Delivered, Retried, DeadLettered, Dropped, Failed, Filtered uint64
}

// CountersReader reads the counters of rules from the runtime.
type CountersReader interface {
	// RuleCounters returns the counters of rules of bus b by rule id; a rule the runtime reports nothing of is absent.
	RuleCounters(ctx context.Context, b *bus.Bus, rules []*Rule) (map[string]Counters, error)
}

// CountersOf returns the counters of rules of the bus busName by rule id, in one read of the runtime. It never
// fails: without a reader, or when the runtime cannot be asked (logged), it returns none.
func (s *Service) CountersOf(ctx context.Context, accountID, busName string, rules []*Rule) map[string]Counters {
	if s.Counters == nil || len(rules) == 0 {
		return nil
	}
	b, err := s.Buses.Get(ctx, accountID, busName)
	if err != nil {
		return nil
	}
	out, err := s.Counters.RuleCounters(ctx, b, rules)
	if err != nil {
		if s.Logger != nil {
			s.Logger.Warn("reading the counters of rules", "bus", b.ID(), "err", err)
		}
		return nil
	}
	return out
}
