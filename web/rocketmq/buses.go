package rocketmq

import (
	"context"
	"github.com/eventbridge-go/eventbridge/web"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
)

// Buses in RocketMQ EventBridge's shapes: dto/bus/CreateEventBusRequest.java, CreateEventBusResponse.java,
// GetEventBusRequest.java, GetEventBusResponse.java, DeleteEventBusRequest.java, ListEventBusesRequest.java,
// ListEventBusesResponse.java and EventBusDTO.java of apache/rocketmq-eventbridge's adapter/api.

// RocketMQCreateEventBusRequest asks to create a bus (with the default retention).
type RocketMQCreateEventBusRequest struct {
	EventBusName string `json:"eventBusName" example:"demo-bus"`
	Description  string `json:"description" example:"a demo bus."`
} //@name RocketMQCreateEventBusRequest

// RocketMQCreateEventBusResponse names the bus created.
type RocketMQCreateEventBusResponse struct {
	RequestID    string `json:"requestId"`
	EventBusName string `json:"eventBusName" example:"demo-bus"`
} //@name RocketMQCreateEventBusResponse

// RocketMQEventBusRequest names a bus (getEventBus, deleteEventBus).
type RocketMQEventBusRequest struct {
	EventBusName string `json:"eventBusName" example:"demo-bus"`
} //@name RocketMQEventBusRequest

// RocketMQGetEventBusResponse is one bus.
type RocketMQGetEventBusResponse struct {
	RequestID    string `json:"requestId"`
	EventBusName string `json:"eventBusName" example:"demo-bus"`
	Description  string `json:"description" example:"a demo bus."`
	// CreateTimestamp is the creation time in milliseconds since the Unix epoch.
	CreateTimestamp int64 `json:"createTimestamp" example:"1700000000000"`
} //@name RocketMQGetEventBusResponse

// RocketMQListEventBusesRequest asks for a page of the account's buses, ordered by name.
type RocketMQListEventBusesRequest struct {
	// NextToken is the decimal offset of the page's first bus; absent for the first page.
	NextToken string `json:"nextToken" example:"50"`
	// MaxResults is the page size, 1 to 100 (0 or absent: 50).
	MaxResults int `json:"maxResults" example:"50"`
} //@name RocketMQListEventBusesRequest

// RocketMQEventBus is a bus in a list.
type RocketMQEventBus struct {
	EventBusName string `json:"eventBusName" example:"demo-bus"`
	Description  string `json:"description" example:"a demo bus."`
} //@name RocketMQEventBus

// RocketMQListEventBusesResponse is one page of buses.
type RocketMQListEventBusesResponse struct {
	RequestID  string             `json:"requestId"`
	EventBuses []RocketMQEventBus `json:"eventBuses"`
	// NextToken asks for the next page; absent on the last page.
	NextToken string `json:"nextToken,omitempty" example:"50"`
	// Total is the number of the account's buses.
	Total      int `json:"total" example:"1"`
	MaxResults int `json:"maxResults" example:"50"`
} //@name RocketMQListEventBusesResponse

// rmqCreateEventBus creates a bus with the default retention.
//
//	@Summary	Create an event bus (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string							false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQCreateEventBusRequest	true	"the bus"
//	@Success	200						{object}	RocketMQCreateEventBusResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"EventBusAlreadyExist, EventBusNameInvalid"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/bus/createEventBus [post]
func (a *api) rmqCreateEventBus(c *gin.Context, in *RocketMQCreateEventBusRequest) (any, error) {
	if err := domain.ValidateName("eventBusName", in.EventBusName); err != nil {
		return nil, recode(errRMQBusNameInvalid, err)
	}
	b, err := a.s.Buses.Create(c.Request.Context(), web.AccountOf(c), in.EventBusName, in.Description, bus.Retention{})
	if err != nil {
		return nil, err
	}
	return RocketMQCreateEventBusResponse{RequestID: requestIDOf(c), EventBusName: b.Name()}, nil
}

// rmqGetEventBus answers one bus.
//
//	@Summary	Get an event bus (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string					false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQEventBusRequest	true	"the bus"
//	@Success	200						{object}	RocketMQGetEventBusResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"EventBusNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/bus/getEventBus [post]
func (a *api) rmqGetEventBus(c *gin.Context, in *RocketMQEventBusRequest) (any, error) {
	if err := required("eventBusName", in.EventBusName); err != nil {
		return nil, err
	}
	b, err := a.s.Buses.Get(c.Request.Context(), web.AccountOf(c), in.EventBusName)
	if err != nil {
		return nil, err
	}
	return RocketMQGetEventBusResponse{
		RequestID: requestIDOf(c), EventBusName: b.Name(), Description: b.Description(),
		CreateTimestamp: b.CreatedAt().UnixMilli(),
	}, nil
}

// rmqDeleteEventBus deletes a bus that has no rules.
//
//	@Summary	Delete an event bus (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string					false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQEventBusRequest	true	"the bus"
//	@Success	200						{object}	RocketMQResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"EventBusNotExist, EventBusRuleNotEmptyForDelete"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/bus/deleteEventBus [post]
func (a *api) rmqDeleteEventBus(c *gin.Context, in *RocketMQEventBusRequest) (any, error) {
	if err := required("eventBusName", in.EventBusName); err != nil {
		return nil, err
	}
	if err := a.s.Buses.Delete(c.Request.Context(), web.AccountOf(c), in.EventBusName); err != nil {
		return nil, err
	}
	return RocketMQResponse{RequestID: requestIDOf(c)}, nil
}

// rmqListEventBuses answers a page of the account's buses, ordered by name.
//
//	@Summary	List event buses (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string							false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQListEventBusesRequest	true	"the page"
//	@Success	200						{object}	RocketMQListEventBusesResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"LimitSizeInvalid, NextTokenInvalid"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/bus/listEventBuses [post]
func (a *api) rmqListEventBuses(c *gin.Context, in *RocketMQListEventBusesRequest) (any, error) {
	offset, limit, err := rmqPage(in.NextToken, in.MaxResults)
	if err != nil {
		return nil, err
	}
	all, err := domain.AllPages(c.Request.Context(), func(ctx context.Context, p domain.Page) ([]*bus.Bus, string, error) {
		return a.s.Buses.List(ctx, web.AccountOf(c), p)
	})
	if err != nil {
		return nil, err
	}
	page, next := pageOfAll(all, offset, limit)
	out := RocketMQListEventBusesResponse{
		RequestID: requestIDOf(c), EventBuses: make([]RocketMQEventBus, 0, len(page)),
		NextToken: next, Total: len(all), MaxResults: limit,
	}
	for _, b := range page {
		out.EventBuses = append(out.EventBuses, RocketMQEventBus{EventBusName: b.Name(), Description: b.Description()})
	}
	return out, nil
}
