package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/eventstore"
	"github.com/eventbridge-go/eventbridge/adapter/storagequota"
	"github.com/eventbridge-go/eventbridge/adapter/throttle"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// errorRow is a row of docs/putevents-errors.md.
type errorRow struct {
	name, single, batch, code string
	retry                     bool
}

// errorTable reads the table of docs/putevents-errors.md.
func errorTable(t *testing.T) []errorRow {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "putevents-errors.md"))
	require.NoError(t, err)
	row := regexp.MustCompile("^\\| `([a-z-]+)` \\| [^|]+ \\| ([^|]+) \\| ([^|]+) \\| `([A-Za-z]+)` \\| (no|retry) \\|$")
	var rows []errorRow
	for _, l := range strings.Split(string(doc), "\n") {
		if m := row.FindStringSubmatch(l); m != nil {
			rows = append(rows, errorRow{name: m[1], single: strings.TrimSpace(m[2]), batch: strings.TrimSpace(m[3]), code: m[4], retry: m[5] == "retry"})
		}
	}
	require.Greater(t, len(rows), 10, "the table of docs/putevents-errors.md")
	return rows
}

// TestPutEventsErrorTable: each row of docs/putevents-errors.md, sent as a single event (structured or binary
// mode) and in a batch, gets the status, code and Retry-After the row says; in a batch, the other entries are
// stored.
func TestPutEventsErrorTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	viewer := keyOf(t, e.services, "default", access.Viewer)
	require.Equal(t, http.StatusCreated, e.do(t, http.MethodPost, "/api/v1/buses", nil, map[string]any{"name": "orders"}).Status)
	const url = "/api/v1/buses/orders/events"
	structured := map[string]string{"Content-Type": "application/cloudevents+json"}
	batch := map[string]string{"Content-Type": "application/cloudevents-batch+json"}
	ev := func(kv string) string {
		return `{"specversion": "1.0", "id": "e` + strconv.Itoa(len(kv)) + `", "source": "/s", "type": "t"` + kv + `}`
	}
	manyExtensions := func() string {
		var b strings.Builder
		for i := range 101 {
			b.WriteString(`, "x` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `": "v"`)
		}
		return b.String()
	}
	type req struct {
		url     string
		headers map[string]string
		body    string
	}
	// entry is the failing event of each row (structured form); whole builds a request failing as a whole.
	entries := map[string]string{
		"missing-attribute":     `{"specversion": "1.0", "id": "e1", "type": "t"}`,
		"control-character":     ev(`, "subject": "a\u0007b"`),
		"white-space-at-an-end": ev(`, "subject": "order-42 "`),
		"source-not-uri":        `{"specversion": "1.0", "id": "e1", "source": "Zoë shop", "type": "t"}`,
		"text-data-not-string":  ev(`, "datacontenttype": "text/plain", "data": {"a": 1}`),
		"attributes-too-large":  ev(`, "subject": "` + strings.Repeat("s", 33<<10) + `"`),
		"too-many-extensions":   ev(manyExtensions()),
		"event-too-large":       ev(`, "datacontenttype": "text/plain", "data": "` + strings.Repeat("d", 300<<10) + `"`),
		"data-too-deep":         ev(`, "data": ` + strings.Repeat("[", 600) + strings.Repeat("]", 600)),
		"store-unavailable":     ev(""),
		"bus-full":              ev(`, "subject": "full", "data": "` + strings.Repeat("f", 41<<10) + `"`),
	}
	whole := map[string]req{
		"too-large-body":  {url, batch, `[` + strings.Repeat(`"`+strings.Repeat("x", 1000)+`",`, 1100) + `1]`},
		"no-cloudevent":   {url, map[string]string{"Content-Type": "application/json"}, `{"a": 1}`},
		"batch-not-array": {url, batch, `{"specversion": "1.0"}`},
		"data-not-json": {url, map[string]string{"Content-Type": "application/json", "ce-specversion": "1.0", "ce-id": "e1",
			"ce-source": "/s", "ce-type": "t"}, `{"a": `},
		"unknown-bus":    {"/api/v1/buses/nope/events", batch, `[` + ev("") + `]`},
		"no-credentials": {url, map[string]string{"Content-Type": "application/cloudevents-batch+json", "Authorization": ""}, `[` + ev("") + `]`},
		"not-allowed":    {url, map[string]string{"Content-Type": "application/cloudevents-batch+json", "Authorization": "Bearer " + viewer}, `[` + ev("") + `]`},
		"throttled":      {url, batch, `[` + ev(`, "subject": "over"`) + `]`},
		"storage-quota":  {url, batch, `[` + ev(`, "subject": "quota"`) + `]`},
		"storage-budget": {url, batch, `[` + ev(`, "subject": "budget"`) + `]`},
	}
	for _, row := range errorTable(t) {
		t.Run(row.name, func(t *testing.T) {
			env := e
			if row.name == "store-unavailable" {
				js := jetstreamtest.Start(t)
				env = newEnv(t, js.JS, persistence.SQLite)
				require.Equal(t, http.StatusCreated, env.do(t, http.MethodPost, "/api/v1/buses", nil, map[string]any{"name": "orders"}).Status)
				env.services.Buses.Store.(*eventstore.Store).AckTimeout = time.Second // the wait for a store that is gone
				js.Server.Shutdown()
			}
			if row.name == "throttled" {
				env = newEnv(t, natsServer(t), persistence.SQLite)
				require.Equal(t, http.StatusCreated, env.do(t, http.MethodPost, "/api/v1/buses", nil, map[string]any{"name": "orders"}).Status)
				// An account of one event a second, whose one event is put: the next request is over its rate.
				env.services.Buses.Throttle = &throttle.Throttle{Accounts: env.services.Accounts.Accounts, Default: 1}
				require.Equal(t, http.StatusOK, env.do(t, http.MethodPost, url, structured, ev("")).Status)
			}
			if row.name == "storage-quota" || row.name == "storage-budget" {
				env = newEnv(t, natsServer(t), persistence.SQLite)
				require.Equal(t, http.StatusCreated, env.do(t, http.MethodPost, "/api/v1/buses", nil, map[string]any{"name": "orders"}).Status)
				// The account's dead letters reserve 256 MiB: over a quota of 1 MiB, or a budget of 1 MiB.
				meter := &storagequota.Meter{JS: env.js, Names: env.names, Buses: env.buses, Quota: 1 << 20}
				if row.name == "storage-budget" {
					meter.Quota, meter.Budget = 1<<40, 1<<20
				}
				require.NoError(t, meter.Check(context.Background()))
				env.services.Buses.Storage = meter
			}
			if row.name == "bus-full" {
				env = newEnv(t, natsServer(t), persistence.SQLite)
				require.Equal(t, http.StatusCreated, env.do(t, http.MethodPost, "/api/v1/buses", nil,
					map[string]any{"name": "orders", "retention": map[string]any{"maxBytes": 1 << 20}}).Status)
				for i := 0; ; i++ { // 40 KiB events that nothing reads, until the bus has no room for the row's 41 KiB
					require.Less(t, i, 100)
					resp := env.do(t, http.MethodPost, url, structured, `{"specversion": "1.0", "id": "fill-`+strconv.Itoa(i)+
						`", "source": "/s", "type": "t", "data": "`+strings.Repeat("x", 40<<10)+`"}`)
					if resp.Status != http.StatusOK {
						require.Equal(t, http.StatusConflict, resp.Status, string(resp.Body))
						break
					}
				}
			}
			check := func(resp *response, status int) {
				t.Helper()
				require.Equalf(t, status, resp.Status, "%s", resp.Body)
				assert.Equal(t, row.code, codeOf(t, resp))
				assert.Equal(t, row.retry, resp.Header.Get("Retry-After") != "", "Retry-After exactly on the rows to retry")
			}
			if row.single != "—" {
				status, err := strconv.Atoi(row.single)
				require.NoError(t, err)
				r, ok := whole[row.name]
				if !ok {
					r = req{url, structured, entries[row.name]}
				}
				if row.name == "too-large-body" {
					r = req{url, structured, `{"specversion": "1.0", "id": "e1", "source": "/s", "type": "t", "data": "` + strings.Repeat("x", 1100<<10) + `"}`}
				}
				check(env.do(t, http.MethodPost, r.url, r.headers, r.body), status)
			}
			if row.batch == "—" {
				return
			}
			if strings.HasSuffix(row.batch, "whole request") {
				status, err := strconv.Atoi(strings.TrimSuffix(row.batch, ", whole request"))
				require.NoError(t, err)
				r := whole[row.name]
				check(env.do(t, http.MethodPost, r.url, r.headers, r.body), status)
				return
			}
			require.Equal(t, "entry", row.batch)
			good := `{"specversion": "1.0", "id": "good-` + row.name + `", "source": "/s", "type": "t"}`
			resp := env.do(t, http.MethodPost, url, batch, `[`+entries[row.name]+`, `+good+`]`)
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
			var out struct {
				FailedEntryCount int
				Entries          []struct{ EventID, ErrorCode, ErrorMessage string }
			}
			require.NoError(t, json.Unmarshal(resp.Body, &out))
			require.Len(t, out.Entries, 2)
			assert.Equal(t, row.code, out.Entries[0].ErrorCode, out.Entries[0].ErrorMessage)
			if row.name != "store-unavailable" && row.name != "bus-full" { // a full bus refuses the other entry too
				assert.Equal(t, 1, out.FailedEntryCount)
				assert.Equal(t, "good-"+row.name, out.Entries[1].EventID, "the other entry is stored")
			}
		})
	}
}
