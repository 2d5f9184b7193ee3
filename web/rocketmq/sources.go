package rocketmq

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/web/rest"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/source"
)

// Sources in RocketMQ EventBridge's shapes: controller/EventSourceController.java and
// dto/source/CreateEventSourceRequest.java, UpdateEventSourceRequest.java, DeleteEventSourceRequest.java,
// GetEventSourceRequest.java, GetEventSourceResponse.java, ListEventSourcesRequest.java,
// ListEventSourcesResponse.java and EventSourceDTO.java of apache/rocketmq-eventbridge's adapter/api. Its
// className is our type (http, schedule, ...; the plugin name http-source and RocketMQ EventBridge's HttpSource
// are read as http too); its status is 1 for an enabled source and 0 for a disabled one.

// RocketMQ EventBridge's codes of sources.
var (
	errRMQSourceNotExist     = &domain.Error{Kind: domain.KindConflict, Code: "EventSourceNotExist"}
	errRMQSourceAlreadyExist = &domain.Error{Kind: domain.KindConflict, Code: "EventSourceAlreadyExist"}
)

// rmqSourceErr gives source errors RocketMQ EventBridge's codes.
func rmqSourceErr(err error) error {
	switch {
	case errors.Is(err, source.ErrNotFound):
		return recode(errRMQSourceNotExist, err)
	case errors.Is(err, source.ErrAlreadyExists):
		return recode(errRMQSourceAlreadyExist, err)
	}
	return renameField(err, "name", "eventSourceName")
}

// RocketMQEventSourceRequest creates or updates a source.
type RocketMQEventSourceRequest struct {
	EventBusName    string `json:"eventBusName" example:"demo-bus"`
	EventSourceName string `json:"eventSourceName" example:"github"`
	Description     string `json:"description" example:"pushes"`
	// ClassName is the source's type: http, schedule, mqtt, eventbus, ... (http-source and HttpSource read as http).
	ClassName string `json:"className" example:"http"`
	// Status (updates only): 1 enables the source, 0 disables it; absent keeps it.
	Status *int `json:"status,omitempty" example:"1"`
	// Config holds the plugin's keys: strings, numbers or booleans.
	Config map[string]json.RawMessage `json:"config" swaggertype:"object,string"`
} //@name RocketMQEventSourceRequest

// RocketMQEventSourceName names a source of a bus (getEventSource, deleteEventSource).
type RocketMQEventSourceName struct {
	EventBusName    string `json:"eventBusName" example:"demo-bus"`
	EventSourceName string `json:"eventSourceName" example:"github"`
} //@name RocketMQEventSourceName

// RocketMQCreateEventSourceResponse names the source created.
type RocketMQCreateEventSourceResponse struct {
	RequestID       string `json:"requestId"`
	EventSourceName string `json:"eventSourceName" example:"github"`
} //@name RocketMQCreateEventSourceResponse

// RocketMQEventSource is one source (EventSourceDTO); secret values are "***".
type RocketMQEventSource struct {
	EventBusName    string            `json:"eventBusName" example:"demo-bus"`
	EventSourceName string            `json:"eventSourceName" example:"github"`
	Description     string            `json:"description" example:"pushes"`
	ClassName       string            `json:"className" example:"http"`
	Status          int               `json:"status" example:"1"`
	Config          map[string]string `json:"config"`
	// WebhookURLs are the URLs of an http source.
	WebhookURLs []string `json:"webhookUrls,omitempty"`
	// GmtCreate and GmtModify are in milliseconds since the Unix epoch.
	GmtCreate int64 `json:"gmtCreate" example:"1700000000000"`
	GmtModify int64 `json:"gmtModify" example:"1700000000000"`
} //@name RocketMQEventSource

// RocketMQGetEventSourceResponse is one source.
type RocketMQGetEventSourceResponse struct {
	RequestID string `json:"requestId"`
	RocketMQEventSource
} //@name RocketMQGetEventSourceResponse

// RocketMQListEventSourcesRequest asks for a page of a bus's sources, ordered by name.
type RocketMQListEventSourcesRequest struct {
	EventBusName string `json:"eventBusName" example:"demo-bus"`
	// EventSourceType keeps the sources of one className.
	EventSourceType string `json:"eventSourceType" example:"http"`
	NextToken       string `json:"nextToken" example:"50"`
	MaxResults      int    `json:"maxResults" example:"50"`
} //@name RocketMQListEventSourcesRequest

// RocketMQListEventSourcesResponse is one page of sources.
type RocketMQListEventSourcesResponse struct {
	RequestID    string                `json:"requestId"`
	EventSources []RocketMQEventSource `json:"eventSources"`
	NextToken    string                `json:"nextToken,omitempty" example:"50"`
	Total        int                   `json:"total" example:"1"`
	MaxResults   int                   `json:"maxResults" example:"50"`
} //@name RocketMQListEventSourcesResponse

// typeOfClass reads a className: a type, a plugin name (http-source) or RocketMQ EventBridge's (HttpSource).
func typeOfClass(class string) source.Type {
	if t, ok := source.TypeOfPlugin(class); ok {
		return t
	}
	if p, ok := strings.CutSuffix(class, "Source"); ok && p != "" {
		return source.Type(strings.ToLower(p))
	}
	return source.Type(class)
}

func (a *api) rmqSourceOf(c *gin.Context, busName string, s *source.Source) RocketMQEventSource {
	out := RocketMQEventSource{EventBusName: busName, EventSourceName: s.Name(), Description: s.Description(),
		ClassName: string(s.Type()), Config: s.Redacted(), GmtCreate: s.CreatedAt().UnixMilli(), GmtModify: s.UpdatedAt().UnixMilli()}
	if s.Enabled() {
		out.Status = 1
	}
	if t := s.Token(); t != "" && web.Can(c, access.ReadSecrets) {
		out.WebhookURLs = rest.WebhookURLs(c, a.webhookBase, t)
	}
	return out
}

// readRMQSource reads and checks a create or update request.
func readRMQSource(c *gin.Context) (RocketMQEventSourceRequest, source.Spec, error) {
	var in RocketMQEventSourceRequest
	if err := decodeRocketMQ(c, &in); err != nil {
		return in, source.Spec{}, err
	}
	if err := required("eventBusName", in.EventBusName); err != nil {
		return in, source.Spec{}, err
	}
	if err := required("eventSourceName", in.EventSourceName); err != nil {
		return in, source.Spec{}, err
	}
	cfg, err := rest.ConfigOf(in.Config)
	if err != nil {
		return in, source.Spec{}, err
	}
	return in, source.Spec{Name: in.EventSourceName, Type: typeOfClass(in.ClassName), Description: in.Description, Config: cfg}, nil
}

// rmqCreateEventSource creates a source.
//
//	@Summary	Create an event source (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string						false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQEventSourceRequest	true	"the source"
//	@Success	200						{object}	RocketMQCreateEventSourceResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"EventBusNotExist, EventSourceAlreadyExist"
//	@Failure	503						{object}	RocketMQError	"ServiceUnavailable"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/source/createEventSource [post]
func (a *api) rmqCreateEventSource(c *gin.Context) {
	in, spec, err := readRMQSource(c)
	if err != nil {
		a.writeRocketMQError(c, rmqSourceErr(err))
		return
	}
	s, err := a.s.Sources.Create(c.Request.Context(), web.AccountOf(c), in.EventBusName, spec)
	if err != nil {
		a.writeRocketMQError(c, rmqSourceErr(err))
		return
	}
	c.JSON(http.StatusOK, RocketMQCreateEventSourceResponse{RequestID: requestIDOf(c), EventSourceName: s.Name()})
}

// rmqUpdateEventSource replaces a source's description and config, and enables or disables it.
//
//	@Summary		Update an event source (RocketMQ EventBridge API)
//	@Description	The className must stay the source's type; a secret value sent as "***" keeps the stored one.
//	@Tags			rocketmq
//	@Accept			json
//	@Produce		json
//	@Param			resourceOwnerAccountId	header		string						false	"account (default: the caller's own)"
//	@Param			body					body		RocketMQEventSourceRequest	true	"the source"
//	@Success		200						{object}	RocketMQResponse
//	@Failure		400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure		409						{object}	RocketMQError	"EventBusNotExist, EventSourceNotExist"
//	@Failure		503						{object}	RocketMQError	"ServiceUnavailable"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/source/updateEventSource [post]
func (a *api) rmqUpdateEventSource(c *gin.Context) {
	in, spec, err := readRMQSource(c)
	if err == nil && in.Status != nil && *in.Status != 0 && *in.Status != 1 {
		err = errRMQInvalid.WithField("status").With("status must be 1 (enabled) or 0 (disabled), not %d", *in.Status)
	}
	if err != nil {
		a.writeRocketMQError(c, rmqSourceErr(err))
		return
	}
	ctx := c.Request.Context()
	cur, err := a.s.Sources.Get(ctx, web.AccountOf(c), in.EventBusName, in.EventSourceName)
	if err != nil {
		a.writeRocketMQError(c, rmqSourceErr(err))
		return
	}
	if in.ClassName == "" {
		spec.Type = cur.Type()
	}
	if _, _, err := a.s.Sources.Put(ctx, web.AccountOf(c), in.EventBusName, spec); err != nil {
		a.writeRocketMQError(c, rmqSourceErr(err))
		return
	}
	if in.Status != nil {
		change := a.s.Sources.Disable
		if *in.Status == 1 {
			change = a.s.Sources.Enable
		}
		if _, err := change(ctx, web.AccountOf(c), in.EventBusName, in.EventSourceName); err != nil {
			a.writeRocketMQError(c, rmqSourceErr(err))
			return
		}
	}
	c.JSON(http.StatusOK, RocketMQResponse{RequestID: requestIDOf(c)})
}

func readRMQSourceName(c *gin.Context) (RocketMQEventSourceName, error) {
	var in RocketMQEventSourceName
	if err := decodeRocketMQ(c, &in); err != nil {
		return in, err
	}
	if err := required("eventBusName", in.EventBusName); err != nil {
		return in, err
	}
	return in, required("eventSourceName", in.EventSourceName)
}

// rmqDeleteEventSource deletes a source.
//
//	@Summary	Delete an event source (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string					false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQEventSourceName	true	"the source"
//	@Success	200						{object}	RocketMQResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"EventBusNotExist, EventSourceNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/source/deleteEventSource [post]
func (a *api) rmqDeleteEventSource(c *gin.Context) {
	in, err := readRMQSourceName(c)
	if err == nil {
		err = a.s.Sources.Delete(c.Request.Context(), web.AccountOf(c), in.EventBusName, in.EventSourceName)
	}
	if err != nil {
		a.writeRocketMQError(c, rmqSourceErr(err))
		return
	}
	c.JSON(http.StatusOK, RocketMQResponse{RequestID: requestIDOf(c)})
}

// rmqGetEventSource answers one source.
//
//	@Summary	Get an event source (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string					false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQEventSourceName	true	"the source"
//	@Success	200						{object}	RocketMQGetEventSourceResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"EventBusNotExist, EventSourceNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/source/getEventSource [post]
func (a *api) rmqGetEventSource(c *gin.Context) {
	in, err := readRMQSourceName(c)
	if err != nil {
		a.writeRocketMQError(c, err)
		return
	}
	s, err := a.s.Sources.Get(c.Request.Context(), web.AccountOf(c), in.EventBusName, in.EventSourceName)
	if err != nil {
		a.writeRocketMQError(c, rmqSourceErr(err))
		return
	}
	c.JSON(http.StatusOK, RocketMQGetEventSourceResponse{RequestID: requestIDOf(c), RocketMQEventSource: a.rmqSourceOf(c, in.EventBusName, s)})
}

// rmqListEventSources answers a page of a bus's sources, ordered by name.
//
//	@Summary	List the event sources of a bus (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string							false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQListEventSourcesRequest	true	"the page"
//	@Success	200						{object}	RocketMQListEventSourcesResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"EventBusNotExist, LimitSizeInvalid, NextTokenInvalid"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/source/listEventSources [post]
func (a *api) rmqListEventSources(c *gin.Context, in *RocketMQListEventSourcesRequest) (any, error) {
	if err := required("eventBusName", in.EventBusName); err != nil {
		return nil, err
	}
	offset, limit, err := rmqPage(in.NextToken, in.MaxResults)
	if err != nil {
		return nil, err
	}
	all, err := domain.AllPages(c.Request.Context(), func(ctx context.Context, p domain.Page) ([]*source.Source, string, error) {
		return a.s.Sources.List(ctx, web.AccountOf(c), in.EventBusName, p)
	})
	if err != nil {
		return nil, rmqSourceErr(err)
	}
	if in.EventSourceType != "" {
		want := typeOfClass(in.EventSourceType)
		kept := all[:0]
		for _, s := range all {
			if s.Type() == want {
				kept = append(kept, s)
			}
		}
		all = kept
	}
	page, next := pageOfAll(all, offset, limit)
	out := RocketMQListEventSourcesResponse{RequestID: requestIDOf(c), EventSources: make([]RocketMQEventSource, 0, len(page)),
		NextToken: next, Total: len(all), MaxResults: limit}
	for _, s := range page {
		out.EventSources = append(out.EventSources, a.rmqSourceOf(c, in.EventBusName, s))
	}
	return out, nil
}
