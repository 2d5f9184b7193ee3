package connect

import (
	"context"
	"strings"
	"time"

	"github.com/eventbridge-go/eventbridge/domain/health"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/rpc"
)

// TargetReport is the runtime state of one target, summarized (health, counters), for the control plane's metrics.
type TargetReport struct {
	Account, Bus, Rule, Target string
	Status                     *target.Status
}

// SourceReport is the runtime state of one source, summarized, for the control plane's metrics.
type SourceReport struct {
	Account, Bus, Source string
	Status               *source.Status
}

// Reports reads the status of every connector the runtime runs for the control plane (one call) and summarizes
// those of targets and sources with rules at now. A connector is named by what it runs
// (eb.<account>.<bus>.<rule>.<target>, eb.<account>.<bus>.source.<source>); a target or source that the runtime
// does not run yet is not reported.
func (a *Adapter) Reports(ctx context.Context, rules health.Rules, now time.Time) ([]TargetReport, []SourceReport, error) {
	all, err := a.cfg.Runtime.ListConnectors(ctx)
	if err != nil {
		return nil, nil, err
	}
	var targets []TargetReport
	var sources []SourceReport
	for name, c := range all {
		parts := strings.Split(name, ".")
		if c.Status == nil || len(parts) != 5 || parts[0] != "eb" {
			continue
		}
		switch {
		case c.Status.Type == rpc.TypeSource && parts[3] == "source":
			st := sourceStatusOf(c.Status, lastErrorOf(c.Status))
			st.Summarize(rules, now)
			sources = append(sources, SourceReport{Account: parts[1], Bus: parts[2], Source: parts[4], Status: st})
		case c.Status.Type == rpc.TypeSink:
			st := targetStatusOf(c.Status, lastErrorOf(c.Status))
			st.Summarize(rules, now)
			targets = append(targets, TargetReport{Account: parts[1], Bus: parts[2], Rule: parts[3], Target: parts[4], Status: st})
		}
	}
	return targets, sources, nil
}
