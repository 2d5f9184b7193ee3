// Package history is the metrics history of buses, rules and targets for the console: events in, matched,
// delivered, failed, dead-lettered and the delivery latency, over the last hour at one step and the last day at a
// coarser one. It is derived from the runtime's cumulative counters, sampled by one control-plane replica at a
// time (the sampler holds a lease) into a shared store, so that every replica answers the same.
package history

import (
	"context"
	"log/slog"
	"math"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

// Counters are the cumulative counters of one series at one moment. A bus's series (Rule and Target empty) has
// In (events its router read) and Matched (events that matched at least one rule); a rule's (Target empty)
// Matched (events routed to it); a target's In (events read), Delivered, Failed (given up without a dead letter, or
// failing the task), DeadLettered and LatencyMicros (the sum of the delivery latencies of Delivered).
type Counters struct {
	Bus, Rule, Target                                           string
	In, Matched, Delivered, Failed, DeadLettered, LatencyMicros uint64
}

// Sample is every series of one account at one moment.
type Sample struct {
	At     time.Time
	Series []Counters
}

// Resolution is how a history is kept: a sample every Step, Points of them.
type Resolution struct {
	Name   string
	Step   time.Duration
	Points int
}

// The two resolutions with the default sampling interval: the last hour at 10 s, the last day at 5 min.
var (
	Hour = Resolution{Name: "1h", Step: 10 * time.Second, Points: 360}
	Day  = Resolution{Name: "1d", Step: 5 * time.Minute, Points: 288}
)

// Resolutions returns the hour and day resolutions for a sampling interval every (the day's step is 30 of them).
func Resolutions(every time.Duration) (hour, day Resolution) {
	if every <= 0 {
		return Hour, Day
	}
	return Resolution{Name: "1h", Step: every, Points: Hour.Points}, Resolution{Name: "1d", Step: 30 * every, Points: Day.Points}
}

// Store keeps the samples of each account at each resolution: Points+1 of them at most (the first is the base of
// the first point's difference).
type Store interface {
	// Append stores an account's sample at a resolution.
	Append(ctx context.Context, accountID string, r Resolution, s Sample) error
	// Samples returns the account's samples at a resolution, oldest first: at most r.Points+1.
	Samples(ctx context.Context, accountID string, r Resolution) ([]Sample, error)
}

// Metric names.
const (
	MetricIn           = "in"
	MetricMatched      = "matched"
	MetricDelivered    = "delivered"
	MetricFailed       = "failed"
	MetricDeadLettered = "deadLettered"
	MetricLatency      = "latencyMs"
)

// Point is one step of a series: the events of the step ending At, or the mean latency of the events delivered in
// it (nil when none was).
type Point struct {
	At    time.Time
	Value *float64
}

// Series is one metric of one bus, rule or target.
type Series struct {
	Bus, Rule, Target string
	Metric            string
	Points            []Point
}

// Filter selects the series of one bus, rule or target (empty fields select all).
type Filter struct {
	Bus, Rule, Target string
}

// NewFilter validates a filter: names are names, a rule needs its bus, a target its rule.
func NewFilter(busName, ruleName, targetName string) (Filter, error) {
	for _, p := range []struct{ field, v string }{{"bus", busName}, {"rule", ruleName}, {"target", targetName}} {
		if p.v != "" {
			if err := domain.ValidateNameOf(p.field, p.v); err != nil {
				return Filter{}, err
			}
		}
	}
	if ruleName != "" && busName == "" {
		return Filter{}, domain.Invalid("rule", "rule %q needs its bus: rule names are unique within a bus only", ruleName)
	}
	if targetName != "" && ruleName == "" {
		return Filter{}, domain.Invalid("target", "target %q needs its rule", targetName)
	}
	return Filter{Bus: busName, Rule: ruleName, Target: targetName}, nil
}

func (f Filter) selects(c Counters) bool {
	return (f.Bus == "" || c.Bus == f.Bus) && (f.Rule == "" || c.Rule == f.Rule) && (f.Target == "" || c.Target == f.Target)
}

// Service answers the metrics history of an account.
type Service struct {
	Store Store
	// Hour and Day are the resolutions (zero: Hour and Day).
	Hour, Day Resolution
	Logger    *slog.Logger
}

// Range returns the resolution named name ("1h" or "1d"); a validation error names range otherwise.
func (s *Service) Range(name string) (Resolution, error) {
	hour, day := s.Hour, s.Day
	if hour.Step == 0 {
		hour, day = Hour, Day
	}
	switch name {
	case "", hour.Name:
		return hour, nil
	case day.Name:
		return day, nil
	}
	return Resolution{}, domain.Invalid("range", "range %q is not 1h or 1d", name)
}

// History returns the series f selects over r: for each pair of consecutive samples, the difference of each
// counter (a counter that went down, its connector made anew, counts from 0) and the mean latency of the events
// delivered between them. Series are ordered by bus, rule, target and metric.
func (s *Service) History(ctx context.Context, accountID string, r Resolution, f Filter) ([]Series, error) {
	samples, err := s.Store.Samples(ctx, accountID, r)
	if err != nil {
		return nil, err
	}
	return Derive(samples, f), nil
}

// Derive computes the series f selects from consecutive samples.
func Derive(samples []Sample, f Filter) []Series {
	type key struct{ bus, rule, target string }
	var order []key
	byKey := map[key]map[string]*Series{}
	prev := map[key]Counters{}
	for i, smp := range samples {
		for _, c := range smp.Series {
			if !f.selects(c) {
				continue
			}
			k := key{c.Bus, c.Rule, c.Target}
			p, had := prev[k]
			prev[k] = c
			if i == 0 {
				continue
			}
			if !had {
				p = Counters{} // a series that appeared: counted from 0
			}
			ms, ok := byKey[k]
			if !ok {
				ms = map[string]*Series{}
				byKey[k] = ms
				order = append(order, k)
			}
			add := func(metric string, v *float64) {
				se, ok := ms[metric]
				if !ok {
					se = &Series{Bus: k.bus, Rule: k.rule, Target: k.target, Metric: metric}
					ms[metric] = se
				}
				se.Points = append(se.Points, Point{At: smp.At, Value: v})
			}
			for _, m := range metricsOf(c) {
				d := delta(m.now(c), m.now(p))
				add(m.name, &d)
			}
			if c.Target != "" {
				n := delta(float64(c.Delivered), float64(p.Delivered))
				var lat *float64
				if n > 0 {
					v := math.Round(delta(float64(c.LatencyMicros), float64(p.LatencyMicros))/n) / 1000
					lat = &v
				}
				add(MetricLatency, lat)
			}
		}
	}
	var out []Series
	for _, k := range order {
		for _, m := range []string{MetricIn, MetricMatched, MetricDelivered, MetricFailed, MetricDeadLettered, MetricLatency} {
			if se, ok := byKey[k][m]; ok {
				out = append(out, *se)
			}
		}
	}
	return out
}

type metric struct {
	name string
	now  func(Counters) float64
}

// metricsOf are the counters a series of c's kind has.
func metricsOf(c Counters) []metric {
	in := metric{MetricIn, func(c Counters) float64 { return float64(c.In) }}
	matched := metric{MetricMatched, func(c Counters) float64 { return float64(c.Matched) }}
	switch {
	case c.Target != "":
		return []metric{in,
			{MetricDelivered, func(c Counters) float64 { return float64(c.Delivered) }},
			{MetricFailed, func(c Counters) float64 { return float64(c.Failed) }},
			{MetricDeadLettered, func(c Counters) float64 { return float64(c.DeadLettered) }}}
	case c.Rule != "":
		return []metric{matched}
	}
	return []metric{in, matched}
}

// delta is now - before, or now when the counter went down (its connector was made anew).
func delta(now, before float64) float64 {
	if now < before {
		return now
	}
	return now - before
}
