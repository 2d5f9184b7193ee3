package rest

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/web"
)

// Codes of the webhook's refusals.
const (
	// CodeWebhookRefused: the method, the client address or the referer is not allowed (403).
	CodeWebhookRefused = "WebhookRefused"
	// CodeInvalidSignature: the request's signature is missing or does not match (401).
	CodeInvalidSignature = "InvalidSignature"
)

// WebhookAnswer is the answer of a webhook request that was stored.
type WebhookAnswer struct {
	// EventID is the id of the CloudEvent the request became.
	EventID string `json:"eventId" example:"5f0c8e0e-3c3b-4b7e-9f57-0a4a3f8b8c11"`
} //@name WebhookAnswer

// WebhookMethods are the methods the webhooks are routed on; the source's http.methods allows some of them (403
// for the others). Other methods are answered 405.
var WebhookMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// webhookByQuery receives a request for the http source whose token is in the query (RocketMQ EventBridge's path).
//
//	@Summary		Send a request to a webhook source (RocketMQ EventBridge's path)
//	@Description	GET, POST, PUT, PATCH and DELETE are routed; the source's http.methods allows some. Checks, in order: unknown token or
//	@Description	disabled source (404, no hint), method (403), client IP (403), referer (403), body over 256 KiB
//	@Description	(413), signature (401). The request becomes a CloudEvent of type eventbridge:Events:HTTPEvent,
//	@Description	answered once stored.
//	@Tags			webhooks
//	@Accept			json
//	@Produce		json
//	@Param			token	query		string	true	"the source's webhook token"
//	@Success		200		{object}	WebhookAnswer
//	@Failure		401		{object}	web.Problem	"InvalidSignature"
//	@Failure		403		{object}	web.Problem	"WebhookRefused: method, client address or referer"
//	@Failure		404		{object}	web.Problem	"NotFound"
//	@Failure		409		{object}	web.Problem	"AccountStorageQuotaExceeded, StorageBudgetExceeded, BusFull, InsufficientStorage: not stored; send it again later"
//	@Failure		413		{object}	web.Problem	"PayloadTooLarge"
//	@Failure		429		{object}	web.Problem	"PutEventsRateExceeded (Retry-After)"
//	@Failure		503		{object}	web.Problem	"ServiceUnavailable: not stored; send it again"
//	@Router			/webhook/putEvents [get]
//	@Router			/webhook/putEvents [post]
//	@Router			/webhook/putEvents [put]
//	@Router			/webhook/putEvents [patch]
//	@Router			/webhook/putEvents [delete]
func (a *api) webhookByQuery(c *gin.Context) {
	a.webhook(c, c.Query(source.TokenParam))
}

// webhookByPath receives a request for the http source whose token is in the path.
//
//	@Summary		Send a request to a webhook source
//	@Description	As /webhook/putEvents, with the token in the path.
//	@Tags			webhooks
//	@Accept			json
//	@Produce		json
//	@Param			token	path		string	true	"the source's webhook token"
//	@Success		200		{object}	WebhookAnswer
//	@Failure		401		{object}	web.Problem	"InvalidSignature"
//	@Failure		403		{object}	web.Problem	"WebhookRefused: method, client address or referer"
//	@Failure		404		{object}	web.Problem	"NotFound"
//	@Failure		409		{object}	web.Problem	"AccountStorageQuotaExceeded, StorageBudgetExceeded, BusFull, InsufficientStorage: not stored; send it again later"
//	@Failure		413		{object}	web.Problem	"PayloadTooLarge"
//	@Failure		429		{object}	web.Problem	"PutEventsRateExceeded (Retry-After)"
//	@Failure		503		{object}	web.Problem	"ServiceUnavailable: not stored; send it again"
//	@Router			/api/v1/webhooks/{token} [get]
//	@Router			/api/v1/webhooks/{token} [post]
//	@Router			/api/v1/webhooks/{token} [put]
//	@Router			/api/v1/webhooks/{token} [patch]
//	@Router			/api/v1/webhooks/{token} [delete]
func (a *api) webhookByPath(c *gin.Context) {
	a.webhook(c, c.Param("token"))
}

func (a *api) webhook(c *gin.Context, token string) {
	if a.s.Sources == nil {
		web.WriteProblem(c, web.NewProblem(http.StatusNotFound, source.ErrWebhookNotFound.Code, "", "not found"))
		return
	}
	ctx := c.Request.Context()
	w, err := a.s.Sources.ByToken(ctx, token)
	if errors.Is(err, source.ErrWebhookNotFound) {
		web.WriteProblem(c, web.NewProblem(http.StatusNotFound, source.ErrWebhookNotFound.Code, "", "not found"))
		return
	}
	if err != nil {
		a.writeError(c, err)
		return
	}
	req := source.Request{
		Method: c.Request.Method, ClientIP: web.ClientIP(c), Header: c.Request.Header,
		Path: c.Request.URL.Path, Query: c.Request.URL.Query(),
	}
	if err := w.Admit(req); err != nil {
		a.writeRefusal(c, err)
		return
	}
	body, err := web.ReadBody(c, source.MaxWebhookBody)
	if err != nil {
		a.writeError(c, err)
		return
	}
	req.Body = body
	id, duplicate, err := a.s.Sources.Receive(ctx, w, req)
	if err != nil {
		a.writeRefusal(c, err)
		return
	}
	outcome := "stored"
	if duplicate {
		outcome = "duplicate"
	}
	web.CountWebhook(c, w.Source.AccountID(), w.Bus.Name(), w.Source.Name(), outcome)
	c.JSON(http.StatusOK, WebhookAnswer{EventID: id})
}

// writeRefusal answers a refusal of a webhook check: 401 for a signature, 403 for the rest; any other error as
// usual.
func (a *api) writeRefusal(c *gin.Context, err error) {
	var r *source.Refusal
	if !errors.As(err, &r) {
		a.writeError(c, err)
		return
	}
	if r.Reason == source.RefusedSignature {
		web.WriteProblem(c, web.NewProblem(http.StatusUnauthorized, CodeInvalidSignature, "", r.Message))
		return
	}
	web.WriteProblem(c, web.NewProblem(http.StatusForbidden, CodeWebhookRefused, "", r.Message))
}
