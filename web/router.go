// Package web is what every API dialect of the control plane shares: the gin router built from the dialects'
// operation tables, its middleware chain (recovery, request logging, the operation's name), RFC 9457 problem
// documents and the one mapping of domain errors to HTTP statuses, request decoding (JSON bodies, paging, the
// CloudEvents HTTP binding), health, the OpenAPI document (made by swag from the annotations on the handlers of
// every dialect, served with Swagger UI) and the console's static files. Each dialect is its own package
// (web/rest for /api/v1, web/rocketmq for Apache RocketMQ EventBridge's API) that translates its requests into
// calls of the same domain services and domain errors into its own error shape.
package web

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gin-contrib/cors"
	"github.com/gin-gonic/gin"
	swaggerFiles "github.com/swaggo/files/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/eventbridge-go/eventbridge/docs"
	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/accesskey"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/domain/apikey"
	"github.com/eventbridge-go/eventbridge/domain/archive"
	"github.com/eventbridge-go/eventbridge/domain/audit"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/channel"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/domain/deadletter"
	"github.com/eventbridge-go/eventbridge/domain/eventtype"
	"github.com/eventbridge-go/eventbridge/domain/history"
	"github.com/eventbridge-go/eventbridge/domain/inspect"
	"github.com/eventbridge-go/eventbridge/domain/replay"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/runtime"
	"github.com/eventbridge-go/eventbridge/domain/session"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/tag"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/domain/user"
)

//	@title			EventBridge-Go API
//	@version		1.0
//	@description	Control plane of EventBridge-Go: event buses, rules with event patterns, targets, and PutEvents
//	@description	for CloudEvents. Every call but health, webhooks, signing in and this documentation needs an API
//	@description	key, sent as "Authorization: Bearer ebk_...", or the console's session cookie (eb_session, set by
//	@description	POST /api/v1/session; changes then also need X-CSRF-Token). Bodies are JSON (415 otherwise), but
//	@description	PutEvents' binary mode. A call acts in the key's account, or in the account that
//	@description	the X-Account-Id header names (an instance administrator's key, or a member's). Errors are RFC 9457
//	@description	problem documents (application/problem+json).
//	@license.name	Apache 2.0
//	@license.url	https://www.apache.org/licenses/LICENSE-2.0.html
//	@BasePath		/

//	@securityDefinitions.apikey	BearerAuth
//	@in							header
//	@name						Authorization
//	@description				An API key: "Bearer ebk_<id>_<secret>" (OpenAPI 3: the http bearer scheme).

// Services are the domain services the dialects' handlers call.
type Services struct {
	Buses *bus.Service
	Rules *rule.Service
	// Archives keeps the archives of buses; Replays replays them.
	Archives *archive.Service
	Replays  *replay.Service
	Targets  *target.Service
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
	// Channels saves a rule with its targets and its bus's sources as one document, all or nothing.
	Channels *channel.Service
	// Inspect tests events against a bus's rules, searches a bus's events and tails them.
	Inspect *inspect.Service
	// History answers the metrics history of an account's buses, rules and targets.
	History *history.Service

	// Accounts, Users and APIKeys are the identities.
	Accounts *account.Service
	Users    *user.Service
	APIKeys  *apikey.Service
	// AccessKeys are the AWS-style access keys of accounts (the Amazon EventBridge API's credentials).
	AccessKeys *accesskey.Service
	// Tags are the tags of buses, rules, connections, API destinations and archives (the AWS API's TagResource).
	Tags *tag.Service
	// Auth authenticates the requests that send an API key; without it they answer 401.
	Auth Authenticator
	// Sessions signs users in and out and authenticates the requests that send the session cookie; without it
	// the cookie is ignored and signing in is not served.
	Sessions *session.Service
	// Audit writes the audit entry of every audited operation (Operation.Audited); nil writes none. AuditLog
	// lists them.
	Audit    AuditRecorder
	AuditLog *audit.Service
}

// Config configures the router and the dialects.
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
	// PublicURLs are the URLs clients reach the API on (scheme://host[:port]). Their hosts, loopback names and IP
	// addresses are the Host headers answered (421 for others, but on health and webhooks); a session cookie is
	// Secure when one is https; their origins pass the CSRF check besides the request's own.
	PublicURLs []string
	// CORSOrigins are the browser origins (scheme://host[:port]) allowed to call the API from another site, with
	// the Authorization, Content-Type, X-Account-Id and CloudEvents headers; empty allows none (no CORS headers are
	// sent, so browsers refuse cross-site calls that are not simple requests).
	CORSOrigins []string
	// Console is the browser console's build (frontend.Dist()), served at / for the paths no API route serves;
	// nil or without index.html, those paths answer that the binary was built without the console.
	Console fs.FS
	// Metrics is told what the API answers and stores, and serves GET /metrics (instance administrators); nil
	// counts nothing and /metrics answers 404.
	Metrics Metrics
	// AWSRegion is the region the Amazon EventBridge API answers for (its requests must be signed for it, its ARNs
	// name it); empty is us-east-1.
	AWSRegion string
	// Tracer, when set, makes a server span of every operation called but the health probes (traced); nil traces
	// nothing.
	Tracer trace.Tracer
}

// Metrics is the control plane's metrics as the API feeds and serves them.
type Metrics interface {
	// Answered is told of every request answered: its operation ("" when no route matched), status and time.
	Answered(operation string, status int, took time.Duration)
	// Put is told of n events of a PutEvents call on a bus of an account, by outcome: "stored", "duplicate", or the
	// error code of their entry (InvalidEvent, EventTooLarge, ...).
	Put(accountID, busName, outcome string, n int)
	// Webhook is told of a request a webhook source stored, by outcome: "stored" or "duplicate".
	Webhook(accountID, busName, sourceName, outcome string)
	// Handler serves the metrics in Prometheus' text format.
	Handler() http.Handler
}

// Operation is one operation of a dialect, declared once: its stable name, the route that serves it, the
// permission it needs and its handler. The router is built from these tables, so every route has an operation, a
// name that logs refer to, and a permission that one middleware enforces.
type Operation struct {
	// Name is stable and unique to the operation: "<resource>.<verb>" for /api/v1 ("buses.create"),
	// "<dialect>.<action>" for the others ("rocketmq.putEvents"). An operation served on several routes (a webhook
	// on every method) has one name.
	Name   string
	Method string
	// Path is gin's pattern: "/api/v1/buses/:bus".
	Path    string
	Handler gin.HandlerFunc
	// Public operations need no credential and take no account: health, the API's documentation, webhooks (their
	// token is the capability), the console's files.
	Public bool
	// Permission is what the caller needs (access.Permission): every operation that is not Public names one, in
	// the account the request selects unless the permission is of the instance (access.ManageInstance) or of
	// anyone authenticated (access.Authenticated).
	Permission access.Permission
	// AnyBody takes a body of any Content-Type (PutEvents in binary mode, webhooks); every other operation
	// answers 415 for a body that is not JSON (application/json or a +json type), which no cross-site form can send.
	AnyBody bool
	// Audit says whether its calls write an audit entry (AuditDefault: unless Public).
	Audit AuditPolicy
	// AnyHost is answered whatever the Host header (health, webhooks); every other operation answers 421 for a
	// Host that is not one of Config.PublicURLs', a loopback name or an IP address (DNS rebinding).
	AnyHost bool
	// Target, when set, selects the operation among those of its dialect on the same Method and Path by the value
	// of the dialect's TargetHeader (AWS's JSON protocols: every operation is POST / with X-Amz-Target naming it).
	// TargetOther is the operation that answers the requests whose header names none of them, or is absent.
	Target string
}

// TargetOther is the Target of the operation that answers, at a Method and Path served by targeted operations,
// the requests whose target header names none of them.
const TargetOther = "?"

// Route is the path the router registers the operation on: Path, or for a targeted operation Path followed by
// "#" and its Target. No request reaches such a path by itself (Router.ServeHTTP sends those whose path holds a
// "#" nowhere); Router.ServeHTTP routes a request to it by its target header.
func (op Operation) Route() string {
	if op.Target == "" {
		return op.Path
	}
	return op.Path + "#" + op.Target
}

// Dialect is one API the control plane speaks.
type Dialect struct {
	// Name names the dialect in logs and tests: "web", "rest", "rocketmq".
	Name string
	// Account returns the account a request names in the dialect's way (a header, a path parameter), "" when it
	// names none (the caller's home account applies), or an error about the field. The router calls it for the
	// operations whose permission applies in an account, after authentication, and then checks that the caller may
	// act there (see guard).
	Account func(c *gin.Context) (string, error)
	// WriteError answers err in the dialect's error shape and stops the handler chain.
	WriteError func(c *gin.Context, err error)
	// Authenticate, when set, authenticates the dialect's requests in its own way (AWS's Signature Version 4)
	// instead of API keys and session cookies; its errors are as Authenticator's, or the dialect's own, answered
	// through WriteError.
	Authenticate func(c *gin.Context) (*access.Principal, error)
	// TargetHeader names the request header whose value selects among the dialect's operations that share a
	// Method and Path (Operation.Target).
	TargetHeader string
	Operations   []Operation
}

// NewDialect makes a dialect from the configuration and the services; rest.New and rocketmq.New are ones.
type NewDialect func(cfg Config, s Services) Dialect

// router holds what the router's own operations need.
type router struct {
	log     *slog.Logger
	ready   func(ctx context.Context) error
	metrics Metrics
}

const operationKey = "eventbridge.operation"

// OperationOf returns the name of the operation that serves the request ("" when no route matched).
func OperationOf(c *gin.Context) string { return c.GetString(operationKey) }

// Router is the control plane's HTTP handler: the gin engine that serves every operation, and in front of it the
// selection of targeted operations (Operation.Target) by their header.
type Router struct {
	*gin.Engine
	// targeted holds, for each "<method> <path>" served by targeted operations, the header that selects them and
	// their targets.
	targeted map[string]targetedRoute
}

type targetedRoute struct {
	header  string
	targets map[string]bool
}

type originalURLKey struct{}

// OriginalURL is a copy of the request's URL as the client sent it: a targeted operation's request is routed on
// Operation.Route, which the request's URL then holds; a verifier of a signature over the path needs this.
func OriginalURL(c *gin.Context) *url.URL {
	u, ok := c.Request.Context().Value(originalURLKey{}).(*url.URL)
	if !ok {
		u = c.Request.URL
	}
	out := *u
	return &out
}

// ServeHTTP routes a request for a path that targeted operations serve to the operation its header names (or to
// the dialect's TargetOther operation), then serves it through the engine. A request whose own path holds "#"
// (which only a raw request line can send) is served as one for a path nothing serves.
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if len(r.targeted) > 0 {
		if t, ok := r.targeted[req.Method+" "+req.URL.Path]; ok {
			target := req.Header.Get(t.header)
			if !t.targets[target] {
				target = TargetOther
			}
			req = routed(req, req.URL.Path+"#"+target)
		} else if strings.Contains(req.URL.Path, "#") {
			req = routed(req, "/#")
		}
	}
	r.Engine.ServeHTTP(w, req)
}

// routed is a shallow copy of req for path, that remembers the URL it was sent to (OriginalURL).
func routed(req *http.Request, path string) *http.Request {
	u := *req.URL
	u.Path, u.RawPath = path, ""
	out := req.WithContext(context.WithValue(req.Context(), originalURLKey{}, req.URL))
	out.URL = &u
	return out
}

// NewRouter returns the control plane's HTTP handler: the router's own operations (/healthz, /readyz,
// Swagger UI at /swagger/index.html), the operations of every dialect that dialects make, and the console at / for
// the paths no route serves (console.go). A route is registered only from an operation table. Every error the
// router raises itself is answered as a problem document; a panic in a handler is logged and answered 500.
func NewRouter(cfg Config, s Services, dialects ...NewDialect) *Router {
	gin.SetMode(gin.ReleaseMode)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	rt := &router{log: cfg.Logger, ready: cfg.Ready, metrics: cfg.Metrics}

	r := gin.New()
	r.HandleMethodNotAllowed = true
	// A bus's name may hold slashes (AWS's names), sent escaped (%2F) in a path: routes match the escaped path and
	// parameters are unescaped.
	r.UseRawPath = true
	all := rt.dialects(cfg, s, dialects)
	anyHost := map[string]bool{}
	out := &Router{Engine: r, targeted: map[string]targetedRoute{}}
	for _, d := range all {
		for _, op := range d.Operations {
			if op.AnyHost {
				anyHost[op.Route()] = true
			}
			if op.Target == "" {
				continue
			}
			if d.TargetHeader == "" {
				panic(fmt.Sprintf("web: operation %s has a target, but dialect %s names no TargetHeader", op.Name, d.Name))
			}
			key := op.Method + " " + op.Path
			t, ok := out.targeted[key]
			if !ok {
				t = targetedRoute{header: d.TargetHeader, targets: map[string]bool{}}
				out.targeted[key] = t
			}
			t.targets[op.Target] = true
		}
	}
	r.Use(rt.logRequests, rt.recovery, requestContext(cfg), checkHost(newHosts(cfg.PublicURLs), anyHost))
	if len(cfg.CORSOrigins) > 0 {
		r.Use(cors.New(cors.Config{
			AllowOrigins: cfg.CORSOrigins,
			AllowMethods: []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
			AllowHeaders: []string{"Authorization", "Content-Type", "X-Account-Id", "resourceOwnerAccountId",
				"ce-specversion", "ce-id", "ce-source", "ce-type", "ce-subject", "ce-time", "ce-dataschema"},
			ExposeHeaders: []string{"WWW-Authenticate"},
			MaxAge:        10 * time.Minute,
		}))
	}
	r.NoMethod(noMethod)

	var accounts AccountReader
	if s.Accounts != nil {
		accounts = s.Accounts
	}
	var sessions SessionAuthenticator
	if s.Sessions != nil {
		sessions = s.Sessions
	}
	for _, d := range all {
		for _, op := range d.Operations {
			chain := handlersOf(d, op, guard{d: d, perm: op.Permission, auth: s.Auth, sessions: sessions,
				accounts: accounts, anyBody: op.AnyBody}, s.Audit)
			if cfg.Tracer != nil && !strings.HasPrefix(op.Name, "health.") { // probes every few seconds are noise
				chain = append([]gin.HandlerFunc{traced(cfg.Tracer, op)}, chain...)
			}
			r.Handle(op.Method, op.Route(), chain...)
		}
	}
	consoleRoutes(r, cfg.Logger, cfg.Console)
	return out
}

// Dialects returns the dialects that NewRouter builds from cfg, s and dialects, the router's own first: the
// operation tables that a test (or a permission table) enumerates.
func Dialects(cfg Config, s Services, dialects ...NewDialect) []Dialect {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return (&router{log: cfg.Logger, ready: cfg.Ready}).dialects(cfg, s, dialects)
}

// dialects is the router's own dialect followed by those that dialects make.
func (rt *router) dialects(cfg Config, s Services, dialects []NewDialect) []Dialect {
	out := []Dialect{rt.dialect()}
	for _, nd := range dialects {
		out = append(out, nd(cfg, s))
	}
	return out
}

// handlersOf is the chain of an operation: its name is recorded, its audit entry is written once it is answered
// (when rec is set and the operation is audited), then, unless the operation is Public, the guard g
// authenticates the caller, checks the body's type, selects the account and checks the operation's permission
// there; a Public operation's body must be JSON unless it takes any. Then the handler runs. An operation that is
// not Public and names no valid permission, or is Public and names one, is a programming error: it panics, so
// that no route is ever served unguarded by mistake.
func handlersOf(d Dialect, op Operation, g guard, rec AuditRecorder) []gin.HandlerFunc {
	name := op.Name
	chain := []gin.HandlerFunc{func(c *gin.Context) { c.Set(operationKey, name) }}
	if rec != nil && op.Audited() {
		chain = append(chain, auditing(rec, op))
	}
	switch {
	case op.Public && op.Permission != "":
		panic(fmt.Sprintf("web: public operation %s names permission %q", op.Name, op.Permission))
	case !op.Public && !op.Permission.Valid():
		panic(fmt.Sprintf("web: operation %s names no valid permission (%q)", op.Name, op.Permission))
	case !op.Public:
		chain = append(chain, g.handle)
	case !op.AnyBody:
		chain = append(chain, func(c *gin.Context) {
			if requireJSON(c, d.WriteError) {
				c.Next()
			}
		})
	}
	return append(chain, op.Handler)
}

// requestContext records what later handlers read of the request and the configuration: the client's address,
// whether cookies are Secure, the public origins.
func requestContext(cfg Config) gin.HandlerFunc {
	secure := false
	var origins []string
	for _, s := range cfg.PublicURLs {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			continue
		}
		secure = secure || u.Scheme == "https"
		origins = append(origins, u.Scheme+"://"+u.Host)
	}
	return func(c *gin.Context) {
		c.Set(clientKey, clientIP(c.Request, cfg.TrustedProxies))
		if cfg.Metrics != nil {
			c.Set(metricsKey, cfg.Metrics)
		}
		c.Set(secureKey, secure)
		c.Set(originsKey, origins)
		c.Next()
	}
}

// swaggerInitializer starts Swagger UI on the API's document (the distribution's own starts it on the petstore).
const swaggerInitializer = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: "doc.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "StandaloneLayout"
  });
};
`

// swaggerIndex is Swagger UI's page, served as is (http.FileServer redirects /index.html to the directory).
var swaggerIndex = func() []byte {
	b, err := fs.ReadFile(swaggerFiles.FS, "index.html")
	if err != nil {
		panic(err) // embedded in the binary
	}
	return b
}()

// dialect is the router's own operations: health and the API's documentation. Swagger UI's files are served from
// the binary as they are embedded (github.com/swaggo/files/v2): the first version of that package copied them into
// an in-memory file system at start, 9 MB of heap that every process kept live.
func (rt *router) dialect() Dialect {
	ui := http.StripPrefix("/swagger", http.FileServerFS(swaggerFiles.FS))
	return Dialect{
		Name:       "web",
		WriteError: func(c *gin.Context, err error) { WriteProblem(c, ProblemOf(rt.log, c.Request, err)) },
		Operations: []Operation{
			{Name: "health.live", Method: http.MethodGet, Path: "/healthz", Handler: rt.healthz, Public: true, AnyHost: true},
			{Name: "health.ready", Method: http.MethodGet, Path: "/readyz", Handler: rt.readyz, Public: true, AnyHost: true},
			{Name: "metrics.read", Method: http.MethodGet, Path: "/metrics", Handler: rt.serveMetrics, Permission: access.ManageInstance,
				Audit: AuditNever}, // scraped every few seconds; it counts itself
			{Name: "docs.swagger", Method: http.MethodGet, Path: "/swagger/*any", Public: true, Handler: func(c *gin.Context) {
				switch c.Param("any") {
				case "", "/": // /swagger (redirected here with its slash) leads to the UI
					c.Redirect(http.StatusMovedPermanently, "/swagger/index.html")
					return
				case "/doc.json":
					c.Data(http.StatusOK, "application/json; charset=utf-8", docs.SwaggerJSON)
					return
				case "/index.html":
					c.Data(http.StatusOK, "text/html; charset=utf-8", swaggerIndex)
					return
				case "/swagger-initializer.js":
					c.Data(http.StatusOK, "text/javascript; charset=utf-8", []byte(swaggerInitializer))
					return
				}
				if fi, err := fs.Stat(swaggerFiles.FS, strings.TrimPrefix(c.Param("any"), "/")); err != nil || fi.IsDir() {
					noRoute(c)
					return
				}
				ui.ServeHTTP(c.Writer, c.Request)
			}},
		},
	}
}

// recovery turns a panic in a handler into a logged error and a 500 problem document.
func (rt *router) recovery(c *gin.Context) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v) // net/http's way to abort a response: it handles it, quietly
		}
		rt.log.Error("panic in handler", "method", c.Request.Method, "path", redactPath(c.Request.URL.Path),
			"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		if c.Writer.Written() {
			c.Abort() // too late for a problem document; the client sees a truncated response
			return
		}
		WriteProblem(c, NewProblem(http.StatusInternalServerError, domain.ErrInternal.Code, "",
			"an internal error occurred; it has been logged"))
	}()
	c.Next()
}

// logRequests logs every request at debug level once it is answered.
func (rt *router) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	if rt.metrics != nil {
		rt.metrics.Answered(OperationOf(c), c.Writer.Status(), time.Since(start))
	}
	rt.log.LogAttrs(c.Request.Context(), slog.LevelDebug, "request",
		slog.String("method", c.Request.Method),
		slog.String("path", redactPath(c.Request.URL.Path)),
		slog.Int("status", c.Writer.Status()),
		slog.Int("bytes", c.Writer.Size()),
		slog.Duration("duration", time.Since(start)),
		slog.String("operation", OperationOf(c)),
		slog.String("account", AccountOf(c)))
}

func noRoute(c *gin.Context) {
	WriteProblem(c, NewProblem(http.StatusNotFound, CodeRouteNotFound, "",
		fmt.Sprintf("no route %s %s", c.Request.Method, c.Request.URL.Path)))
}

func noMethod(c *gin.Context) {
	WriteProblem(c, NewProblem(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "",
		fmt.Sprintf("%s is not allowed on %s; allowed: %s", c.Request.Method, c.Request.URL.Path, c.Writer.Header().Get("Allow"))))
}

const metricsKey = "eventbridge.metrics"

// countPut tells the metrics of c, if any, of the outcome of every entry of a PutEvents call.
func countPut(c *gin.Context, accountID, busName string, entries []PutEventsResultEntry) {
	m, ok := c.Get(metricsKey)
	if !ok {
		return
	}
	n := map[string]int{}
	for _, e := range entries {
		switch {
		case e.ErrorCode != "":
			n[e.ErrorCode]++
		case e.Duplicate:
			n["duplicate"]++
		default:
			n["stored"]++
		}
	}
	for outcome, k := range n {
		m.(Metrics).Put(accountID, busName, outcome, k)
	}
}

// CountWebhook tells the metrics of c, if any, of a request a webhook source stored (outcome "stored" or
// "duplicate").
func CountWebhook(c *gin.Context, accountID, busName, sourceName, outcome string) {
	if m, ok := c.Get(metricsKey); ok {
		m.(Metrics).Webhook(accountID, busName, sourceName, outcome)
	}
}

// serveMetrics answers the control plane's metrics in Prometheus' text format: PutEvents by bus and outcome, API
// requests by operation and status with their latency, authentication failures, reconciliation passes, the health
// and counters of every target and source (docs/operations.md).
//
//	@Summary	Prometheus metrics of the control plane (instance administrators)
//	@Tags		health
//	@Produce	plain
//	@Security	BearerAuth
//	@Success	200	{string}	string	"text/plain; version=0.0.4"
//	@Failure	401	{object}	Problem	"Unauthenticated"
//	@Failure	403	{object}	Problem	"Forbidden: not an instance administrator"
//	@Failure	404	{object}	Problem	"this process serves no metrics"
//	@Router		/metrics [get]
func (rt *router) serveMetrics(c *gin.Context) {
	if rt.metrics == nil {
		WriteProblem(c, NewProblem(http.StatusNotFound, CodeRouteNotFound, "", "this process serves no metrics"))
		return
	}
	rt.metrics.Handler().ServeHTTP(c.Writer, c.Request)
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
func (rt *router) healthz(c *gin.Context) {
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
func (rt *router) readyz(c *gin.Context) {
	if rt.ready != nil {
		if err := rt.ready(c.Request.Context()); err != nil {
			rt.log.Warn("not ready", "err", err)
			WriteProblem(c, NewProblem(http.StatusServiceUnavailable, domain.ErrUnavailable.Code, "", "the service is not ready"))
			return
		}
	}
	c.JSON(http.StatusOK, Health{Status: "ok"})
}
