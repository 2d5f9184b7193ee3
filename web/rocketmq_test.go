package web_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rmqScenario is one call of the RocketMQ EventBridge API against the real router on a fresh database.
type rmqScenario struct {
	name    string
	path    string
	headers map[string]string
	// body is sent as is when it is a string or []byte, else encoded as JSON.
	body  any
	setup func(t *testing.T, e *env)

	status int
	// code is the error code the answer must carry (status >= 400).
	code string
	// contains are fragments the answer must hold.
	contains []string
	// json maps dotted paths into the answer to the values they must hold.
	json  map[string]any
	after func(t *testing.T, e *env, resp *response)
}

var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// runRMQ runs each scenario on SQLite and on MySQL, each on its own environment whose database holds nothing (see
// run); the scenarios of a dialect share one NATS server. Every answer, success or error, must be JSON with a
// requestId; errors must be {requestId, code, message}.
func runRMQ(t *testing.T, scenarios []rmqScenario) {
	t.Helper()
	eachDialect(t, func(t *testing.T, dialect string) {
		js := natsServer(t)
		fresh := scenarioDBs(t, dialect)
		for _, s := range scenarios {
			t.Run(s.name, func(t *testing.T) { runRMQScenario(t, newEnvOn(t, js, fresh(t)), s) })
		}
	})
}

// runRMQScenario prepares s on e, sends its request and checks the answer.
func runRMQScenario(t *testing.T, e *env, s rmqScenario) {
	t.Helper()
	if s.setup != nil {
		s.setup(t, e)
	}
	resp := e.do(t, http.MethodPost, s.path, s.headers, s.body)
	t.Logf("POST %s -> %d %s", s.path, resp.Status, truncate(resp.Body, 600))
	require.Equalf(t, s.status, resp.Status, "POST %s answered %s", s.path, resp.Body)
	assert.Contains(t, resp.Header.Get("Content-Type"), "application/json")
	v := resp.JSON(t)
	id, _ := v["requestId"].(string)
	assert.Regexp(t, uuidRe, id, "requestId")
	if resp.Status >= 400 {
		assert.Equal(t, s.code, v["code"], "error code")
		assert.NotEmpty(t, v["message"], "error message")
		assert.Len(t, v, 3, "an error is {requestId, code, message}")
	} else {
		require.Empty(t, s.code, "a scenario with an error code expects an error status")
	}
	for _, want := range s.contains {
		assert.Contains(t, string(resp.Body), want)
	}
	for path, want := range s.json {
		assertJSONPath(t, v, path, want)
	}
	if s.after != nil {
		s.after(t, e, resp)
	}
}

// rmq calls the RocketMQ EventBridge API as the default account.
func (e *env) rmq(t *testing.T, path string, body any) *response {
	t.Helper()
	return e.do(t, http.MethodPost, path, nil, body)
}

// rmqMust calls the RocketMQ EventBridge API and requires success.
func (e *env) rmqMust(t *testing.T, path string, body any) map[string]any {
	t.Helper()
	resp := e.rmq(t, path, body)
	require.Equalf(t, http.StatusOK, resp.Status, "POST %s answered %s", path, resp.Body)
	return resp.JSON(t)
}

// rmqCode asserts that a RocketMQ EventBridge call fails with status and code.
func (e *env) rmqCode(t *testing.T, path string, body any, status int, code string) {
	t.Helper()
	resp := e.rmq(t, path, body)
	require.Equalf(t, status, resp.Status, "POST %s answered %s", path, resp.Body)
	assert.Equal(t, code, resp.JSON(t)["code"])
}

func busReq(name string) map[string]any { return map[string]any{"eventBusName": name} }

func ruleReq(busName, name string) map[string]any {
	return map[string]any{"eventBusName": busName, "eventRuleName": name}
}

func httpTarget(name, url string) map[string]any {
	return map[string]any{"eventTargetName": name, "className": "http", "config": map[string]any{"url": url}}
}

func targetsReq(busName, ruleName string, targets ...map[string]any) map[string]any {
	return map[string]any{"eventBusName": busName, "eventRuleName": ruleName, "eventTargets": targets}
}

func withRMQBus(name string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		e.rmqMust(t, "/bus/createEventBus", busReq(name))
	}
}

func withRMQRule(busName, name, pattern string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		e.rmqMust(t, "/rule/createEventRule", map[string]any{"eventBusName": busName, "eventRuleName": name, "filterPattern": pattern})
	}
}

func withRMQTarget(busName, ruleName, name string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		e.rmqMust(t, "/target/createEventTargets", targetsReq(busName, ruleName, httpTarget(name, "https://example.com/"+name)))
	}
}

// v1 reads a resource through /api/v1 as the default account.
func (e *env) v1(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp := e.do(t, http.MethodGet, url, nil, nil)
	var v map[string]any
	require.NoError(t, json.Unmarshal(resp.Body, &v), "answer: %s", resp.Body)
	return resp.Status, v
}

func TestRocketMQBuses(t *testing.T) {
	t.Parallel()
	demo := withRMQBus("demo-bus")
	runRMQ(t, []rmqScenario{
		{
			name: "create", path: "/bus/createEventBus",
			body:   map[string]any{"eventBusName": "demo-bus", "description": "a demo bus."},
			status: http.StatusOK, json: map[string]any{"eventBusName": "demo-bus"},
			after: func(t *testing.T, e *env, _ *response) {
				status, v := e.v1(t, "/api/v1/buses/demo-bus")
				require.Equal(t, http.StatusOK, status)
				assert.Equal(t, "a demo bus.", v["description"])
				assert.Equal(t, "72h0m0s", v["retention"].(map[string]any)["maxAge"], "the default retention")
			},
		},
		{
			name: "create ignores unknown fields", path: "/bus/createEventBus",
			body:   map[string]any{"eventBusName": "demo-bus", "tags": map[string]any{"team": "shop"}, "extra": 1},
			status: http.StatusOK, json: map[string]any{"eventBusName": "demo-bus"},
		},
		{
			name: "create reads the capitalized names of the SDK", path: "/bus/createEventBus",
			body:   map[string]any{"EventBusName": "demo-bus", "Description": "d"},
			status: http.StatusOK, json: map[string]any{"eventBusName": "demo-bus"},
		},
		{
			name: "create twice", path: "/bus/createEventBus", setup: demo, body: busReq("demo-bus"),
			status: http.StatusConflict, code: "EventBusAlreadyExist",
		},
		{
			name: "create with an invalid name", path: "/bus/createEventBus", body: busReq("demo bus"),
			status: http.StatusConflict, code: "EventBusNameInvalid", contains: []string{"eventBusName"},
		},
		{
			name: "create without a name", path: "/bus/createEventBus", body: map[string]any{"description": "x"},
			status: http.StatusConflict, code: "EventBusNameInvalid",
		},
		{
			name: "create with a description too long", path: "/bus/createEventBus",
			body:   map[string]any{"eventBusName": "demo-bus", "description": strings.Repeat("x", 513)},
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"description"},
		},
		{
			name: "malformed JSON", path: "/bus/createEventBus", body: `{"eventBusName": `,
			status: http.StatusBadRequest, code: "RequestParameterInvalid",
		},
		{
			name: "empty body", path: "/bus/createEventBus", body: "",
			status: http.StatusBadRequest, code: "RequestParameterInvalid",
		},
		{
			name: "a field of the wrong type", path: "/bus/createEventBus", body: `{"eventBusName": 42}`,
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"eventBusName must be a string"},
		},
		{
			name: "the account comes from resourceOwnerAccountId", path: "/bus/createEventBus",
			headers: map[string]string{"resourceOwnerAccountId": "team42"}, body: busReq("demo-bus"),
			status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				resp := e.do(t, http.MethodGet, "/api/v1/buses/demo-bus", map[string]string{"X-Account-Id": "team42"}, nil)
				assert.Equal(t, http.StatusOK, resp.Status)
				status, _ := e.v1(t, "/api/v1/buses/demo-bus")
				assert.Equal(t, http.StatusNotFound, status, "not in the default account")
				e.rmqCode(t, "/bus/getEventBus", busReq("demo-bus"), http.StatusConflict, "EventBusNotExist")
			},
		},
		{
			name: "an invalid account", path: "/bus/listEventBuses",
			headers: map[string]string{"resourceOwnerAccountId": "Not_Valid"}, body: `{}`,
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"resourceOwnerAccountId"},
		},
		{
			name: "get", path: "/bus/getEventBus",
			setup: func(t *testing.T, e *env) {
				e.rmqMust(t, "/bus/createEventBus", map[string]any{"eventBusName": "demo-bus", "description": "d"})
			},
			body:   busReq("demo-bus"),
			status: http.StatusOK, json: map[string]any{"eventBusName": "demo-bus", "description": "d"},
			after: func(t *testing.T, _ *env, resp *response) {
				ts, ok := resp.JSON(t)["createTimestamp"].(float64)
				require.True(t, ok, "createTimestamp is a number")
				assert.Greater(t, ts, float64(1.6e12), "milliseconds since the epoch")
			},
		},
		{
			name: "get an unknown bus", path: "/bus/getEventBus", body: busReq("nothing"),
			status: http.StatusConflict, code: "EventBusNotExist", contains: []string{"nothing"},
		},
		{
			name: "get without a name", path: "/bus/getEventBus", body: `{}`,
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"eventBusName is required"},
		},
		{
			name: "delete", path: "/bus/deleteEventBus", setup: demo, body: busReq("demo-bus"),
			status: http.StatusOK,
			after: func(t *testing.T, e *env, resp *response) {
				assert.Len(t, resp.JSON(t), 1, "only a requestId")
				e.rmqCode(t, "/bus/getEventBus", busReq("demo-bus"), http.StatusConflict, "EventBusNotExist")
			},
		},
		{
			name: "delete an unknown bus", path: "/bus/deleteEventBus", body: busReq("nothing"),
			status: http.StatusConflict, code: "EventBusNotExist",
		},
		{
			name: "delete a bus with rules", path: "/bus/deleteEventBus",
			setup: setups(demo, withRMQRule("demo-bus", "r1", "{}")), body: busReq("demo-bus"),
			status: http.StatusConflict, code: "EventBusRuleNotEmptyForDelete",
		},
		{
			name: "list a first page", path: "/bus/listEventBuses",
			setup: setups(withRMQBus("b1"), withRMQBus("b2"), withRMQBus("b3")), body: map[string]any{"maxResults": 2},
			status: http.StatusOK,
			json: map[string]any{"total": 3, "maxResults": 2, "nextToken": "2", "eventBuses": []any{
				map[string]any{"eventBusName": "b1", "description": ""}, map[string]any{"eventBusName": "b2", "description": ""},
			}},
		},
		{
			name: "list the last page", path: "/bus/listEventBuses",
			setup: setups(withRMQBus("b1"), withRMQBus("b2"), withRMQBus("b3")), body: map[string]any{"maxResults": 2, "nextToken": "2"},
			status: http.StatusOK,
			json:   map[string]any{"total": 3, "eventBuses": []any{map[string]any{"eventBusName": "b3", "description": ""}}},
			after: func(t *testing.T, _ *env, resp *response) {
				assert.NotContains(t, resp.JSON(t), "nextToken", "no next page")
			},
		},
		{
			name: "list with the defaults", path: "/bus/listEventBuses", setup: demo, body: `{}`,
			status: http.StatusOK, json: map[string]any{"total": 1, "maxResults": 50, "eventBuses.0.eventBusName": "demo-bus"},
		},
		{
			name: "list past the end", path: "/bus/listEventBuses", setup: demo, body: map[string]any{"nextToken": "7"},
			status: http.StatusOK, json: map[string]any{"total": 1, "eventBuses": []any{}},
		},
		{
			name: "list with maxResults too large", path: "/bus/listEventBuses", body: map[string]any{"maxResults": 101},
			status: http.StatusConflict, code: "LimitSizeInvalid",
		},
		{
			name: "list with a nextToken that is not an offset", path: "/bus/listEventBuses", body: map[string]any{"nextToken": "YjE"},
			status: http.StatusConflict, code: "NextTokenInvalid",
		},
	})
}

func TestRocketMQRules(t *testing.T) {
	t.Parallel()
	demo := withRMQBus("demo-bus")
	withDemoRule := setups(demo, withRMQRule("demo-bus", "demo-rule", `{"source":["shop"]}`))
	runRMQ(t, []rmqScenario{
		{
			name: "create", path: "/rule/createEventRule", setup: demo,
			body: map[string]any{"eventBusName": "demo-bus", "eventRuleName": "demo-rule", "description": "A demo rule.",
				"filterPattern": `{"source": ["shop"], "data": {"amount": [{"numeric": [">", 100]}]}}`},
			status: http.StatusOK, json: map[string]any{"eventRuleName": "demo-rule"},
			after: func(t *testing.T, e *env, _ *response) {
				status, v := e.v1(t, "/api/v1/buses/demo-bus/rules/demo-rule")
				require.Equal(t, http.StatusOK, status)
				assert.Equal(t, "ENABLED", v["state"])
				assert.Equal(t, "A demo rule.", v["description"])
				assertJSONPath(t, v, "eventPattern", map[string]any{"source": []any{"shop"},
					"data": map[string]any{"amount": []any{map[string]any{"numeric": []any{">", 100}}}}})
			},
		},
		{
			name: "create matching everything", path: "/rule/createEventRule", setup: demo,
			body:   map[string]any{"eventBusName": "demo-bus", "eventRuleName": "all", "filterPattern": "{}"},
			status: http.StatusOK,
		},
		{
			name: "create twice", path: "/rule/createEventRule", setup: withDemoRule,
			body:   map[string]any{"eventBusName": "demo-bus", "eventRuleName": "demo-rule", "filterPattern": "{}"},
			status: http.StatusConflict, code: "EventRuleAlreadyExist",
		},
		{
			name: "create on an unknown bus", path: "/rule/createEventRule",
			body:   map[string]any{"eventBusName": "nothing", "eventRuleName": "demo-rule", "filterPattern": "{}"},
			status: http.StatusConflict, code: "EventBusNotExist",
		},
		{
			name: "create with an invalid name", path: "/rule/createEventRule", setup: demo,
			body:   map[string]any{"eventBusName": "demo-bus", "eventRuleName": "a.b", "filterPattern": "{}"},
			status: http.StatusConflict, code: "EventRuleNameInvalid",
		},
		{
			name: "create with an invalid pattern", path: "/rule/createEventRule", setup: demo,
			body:   map[string]any{"eventBusName": "demo-bus", "eventRuleName": "demo-rule", "filterPattern": `{"source": "shop"}`},
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"filterPattern"},
		},
		{
			name: "create with a pattern that is not a string", path: "/rule/createEventRule", setup: demo,
			body:   map[string]any{"eventBusName": "demo-bus", "eventRuleName": "demo-rule", "filterPattern": map[string]any{"source": []any{"shop"}}},
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"filterPattern must be a string"},
		},
		{
			name: "create without a bus", path: "/rule/createEventRule", body: map[string]any{"eventRuleName": "r"},
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"eventBusName is required"},
		},
		{
			name: "get with its targets", path: "/rule/getEventRule",
			setup: setups(withDemoRule, withRMQTarget("demo-bus", "demo-rule", "t1")), body: ruleReq("demo-bus", "demo-rule"),
			status: http.StatusOK,
			json: map[string]any{
				"eventBusName": "demo-bus", "eventRuleName": "demo-rule", "description": "", "filterPattern": `{"source":["shop"]}`,
				"status": "ENABLE", "eventTargets.0.eventTargetName": "t1", "eventTargets.0.className": "http",
				"eventTargets.0.config.url": "https://example.com/t1",
			},
			after: func(t *testing.T, _ *env, resp *response) {
				v := resp.JSON(t)
				assert.NotEmpty(t, v["gmtCreate"])
				assert.NotEmpty(t, v["gmtModify"])
			},
		},
		{
			name: "get an unknown rule", path: "/rule/getEventRule", setup: demo, body: ruleReq("demo-bus", "nothing"),
			status: http.StatusConflict, code: "EventRuleNotExist",
		},
		{
			name: "get on an unknown bus", path: "/rule/getEventRule", body: ruleReq("nothing", "demo-rule"),
			status: http.StatusConflict, code: "EventBusNotExist",
		},
		{
			name: "get without a rule name", path: "/rule/getEventRule", body: busReq("demo-bus"),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"eventRuleName is required"},
		},
		{
			name: "update keeps the state and what is absent", path: "/rule/updateEventRule",
			setup: setups(withDemoRule, func(t *testing.T, e *env) {
				e.rmqMust(t, "/rule/disableEventRule", ruleReq("demo-bus", "demo-rule"))
			}),
			body:   map[string]any{"eventBusName": "demo-bus", "eventRuleName": "demo-rule", "description": "changed"},
			status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				v := e.rmqMust(t, "/rule/getEventRule", ruleReq("demo-bus", "demo-rule"))
				assert.Equal(t, "changed", v["description"])
				assert.Equal(t, `{"source":["shop"]}`, v["filterPattern"])
				assert.Equal(t, "DISABLE", v["status"])
			},
		},
		{
			name: "update the pattern", path: "/rule/updateEventRule", setup: withDemoRule,
			body:   map[string]any{"eventBusName": "demo-bus", "eventRuleName": "demo-rule", "filterPattern": `{"type": ["order.created"]}`},
			status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				_, v := e.v1(t, "/api/v1/buses/demo-bus/rules/demo-rule")
				assertJSONPath(t, v, "eventPattern", map[string]any{"type": []any{"order.created"}})
			},
		},
		{
			name: "update an unknown rule does not create it", path: "/rule/updateEventRule", setup: demo,
			body:   map[string]any{"eventBusName": "demo-bus", "eventRuleName": "nothing", "filterPattern": "{}"},
			status: http.StatusConflict, code: "EventRuleNotExist",
			after: func(t *testing.T, e *env, _ *response) {
				status, _ := e.v1(t, "/api/v1/buses/demo-bus/rules/nothing")
				assert.Equal(t, http.StatusNotFound, status)
			},
		},
		{
			name: "update with an invalid pattern", path: "/rule/updateEventRule", setup: withDemoRule,
			body:   map[string]any{"eventBusName": "demo-bus", "eventRuleName": "demo-rule", "filterPattern": "not json"},
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"filterPattern"},
		},
		{
			name: "delete", path: "/rule/deleteEventRule", setup: withDemoRule, body: ruleReq("demo-bus", "demo-rule"),
			status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				e.rmqCode(t, "/rule/getEventRule", ruleReq("demo-bus", "demo-rule"), http.StatusConflict, "EventRuleNotExist")
			},
		},
		{
			name: "delete an unknown rule", path: "/rule/deleteEventRule", setup: demo, body: ruleReq("demo-bus", "nothing"),
			status: http.StatusConflict, code: "EventRuleNotExist",
		},
		{
			name: "list", path: "/rule/listEventRules",
			setup:  setups(demo, withRMQRule("demo-bus", "r1", "{}"), withRMQRule("demo-bus", "r2", `{"source":["a"]}`), withRMQRule("demo-bus", "r3", "{}")),
			body:   map[string]any{"eventBusName": "demo-bus", "maxResults": 2, "nextToken": "1"},
			status: http.StatusOK,
			json: map[string]any{"total": 3, "maxResults": 2, "eventRules.0.eventRuleName": "r2",
				"eventRules.0.filterPattern": `{"source":["a"]}`, "eventRules.0.status": "ENABLE", "eventRules.0.eventBusName": "demo-bus",
				"eventRules.1.eventRuleName": "r3"},
		},
		{
			name: "list on an unknown bus", path: "/rule/listEventRules", body: busReq("nothing"),
			status: http.StatusConflict, code: "EventBusNotExist",
		},
		{
			name: "list with maxResults below 1", path: "/rule/listEventRules", setup: demo,
			body:   map[string]any{"eventBusName": "demo-bus", "maxResults": -1},
			status: http.StatusConflict, code: "LimitSizeInvalid",
		},
		{
			name: "disable", path: "/rule/disableEventRule", setup: withDemoRule, body: ruleReq("demo-bus", "demo-rule"),
			status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				_, v := e.v1(t, "/api/v1/buses/demo-bus/rules/demo-rule")
				assert.Equal(t, "DISABLED", v["state"])
			},
		},
		{
			name: "enable", path: "/rule/enableEventRule",
			setup: setups(withDemoRule, func(t *testing.T, e *env) {
				e.must(t, http.MethodPost, "/api/v1/buses/demo-bus/rules/demo-rule/disable", nil, http.StatusOK)
			}),
			body: ruleReq("demo-bus", "demo-rule"), status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				v := e.rmqMust(t, "/rule/getEventRule", ruleReq("demo-bus", "demo-rule"))
				assert.Equal(t, "ENABLE", v["status"])
			},
		},
		{
			name: "enable an unknown rule", path: "/rule/enableEventRule", setup: demo, body: ruleReq("demo-bus", "nothing"),
			status: http.StatusConflict, code: "EventRuleNotExist",
		},
		{
			name: "disable an unknown rule", path: "/rule/disableEventRule", setup: demo, body: ruleReq("demo-bus", "nothing"),
			status: http.StatusConflict, code: "EventRuleNotExist",
		},
	})
}

func TestRocketMQTargets(t *testing.T) {
	t.Parallel()
	withDemoRule := setups(withRMQBus("demo-bus"), withRMQRule("demo-bus", "demo-rule", "{}"))
	withT1 := setups(withDemoRule, withRMQTarget("demo-bus", "demo-rule", "t1"))
	full := map[string]any{
		"eventTargetName": "hook", "className": "http",
		"config": map[string]any{
			"url": "https://example.com/hook", "method": "put", "headers": map[string]any{"X-Team": "shop"},
			"mode": "structured", "timeout": "2s",
			"transform": map[string]any{"form": "TEMPLATE", "value": `{"body": "$.data.body"}`, "template": `{"text": "${body}"}`},
		},
		"runOptions": map[string]any{
			"errorsTolerance": "ALL",
			"retryStrategy":   map[string]any{"pushRetryStrategy": "EXPONENTIAL_DECAY_RETRY", "maximumRetryAttempts": 10, "maximumEventAgeInSeconds": 600},
		},
	}
	runRMQ(t, []rmqScenario{
		{
			name: "create", path: "/target/createEventTargets", setup: withDemoRule,
			body: targetsReq("demo-bus", "demo-rule", full), status: http.StatusOK,
			after: func(t *testing.T, e *env, resp *response) {
				assert.Len(t, resp.JSON(t), 1, "only a requestId")
				status, v := e.v1(t, "/api/v1/buses/demo-bus/rules/demo-rule/targets/hook")
				require.Equal(t, http.StatusOK, status)
				assertJSONPath(t, v, "type", "http")
				assertJSONPath(t, v, "config", map[string]any{"url": "https://example.com/hook", "method": "PUT",
					"headers": map[string]any{"X-Team": "shop"}, "mode": "structured", "timeout": "2s"})
				assertJSONPath(t, v, "transform", map[string]any{"form": "TEMPLATE", "value": `{"body": "$.data.body"}`, "template": `{"text": "${body}"}`})
				assertJSONPath(t, v, "retryPolicy", map[string]any{"maximumRetryAttempts": 10, "maximumEventAgeInSeconds": 600})
			},
		},
		{
			name: "create several", path: "/target/createEventTargets", setup: withDemoRule,
			body:   targetsReq("demo-bus", "demo-rule", httpTarget("a", "https://example.com/a"), httpTarget("b", "http://example.com/b")),
			status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				v := e.rmqMust(t, "/target/listEventTargets", ruleReq("demo-bus", "demo-rule"))
				assertJSONPath(t, v, "eventTargets.0.eventTargetName", "a")
				assertJSONPath(t, v, "eventTargets.1.eventTargetName", "b")
			},
		},
		{
			name: "BACKOFF_RETRY means 3 attempts", path: "/target/createEventTargets", setup: withDemoRule,
			body: targetsReq("demo-bus", "demo-rule", map[string]any{"eventTargetName": "t", "className": "http",
				"config": map[string]any{"url": "https://example.com/"}, "runOptions": map[string]any{"retryStrategy": map[string]any{"pushRetryStrategy": "BACKOFF_RETRY"}}}),
			status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				_, v := e.v1(t, "/api/v1/buses/demo-bus/rules/demo-rule/targets/t")
				assertJSONPath(t, v, "retryPolicy", map[string]any{"maximumRetryAttempts": 3, "maximumEventAgeInSeconds": 86400})
			},
		},
		{
			name: "without runOptions the defaults apply", path: "/target/createEventTargets", setup: withDemoRule,
			body: targetsReq("demo-bus", "demo-rule", httpTarget("t", "https://example.com/")), status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				_, v := e.v1(t, "/api/v1/buses/demo-bus/rules/demo-rule/targets/t")
				assertJSONPath(t, v, "retryPolicy", map[string]any{"maximumRetryAttempts": 185, "maximumEventAgeInSeconds": 86400})
			},
		},
		{
			name: "a className we do not support", path: "/target/createEventTargets", setup: withDemoRule,
			body: targetsReq("demo-bus", "demo-rule", map[string]any{"eventTargetName": "ding", "className": "acs.dingtalk",
				"config": map[string]any{"WebHook": "https://oapi.dingtalk.com/robot/send"}}),
			status: http.StatusConflict, code: "EventTargetClassNotExist", contains: []string{"acs.dingtalk", "supported: http"},
		},
		{
			name: "no className", path: "/target/createEventTargets", setup: withDemoRule,
			body:   targetsReq("demo-bus", "demo-rule", map[string]any{"eventTargetName": "t", "config": map[string]any{"url": "https://example.com/"}}),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"className is required"},
		},
		{
			name: "an invalid url names the target and the field", path: "/target/createEventTargets", setup: withDemoRule,
			body:   targetsReq("demo-bus", "demo-rule", httpTarget("ok", "https://example.com/"), httpTarget("bad", "ftp://example.com/")),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"eventTargets[1]", "config.url"},
			after: func(t *testing.T, e *env, _ *response) {
				v := e.rmqMust(t, "/target/listEventTargets", ruleReq("demo-bus", "demo-rule"))
				assertJSONPath(t, v, "eventTargets", []any{}) // validated before anything is stored
			},
		},
		{
			name: "retry attempts out of range", path: "/target/createEventTargets", setup: withDemoRule,
			body: targetsReq("demo-bus", "demo-rule", map[string]any{"eventTargetName": "t", "className": "http",
				"config": map[string]any{"url": "https://example.com/"}, "runOptions": map[string]any{"retryStrategy": map[string]any{"maximumRetryAttempts": 500}}}),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"runOptions.retryStrategy.maximumRetryAttempts"},
		},
		{
			name: "an unknown pushRetryStrategy", path: "/target/createEventTargets", setup: withDemoRule,
			body: targetsReq("demo-bus", "demo-rule", map[string]any{"eventTargetName": "t", "className": "http",
				"config": map[string]any{"url": "https://example.com/"}, "runOptions": map[string]any{"retryStrategy": map[string]any{"pushRetryStrategy": "SOMETIMES"}}}),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"pushRetryStrategy"},
		},
		{
			name: "errorsTolerance NONE is not supported", path: "/target/createEventTargets", setup: withDemoRule,
			body: targetsReq("demo-bus", "demo-rule", map[string]any{"eventTargetName": "t", "className": "http",
				"config": map[string]any{"url": "https://example.com/"}, "runOptions": map[string]any{"errorsTolerance": "NONE"}}),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"errorsTolerance"},
		},
		{
			name: "a deadLetterQueue is not supported yet", path: "/target/createEventTargets", setup: withDemoRule,
			body: targetsReq("demo-bus", "demo-rule", map[string]any{"eventTargetName": "t", "className": "http",
				"config":     map[string]any{"url": "https://example.com/"},
				"runOptions": map[string]any{"deadLetterQueue": map[string]any{"type": "acs.mns.queue", "config": map[string]any{"queue": "q"}}}}),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"deadLetterQueue"},
		},
		{
			name: "an invalid target name", path: "/target/createEventTargets", setup: withDemoRule,
			body:   targetsReq("demo-bus", "demo-rule", httpTarget("a b", "https://example.com/")),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"eventTargetName"},
		},
		{
			name: "a target named twice", path: "/target/createEventTargets", setup: withDemoRule,
			body:   targetsReq("demo-bus", "demo-rule", httpTarget("a", "https://example.com/"), httpTarget("a", "https://example.com/")),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"twice"},
		},
		{
			name: "no targets", path: "/target/createEventTargets", setup: withDemoRule,
			body:   map[string]any{"eventBusName": "demo-bus", "eventRuleName": "demo-rule"},
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"eventTargets"},
		},
		{
			name: "create an existing target", path: "/target/createEventTargets", setup: withT1,
			body:   targetsReq("demo-bus", "demo-rule", httpTarget("t1", "https://example.com/other")),
			status: http.StatusConflict, code: "EventTargetAlreadyExist",
			after: func(t *testing.T, e *env, _ *response) {
				_, v := e.v1(t, "/api/v1/buses/demo-bus/rules/demo-rule/targets/t1")
				assertJSONPath(t, v, "config.url", "https://example.com/t1")
			},
		},
		{
			name: "more than 5 targets on a rule", path: "/target/createEventTargets",
			setup: setups(withT1, withRMQTarget("demo-bus", "demo-rule", "t2"), withRMQTarget("demo-bus", "demo-rule", "t3")),
			body: targetsReq("demo-bus", "demo-rule", httpTarget("t4", "https://example.com/"), httpTarget("t5", "https://example.com/"),
				httpTarget("t6", "https://example.com/")),
			status: http.StatusConflict, code: "LimitExceeded",
			after: func(t *testing.T, e *env, _ *response) {
				v := e.rmqMust(t, "/target/listEventTargets", ruleReq("demo-bus", "demo-rule"))
				assert.Len(t, v["eventTargets"], 3, "none of them stored")
			},
		},
		{
			name: "create on an unknown rule", path: "/target/createEventTargets", setup: withRMQBus("demo-bus"),
			body:   targetsReq("demo-bus", "nothing", httpTarget("t", "https://example.com/")),
			status: http.StatusConflict, code: "EventRuleNotExist",
		},
		{
			name: "update", path: "/target/updateEventTargets", setup: withT1,
			body: targetsReq("demo-bus", "demo-rule", map[string]any{"eventTargetName": "t1", "className": "http",
				"config": map[string]any{"url": "https://example.com/new", "inputPath": "$.data"}}),
			status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				_, v := e.v1(t, "/api/v1/buses/demo-bus/rules/demo-rule/targets/t1")
				assertJSONPath(t, v, "config.url", "https://example.com/new")
				assertJSONPath(t, v, "inputPath", "$.data")
			},
		},
		{
			name: "update an unknown target does not create it", path: "/target/updateEventTargets", setup: withT1,
			body:   targetsReq("demo-bus", "demo-rule", httpTarget("t2", "https://example.com/")),
			status: http.StatusConflict, code: "EventTargetNotExist",
			after: func(t *testing.T, e *env, _ *response) {
				status, _ := e.v1(t, "/api/v1/buses/demo-bus/rules/demo-rule/targets/t2")
				assert.Equal(t, http.StatusNotFound, status)
			},
		},
		{
			name: "delete", path: "/target/deleteEventTargets", setup: withT1,
			body:   map[string]any{"eventBusName": "demo-bus", "eventRuleName": "demo-rule", "eventTargetNames": []string{"t1"}},
			status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				status, _ := e.v1(t, "/api/v1/buses/demo-bus/rules/demo-rule/targets/t1")
				assert.Equal(t, http.StatusNotFound, status)
			},
		},
		{
			name: "delete an unknown target deletes nothing", path: "/target/deleteEventTargets", setup: withT1,
			body:   map[string]any{"eventBusName": "demo-bus", "eventRuleName": "demo-rule", "eventTargetNames": []string{"t1", "t2"}},
			status: http.StatusConflict, code: "EventTargetNotExist", contains: []string{"t2"},
			after: func(t *testing.T, e *env, _ *response) {
				status, _ := e.v1(t, "/api/v1/buses/demo-bus/rules/demo-rule/targets/t1")
				assert.Equal(t, http.StatusOK, status)
			},
		},
		{
			name: "delete without names", path: "/target/deleteEventTargets", setup: withT1,
			body:   ruleReq("demo-bus", "demo-rule"),
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"eventTargetNames"},
		},
		{
			name: "list", path: "/target/listEventTargets", setup: withT1, body: ruleReq("demo-bus", "demo-rule"),
			status: http.StatusOK,
			json: map[string]any{"eventBusName": "demo-bus", "eventRuleName": "demo-rule", "eventTargets": []any{map[string]any{
				"eventTargetName": "t1", "className": "http",
				"config": map[string]any{"url": "https://example.com/t1", "method": "POST", "mode": "binary", "timeout": "5s"},
				"runOptions": map[string]any{"errorsTolerance": "ALL", "retryStrategy": map[string]any{
					"pushRetryStrategy": "EXPONENTIAL_DECAY_RETRY", "maximumRetryAttempts": 185, "maximumEventAgeInSeconds": 86400}},
			}}},
		},
		{
			name: "list on an unknown rule", path: "/target/listEventTargets", setup: withRMQBus("demo-bus"), body: ruleReq("demo-bus", "nothing"),
			status: http.StatusConflict, code: "EventRuleNotExist",
		},
		{
			name: "list malformed", path: "/target/listEventTargets", body: `[1, 2]`,
			status: http.StatusBadRequest, code: "RequestParameterInvalid",
		},
	})
}

func TestRocketMQPutEvents(t *testing.T) {
	t.Parallel()
	demo := withRMQBus("demo-bus")
	event := func(id string, ext map[string]any) map[string]any {
		e := ce(id, "/shop", "order.created", map[string]any{"amount": 120})
		for k, v := range ext {
			e[k] = v
		}
		return e
	}
	onDemo := map[string]any{"eventbusname": "demo-bus"}
	runRMQ(t, []rmqScenario{
		{
			name: "binary", path: "/putEvents", setup: demo,
			headers: map[string]string{"Content-Type": "application/json", "ce-specversion": "1.0", "ce-id": "e1",
				"ce-source": "/shop", "ce-type": "order.created", "ce-eventbusname": "demo-bus"},
			body:   `{"amount": 120}`,
			status: http.StatusOK, json: map[string]any{"failedEntryCount": 0, "entryList": []any{map[string]any{"eventId": "e1"}}},
			after: func(t *testing.T, e *env, _ *response) {
				evs := e.storedEvents(t, "demo-bus")
				require.Len(t, evs, 1)
				assert.Equal(t, "e1", evs[0].ID())
				assert.JSONEq(t, `{"amount": 120}`, string(evs[0].Data()))
			},
		},
		{
			name: "structured", path: "/putEvents", setup: demo,
			headers: map[string]string{"Content-Type": structured + "; charset=UTF-8"},
			body:    mustJSON(event("e1", onDemo)),
			status:  http.StatusOK, json: map[string]any{"failedEntryCount": 0, "entryList.0.eventId": "e1"},
			after: storedIDs("demo-bus", "e1"),
		},
		{
			name: "structured with the quick start's aliyuneventbusname", path: "/putEvents", setup: demo,
			headers: map[string]string{"Content-Type": structured},
			body:    mustJSON(event("e1", map[string]any{"aliyuneventbusname": "demo-bus"})),
			status:  http.StatusOK, json: map[string]any{"entryList.0.eventId": "e1"},
		},
		{
			name: "batch: entries fail alone, in request order", path: "/putEvents", setup: demo,
			headers: map[string]string{"Content-Type": batch},
			body: mustJSON([]any{
				event("e1", onDemo),
				map[string]any{"specversion": "1.0", "id": "e2", "type": "t", "eventbusname": "demo-bus"}, // no source
				event("e3", nil), // no bus
				event("e4", onDemo),
			}),
			status: http.StatusOK,
			json: map[string]any{"failedEntryCount": 2, "entryList.0.eventId": "e1", "entryList.1.errorCode": "InvalidEvent",
				"entryList.2.errorCode": "RequestParameterInvalid", "entryList.3.eventId": "e4"},
			after: storedIDs("demo-bus", "e1", "e4"),
		},
		{
			name: "batch on two buses", path: "/putEvents", setup: setups(demo, withRMQBus("other")),
			headers: map[string]string{"Content-Type": batch},
			body:    mustJSON([]any{event("e1", onDemo), event("e2", map[string]any{"eventbusname": "other"})}),
			status:  http.StatusConflict, code: "PutEventsRequestMoreThanOneEventBus", contains: []string{"demo-bus, other"},
		},
		{
			name: "batch where every entry fails", path: "/putEvents",
			headers: map[string]string{"Content-Type": batch},
			body:    mustJSON([]any{event("e1", nil)}),
			status:  http.StatusOK, json: map[string]any{"failedEntryCount": 1, "entryList.0.errorCode": "RequestParameterInvalid"},
		},
		{
			name: "an unknown bus", path: "/putEvents",
			headers: map[string]string{"Content-Type": structured},
			body:    mustJSON(event("e1", map[string]any{"eventbusname": "nothing"})),
			status:  http.StatusConflict, code: "EventBusNotExist",
		},
		{
			name: "a single event without eventbusname", path: "/putEvents", setup: demo,
			headers: map[string]string{"Content-Type": structured},
			body:    mustJSON(event("e1", nil)),
			status:  http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"eventbusname"},
		},
		{
			name: "a single invalid event", path: "/putEvents", setup: demo,
			headers: map[string]string{"Content-Type": structured},
			body:    `{"specversion": "1.0", "id": "e1", "eventbusname": "demo-bus"}`,
			status:  http.StatusBadRequest, code: "RequestParameterInvalid",
		},
		{
			name: "a malformed batch", path: "/putEvents",
			headers: map[string]string{"Content-Type": batch}, body: `[{"specversion": `,
			status: http.StatusBadRequest, code: "RequestParameterInvalid",
		},
		{
			name: "no CloudEvent", path: "/putEvents", body: `{"a": "b"}`,
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"no CloudEvent"},
		},
	})
}

// TestRocketMQAgreesWithV1: what one API creates, the other reads back the same.
func TestRocketMQAgreesWithV1(t *testing.T) {
	t.Parallel()
	js := natsServer(t)
	eachDialect(t, func(t *testing.T, dialect string) {

		t.Run("created through RocketMQ EventBridge, read through /api/v1", func(t *testing.T) {
			e := newEnv(t, js, dialect)
			e.rmqMust(t, "/bus/createEventBus", map[string]any{"eventBusName": "orders", "description": "shop orders"})
			e.rmqMust(t, "/rule/createEventRule", map[string]any{"eventBusName": "orders", "eventRuleName": "big",
				"description": "big orders", "filterPattern": `{"type": ["order.created"], "data": {"amount": [{"numeric": [">", 100]}]}}`})
			e.rmqMust(t, "/rule/disableEventRule", ruleReq("orders", "big"))
			e.rmqMust(t, "/target/createEventTargets", targetsReq("orders", "big",
				map[string]any{"eventTargetName": "hook", "className": "http",
					"config": map[string]any{"url": "https://example.com/hook", "headers": map[string]any{"X-Team": "shop"},
						"inputTransformer": map[string]any{"inputPathsMap": map[string]any{"id": "$.data.orderId"}, "inputTemplate": `{"order": <id>}`}},
					"runOptions": map[string]any{"retryStrategy": map[string]any{"maximumRetryAttempts": 7, "maximumEventAgeInSeconds": 3600}}},
				httpTarget("audit", "https://example.com/audit")))

			_, b := e.v1(t, "/api/v1/buses/orders")
			assert.Equal(t, "orders", b["name"])
			assert.Equal(t, "shop orders", b["description"])

			_, r := e.v1(t, "/api/v1/buses/orders/rules/big")
			assert.Equal(t, "big orders", r["description"])
			assert.Equal(t, "DISABLED", r["state"])
			assertJSONPath(t, r, "eventPattern", map[string]any{"type": []any{"order.created"},
				"data": map[string]any{"amount": []any{map[string]any{"numeric": []any{">", 100}}}}})

			_, ts := e.v1(t, "/api/v1/buses/orders/rules/big/targets")
			targets := ts["targets"].([]any)
			require.Len(t, targets, 2)
			assertJSONPath(t, targets[0], "name", "audit")
			assertJSONPath(t, targets[1], "name", "hook")
			assertJSONPath(t, targets[1], "config", map[string]any{"url": "https://example.com/hook", "method": "POST",
				"headers": map[string]any{"X-Team": "shop"}, "mode": "binary", "timeout": "5s"})
			assertJSONPath(t, targets[1], "inputTransformer", map[string]any{"inputPathsMap": map[string]any{"id": "$.data.orderId"}, "inputTemplate": `{"order": <id>}`})
			assertJSONPath(t, targets[1], "retryPolicy", map[string]any{"maximumRetryAttempts": 7, "maximumEventAgeInSeconds": 3600})
		})

		t.Run("created through /api/v1, read through RocketMQ EventBridge", func(t *testing.T) {
			e := newEnv(t, js, dialect)
			e.must(t, http.MethodPost, "/api/v1/buses", map[string]any{"name": "orders", "description": "shop orders"}, http.StatusCreated)
			e.must(t, http.MethodPost, "/api/v1/buses/orders/rules", map[string]any{"name": "big", "description": "big orders",
				"state": "DISABLED", "eventPattern": map[string]any{"source": []any{"shop"}}}, http.StatusCreated)
			e.must(t, http.MethodPut, "/api/v1/buses/orders/rules/big/targets/hook", map[string]any{"type": "http",
				"config":      map[string]any{"url": "https://example.com/hook", "method": "PATCH", "mode": "structured", "timeout": "3s"},
				"input":       `{"status": "created"}`,
				"attributes":  map[string]any{"subject": "orders/<ce.id>"},
				"retryPolicy": map[string]any{"maximumRetryAttempts": 0, "maximumEventAgeInSeconds": 60}}, http.StatusCreated)

			b := e.rmqMust(t, "/bus/getEventBus", busReq("orders"))
			assert.Equal(t, "orders", b["eventBusName"])
			assert.Equal(t, "shop orders", b["description"])
			list := e.rmqMust(t, "/bus/listEventBuses", map[string]any{})
			assertJSONPath(t, list, "eventBuses", []any{map[string]any{"eventBusName": "orders", "description": "shop orders"}})

			r := e.rmqMust(t, "/rule/getEventRule", ruleReq("orders", "big"))
			assert.Equal(t, "big orders", r["description"])
			assert.Equal(t, "DISABLE", r["status"])
			assert.JSONEq(t, `{"source": ["shop"]}`, r["filterPattern"].(string))
			assertJSONPath(t, r, "eventTargets", []any{map[string]any{
				"eventTargetName": "hook", "className": "http",
				"config": map[string]any{"url": "https://example.com/hook", "method": "PATCH", "mode": "structured", "timeout": "3s",
					"input": `{"status": "created"}`, "attributes": map[string]any{"subject": "orders/<ce.id>"}},
				"runOptions": map[string]any{"errorsTolerance": "ALL", "retryStrategy": map[string]any{
					"pushRetryStrategy": "EXPONENTIAL_DECAY_RETRY", "maximumRetryAttempts": 0, "maximumEventAgeInSeconds": 60}},
			}})
			ts := e.rmqMust(t, "/target/listEventTargets", ruleReq("orders", "big"))
			assert.Equal(t, r["eventTargets"], ts["eventTargets"], "getEventRule and listEventTargets agree")
			assert.Contains(t, string(e.rmq(t, "/target/listEventTargets", ruleReq("orders", "big")).Body), "<ce.id>", "templates are not HTML-escaped")

			// And back: a target read through RocketMQ EventBridge, written back unchanged, is unchanged in /api/v1.
			_, before := e.v1(t, "/api/v1/buses/orders/rules/big/targets/hook")
			e.rmqMust(t, "/target/updateEventTargets", map[string]any{"eventBusName": "orders", "eventRuleName": "big", "eventTargets": ts["eventTargets"]})
			_, after := e.v1(t, "/api/v1/buses/orders/rules/big/targets/hook")
			for _, k := range []string{"type", "config", "input", "attributes", "retryPolicy"} {
				assert.Equal(t, before[k], after[k], k)
			}
		})
	})
}
