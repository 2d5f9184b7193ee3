package web

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/target"
)

// Target delivers the events its rule selects.
type Target struct {
	// Name may be absent in a PUT, which takes it from the path; when present it must equal the path's.
	Name string `json:"name" example:"hook"`
	// Type selects the sink that delivers: http.
	Type        string       `json:"type" enums:"http" example:"http"`
	Config      TargetConfig `json:"config"`
	RetryPolicy RetryPolicy  `json:"retryPolicy"`
	// Status is the runtime state of the target's connector; read-only, ignored on input.
	Status    TargetStatus `json:"status" readonly:"true"`
	CreatedAt time.Time    `json:"createdAt" readonly:"true"`
	UpdatedAt time.Time    `json:"updatedAt" readonly:"true"`
} //@name Target

// TargetConfig holds the keys of the target's type. For http: url (required), method (POST), headers, mode
// (binary) and timeout (5s).
type TargetConfig struct {
	// URL is an absolute http or https URL.
	URL    string `json:"url" example:"https://example.com/hook"`
	Method string `json:"method,omitempty" enums:"POST,PUT,PATCH,DELETE,GET" example:"POST"`
	// Headers are added to every request.
	Headers map[string]string `json:"headers"`
	// Mode is how the CloudEvent is encoded: binary (ce-* headers) or structured (application/cloudevents+json).
	Mode string `json:"mode,omitempty" enums:"binary,structured" example:"binary"`
	// Timeout of one request, a Go duration between 100ms and 1m.
	Timeout string `json:"timeout,omitempty" example:"5s"`
} //@name TargetConfig

// RetryPolicy bounds redelivery of an event that failed; an absent field takes its default.
type RetryPolicy struct {
	// MaximumRetryAttempts is between 0 and 185 (default 185).
	MaximumRetryAttempts *int `json:"maximumRetryAttempts,omitempty" example:"185"`
	// MaximumEventAgeInSeconds is between 60 and 86400 (default 86400).
	MaximumEventAgeInSeconds *int `json:"maximumEventAgeInSeconds,omitempty" example:"86400"`
} //@name RetryPolicy

// TargetStatus is the runtime state of a target: PENDING until the runtime runs its connector, then the
// worker's state (RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED).
type TargetStatus struct {
	State     string       `json:"state" example:"RUNNING"`
	Tasks     []TaskStatus `json:"tasks"`
	LastError *string      `json:"lastError"`
} //@name TargetStatus

// TaskStatus is the runtime state of one task of a target's connector.
type TaskStatus struct {
	ID       int    `json:"id" example:"0"`
	State    string `json:"state" example:"RUNNING"`
	WorkerID string `json:"workerId" example:"w1"`
} //@name TaskStatus

// TargetList is the targets of a rule (at most 5, so unpaged).
type TargetList struct {
	Targets []Target `json:"targets"`
} //@name TargetList

func (a *api) targetOf(c *gin.Context, t *target.Target) Target {
	h := t.HTTP()
	rp := t.RetryPolicy()
	out := Target{
		Name: t.Name(),
		Type: string(t.Type()),
		Config: TargetConfig{
			URL: h.URL, Method: h.Method, Headers: h.Headers, Mode: string(h.Mode), Timeout: h.Timeout.String(),
		},
		RetryPolicy: RetryPolicy{MaximumRetryAttempts: &rp.MaximumRetryAttempts, MaximumEventAgeInSeconds: &rp.MaximumEventAgeInSeconds},
		Status:      targetStatusOf(a.s.Targets.Status(c.Request.Context(), t)),
		CreatedAt:   t.CreatedAt(),
		UpdatedAt:   t.UpdatedAt(),
	}
	if out.Config.Headers == nil {
		out.Config.Headers = map[string]string{}
	}
	return out
}

func targetStatusOf(st *target.Status) TargetStatus {
	out := TargetStatus{State: st.State, Tasks: make([]TaskStatus, 0, len(st.Tasks))}
	for _, ts := range st.Tasks {
		out.Tasks = append(out.Tasks, TaskStatus{ID: ts.ID, State: ts.State, WorkerID: ts.WorkerID})
	}
	if st.LastError != "" {
		out.LastError = &st.LastError
	}
	return out
}

// spec returns the domain form of the target; absent retry policy fields take their defaults.
func (t Target) spec() (target.Spec, error) {
	spec := target.Spec{
		Name: t.Name,
		Type: target.Type(t.Type),
		HTTP: target.HTTPConfig{
			URL: t.Config.URL, Method: t.Config.Method, Headers: t.Config.Headers, Mode: target.Mode(t.Config.Mode),
		},
		RetryPolicy: target.DefaultRetryPolicy(),
	}
	if t.Config.Timeout != "" {
		d, err := time.ParseDuration(t.Config.Timeout)
		if err != nil {
			return target.Spec{}, domain.Invalid("config.timeout", "config.timeout %q is not a duration such as \"5s\"", t.Config.Timeout)
		}
		if d == 0 {
			return target.Spec{}, domain.Invalid("config.timeout", "config.timeout must be between 100ms and %s", target.MaxTimeout)
		}
		spec.HTTP.Timeout = d
	}
	if p := t.RetryPolicy.MaximumRetryAttempts; p != nil {
		spec.RetryPolicy.MaximumRetryAttempts = *p
	}
	if p := t.RetryPolicy.MaximumEventAgeInSeconds; p != nil {
		spec.RetryPolicy.MaximumEventAgeInSeconds = *p
	}
	return spec, nil
}

// listTargets answers the targets of a rule, ordered by name.
//
//	@Summary	List the targets of a rule
//	@Tags		targets
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: default)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		rule			path		string	true	"rule name"
//	@Success	200				{object}	TargetList
//	@Failure	404				{object}	Problem	"BusNotFound, RuleNotFound"
//	@Router		/api/v1/buses/{bus}/rules/{rule}/targets [get]
func (a *api) listTargets(c *gin.Context) {
	ts, err := a.s.Targets.List(c.Request.Context(), accountOf(c), c.Param("bus"), c.Param("rule"))
	if err != nil {
		a.writeError(c, err)
		return
	}
	out := TargetList{Targets: make([]Target, 0, len(ts))}
	for _, t := range ts {
		out.Targets = append(out.Targets, a.targetOf(c, t))
	}
	c.JSON(http.StatusOK, out)
}

// getTarget answers one target with its runtime status.
//
//	@Summary	Get a target
//	@Tags		targets
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: default)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		rule			path		string	true	"rule name"
//	@Param		target			path		string	true	"target name"
//	@Success	200				{object}	Target
//	@Failure	404				{object}	Problem	"BusNotFound, RuleNotFound, TargetNotFound"
//	@Router		/api/v1/buses/{bus}/rules/{rule}/targets/{target} [get]
func (a *api) getTarget(c *gin.Context) {
	t, err := a.s.Targets.Get(c.Request.Context(), accountOf(c), c.Param("bus"), c.Param("rule"), c.Param("target"))
	if err != nil {
		a.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, a.targetOf(c, t))
}

// putTarget creates the target (201) or replaces its configuration (200).
//
//	@Summary		Create or replace a target
//	@Description	A new target receives every event routed to its rule after the call answered. A rule has at most 5 targets.
//	@Tags			targets
//	@Accept			json
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: default)"
//	@Param			bus				path		string	true	"bus name"
//	@Param			rule			path		string	true	"rule name"
//	@Param			target			path		string	true	"target name"
//	@Param			body			body		Target	true	"the target; its name may be absent, its status is ignored"
//	@Success		200				{object}	Target	"replaced"
//	@Success		201				{object}	Target	"created"
//	@Failure		400				{object}	Problem	"invalid input (ValidationError, MalformedRequest)"
//	@Failure		404				{object}	Problem	"BusNotFound, RuleNotFound"
//	@Failure		409				{object}	Problem	"LimitExceeded: the rule has 5 targets already"
//	@Router			/api/v1/buses/{bus}/rules/{rule}/targets/{target} [put]
func (a *api) putTarget(c *gin.Context) {
	var in Target
	if err := decodeJSON(c, &in); err != nil {
		a.writeError(c, err)
		return
	}
	name := c.Param("target")
	if in.Name != "" && in.Name != name {
		a.writeError(c, domain.Invalid("name", "name %q differs from the target %q of the path; targets cannot be renamed", in.Name, name))
		return
	}
	in.Name = name
	spec, err := in.spec()
	if err != nil {
		a.writeError(c, err)
		return
	}
	t, created, err := a.s.Targets.Put(c.Request.Context(), accountOf(c), c.Param("bus"), c.Param("rule"), spec)
	if err != nil {
		a.writeError(c, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	c.JSON(status, a.targetOf(c, t))
}

// deleteTarget deletes a target and its connector.
//
//	@Summary	Delete a target
//	@Tags		targets
//	@Param		X-Account-Id	header	string	false	"account (default: default)"
//	@Param		bus				path	string	true	"bus name"
//	@Param		rule			path	string	true	"rule name"
//	@Param		target			path	string	true	"target name"
//	@Success	204
//	@Failure	404	{object}	Problem	"BusNotFound, RuleNotFound, TargetNotFound"
//	@Router		/api/v1/buses/{bus}/rules/{rule}/targets/{target} [delete]
func (a *api) deleteTarget(c *gin.Context) {
	if err := a.s.Targets.Delete(c.Request.Context(), accountOf(c), c.Param("bus"), c.Param("rule"), c.Param("target")); err != nil {
		a.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
