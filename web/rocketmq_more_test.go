package web_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/persistence"
)

func rmqBasicConnection(name string) map[string]any {
	return map[string]any{"connectionName": name, "description": "basic",
		"networkParameters": map[string]any{"networkType": "PUBLIC_NETWORK"},
		"authParameters": map[string]any{"authorizationType": "BASIC_AUTH",
			"basicAuthParameters": map[string]any{"username": "shop", "password": "basic-password-1"},
			"invocationHttpParameters": map[string]any{
				"headerParameters":      []any{map[string]any{"key": "X-Token", "value": "invocation-secret-1", "isValueSecret": "true"}},
				"queryStringParameters": []any{map[string]any{"key": "v", "value": "2", "isValueSecret": "false"}},
			}}}
}

func rmqOAuthConnection(name string) map[string]any {
	return map[string]any{"connectionName": name, "authParameters": map[string]any{"authorizationType": "OAUTH_AUTH",
		"oauthParameters": map[string]any{"authorizationEndpoint": "https://auth.example.com/token", "httpMethod": "POST",
			"clientParameters": map[string]any{"clientID": "shop-client", "clientSecret": "client-secret-1"},
			"oauthHttpParameters": map[string]any{"bodyParameters": []any{
				map[string]any{"key": "assertion", "value": "oauth-param-secret-1", "isValueSecret": true}}}}}}
}

func rmqDestination(name, conn string) map[string]any {
	return map[string]any{"apiDestinationName": name, "connectionName": conn, "description": "orders",
		"httpApiParameters":            map[string]any{"endpoint": "https://api.example.com/orders", "method": "POST"},
		"invocationRateLimitPerSecond": 10}
}

func withRMQConnection(body map[string]any) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) { e.rmqMust(t, "/connection/createConnection", body) }
}

func withRMQDestination(name, conn string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		e.rmqMust(t, "/api-destination/createApiDestination", rmqDestination(name, conn))
	}
}

// noSecrets asserts that neither the answer nor the logs hold a secret of the fixtures.
func noSecrets(t *testing.T, e *env, resp *response) {
	t.Helper()
	for _, s := range allSecrets {
		assert.NotContains(t, string(resp.Body), s, "no answer holds a secret")
		assert.NotContains(t, e.logs.String(), s, "no log line holds a secret")
	}
}

func TestRocketMQConnections(t *testing.T) {
	t.Parallel()
	basic := withRMQConnection(rmqBasicConnection("shop"))
	runRMQ(t, []rmqScenario{
		{name: "create", path: "/connection/createConnection", body: rmqBasicConnection("shop"), status: http.StatusOK,
			json: map[string]any{"connectionName": "shop"}, after: noSecrets},
		{name: "create oauth with our type name", path: "/connection/createConnection",
			body: with(rmqOAuthConnection("o"), "authParameters.authorizationType", "OAUTH_CLIENT_CREDENTIALS"), status: http.StatusOK},
		{name: "create twice", path: "/connection/createConnection", setup: basic, body: rmqBasicConnection("shop"),
			status: http.StatusConflict, code: "ConnectionAlreadyExist"},
		{name: "create with a bad name", path: "/connection/createConnection", body: with(rmqBasicConnection("x"), "connectionName", "bad name!"),
			status: http.StatusConflict, code: "ConnectionNameInvalid"},
		{name: "create without a name", path: "/connection/createConnection", body: with(rmqBasicConnection("x"), "connectionName", nil),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"connectionName is required"}},
		{name: "create with an unknown authorization type", path: "/connection/createConnection",
			body: with(rmqBasicConnection("x"), "authParameters.authorizationType", "DIGEST"), status: http.StatusBadRequest,
			code: "RequestParameterInvalid", contains: []string{"authParameters.authorizationType must be BASIC_AUTH"}},
		{name: "create without the password", path: "/connection/createConnection",
			body: with(rmqBasicConnection("x"), "authParameters.basicAuthParameters.password", nil), status: http.StatusBadRequest,
			code: "RequestParameterInvalid", contains: []string{"authParameters.basicAuthParameters.password is required"}},
		{name: "create on a private network", path: "/connection/createConnection",
			body: with(rmqBasicConnection("x"), "networkParameters.networkType", "PRIVATE_NETWORK"), status: http.StatusBadRequest,
			code: "RequestParameterInvalid", contains: []string{"PRIVATE_NETWORK is not supported"}},
		{name: "create with a bad isValueSecret", path: "/connection/createConnection",
			body: with(rmqBasicConnection("x"), "authParameters.invocationHttpParameters.queryStringParameters",
				[]any{map[string]any{"key": "v", "value": "2", "isValueSecret": "maybe"}}),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"isValueSecret must be"}},
		{name: "create with malformed JSON", path: "/connection/createConnection", body: `{"connectionName": `,
			status: http.StatusBadRequest, code: "RequestParameterInvalid"},
		{name: "create ignores unknown fields", path: "/connection/createConnection",
			body: with(rmqBasicConnection("shop"), "someField", 1), status: http.StatusOK},
		{name: "get", path: "/connection/getConnection", setup: basic, body: map[string]any{"connectionName": "shop"},
			status: http.StatusOK, json: map[string]any{
				"connections.0.connectionName":                                                           "shop",
				"connections.0.description":                                                              "basic",
				"connections.0.networkParameters.networkType":                                            "PUBLIC_NETWORK",
				"connections.0.authParameters.authorizationType":                                         "BASIC_AUTH",
				"connections.0.authParameters.basicAuthParameters.username":                              "shop",
				"connections.0.authParameters.invocationHttpParameters.headerParameters.0.key":           "X-Token",
				"connections.0.authParameters.invocationHttpParameters.headerParameters.0.isValueSecret": "true",
				"connections.0.authParameters.invocationHttpParameters.queryStringParameters.0.value":    "2",
			}, after: func(t *testing.T, e *env, resp *response) {
				noSecrets(t, e, resp)
				assert.NotContains(t, string(resp.Body), "password")
			}},
		{name: "get oauth", path: "/connection/getConnection", setup: withRMQConnection(rmqOAuthConnection("o")),
			body: map[string]any{"connectionName": "o"}, status: http.StatusOK, json: map[string]any{
				"connections.0.authParameters.authorizationType":                         "OAUTH_AUTH",
				"connections.0.authParameters.oauthParameters.clientParameters.clientID": "shop-client",
			}, after: noSecrets},
		{name: "get unknown", path: "/connection/getConnection", body: map[string]any{"connectionName": "nope"},
			status: http.StatusConflict, code: "ConnectionNotExist"},
		{name: "get of another account", path: "/connection/getConnection", setup: basic, headers: map[string]string{"resourceOwnerAccountId": "b"},
			body: map[string]any{"connectionName": "shop"}, status: http.StatusConflict, code: "ConnectionNotExist"},
		{name: "update keeps the secret omitted", path: "/connection/updateConnection", setup: basic,
			body:   with(with(rmqBasicConnection("shop"), "authParameters.basicAuthParameters.password", nil), "description", "changed"),
			status: http.StatusOK, after: func(t *testing.T, e *env, resp *response) {
				got := e.rmqMust(t, "/connection/getConnection", map[string]any{"connectionName": "shop"})
				assertJSONPath(t, got, "connections.0.description", "changed")
			}},
		{name: "update unknown", path: "/connection/updateConnection", body: rmqBasicConnection("nope"),
			status: http.StatusConflict, code: "ConnectionNotExist"},
		{name: "list", path: "/connection/listConnections", setup: setups(basic, withRMQConnection(rmqOAuthConnection("other"))),
			body: map[string]any{"connectionNamePrefix": "sh", "maxResults": 10}, status: http.StatusOK,
			json: map[string]any{"total": 1, "maxResults": 10, "connections.0.connectionName": "shop"}, after: noSecrets},
		{name: "list paged", path: "/connection/listConnections", setup: setups(basic, withRMQConnection(rmqOAuthConnection("other"))),
			body: map[string]any{"maxResults": 1}, status: http.StatusOK,
			json: map[string]any{"total": 2, "nextToken": "1", "connections.0.connectionName": "other"}},
		{name: "list with a bad nextToken", path: "/connection/listConnections", body: map[string]any{"nextToken": "x"},
			status: http.StatusConflict, code: "NextTokenInvalid"},
		{name: "delete", path: "/connection/deleteConnection", setup: basic, body: map[string]any{"connectionName": "shop"},
			status: http.StatusOK, after: func(t *testing.T, e *env, _ *response) {
				e.rmqCode(t, "/connection/getConnection", map[string]any{"connectionName": "shop"}, http.StatusConflict, "ConnectionNotExist")
			}},
		{name: "delete in use", path: "/connection/deleteConnection", setup: setups(basic, withRMQDestination("d", "shop")),
			body: map[string]any{"connectionName": "shop"}, status: http.StatusConflict, code: "ConnectionBoundApiDestination"},
		{name: "delete without a name", path: "/connection/deleteConnection", body: map[string]any{},
			status: http.StatusBadRequest, code: "RequestParameterInvalid"},
	})
}

func TestRocketMQAPIDestinations(t *testing.T) {
	t.Parallel()
	conn := withRMQConnection(rmqBasicConnection("shop"))
	dest := setups(conn, withRMQDestination("orders", "shop"))
	runRMQ(t, []rmqScenario{
		{name: "create", path: "/api-destination/createApiDestination", setup: conn, body: rmqDestination("orders", "shop"),
			status: http.StatusOK, json: map[string]any{"apiDestinationName": "orders"}},
		{name: "create twice", path: "/api-destination/createApiDestination", setup: dest, body: rmqDestination("orders", "shop"),
			status: http.StatusConflict, code: "ApiDestinationAlreadyExist"},
		{name: "create with an unknown connection", path: "/api-destination/createApiDestination", body: rmqDestination("orders", "nope"),
			status: http.StatusConflict, code: "ConnectionNotExist"},
		{name: "create with a bad name", path: "/api-destination/createApiDestination", setup: conn,
			body: with(rmqDestination("x", "shop"), "apiDestinationName", "bad name!"), status: http.StatusConflict, code: "ApiDestinationNameInvalid"},
		{name: "create with a bad endpoint", path: "/api-destination/createApiDestination", setup: conn,
			body: with(rmqDestination("x", "shop"), "httpApiParameters.endpoint", "ftp://x"), status: http.StatusBadRequest,
			code: "RequestParameterInvalid", contains: []string{"httpApiParameters.endpoint"}},
		{name: "create without a method", path: "/api-destination/createApiDestination", setup: conn,
			body: with(rmqDestination("x", "shop"), "httpApiParameters.method", nil), status: http.StatusBadRequest,
			code: "RequestParameterInvalid", contains: []string{"httpApiParameters.method is required"}},
		{name: "create with apiParameters", path: "/api-destination/createApiDestination", setup: conn,
			body:   with(rmqDestination("x", "shop"), "httpApiParameters.apiParameters", []any{map[string]any{"name": "id", "in": "path"}}),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"apiParameters is not supported"}},
		{name: "create with malformed JSON", path: "/api-destination/createApiDestination", body: `[`,
			status: http.StatusBadRequest, code: "RequestParameterInvalid"},
		{name: "get", path: "/api-destination/getApiDestination", setup: dest, body: map[string]any{"apiDestinationName": "orders"},
			status: http.StatusOK, json: map[string]any{"apiDestinationName": "orders", "connectionName": "shop", "description": "orders",
				"httpApiParameters.endpoint": "https://api.example.com/orders", "httpApiParameters.method": "POST",
				"invocationRateLimitPerSecond": 10}, after: noSecrets},
		{name: "get unknown", path: "/api-destination/getApiDestination", body: map[string]any{"apiDestinationName": "nope"},
			status: http.StatusConflict, code: "ApiDestinationNotExist"},
		{name: "update", path: "/api-destination/updateApiDestination", setup: dest,
			body:   with(with(rmqDestination("orders", "shop"), "httpApiParameters.method", "PUT"), "invocationRateLimitPerSecond", 20),
			status: http.StatusOK, after: func(t *testing.T, e *env, _ *response) {
				got := e.rmqMust(t, "/api-destination/getApiDestination", map[string]any{"apiDestinationName": "orders"})
				assertJSONPath(t, got, "httpApiParameters.method", "PUT")
				assertJSONPath(t, got, "invocationRateLimitPerSecond", 20)
			}},
		{name: "update unknown", path: "/api-destination/updateApiDestination", setup: conn, body: rmqDestination("nope", "shop"),
			status: http.StatusConflict, code: "ApiDestinationNotExist"},
		{name: "list", path: "/api-destination/listApiDestinations", setup: setups(dest, withRMQDestination("refunds", "shop")),
			body: map[string]any{"apiDestinationNamePrefix": "ref"}, status: http.StatusOK,
			json: map[string]any{"total": 1, "maxResults": 50, "apiDestinations.0.apiDestinationName": "refunds"}},
		{name: "list with a bad maxResults", path: "/api-destination/listApiDestinations", body: map[string]any{"maxResults": 1000},
			status: http.StatusConflict, code: "LimitSizeInvalid"},
		{name: "delete", path: "/api-destination/deleteApiDestination", setup: dest, body: map[string]any{"apiDestinationName": "orders"},
			status: http.StatusOK},
		{name: "delete in use", path: "/api-destination/deleteApiDestination",
			setup: setups(dest, withRMQBus("b"), withRMQRule("b", "r", "{}"), func(t *testing.T, e *env) {
				e.rmqMust(t, "/target/createEventTargets", targetsReq("b", "r", map[string]any{"eventTargetName": "t",
					"className": "acs.api.destination", "config": map[string]any{"apiDestination": "orders"}}))
			}),
			body: map[string]any{"apiDestinationName": "orders"}, status: http.StatusConflict, code: "ApiDestinationInUse"},
	})
}

func TestRocketMQEventTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	e.createBus(t, "orders")
	e.createBus(t, "other")
	put := func(bus string, events ...map[string]any) {
		e.do(t, http.MethodPost, "/api/v1/buses/"+bus+"/events", map[string]string{"Content-Type": batch}, jsonOf(t, events))
	}
	put("orders", ce("1", "shop/web", "order.created", map[string]any{"id": 1}), ce("2", "shop/app", "order.paid", map[string]any{"id": 1}))
	put("other", ce("3", "crm", "contact.added", map[string]any{"name": "x"}))
	require.NoError(t, e.recorder.Flush(context.Background()))

	got := e.rmqMust(t, "/type/listEventTypes", map[string]any{"eventBusName": "orders"})
	assertJSONPath(t, got, "total", 2)
	assertJSONPath(t, got, "eventTypes.0.eventBusName", "orders")
	assertJSONPath(t, got, "eventTypes.0.eventSourceName", "shop/app")
	assertJSONPath(t, got, "eventTypes.0.eventTypeName", "order.paid")
	assertJSONPath(t, got, "eventTypes.0.count", 1)
	assert.NotEmpty(t, got["eventTypes"].([]any)[0].(map[string]any)["gmtCreate"])

	all := e.rmqMust(t, "/type/listEventTypes", map[string]any{})
	assertJSONPath(t, all, "total", 3)
	assertJSONPath(t, all, "eventTypes.2.eventBusName", "other")

	bySource := e.rmqMust(t, "/type/listEventTypes", map[string]any{"eventSourceName": "shop/web"})
	assertJSONPath(t, bySource, "total", 1)
	assertJSONPath(t, bySource, "eventTypes.0.eventTypeName", "order.created")

	paged := e.rmqMust(t, "/type/listEventTypes", map[string]any{"maxResults": 2})
	assertJSONPath(t, paged, "nextToken", "2")
	last := e.rmqMust(t, "/type/listEventTypes", map[string]any{"maxResults": 2, "nextToken": "2"})
	assertJSONPath(t, last, "eventTypes.0.eventTypeName", "contact.added")

	e.rmqCode(t, "/type/listEventTypes", map[string]any{"eventBusName": "nope"}, http.StatusConflict, "EventBusNotExist")
	e.rmqCode(t, "/type/listEventTypes", map[string]any{"nextToken": "-1"}, http.StatusConflict, "NextTokenInvalid")
	e.rmqCode(t, "/type/listEventTypes", `{"eventBusName": 1}`, http.StatusBadRequest, "RequestParameterInvalid")
	other := e.do(t, http.MethodPost, "/type/listEventTypes", map[string]string{"resourceOwnerAccountId": "b"}, map[string]any{})
	require.Equal(t, http.StatusOK, other.Status)
	assertJSONPath(t, other.JSON(t), "total", 0)
}

func TestRocketMQTargetTypes(t *testing.T) {
	t.Parallel()
	base := setups(withRMQBus("b"), withRMQBus("audit"), withRMQRule("b", "r", "{}"))
	withDest := setups(base, withRMQConnection(rmqBasicConnection("shop")), withRMQDestination("crm", "shop"))
	target := func(class string, config map[string]any) map[string]any {
		return map[string]any{"eventTargetName": "t", "className": class, "config": config}
	}
	dlq := func(tg map[string]any, q map[string]any) map[string]any {
		tg["runOptions"] = map[string]any{"deadLetterQueue": q}
		return tg
	}
	listed := func(json map[string]any) func(t *testing.T, e *env, _ *response) {
		return func(t *testing.T, e *env, _ *response) {
			got := e.rmqMust(t, "/target/listEventTargets", ruleReq("b", "r"))
			for p, want := range json {
				assertJSONPath(t, got, p, want)
			}
		}
	}
	// Three tables: each runRMQ has its own NATS server, whose storage reserves room for a limited number of
	// bus streams.
	runRMQ(t, []rmqScenario{
		{name: "api-destination", path: "/target/createEventTargets", setup: withDest,
			body: targetsReq("b", "r", target("api-destination", map[string]any{"apiDestination": "crm"})), status: http.StatusOK,
			after: listed(map[string]any{"eventTargets.0.className": "api-destination", "eventTargets.0.config.apiDestination": "crm"})},
		{name: "acs.api.destination", path: "/target/createEventTargets", setup: withDest,
			body: targetsReq("b", "r", target("acs.api.destination", map[string]any{"apiDestination": "crm"})), status: http.StatusOK,
			after: listed(map[string]any{"eventTargets.0.className": "api-destination"})},
		{name: "api-destination with path parameters", path: "/target/createEventTargets",
			setup: setups(withDest, func(t *testing.T, e *env) {
				e.rmqMust(t, "/api-destination/createApiDestination",
					with(rmqDestination("byid", "shop"), "httpApiParameters.endpoint", "https://api.example.com/orders/*"))
			}),
			body:   targetsReq("b", "r", target("api-destination", map[string]any{"apiDestination": "byid", "pathParameterValues": []string{"$.data.id"}})),
			status: http.StatusOK, after: listed(map[string]any{"eventTargets.0.config.pathParameterValues.0": "$.data.id"})},
		{name: "api-destination missing path parameters", path: "/target/createEventTargets",
			setup: setups(withDest, func(t *testing.T, e *env) {
				e.rmqMust(t, "/api-destination/createApiDestination",
					with(rmqDestination("byid", "shop"), "httpApiParameters.endpoint", "https://api.example.com/orders/*"))
			}),
			body:   targetsReq("b", "r", target("api-destination", map[string]any{"apiDestination": "byid"})),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"pathParameterValues"}},
		{name: "unknown api destination", path: "/target/createEventTargets", setup: base,
			body:   targetsReq("b", "r", target("api-destination", map[string]any{"apiDestination": "nope"})),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"config.apiDestination"}},
		{name: "bus", path: "/target/createEventTargets", setup: base,
			body: targetsReq("b", "r", target("bus", map[string]any{"bus": "audit"})), status: http.StatusOK,
			after: listed(map[string]any{"eventTargets.0.className": "bus", "eventTargets.0.config.bus": "audit"})},
		{name: "acs.eventbridge", path: "/target/createEventTargets", setup: base,
			body: targetsReq("b", "r", target("acs.eventbridge", map[string]any{"bus": "audit"})), status: http.StatusOK,
			after: listed(map[string]any{"eventTargets.0.className": "bus"})},
		{name: "bus loop", path: "/target/createEventTargets", setup: base,
			body: targetsReq("b", "r", target("bus", map[string]any{"bus": "b"})), status: http.StatusBadRequest, code: "RequestParameterInvalid"},
		{name: "bus without config.bus", path: "/target/createEventTargets", setup: base,
			body:   targetsReq("b", "r", target("acs.eventbridge", map[string]any{"AliyunEventBus": "audit"})),
			status: http.StatusBadRequest, code: "RequestParameterInvalid"},
	})
	runRMQ(t, []rmqScenario{
		{name: "log", path: "/target/createEventTargets", setup: base, body: targetsReq("b", "r", target("log", nil)), status: http.StatusOK,
			after: listed(map[string]any{"eventTargets.0.className": "log"})},
		{name: "log with a url", path: "/target/createEventTargets", setup: base,
			body: targetsReq("b", "r", target("log", map[string]any{"url": "https://x"})), status: http.StatusBadRequest, code: "RequestParameterInvalid"},
		{name: "dingtalk", path: "/target/createEventTargets", setup: base,
			body: targetsReq("b", "r", target("acs.dingtalk", nil)), status: http.StatusConflict, code: "EventTargetClassNotExist",
			contains: []string{"acs.api.destination"}},
	})
	runRMQ(t, []rmqScenario{
		{name: "dead-letter bus", path: "/target/createEventTargets", setup: base,
			body:   targetsReq("b", "r", dlq(httpTarget("t", "https://example.com/t"), map[string]any{"type": "bus", "config": map[string]any{"bus": "audit"}})),
			status: http.StatusOK, after: func(t *testing.T, e *env, resp *response) {
				listed(map[string]any{"eventTargets.0.runOptions.deadLetterQueue.type": "bus",
					"eventTargets.0.runOptions.deadLetterQueue.config.bus": "audit"})(t, e, resp)
				_, v := e.v1(t, "/api/v1/buses/b/rules/r/targets/t")
				assertJSONPath(t, v, "deadLetterConfig.bus", "audit")
			}},
		{name: "dead-letter bus unknown", path: "/target/createEventTargets", setup: base,
			body:   targetsReq("b", "r", dlq(httpTarget("t", "https://example.com/t"), map[string]any{"type": "bus", "config": map[string]any{"bus": "nope"}})),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"runOptions.deadLetterQueue.config.bus"}},
		{name: "dead-letter bus is the target's own", path: "/target/createEventTargets", setup: base,
			body:   targetsReq("b", "r", dlq(httpTarget("t", "https://example.com/t"), map[string]any{"type": "bus", "config": map[string]any{"bus": "b"}})),
			status: http.StatusBadRequest, code: "RequestParameterInvalid"},
		{name: "dead-letter queue of another type", path: "/target/createEventTargets", setup: base,
			body:   targetsReq("b", "r", dlq(httpTarget("t", "https://example.com/t"), map[string]any{"type": "rocketmq", "config": map[string]any{"topic": "x"}})),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"runOptions.deadLetterQueue.type must be bus"}},
		{name: "dead-letter bus without its name", path: "/target/createEventTargets", setup: base,
			body:   targetsReq("b", "r", dlq(httpTarget("t", "https://example.com/t"), map[string]any{"type": "bus"})),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"runOptions.deadLetterQueue.config.bus is required"}},
	})
}

// TestRocketMQConnectionsAgreeWithV1: connections, API destinations and targets with a dead-letter bus created
// through one API read back identically through the other.
func TestRocketMQConnectionsAgreeWithV1(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)

	// RocketMQ → /api/v1
	e.rmqMust(t, "/connection/createConnection", rmqBasicConnection("shop"))
	_, v := e.v1(t, "/api/v1/connections/shop")
	assertJSONPath(t, v, "authorizationType", "BASIC")
	assertJSONPath(t, v, "description", "basic")
	assertJSONPath(t, v, "authParameters.basicAuthParameters.username", "shop")
	assertJSONPath(t, v, "authParameters.invocationHttpParameters.headerParameters.0.isValueSecret", true)
	assertJSONPath(t, v, "authParameters.invocationHttpParameters.queryStringParameters.0.value", "2")

	e.rmqMust(t, "/api-destination/createApiDestination", rmqDestination("orders", "shop"))
	_, v = e.v1(t, "/api/v1/api-destinations/orders")
	assert.Equal(t, map[string]any{"name": "orders", "description": "orders", "connection": "shop",
		"invocationEndpoint": "https://api.example.com/orders", "httpMethod": "POST", "invocationRateLimitPerSecond": float64(10),
		"createdAt": v["createdAt"], "updatedAt": v["updatedAt"]}, v)

	// /api/v1 → RocketMQ
	e.must(t, http.MethodPost, "/api/v1/connections", oauthConnection("auth"), http.StatusCreated)
	got := e.rmqMust(t, "/connection/getConnection", map[string]any{"connectionName": "auth"})
	assertJSONPath(t, got, "connections.0.authParameters.authorizationType", "OAUTH_AUTH")
	assertJSONPath(t, got, "connections.0.authParameters.oauthParameters.authorizationEndpoint", "https://auth.example.com/token")
	assertJSONPath(t, got, "connections.0.authParameters.oauthParameters.clientParameters.clientID", "shop-client")
	assertJSONPath(t, got, "connections.0.authParameters.oauthParameters.scopes.0", "orders.read")
	assertJSONPath(t, got, "connections.0.authParameters.oauthParameters.oauthHttpParameters.bodyParameters.0.value", "shop")
	assertJSONPath(t, got, "connections.0.authParameters.invocationHttpParameters.headerParameters.0.isValueSecret", "true")
	for _, s := range allSecrets {
		assert.NotContains(t, jsonOf(t, got), s)
	}

	e.must(t, http.MethodPost, "/api/v1/api-destinations", destination("refunds", "auth"), http.StatusCreated)
	_, v = e.v1(t, "/api/v1/api-destinations/refunds")
	got = e.rmqMust(t, "/api-destination/getApiDestination", map[string]any{"apiDestinationName": "refunds"})
	assertJSONPath(t, got, "connectionName", "auth")
	assertJSONPath(t, got, "httpApiParameters.endpoint", v["invocationEndpoint"])
	assertJSONPath(t, got, "httpApiParameters.method", v["httpMethod"])
	assertJSONPath(t, got, "invocationRateLimitPerSecond", v["invocationRateLimitPerSecond"])

	// A target with a dead-letter bus, both ways.
	e.createBus(t, "b")
	e.createBus(t, "dlq")
	e.createRule(t, "b", "r")
	e.rmqMust(t, "/target/createEventTargets", targetsReq("b", "r", map[string]any{"eventTargetName": "viarmq",
		"className": "acs.api.destination", "config": map[string]any{"apiDestination": "orders"},
		"runOptions": map[string]any{"deadLetterQueue": map[string]any{"type": "bus", "config": map[string]any{"bus": "dlq"}}}}))
	_, v = e.v1(t, "/api/v1/buses/b/rules/r/targets/viarmq")
	assertJSONPath(t, v, "type", "api-destination")
	assertJSONPath(t, v, "config.apiDestination", "orders")
	assertJSONPath(t, v, "deadLetterConfig.bus", "dlq")

	e.must(t, http.MethodPut, "/api/v1/buses/b/rules/r/targets/viav1", map[string]any{"type": "bus", "config": map[string]any{"bus": "dlq"},
		"deadLetterConfig": map[string]any{"bus": "dlq"}}, http.StatusCreated)
	list := e.rmqMust(t, "/target/listEventTargets", ruleReq("b", "r"))
	assertJSONPath(t, list, "eventTargets.1.eventTargetName", "viav1")
	assertJSONPath(t, list, "eventTargets.1.className", "bus")
	assertJSONPath(t, list, "eventTargets.1.config.bus", "dlq")
	assertJSONPath(t, list, "eventTargets.1.runOptions.deadLetterQueue.config.bus", "dlq")
	assertJSONPath(t, list, "eventTargets.0.runOptions.deadLetterQueue.type", "bus")
}
