// Package rest is the control plane's own API dialect, /api/v1: resources in JSON (camelCase), RFC 9457 problem
// documents for errors, the account in the X-Account-Id header. Its handlers translate requests into calls of the
// domain services (web.Services) and domain errors into problems (web.ProblemOf); they hold no business rule.
// Operations declares every operation of the dialect once; web.NewRouter builds the routes from it.
package rest

import (
	"log/slog"
	"net/http"
	"net/netip"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/web"
)

// AccountHeader names the account of a request until API keys exist (safe only on a loopback address).
const AccountHeader = "X-Account-Id"

// api holds what every handler needs.
type api struct {
	log *slog.Logger
	s   web.Services

	trustedProxies []netip.Prefix
	webhookBase    string
}

var _ web.NewDialect = New

// New returns the /api/v1 dialect over the services s.
func New(cfg web.Config, s web.Services) web.Dialect {
	a := &api{log: cfg.Logger, s: s, trustedProxies: cfg.TrustedProxies, webhookBase: cfg.WebhookBaseURL}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	return web.Dialect{Name: "rest", Account: a.account, WriteError: a.writeError, Operations: a.operations()}
}

// operations is the dialect's operation table.
func (a *api) operations() []web.Operation {
	const (
		get, post, put, patch, del = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete
		v1                         = "/api/v1"
	)
	ops := []web.Operation{
		{Name: "buses.list", Method: get, Path: v1 + "/buses", Handler: answer(a, a.listBuses)},
		{Name: "buses.create", Method: post, Path: v1 + "/buses", Handler: withBody(a, a.createBus)},
		{Name: "buses.get", Method: get, Path: v1 + "/buses/:bus", Handler: answer(a, a.getBus)},
		{Name: "buses.patch", Method: patch, Path: v1 + "/buses/:bus", Handler: withBody(a, a.patchBus)},
		{Name: "buses.delete", Method: del, Path: v1 + "/buses/:bus", Handler: answer(a, a.deleteBus)},

		{Name: "events.put", Method: post, Path: v1 + "/buses/:bus/events", Handler: answer(a, a.putEvents)},
		{Name: "eventTypes.list", Method: get, Path: v1 + "/buses/:bus/event-types", Handler: answer(a, a.listEventTypes)},

		{Name: "rules.list", Method: get, Path: v1 + "/buses/:bus/rules", Handler: answer(a, a.listRules)},
		{Name: "rules.create", Method: post, Path: v1 + "/buses/:bus/rules", Handler: answer(a, a.createRule)},
		{Name: "rules.get", Method: get, Path: v1 + "/buses/:bus/rules/:rule", Handler: answer(a, a.getRule)},
		{Name: "rules.put", Method: put, Path: v1 + "/buses/:bus/rules/:rule", Handler: answer(a, a.putRule)},
		{Name: "rules.patch", Method: patch, Path: v1 + "/buses/:bus/rules/:rule", Handler: withBody(a, a.patchRule)},
		{Name: "rules.delete", Method: del, Path: v1 + "/buses/:bus/rules/:rule", Handler: answer(a, a.deleteRule)},
		{Name: "rules.enable", Method: post, Path: v1 + "/buses/:bus/rules/:rule/enable", Handler: answer(a, a.enableRule)},
		{Name: "rules.disable", Method: post, Path: v1 + "/buses/:bus/rules/:rule/disable", Handler: answer(a, a.disableRule)},

		{Name: "targets.list", Method: get, Path: v1 + "/buses/:bus/rules/:rule/targets", Handler: a.listTargets},
		{Name: "targets.get", Method: get, Path: v1 + "/buses/:bus/rules/:rule/targets/:target", Handler: a.getTarget},
		{Name: "targets.put", Method: put, Path: v1 + "/buses/:bus/rules/:rule/targets/:target", Handler: a.putTarget},
		{Name: "targets.delete", Method: del, Path: v1 + "/buses/:bus/rules/:rule/targets/:target", Handler: answer(a, a.deleteTarget)},

		{Name: "transformers.test", Method: post, Path: v1 + "/test-input-transformer", Handler: a.testInputTransformer},
		{Name: "patterns.test", Method: post, Path: v1 + "/test-event-pattern", Handler: a.testEventPattern},

		{Name: "connections.list", Method: get, Path: v1 + "/connections", Handler: answer(a, a.listConnections)},
		{Name: "connections.create", Method: post, Path: v1 + "/connections", Handler: withBody(a, a.createConnection)},
		{Name: "connections.get", Method: get, Path: v1 + "/connections/:connection", Handler: answer(a, a.getConnection)},
		{Name: "connections.put", Method: put, Path: v1 + "/connections/:connection", Handler: withBody(a, a.putConnection)},
		{Name: "connections.patch", Method: patch, Path: v1 + "/connections/:connection", Handler: withBody(a, a.patchConnection)},
		{Name: "connections.delete", Method: del, Path: v1 + "/connections/:connection", Handler: answer(a, a.deleteConnection)},

		{Name: "apiDestinations.list", Method: get, Path: v1 + "/api-destinations", Handler: answer(a, a.listAPIDestinations)},
		{Name: "apiDestinations.create", Method: post, Path: v1 + "/api-destinations", Handler: withBody(a, a.createAPIDestination)},
		{Name: "apiDestinations.get", Method: get, Path: v1 + "/api-destinations/:destination", Handler: answer(a, a.getAPIDestination)},
		{Name: "apiDestinations.put", Method: put, Path: v1 + "/api-destinations/:destination", Handler: withBody(a, a.putAPIDestination)},
		{Name: "apiDestinations.patch", Method: patch, Path: v1 + "/api-destinations/:destination", Handler: withBody(a, a.patchAPIDestination)},
		{Name: "apiDestinations.delete", Method: del, Path: v1 + "/api-destinations/:destination", Handler: answer(a, a.deleteAPIDestination)},

		{Name: "workers.list", Method: get, Path: v1 + "/runtime/workers", Handler: answer(a, a.listRuntimeWorkers)},
		{Name: "connectors.list", Method: get, Path: v1 + "/runtime/connectors", Handler: answer(a, a.listRuntimeConnectors)},
		{Name: "connectors.pause", Method: post, Path: v1 + "/runtime/connectors/:connector/pause", Handler: answer(a, a.pauseConnector)},
		{Name: "connectors.resume", Method: post, Path: v1 + "/runtime/connectors/:connector/resume", Handler: answer(a, a.resumeConnector)},
		{Name: "connectors.stop", Method: post, Path: v1 + "/runtime/connectors/:connector/stop", Handler: answer(a, a.stopConnector)},
		{Name: "connectors.restart", Method: post, Path: v1 + "/runtime/connectors/:connector/restart", Handler: answer(a, a.restartConnector)},
		{Name: "connectors.restartTask", Method: post, Path: v1 + "/runtime/connectors/:connector/tasks/:task/restart", Handler: answer(a, a.restartConnectorTask)},
		{Name: "plugins.list", Method: get, Path: v1 + "/runtime/plugins", Handler: answer(a, a.listRuntimePlugins)},
		{Name: "plugins.schema", Method: get, Path: v1 + "/runtime/plugins/:plugin/schema", Handler: answer(a, a.runtimePluginSchema)},

		{Name: "deadLetters.list", Method: get, Path: v1 + "/dead-letters", Handler: answer(a, a.listDeadLetters)},
		{Name: "deadLetters.redrive", Method: post, Path: v1 + "/dead-letters/redrive", Handler: answer(a, a.redriveDeadLetters)},
		{Name: "deadLetters.discard", Method: del, Path: v1 + "/dead-letters", Handler: answer(a, a.deleteDeadLetters)},

		{Name: "sources.list", Method: get, Path: v1 + "/buses/:bus/sources", Handler: answer(a, a.listSources)},
		{Name: "sources.create", Method: post, Path: v1 + "/buses/:bus/sources", Handler: withBody(a, a.createSource)},
		{Name: "sources.get", Method: get, Path: v1 + "/buses/:bus/sources/:source", Handler: answer(a, a.getSource)},
		{Name: "sources.put", Method: put, Path: v1 + "/buses/:bus/sources/:source", Handler: withBody(a, a.putSource)},
		{Name: "sources.patch", Method: patch, Path: v1 + "/buses/:bus/sources/:source", Handler: withBody(a, a.patchSource)},
		{Name: "sources.delete", Method: del, Path: v1 + "/buses/:bus/sources/:source", Handler: answer(a, a.deleteSource)},
		{Name: "sources.enable", Method: post, Path: v1 + "/buses/:bus/sources/:source/enable", Handler: answer(a, a.enableSource)},
		{Name: "sources.disable", Method: post, Path: v1 + "/buses/:bus/sources/:source/disable", Handler: answer(a, a.disableSource)},
		{Name: "sources.rotateToken", Method: post, Path: v1 + "/buses/:bus/sources/:source/rotate-token", Handler: answer(a, a.rotateSourceToken)},
	}
	// The webhooks of http sources, on every method of WebhookMethods; the source's token is the capability.
	for _, m := range WebhookMethods {
		ops = append(ops,
			web.Operation{Name: "webhooks.receive", Method: m, Path: "/webhook/putEvents", Handler: a.webhookByQuery, Public: true},
			web.Operation{Name: "webhooks.receive", Method: m, Path: v1 + "/webhooks/:token", Handler: a.webhookByPath, Public: true})
	}
	return ops
}

// account is middleware that reads the request's account from AccountHeader (domain.DefaultAccountID when
// absent) and answers 400 naming the header when it is not a valid account id.
func (a *api) account(c *gin.Context) {
	id := c.GetHeader(AccountHeader)
	if id == "" {
		id = domain.DefaultAccountID
	}
	if err := domain.ValidateAccountID(id); err != nil {
		a.writeError(c, domain.Invalid(AccountHeader, "%s %q must be 1 to 32 characters of a-z and 0-9", AccountHeader, id))
		return
	}
	web.SetAccount(c, id)
	c.Next()
}

// The handlers of one endpoint each are its swag annotations and one call of a domain service through answer or
// withBody; what still reads alike between two of them (a get of a bus's rule and of its source) is that call.

// answer is the shape of the dialect's handlers: the call do, then its answer with the status it returns (no body
// when out is nil), or its error as a problem document.
func answer(a *api, do func(c *gin.Context) (status int, out any, err error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		status, out, err := do(c)
		a.respond(c, status, out, err)
	}
}

// withBody is answer for the handlers that read a JSON body: the body is decoded into a new In (web.DecodeJSON,
// unknown fields refused) before do is called.
func withBody[In any](a *api, do func(c *gin.Context, in *In) (status int, out any, err error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		in := new(In)
		if err := web.DecodeJSON(c, in); err != nil {
			a.writeError(c, err)
			return
		}
		status, out, err := do(c, in)
		a.respond(c, status, out, err)
	}
}

func (a *api) respond(c *gin.Context, status int, out any, err error) {
	switch {
	case err != nil:
		a.writeError(c, err)
	case out == nil:
		c.Status(status)
	default:
		c.JSON(status, out)
	}
}

// writeError answers err as a problem document (see web.ProblemOf).
func (a *api) writeError(c *gin.Context, err error) {
	web.WriteProblem(c, web.ProblemOf(a.log, c.Request, err))
}
