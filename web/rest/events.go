package rest

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/web"
)

// PutEventsResponse tells, in request order, which events were stored.
type PutEventsResponse struct {
	FailedEntryCount int                        `json:"failedEntryCount" example:"0"`
	Entries          []web.PutEventsResultEntry `json:"entries"`
} //@name PutEventsResponse

// putEvents stores CloudEvents on a bus.
//
//	@Summary		Put events on a bus
//	@Description	Takes CloudEvents in the HTTP binding's binary mode (ce-* headers, the body is the data), structured
//	@Description	mode (application/cloudevents+json) or batch mode (application/cloudevents-batch+json: an array).
//	@Description	Each event is validated alone: an invalid one or one over 256 KiB fails with its errorCode
//	@Description	(InvalidEvent, EventTooLarge) while the others are stored. The answer lists the outcome of every
//	@Description	event in request order, with status 200 even when some failed. An event put again with the same
//	@Description	source and id within 2 minutes is stored once and answered with the same eventId and
//	@Description	"duplicate": true. A body over 1 MiB is refused whole (413); a single event that is refused is
//	@Description	answered with its status (400, 413, or 503 with Retry-After when the store did not acknowledge it). An
//	@Description	empty batch is answered with no entries. Every failure: docs/putevents-errors.md.
//	@Tags			events
//	@Accept			application/cloudevents+json
//	@Accept			application/cloudevents-batch+json
//	@Accept			json
//	@Produce		json
//	@Param			X-Account-Id	header		string		false	"account (default: the caller's own)"
//	@Param			bus				path		string		true	"bus name"
//	@Param			ce-specversion	header		string		false	"binary mode: spec version (1.0)"
//	@Param			ce-id			header		string		false	"binary mode: event id"
//	@Param			ce-source		header		string		false	"binary mode: event source"
//	@Param			ce-type			header		string		false	"binary mode: event type"
//	@Param			event			body		web.CloudEvent	true	"a CloudEvent (structured), an array of them (batch), or the data (binary)"
//	@Success		200				{object}	PutEventsResponse
//	@Failure		400				{object}	web.Problem	"InvalidEvent, MalformedRequest"
//	@Failure		404				{object}	web.Problem	"BusNotFound"
//	@Failure		409				{object}	web.Problem	"AccountStorageQuotaExceeded, StorageBudgetExceeded (nothing stored: events wait for targets; put them again later); BusFull, InsufficientStorage for one event"
//	@Failure		413				{object}	web.Problem	"PayloadTooLarge (body over 1 MiB), EventTooLarge"
//	@Failure		429				{object}	web.Problem	"PutEventsRateExceeded (Retry-After)"
//	@Failure		503				{object}	web.Problem	"ServiceUnavailable: not stored; put it again (Retry-After)"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api/v1/buses/{bus}/events [post]
func (a *api) putEvents(c *gin.Context) (int, any, error) {
	events, errs, single, err := web.DecodeEvents(c)
	if err != nil {
		return 0, nil, err
	}
	// Called even with no valid event, so that an unknown bus is a 404 whatever the events.
	entries, failed, err := web.StoreEvents(c, a.log, a.s.Buses, web.AccountOf(c), c.Param("bus"), events, errs)
	if err != nil {
		return 0, nil, err
	}
	if single && errs[0] != nil {
		return 0, nil, errs[0]
	}
	return http.StatusOK, PutEventsResponse{FailedEntryCount: failed, Entries: entries}, nil
}
