package rest

import (
	"encoding/json"
	"github.com/eventbridge-go/eventbridge/web"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain/eventtype"
)

// EventType is a (source, type) pair seen on a bus, with a JSON Schema inferred from its events' data.
type EventType struct {
	Source    string    `json:"source" example:"shop/web"`
	Type      string    `json:"type" example:"order.created"`
	FirstSeen time.Time `json:"firstSeen"`
	LastSeen  time.Time `json:"lastSeen"`
	Count     int64     `json:"count" example:"1042"`
	// Schema is a JSON Schema (2020-12) of the data, inferred from samples; absent when no sample had JSON data.
	Schema json.RawMessage `json:"schema,omitempty" swaggertype:"object"`
	// SchemaVersion counts the schemas the type had: 1 for the first, one more each time the inferred schema
	// changed; SchemaSince is when the current one was first seen (absent for the first).
	SchemaVersion int        `json:"schemaVersion" example:"2"`
	SchemaSince   *time.Time `json:"schemaSince,omitempty"`
	// PreviousSchemas are the schemas it had before, oldest first (at most 20).
	PreviousSchemas []EventTypeSchema `json:"previousSchemas,omitempty"`
} //@name EventType

// EventTypeSchema is a schema an event type had, with the first and last time events of the type were seen while
// it was the type's schema.
type EventTypeSchema struct {
	Version   int             `json:"version" example:"1"`
	Schema    json.RawMessage `json:"schema,omitempty" swaggertype:"object"`
	FirstSeen time.Time       `json:"firstSeen"`
	LastSeen  time.Time       `json:"lastSeen"`
} //@name EventTypeSchema

// EventTypeList is one page of a bus's event types, ordered by source then type.
type EventTypeList struct {
	EventTypes []EventType `json:"eventTypes"`
	// NextToken asks for the next page; absent on the last page.
	NextToken string `json:"nextToken,omitempty"`
} //@name EventTypeList

// EventTypeOf is the answer about an event type.
func EventTypeOf(et *eventtype.EventType) EventType {
	out := EventType{Source: et.Source, Type: et.Type, FirstSeen: et.FirstSeen, LastSeen: et.LastSeen, Count: et.Count,
		Schema: schemaJSON(et.Schema), SchemaVersion: max(et.SchemaVersion, 1)}
	if !et.SchemaSince.IsZero() {
		since := et.SchemaSince
		out.SchemaSince = &since
	}
	for _, v := range et.Previous {
		out.PreviousSchemas = append(out.PreviousSchemas, EventTypeSchema{Version: v.Version, Schema: schemaJSON(v.Schema),
			FirstSeen: v.FirstSeen, LastSeen: v.LastSeen})
	}
	return out
}

// schemaJSON is a schema's JSON (nil for none).
func schemaJSON(s *eventtype.Schema) json.RawMessage {
	if s == nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	return b
}

// listEventTypes answers a page of the event types seen on a bus: recorded from the events its router routes
// (whatever way they came in: PutEvents, webhooks, sources), written every few seconds (not at once).
//
//	@Summary	List the event types seen on a bus
//	@Tags		buses
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		bus				path		string	true	"bus name"
//	@Param		limit			query		int		false	"page size, 1 to 500 (default 50)"
//	@Param		nextToken		query		string	false	"token of the next page from the previous answer"
//	@Success	200				{object}	EventTypeList
//	@Failure	400				{object}	web.Problem
//	@Failure	404				{object}	web.Problem	"BusNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/buses/{bus}/event-types [get]
func (a *api) listEventTypes(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	ets, next, err := a.s.EventTypes.List(c.Request.Context(), web.AccountOf(c), c.Param("bus"), page)
	if err != nil {
		return 0, nil, err
	}
	out := EventTypeList{EventTypes: make([]EventType, 0, len(ets)), NextToken: next}
	for _, et := range ets {
		out.EventTypes = append(out.EventTypes, EventTypeOf(et))
	}
	return http.StatusOK, out, nil
}
