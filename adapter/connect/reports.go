package connect

import (
	"cmp"
	"context"
	"encoding/json"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/health"
	"github.com/eventbridge-go/eventbridge/domain/history"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/rpc"
)

// Reports reads the status of every connector the runtime runs for the control plane (one call) and summarizes
// those of targets and sources with rules at now. A connector is named by what it runs
// (eb.<account>.<bus>.<rule>.<target>, eb.<account>.<bus>.source.<source>); a target or source that the runtime
// does not run yet is not reported.
func (a *Adapter) Reports(ctx context.Context, rules health.Rules, now time.Time) ([]target.Report, []source.Report, error) {
	all, err := a.cfg.Runtime.ListConnectors(ctx)
	if err != nil {
		return nil, nil, err
	}
	targets, sources := reportsOf(all, rules, now)
	return targets, sources, nil
}

// reportsOf summarizes the targets and sources among the connectors all.
func reportsOf(all map[string]rpc.ConnectorExpanded, rules health.Rules, now time.Time) ([]target.Report, []source.Report) {
	var targets []target.Report
	var sources []source.Report
	for name, c := range all {
		parts := strings.Split(name, ".")
		if c.Status == nil || len(parts) != 5 || parts[0] != "eb" {
			continue
		}
		switch {
		case c.Status.Type == rpc.TypeSource && parts[3] == "source":
			st := sourceStatusOf(c.Status, lastErrorOf(c.Status))
			st.Summarize(rules, now)
			sources = append(sources, source.Report{Account: parts[1], Bus: parts[2], Source: parts[4], Status: st})
		case c.Status.Type == rpc.TypeSink:
			st := targetStatusOf(c.Status, lastErrorOf(c.Status))
			st.Summarize(rules, now)
			targets = append(targets, target.Report{Account: parts[1], Bus: parts[2], Rule: parts[3], Target: parts[4], Status: st})
		}
	}
	return targets, sources
}

// noteHealth logs, at info level, every change of health of a target or source among the connectors all since the
// last call: once per change, whichever replica reconciles. The first time a connector is seen, only a state that
// is not HEALTHY or PENDING is logged.
func (a *Adapter) noteHealth(all map[string]rpc.ConnectorExpanded, now time.Time) {
	targets, sources := reportsOf(all, a.cfg.Health, now)
	seen := make(map[string]string, len(targets)+len(sources))
	note := func(kind, name, state string, f *health.Failure) {
		seen[name] = state
		before, known := a.health[name]
		if state == before || (!known && (state == health.Healthy || state == health.Pending)) {
			return
		}
		attrs := []any{kind, name, "health", state, "was", before}
		if f != nil && state != health.Healthy {
			attrs = append(attrs, "class", f.Class, "last_failure", f.Message)
		}
		a.cfg.Logger.Info(kind+" health changed", attrs...)
	}
	for _, t := range targets {
		note("target", TargetName(t.Account, t.Bus, t.Rule, t.Target), t.Status.Health, t.Status.LastFailure)
	}
	for _, s := range sources {
		note("source", SourceName(s.Account, s.Bus, s.Source), s.Status.Health, s.Status.LastFailure)
	}
	a.health = seen
}

// RuleCounters returns the counters of rules of bus b (rule.CountersReader), from one read of the bus's connectors:
// a rule's matched events are what the bus's router routed to it, and the rest are the sums of its targets'.
func (a *Adapter) RuleCounters(ctx context.Context, b *bus.Bus, rules []*rule.Rule) (map[string]rule.Counters, error) {
	prefix := busPrefix(b.AccountID(), b.Name())
	all, err := a.cfg.Runtime.ListConnectorsWithPrefix(ctx, prefix)
	if err != nil {
		return nil, err
	}
	var routed map[string]uint64
	if r, ok := all[RouterName(b.AccountID(), b.Name())]; ok && r.Status != nil {
		for _, ts := range r.Status.Tasks {
			if ts.Totals != nil {
				routed = addCounts(routed, ts.Totals.RoutedTo)
			}
		}
	}
	out := make(map[string]rule.Counters, len(rules))
	for _, r := range rules {
		c, seen := rule.Counters{Matched: routed[r.ID()]}, routed[r.ID()] > 0
		for name, conn := range all {
			rest, ok := strings.CutPrefix(name, prefix+namePart(r.Name())+".")
			if !ok || strings.Contains(rest, ".") || conn.Status == nil || conn.Status.Type != rpc.TypeSink {
				continue
			}
			for _, ts := range conn.Status.Tasks {
				if n := ts.Totals; n != nil {
					seen = true
					c.Read += n.Read
					c.Delivered += n.Written
					c.Retried += n.Retried
					c.DeadLettered += n.DeadLettered
					c.Dropped += n.Dropped
					c.Failed += n.Failed
					c.Filtered += n.Filtered
				}
			}
		}
		if seen || routed != nil {
			out[r.ID()] = c
		}
	}
	return out, nil
}

// addCounts adds counts per key to into (made when nil) and returns it.
func addCounts(into, counts map[string]uint64) map[string]uint64 {
	for k, n := range counts {
		if into == nil {
			into = map[string]uint64{}
		}
		into[k] += n
	}
	return into
}

// Counters reads the cumulative counters of every bus, rule and target of every account from the runtime, in one
// call (history.Source): a bus's from its router's totals, a rule's from what its router routed to it, a
// target's from its connector's totals. The call reads statuses only (the history samples every 10 s; listing
// every connector's config too cost more than all the rest of the sample): the names of the rules a router routed
// to come from the routers' configs, read again only when a router reports an id not seen before.
//
// While the runtime answers the same listing of statuses (its stamp) and the names are the same, the answer is the
// last one again, not built anew: the map and its slices are shared by the calls and must not be changed.
func (a *Adapter) Counters(ctx context.Context) (map[string][]history.Counters, error) {
	all, stamp, err := a.cfg.Runtime.ListConnectorStatusesStamped(ctx)
	if err != nil {
		return nil, err
	}
	a.namesMu.Lock()
	c, gen := a.counted, a.namesGen
	a.namesMu.Unlock()
	if c.out != nil && c.stamp == stamp && c.names == gen {
		return c.out, nil
	}
	names, gen, err := a.routedRuleNames(ctx, all)
	if err != nil {
		return nil, err
	}
	out := countersOf(all, names)
	a.namesMu.Lock()
	a.counted.stamp, a.counted.names, a.counted.out = stamp, gen, out
	a.namesMu.Unlock()
	return out, nil
}

// routedRuleNames returns the names of the rules the routers among all routed to, by rule id ("" for an id no
// router's table names): a.ruleNames, learned again from one listing of every connector's config when a router
// reports an id not there; gen is a.namesGen for them.
func (a *Adapter) routedRuleNames(ctx context.Context, all map[string]rpc.ConnectorExpanded) (_ map[string]string, gen uint64, _ error) {
	a.namesMu.Lock()
	known, gen := a.ruleNames, a.namesGen
	a.namesMu.Unlock()
	for id := range routedIDs(all) {
		if _, ok := known[id]; !ok {
			full, stamp, err := a.cfg.Runtime.ListConnectorsStamped(ctx)
			if err != nil {
				return nil, 0, err
			}
			names, gen := a.learnRuleNames(full, stamp)
			return names, gen, nil
		}
	}
	return known, gen, nil
}

// learnRuleNames sets a.ruleNames from every connector, listed with its config (all, whose listing has stamp):
// the names of the rules in the routers' tables, and "" for the ids the routers routed to that no table names any
// more (deleted rules). Reconciliation calls it with the listing it makes anyway, so a deleted rule's name goes
// within a pass; a listing with the stamp of the one the names were learned from is not read again. The map is not
// changed once set: callers read it unlocked. It returns the names and a.namesGen for them.
func (a *Adapter) learnRuleNames(all map[string]rpc.ConnectorExpanded, stamp uint64) (map[string]string, uint64) {
	a.namesMu.Lock()
	if a.namesKnown && a.namesFrom == stamp {
		defer a.namesMu.Unlock()
		return a.ruleNames, a.namesGen
	}
	a.namesMu.Unlock()
	names := map[string]string{}
	for name, c := range all {
		if isRouter(name) {
			maps.Copy(names, ruleNames(c.Info))
		}
	}
	for id := range routedIDs(all) {
		if _, ok := names[id]; !ok {
			names[id] = ""
		}
	}
	a.namesMu.Lock()
	defer a.namesMu.Unlock()
	a.ruleNames, a.namesFrom, a.namesKnown = names, stamp, true
	a.namesGen++
	return names, a.namesGen
}

// routedIDs yields the rule ids in the routers' totals among all (an id once per router that routed to it).
func routedIDs(all map[string]rpc.ConnectorExpanded) iter.Seq[string] {
	return func(yield func(string) bool) {
		for name, c := range all {
			if c.Status == nil || !isRouter(name) {
				continue
			}
			for _, ts := range c.Status.Tasks {
				if ts.Totals == nil {
					continue
				}
				for id := range ts.Totals.RoutedTo {
					if !yield(id) {
						return
					}
				}
			}
		}
	}
}

// countersOf builds the counters of every account from the runtime's connectors; names are the rules' by id.
func countersOf(all map[string]rpc.ConnectorExpanded, names map[string]string) map[string][]history.Counters {
	out := map[string][]history.Counters{}
	for name, c := range all {
		parts := strings.Split(name, ".")
		if c.Status == nil || c.Status.Type != rpc.TypeSink || len(parts) < 4 || parts[0] != "eb" {
			continue
		}
		var n rpc.TaskCounters
		for _, ts := range c.Status.Tasks {
			if ts.Totals != nil {
				n = n.Add(*ts.Totals)
			}
		}
		account, busName := parts[1], parts[2]
		switch {
		case len(parts) == 4 && parts[3] == "router":
			out[account] = append(out[account], history.Counters{Bus: busName, In: n.Read, Matched: n.Matched})
			// By name: a rule deleted and created again under its name has a new id, and until reconciliation
			// forgets the old one both count for it (the old one's total no longer grows).
			matched := map[string]uint64{}
			for id, k := range n.RoutedTo {
				if rn := names[id]; rn != "" {
					matched[rn] += k
				}
			}
			for rn, k := range matched {
				out[account] = append(out[account], history.Counters{Bus: busName, Rule: rn, Matched: k})
			}
		case len(parts) == 5:
			out[account] = append(out[account], history.Counters{Bus: busName, Rule: parts[3], Target: parts[4], In: n.Read,
				Delivered: n.Written, Failed: n.Failed + n.Dropped, DeadLettered: n.DeadLettered, LatencyMicros: n.LatencyMicros})
		}
	}
	for acc := range out {
		slices.SortFunc(out[acc], func(x, y history.Counters) int {
			return cmp.Or(cmp.Compare(x.Bus, y.Bus), cmp.Compare(x.Rule, y.Rule), cmp.Compare(x.Target, y.Target))
		})
	}
	return out
}

// ruleNames reads the names of the rules of a router's table by id.
func ruleNames(info *rpc.ConnectorInfo) map[string]string {
	if info == nil {
		return nil
	}
	var entries []routeEntry
	if json.Unmarshal([]byte(info.Config["router.rules"]), &entries) != nil {
		return nil
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		out[e.ID] = e.Name
	}
	return out
}
