// Package rest is the control plane's own API dialect, /api/v1: resources in JSON (camelCase), RFC 9457 problem
// documents for errors, the account in the X-Account-Id header. Its handlers translate requests into calls of the
// domain services (web.Services) and domain errors into problems (web.ProblemOf); they hold no business rule.
// Operations declares every operation of the dialect once; web.NewRouter builds the routes from it.
package rest

import (
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/web"
)

// AccountHeader names the account a request acts in; without it, the caller's own (an API key's account). Only
// a member of the account or an instance administrator may name it.
const AccountHeader = "X-Account-Id"

// api holds what every handler needs.
type api struct {
	log         *slog.Logger
	s           web.Services
	webhookBase string
}

var _ web.NewDialect = New

// New returns the /api/v1 dialect over the services s.
func New(cfg web.Config, s web.Services) web.Dialect {
	a := &api{log: cfg.Logger, s: s, webhookBase: cfg.WebhookBaseURL}
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
	const (
		read, write, operate, publish = access.Read, access.Write, access.Operate, access.PutEvents
		test, manage, instance        = access.Test, access.ManageAccess, access.ManageInstance
		anyone                        = access.Authenticated
	)
	ops := []web.Operation{
		{Name: "buses.list", Method: get, Path: v1 + "/buses", Handler: answer(a, a.listBuses), Permission: read},
		{Name: "buses.create", Method: post, Path: v1 + "/buses", Handler: withBody(a, a.createBus), Permission: write},
		{Name: "buses.get", Method: get, Path: v1 + "/buses/:bus", Handler: answer(a, a.getBus), Permission: read},
		{Name: "buses.patch", Method: patch, Path: v1 + "/buses/:bus", Handler: withBody(a, a.patchBus), Permission: write},
		{Name: "buses.delete", Method: del, Path: v1 + "/buses/:bus", Handler: answer(a, a.deleteBus), Permission: write},

		{Name: "events.put", Method: post, Path: v1 + "/buses/:bus/events", Handler: answer(a, a.putEvents), Permission: publish, AnyBody: true,
			Audit: web.AuditNever},
		{Name: "events.search", Method: get, Path: v1 + "/buses/:bus/events", Handler: answer(a, a.searchEvents), Permission: read},
		{Name: "events.tail", Method: get, Path: v1 + "/buses/:bus/tail", Handler: a.tailEvents, Permission: read},
		{Name: "events.trace", Method: get, Path: v1 + "/buses/:bus/events/:id/trace", Handler: answer(a, a.traceEvent), Permission: read},
		{Name: "busLog.read", Method: get, Path: v1 + "/buses/:bus/log", Handler: answer(a, a.readBusLog), Permission: read},
		{Name: "events.test", Method: post, Path: v1 + "/buses/:bus/test-event", Handler: withBody(a, a.testBusEvent), Permission: read},
		{Name: "archives.list", Method: get, Path: v1 + "/buses/:bus/archives", Handler: answer(a, a.listArchives), Permission: read},
		{Name: "archives.create", Method: post, Path: v1 + "/buses/:bus/archives", Handler: withBody(a, a.createArchive), Permission: write},
		{Name: "archives.get", Method: get, Path: v1 + "/buses/:bus/archives/:archive", Handler: answer(a, a.getArchive), Permission: read},
		{Name: "archives.patch", Method: patch, Path: v1 + "/buses/:bus/archives/:archive", Handler: withBody(a, a.patchArchive), Permission: write},
		{Name: "archives.delete", Method: del, Path: v1 + "/buses/:bus/archives/:archive", Handler: answer(a, a.deleteArchive), Permission: write},
		{Name: "replays.list", Method: get, Path: v1 + "/replays", Handler: answer(a, a.listReplays), Permission: read},
		{Name: "replays.start", Method: post, Path: v1 + "/replays", Handler: withBody(a, a.startReplay), Permission: operate},
		{Name: "replays.get", Method: get, Path: v1 + "/replays/:replay", Handler: answer(a, a.getReplay), Permission: read},
		{Name: "replays.cancel", Method: post, Path: v1 + "/replays/:replay/cancel", Handler: answer(a, a.cancelReplay), Permission: operate},
		{Name: "eventTypes.list", Method: get, Path: v1 + "/buses/:bus/event-types", Handler: answer(a, a.listEventTypes), Permission: read},

		{Name: "rules.list", Method: get, Path: v1 + "/buses/:bus/rules", Handler: answer(a, a.listRules), Permission: read},
		{Name: "rules.create", Method: post, Path: v1 + "/buses/:bus/rules", Handler: answer(a, a.createRule), Permission: write},
		{Name: "rules.get", Method: get, Path: v1 + "/buses/:bus/rules/:rule", Handler: answer(a, a.getRule), Permission: read},
		{Name: "rules.put", Method: put, Path: v1 + "/buses/:bus/rules/:rule", Handler: answer(a, a.putRule), Permission: write},
		{Name: "rules.patch", Method: patch, Path: v1 + "/buses/:bus/rules/:rule", Handler: withBody(a, a.patchRule), Permission: write},
		{Name: "rules.delete", Method: del, Path: v1 + "/buses/:bus/rules/:rule", Handler: answer(a, a.deleteRule), Permission: write},
		{Name: "rules.enable", Method: post, Path: v1 + "/buses/:bus/rules/:rule/enable", Handler: answer(a, a.enableRule), Permission: write},
		{Name: "rules.disable", Method: post, Path: v1 + "/buses/:bus/rules/:rule/disable", Handler: answer(a, a.disableRule), Permission: write},

		{Name: "channels.get", Method: get, Path: v1 + "/buses/:bus/channels/:rule", Handler: a.getChannel, Permission: read},
		{Name: "channels.put", Method: put, Path: v1 + "/buses/:bus/channels/:rule", Handler: a.putChannel, Permission: write},

		{Name: "targets.list", Method: get, Path: v1 + "/buses/:bus/rules/:rule/targets", Handler: a.listTargets, Permission: read},
		{Name: "targets.get", Method: get, Path: v1 + "/buses/:bus/rules/:rule/targets/:target", Handler: a.getTarget, Permission: read},
		{Name: "targets.put", Method: put, Path: v1 + "/buses/:bus/rules/:rule/targets/:target", Handler: a.putTarget, Permission: write},
		{Name: "targets.delete", Method: del, Path: v1 + "/buses/:bus/rules/:rule/targets/:target", Handler: answer(a, a.deleteTarget), Permission: write},

		{Name: "transformers.test", Method: post, Path: v1 + "/test-input-transformer", Handler: a.testInputTransformer, Permission: test},
		{Name: "patterns.test", Method: post, Path: v1 + "/test-event-pattern", Handler: a.testEventPattern, Permission: test},

		{Name: "connections.list", Method: get, Path: v1 + "/connections", Handler: answer(a, a.listConnections), Permission: read},
		{Name: "connections.create", Method: post, Path: v1 + "/connections", Handler: withBody(a, a.createConnection), Permission: write},
		{Name: "connections.get", Method: get, Path: v1 + "/connections/:connection", Handler: answer(a, a.getConnection), Permission: read},
		{Name: "connections.put", Method: put, Path: v1 + "/connections/:connection", Handler: withBody(a, a.putConnection), Permission: write},
		{Name: "connections.patch", Method: patch, Path: v1 + "/connections/:connection", Handler: withBody(a, a.patchConnection), Permission: write},
		{Name: "connections.delete", Method: del, Path: v1 + "/connections/:connection", Handler: answer(a, a.deleteConnection), Permission: write},
		{Name: "connections.deauthorize", Method: post, Path: v1 + "/connections/:connection/deauthorize", Handler: answer(a, a.deauthorizeConnection), Permission: write},

		{Name: "apiDestinations.list", Method: get, Path: v1 + "/api-destinations", Handler: answer(a, a.listAPIDestinations), Permission: read},
		{Name: "apiDestinations.create", Method: post, Path: v1 + "/api-destinations", Handler: withBody(a, a.createAPIDestination), Permission: write},
		{Name: "apiDestinations.get", Method: get, Path: v1 + "/api-destinations/:destination", Handler: answer(a, a.getAPIDestination), Permission: read},
		{Name: "apiDestinations.put", Method: put, Path: v1 + "/api-destinations/:destination", Handler: withBody(a, a.putAPIDestination), Permission: write},
		{Name: "apiDestinations.patch", Method: patch, Path: v1 + "/api-destinations/:destination", Handler: withBody(a, a.patchAPIDestination), Permission: write},
		{Name: "apiDestinations.delete", Method: del, Path: v1 + "/api-destinations/:destination", Handler: answer(a, a.deleteAPIDestination), Permission: write},

		{Name: "workers.list", Method: get, Path: v1 + "/runtime/workers", Handler: answer(a, a.listRuntimeWorkers), Permission: read},
		{Name: "connectors.list", Method: get, Path: v1 + "/runtime/connectors", Handler: answer(a, a.listRuntimeConnectors), Permission: read},
		{Name: "connectors.pause", Method: post, Path: v1 + "/runtime/connectors/:connector/pause", Handler: answer(a, a.pauseConnector), Permission: operate},
		{Name: "connectors.resume", Method: post, Path: v1 + "/runtime/connectors/:connector/resume", Handler: answer(a, a.resumeConnector), Permission: operate},
		{Name: "connectors.stop", Method: post, Path: v1 + "/runtime/connectors/:connector/stop", Handler: answer(a, a.stopConnector), Permission: operate},
		{Name: "connectors.restart", Method: post, Path: v1 + "/runtime/connectors/:connector/restart", Handler: answer(a, a.restartConnector), Permission: operate},
		{Name: "connectors.restartTask", Method: post, Path: v1 + "/runtime/connectors/:connector/tasks/:task/restart", Handler: answer(a, a.restartConnectorTask), Permission: operate},
		{Name: "plugins.list", Method: get, Path: v1 + "/runtime/plugins", Handler: answer(a, a.listRuntimePlugins), Permission: read},
		{Name: "plugins.schema", Method: get, Path: v1 + "/runtime/plugins/:plugin/schema", Handler: answer(a, a.runtimePluginSchema), Permission: read},

		{Name: "metricsHistory.read", Method: get, Path: v1 + "/metrics", Handler: answer(a, a.readMetricsHistory), Permission: read},

		{Name: "deadLetters.list", Method: get, Path: v1 + "/dead-letters", Handler: answer(a, a.listDeadLetters), Permission: read},
		{Name: "deadLetters.redrive", Method: post, Path: v1 + "/dead-letters/redrive", Handler: answer(a, a.redriveDeadLetters), Permission: operate},
		{Name: "deadLetters.discard", Method: del, Path: v1 + "/dead-letters", Handler: answer(a, a.deleteDeadLetters), Permission: operate},

		{Name: "sources.list", Method: get, Path: v1 + "/buses/:bus/sources", Handler: answer(a, a.listSources), Permission: read},
		{Name: "sources.create", Method: post, Path: v1 + "/buses/:bus/sources", Handler: withBody(a, a.createSource), Permission: write},
		{Name: "sources.get", Method: get, Path: v1 + "/buses/:bus/sources/:source", Handler: answer(a, a.getSource), Permission: read},
		{Name: "sources.put", Method: put, Path: v1 + "/buses/:bus/sources/:source", Handler: withBody(a, a.putSource), Permission: write},
		{Name: "sources.patch", Method: patch, Path: v1 + "/buses/:bus/sources/:source", Handler: withBody(a, a.patchSource), Permission: write},
		{Name: "sources.delete", Method: del, Path: v1 + "/buses/:bus/sources/:source", Handler: answer(a, a.deleteSource), Permission: write},
		{Name: "sources.enable", Method: post, Path: v1 + "/buses/:bus/sources/:source/enable", Handler: answer(a, a.enableSource), Permission: write},
		{Name: "sources.disable", Method: post, Path: v1 + "/buses/:bus/sources/:source/disable", Handler: answer(a, a.disableSource), Permission: write},
		{Name: "sources.rotateToken", Method: post, Path: v1 + "/buses/:bus/sources/:source/rotate-token", Handler: answer(a, a.rotateSourceToken), Permission: write},

		{Name: "me.get", Method: get, Path: v1 + "/me", Handler: answer(a, a.getMe), Permission: anyone},
		{Name: "me.changePassword", Method: put, Path: v1 + "/me/password", Handler: withBody(a, a.changePassword), Permission: anyone},

		{Name: "session.create", Method: post, Path: v1 + "/session", Handler: withBody(a, a.createSession), Public: true,
			Audit: web.AuditAlways},
		{Name: "auditLog.list", Method: get, Path: v1 + "/audit-log", Handler: answer(a, a.listAuditLog), Permission: manage},
		{Name: "session.get", Method: get, Path: v1 + "/session", Handler: answer(a, a.getSession), Permission: anyone},
		{Name: "session.delete", Method: del, Path: v1 + "/session", Handler: answer(a, a.deleteSession), Permission: anyone},
		{Name: "sessions.list", Method: get, Path: v1 + "/me/sessions", Handler: answer(a, a.listSessions), Permission: anyone},
		{Name: "sessions.delete", Method: del, Path: v1 + "/me/sessions/:session", Handler: answer(a, a.revokeSession), Permission: anyone},

		{Name: "accounts.list", Method: get, Path: v1 + "/accounts", Handler: answer(a, a.listAccounts), Permission: instance},
		{Name: "accounts.create", Method: post, Path: v1 + "/accounts", Handler: withBody(a, a.createAccount), Permission: instance},
		{Name: "accounts.get", Method: get, Path: v1 + "/accounts/:account", Handler: answer(a, a.getAccount), Permission: instance},
		{Name: "accounts.patch", Method: patch, Path: v1 + "/accounts/:account", Handler: withBody(a, a.patchAccount), Permission: instance},
		{Name: "accounts.delete", Method: del, Path: v1 + "/accounts/:account", Handler: answer(a, a.deleteAccount), Permission: instance},

		{Name: "members.list", Method: get, Path: v1 + "/accounts/:account/members", Handler: answer(a, a.listMembers), Permission: manage},
		{Name: "members.put", Method: put, Path: v1 + "/accounts/:account/members/:user", Handler: withBody(a, a.putMember), Permission: manage},
		{Name: "members.delete", Method: del, Path: v1 + "/accounts/:account/members/:user", Handler: answer(a, a.deleteMember), Permission: manage},

		{Name: "users.list", Method: get, Path: v1 + "/users", Handler: answer(a, a.listUsers), Permission: instance},
		{Name: "users.create", Method: post, Path: v1 + "/users", Handler: withBody(a, a.createUser), Permission: instance},
		{Name: "users.get", Method: get, Path: v1 + "/users/:user", Handler: answer(a, a.getUser), Permission: instance},
		{Name: "users.patch", Method: patch, Path: v1 + "/users/:user", Handler: withBody(a, a.patchUser), Permission: instance},
		{Name: "users.delete", Method: del, Path: v1 + "/users/:user", Handler: answer(a, a.deleteUser), Permission: instance},

		{Name: "accessKeys.list", Method: get, Path: v1 + "/access-keys", Handler: answer(a, a.listAccessKeys), Permission: manage},
		{Name: "accessKeys.create", Method: post, Path: v1 + "/access-keys", Handler: withBody(a, a.createAccessKey), Permission: manage},
		{Name: "accessKeys.get", Method: get, Path: v1 + "/access-keys/:key", Handler: answer(a, a.getAccessKey), Permission: manage},
		{Name: "accessKeys.delete", Method: del, Path: v1 + "/access-keys/:key", Handler: answer(a, a.deleteAccessKey), Permission: manage},
		{Name: "apiKeys.list", Method: get, Path: v1 + "/api-keys", Handler: answer(a, a.listAPIKeys), Permission: manage},
		{Name: "apiKeys.create", Method: post, Path: v1 + "/api-keys", Handler: withBody(a, a.createAPIKey), Permission: manage},
		{Name: "apiKeys.get", Method: get, Path: v1 + "/api-keys/:key", Handler: answer(a, a.getAPIKey), Permission: manage},
		{Name: "apiKeys.delete", Method: del, Path: v1 + "/api-keys/:key", Handler: answer(a, a.deleteAPIKey), Permission: manage},
	}
	// The webhooks of http sources, on every method of WebhookMethods; the source's token is the capability.
	for _, m := range WebhookMethods {
		ops = append(ops,
			web.Operation{Name: "webhooks.receive", Method: m, Path: "/webhook/putEvents", Handler: a.webhookByQuery, Public: true,
				AnyBody: true, AnyHost: true},
			web.Operation{Name: "webhooks.receive", Method: m, Path: v1 + "/webhooks/:token", Handler: a.webhookByPath, Public: true,
				AnyBody: true, AnyHost: true})
	}
	return ops
}

// account returns the account the request names: the path's account (members of an account), else
// AccountHeader ("" when absent: the caller's own); an invalid id is a validation error naming where it was.
func (a *api) account(c *gin.Context) (string, error) {
	if id := c.Param("account"); id != "" {
		if err := domain.ValidateAccountID(id); err != nil {
			return "", account.ErrNotFound.With("account %q not found", id)
		}
		return id, nil
	}
	id := c.GetHeader(AccountHeader)
	if id == "" {
		return "", nil
	}
	if err := domain.ValidateAccountID(id); err != nil {
		return "", domain.Invalid(AccountHeader, "%s %q must be 1 to 32 characters of a-z and 0-9", AccountHeader, id)
	}
	return id, nil
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

// keyed is an answer that names the resource a create made: its id or name, which its path ends with.
type keyed interface{ auditKey() string }

func (a *api) respond(c *gin.Context, status int, out any, err error) {
	if k, ok := out.(keyed); ok && err == nil && status == http.StatusCreated && c.Request.Method == http.MethodPost {
		web.AppendAuditResource(c, k.auditKey())
	}
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
	web.SetRetryAfter(c, err)
	web.WriteProblem(c, web.ProblemOf(a.log, c.Request, err))
}
