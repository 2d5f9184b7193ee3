// Package rocketmq is the dialect of Apache RocketMQ EventBridge clients over the same domain services as /api/v1.
// Where a RocketMQ request carries what a v1 resource does (a target, a connection, a source's config), it is read
// into the v1 form and converted with web/rest's conversions, so both dialects accept exactly the same values.
package rocketmq

// The API of Apache RocketMQ EventBridge clients: its RPC-style endpoints (every call a POST with a JSON body),
// its request and response shapes (lowerCamel keys, a requestId in every answer) and its errors
// ({requestId, code, message} with HTTP 409 and its codes), served by the same domain services as /api/v1, so that
// both views always agree.
//
// Shapes follow apache/rocketmq-eventbridge, adapter/api/src/main/java/org/apache/rocketmq/eventbridge/adapter/api:
// controller/EventBusController.java, EventRuleController.java, EventTargetController.java and
// EventDataController.java for the paths; dto/BaseResponse.java (requestId, code, message) and the dto/bus, dto/rule,
// dto/target and dto/data classes for the fields; EventTypeController.java, ConnectionController.java and
// ApiDestinationController.java with dto/type, dto/connection and dto/apidestination (see rocketmq_eventtypes.go
// and rocketmq_connections.go). Error codes and their HTTP status (409) come from
// domain/src/main/java/org/apache/rocketmq/eventbridge/domain/common/exception/EventBridgeErrorCode.java. Its Spring
// application serializes with Jackson, so keys are the Java field names (lowerCamel); the Gson @SerializedName
// capitals are not used on the wire (the documentation's examples send {"eventBusName": ...}). encoding/json
// matches keys regardless of case, so requests with the capitalized names are read as well.

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/eventbridge-go/eventbridge/web"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/target"
)

// AccountHeader names the account of a RocketMQ EventBridge request (domain.DefaultAccountID when absent),
// as rest.AccountHeader does for /api/v1.
const AccountHeader = "resourceOwnerAccountId"

const requestIDKey = "eventbridge.requestId"

// Codes of RocketMQ EventBridge (EventBridgeErrorCode.java) that the web layer raises itself; every one but
// RequestParameterInvalid is answered with HTTP 409, as RocketMQ EventBridge does.
var (
	// errRMQInvalid is a request that cannot be read or breaks a rule of its fields (HTTP 400).
	errRMQInvalid             = &domain.Error{Kind: domain.KindInvalid, Code: "RequestParameterInvalid"}
	errRMQBusNameInvalid      = &domain.Error{Kind: domain.KindConflict, Code: "EventBusNameInvalid"}
	errRMQRuleNameInvalid     = &domain.Error{Kind: domain.KindConflict, Code: "EventRuleNameInvalid"}
	errRMQTargetClassNotExist = &domain.Error{Kind: domain.KindConflict, Code: "EventTargetClassNotExist"}
	errRMQTargetNotExist      = &domain.Error{Kind: domain.KindConflict, Code: "EventTargetNotExist"}
	errRMQTargetAlreadyExist  = &domain.Error{Kind: domain.KindConflict, Code: "EventTargetAlreadyExist"}
	errRMQLimitSizeInvalid    = &domain.Error{Kind: domain.KindConflict, Code: "LimitSizeInvalid"}
	errRMQNextTokenInvalid    = &domain.Error{Kind: domain.KindConflict, Code: "NextTokenInvalid"}
	errRMQMoreThanOneBus      = &domain.Error{Kind: domain.KindConflict, Code: "PutEventsRequestMoreThanOneEventBus"}
)

// rocketMQCodeOf maps the codes of domain errors to RocketMQ EventBridge's.
var rocketMQCodeOf = map[string]string{
	bus.ErrNotFound.Code:         "EventBusNotExist",
	bus.ErrAlreadyExists.Code:    "EventBusAlreadyExist",
	bus.ErrNotEmpty.Code:         "EventBusRuleNotEmptyForDelete",
	rule.ErrNotFound.Code:        "EventRuleNotExist",
	rule.ErrAlreadyExists.Code:   "EventRuleAlreadyExist",
	target.ErrNotFound.Code:      "EventTargetNotExist",
	target.ErrAlreadyExists.Code: "EventTargetAlreadyExist",

	connection.ErrNotFound.Code:          "ConnectionNotExist",
	connection.ErrAlreadyExists.Code:     "ConnectionAlreadyExist",
	connection.ErrInUse.Code:             "ConnectionBoundApiDestination",
	connection.ErrQuotaExceeded.Code:     "ConnectionCountExceedLimit",
	apidestination.ErrNotFound.Code:      "ApiDestinationNotExist",
	apidestination.ErrAlreadyExists.Code: "ApiDestinationAlreadyExist",
	apidestination.ErrQuotaExceeded.Code: "ApiDestinationCountExceedLimit",
	// apidestination.ErrInUse keeps our code, ApiDestinationInUse: RocketMQ EventBridge has none for it.
}

// api holds what every handler needs.
type api struct {
	log         *slog.Logger
	s           web.Services
	webhookBase string
}

var _ web.NewDialect = New

// New returns the RocketMQ EventBridge dialect over the services s. Its account comes from AccountHeader.
func New(cfg web.Config, s web.Services) web.Dialect {
	a := &api{log: cfg.Logger, s: s, webhookBase: cfg.WebhookBaseURL}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	return web.Dialect{Name: "rocketmq", Account: a.rocketMQAccount, WriteError: a.writeRocketMQError, Operations: a.operations()}
}

// operations is the dialect's operation table: every call a POST, named after RocketMQ EventBridge's action.
func (a *api) operations() []web.Operation {
	op := func(path string, h gin.HandlerFunc) web.Operation {
		_, action, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
		if action == "" { // /putEvents
			action = strings.TrimPrefix(path, "/")
		}
		return web.Operation{Name: "rocketmq." + action, Method: http.MethodPost, Path: path, Handler: h,
			Permission: permissionOf(action), AnyBody: action == "putEvents", Audit: auditOf(action)}
	}
	return []web.Operation{
		op("/bus/createEventBus", call(a, a.rmqCreateEventBus)),
		op("/bus/getEventBus", call(a, a.rmqGetEventBus)),
		op("/bus/deleteEventBus", call(a, a.rmqDeleteEventBus)),
		op("/bus/listEventBuses", call(a, a.rmqListEventBuses)),

		op("/rule/createEventRule", call(a, a.rmqCreateEventRule)),
		op("/rule/getEventRule", call(a, a.rmqGetEventRule)),
		op("/rule/updateEventRule", call(a, a.rmqUpdateEventRule)),
		op("/rule/deleteEventRule", call(a, a.rmqDeleteEventRule)),
		op("/rule/listEventRules", call(a, a.rmqListEventRules)),
		op("/rule/enableEventRule", a.rmqEnableEventRule),
		op("/rule/disableEventRule", a.rmqDisableEventRule),

		op("/target/createEventTargets", a.rmqCreateEventTargets),
		op("/target/updateEventTargets", a.rmqUpdateEventTargets),
		op("/target/deleteEventTargets", a.rmqDeleteEventTargets),
		op("/target/listEventTargets", call(a, a.rmqListEventTargets)),

		op("/type/listEventTypes", call(a, a.rmqListEventTypes)),

		op("/connection/createConnection", call(a, a.rmqCreateConnection)),
		op("/connection/updateConnection", call(a, a.rmqUpdateConnection)),
		op("/connection/deleteConnection", call(a, a.rmqDeleteConnection)),
		op("/connection/getConnection", call(a, a.rmqGetConnection)),
		op("/connection/listConnections", call(a, a.rmqListConnections)),

		op("/api-destination/createApiDestination", call(a, a.rmqCreateAPIDestination)),
		op("/api-destination/updateApiDestination", call(a, a.rmqUpdateAPIDestination)),
		op("/api-destination/getApiDestination", call(a, a.rmqGetAPIDestination)),
		op("/api-destination/deleteApiDestination", call(a, a.rmqDeleteAPIDestination)),
		op("/api-destination/listApiDestinations", call(a, a.rmqListAPIDestinations)),

		op("/source/createEventSource", a.rmqCreateEventSource),
		op("/source/updateEventSource", a.rmqUpdateEventSource),
		op("/source/deleteEventSource", a.rmqDeleteEventSource),
		op("/source/getEventSource", a.rmqGetEventSource),
		op("/source/listEventSources", call(a, a.rmqListEventSources)),

		op("/putEvents", a.rmqPutEvents),
	}
}

// RocketMQError is the answer of a RocketMQ EventBridge call that failed (its BaseResponse with a code).
type RocketMQError struct {
	RequestID string `json:"requestId" example:"0b9f2e64-3c8e-4f43-9d1e-6c8f0e6b2a71"`
	// Code is RocketMQ EventBridge's: EventBusNotExist, EventBusAlreadyExist, EventRuleNotExist,
	// EventRuleAlreadyExist, EventTargetNotExist, EventTargetAlreadyExist, EventTargetClassNotExist,
	// RequestParameterInvalid, ...
	Code    string `json:"code" example:"EventBusNotExist"`
	Message string `json:"message" example:"bus \"orders\" does not exist"`
} //@name RocketMQError

// RocketMQResponse is the answer of a RocketMQ EventBridge call that only reports success.
type RocketMQResponse struct {
	RequestID string `json:"requestId" example:"0b9f2e64-3c8e-4f43-9d1e-6c8f0e6b2a71"`
} //@name RocketMQResponse

// auditOf is the audit policy of an action: every call is audited but putEvents, which metrics count.
func auditOf(action string) web.AuditPolicy {
	if action == "putEvents" {
		return web.AuditNever
	}
	return web.AuditDefault
}

// permissionOf is the permission of a RocketMQ EventBridge action: putEvents puts events; get, list and
// listEventTypes read; every other action (create, update, delete, enable, disable) writes.
func permissionOf(action string) access.Permission {
	switch {
	case action == "putEvents":
		return access.PutEvents
	case strings.HasPrefix(action, "get"), strings.HasPrefix(action, "list"):
		return access.Read
	}
	return access.Write
}

// rocketMQAccount returns the account the request names in AccountHeader ("" when absent: the caller's own); an
// invalid account is RequestParameterInvalid.
func (a *api) rocketMQAccount(c *gin.Context) (string, error) {
	id := c.GetHeader(AccountHeader)
	if id == "" {
		return "", nil
	}
	if err := domain.ValidateAccountID(id); err != nil {
		return "", errRMQInvalid.With("%s %q must be 1 to 32 characters of a-z and 0-9", AccountHeader, id)
	}
	return id, nil
}

// requestIDOf returns the requestId of the request, given on first use: every answer of the dialect has one.
func requestIDOf(c *gin.Context) string {
	if id := c.GetString(requestIDKey); id != "" {
		return id
	}
	id := domain.NewUUID()
	c.Set(requestIDKey, id)
	return id
}

// rocketMQErrorOf turns any error into the status and the answer of a failed RocketMQ EventBridge call:
// malformed and invalid input is 400 RequestParameterInvalid; unknown and conflicting resources are 409 with
// RocketMQ EventBridge's codes (codes it has no equivalent for keep ours); a body too large is 413; an error that
// is not a domain error, or is internal, is a logged 500 InternalError whose details are never returned.
func (a *api) rocketMQErrorOf(c *gin.Context, err error) (int, RocketMQError) {
	out := RocketMQError{RequestID: requestIDOf(c)}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		err = domain.ErrTooLarge.With("the request body is larger than %d bytes", mbe.Limit)
	}
	de, ok := domain.As(err)
	if !ok || de.Kind == domain.KindInternal {
		a.log.Error("internal error", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
		out.Code, out.Message = domain.ErrInternal.Code, "an internal error occurred; it has been logged"
		return http.StatusInternalServerError, out
	}
	out.Code, out.Message = de.Code, web.MessageOf(de)
	if code, ok := rocketMQCodeOf[de.Code]; ok {
		out.Code = code
	}
	switch de.Kind {
	case domain.KindInvalid:
		out.Code = errRMQInvalid.Code
		return http.StatusBadRequest, out
	case domain.KindNotFound, domain.KindConflict, domain.KindLimitExceeded:
		return http.StatusConflict, out
	}
	return web.StatusOf(de.Kind), out
}

// writeRocketMQError answers err as a RocketMQ EventBridge error and stops the handler chain.
func (a *api) writeRocketMQError(c *gin.Context, err error) {
	status, out := a.rocketMQErrorOf(c, err)
	web.SetErrorCode(c, out.Code)
	web.SetRetryAfter(c, err)
	c.AbortWithStatusJSON(status, out)
}

// call is the shape of the RocketMQ EventBridge operations that read a JSON body: the body read into a new In and
// checked (read), the call do, and its answer with 200, or the error in the dialect's shape (writeRocketMQError).
func call[In any](a *api, do func(c *gin.Context, in *In) (any, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		in, err := read[In](c)
		if err != nil {
			a.writeRocketMQError(c, err)
			return
		}
		out, err := do(c, in)
		if err != nil {
			a.writeRocketMQError(c, err)
			return
		}
		if p, ok := out.(pure); ok {
			c.PureJSON(http.StatusOK, p.v)
			return
		}
		c.JSON(http.StatusOK, out)
	}
}

// pure is an answer that call writes without escaping <, > and & (c.PureJSON).
type pure struct{ v any }

// read decodes the request body into a new In (decodeRocketMQ) and checks it with its validate method when it has
// one: what this API requires beyond the domain's rules (names present, names RocketMQ EventBridge accepts).
func read[In any](c *gin.Context) (*In, error) {
	in := new(In)
	if err := decodeRocketMQ(c, in); err != nil {
		return nil, err
	}
	if v, ok := any(in).(interface{ validate() error }); ok {
		if err := v.validate(); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// decodeRocketMQ reads the request body (at most web.MaxBodySize bytes) as one JSON value into dst. Unlike decodeJSON
// it ignores unknown fields, as RocketMQ EventBridge does; its errors name the problem and, when known, the field.
func decodeRocketMQ(c *gin.Context, dst any) error {
	body, err := web.ReadBody(c, web.MaxBodySize)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return web.Malformed("", "the request body is empty; a JSON object is required")
	}
	if r := rmqResource(body); r != "" {
		web.SetAuditResource(c, r) // else the path's: a list names no resource
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		return web.JSONError(err, body, reflect.TypeOf(dst))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return web.Malformed("", "the request body holds more than one JSON value")
	}
	return nil
}

// rmqResource is the resource a request's body names, for its audit entry: "buses/<bus>", with "/rules/<rule>" or
// "/sources/<source>", or "connections/<connection>", "api-destinations/<destination>"; "" when it names none.
func rmqResource(body []byte) string {
	var names struct {
		Bus         string `json:"eventBusName"`
		Rule        string `json:"eventRuleName"`
		Source      string `json:"eventSourceName"`
		Connection  string `json:"connectionName"`
		Destination string `json:"apiDestinationName"`
	}
	_ = json.Unmarshal(body, &names) // a body that is no object names nothing; its error is answered elsewhere
	var parts []string
	add := func(kind, name string) {
		if name != "" {
			parts = append(parts, kind, name)
		}
	}
	switch {
	case names.Destination != "":
		add("api-destinations", names.Destination)
	case names.Connection != "":
		add("connections", names.Connection)
	default:
		add("buses", names.Bus)
		add("rules", names.Rule)
		add("sources", names.Source)
	}
	return strings.Join(parts, "/")
}

// required is RequestParameterInvalid naming field when value is empty.
func required(field, value string) error {
	if value == "" {
		return errRMQInvalid.WithField(field).With("%s is required", field)
	}
	return nil
}

// Paging of RocketMQ EventBridge lists: nextToken is the decimal offset of the page's first item.
const (
	rmqDefaultMaxResults = domain.DefaultPageLimit
	rmqMaxMaxResults     = 100
)

// rmqPage reads nextToken and maxResults (0 means rmqDefaultMaxResults) into an offset and a limit.
func rmqPage(nextToken string, maxResults int) (offset, limit int, err error) {
	limit = maxResults
	if limit == 0 {
		limit = rmqDefaultMaxResults
	}
	if limit < 1 || limit > rmqMaxMaxResults {
		return 0, 0, errRMQLimitSizeInvalid.With("maxResults must be between 1 and %d, not %d", rmqMaxMaxResults, maxResults)
	}
	if nextToken != "" {
		n, err := strconv.Atoi(nextToken)
		if err != nil || n < 0 {
			return 0, 0, errRMQNextTokenInvalid.With("nextToken %q is not a decimal offset such as \"50\"", nextToken)
		}
		offset = n
	}
	return offset, limit, nil
}

// pageOfAll returns the page of all that starts at offset with at most limit items, and the nextToken of the
// page after it ("" when it is the last).
func pageOfAll[T any](all []T, offset, limit int) ([]T, string) {
	if offset >= len(all) {
		return []T{}, ""
	}
	end := min(offset+limit, len(all))
	next := ""
	if end < len(all) {
		next = strconv.Itoa(end)
	}
	return all[offset:end], next
}

// renameField rewrites our field names in the message of a domain error to the RocketMQ EventBridge API's.
func renameField(err error, ours, theirs string) error {
	de, ok := domain.As(err)
	if !ok || (!strings.Contains(de.Message, ours) && !strings.HasPrefix(de.Field, ours)) {
		return err
	}
	c := *de
	c.Message = strings.ReplaceAll(c.Message, ours, theirs)
	if strings.HasPrefix(c.Field, ours) {
		c.Field = theirs + strings.TrimPrefix(c.Field, ours)
	}
	return &c
}

// recode returns the domain error err with the code (and kind) of sentinel, keeping its message and field.
func recode(sentinel *domain.Error, err error) error {
	de, ok := domain.As(err)
	if !ok {
		return err
	}
	c := *sentinel
	c.Field, c.Message = de.Field, web.MessageOf(de)
	return &c
}
