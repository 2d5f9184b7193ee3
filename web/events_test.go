package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/bus"
)

const (
	structured = "application/cloudevents+json"
	batch      = "application/cloudevents-batch+json"
	eventsURL  = "/api/v1/buses/orders/events"
)

// ce is the JSON form of a CloudEvent.
func ce(id, source, typ string, data any) map[string]any {
	return map[string]any{"specversion": "1.0", "id": id, "source": source, "type": typ,
		"datacontenttype": "application/json", "data": data}
}

func jsonOf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// mustJSON encodes v (for scenario bodies, built before any test runs).
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// storedIDs asserts the ids of the events stored on the bus, in order.
func storedIDs(busName string, want ...string) func(t *testing.T, e *env, _ *response) {
	return func(t *testing.T, e *env, _ *response) {
		t.Helper()
		var got []string
		for _, ev := range e.storedEvents(t, busName) {
			got = append(got, ev.ID())
		}
		assert.Equal(t, want, got, "events stored on the bus")
	}
}

func TestPutEvents(t *testing.T) {
	t.Parallel()
	orders := withBus("orders")
	big := strings.Repeat("x", bus.MaxEventSize) // one entry over 256 KiB once wrapped in an event
	run(t, []scenario{
		{
			name: "structured", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured},
			body:    mustJSON(ce("e1", "/shop", "order.created", map[string]any{"amount": 120})),
			status:  http.StatusOK,
			json:    map[string]any{"failedEntryCount": 0, "entries": []any{map[string]any{"eventId": "e1"}}},
			after: func(t *testing.T, e *env, _ *response) {
				evs := e.storedEvents(t, "orders")
				require.Len(t, evs, 1)
				assert.Equal(t, "e1", evs[0].ID())
				assert.Equal(t, "/shop", evs[0].Source())
				assert.Equal(t, "order.created", evs[0].Type())
				assert.Equal(t, "application/json", evs[0].DataContentType())
				assert.JSONEq(t, `{"amount": 120}`, string(evs[0].Data()))
			},
		},
		{
			name: "structured with a charset", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured + "; charset=utf-8"},
			body:    mustJSON(ce("e1", "/shop", "order.created", nil)),
			status:  http.StatusOK, json: map[string]any{"entries.0.eventId": "e1"},
			after: storedIDs("orders", "e1"),
		},
		{
			name: "structured with base64 data", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured},
			body:    `{"specversion": "1.0", "id": "e1", "source": "/shop", "type": "blob", "datacontenttype": "application/octet-stream", "data_base64": "AAEC"}`,
			status:  http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				evs := e.storedEvents(t, "orders")
				require.Len(t, evs, 1)
				assert.Equal(t, []byte{0, 1, 2}, evs[0].Data())
			},
		},
		{
			name: "structured data is stored without the envelope's whitespace", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured},
			body:    "{\"specversion\": \"1.0\", \"id\": \"e1\", \"source\": \"/shop\", \"type\": \"t\", \"data\":  \n {\"a\": 1}  \n}",
			status:  http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				evs := e.storedEvents(t, "orders")
				require.Len(t, evs, 1)
				assert.Equal(t, `{"a": 1}`, string(evs[0].Data()))
			},
		},
		{
			name: "base64 data that is whitespace stays as it is", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured},
			body:    `{"specversion": "1.0", "id": "e1", "source": "/shop", "type": "blob", "datacontenttype": "application/octet-stream", "data_base64": "IAkK"}`,
			status:  http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				evs := e.storedEvents(t, "orders")
				require.Len(t, evs, 1)
				assert.Equal(t, []byte(" \t\n"), evs[0].Data())
			},
		},
		{
			name: "binary", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": "application/json", "ce-specversion": "1.0", "ce-id": "e1",
				"ce-source": "/shop", "ce-type": "order.created", "ce-subject": "order-42", "ce-region": "eu"},
			body:   `{"amount": 120}`,
			status: http.StatusOK,
			json:   map[string]any{"failedEntryCount": 0, "entries": []any{map[string]any{"eventId": "e1"}}},
			after: func(t *testing.T, e *env, _ *response) {
				evs := e.storedEvents(t, "orders")
				require.Len(t, evs, 1)
				assert.Equal(t, "e1", evs[0].ID())
				assert.Equal(t, "order-42", evs[0].Subject())
				assert.Equal(t, "eu", evs[0].Extensions()["region"])
				assert.Equal(t, "application/json", evs[0].DataContentType())
				assert.JSONEq(t, `{"amount": 120}`, string(evs[0].Data()))
			},
		},
		{
			name: "binary without an id", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": "application/json", "ce-specversion": "1.0",
				"ce-source": "/shop", "ce-type": "order.created"},
			body:   `{}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEvent"}, contains: []string{"id"},
			after: storedIDs("orders"),
		},
		{
			name: "binary with an unknown spec version", method: http.MethodPost, url: eventsURL, setup: orders, contains: []string{`\"9.9\" is not a CloudEvents version`},
			headers: map[string]string{"ce-specversion": "9.9", "ce-id": "e1", "ce-source": "/shop", "ce-type": "t"},
			status:  http.StatusBadRequest, json: map[string]any{"code": "InvalidEvent"},
		},
		{
			name: "binary over 256 KiB", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": "text/plain", "ce-specversion": "1.0", "ce-id": "e1",
				"ce-source": "/shop", "ce-type": "t"},
			body:   big,
			status: http.StatusRequestEntityTooLarge, json: map[string]any{"code": "EventTooLarge"},
			after: storedIDs("orders"),
		},
		{
			name: "structured without a source", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured},
			body:    `{"specversion": "1.0", "id": "e1", "type": "order.created"}`,
			status:  http.StatusBadRequest, json: map[string]any{"code": "InvalidEvent", "type": "https://eventbridge-go.dev/problems/InvalidEvent"},
			contains: []string{"source"},
			after:    storedIDs("orders"),
		},
		{
			name: "structured that is not JSON", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured},
			body:    `{"specversion": "1.0",`,
			status:  http.StatusBadRequest, json: map[string]any{"code": "InvalidEvent"},
		},
		{
			name: "not a CloudEvent", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": "application/json"},
			body:    `{"hello": "world"}`,
			status:  http.StatusBadRequest, json: map[string]any{"code": "InvalidEvent"},
			contains: []string{"ce-*", structured, batch},
		},
		{
			name: "batch", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": batch},
			body: mustJSON([]any{ce("e1", "/shop", "order.created", 1), ce("e2", "/shop", "order.created", 2),
				ce("e3", "/shop", "order.created", 3)}),
			status: http.StatusOK,
			json: map[string]any{"failedEntryCount": 0,
				"entries": []any{map[string]any{"eventId": "e1"}, map[string]any{"eventId": "e2"}, map[string]any{"eventId": "e3"}}},
			after: storedIDs("orders", "e1", "e2", "e3"),
		},
		{
			name: "batch with a malformed entry", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": batch},
			body: `[` + mustJSON(ce("e1", "/shop", "order.created", 1)) + `,
				{"specversion": "1.0", "id": "e2", "type": "order.created"},
				` + mustJSON(ce("e3", "/shop", "order.created", 3)) + `]`,
			status: http.StatusOK,
			json: map[string]any{"failedEntryCount": 1, "entries.0.eventId": "e1", "entries.1.errorCode": "InvalidEvent",
				"entries.2.eventId": "e3"},
			after: func(t *testing.T, e *env, resp *response) {
				entry := resp.JSON(t)["entries"].([]any)[1].(map[string]any)
				assert.Equal(t, "invalid CloudEvent: source: REQUIRED", entry["errorMessage"], "the entry's reason")
				assert.NotContains(t, entry, "eventId")
				storedIDs("orders", "e1", "e3")(t, e, resp)
			},
		},
		{
			name: "batch with entries that are no events", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": batch},
			body: `[42, "x", null, {"specversion": "9.9", "id": "e0", "source": "/shop", "type": "t"}, {"specversion": "1.0", "id": "", "source": "/shop", "type": "t"},` +
				mustJSON(ce("e1", "/shop", "order.created", 1)) + `]`,
			status: http.StatusOK,
			json: map[string]any{"failedEntryCount": 5, "entries.0.errorCode": "InvalidEvent", "entries.1.errorCode": "InvalidEvent",
				"entries.2.errorCode": "InvalidEvent", "entries.3.errorCode": "InvalidEvent", "entries.4.errorCode": "InvalidEvent",
				"entries.5.eventId": "e1"},
			after: storedIDs("orders", "e1"),
		},
		{
			name: "batch with an entry over 256 KiB", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": batch},
			body: mustJSON([]any{ce("e1", "/shop", "order.created", 1), ce("e2", "/shop", "order.created", big),
				ce("e3", "/shop", "order.created", 3)}),
			status: http.StatusOK,
			json: map[string]any{"failedEntryCount": 1, "entries.0.eventId": "e1", "entries.1.errorCode": "EventTooLarge",
				"entries.2.eventId": "e3"},
			after: storedIDs("orders", "e1", "e3"),
		},
		{
			name: "batch with a malformed entry over 256 KiB", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": batch},
			body:    `[{"specversion": 7, "data": "` + big + `"},` + mustJSON(ce("e1", "/shop", "order.created", 1)) + `]`,
			status:  http.StatusOK,
			json:    map[string]any{"failedEntryCount": 1, "entries.0.errorCode": "EventTooLarge", "entries.1.eventId": "e1"},
			after:   storedIDs("orders", "e1"),
		},
		{
			name: "body over 1 MiB", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": batch},
			body: mustJSON([]any{ce("e1", "/shop", "t", strings.Repeat("x", 200<<10)), ce("e2", "/shop", "t", strings.Repeat("x", 200<<10)),
				ce("e3", "/shop", "t", strings.Repeat("x", 200<<10)), ce("e4", "/shop", "t", strings.Repeat("x", 200<<10)),
				ce("e5", "/shop", "t", strings.Repeat("x", 200<<10)), ce("e6", "/shop", "t", strings.Repeat("x", 200<<10))}),
			status: http.StatusRequestEntityTooLarge, json: map[string]any{"code": "PayloadTooLarge"},
			after: storedIDs("orders"),
		},
		{
			name: "batch that is not an array", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": batch},
			body:    mustJSON(ce("e1", "/shop", "order.created", 1)),
			status:  http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"}, contains: []string{"array"},
		},
		{
			name: "batch that is not JSON", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": batch},
			body:    `[{"id": "e1"},`,
			status:  http.StatusBadRequest, json: map[string]any{"code": "MalformedRequest"},
		},
		{
			name: "empty batch: nothing to store, answered with no entries", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": batch},
			body:    `[]`,
			status:  http.StatusOK, json: map[string]any{"failedEntryCount": 0, "entries": []any{}},
		},
		{
			name: "a NUL in type: 400 naming the field, not a retry", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured},
			body:    `{"specversion": "1.0", "id": "e1", "source": "/s", "type": "a\u0000b"}`,
			status:  http.StatusBadRequest, json: map[string]any{"code": "InvalidEvent", "field": "type"},
			contains: []string{"control character U+0000"},
		},
		{
			name: "a C1 control character in an extension", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured},
			body:    `{"specversion": "1.0", "id": "e1", "source": "/s", "type": "t", "region": "eu\u0085"}`,
			status:  http.StatusBadRequest, json: map[string]any{"code": "InvalidEvent", "field": "region"},
		},
		{
			name: "a source over 64 KiB: 413 naming it, not 503", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured},
			body:    `{"specversion": "1.0", "id": "e1", "source": "/` + strings.Repeat("s", 70<<10) + `", "type": "t"}`,
			status:  http.StatusRequestEntityTooLarge, json: map[string]any{"code": "EventTooLarge", "field": "source"},
		},
		{
			name: "attributes over 32 KiB in a batch fail alone", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": batch},
			body: `[{"specversion": "1.0", "id": "e1", "source": "/s", "type": "` + strings.Repeat("t", 40<<10) + `"},
				{"specversion": "1.0", "id": "e2", "source": "/s", "type": "t"}]`,
			status: http.StatusOK, json: map[string]any{"failedEntryCount": 1, "entries.0.errorCode": "EventTooLarge", "entries.1.eventId": "e2"},
		},
		{
			name: "data nested 10,000 levels deep: 400, not acknowledged and dropped", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": "application/json", "ce-specversion": "1.0", "ce-id": "e1", "ce-source": "/s", "ce-type": "t"},
			body:    strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
			status:  http.StatusBadRequest, json: map[string]any{"code": "InvalidEvent", "field": "data"},
			contains: []string{"nests more than 512 levels deep"},
		},
		{
			name: "JSON data that is not JSON", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": "application/json", "ce-specversion": "1.0", "ce-id": "e1", "ce-source": "/s", "ce-type": "t"},
			body:    `{"a": `,
			status:  http.StatusBadRequest, json: map[string]any{"code": "InvalidEvent", "field": "data"},
		},
		{
			name: "duplicates in one batch: stored once, the others say so", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": batch},
			body: `[{"specversion": "1.0", "id": "same", "source": "/s", "type": "t"},
				{"specversion": "1.0", "id": "same", "source": "/s", "type": "t"},
				{"specversion": "1.0", "id": "other", "source": "/s", "type": "t"}]`,
			status: http.StatusOK,
			json: map[string]any{"failedEntryCount": 0, "entries.0.eventId": "same", "entries.1.eventId": "same", "entries.1.duplicate": true,
				"entries.2.eventId": "other"},
			absent: []string{`"entries":[{"eventId":"same","duplicate":true}`},
			after: func(t *testing.T, e *env, _ *response) {
				require.Len(t, e.storedEvents(t, "orders"), 2)
			},
		},
		{
			name: "text data kept byte for byte, trailing newline included", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured},
			body:    `{"specversion": "1.0", "id": "e1", "source": "/s", "type": "t", "datacontenttype": "text/plain", "data": "Hello, World!\n"}`,
			status:  http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				evs := e.storedEvents(t, "orders")
				require.Len(t, evs, 1)
				assert.Equal(t, "Hello, World!\n", string(evs[0].Data()))
			},
		},
		{
			name: "data_base64 without datacontenttype: stored as binary, its JSON form data_base64", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured},
			body:    `{"specversion":"1.0","id":"e1","source":"/s","type":"t","data_base64":"AAEC/w=="}`,
			status:  http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				evs := e.storedEvents(t, "orders")
				require.Len(t, evs, 1)
				assert.Equal(t, []byte{0, 1, 2, 0xff}, evs[0].Data())
				j, err := json.Marshal(evs[0])
				require.NoError(t, err, "the router builds the JSON form")
				assert.Contains(t, string(j), `"data_base64":"AAEC/w=="`)
			},
		},
		{
			name: "binary mode: ce-* values are percent-decoded (the spec's example)", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": "application/json", "ce-specversion": "1.0", "ce-id": "e1", "ce-source": "/s",
				"ce-type": "t", "ce-subject": "Euro%20%E2%82%AC%20%F0%9F%98%80", "ce-note": "say%20%2250%25%22"},
			body:   `{}`,
			status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				evs := e.storedEvents(t, "orders")
				require.Len(t, evs, 1)
				assert.Equal(t, "Euro € 😀", evs[0].Subject())
				assert.Equal(t, `say "50%"`, evs[0].Extensions()["note"])
			},
		},
		{
			name: "binary mode: a double-quoted value is unquoted, then percent-decoded (3.1.3.2, RFC 7230 3.2.6)", method: http.MethodPost,
			url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": "application/json", "ce-specversion": "1.0", "ce-id": "e1", "ce-source": "/s",
				"ce-type": "t", "ce-subject": `"a \"quoted\" value"`, "ce-note": `"50%25 off"`, "ce-raw": `say "hi"`, "ce-odd": `"a"b"`},
			body:   `{}`,
			status: http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				evs := e.storedEvents(t, "orders")
				require.Len(t, evs, 1)
				assert.Equal(t, `a "quoted" value`, evs[0].Subject())
				assert.Equal(t, "50% off", evs[0].Extensions()["note"])
				assert.Equal(t, `say "hi"`, evs[0].Extensions()["raw"], "not a quoted-string: kept")
				assert.Equal(t, `"a"b"`, evs[0].Extensions()["odd"], "not one quoted-string: kept")
			},
		},
		{
			name: "binary mode: a value that is not UTF-8 once decoded is refused", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": "application/json", "ce-specversion": "1.0", "ce-id": "e1", "ce-source": "/s",
				"ce-type": "t", "ce-subject": "%C0%A0"},
			body:   `{}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEvent", "field": "ce-subject"},
		},
		{
			name: "binary mode: a malformed percent-encoding is refused", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": "application/json", "ce-specversion": "1.0", "ce-id": "e1", "ce-source": "/s",
				"ce-type": "t", "ce-subject": "100%"},
			body:   `{}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEvent", "field": "ce-subject"},
		},
		{
			name: "typed extensions keep their types", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured},
			body:    `{"specversion":"1.0","id":"e1","source":"/s","type":"t","count":42,"flag":true,"name":"x"}`,
			status:  http.StatusOK,
			after: func(t *testing.T, e *env, _ *response) {
				evs := e.storedEvents(t, "orders")
				require.Len(t, evs, 1)
				assert.Equal(t, int32(42), evs[0].Extensions()["count"])
				assert.Equal(t, true, evs[0].Extensions()["flag"])
				j, err := json.Marshal(evs[0])
				require.NoError(t, err)
				assert.Contains(t, string(j), `"count":42`)
				assert.Contains(t, string(j), `"flag":true`)
			},
		},
		{
			name: "batch on an unknown bus", method: http.MethodPost, url: "/api/v1/buses/nope/events",
			headers: map[string]string{"Content-Type": batch},
			body:    mustJSON([]any{ce("e1", "/shop", "order.created", 1)}),
			status:  http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "structured on an unknown bus", method: http.MethodPost, url: "/api/v1/buses/nope/events",
			headers: map[string]string{"Content-Type": structured},
			body:    mustJSON(ce("e1", "/shop", "order.created", 1)),
			status:  http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "invalid event on an unknown bus", method: http.MethodPost, url: "/api/v1/buses/nope/events",
			headers: map[string]string{"Content-Type": structured},
			body:    `{"specversion": "1.0"}`,
			status:  http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
		},
		{
			name: "bus of another account", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": structured, "X-Account-Id": "other"},
			body:    mustJSON(ce("e1", "/shop", "order.created", 1)),
			status:  http.StatusNotFound, json: map[string]any{"code": "BusNotFound"},
			after: storedIDs("orders"),
		},
		{
			name: "the same event put twice is stored once", method: http.MethodPost, url: eventsURL,
			setup: setups(orders, func(t *testing.T, e *env) {
				resp := e.do(t, http.MethodPost, eventsURL, map[string]string{"Content-Type": structured},
					jsonOf(t, ce("e1", "/shop", "order.created", 1)))
				require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
				assertJSONPath(t, resp.JSON(t), "entries.0.eventId", "e1")
			}),
			headers: map[string]string{"Content-Type": structured},
			body:    mustJSON(ce("e1", "/shop", "order.created", 1)),
			status:  http.StatusOK, json: map[string]any{"failedEntryCount": 0, "entries.0.eventId": "e1"},
			after: storedIDs("orders", "e1"),
		},
		{
			name: "the same id from another source is another event", method: http.MethodPost, url: eventsURL, setup: orders,
			headers: map[string]string{"Content-Type": batch},
			body: mustJSON([]any{ce("e1", "/shop", "order.created", 1), ce("e1", "/crm", "order.created", 1),
				ce("e1", "/shop", "order.created", 1)}),
			status: http.StatusOK,
			json: map[string]any{"failedEntryCount": 0, "entries.0.eventId": "e1", "entries.1.eventId": "e1",
				"entries.2.eventId": "e1"},
			after: func(t *testing.T, e *env, _ *response) {
				var sources []string
				for _, ev := range e.storedEvents(t, "orders") {
					sources = append(sources, ev.Source())
				}
				assert.Equal(t, []string{"/shop", "/crm"}, sources)
			},
		},
	})
}
