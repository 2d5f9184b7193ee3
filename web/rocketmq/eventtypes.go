package rocketmq

import (
	"context"
	"encoding/json"
	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/web/rest"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/eventtype"
)

// Event types in RocketMQ EventBridge's shapes: controller/EventTypeController.java and dto/type/
// ListEventTypesRequest.java, ListEventTypesResponse.java and EventTypeDTO.java of apache/rocketmq-eventbridge's
// adapter/api.
//
// RocketMQ EventBridge declares event types on its event sources, and lists them by eventBusName and
// eventSourceName, both optional. We record the (source, type) pairs seen on each bus, so:
//   - eventBusName, when given, lists that bus's types (EventBusNotExist when it does not exist); when absent, the
//     types of every bus of the account, ordered by bus, then source, then type.
//   - eventSourceName filters on the CloudEvents source attribute (we have no event source resources; the source
//     attribute is what RocketMQ EventBridge's event sources stamp on their events).
//   - eventTypeName is the CloudEvents type; gmtCreate and gmtModify are when the type was first and last seen
//     (RFC 3339 text, as Jackson writes a java.util.Date with Spring Boot's defaults); description is empty.
//   - count and schema (a JSON Schema inferred from the data) are ours, as /api/v1 answers them.

// RocketMQListEventTypesRequest asks for a page of event types.
type RocketMQListEventTypesRequest struct {
	// EventBusName selects one bus; absent: every bus of the account.
	EventBusName string `json:"eventBusName" example:"demo-bus"`
	// EventSourceName keeps the types whose CloudEvents source is it; absent: every source.
	EventSourceName string `json:"eventSourceName" example:"shop/web"`
	// NextToken is the decimal offset of the page's first type; absent for the first page.
	NextToken string `json:"nextToken" example:"50"`
	// MaxResults is the page size, 1 to 100 (0 or absent: 50).
	MaxResults int `json:"maxResults" example:"50"`
} //@name RocketMQListEventTypesRequest

// RocketMQEventType is a (source, type) pair seen on a bus (RocketMQ EventBridge's EventTypeDTO).
type RocketMQEventType struct {
	EventBusName    string `json:"eventBusName" example:"demo-bus"`
	EventSourceName string `json:"eventSourceName" example:"shop/web"`
	EventTypeName   string `json:"eventTypeName" example:"order.created"`
	Description     string `json:"description"`
	// GmtCreate is when the type was first seen.
	GmtCreate time.Time `json:"gmtCreate"`
	// GmtModify is when the type was last seen.
	GmtModify time.Time `json:"gmtModify"`
	// Count is ours: the number of events of the type seen.
	Count int64 `json:"count" example:"1042"`
	// Schema is ours: a JSON Schema (2020-12) inferred from the data; absent when no sample had JSON data.
	Schema json.RawMessage `json:"schema,omitempty" swaggertype:"object"`
} //@name RocketMQEventType

// RocketMQListEventTypesResponse is one page of event types.
type RocketMQListEventTypesResponse struct {
	RequestID  string              `json:"requestId"`
	EventTypes []RocketMQEventType `json:"eventTypes"`
	NextToken  string              `json:"nextToken,omitempty" example:"50"`
	// Total is the number of types that match the request.
	Total      int `json:"total" example:"1"`
	MaxResults int `json:"maxResults" example:"50"`
} //@name RocketMQListEventTypesResponse

// rmqListEventTypes answers a page of the event types seen on one bus or all buses of the account.
//
//	@Summary		List event types (RocketMQ EventBridge API)
//	@Description	The (source, type) pairs seen on a bus (eventBusName) or on every bus of the account, optionally of one
//	@Description	CloudEvents source (eventSourceName); recorded from the events put, written every few seconds.
//	@Tags			rocketmq
//	@Accept			json
//	@Produce		json
//	@Param			resourceOwnerAccountId	header		string							false	"account (default: the caller's own)"
//	@Param			body					body		RocketMQListEventTypesRequest	true	"the page"
//	@Success		200						{object}	RocketMQListEventTypesResponse
//	@Failure		400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure		409						{object}	RocketMQError	"EventBusNotExist, LimitSizeInvalid, NextTokenInvalid"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/type/listEventTypes [post]
func (a *api) rmqListEventTypes(c *gin.Context, in *RocketMQListEventTypesRequest) (any, error) {
	offset, limit, err := rmqPage(in.NextToken, in.MaxResults)
	if err != nil {
		return nil, err
	}
	ctx := c.Request.Context()
	busNames := []string{in.EventBusName}
	if in.EventBusName == "" {
		buses, err := domain.AllPages(ctx, func(ctx context.Context, p domain.Page) ([]*bus.Bus, string, error) {
			return a.s.Buses.List(ctx, web.AccountOf(c), p)
		})
		if err != nil {
			return nil, err
		}
		busNames = busNames[:0]
		for _, b := range buses {
			busNames = append(busNames, b.Name())
		}
	}
	var all []RocketMQEventType
	for _, name := range busNames {
		ets, err := domain.AllPages(ctx, func(ctx context.Context, p domain.Page) ([]*eventtype.EventType, string, error) {
			return a.s.EventTypes.List(ctx, web.AccountOf(c), name, p)
		})
		if err != nil {
			return nil, err
		}
		for _, et := range ets {
			if in.EventSourceName != "" && et.Source != in.EventSourceName {
				continue
			}
			v := rest.EventTypeOf(et)
			all = append(all, RocketMQEventType{EventBusName: name, EventSourceName: v.Source, EventTypeName: v.Type,
				GmtCreate: v.FirstSeen, GmtModify: v.LastSeen, Count: v.Count, Schema: v.Schema})
		}
	}
	page, next := pageOfAll(all, offset, limit)
	return RocketMQListEventTypesResponse{RequestID: requestIDOf(c), EventTypes: page, NextToken: next,
		Total: len(all), MaxResults: limit}, nil
}
