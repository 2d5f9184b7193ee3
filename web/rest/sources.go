package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/web"
)

// Source feeds a bus: a source plugin of the worker runtime, run as a source connector whose output is the bus.
type Source struct {
	// Name may be absent in a PUT, which takes it from the path; when present it must equal the path's.
	Name string `json:"name" example:"github"`
	// Type is the name of a source plugin of the runtime without "-source": http (a webhook), schedule, mqtt,
	// eventbus, ... (GET /api/v1/runtime/plugins lists them). It cannot change.
	Type        string `json:"type" example:"http"`
	Description string `json:"description" example:"pushes of the shop's repository"`
	// Config holds the plugin's keys (GET /api/v1/runtime/plugins/{type}-source/schema describes them): a flat
	// object whose values are strings, numbers or booleans, kept as strings. Answers show the value of every
	// secret key as "***"; sent back so in a PUT or PATCH, it keeps the stored value.
	Config map[string]json.RawMessage `json:"config" swaggertype:"object,string" example:"http.methods:POST,http.signature.scheme:github,http.signature.secret:***"`
	// State is ENABLED or DISABLED; read-only (POST .../enable and .../disable change it).
	State string `json:"state" readonly:"true" example:"ENABLED"`
	// Webhook is the receiving side of an http source: its token and URLs; read-only.
	Webhook *SourceWebhook `json:"webhook,omitempty" readonly:"true"`
	// Status is the runtime state of the source's connector; read-only.
	Status    SourceStatus `json:"status" readonly:"true"`
	CreatedAt time.Time    `json:"createdAt" readonly:"true"`
	UpdatedAt time.Time    `json:"updatedAt" readonly:"true"`
} //@name Source

// SourceWebhook is where an http source receives requests: any of its URLs, with the token.
type SourceWebhook struct {
	// Token is a random secret of 256 bits; POST .../rotate-token replaces it.
	Token string `json:"token" example:"qO1C1kH0lQ0Y3bW9mB2YxT1k2Zq5vJ7r8sN0aL4cE6g"`
	// URLs are RocketMQ EventBridge's /webhook/putEvents?token= and /api/v1/webhooks/{token}, on the host the
	// request that answered was sent to.
	URLs []string `json:"urls"`
} //@name SourceWebhook

// SourceStatus is the runtime state of a source: PENDING until the runtime runs its connector, then the worker's
// state (RUNNING, STOPPED for a disabled source, FAILED, UNASSIGNED).
type SourceStatus struct {
	State string             `json:"state" example:"RUNNING"`
	Tasks []SourceTaskStatus `json:"tasks"`
	// LastError is why a task failed, else the error of the last failed read or store while none succeeded since.
	LastError *string `json:"lastError"`
	// Health is PENDING, HEALTHY, RETRYING, FAILING, DEAD_LETTERING, PAUSED, STOPPED or FAILED (docs/health.md).
	Health        string           `json:"health" example:"HEALTHY"`
	LastFailure   *DeliveryFailure `json:"lastFailure"`
	LastSuccessAt *time.Time       `json:"lastSuccessAt"`
	// Counters are what the source did since it was created, over restarts and moves to other workers; absent
	// until its runtime reported any.
	Counters *SourceTaskCounters `json:"counters,omitempty"`
} //@name SourceStatus

// SourceTaskStatus is the runtime state of one task of a source's connector.
type SourceTaskStatus struct {
	ID       int    `json:"id" example:"0"`
	State    string `json:"state" example:"RUNNING"`
	WorkerID string `json:"workerId" example:"w1"`
	// Counters are what the task did since it started on its worker; absent when it does not run.
	Counters *SourceTaskCounters `json:"counters,omitempty"`
} //@name SourceTaskStatus

// SourceTaskCounters count what a source's task did: records read, written to the bus, and given up.
type SourceTaskCounters struct {
	Read     uint64 `json:"read"`
	Written  uint64 `json:"written"`
	Failed   uint64 `json:"failed"`
	Dropped  uint64 `json:"dropped"`
	Filtered uint64 `json:"filtered"`
} //@name SourceTaskCounters

// SourceList is one page of sources.
type SourceList struct {
	Sources   []Source `json:"sources"`
	NextToken string   `json:"nextToken,omitempty"`
} //@name SourceList

// SourcePatch changes what it holds and keeps the rest.
type SourcePatch struct {
	Description *string `json:"description,omitempty"`
	// Config sets the keys it holds; a key set to null is removed.
	Config map[string]json.RawMessage `json:"config,omitempty" swaggertype:"object,string"`
} //@name SourcePatch

// configValue reads one config value: a string as it is, a number as written, a boolean as true or false; nil
// for null. Objects and arrays are refused, naming the key.
func configValue(key string, raw json.RawMessage) (*string, error) {
	field := "config." + key
	t := bytes.TrimSpace(raw)
	switch {
	case len(t) == 0 || string(t) == "null":
		return nil, nil
	case t[0] == '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, web.Malformed(field, "%s is not a valid JSON string", field)
		}
		return &s, nil
	case string(t) == "true" || string(t) == "false":
		s := string(t)
		return &s, nil
	case t[0] == '-' || (t[0] >= '0' && t[0] <= '9'):
		var n json.Number
		if err := json.Unmarshal(t, &n); err != nil {
			return nil, web.Malformed(field, "%s is not a valid JSON number", field)
		}
		s := n.String()
		return &s, nil
	}
	return nil, domain.Invalid(field, "%s must be a string, a number or a boolean: a source's config is flat", field)
}

// ConfigOf reads a whole config (null values are refused: leave the key out).
func ConfigOf(in map[string]json.RawMessage) (map[string]string, error) {
	out := make(map[string]string, len(in))
	for k, raw := range in {
		v, err := configValue(k, raw)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, domain.Invalid("config."+k, "config.%s is null; leave the key out instead", k)
		}
		out[k] = *v
	}
	return out, nil
}

func (a *api) sourceOf(c *gin.Context, s *source.Source) Source {
	cfg := map[string]json.RawMessage{}
	for k, v := range s.Redacted() {
		b, _ := json.Marshal(v) // strings always marshal
		cfg[k] = b
	}
	out := Source{
		Name: s.Name(), Type: string(s.Type()), Description: s.Description(), Config: cfg, State: string(s.State()),
		Status: sourceStatusOf(a.s.Sources.Status(c.Request.Context(), s)), CreatedAt: s.CreatedAt(), UpdatedAt: s.UpdatedAt(),
	}
	if t := s.Token(); t != "" {
		if t = web.Sealed(c, t); t == domain.SecretMask {
			out.Webhook = &SourceWebhook{Token: t, URLs: []string{}}
		} else {
			out.Webhook = &SourceWebhook{Token: t, URLs: WebhookURLs(c, a.webhookBase, t)}
		}
	}
	return out
}

// WebhookURLs are the URLs of a webhook token: on base (web.Config.WebhookBaseURL) when set, else on the scheme and
// host of the request being answered.
func WebhookURLs(c *gin.Context, base, token string) []string {
	base = strings.TrimRight(base, "/")
	if base == "" {
		scheme := "http"
		if c.Request.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + c.Request.Host
	}
	return []string{
		base + "/webhook/putEvents?" + source.TokenParam + "=" + url.QueryEscape(token),
		base + "/api/v1/webhooks/" + url.PathEscape(token),
	}
}

func sourceTaskCountersOf(n *source.Counters) *SourceTaskCounters {
	if n == nil {
		return nil
	}
	return &SourceTaskCounters{Read: n.Read, Written: n.Written, Failed: n.Failed, Dropped: n.Dropped, Filtered: n.Filtered}
}

func sourceStatusOf(st *source.Status) SourceStatus {
	out := SourceStatus{State: st.State, Tasks: make([]SourceTaskStatus, 0, len(st.Tasks)), Health: st.Health,
		LastFailure: failureOf(st.LastFailure), LastSuccessAt: timeOrNil(st.LastSuccessAt)}
	for _, ts := range st.Tasks {
		out.Tasks = append(out.Tasks, SourceTaskStatus{ID: ts.ID, State: ts.State, WorkerID: ts.WorkerID,
			Counters: sourceTaskCountersOf(ts.Counters)})
	}
	out.Counters = sourceTaskCountersOf(st.Counters)
	if st.LastError != "" {
		out.LastError = &st.LastError
	}
	return out
}

func (in Source) spec() (source.Spec, error) {
	cfg, err := ConfigOf(in.Config)
	if err != nil {
		return source.Spec{}, err
	}
	return source.Spec{Name: in.Name, Type: source.Type(in.Type), Description: in.Description, Config: cfg}, nil
}

// listSources answers one page of a bus's sources, ordered by name.
//
//	@Summary	List the sources of a bus
//	@Tags		sources
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		limit			query		int		false	"page size (1 to 500, default 50)"
//	@Param		nextToken		query		string	false	"token of the next page from the previous answer"
//	@Param		namePrefix		query		string	false	"only the sources whose name starts with this"
//	@Success	200				{object}	SourceList
//	@Failure	400				{object}	web.Problem	"ValidationError"
//	@Failure	404				{object}	web.Problem	"BusNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/sources [get]
func (a *api) listSources(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	if prefix := c.Query("namePrefix"); prefix != "" {
		if err := domain.ValidateName("namePrefix", prefix); err != nil {
			return 0, nil, err
		}
		page.Prefix = prefix
	}
	ss, next, err := a.s.Sources.List(c.Request.Context(), web.AccountOf(c), c.Param("bus"), page)
	if err != nil {
		return 0, nil, err
	}
	out := SourceList{Sources: make([]Source, 0, len(ss)), NextToken: next}
	for _, s := range ss {
		out.Sources = append(out.Sources, a.sourceOf(c, s))
	}
	return http.StatusOK, out, nil
}

// createSource creates a source; it answers once the runtime runs its connector.
//
//	@Summary		Create a source
//	@Description	The config is checked by the plugin of the type (every problem is named); secret keys are sealed
//	@Description	under the master key and answered as "***". A source of type http gets a webhook token and URLs.
//	@Tags			sources
//	@Accept			json
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			bus				path		string	true	"bus name"
//	@Param			body			body		Source	true	"the source; state, webhook and status are ignored"
//	@Success		201				{object}	Source
//	@Failure		400				{object}	web.Problem	"ValidationError, MalformedRequest, UnknownSourceType, InvalidSourceConfig"
//	@Failure		404				{object}	web.Problem	"BusNotFound"
//	@Failure		409				{object}	web.Problem	"SourceAlreadyExists, SourceQuotaExceeded"
//	@Failure		503				{object}	web.Problem	"ServiceUnavailable: the worker runtime cannot be reached to check the config"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/buses/{bus}/sources [post]
func (a *api) createSource(c *gin.Context, in *Source) (int, any, error) {
	spec, err := in.spec()
	if err != nil {
		return 0, nil, err
	}
	s, err := a.s.Sources.Create(c.Request.Context(), web.AccountOf(c), c.Param("bus"), spec)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, a.sourceOf(c, s), nil
}

// getSource answers one source with its runtime status.
//
//	@Summary	Get a source
//	@Tags		sources
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		source			path		string	true	"source name"
//	@Success	200				{object}	Source
//	@Failure	404				{object}	web.Problem	"BusNotFound, SourceNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/sources/{source} [get]
func (a *api) getSource(c *gin.Context) (int, any, error) {
	s, err := a.s.Sources.Get(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("source"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, a.sourceOf(c, s), nil
}

// putSource creates the source (201) or replaces its description and config (200).
//
//	@Summary		Create or replace a source
//	@Description	The type of an existing source cannot change. A secret value sent as "***" keeps the stored one.
//	@Tags			sources
//	@Accept			json
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			bus				path		string	true	"bus name"
//	@Param			source			path		string	true	"source name"
//	@Param			body			body		Source	true	"the source; its name may be absent"
//	@Success		200				{object}	Source	"replaced"
//	@Success		201				{object}	Source	"created"
//	@Failure		400				{object}	web.Problem	"ValidationError, MalformedRequest, UnknownSourceType, InvalidSourceConfig"
//	@Failure		404				{object}	web.Problem	"BusNotFound"
//	@Failure		409				{object}	web.Problem	"SourceQuotaExceeded"
//	@Failure		503				{object}	web.Problem	"ServiceUnavailable"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/buses/{bus}/sources/{source} [put]
func (a *api) putSource(c *gin.Context, in *Source) (int, any, error) {
	name := c.Param("source")
	if in.Name != "" && in.Name != name {
		return 0, nil, domain.Invalid("name", "name %q differs from the source %q of the path; sources cannot be renamed", in.Name, name)
	}
	in.Name = name
	spec, err := in.spec()
	if err != nil {
		return 0, nil, err
	}
	s, created, err := a.s.Sources.Put(c.Request.Context(), web.AccountOf(c), c.Param("bus"), spec)
	if err != nil {
		return 0, nil, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return status, a.sourceOf(c, s), nil
}

// patchSource changes the description or config keys of a source.
//
//	@Summary	Change a source
//	@Tags		sources
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string		false	"account (default: the caller's own)"
//	@Param		bus				path		string		true	"bus name"
//	@Param		source			path		string		true	"source name"
//	@Param		body			body		SourcePatch	true	"what changes; a config key set to null is removed"
//	@Success	200				{object}	Source
//	@Failure	400				{object}	web.Problem	"ValidationError, MalformedRequest, InvalidSourceConfig"
//	@Failure	404				{object}	web.Problem	"BusNotFound, SourceNotFound"
//	@Failure	503				{object}	web.Problem	"ServiceUnavailable"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/sources/{source} [patch]
func (a *api) patchSource(c *gin.Context, in *SourcePatch) (int, any, error) {
	p := source.Patch{Description: in.Description}
	if in.Config != nil {
		p.Config = map[string]*string{}
		for k, raw := range in.Config {
			v, err := configValue(k, raw)
			if err != nil {
				return 0, nil, err
			}
			p.Config[k] = v
		}
	}
	s, err := a.s.Sources.Patch(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("source"), p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, a.sourceOf(c, s), nil
}

// deleteSource deletes a source, its connector and what its webhook received that is not on the bus yet.
//
//	@Summary	Delete a source
//	@Tags		sources
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's own)"
//	@Param		bus				path	string	true	"bus name"
//	@Param		source			path	string	true	"source name"
//	@Success	204
//	@Failure	404	{object}	web.Problem	"BusNotFound, SourceNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/sources/{source} [delete]
func (a *api) deleteSource(c *gin.Context) (int, any, error) {
	if err := a.s.Sources.Delete(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("source")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// enableSource makes a source feed its bus again.
//
//	@Summary		Enable a source
//	@Description	Its connector resumes from its offsets; a webhook accepts requests again.
//	@Tags			sources
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			bus				path		string	true	"bus name"
//	@Param			source			path		string	true	"source name"
//	@Success		200				{object}	Source
//	@Failure		404				{object}	web.Problem	"BusNotFound, SourceNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/buses/{bus}/sources/{source}/enable [post]
func (a *api) enableSource(c *gin.Context) (int, any, error) {
	s, err := a.s.Sources.Enable(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("source"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, a.sourceOf(c, s), nil
}

// disableSource stops a source.
//
//	@Summary		Disable a source
//	@Description	Its connector is stopped, keeping its offsets; a webhook answers 404.
//	@Tags			sources
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			bus				path		string	true	"bus name"
//	@Param			source			path		string	true	"source name"
//	@Success		200				{object}	Source
//	@Failure		404				{object}	web.Problem	"BusNotFound, SourceNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/buses/{bus}/sources/{source}/disable [post]
func (a *api) disableSource(c *gin.Context) (int, any, error) {
	s, err := a.s.Sources.Disable(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("source"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, a.sourceOf(c, s), nil
}

// rotateSourceToken gives a webhook source a new token.
//
//	@Summary		Rotate the token of a webhook source
//	@Description	The former token answers 404 from then on.
//	@Tags			sources
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			bus				path		string	true	"bus name"
//	@Param			source			path		string	true	"source name"
//	@Success		200				{object}	Source
//	@Failure		400				{object}	web.Problem	"ValidationError: the source is not of type http"
//	@Failure		404				{object}	web.Problem	"BusNotFound, SourceNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/buses/{bus}/sources/{source}/rotate-token [post]
func (a *api) rotateSourceToken(c *gin.Context) (int, any, error) {
	s, err := a.s.Sources.RotateToken(c.Request.Context(), web.AccountOf(c), c.Param("bus"), c.Param("source"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, a.sourceOf(c, s), nil
}
