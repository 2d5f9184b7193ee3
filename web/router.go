// Package web is the control plane's HTTP interface: the gin router, one file per resource, the request and
// response DTOs, the one mapping of domain errors to RFC 9457 problem documents, and the OpenAPI document (made
// by swag from the annotations on the handlers, served with Swagger UI).
package web

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"time"

	"github.com/gin-gonic/gin"
	swaggerFiles "github.com/swaggo/files"
	ginSwagger "github.com/swaggo/gin-swagger"

	"github.com/eventbridge-go/eventbridge/docs"
	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/domain/deadletter"
	"github.com/eventbridge-go/eventbridge/domain/eventtype"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/runtime"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/target"
)

//	@title			EventBridge-Go API
//	@version		1.0
//	@description	Control plane of EventBridge-Go: event buses, rules with event patterns, targets, and PutEvents
//	@description	for CloudEvents. Every call belongs to the account named by the X-Account-Id header
//	@description	("default" when absent). Errors are RFC 9457 problem documents (application/problem+json).
//	@license.name	Apache 2.0
//	@license.url	https://www.apache.org/licenses/LICENSE-2.0.html
//	@BasePath		/

// Services are the domain services the handlers call.
type Services struct {
	Buses   *bus.Service
	Rules   *rule.Service
	Targets *target.Service
	// EventTypes lists the event types seen on buses.
	EventTypes *eventtype.Service

	Connections     *connection.Service
	APIDestinations *apidestination.Service
	// Runtime shows the worker runtime: workers, the account's connectors and actions on them, plugins.
	Runtime *runtime.Service
	// DeadLetters lists, redrives and discards the events the account's targets gave up.
	DeadLetters *deadletter.Service
	// Sources are the sources of buses and their webhooks.
	Sources *source.Service
}

// Config configures the router.
type Config struct {
	// Logger receives request logs (debug level), recovered panics and internal errors; nil discards them.
	Logger *slog.Logger
	// Ready answers /readyz: nil means always ready; an error makes /readyz answer 503.
	Ready func(ctx context.Context) error
	// TrustedProxies are the proxies whose X-Forwarded-For a webhook believes for its client IP check; empty
	// uses the TCP peer's address.
	TrustedProxies []netip.Prefix
	// WebhookBaseURL is the scheme and host the webhook URLs of sources are shown on; empty uses the request's.
	WebhookBaseURL string
	// Console is the browser console's build (frontend.Dist()), served at / for the paths no API route serves;
	// nil or without index.html, those paths answer that the binary was built without the console.
	Console fs.FS
}

// api holds what every handler needs.
type api struct {
	log   *slog.Logger
	ready func(ctx context.Context) error
	s     Services

	trustedProxies []netip.Prefix
	webhookBase    string
}

// NewRouter returns the control plane's HTTP handler: the /api/v1 resources, /healthz, /readyz, Swagger UI at
// /swagger/index.html and the console at / (console.go). Every error is answered as a problem document; a panic in
// a handler is logged and answered 500.
func NewRouter(cfg Config, s Services) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	a := &api{log: cfg.Logger, ready: cfg.Ready, s: s, trustedProxies: cfg.TrustedProxies, webhookBase: cfg.WebhookBaseURL}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}

	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.Use(a.logRequests, a.recovery)
	r.NoRoute(a.noRoute)
	r.NoMethod(a.noMethod)

	r.GET("/healthz", a.healthz)
	r.GET("/readyz", a.readyz)
	ui := ginSwagger.WrapHandler(swaggerFiles.Handler)
	r.GET("/swagger/*any", func(c *gin.Context) {
		if c.Param("any") == "/doc.json" {
			c.Data(http.StatusOK, "application/json; charset=utf-8", docs.SwaggerJSON)
			return
		}
		ui(c)
	})

	v1 := r.Group("/api/v1", a.account)
	v1.GET("/buses", a.listBuses)
	v1.POST("/buses", a.createBus)
	v1.GET("/buses/:bus", a.getBus)
	v1.PATCH("/buses/:bus", a.patchBus)
	v1.DELETE("/buses/:bus", a.deleteBus)

	v1.POST("/buses/:bus/events", a.putEvents)
	v1.GET("/buses/:bus/event-types", a.listEventTypes)

	v1.GET("/buses/:bus/rules", a.listRules)
	v1.POST("/buses/:bus/rules", a.createRule)
	v1.GET("/buses/:bus/rules/:rule", a.getRule)
	v1.PUT("/buses/:bus/rules/:rule", a.putRule)
	v1.PATCH("/buses/:bus/rules/:rule", a.patchRule)
	v1.DELETE("/buses/:bus/rules/:rule", a.deleteRule)
	v1.POST("/buses/:bus/rules/:rule/enable", a.enableRule)
	v1.POST("/buses/:bus/rules/:rule/disable", a.disableRule)

	v1.GET("/buses/:bus/rules/:rule/targets", a.listTargets)
	v1.GET("/buses/:bus/rules/:rule/targets/:target", a.getTarget)
	v1.PUT("/buses/:bus/rules/:rule/targets/:target", a.putTarget)
	v1.DELETE("/buses/:bus/rules/:rule/targets/:target", a.deleteTarget)
	v1.POST("/test-input-transformer", a.testInputTransformer)
	v1.POST("/test-event-pattern", a.testEventPattern)
	a.connectionRoutes(v1)
	a.runtimeRoutes(v1)
	a.deadLetterRoutes(v1)
	a.sourceRoutes(v1)
	a.webhookRoutes(r)
	a.rocketMQRoutes(r)
	a.rocketMQSourceRoutes(r.Group("/", a.rocketMQAccount))
	a.consoleRoutes(r, cfg.Console)
	return r
}

// recovery turns a panic in a handler into a logged error and a 500 problem document.
func (a *api) recovery(c *gin.Context) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v) // net/http's way to abort a response: it handles it, quietly
		}
		a.log.Error("panic in handler", "method", c.Request.Method, "path", c.Request.URL.Path,
			"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		if c.Writer.Written() {
			c.Abort() // too late for a problem document; the client sees a truncated response
			return
		}
		writeProblem(c, newProblem(http.StatusInternalServerError, domain.ErrInternal.Code, "",
			"an internal error occurred; it has been logged"))
	}()
	c.Next()
}

// logRequests logs every request at debug level once it is answered.
func (a *api) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	a.log.LogAttrs(c.Request.Context(), slog.LevelDebug, "request",
		slog.String("method", c.Request.Method),
		slog.String("path", c.Request.URL.Path),
		slog.Int("status", c.Writer.Status()),
		slog.Int("bytes", c.Writer.Size()),
		slog.Duration("duration", time.Since(start)),
		slog.String("account", c.GetString(accountKey)))
}

func (a *api) noRoute(c *gin.Context) {
	writeProblem(c, newProblem(http.StatusNotFound, CodeRouteNotFound, "",
		fmt.Sprintf("no route %s %s", c.Request.Method, c.Request.URL.Path)))
}

func (a *api) noMethod(c *gin.Context) {
	writeProblem(c, newProblem(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "",
		fmt.Sprintf("%s is not allowed on %s; allowed: %s", c.Request.Method, c.Request.URL.Path, c.Writer.Header().Get("Allow"))))
}

// Health is the answer of /healthz.
type Health struct {
	Status string `json:"status" example:"ok"`
} //@name Health

// healthz answers 200 while the process serves HTTP.
//
//	@Summary	Liveness
//	@Tags		health
//	@Produce	json
//	@Success	200	{object}	Health
//	@Router		/healthz [get]
func (a *api) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, Health{Status: "ok"})
}

// readyz answers 200 when Config.Ready reports ready, else 503.
//
//	@Summary	Readiness
//	@Tags		health
//	@Produce	json
//	@Success	200	{object}	Health
//	@Failure	503	{object}	Problem	"not ready"
//	@Router		/readyz [get]
func (a *api) readyz(c *gin.Context) {
	if a.ready != nil {
		if err := a.ready(c.Request.Context()); err != nil {
			a.log.Warn("not ready", "err", err)
			writeProblem(c, newProblem(http.StatusServiceUnavailable, domain.ErrUnavailable.Code, "", "the service is not ready"))
			return
		}
	}
	c.JSON(http.StatusOK, Health{Status: "ok"})
}
