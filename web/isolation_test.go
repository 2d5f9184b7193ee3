package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/eventstore"
	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/apikey"
	"github.com/eventbridge-go/eventbridge/domain/history"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/web/aws"
	"github.com/eventbridge-go/eventbridge/web/rest"
)

// Account isolation: account a, with an administrator's API key of its own, can neither see nor change anything of
// account b (whose resources b's own key made), on any route of any API.
// Whatever a names of b's answers exactly as a name that exists nowhere: 404 with a *NotFound problem on /api/v1,
// 409 with a *NotExist code on the RocketMQ EventBridge API, 400 ResourceNotFoundException on the Amazon EventBridge
// API (whose requests of a env.do signs with an access key of a); never 403 or AccessDeniedException (which would
// confirm the name exists), never a conflict that names b's resources (BusNotEmpty, ConnectionInUse, ...).

// Names of the resources of the accounts; every name of b ends in "-of-b", so an answer that holds that suffix
// shows something of b.
const (
	isoA, isoB = "a", "b"
	ofB        = "-of-b"

	busOfB, dlqOfB, ruleOfB, targetOfB, apiTargetOfB = "bus-of-b", "dlq-of-b", "rule-of-b", "target-of-b", "apitarget-of-b"
	connOfB, destOfB, sourceOfB, typeOfB             = "conn-of-b", "dest-of-b", "source-of-b", "type-of-b"
	archiveOfB, replayOfB, archiveOfA, replayOfA     = "archive-of-b", "replay-of-b", "archive-of-a", "replay-of-a"

	busOfA, ruleOfA, connOfA, destOfA, sourceOfA = "bus-of-a", "rule-of-a", "conn-of-a", "dest-of-a", "source-of-a"
	// nowhere is a name no account has: a reference to b's resource must fail exactly as one to it.
	nowhere = "nowhere"
)

// isolationExempt are the routes that name no resource of an account, so have no isolation case.
var isolationExempt = map[string]string{
	"GET /healthz":                        "liveness: no account, no resource",
	"GET /readyz":                         "readiness: no account, no resource",
	"GET /swagger/*any":                   "the OpenAPI document and Swagger UI: static",
	"POST /api/v1/test-event-pattern":     "matches a pattern against an event given in the body; reads no stored resource",
	"POST /api/v1/test-input-transformer": "transforms an event given in the body; reads no stored resource",

	"GET /api/v1/runtime/workers":                "the runtime's workers are shared by every account",
	"GET /api/v1/runtime/plugins":                "the runtime's plugins are shared by every account",
	"GET /api/v1/runtime/plugins/:plugin/schema": "the runtime's plugins are shared by every account",

	"GET /api/v1/me":                                 "answers the caller itself",
	"GET /api/v1/access-keys":                        "lists the selected account's keys only (TestAccessKeyAPI: another account's are not listed)",
	"POST /api/v1/access-keys":                       "creates a key of the selected account",
	"GET /api/v1/access-keys/:key":                   "another account's key is AccessKeyNotFound (TestAccessKeyAPI)",
	"DELETE /api/v1/access-keys/:key":                "another account's key is AccessKeyNotFound (TestAccessKeyAPI)",
	"PUT /api/v1/me/password":                        "changes the caller's own password",
	"GET /api/v1/audit-log":                          "lists the selected account's entries only, as X-Account-Id selects it (TestAuditLogAPI: another account's are not listed)",
	"POST /api/v1/session":                           "signs a user in: no account",
	"GET /api/v1/session":                            "answers the caller's own session",
	"DELETE /api/v1/session":                         "ends the caller's own session",
	"GET /api/v1/me/sessions":                        "the caller's own sessions, of a user, not of an account",
	"DELETE /api/v1/me/sessions/:session":            "the caller's own sessions: another user's is SessionNotFound (TestSessionsAreTheirUsers)",
	"GET /api/v1/accounts/:account/members":          "the account in the path is selected as X-Account-Id is: 403 for a non-member (TestAccountSelection)",
	"PUT /api/v1/accounts/:account/members/:user":    "the account in the path is selected as X-Account-Id is: 403 for a non-member (TestAccountSelection)",
	"DELETE /api/v1/accounts/:account/members/:user": "the account in the path is selected as X-Account-Id is: 403 for a non-member (TestAccountSelection)",

	"POST /#" + web.TargetOther:  "the Amazon EventBridge API's answer to a request naming no operation: names no resource",
	awsRoute("TestEventPattern"): "matches a pattern against an event given in the body; reads no stored resource",
}

// The operations of instance administrators name no account's resource: every account's key is refused them
// (TestPermissionMatrix).
func init() {
	for _, r := range []string{"GET /api/v1/accounts", "POST /api/v1/accounts", "GET /api/v1/accounts/:account", "PATCH /api/v1/accounts/:account",
		"DELETE /api/v1/accounts/:account", "GET /api/v1/users", "POST /api/v1/users", "GET /api/v1/users/:user",
		"PATCH /api/v1/users/:user", "DELETE /api/v1/users/:user", "GET /metrics"} {
		isolationExempt[r] = "instance administrators only"
	}
}

// The webhooks of http sources take no account, like /healthz: the token in the request names the source, and
// answers are the same whoever sends it (that is what a webhook is); a token names no account's resource to
// another. TestWebhooks covers them.
func init() {
	for _, m := range rest.WebhookMethods {
		isolationExempt[m+" /webhook/putEvents"] = "webhook: the token names the source, no account"
		isolationExempt[m+" /api/v1/webhooks/:token"] = "webhook: the token names the source, no account"
	}
}

// srcReq names a source in RocketMQ EventBridge's shape.
func srcReq(bus, name string) map[string]any {
	return map[string]any{"eventBusName": bus, "eventSourceName": name}
}

// isolationCase is one request of account a that names resources of account b.
type isolationCase struct {
	// route is the route as the router lists it: method and path with its parameters ("GET /api/v1/buses/:bus").
	route string
	name  string
	// url is the request's URL; "" means the route's path (the RocketMQ EventBridge routes have no parameters).
	url     string
	body    any
	headers map[string]string

	// What the answer must be; exactly one of:
	//  - notFound: the code of the answer, with 404 on /api/v1 and 409 on the RocketMQ EventBridge API;
	//  - list: a list of a's resources that holds own (a name of a's) and nothing of b's;
	//  - create: a resource of a named like one of b's is created (a conflict would confirm b's name), and undone
	//    by undo, so later cases do not see it;
	//  - sameAs: the answer equals (status and code) that of the same request with every name of b replaced by
	//    nowhere, a name no account has (references from a's resources to b's). On the Amazon EventBridge API, which
	//    answers some of those with success (deleting a bus that does not exist) or per entry (PutEvents), the whole
	//    answers are equal but for the name.
	// On the Amazon EventBridge API the code is the exception (__type), a notFound is 400 and a create 200.
	notFound string
	list     bool
	own      string
	create   bool
	// status is the status of a create: 201 on /api/v1, 200 on the RocketMQ EventBridge API when 0.
	status int
	undo   func(t *testing.T, e *env)
	sameAs bool
	// json maps dotted paths of the answer to the values they must hold, besides the above (PutEvents' entries).
	json map[string]any
}

func (c isolationCase) rocketMQ() bool { return !strings.Contains(c.route, " /api/v1/") && !c.aws() }

// aws tells a case of the Amazon EventBridge API, whose routes are "POST /#AWSEvents.<Operation>" (awsRoute).
func (c isolationCase) aws() bool { return strings.Contains(c.route, " /#") }

// code is the error code of an answer to c: the exception on the Amazon EventBridge API.
func (c isolationCase) code(t *testing.T, resp *response) string {
	t.Helper()
	if c.aws() {
		return awsTypeOf(t, resp)
	}
	return codeOf(t, resp)
}

func (c isolationCase) method() string { return strings.SplitN(c.route, " ", 2)[0] }

func (c isolationCase) target() string {
	if c.url != "" {
		return c.url
	}
	return strings.SplitN(c.route, " ", 2)[1]
}

// asA sends the request as account a; every name of b in the URL and the body is replaced by replaceB when it is
// not "".
func (c isolationCase) asA(t *testing.T, e *env, replaceB string) *response {
	t.Helper()
	url, body := c.target(), c.body
	if replaceB != "" {
		url = replaceNamesOfB(url, replaceB)
		if body != nil {
			body = replaceNamesOfB(string(jsonOf(t, body)), replaceB)
		}
	}
	headers := e.as(isoA)
	for k, v := range c.headers {
		headers[k] = v
	}
	return e.do(t, c.method(), url, headers, body)
}

// replaceNamesOfB replaces every name of b in s by name.
func replaceNamesOfB(s, name string) string {
	for _, n := range []string{apiTargetOfB, busOfB, dlqOfB, ruleOfB, targetOfB, connOfB, destOfB} {
		s = strings.ReplaceAll(s, n, name)
	}
	return s
}

const (
	v1Bus    = "/api/v1/buses/" + busOfB
	v1Rule   = v1Bus + "/rules/" + ruleOfB
	v1Target = v1Rule + "/targets/" + targetOfB
	v1OwnTgt = "/api/v1/buses/" + busOfA + "/rules/" + ruleOfA + "/targets/t"
	v1Src    = v1Bus + "/sources/" + sourceOfB
	v1OwnSrc = "/api/v1/buses/" + busOfA + "/sources"
	v1Arch   = v1Bus + "/archives/" + archiveOfB
	v1OwnArc = "/api/v1/buses/" + busOfA + "/archives"
	// v1Conn is the router connector of b's bus in the runtime.
	v1Conn = "/api/v1/runtime/connectors/eb." + isoB + "." + busOfB + ".router"
)

// awsRoute is the route of an operation of the Amazon EventBridge API ("ListEventBuses"), as the router lists it; its
// path is the URL env.do sends that operation's request to.
func awsRoute(operation string) string { return "POST /#" + aws.TargetPrefix + operation }

// awsNotFound is the exception of the Amazon EventBridge API for what does not exist.
const awsNotFound = "ResourceNotFoundException"

// Names of the Amazon EventBridge API: b's bus by its ARN; ARNs in a's account (awsBusInA, followed by a bus's name;
// a's log target; b's http target as if it were a's).
var (
	awsBusOfB    = "arn:aws:events:" + aws.DefaultRegion + ":" + account.AWSAccountID(isoB) + ":event-bus/" + busOfB
	awsBusInA    = "arn:aws:events:" + aws.DefaultRegion + ":" + account.AWSAccountID(isoA) + ":event-bus/"
	awsLogOfA    = "arn:aws:" + aws.OwnService + ":" + aws.DefaultRegion + ":" + account.AWSAccountID(isoA) + ":log"
	awsTargetOfB = "arn:aws:" + aws.OwnService + ":" + aws.DefaultRegion + ":" + account.AWSAccountID(isoA) + ":http/https://b.example.com/hook"
	awsRuleOfB   = map[string]any{"Name": ruleOfB, "EventBusName": busOfB}
	awsPattern   = `{"source":["x"]}`
	awsEventsOnB = map[string]any{"Entries": []any{map[string]any{"Source": sourceOfA, "DetailType": "order.created",
		"Detail": `{"id":5}`, "EventBusName": busOfB}}}
	// awsEntryNotFound is a PutEvents answer whose one entry failed for its bus.
	awsEntryNotFound = map[string]any{"FailedEntryCount": 1, "Entries.0.ErrorCode": awsNotFound}

	// Part 2: ARNs of b's connection and archive in b's account, and ARNs in a's account (followed by a name).
	awsConnOfB    = "arn:aws:events:" + aws.DefaultRegion + ":" + account.AWSAccountID(isoB) + ":connection/" + connOfB
	awsConnInA    = "arn:aws:events:" + aws.DefaultRegion + ":" + account.AWSAccountID(isoA) + ":connection/"
	awsArchiveOfB = "arn:aws:events:" + aws.DefaultRegion + ":" + account.AWSAccountID(isoB) + ":archive/" + archiveOfB
	awsArchiveInA = "arn:aws:events:" + aws.DefaultRegion + ":" + account.AWSAccountID(isoA) + ":archive/"
	// awsDestination is an API destination of CreateApiDestination on the connection whose ARN is conn.
	awsDestination = func(name, conn string) map[string]any {
		return map[string]any{"Name": name, "ConnectionArn": conn, "InvocationEndpoint": "https://api.example.com/orders/*", "HttpMethod": "POST"}
	}
	// awsReplay is a StartReplay of the last hour of the archive whose ARN is archive, to the bus whose ARN is dest.
	awsReplay = func(name, archive, dest string) map[string]any {
		return map[string]any{"ReplayName": name, "EventSourceArn": archive, "EventStartTime": awsNow(-time.Hour),
			"EventEndTime": awsNow(0), "Destination": map[string]any{"Arn": dest}}
	}
)

// awsNow is a time of the Amazon EventBridge API, seconds since the epoch as AWS's SDKs send it: the time at which it
// is encoded, plus itself.
type awsNow time.Duration

func (d awsNow) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(time.Now().Add(time.Duration(d)).UnixMilli())/1000, 'f', 3, 64)), nil
}

// isolationCases covers every route of the router but isolationExempt (TestAccountIsolationCoversEveryRoute).
// Cases run in order, but the ones that create resources of a run last and undo what they made.
var isolationCases = []isolationCase{
	// Buses.
	{route: "GET /api/v1/buses", name: "list", list: true, own: busOfA},
	{route: "GET /api/v1/buses/:bus", name: "get", url: v1Bus, notFound: "BusNotFound"},
	{route: "PATCH /api/v1/buses/:bus", name: "patch", url: v1Bus, body: map[string]any{"description": "changed by a"}, notFound: "BusNotFound"},
	{route: "DELETE /api/v1/buses/:bus", name: "delete a bus with rules", url: v1Bus, notFound: "BusNotFound"},
	{route: "DELETE /api/v1/buses/:bus", name: "delete a dead-letter bus", url: "/api/v1/buses/" + dlqOfB, notFound: "BusNotFound"},
	{route: "POST /api/v1/buses/:bus/events", name: "put events", url: v1Bus + "/events", headers: map[string]string{"Content-Type": batch},
		body: []any{ce("e1", sourceOfA, "order.created", map[string]any{"id": 1})}, notFound: "BusNotFound"},
	{route: "GET /api/v1/buses/:bus/event-types", name: "event types", url: v1Bus + "/event-types", notFound: "BusNotFound"},
	{route: "GET /api/v1/buses/:bus/events", name: "search", url: v1Bus + "/events", notFound: "BusNotFound"},
	{route: "GET /api/v1/metrics", name: "metrics history", url: "/api/v1/metrics", list: true, own: busOfA},
	{route: "GET /api/v1/metrics", name: "metrics history of b's bus", url: "/api/v1/metrics?bus=" + busOfB, list: true},
	{route: "GET /api/v1/buses/:bus/tail", name: "tail", url: v1Bus + "/tail", notFound: "BusNotFound"},
	{route: "GET /api/v1/buses/:bus/log", name: "log", url: v1Bus + "/log", notFound: "BusNotFound"},
	{route: "GET /api/v1/buses/:bus/events/:id/trace", name: "trace", url: v1Bus + "/events/b1/trace?source=" + sourceOfB, notFound: "BusNotFound"},
	{route: "POST /api/v1/buses/:bus/test-event", name: "test an event", url: v1Bus + "/test-event",
		body: map[string]any{"event": ce("e9", sourceOfA, "order.created", map[string]any{"id": 9})}, notFound: "BusNotFound"},

	// Archives and replays.
	{route: "GET /api/v1/buses/:bus/archives", name: "list b's", url: v1Bus + "/archives", notFound: "BusNotFound"},
	{route: "GET /api/v1/buses/:bus/archives", name: "list a's", url: v1OwnArc, list: true, own: archiveOfA},
	{route: "POST /api/v1/buses/:bus/archives", name: "create on b's bus", url: v1Bus + "/archives", body: map[string]any{"name": "new"},
		notFound: "BusNotFound"},
	{route: "GET /api/v1/buses/:bus/archives/:archive", name: "get", url: v1Arch, notFound: "BusNotFound"},
	{route: "GET /api/v1/buses/:bus/archives/:archive", name: "get b's name on a's bus", url: v1OwnArc + "/" + archiveOfB, notFound: "ArchiveNotFound"},
	{route: "PATCH /api/v1/buses/:bus/archives/:archive", name: "patch", url: v1Arch, body: map[string]any{"description": "changed by a"},
		notFound: "BusNotFound"},
	{route: "PATCH /api/v1/buses/:bus/archives/:archive", name: "patch b's name on a's bus", url: v1OwnArc + "/" + archiveOfB,
		body: map[string]any{"description": "changed by a"}, notFound: "ArchiveNotFound"},
	{route: "DELETE /api/v1/buses/:bus/archives/:archive", name: "delete", url: v1Arch, notFound: "BusNotFound"},
	{route: "DELETE /api/v1/buses/:bus/archives/:archive", name: "delete b's name on a's bus", url: v1OwnArc + "/" + archiveOfB, notFound: "ArchiveNotFound"},
	{route: "POST /api/v1/buses/:bus/archives", name: "create a's archive with b's name", url: v1OwnArc, body: map[string]any{"name": archiveOfB},
		create: true, undo: deleteAsA(v1OwnArc + "/" + archiveOfB)},
	{route: "GET /api/v1/replays", name: "list", list: true, own: replayOfA},
	{route: "GET /api/v1/replays/:replay", name: "get", url: "/api/v1/replays/" + replayOfB, notFound: "ReplayNotFound"},
	{route: "POST /api/v1/replays/:replay/cancel", name: "cancel", url: "/api/v1/replays/" + replayOfB + "/cancel", notFound: "ReplayNotFound"},
	{route: "POST /api/v1/replays", name: "replay b's archive", body: map[string]any{"name": "new", "archive": archiveOfB,
		"eventStartTime": "2026-01-01T00:00:00Z", "eventEndTime": "2026-01-02T00:00:00Z"}, notFound: "ArchiveNotFound"},

	// Rules.
	{route: "GET /api/v1/buses/:bus/rules", name: "list", url: v1Bus + "/rules", notFound: "BusNotFound"},
	{route: "POST /api/v1/buses/:bus/rules", name: "create on b's bus", url: v1Bus + "/rules",
		body: map[string]any{"name": "new", "eventPattern": map[string]any{"source": []any{"x"}}}, notFound: "BusNotFound"},
	{route: "GET /api/v1/buses/:bus/rules/:rule", name: "get", url: v1Rule, notFound: "BusNotFound"},
	{route: "PUT /api/v1/buses/:bus/rules/:rule", name: "replace", url: v1Rule,
		body: map[string]any{"eventPattern": map[string]any{"source": []any{"x"}}}, notFound: "BusNotFound"},
	{route: "PATCH /api/v1/buses/:bus/rules/:rule", name: "patch", url: v1Rule, body: map[string]any{"description": "changed by a"}, notFound: "BusNotFound"},
	{route: "DELETE /api/v1/buses/:bus/rules/:rule", name: "delete", url: v1Rule, notFound: "BusNotFound"},
	{route: "POST /api/v1/buses/:bus/rules/:rule/enable", name: "enable", url: v1Rule + "/enable", notFound: "BusNotFound"},
	{route: "POST /api/v1/buses/:bus/rules/:rule/disable", name: "disable", url: v1Rule + "/disable", notFound: "BusNotFound"},

	// Targets.
	{route: "GET /api/v1/buses/:bus/rules/:rule/targets", name: "list", url: v1Rule + "/targets", notFound: "BusNotFound"},
	{route: "GET /api/v1/buses/:bus/rules/:rule/targets/:target", name: "get", url: v1Target, notFound: "BusNotFound"},
	{route: "PUT /api/v1/buses/:bus/rules/:rule/targets/:target", name: "replace", url: v1Target,
		body: map[string]any{"type": "http", "config": map[string]any{"url": "https://a.example.com/"}}, notFound: "BusNotFound"},
	{route: "DELETE /api/v1/buses/:bus/rules/:rule/targets/:target", name: "delete", url: v1Target, notFound: "BusNotFound"},
	{route: "PUT /api/v1/buses/:bus/rules/:rule/targets/:target", name: "a's bus target to b's bus", url: v1OwnTgt,
		body: map[string]any{"type": "bus", "config": map[string]any{"bus": busOfB}}, sameAs: true},
	{route: "PUT /api/v1/buses/:bus/rules/:rule/targets/:target", name: "a's target dead-lettering to b's bus", url: v1OwnTgt,
		body: map[string]any{"type": "log", "deadLetterConfig": map[string]any{"bus": dlqOfB}}, sameAs: true},
	{route: "PUT /api/v1/buses/:bus/rules/:rule/targets/:target", name: "a's target to b's API destination", url: v1OwnTgt,
		body: map[string]any{"type": "api-destination", "config": map[string]any{"apiDestination": destOfB,
			"pathParameterValues": []any{"$.data.id"}}}, sameAs: true},
	{route: "POST /api/v1/buses/:bus/rules", name: "a's rule with a target to b's bus", url: "/api/v1/buses/" + busOfA + "/rules",
		body: map[string]any{"name": "new", "eventPattern": map[string]any{"source": []any{"x"}},
			"targets": []any{map[string]any{"name": "t", "type": "bus", "config": map[string]any{"bus": busOfB}}}}, sameAs: true},

	// Channels.
	{route: "GET /api/v1/buses/:bus/channels/:rule", name: "get", url: v1Bus + "/channels/" + ruleOfB, notFound: "BusNotFound"},
	{route: "PUT /api/v1/buses/:bus/channels/:rule", name: "replace", url: v1Bus + "/channels/" + ruleOfB,
		body: map[string]any{"rule": map[string]any{"eventPattern": map[string]any{"source": []any{"x"}}}, "targets": []any{}}, notFound: "BusNotFound"},
	{route: "PUT /api/v1/buses/:bus/channels/:rule", name: "a's channel with a target to b's bus", url: "/api/v1/buses/" + busOfA + "/channels/" + ruleOfA,
		body: map[string]any{"rule": map[string]any{"eventPattern": map[string]any{"source": []any{"x"}}},
			"targets": []any{map[string]any{"name": "t", "type": "bus", "config": map[string]any{"bus": busOfB}}}}, sameAs: true},

	// Connections.
	{route: "GET /api/v1/connections", name: "list", list: true, own: connOfA},
	{route: "GET /api/v1/connections/:connection", name: "get", url: "/api/v1/connections/" + connOfB, notFound: "ConnectionNotFound"},
	{route: "PATCH /api/v1/connections/:connection", name: "patch", url: "/api/v1/connections/" + connOfB,
		body: map[string]any{"description": "changed by a"}, notFound: "ConnectionNotFound"},
	{route: "DELETE /api/v1/connections/:connection", name: "delete one in use", url: "/api/v1/connections/" + connOfB, notFound: "ConnectionNotFound"},
	{route: "POST /api/v1/connections/:connection/deauthorize", name: "deauthorize", url: "/api/v1/connections/" + connOfB + "/deauthorize", notFound: "ConnectionNotFound"},

	// API destinations.
	{route: "GET /api/v1/api-destinations", name: "list", list: true, own: destOfA},
	{route: "POST /api/v1/api-destinations", name: "create on b's connection", body: destination("new", connOfB), sameAs: true},
	{route: "GET /api/v1/api-destinations/:destination", name: "get", url: "/api/v1/api-destinations/" + destOfB, notFound: "ApiDestinationNotFound"},
	{route: "PUT /api/v1/api-destinations/:destination", name: "create on b's connection", url: "/api/v1/api-destinations/new",
		body: without(destination("new", connOfB), "name"), sameAs: true},
	{route: "PATCH /api/v1/api-destinations/:destination", name: "patch", url: "/api/v1/api-destinations/" + destOfB,
		body: map[string]any{"description": "changed by a"}, notFound: "ApiDestinationNotFound"},
	{route: "PATCH /api/v1/api-destinations/:destination", name: "move a's to b's connection", url: "/api/v1/api-destinations/" + destOfA,
		body: map[string]any{"connection": connOfB}, sameAs: true},
	{route: "DELETE /api/v1/api-destinations/:destination", name: "delete one in use", url: "/api/v1/api-destinations/" + destOfB, notFound: "ApiDestinationNotFound"},

	// Runtime: b's connectors (eb.b.…) are neither listed nor reachable for a.
	{route: "GET /api/v1/runtime/connectors", name: "list", list: true, own: busOfA},
	{route: "POST /api/v1/runtime/connectors/:connector/pause", name: "pause", url: v1Conn + "/pause", notFound: "ConnectorNotFound"},
	{route: "POST /api/v1/runtime/connectors/:connector/resume", name: "resume", url: v1Conn + "/resume", notFound: "ConnectorNotFound"},
	{route: "POST /api/v1/runtime/connectors/:connector/stop", name: "stop", url: v1Conn + "/stop", notFound: "ConnectorNotFound"},
	{route: "POST /api/v1/runtime/connectors/:connector/restart", name: "restart", url: v1Conn + "/restart?includeTasks=true",
		notFound: "ConnectorNotFound"},
	{route: "POST /api/v1/runtime/connectors/:connector/tasks/:task/restart", name: "restart a task", url: v1Conn + "/tasks/0/restart",
		notFound: "ConnectorNotFound"},

	// Dead letters: a's ids are sequences of a's own dead-letter stream; b's dead letter 2 is not a's
	// (seedIsolationDeadLetters).
	{route: "GET /api/v1/dead-letters", name: "list", list: true, own: busOfA},
	{route: "POST /api/v1/dead-letters/redrive", name: "redrive b's id", body: map[string]any{"ids": []string{"2"}},
		notFound: "DeadLetterNotFound"},
	{route: "DELETE /api/v1/dead-letters", name: "discard b's id", body: map[string]any{"ids": []string{"2"}},
		notFound: "DeadLetterNotFound"},

	// Sources: b's bus answers as a bus a does not have; b's source name on a's bus as a source a does not have.
	{route: "GET /api/v1/buses/:bus/sources", name: "list b's", url: v1Bus + "/sources", notFound: "BusNotFound"},
	{route: "GET /api/v1/buses/:bus/sources", name: "list a's", url: v1OwnSrc, list: true, own: sourceOfA},
	{route: "POST /api/v1/buses/:bus/sources", name: "create on b's bus", url: v1Bus + "/sources",
		body: map[string]any{"name": "new", "type": "schedule", "config": map[string]any{"schedule.expression": "rate(1 day)"}}, notFound: "BusNotFound"},
	{route: "GET /api/v1/buses/:bus/sources/:source", name: "get", url: v1Src, notFound: "BusNotFound"},
	{route: "GET /api/v1/buses/:bus/sources/:source", name: "get b's name on a's bus", url: v1OwnSrc + "/" + sourceOfB, notFound: "SourceNotFound"},
	{route: "PUT /api/v1/buses/:bus/sources/:source", name: "replace", url: v1Src,
		body: map[string]any{"type": "schedule", "config": map[string]any{"schedule.expression": "rate(1 day)"}}, notFound: "BusNotFound"},
	{route: "PATCH /api/v1/buses/:bus/sources/:source", name: "patch", url: v1Src, body: map[string]any{"description": "changed by a"}, notFound: "BusNotFound"},
	{route: "PATCH /api/v1/buses/:bus/sources/:source", name: "patch b's name on a's bus", url: v1OwnSrc + "/" + sourceOfB,
		body: map[string]any{"description": "changed by a"}, notFound: "SourceNotFound"},
	{route: "DELETE /api/v1/buses/:bus/sources/:source", name: "delete", url: v1Src, notFound: "BusNotFound"},
	{route: "POST /api/v1/buses/:bus/sources/:source/enable", name: "enable", url: v1Src + "/enable", notFound: "BusNotFound"},
	{route: "POST /api/v1/buses/:bus/sources/:source/disable", name: "disable", url: v1Src + "/disable", notFound: "BusNotFound"},
	{route: "POST /api/v1/buses/:bus/sources/:source/rotate-token", name: "rotate the token", url: v1Src + "/rotate-token", notFound: "BusNotFound"},

	// RocketMQ EventBridge: sources.
	{route: "POST /source/listEventSources", name: "list", body: busReq(busOfB), notFound: "EventBusNotExist"},
	{route: "POST /source/listEventSources", name: "list a's", body: busReq(busOfA), list: true, own: sourceOfA},
	{route: "POST /source/createEventSource", name: "create on b's bus", body: map[string]any{"eventBusName": busOfB,
		"eventSourceName": "new", "className": "schedule", "config": map[string]any{"schedule.expression": "rate(1 day)"}}, notFound: "EventBusNotExist"},
	{route: "POST /source/getEventSource", name: "get", body: srcReq(busOfB, sourceOfB), notFound: "EventBusNotExist"},
	{route: "POST /source/getEventSource", name: "get b's name on a's bus", body: srcReq(busOfA, sourceOfB), notFound: "EventSourceNotExist"},
	{route: "POST /source/updateEventSource", name: "update", body: map[string]any{"eventBusName": busOfB, "eventSourceName": sourceOfB,
		"className": "schedule", "status": 0}, notFound: "EventBusNotExist"},
	{route: "POST /source/deleteEventSource", name: "delete", body: srcReq(busOfB, sourceOfB), notFound: "EventBusNotExist"},

	// RocketMQ EventBridge: buses.
	{route: "POST /bus/listEventBuses", name: "list", body: map[string]any{}, list: true, own: busOfA},
	{route: "POST /bus/getEventBus", name: "get", body: busReq(busOfB), notFound: "EventBusNotExist"},
	{route: "POST /bus/deleteEventBus", name: "delete", body: busReq(busOfB), notFound: "EventBusNotExist"},

	// RocketMQ EventBridge: rules.
	{route: "POST /rule/listEventRules", name: "list", body: busReq(busOfB), notFound: "EventBusNotExist"},
	{route: "POST /rule/createEventRule", name: "create on b's bus",
		body: map[string]any{"eventBusName": busOfB, "eventRuleName": "new", "filterPattern": "{}"}, notFound: "EventBusNotExist"},
	{route: "POST /rule/getEventRule", name: "get", body: ruleReq(busOfB, ruleOfB), notFound: "EventBusNotExist"},
	{route: "POST /rule/updateEventRule", name: "update", body: map[string]any{"eventBusName": busOfB, "eventRuleName": ruleOfB,
		"description": "changed by a"}, notFound: "EventBusNotExist"},
	{route: "POST /rule/deleteEventRule", name: "delete", body: ruleReq(busOfB, ruleOfB), notFound: "EventBusNotExist"},
	{route: "POST /rule/enableEventRule", name: "enable", body: ruleReq(busOfB, ruleOfB), notFound: "EventBusNotExist"},
	{route: "POST /rule/disableEventRule", name: "disable", body: ruleReq(busOfB, ruleOfB), notFound: "EventBusNotExist"},

	// RocketMQ EventBridge: targets.
	{route: "POST /target/listEventTargets", name: "list", body: ruleReq(busOfB, ruleOfB), notFound: "EventBusNotExist"},
	{route: "POST /target/createEventTargets", name: "create on b's rule",
		body: targetsReq(busOfB, ruleOfB, httpTarget("new", "https://a.example.com/")), notFound: "EventBusNotExist"},
	{route: "POST /target/updateEventTargets", name: "update",
		body: targetsReq(busOfB, ruleOfB, httpTarget(targetOfB, "https://a.example.com/")), notFound: "EventBusNotExist"},
	{route: "POST /target/deleteEventTargets", name: "delete", body: map[string]any{"eventBusName": busOfB, "eventRuleName": ruleOfB,
		"eventTargetNames": []string{targetOfB}}, notFound: "EventBusNotExist"},
	{route: "POST /target/createEventTargets", name: "a's bus target to b's bus",
		body:   targetsReq(busOfA, ruleOfA, map[string]any{"eventTargetName": "t", "className": "bus", "config": map[string]any{"bus": busOfB}}),
		sameAs: true},

	// RocketMQ EventBridge: event types and events.
	{route: "POST /type/listEventTypes", name: "of b's bus", body: busReq(busOfB), notFound: "EventBusNotExist"},
	{route: "POST /type/listEventTypes", name: "of every bus", body: map[string]any{}, list: true, own: sourceOfA},
	{route: "POST /putEvents", name: "on b's bus", headers: map[string]string{"Content-Type": "application/cloudevents+json"},
		body: withExt(ce("e2", sourceOfA, "order.created", map[string]any{"id": 2}), "eventbusname", busOfB), notFound: "EventBusNotExist"},

	// RocketMQ EventBridge: connections and API destinations.
	{route: "POST /connection/listConnections", name: "list", body: map[string]any{}, list: true, own: connOfA},
	{route: "POST /connection/getConnection", name: "get", body: map[string]any{"connectionName": connOfB}, notFound: "ConnectionNotExist"},
	{route: "POST /connection/updateConnection", name: "update", body: map[string]any{"connectionName": connOfB, "description": "changed by a"},
		notFound: "ConnectionNotExist"},
	{route: "POST /connection/deleteConnection", name: "delete one in use", body: map[string]any{"connectionName": connOfB}, notFound: "ConnectionNotExist"},
	{route: "POST /api-destination/listApiDestinations", name: "list", body: map[string]any{}, list: true, own: destOfA},
	{route: "POST /api-destination/createApiDestination", name: "create on b's connection", body: rmqDestination("new", connOfB), sameAs: true},
	{route: "POST /api-destination/getApiDestination", name: "get", body: map[string]any{"apiDestinationName": destOfB}, notFound: "ApiDestinationNotExist"},
	{route: "POST /api-destination/updateApiDestination", name: "update", body: map[string]any{"apiDestinationName": destOfB, "description": "changed by a"},
		notFound: "ApiDestinationNotExist"},
	{route: "POST /api-destination/updateApiDestination", name: "move a's to b's connection",
		body: map[string]any{"apiDestinationName": destOfA, "connectionName": connOfB}, sameAs: true},
	{route: "POST /api-destination/deleteApiDestination", name: "delete one in use", body: map[string]any{"apiDestinationName": destOfB},
		notFound: "ApiDestinationNotExist"},

	// Amazon EventBridge API.
	{route: awsRoute("ListEventBuses"), name: "list", body: map[string]any{}, list: true, own: busOfA},
	{route: awsRoute("DescribeEventBus"), name: "describe", body: map[string]any{"Name": busOfB}, notFound: awsNotFound},
	{route: awsRoute("DescribeEventBus"), name: "describe b's bus by its ARN", body: map[string]any{"Name": awsBusOfB}, notFound: awsNotFound},
	{route: awsRoute("UpdateEventBus"), name: "update", body: map[string]any{"Name": busOfB, "Description": "changed by a"}, notFound: awsNotFound},
	{route: awsRoute("UpdateEventBus"), name: "update b's bus by its ARN", body: map[string]any{"Name": awsBusOfB, "Description": "changed by a"},
		notFound: awsNotFound},
	// Deleting a bus that does not exist succeeds, as in AWS: b's buses stay (snapshotOfB).
	{route: awsRoute("DeleteEventBus"), name: "delete", body: map[string]any{"Name": busOfB}, sameAs: true},
	{route: awsRoute("DeleteEventBus"), name: "delete a dead-letter bus", body: map[string]any{"Name": dlqOfB}, sameAs: true},
	{route: awsRoute("PutRule"), name: "create on b's bus", body: map[string]any{"Name": "r", "EventBusName": busOfB, "EventPattern": awsPattern},
		notFound: awsNotFound},
	{route: awsRoute("PutRule"), name: "create on b's bus by its ARN", body: map[string]any{"Name": "r", "EventBusName": awsBusOfB,
		"EventPattern": awsPattern}, notFound: awsNotFound},
	{route: awsRoute("PutRule"), name: "replace", body: map[string]any{"Name": ruleOfB, "EventBusName": busOfB, "EventPattern": awsPattern},
		notFound: awsNotFound},
	{route: awsRoute("DescribeRule"), name: "describe", body: awsRuleOfB, notFound: awsNotFound},
	{route: awsRoute("EnableRule"), name: "enable", body: awsRuleOfB, notFound: awsNotFound},
	{route: awsRoute("DisableRule"), name: "disable", body: awsRuleOfB, notFound: awsNotFound},
	{route: awsRoute("DeleteRule"), name: "delete", body: awsRuleOfB, notFound: awsNotFound},
	{route: awsRoute("DeleteRule"), name: "delete with its targets", body: map[string]any{"Name": ruleOfB, "EventBusName": busOfB, "Force": true},
		notFound: awsNotFound},
	{route: awsRoute("ListRules"), name: "list", body: map[string]any{"EventBusName": busOfB}, notFound: awsNotFound},
	{route: awsRoute("ListRules"), name: "list a's", body: map[string]any{"EventBusName": busOfA}, list: true, own: ruleOfA},
	{route: awsRoute("ListRuleNamesByTarget"), name: "of b's bus", body: map[string]any{"TargetArn": awsTargetOfB, "EventBusName": busOfB},
		notFound: awsNotFound},
	{route: awsRoute("ListTargetsByRule"), name: "list", body: map[string]any{"Rule": ruleOfB, "EventBusName": busOfB}, notFound: awsNotFound},
	{route: awsRoute("PutTargets"), name: "put on b's rule", body: map[string]any{"Rule": ruleOfB, "EventBusName": busOfB,
		"Targets": []any{map[string]any{"Id": "new", "Arn": awsLogOfA}}}, notFound: awsNotFound},
	{route: awsRoute("PutTargets"), name: "replace", body: map[string]any{"Rule": ruleOfB, "EventBusName": busOfB,
		"Targets": []any{map[string]any{"Id": targetOfB, "Arn": awsLogOfA}}}, notFound: awsNotFound},
	{route: awsRoute("PutTargets"), name: "a's bus target to b's bus", body: map[string]any{"Rule": ruleOfA, "EventBusName": busOfA,
		"Targets": []any{map[string]any{"Id": "t", "Arn": awsBusInA + busOfB}}}, sameAs: true},
	{route: awsRoute("PutTargets"), name: "a's target dead-lettering to b's bus", body: map[string]any{"Rule": ruleOfA, "EventBusName": busOfA,
		"Targets": []any{map[string]any{"Id": "t", "Arn": awsLogOfA, "DeadLetterConfig": map[string]any{"Arn": awsBusInA + dlqOfB}}}}, sameAs: true},
	{route: awsRoute("RemoveTargets"), name: "remove", body: map[string]any{"Rule": ruleOfB, "EventBusName": busOfB, "Ids": []string{targetOfB}},
		notFound: awsNotFound},
	// PutEvents answers 200, with the entry failed.
	{route: awsRoute("PutEvents"), name: "on b's bus", body: awsEventsOnB, sameAs: true, json: awsEntryNotFound},
	{route: awsRoute("PutEvents"), name: "on b's bus by its ARN", body: map[string]any{"Entries": []any{map[string]any{"Source": sourceOfA,
		"DetailType": "order.created", "Detail": `{"id":6}`, "EventBusName": awsBusOfB}}}, sameAs: true, json: awsEntryNotFound},
	{route: awsRoute("ListConnections"), name: "list", body: map[string]any{}, list: true, own: connOfA},
	{route: awsRoute("DescribeConnection"), name: "describe", body: map[string]any{"Name": connOfB}, notFound: awsNotFound},
	{route: awsRoute("UpdateConnection"), name: "update", body: map[string]any{"Name": connOfB, "Description": "changed by a"}, notFound: awsNotFound},
	{route: awsRoute("DeleteConnection"), name: "delete one in use", body: map[string]any{"Name": connOfB}, notFound: awsNotFound},
	{route: awsRoute("DeauthorizeConnection"), name: "deauthorize", body: map[string]any{"Name": connOfB}, notFound: awsNotFound},
	{route: awsRoute("ListApiDestinations"), name: "list", body: map[string]any{}, list: true, own: destOfA},
	{route: awsRoute("ListApiDestinations"), name: "of b's connection by its ARN", body: map[string]any{"ConnectionArn": awsConnOfB},
		notFound: awsNotFound},
	{route: awsRoute("DescribeApiDestination"), name: "describe", body: map[string]any{"Name": destOfB}, notFound: awsNotFound},
	{route: awsRoute("UpdateApiDestination"), name: "update", body: map[string]any{"Name": destOfB, "Description": "changed by a"},
		notFound: awsNotFound},
	{route: awsRoute("UpdateApiDestination"), name: "move a's to b's connection", body: map[string]any{"Name": destOfA,
		"ConnectionArn": awsConnInA + connOfB}, sameAs: true},
	{route: awsRoute("UpdateApiDestination"), name: "move a's to b's connection by its ARN", body: map[string]any{"Name": destOfA,
		"ConnectionArn": awsConnOfB}, notFound: awsNotFound},
	{route: awsRoute("DeleteApiDestination"), name: "delete one in use", body: map[string]any{"Name": destOfB}, notFound: awsNotFound},
	{route: awsRoute("CreateApiDestination"), name: "create on b's connection", body: awsDestination("new", awsConnInA+connOfB), sameAs: true},
	{route: awsRoute("CreateApiDestination"), name: "create on b's connection by its ARN", body: awsDestination("new", awsConnOfB),
		notFound: awsNotFound},
	{route: awsRoute("ListArchives"), name: "list", body: map[string]any{}, list: true, own: archiveOfA},
	{route: awsRoute("ListArchives"), name: "of b's bus", body: map[string]any{"EventSourceArn": awsBusOfB}, notFound: awsNotFound},
	{route: awsRoute("CreateArchive"), name: "create on b's bus", body: map[string]any{"ArchiveName": "new", "EventSourceArn": awsBusOfB},
		notFound: awsNotFound},
	{route: awsRoute("CreateArchive"), name: "create on b's bus by its name", body: map[string]any{"ArchiveName": "new", "EventSourceArn": busOfB},
		notFound: awsNotFound},
	{route: awsRoute("DescribeArchive"), name: "describe", body: map[string]any{"ArchiveName": archiveOfB}, notFound: awsNotFound},
	{route: awsRoute("UpdateArchive"), name: "update", body: map[string]any{"ArchiveName": archiveOfB, "Description": "changed by a"},
		notFound: awsNotFound},
	{route: awsRoute("DeleteArchive"), name: "delete", body: map[string]any{"ArchiveName": archiveOfB}, notFound: awsNotFound},
	{route: awsRoute("ListReplays"), name: "list", body: map[string]any{}, list: true, own: replayOfA},
	{route: awsRoute("ListReplays"), name: "of b's archive by its ARN", body: map[string]any{"EventSourceArn": awsArchiveOfB}, list: true,
		json: map[string]any{"Replays": []any{}}},
	{route: awsRoute("ListReplays"), name: "of b's archive's name", body: map[string]any{"EventSourceArn": awsArchiveInA + archiveOfB}, list: true,
		json: map[string]any{"Replays": []any{}}},
	{route: awsRoute("DescribeReplay"), name: "describe", body: map[string]any{"ReplayName": replayOfB}, notFound: awsNotFound},
	{route: awsRoute("CancelReplay"), name: "cancel", body: map[string]any{"ReplayName": replayOfB}, notFound: awsNotFound},
	{route: awsRoute("StartReplay"), name: "replay b's archive", body: awsReplay("new", awsArchiveOfB, awsBusOfB), notFound: awsNotFound},
	{route: awsRoute("StartReplay"), name: "replay b's archive's name", body: awsReplay("new", awsArchiveInA+archiveOfB, awsBusInA+busOfA),
		notFound: awsNotFound},
	{route: awsRoute("StartReplay"), name: "replay a's archive to b's bus", body: awsReplay("new", awsArchiveInA+archiveOfA, awsBusOfB),
		notFound: awsNotFound},

	{route: awsRoute("TagResource"), name: "tag b's bus", body: map[string]any{"ResourceARN": awsBusOfB,
		"Tags": []any{map[string]any{"Key": "k", "Value": "v"}}}, notFound: awsNotFound},
	{route: awsRoute("TagResource"), name: "tag b's connection", body: map[string]any{"ResourceARN": awsConnOfB,
		"Tags": []any{map[string]any{"Key": "k", "Value": "v"}}}, notFound: awsNotFound},
	{route: awsRoute("TagResource"), name: "tag b's bus's name in a's ARN", body: map[string]any{"ResourceARN": awsBusInA + busOfB,
		"Tags": []any{map[string]any{"Key": "k", "Value": "v"}}}, notFound: awsNotFound},
	{route: awsRoute("UntagResource"), name: "untag b's archive", body: map[string]any{"ResourceARN": awsArchiveOfB, "TagKeys": []any{"k"}},
		notFound: awsNotFound},
	{route: awsRoute("ListTagsForResource"), name: "b's rule", body: map[string]any{"ResourceARN": "arn:aws:events:" + aws.DefaultRegion + ":" +
		account.AWSAccountID(isoB) + ":rule/" + busOfB + "/" + ruleOfB}, notFound: awsNotFound},
	{route: awsRoute("ListTagsForResource"), name: "b's archive's name in a's ARN", body: map[string]any{"ResourceARN": awsArchiveInA + archiveOfB},
		notFound: awsNotFound},

	// Last: a creates resources named like b's in its own namespace, and deletes them again.
	{route: "POST /api/v1/buses", name: "create with b's name", body: map[string]any{"name": busOfB}, create: true,
		undo: deleteAsA("/api/v1/buses/" + busOfB)},
	{route: "POST /api/v1/connections", name: "create with b's name", body: basicConnection(connOfB), create: true,
		undo: deleteAsA("/api/v1/connections/" + connOfB)},
	{route: "PUT /api/v1/connections/:connection", name: "create with b's name", url: "/api/v1/connections/" + connOfB,
		body: without(basicConnection(connOfB), "name"), create: true, undo: deleteAsA("/api/v1/connections/" + connOfB)},
	{route: "POST /api/v1/api-destinations", name: "create with b's name", body: destination(destOfB, connOfA), create: true,
		undo: deleteAsA("/api/v1/api-destinations/" + destOfB)},
	{route: "PUT /api/v1/api-destinations/:destination", name: "create with b's name", url: "/api/v1/api-destinations/" + destOfB,
		body: without(destination(destOfB, connOfA), "name"), create: true, undo: deleteAsA("/api/v1/api-destinations/" + destOfB)},
	{route: "POST /bus/createEventBus", name: "create with b's name", body: busReq(busOfB), create: true,
		undo: deleteAsA("/api/v1/buses/" + busOfB)},
	{route: "POST /connection/createConnection", name: "create with b's name", body: rmqBasicConnection(connOfB), create: true,
		undo: deleteAsA("/api/v1/connections/" + connOfB)},
	{route: "POST /api-destination/createApiDestination", name: "create with b's name", body: rmqDestination(destOfB, connOfA), create: true,
		undo: deleteAsA("/api/v1/api-destinations/" + destOfB)},
	{route: awsRoute("CreateEventBus"), name: "create with b's name", body: map[string]any{"Name": busOfB}, create: true,
		undo: deleteAsA("/api/v1/buses/" + busOfB)},
	{route: awsRoute("CreateConnection"), name: "create with b's name", body: map[string]any{"Name": connOfB, "AuthorizationType": "BASIC",
		"AuthParameters": map[string]any{"BasicAuthParameters": map[string]any{"Username": "shop", "Password": "basic-password-1"}}},
		create: true, undo: deleteAsA("/api/v1/connections/" + connOfB)},
	{route: awsRoute("CreateApiDestination"), name: "create with b's name", body: awsDestination(destOfB, awsConnInA+connOfA), create: true,
		undo: deleteAsA("/api/v1/api-destinations/" + destOfB)},
	{route: awsRoute("CreateArchive"), name: "create with b's name", body: map[string]any{"ArchiveName": archiveOfB,
		"EventSourceArn": awsBusInA + busOfA}, create: true, undo: deleteAsA(v1OwnArc + "/" + archiveOfB)},
	// A replay is not deleted: a's replay named like b's stays, in a's account.
	{route: awsRoute("StartReplay"), name: "create with b's name", body: awsReplay(replayOfB, awsArchiveInA+archiveOfA, awsBusInA+busOfA),
		create: true},

	{route: "GET /api/v1/api-keys", name: "list", list: true, own: "k-admin"},
	{route: "GET /api/v1/api-keys/:key", name: "get b's key", url: "/api/v1/api-keys/" + keyIDOfB, notFound: "ApiKeyNotFound"},
	{route: "DELETE /api/v1/api-keys/:key", name: "revoke b's key", url: "/api/v1/api-keys/" + keyIDOfB, notFound: "ApiKeyNotFound"},
	{route: "POST /api/v1/api-keys", name: "create with b's name", body: map[string]any{"name": keyOfB, "role": "viewer"}, create: true,
		undo: revokeAsA(keyOfB)},
}

// keyOfB names an API key of b whose id is keyIDOfB (imported from a token with that id).
const (
	keyOfB   = "key-of-b"
	keyIDOfB = "bbbbbbbbbbbbbbbb"
)

// revokeAsA revokes a's keys named name.
func revokeAsA(name string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		t.Helper()
		ks, _, err := e.services.APIKeys.List(context.Background(), isoA, domain.Page{})
		require.NoError(t, err)
		for _, k := range ks {
			if k.Name() == name {
				resp := e.do(t, http.MethodDelete, "/api/v1/api-keys/"+k.ID(), e.as(isoA), nil)
				require.Equalf(t, http.StatusNoContent, resp.Status, "as a: revoking %s answered %s", k.ID(), resp.Body)
			}
		}
	}
}

// isolationShadowCases run while a has a bus of its own named like b's bus (busOfB), with a rule ruleOfA: b's
// rules and targets must stay out of reach through a's bus of the same name, and what a puts on its bus stays on it.
var isolationShadowCases = []isolationCase{
	{route: "GET /api/v1/buses/:bus/rules", name: "list", url: v1Bus + "/rules", list: true, own: ruleOfA},
	{route: "GET /api/v1/buses/:bus/rules/:rule", name: "get", url: v1Rule, notFound: "RuleNotFound"},
	{route: "PATCH /api/v1/buses/:bus/rules/:rule", name: "patch", url: v1Rule, body: map[string]any{"description": "changed by a"}, notFound: "RuleNotFound"},
	{route: "DELETE /api/v1/buses/:bus/rules/:rule", name: "delete", url: v1Rule, notFound: "RuleNotFound"},
	{route: "POST /api/v1/buses/:bus/rules/:rule/enable", name: "enable", url: v1Rule + "/enable", notFound: "RuleNotFound"},
	{route: "POST /api/v1/buses/:bus/rules/:rule/disable", name: "disable", url: v1Rule + "/disable", notFound: "RuleNotFound"},
	{route: "GET /api/v1/buses/:bus/rules/:rule/targets", name: "list", url: v1Rule + "/targets", notFound: "RuleNotFound"},
	{route: "GET /api/v1/buses/:bus/channels/:rule", name: "get b's channel through a's bus", url: v1Bus + "/channels/" + ruleOfB, notFound: "RuleNotFound"},
	{route: "GET /api/v1/buses/:bus/rules/:rule/targets/:target", name: "get", url: v1Target, notFound: "RuleNotFound"},
	{route: "PUT /api/v1/buses/:bus/rules/:rule/targets/:target", name: "replace", url: v1Target,
		body: map[string]any{"type": "http", "config": map[string]any{"url": "https://a.example.com/"}}, notFound: "RuleNotFound"},
	{route: "DELETE /api/v1/buses/:bus/rules/:rule/targets/:target", name: "delete", url: v1Target, notFound: "RuleNotFound"},
	{route: "GET /api/v1/buses/:bus/event-types", name: "event types", url: v1Bus + "/event-types", list: true},
	{route: "GET /api/v1/buses/:bus/archives", name: "archives of a's bus", url: v1Bus + "/archives", list: true},
	{route: "GET /api/v1/buses/:bus/archives/:archive", name: "b's archive through a's bus", url: v1Arch, notFound: "ArchiveNotFound"},
	{route: "GET /api/v1/buses/:bus/events", name: "search a's bus", url: v1Bus + "/events", list: true},
	{route: "GET /api/v1/buses/:bus/log", name: "log of a's bus", url: v1Bus + "/log", list: true},
	{route: "GET /api/v1/buses/:bus/events/:id/trace", name: "trace b's event on a's bus", url: v1Bus + "/events/b1/trace?source=" + sourceOfB, notFound: "EventNotFound"},
	{route: "POST /api/v1/buses/:bus/test-event", name: "test against a's rules", url: v1Bus + "/test-event",
		body: map[string]any{"event": ce("e9", sourceOfA, "order.created", map[string]any{"id": 9})}, list: true, own: ruleOfA},
	{route: "POST /api/v1/buses/:bus/events", name: "put events on a's bus", url: v1Bus + "/events", headers: map[string]string{"Content-Type": batch},
		body: []any{ce("e3", sourceOfA, "order.created", map[string]any{"id": 3})}, create: true, status: http.StatusOK},
	{route: "PUT /api/v1/buses/:bus/rules/:rule", name: "create a's rule with b's name", url: v1Rule,
		body: map[string]any{"eventPattern": map[string]any{"source": []any{"x"}}}, create: true, undo: deleteAsA(v1Rule)},

	{route: awsRoute("ListRules"), name: "list", body: map[string]any{"EventBusName": busOfB}, list: true, own: ruleOfA},
	{route: awsRoute("DescribeRule"), name: "describe", body: awsRuleOfB, notFound: awsNotFound},
	{route: awsRoute("EnableRule"), name: "enable", body: awsRuleOfB, notFound: awsNotFound},
	{route: awsRoute("DisableRule"), name: "disable", body: awsRuleOfB, notFound: awsNotFound},
	{route: awsRoute("ListTargetsByRule"), name: "list", body: map[string]any{"Rule": ruleOfB, "EventBusName": busOfB}, notFound: awsNotFound},
	{route: awsRoute("PutTargets"), name: "put on b's rule", body: map[string]any{"Rule": ruleOfB, "EventBusName": busOfB,
		"Targets": []any{map[string]any{"Id": targetOfB, "Arn": awsLogOfA}}}, notFound: awsNotFound},
	{route: awsRoute("RemoveTargets"), name: "remove", body: map[string]any{"Rule": ruleOfB, "EventBusName": busOfB, "Ids": []string{targetOfB}},
		notFound: awsNotFound},
	{route: awsRoute("ListRuleNamesByTarget"), name: "b's target through a's bus", body: map[string]any{"TargetArn": awsTargetOfB,
		"EventBusName": busOfB}, list: true, json: map[string]any{"RuleNames": []any{}}},
	{route: awsRoute("PutEvents"), name: "put events on a's bus", body: awsEventsOnB, create: true, json: map[string]any{"FailedEntryCount": 0}},
	{route: awsRoute("PutRule"), name: "create a's rule with b's name", body: map[string]any{"Name": ruleOfB, "EventBusName": busOfB,
		"EventPattern": awsPattern}, create: true, undo: deleteAsA(v1Rule)},
	{route: awsRoute("ListArchives"), name: "archives of a's bus", body: map[string]any{"EventSourceArn": awsBusInA + busOfB}, list: true,
		json: map[string]any{"Archives": []any{}}},
	{route: awsRoute("DescribeArchive"), name: "b's archive", body: map[string]any{"ArchiveName": archiveOfB}, notFound: awsNotFound},
	{route: awsRoute("CreateArchive"), name: "create a's archive with b's name on a's bus", body: map[string]any{"ArchiveName": archiveOfB,
		"EventSourceArn": busOfB}, create: true, undo: deleteAsA(v1Arch)},

	{route: "POST /rule/listEventRules", name: "list", body: busReq(busOfB), list: true, own: ruleOfA},
	{route: "POST /rule/getEventRule", name: "get", body: ruleReq(busOfB, ruleOfB), notFound: "EventRuleNotExist"},
	{route: "POST /rule/updateEventRule", name: "update", body: map[string]any{"eventBusName": busOfB, "eventRuleName": ruleOfB,
		"description": "changed by a"}, notFound: "EventRuleNotExist"},
	{route: "POST /rule/deleteEventRule", name: "delete", body: ruleReq(busOfB, ruleOfB), notFound: "EventRuleNotExist"},
	{route: "POST /rule/enableEventRule", name: "enable", body: ruleReq(busOfB, ruleOfB), notFound: "EventRuleNotExist"},
	{route: "POST /rule/disableEventRule", name: "disable", body: ruleReq(busOfB, ruleOfB), notFound: "EventRuleNotExist"},
	{route: "POST /target/listEventTargets", name: "list", body: ruleReq(busOfB, ruleOfB), notFound: "EventRuleNotExist"},
	{route: "POST /target/createEventTargets", name: "create on b's rule",
		body: targetsReq(busOfB, ruleOfB, httpTarget("new", "https://a.example.com/")), notFound: "EventRuleNotExist"},
	{route: "POST /target/updateEventTargets", name: "update",
		body: targetsReq(busOfB, ruleOfB, httpTarget(targetOfB, "https://a.example.com/")), notFound: "EventRuleNotExist"},
	{route: "POST /target/deleteEventTargets", name: "delete", body: map[string]any{"eventBusName": busOfB, "eventRuleName": ruleOfB,
		"eventTargetNames": []string{targetOfB}}, notFound: "EventRuleNotExist"},
	{route: "POST /type/listEventTypes", name: "of a's bus", body: busReq(busOfB), list: true},
	{route: "POST /putEvents", name: "on a's bus", headers: map[string]string{"Content-Type": "application/cloudevents+json"},
		body: withExt(ce("e4", sourceOfA, "order.created", map[string]any{"id": 4}), "eventbusname", busOfB), create: true},
}

// TestAccountIsolationCoversEveryRoute: every route of the router has an isolation case or is exempt, and every
// case and exemption names a route of the router.
func TestAccountIsolationCoversEveryRoute(t *testing.T) {
	t.Parallel()
	routes := map[string]bool{}
	for _, r := range newRouter(web.Config{}, web.Services{}).Routes() {
		routes[r.Method+" "+r.Path] = true
	}
	require.Greater(t, len(routes), 40, "the router has its routes")
	covered := map[string]bool{}
	for _, c := range slices.Concat(isolationCases, isolationShadowCases) {
		covered[c.route] = true
		assert.Truef(t, routes[c.route], "the isolation case %q is for %s, which the router does not serve", c.name, c.route)
	}
	for route := range isolationExempt {
		assert.Truef(t, routes[route], "the exempt route %s is not served by the router", route)
		assert.Falsef(t, covered[route], "the exempt route %s has isolation cases", route)
	}
	var missing []string
	for route := range routes {
		if !covered[route] && isolationExempt[route] == "" {
			missing = append(missing, route)
		}
	}
	sort.Strings(missing)
	assert.Emptyf(t, missing, "routes without an isolation case in isolationCases (or a reason in isolationExempt)")
}

// TestAccountIsolation: account a calls every route with the names of account b's resources and learns and
// changes nothing of b; b reads everything back unchanged afterwards.
func TestAccountIsolation(t *testing.T) {
	t.Parallel()
	js := natsServer(t)
	eachDialect(t, func(t *testing.T, dialect string) {
		e := withDeadLetters(withRuntime(newEnv(t, js, dialect)))
		e.exactAccounts = true
		e.accountKeys = map[string]string{isoA: keyOf(t, e.services, isoA, access.Admin), isoB: keyOf(t, e.services, isoB, access.Admin)}
		seedIsolation(t, e)
		seedIsolationDeadLetters(t, e)
		before := snapshotOfB(t, e)

		// check runs c; ownB is the name of b's that a has too ("" when none), which a's answers may hold.
		check := func(t *testing.T, c isolationCase, ownB string) {
			t.Helper()
			resp := c.asA(t, e, "")
			t.Logf("as a: %s %s -> %d %s", c.method(), c.target(), resp.Status, truncate(resp.Body, 400))
			assert.NotEqual(t, http.StatusForbidden, resp.Status, "never 403: it would confirm that the name exists")
			if c.aws() {
				assert.NotEqual(t, "AccessDeniedException", awsTypeOf(t, resp), "never denied: it would confirm that the name exists")
			}
			switch {
			case c.notFound != "":
				want := http.StatusNotFound
				switch {
				case c.rocketMQ():
					want = http.StatusConflict
				case c.aws():
					want = http.StatusBadRequest
				}
				assert.Equal(t, want, resp.Status)
				assert.Equal(t, c.notFound, c.code(t, resp), "error code")
			case c.list:
				require.Equal(t, http.StatusOK, resp.Status)
				assert.Contains(t, string(resp.Body), c.own, "a's own resources are listed")
				listed := string(resp.Body)
				if ownB != "" {
					listed = strings.ReplaceAll(listed, `"`+ownB+`"`, `"(a's own)"`)
					listed = strings.ReplaceAll(listed, "/"+ownB+"/", "/(a's own)/") // in the ARNs of a's rules
				}
				assert.NotContains(t, listed, ofB, "nothing of b is listed")
				assert.NotContains(t, string(resp.Body), sourceOfB, "nothing of b is listed")
				assert.NotContains(t, string(resp.Body), account.AWSAccountID(isoB), "nothing of b is listed")
			case c.create:
				want := http.StatusCreated
				if c.rocketMQ() || c.aws() {
					want = http.StatusOK
				}
				if c.status != 0 {
					want = c.status
				}
				require.Equal(t, want, resp.Status, "a's namespace is its own: b's name does not conflict")
				if c.undo != nil {
					c.undo(t, e)
				}
			case c.sameAs:
				ref := c.asA(t, e, nowhere)
				t.Logf("as a, naming %q: %d %s", nowhere, ref.Status, truncate(ref.Body, 400))
				if c.aws() {
					assert.Equal(t, string(ref.Body), replaceNamesOfB(string(resp.Body), nowhere),
						"b's name is answered as a name that exists nowhere")
				} else {
					assert.GreaterOrEqual(t, ref.Status, 400, "the reference to a name that exists nowhere fails")
				}
				assert.Equal(t, ref.Status, resp.Status, "b's name is answered as a name that exists nowhere")
				assert.Equal(t, c.code(t, ref), c.code(t, resp), "b's name is answered as a name that exists nowhere")
			default:
				t.Fatalf("the case says nothing of its answer")
			}
			if len(c.json) > 0 {
				v := resp.JSON(t)
				for path, want := range c.json {
					assertJSONPath(t, v, path, want)
				}
			}
			assert.NotContains(t, string(resp.Body), "account "+isoB, "answers do not speak of b")
		}
		var creates []isolationCase
		for i, c := range isolationCases {
			if c.create {
				creates = append(creates, c) // last, see isolationCases
				continue
			}
			t.Run(strconv.Itoa(i)+" "+c.route+" "+c.name, func(t *testing.T) { check(t, c, "") })
		}
		t.Run("a has a bus named like b's", func(t *testing.T) {
			asA := e.as(isoA)
			resp := e.do(t, http.MethodPost, "/api/v1/buses", asA, map[string]any{"name": busOfB})
			require.Equalf(t, http.StatusCreated, resp.Status, "as a: creating bus %s: %s", busOfB, resp.Body)
			resp = e.do(t, http.MethodPost, v1Bus+"/rules", asA, map[string]any{"name": ruleOfA, "eventPattern": map[string]any{"source": []any{"x"}}})
			require.Equalf(t, http.StatusCreated, resp.Status, "as a: creating rule %s on %s: %s", ruleOfA, busOfB, resp.Body)
			for i, c := range isolationShadowCases {
				t.Run(strconv.Itoa(i)+" "+c.route+" "+c.name, func(t *testing.T) { check(t, c, busOfB) })
			}
			deleteAsA(v1Bus+"/rules/"+ruleOfA)(t, e)
			deleteAsA(v1Bus)(t, e)
		})
		for i, c := range creates {
			t.Run("create "+strconv.Itoa(i)+" "+c.route+" "+c.name, func(t *testing.T) { check(t, c, "") })
		}

		after := snapshotOfB(t, e)
		require.Equal(t, len(before), len(after))
		for k, want := range before {
			assert.Equalf(t, want, after[k], "%s as b changed while a called every route", k)
		}
	})
}

// seedIsolation gives account b a full set of resources (through the API) and account a a few of its own, whose
// presence the lists must show.
func seedIsolation(t *testing.T, e *env) {
	t.Helper()
	as := func(account, method, url string, body any, status int) {
		t.Helper()
		resp := e.do(t, method, url, e.as(account), body)
		require.Equalf(t, status, resp.Status, "as %s: %s %s answered %s", account, method, url, resp.Body)
	}
	for _, acc := range []struct{ id, bus, rule, conn, dest string }{
		{isoB, busOfB, ruleOfB, connOfB, destOfB},
		{isoA, busOfA, ruleOfA, connOfA, destOfA},
	} {
		as(acc.id, http.MethodPost, "/api/v1/buses", map[string]any{"name": acc.bus, "description": "bus of " + acc.id}, http.StatusCreated)
		as(acc.id, http.MethodPost, "/api/v1/buses/"+acc.bus+"/rules", map[string]any{"name": acc.rule, "description": "rule of " + acc.id,
			"eventPattern": map[string]any{"source": []any{"shop"}}}, http.StatusCreated)
		as(acc.id, http.MethodPost, "/api/v1/connections", basicConnection(acc.conn), http.StatusCreated)
		as(acc.id, http.MethodPost, "/api/v1/api-destinations", destination(acc.dest, acc.conn), http.StatusCreated)
	}
	as(isoB, http.MethodPost, "/api/v1/buses", map[string]any{"name": dlqOfB}, http.StatusCreated)
	as(isoB, http.MethodPut, "/api/v1/buses/"+busOfB+"/rules/"+ruleOfB+"/targets/"+targetOfB, map[string]any{"type": "http",
		"config": map[string]any{"url": "https://b.example.com/hook"}, "deadLetterConfig": map[string]any{"bus": dlqOfB}}, http.StatusCreated)
	as(isoB, http.MethodPut, "/api/v1/buses/"+busOfB+"/rules/"+ruleOfB+"/targets/"+apiTargetOfB, map[string]any{"type": "api-destination",
		"config": map[string]any{"apiDestination": destOfB, "pathParameterValues": []any{"$.data.id"}}}, http.StatusCreated)

	for _, src := range []struct{ account, bus, name string }{{isoB, busOfB, sourceOfB}, {isoA, busOfA, sourceOfA}} {
		as(src.account, http.MethodPost, "/api/v1/buses/"+src.bus+"/sources", map[string]any{"name": src.name, "type": "schedule",
			"config": map[string]any{"schedule.expression": "rate(5 minutes)"}}, http.StatusCreated)
	}

	for _, acc := range []struct{ id, bus, archive, replay string }{{isoB, busOfB, archiveOfB, replayOfB}, {isoA, busOfA, archiveOfA, replayOfA}} {
		as(acc.id, http.MethodPost, "/api/v1/buses/"+acc.bus+"/archives", map[string]any{"name": acc.archive}, http.StatusCreated)
		time.Sleep(2 * time.Millisecond) // the window ends after the archive's creation
		as(acc.id, http.MethodPost, "/api/v1/replays", map[string]any{"name": acc.replay, "archive": acc.archive,
			"eventStartTime": time.Now().Add(-time.Hour), "eventEndTime": time.Now()}, http.StatusCreated)
	}

	put := func(account, bus, id, source, typ string) {
		t.Helper()
		resp := e.do(t, http.MethodPost, "/api/v1/buses/"+bus+"/events",
			e.as(account, "Content-Type", batch),
			jsonOf(t, []any{ce(id, source, typ, map[string]any{"id": 1})}))
		require.Equalf(t, http.StatusOK, resp.Status, "putting events as %s: %s", account, resp.Body)
		assertJSONPath(t, resp.JSON(t), "failedEntryCount", 0)
	}
	_, err := e.services.APIKeys.Import(context.Background(), "ebk_"+keyIDOfB+"_"+strings.Repeat("b", 43), isoB,
		apikey.Spec{Name: keyOfB, Role: access.Viewer})
	require.NoError(t, err)

	put(isoB, busOfB, "b1", sourceOfB, typeOfB)
	put(isoA, busOfA, "a1", sourceOfA, "type-of-a")
	require.NoError(t, e.recorder.Flush(context.Background()))

	// Both accounts have a metrics history.
	hist := eventstore.NewHistory(e.js, e.names.Cluster, 1)
	for _, acc := range []struct{ id, bus, rule string }{{isoB, busOfB, ruleOfB}, {isoA, busOfA, ruleOfA}} {
		for i, at := range []time.Time{time.Now().Add(-20 * time.Second), time.Now().Add(-10 * time.Second)} {
			require.NoError(t, hist.Append(context.Background(), acc.id, history.Hour, history.Sample{At: at, Series: []history.Counters{
				{Bus: acc.bus, In: uint64(10 * i), Matched: uint64(5 * i)}, {Bus: acc.bus, Rule: acc.rule, Matched: uint64(5 * i)}}}))
		}
	}

	// b's bus logs, and its log has a record of b's event.
	as(isoB, http.MethodPatch, "/api/v1/buses/"+busOfB, map[string]any{"logConfig": map[string]any{"level": "INFO"}}, http.StatusOK)
	b, err := e.buses.Get(context.Background(), isoB, busOfB)
	require.NoError(t, err)
	require.NoError(t, eventstore.NewBusLog(e.js, e.names.Cluster).WriteRecord(context.Background(), b, stream.LogRecord{
		Time: time.Now(), Type: stream.LogRuleMatch, EventID: "b1", EventSource: sourceOfB, Rule: ruleOfB}))
}

// snapshotOfB reads everything of b as b: every resource through /api/v1 and the number of events on b's bus.
func snapshotOfB(t *testing.T, e *env) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, url := range []string{
		"/api/v1/buses", "/api/v1/buses/" + busOfB, "/api/v1/buses/" + dlqOfB, "/api/v1/buses/" + busOfB + "/event-types",
		"/api/v1/buses/" + busOfB + "/rules", "/api/v1/buses/" + busOfB + "/rules/" + ruleOfB,
		"/api/v1/buses/" + busOfB + "/rules/" + ruleOfB + "/targets",
		"/api/v1/buses/" + busOfB + "/rules/" + ruleOfB + "/targets/" + targetOfB,
		"/api/v1/buses/" + busOfB + "/rules/" + ruleOfB + "/targets/" + apiTargetOfB,
		"/api/v1/connections", "/api/v1/connections/" + connOfB, "/api/v1/api-destinations", "/api/v1/api-destinations/" + destOfB,
		"/api/v1/buses/" + busOfB + "/sources", v1Src, "/api/v1/buses/" + busOfB + "/archives", v1Arch,
		"/api/v1/replays", "/api/v1/replays/" + replayOfB,
		"/api/v1/dead-letters", "/api/v1/buses/" + busOfB + "/log",
	} {
		resp := e.do(t, http.MethodGet, url, e.as(isoB), nil)
		require.Equalf(t, http.StatusOK, resp.Status, "as b: GET %s answered %s", url, resp.Body)
		out["GET "+url] = string(resp.Body)
	}
	require.Contains(t, out["GET /api/v1/buses"], busOfB, "b sees its buses")
	require.Contains(t, out["GET /api/v1/buses/"+busOfB+"/event-types"], sourceOfB, "b sees its event types")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := e.buses.Get(ctx, isoB, busOfB)
	require.NoError(t, err)
	s, err := e.js.Stream(ctx, e.names.BusStream(b.ID()))
	require.NoError(t, err)
	info, err := s.Info(ctx)
	require.NoError(t, err)
	require.NotZero(t, info.State.Msgs, "b's bus holds b's event")
	out["events on "+busOfB] = strconv.FormatUint(info.State.Msgs, 10)
	keys, _, err := e.services.APIKeys.List(ctx, isoB, domain.Page{})
	require.NoError(t, err)
	var names []string
	for _, k := range keys {
		names = append(names, k.ID()+" "+k.Name()+" "+string(k.Role()))
	}
	require.Contains(t, strings.Join(names, ","), keyOfB)
	out["keys of b"] = strings.Join(names, ",")
	return out
}

// deleteAsA deletes url as account a.
func deleteAsA(url string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		t.Helper()
		resp := e.do(t, http.MethodDelete, url, e.as(isoA), nil)
		require.Equalf(t, http.StatusNoContent, resp.Status, "as a: DELETE %s answered %s", url, resp.Body)
	}
}

// codeOf is the error code of an answer of either API ("" when it has none).
func codeOf(t *testing.T, resp *response) string {
	t.Helper()
	var v struct{ Code string }
	require.NoErrorf(t, json.Unmarshal(resp.Body, &v), "answer: %s", resp.Body)
	return v.Code
}

// awsTypeOf is the exception that an answer of the Amazon EventBridge API names (its __type; "" when none).
func awsTypeOf(t *testing.T, resp *response) string {
	t.Helper()
	var v struct {
		Type string `json:"__type"`
	}
	require.NoErrorf(t, json.Unmarshal(resp.Body, &v), "answer: %s", resp.Body)
	return v.Type
}

// without returns a copy of m without key.
func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// withExt returns the CloudEvent ev with the extension name set to value.
func withExt(ev map[string]any, name, value string) map[string]any {
	ev[name] = value
	return ev
}
