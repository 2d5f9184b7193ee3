package rest

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain/history"
	"github.com/eventbridge-go/eventbridge/web"
)

// MetricsHistory is the metrics history of the account's buses, rules and targets over one range.
type MetricsHistory struct {
	Range string `json:"range" example:"1h" enums:"1h,1d"`
	// Step is the time between two points (a Go duration): 10s over the last hour, 5m0s over the last day.
	Step   string          `json:"step" example:"10s"`
	Series []MetricsSeries `json:"series"`
} //@name MetricsHistory

// MetricsSeries is one metric of a bus (rule and target absent), a rule (target absent) or a target.
type MetricsSeries struct {
	Bus    string `json:"bus" example:"orders"`
	Rule   string `json:"rule,omitempty" example:"created"`
	Target string `json:"target,omitempty" example:"hook"`
	// Metric is in (a bus's events read by its router, a target's events read), matched (a bus's events that
	// matched a rule, a rule's events routed to it), delivered, failed, deadLettered (a target's) or latencyMs
	// (a target's mean delivery latency, from the event's storing to its acceptance, retries included).
	Metric string         `json:"metric" example:"delivered" enums:"in,matched,delivered,failed,deadLettered,latencyMs"`
	Points []MetricsPoint `json:"points"`
} //@name MetricsSeries

// MetricsPoint is one step: the events of the step ending at t, or the mean latency of the events delivered in it
// (null when none was).
type MetricsPoint struct {
	T time.Time `json:"t"`
	V *float64  `json:"v" extensions:"x-nullable"`
} //@name MetricsPoint

// readMetricsHistory answers the account's metrics history.
//
//	@Summary		Metrics history
//	@Description	Events in, matched, delivered, failed, dead-lettered and the mean delivery latency of the account's
//	@Description	buses, rules and targets, over the last hour (range=1h, a point every 10 s) or the last day
//	@Description	(range=1d, every 5 min). Derived from the runtime's cumulative counters, sampled by one
//	@Description	control-plane replica at a time into the event store, so every replica answers the same.
//	@Tags			metrics
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			range			query		string	false	"1h (default) or 1d"	Enums(1h, 1d)
//	@Param			bus				query		string	false	"the series of this bus only"
//	@Param			rule			query		string	false	"of this rule (needs bus)"
//	@Param			target			query		string	false	"of this target (needs rule)"
//	@Success		200				{object}	MetricsHistory
//	@Failure		400				{object}	web.Problem	"ValidationError naming the parameter"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/metrics [get]
func (a *api) readMetricsHistory(c *gin.Context) (int, any, error) {
	r, err := a.s.History.Range(c.Query("range"))
	if err != nil {
		return 0, nil, err
	}
	f, err := history.NewFilter(c.Query("bus"), c.Query("rule"), c.Query("target"))
	if err != nil {
		return 0, nil, err
	}
	series, err := a.s.History.History(c.Request.Context(), web.AccountOf(c), r, f)
	if err != nil {
		return 0, nil, err
	}
	out := MetricsHistory{Range: r.Name, Step: r.Step.String(), Series: make([]MetricsSeries, 0, len(series))}
	for _, s := range series {
		ms := MetricsSeries{Bus: s.Bus, Rule: s.Rule, Target: s.Target, Metric: s.Metric, Points: make([]MetricsPoint, 0, len(s.Points))}
		for _, p := range s.Points {
			ms.Points = append(ms.Points, MetricsPoint{T: p.At, V: p.Value})
		}
		out.Series = append(out.Series, ms)
	}
	return http.StatusOK, out, nil
}
