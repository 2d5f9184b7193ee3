package rest

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/web"
)

// Bus is an event bus: a named channel of an account that events are put on and rules read from.
type Bus struct {
	Name        string    `json:"name" example:"orders"`
	Description string    `json:"description" example:"shop orders"`
	Retention   Retention `json:"retention"`
	// LogConfig is what the bus's log records (GET /api/v1/buses/{bus}/log); absent: OFF.
	LogConfig *LogConfig `json:"logConfig,omitempty"`
	CreatedAt time.Time  `json:"createdAt" readonly:"true"`
} //@name Bus

// LogConfig is what a bus's log records, as Amazon EventBridge's LogConfig: level OFF (nothing, the default),
// ERROR (failed attempts, dead letters, drops), INFO (also events read by the router, rules matched, attempts that
// succeed, redrives) or TRACE (also the rules an event did not match, with why, 20 at most per event);
// includeDetail FULL adds the event and the start of failed answers, NONE (the default) does not. Records are
// kept --bus-log-retention (24h) and --bus-log-max-mib (256) per account.
type LogConfig struct {
	Level         string `json:"level,omitempty" example:"INFO" enums:"OFF,ERROR,INFO,TRACE"`
	IncludeDetail string `json:"includeDetail,omitempty" example:"NONE" enums:"NONE,FULL"`
} //@name LogConfig

// Retention bounds how long and how much of a bus's events are kept; a zero or absent field takes its default.
type Retention struct {
	// MaxAge is a Go duration ("72h" is accepted; answers read "72h0m0s"); default 72h, between 1m and 8760h.
	MaxAge string `json:"maxAge,omitempty" example:"72h0m0s"`
	// MaxBytes is a size of the bus's own, at least 1 MiB, reserved in the event store: when events not delivered
	// yet fill it, PutEvents answers BusFull. Absent or 0 (the default): no size of its own, what the bus keeps
	// counts against the account's storage quota.
	MaxBytes int64 `json:"maxBytes,omitempty" example:"67108864"`
} //@name Retention

// BusList is one page of buses.
type BusList struct {
	Buses []Bus `json:"buses"`
	// NextToken asks for the next page; absent on the last page.
	NextToken string `json:"nextToken,omitempty"`
} //@name BusList

func busOf(b *bus.Bus) Bus {
	r := b.Retention()
	return Bus{
		Name:        b.Name(),
		Description: b.Description(),
		Retention:   Retention{MaxAge: r.MaxAge.String(), MaxBytes: r.MaxBytes},
		LogConfig:   &LogConfig{Level: b.Log().Level, IncludeDetail: b.Log().IncludeDetail},
		CreatedAt:   b.CreatedAt(),
	}
}

// logConfig returns the domain form of l (nil: OFF).
func (l *LogConfig) logConfig() bus.LogConfig {
	if l == nil {
		return bus.LogConfig{}
	}
	return bus.LogConfig{Level: l.Level, IncludeDetail: l.IncludeDetail}
}

// retention returns the domain form of the retention; a malformed maxAge is a validation error.
func (r Retention) retention() (bus.Retention, error) {
	out := bus.Retention{MaxBytes: r.MaxBytes}
	if r.MaxAge != "" {
		d, err := time.ParseDuration(r.MaxAge)
		if err != nil {
			return bus.Retention{}, domain.Invalid("retention.maxAge", "retention.maxAge %q is not a duration such as \"72h\"", r.MaxAge)
		}
		if d == 0 {
			return bus.Retention{}, domain.Invalid("retention.maxAge", "retention.maxAge must be between %s and %s", bus.MinMaxAge, bus.MaxMaxAge)
		}
		out.MaxAge = d
	}
	if r.MaxBytes < 0 {
		return bus.Retention{}, domain.Invalid("retention.maxBytes", "retention.maxBytes must be at least %d", bus.MinMaxBytes)
	}
	return out, nil
}

// listBuses answers a page of the account's buses, ordered by name.
//
//	@Summary	List buses
//	@Tags		buses
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		limit			query		int		false	"page size, 1 to 500 (default 50)"
//	@Param		nextToken		query		string	false	"token of the next page from the previous answer"
//	@Success	200				{object}	BusList
//	@Failure	400				{object}	web.Problem
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses [get]
func (a *api) listBuses(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	bs, next, err := a.s.Buses.List(c.Request.Context(), web.AccountOf(c), page)
	if err != nil {
		return 0, nil, err
	}
	out := BusList{Buses: make([]Bus, 0, len(bs)), NextToken: next}
	for _, b := range bs {
		out.Buses = append(out.Buses, busOf(b))
	}
	return http.StatusOK, out, nil
}

// createBus creates a bus, its stream and its router.
//
//	@Summary	Create a bus
//	@Tags		buses
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				body		Bus		true	"the bus"
//	@Success	201				{object}	Bus
//	@Failure	400				{object}	web.Problem	"invalid input (ValidationError, MalformedRequest)"
//	@Failure	409				{object}	web.Problem	"BusAlreadyExists, BusQuotaExceeded, RetentionAboveMaximum (the per-bus maximum), AccountStorageQuotaExceeded, StorageBudgetExceeded, InsufficientStorage (no room for the retention.maxBytes)"
//	@Failure	413				{object}	web.Problem
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses [post]
func (a *api) createBus(c *gin.Context, in *Bus) (int, any, error) {
	ret, err := in.Retention.retention()
	if err != nil {
		return 0, nil, err
	}
	b, err := a.s.Buses.CreateWithLog(c.Request.Context(), web.AccountOf(c), in.Name, in.Description, ret, in.LogConfig.logConfig())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, busOf(b), nil
}

// getBus answers one bus.
//
//	@Summary	Get a bus
//	@Tags		buses
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Success	200				{object}	Bus
//	@Failure	404				{object}	web.Problem	"BusNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus} [get]
func (a *api) getBus(c *gin.Context) (int, any, error) {
	b, err := a.s.Buses.Get(c.Request.Context(), web.AccountOf(c), c.Param("bus"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, busOf(b), nil
}

// BusPatch changes a bus: the fields given are replaced, the others kept.
type BusPatch struct {
	Description *string         `json:"description,omitempty" example:"orders of the shop"`
	Retention   *RetentionPatch `json:"retention,omitempty"`
	// LogConfig replaces the bus's log config (absent fields: OFF, NONE); its router and targets follow.
	LogConfig *LogConfig `json:"logConfig,omitempty"`
} //@name BusPatch

// RetentionPatch changes a bus's retention: the fields given are replaced ("0" or 0 restores the default).
type RetentionPatch struct {
	MaxAge   *string `json:"maxAge,omitempty" example:"24h"`
	MaxBytes *int64  `json:"maxBytes,omitempty" example:"536870912"`
} //@name RetentionPatch

// patch returns the domain form of p.
func (p BusPatch) patch() (bus.Patch, error) {
	out := bus.Patch{Description: p.Description}
	if p.LogConfig != nil {
		l := p.LogConfig.logConfig()
		out.Log = &l
	}
	if p.Retention == nil {
		return out, nil
	}
	if v := p.Retention.MaxAge; v != nil {
		d, err := time.ParseDuration(*v)
		if err != nil {
			return out, domain.Invalid("retention.maxAge", "retention.maxAge %q is not a duration such as \"72h\"", *v)
		}
		out.MaxAge = &d
	}
	if v := p.Retention.MaxBytes; v != nil {
		if *v < 0 {
			return out, domain.Invalid("retention.maxBytes", "retention.maxBytes must be at least %d", bus.MinMaxBytes)
		}
		out.MaxBytes = v
	}
	return out, nil
}

// patchBus changes a bus's description, retention or log config; the stream's limits follow at once.
//
//	@Summary	Change a bus
//	@Tags		buses
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string		false	"account (default: the caller's own)"
//	@Param		bus				path		string		true	"bus name"
//	@Param		patch			body		BusPatch	true	"the fields to change"
//	@Success	200				{object}	Bus
//	@Failure	400				{object}	web.Problem	"invalid input (ValidationError, MalformedRequest)"
//	@Failure	404				{object}	web.Problem	"BusNotFound"
//	@Failure	409				{object}	web.Problem	"RetentionAboveMaximum, AccountStorageQuotaExceeded, StorageBudgetExceeded, InsufficientStorage: the bus keeps its retention"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus} [patch]
func (a *api) patchBus(c *gin.Context, in *BusPatch) (int, any, error) {
	p, err := in.patch()
	if err != nil {
		return 0, nil, err
	}
	b, err := a.s.Buses.Update(c.Request.Context(), web.AccountOf(c), c.Param("bus"), p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, busOf(b), nil
}

// deleteBus deletes a bus that has no rules, its router and its stream.
//
//	@Summary	Delete a bus
//	@Tags		buses
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's own)"
//	@Param		bus				path	string	true	"bus name"
//	@Success	204
//	@Failure	404	{object}	web.Problem	"BusNotFound"
//	@Failure	409	{object}	web.Problem	"BusNotEmpty: the bus still has rules (named in detail)"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus} [delete]
func (a *api) deleteBus(c *gin.Context) (int, any, error) {
	if err := a.s.Buses.Delete(c.Request.Context(), web.AccountOf(c), c.Param("bus")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
