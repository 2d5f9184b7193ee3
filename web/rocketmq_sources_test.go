package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/source"
)

func TestRocketMQSources(t *testing.T) {
	t.Parallel()
	hook := map[string]any{"eventBusName": "orders", "eventSourceName": "github", "className": "HttpSource", "description": "pushes",
		"config": map[string]any{"http.signature.scheme": "github", "http.signature.secret": "gh-secret"}}
	tick := map[string]any{"eventBusName": "orders", "eventSourceName": "tick", "className": "schedule-source",
		"config": map[string]any{"schedule.expression": "rate(5 minutes)"}}
	rmq := func(path string, body any) func(t *testing.T, e *env) {
		return func(t *testing.T, e *env) {
			resp := e.do(t, http.MethodPost, path, nil, body)
			require.Equalf(t, http.StatusOK, resp.Status, "%s: %s", path, resp.Body)
		}
	}
	ready := setups(withBus("orders"), rmq("/source/createEventSource", hook), rmq("/source/createEventSource", tick))
	runRMQ(t, []rmqScenario{
		{name: "create", path: "/source/createEventSource", body: hook, setup: withBus("orders"), status: http.StatusOK,
			json: map[string]any{"eventSourceName": "github"},
			after: func(t *testing.T, e *env, _ *response) {
				s := e.storedSource(t, "github")
				assert.Equal(t, source.HTTP, s.Type(), "HttpSource is the http type")
				assert.True(t, strings.HasPrefix(s.Config()[source.KeySignatureSecret], "enc:v2:"))
			}},
		{name: "create twice", path: "/source/createEventSource", body: hook, setup: ready, status: http.StatusConflict,
			code: "EventSourceAlreadyExist"},
		{name: "create on an unknown bus", path: "/source/createEventSource", body: hook, status: http.StatusConflict, code: "EventBusNotExist"},
		{name: "create without a name", path: "/source/createEventSource", body: map[string]any{"eventBusName": "orders"},
			setup: withBus("orders"), status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"eventSourceName"}},
		{name: "create with a bad config", path: "/source/createEventSource", setup: withBus("orders"),
			body:   map[string]any{"eventBusName": "orders", "eventSourceName": "x", "className": "schedule", "config": map[string]any{}},
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"config.schedule.expression"}},
		{name: "get", path: "/source/getEventSource", body: map[string]any{"eventBusName": "orders", "eventSourceName": "github"},
			setup: ready, status: http.StatusOK,
			json:     map[string]any{"eventSourceName": "github", "className": "http", "status": 1, "description": "pushes"},
			contains: []string{`"***"`, "/webhook/putEvents?token="}},
		{name: "get unknown", path: "/source/getEventSource", body: map[string]any{"eventBusName": "orders", "eventSourceName": "nope"},
			setup: withBus("orders"), status: http.StatusConflict, code: "EventSourceNotExist"},
		{name: "list by type", path: "/source/listEventSources", body: map[string]any{"eventBusName": "orders", "eventSourceType": "schedule"},
			setup: ready, status: http.StatusOK, json: map[string]any{"total": 1, "eventSources.0.eventSourceName": "tick"}},
		{name: "list pages", path: "/source/listEventSources", body: map[string]any{"eventBusName": "orders", "maxResults": 1},
			setup: ready, status: http.StatusOK, json: map[string]any{"total": 2, "nextToken": "1", "eventSources.0.eventSourceName": "github"}},
		{name: "update disables and keeps the secret", path: "/source/updateEventSource",
			body: map[string]any{"eventBusName": "orders", "eventSourceName": "github", "status": 0,
				"config": map[string]any{"http.signature.scheme": "github", "http.signature.secret": "***", "http.methods": "PUT"}},
			setup: ready, status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				s := e.storedSource(t, "github")
				assert.Equal(t, source.Disabled, s.State())
				assert.Equal(t, "PUT", s.Config()[source.KeyMethods])
				assert.True(t, strings.HasPrefix(s.Config()[source.KeySignatureSecret], "enc:v2:"))
			}},
		{name: "update with a bad status", path: "/source/updateEventSource",
			body: map[string]any{"eventBusName": "orders", "eventSourceName": "github", "status": 7}, setup: ready,
			status: http.StatusBadRequest, code: "RequestParameterInvalid", contains: []string{"status"}},
		{name: "update unknown", path: "/source/updateEventSource", body: map[string]any{"eventBusName": "orders", "eventSourceName": "nope"},
			setup: withBus("orders"), status: http.StatusConflict, code: "EventSourceNotExist"},
		{name: "delete", path: "/source/deleteEventSource", body: map[string]any{"eventBusName": "orders", "eventSourceName": "tick"},
			setup: ready, status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				resp := e.do(t, http.MethodPost, "/source/getEventSource", nil, map[string]any{"eventBusName": "orders", "eventSourceName": "tick"})
				assert.Equal(t, http.StatusConflict, resp.Status)
			}},
	})
}
