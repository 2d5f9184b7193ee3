package rocketmq

import (
	"github.com/eventbridge-go/eventbridge/web"
	"net/http"
	"sort"
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/gin-gonic/gin"
)

// PutEvents in RocketMQ EventBridge's shape: controller/EventDataController.java and dto/data/PutEventsResponse.java
// of apache/rocketmq-eventbridge's adapter/api, with domain/model/data/PutEventsResponseEntry.java for the entries.

// rmqBusExtensions are the CloudEvents extensions that name the bus of an event, in order of preference:
// eventbusname, and aliyuneventbusname, which RocketMQ EventBridge's quick start (docs/cn/RocketMQEventBridgeQuickStart.md)
// sends.
var rmqBusExtensions = []string{"eventbusname", "aliyuneventbusname"}

// RocketMQPutEventsResponse tells, in request order, which events were stored.
type RocketMQPutEventsResponse struct {
	RequestID        string                     `json:"requestId"`
	FailedEntryCount int                        `json:"failedEntryCount" example:"0"`
	EntryList        []web.PutEventsResultEntry `json:"entryList"`
} //@name RocketMQPutEventsResponse

// rmqBusOf returns the bus an event names in its extensions ("" when none does).
func rmqBusOf(e *event.Event) string {
	ext := e.Extensions()
	for _, k := range rmqBusExtensions {
		if s, ok := ext[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// rmqPutEvents stores CloudEvents on the bus that their eventbusname extension names.
//
//	@Summary		Put events (RocketMQ EventBridge API)
//	@Description	Takes CloudEvents in binary mode (ce-* headers, the body is the data; the bus in ce-eventbusname),
//	@Description	structured mode (application/cloudevents+json) or batch mode (application/cloudevents-batch+json: an
//	@Description	array). Each event names its bus with the extension eventbusname (aliyuneventbusname is read too); all
//	@Description	the events of a request must name the same bus. Each event is validated alone: an invalid one, one
//	@Description	without eventbusname or one over 256 KiB fails with its errorCode while the others are stored. The
//	@Description	answer lists the outcome of every event in request order, with status 200 even when some failed; a
//	@Description	single invalid event in binary or structured mode is answered 400.
//	@Tags			rocketmq
//	@Accept			application/cloudevents+json
//	@Accept			application/cloudevents-batch+json
//	@Accept			json
//	@Produce		json
//	@Param			resourceOwnerAccountId	header		string		false	"account (default: the caller's own)"
//	@Param			ce-specversion			header		string		false	"binary mode: spec version (1.0)"
//	@Param			ce-id					header		string		false	"binary mode: event id"
//	@Param			ce-source				header		string		false	"binary mode: event source"
//	@Param			ce-type					header		string		false	"binary mode: event type"
//	@Param			ce-eventbusname			header		string		false	"binary mode: the bus"
//	@Param			event					body		web.CloudEvent	true	"a CloudEvent with eventbusname (structured), an array of them (batch), or the data (binary)"
//	@Success		200						{object}	RocketMQPutEventsResponse
//	@Failure		400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure		409						{object}	RocketMQError	"EventBusNotExist, PutEventsRequestMoreThanOneEventBus"
//	@Failure		413						{object}	RocketMQError	"PayloadTooLarge (body over 1 MiB), EventTooLarge"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/putEvents [post]
func (a *api) rmqPutEvents(c *gin.Context) {
	events, errs, single, err := web.DecodeEvents(c)
	if err != nil {
		a.writeRocketMQError(c, err)
		return
	}
	buses := map[string]bool{}
	for i, e := range events {
		if errs[i] != nil {
			continue
		}
		name := rmqBusOf(e)
		if name == "" {
			errs[i] = errRMQInvalid.WithField("eventbusname").With("the event has no eventbusname extension naming its bus")
			continue
		}
		buses[name] = true
	}
	if len(buses) > 1 {
		names := make([]string, 0, len(buses))
		for n := range buses {
			names = append(names, n)
		}
		sort.Strings(names)
		a.writeRocketMQError(c, errRMQMoreThanOneBus.With("the request puts events on more than one event bus: %s", strings.Join(names, ", ")))
		return
	}
	if single && errs[0] != nil {
		a.writeRocketMQError(c, errs[0])
		return
	}
	out := RocketMQPutEventsResponse{RequestID: requestIDOf(c), EntryList: make([]web.PutEventsResultEntry, len(events))}
	if len(buses) == 0 { // every entry failed validation: nothing to store, no bus to check
		for i, err := range errs {
			out.EntryList[i] = web.FailedEntry(c, a.log, err)
		}
		out.FailedEntryCount = len(events)
		c.JSON(http.StatusOK, out)
		return
	}
	var busName string
	for n := range buses {
		busName = n
	}
	out.EntryList, out.FailedEntryCount, err = web.StoreEvents(c, a.log, a.s.Buses, web.AccountOf(c), busName, events, errs)
	if err != nil {
		a.writeRocketMQError(c, err)
		return
	}
	if single && errs[0] != nil { // the store refused it, or could not store it
		a.writeRocketMQError(c, errs[0])
		return
	}
	c.JSON(http.StatusOK, out)
}
