package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logRecord is the part of a bus-log record these tests read.
type logRecord struct {
	ID          string          `json:"id"`
	Level       string          `json:"level"`
	Type        string          `json:"type"`
	EventID     string          `json:"eventId"`
	EventSource string          `json:"eventSource"`
	Rule        string          `json:"rule"`
	Target      string          `json:"target"`
	Attempt     uint64          `json:"attempt"`
	LatencyMs   float64         `json:"latencyMs"`
	ErrorClass  string          `json:"errorClass"`
	HTTPStatus  int             `json:"httpStatus"`
	Message     string          `json:"message"`
	Snippet     string          `json:"snippet"`
	Explanation json.RawMessage `json:"explanation"`
	Event       json.RawMessage `json:"event"`
}

// busLog reads every record of a bus's log that the query selects.
func (a api) busLog(bus, query string) []logRecord {
	a.t.Helper()
	var out []logRecord
	token := ""
	for {
		q := query
		if token != "" {
			q += "&nextToken=" + url.QueryEscape(token)
		}
		var page struct {
			Records   []logRecord `json:"records"`
			NextToken string      `json:"nextToken"`
		}
		require.NoError(a.t, json.Unmarshal(a.must("GET", "/api/v1/buses/"+bus+"/log?"+q, nil, 200), &page))
		out = append(out, page.Records...)
		if token = page.NextToken; token == "" {
			return out
		}
	}
}

// typesOf lists the types of records, in order.
func typesOf(rs []logRecord) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Type
	}
	return out
}

// flaky answers 503 (with a body) to the first request of each event (source and id) on each path, 204 to the next; on a path
// ending in /down it always answers 503.
type flaky struct {
	mu   sync.Mutex
	seen map[string]int
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	key := r.URL.Path + " " + r.Header.Get("ce-source") + "/" + r.Header.Get("ce-id")
	f.seen[key]++
	n := f.seen[key]
	f.mu.Unlock()
	if n == 1 || strings.HasSuffix(r.URL.Path, "/down") {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("upstream busy, try later"))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (f *flaky) requests(path, source, id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[path+" "+source+"/"+id]
}

// TestBusLogLevels: a bus's log records exactly what its level promises for an event whose first attempt fails
// and second succeeds: ERROR the failure; INFO also the router's receipt and match and the success; TRACE also
// the rules not matched, with why; OFF nothing, and its connectors carry no log settings until it is switched on.
// A record dead-lettered and then redriven is logged too; the log's filters select.
func TestBusLogLevels(t *testing.T) {
	t.Parallel()
	m := startMain(t, t.TempDir())
	t.Cleanup(func() { _ = m.Close() })
	a := apiOf(t, m)
	rcv := &flaky{seen: map[string]int{}}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)

	levels := map[string]map[string]any{
		"errors": {"level": "ERROR"},
		"info":   {"level": "INFO"},
		"trace":  {"level": "TRACE", "includeDetail": "FULL"},
		"off":    nil,
	}
	for bus, lc := range levels {
		body := map[string]any{"name": bus}
		if lc != nil {
			body["logConfig"] = lc
		}
		var got struct {
			LogConfig struct{ Level, IncludeDetail string } `json:"logConfig"`
		}
		require.NoError(t, json.Unmarshal(a.must("POST", "/api/v1/buses", body, 201), &got))
		if lc == nil {
			assert.Equal(t, "OFF", got.LogConfig.Level, "the default")
			assert.Equal(t, "NONE", got.LogConfig.IncludeDetail)
		}
		a.must("POST", "/api/v1/buses/"+bus+"/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
		a.must("PUT", "/api/v1/buses/"+bus+"/rules/all/targets/t", httpTarget(srv.URL+"/"+bus), 201)
	}
	a.must("POST", "/api/v1/buses/trace/rules", map[string]any{"name": "big",
		"eventPattern": map[string]any{"data": map[string]any{"amount": []any{map[string]any{"numeric": []any{">", 100}}}}}}, 201)
	a.must("POST", "/api/v1/buses/trace/rules", map[string]any{"name": "eu",
		"eventPattern": map[string]any{"data": map[string]any{"region": []any{"eu"}}}}, 201)

	for bus := range levels {
		a.putBatch(bus, []map[string]any{event("e1", "shop", "order.created", map[string]any{"amount": 20, "region": "us"})})
	}
	// Each target fails the event once, then takes it (about a second later).
	require.Eventually(t, func() bool {
		for bus := range levels {
			if rcv.requests("/"+bus, "shop", "e1") < 2 {
				return false
			}
		}
		return true
	}, 20*time.Second, 50*time.Millisecond, "every target got its second attempt")

	var info []logRecord
	require.Eventually(t, func() bool {
		info = a.busLog("info", "eventId=e1")
		return len(info) >= 4
	}, 10*time.Second, 50*time.Millisecond, "the INFO log records four steps")
	// Each writer's records are in its order; the router's and the target's are written by two connectors without
	// waiting, so the target's first attempt may be logged a moment before the router's RULE_MATCH (docs/events.md).
	var router, target []logRecord
	for _, r := range info {
		if r.Target == "" {
			router = append(router, r)
		} else {
			target = append(target, r)
		}
	}
	require.Equal(t, []string{"EVENT_RECEIPT", "RULE_MATCH"}, typesOf(router), "the router's records")
	require.Equal(t, []string{"INVOCATION_ATTEMPT_RETRYABLE_FAILURE", "INVOCATION_ATTEMPT_SUCCESS"}, typesOf(target),
		"the target's records")
	assert.Equal(t, "all", router[1].Rule)
	failure, success := target[0], target[1]
	assert.Equal(t, "ERROR", failure.Level)
	assert.EqualValues(t, 1, failure.Attempt)
	assert.Equal(t, "http-5xx", failure.ErrorClass)
	assert.Equal(t, 503, failure.HTTPStatus)
	assert.Equal(t, "t", failure.Target)
	assert.Equal(t, "all", failure.Rule)
	assert.Empty(t, failure.Snippet, "NONE: no answer in the record")
	assert.EqualValues(t, 2, success.Attempt)
	assert.Equal(t, "INFO", success.Level)
	assert.Greater(t, success.LatencyMs, 0.0)
	for _, r := range info {
		assert.Equal(t, "e1", r.EventID)
		assert.Equal(t, "shop", r.EventSource)
		assert.Empty(t, r.Event, "NONE: no event in the records")
	}

	time.Sleep(300 * time.Millisecond) // records of the other buses were written with those of info
	errs := a.busLog("errors", "")
	assert.Equal(t, []string{"INVOCATION_ATTEMPT_RETRYABLE_FAILURE"}, typesOf(errs), "ERROR records failures only")
	assert.Empty(t, a.busLog("off", ""), "OFF records nothing")

	trace := a.busLog("trace", "eventId=e1")
	types := typesOf(trace)
	assert.Equal(t, 2, count(types, "RULE_NO_MATCH"), "%v", types)
	assert.Equal(t, 1, count(types, "RULE_MATCH"))
	assert.Equal(t, 1, count(types, "INVOCATION_ATTEMPT_SUCCESS"))
	for _, r := range trace {
		switch r.Type {
		case "RULE_NO_MATCH":
			assert.Equal(t, "TRACE", r.Level)
			var x struct{ Path, Reason string }
			require.NoError(t, json.Unmarshal(r.Explanation, &x))
			want := map[string]string{"big": "data.amount", "eu": "data.region"}[r.Rule]
			assert.Equalf(t, want, x.Path, "the explanation of rule %s names the failing field", r.Rule)
		case "EVENT_RECEIPT":
			assert.Contains(t, string(r.Event), `"id":"e1"`, "FULL: the event is in its receipt")
		case "INVOCATION_ATTEMPT_RETRYABLE_FAILURE":
			assert.Equal(t, "upstream busy, try later", r.Snippet, "FULL: the start of the answer")
		}
	}

	// Filters.
	assert.Equal(t, []string{"INVOCATION_ATTEMPT_RETRYABLE_FAILURE"}, typesOf(a.busLog("info", "level=ERROR")))
	assert.Len(t, a.busLog("trace", "level=INFO"), len(trace)-2, "INFO leaves the TRACE records out")
	assert.Equal(t, []string{"RULE_NO_MATCH"}, typesOf(a.busLog("trace", "rule=eu")))
	assert.Len(t, a.busLog("info", "target=t"), 2)
	assert.Len(t, a.busLog("info", "type=RULE_MATCH"), 1)
	assert.Empty(t, a.busLog("info", "eventSource=crm"))
	assert.Len(t, a.busLog("info", "limit=1"), 4, "paged one by one")
	for _, q := range []string{"level=DEBUG", "from=yesterday", "rule=a%20b", "limit=0"} {
		status, body := a.do("GET", "/api/v1/buses/info/log?"+q, "", nil)
		assert.Equalf(t, http.StatusBadRequest, status, "%s: %s", q, body)
	}

	// OFF: its connectors carry no log settings; switched on, the next event is recorded.
	cfg, err := workerClient(m).GetConnectorConfig(t.Context(), "eb.default.off.all.t")
	require.NoError(t, err)
	assert.NotContains(t, cfg, "eventlog.topic.name", "a bus that does not log configures nothing")
	var patched struct {
		LogConfig struct{ Level string } `json:"logConfig"`
	}
	require.NoError(t, json.Unmarshal(a.must("PATCH", "/api/v1/buses/off", map[string]any{"logConfig": map[string]any{"level": "ERROR"}}, 200), &patched))
	assert.Equal(t, "ERROR", patched.LogConfig.Level)
	a.putBatch("off", []map[string]any{event("e2", "shop", "order.created", map[string]any{})})
	require.Eventually(t, func() bool { return len(a.busLog("off", "eventId=e2")) == 1 }, 15*time.Second, 50*time.Millisecond,
		"the bus switched to ERROR records e2's failure")
	assert.Empty(t, a.busLog("off", "eventId=e1"), "nothing of before")
	status, body := a.do("PATCH", "/api/v1/buses/off", "application/json", []byte(`{"logConfig": {"level": "LOUD"}}`))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, string(body), "logConfig.level")

	// A target without retries dead-letters at its first failure; its redrive is recorded.
	down := httpTarget(srv.URL + "/info/down")
	down["retryPolicy"] = map[string]any{"maximumRetryAttempts": 0, "maximumEventAgeInSeconds": 86400}
	a.must("PUT", "/api/v1/buses/info/rules/all/targets/down", down, 201)
	a.putBatch("info", []map[string]any{event("e3", "shop", "order.created", map[string]any{})})
	var dead []logRecord
	require.Eventually(t, func() bool {
		dead = a.busLog("info", "eventId=e3&target=down")
		return len(dead) >= 2
	}, 15*time.Second, 50*time.Millisecond)
	assert.Equal(t, []string{"INVOCATION_ATTEMPT_PERMANENT_FAILURE", "INVOCATION_DLQ"}, typesOf(dead))
	a.must("POST", "/api/v1/dead-letters/redrive", map[string]any{"filter": map[string]any{"bus": "info", "rule": "all", "target": "down"}}, 200)
	require.Eventually(t, func() bool {
		return slices.Contains(typesOf(a.busLog("info", "eventId=e3")), "EVENT_REDRIVEN")
	}, 10*time.Second, 50*time.Millisecond, "the redrive is in the log")
}

func count(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

// traced is the part of a trace these tests read.
type traced struct {
	Event struct {
		Event struct{ ID, Source string } `json:"event"`
	} `json:"event"`
	MatchedFrom string `json:"matchedFrom"`
	Rules       []struct {
		Rule        string `json:"rule"`
		Match       bool   `json:"match"`
		Explanation *struct {
			Path string `json:"path"`
		} `json:"explanation"`
	} `json:"rules"`
	Log         []logRecord `json:"log"`
	DeadLetters []struct {
		Target string `json:"target"`
		Event  struct{ ID, Source string }
	} `json:"deadLetters"`
}

// TestTraceEvent: the trace of an event shows the rules it matched and why the others did not, both attempts of a
// target whose first attempt failed, the dead letter of a target that gave it up, and tells two events with the
// same id apart by their source. On a bus that does not log, matches are recomputed against the current rules.
func TestTraceEvent(t *testing.T) {
	t.Parallel()
	m := startMain(t, t.TempDir())
	t.Cleanup(func() { _ = m.Close() })
	a := apiOf(t, m)
	rcv := &flaky{seen: map[string]int{}}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	for _, bus := range []map[string]any{{"name": "tr", "logConfig": map[string]any{"level": "INFO"}}, {"name": "quiet"}} {
		name := bus["name"].(string)
		a.must("POST", "/api/v1/buses", bus, 201)
		a.must("POST", "/api/v1/buses/"+name+"/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"shop", "crm"}}}, 201)
		a.must("POST", "/api/v1/buses/"+name+"/rules", map[string]any{"name": "big",
			"eventPattern": map[string]any{"data": map[string]any{"amount": []any{map[string]any{"numeric": []any{">", 100}}}}}}, 201)
		a.must("PUT", "/api/v1/buses/"+name+"/rules/all/targets/t", httpTarget(srv.URL+"/"+name), 201)
	}
	down := httpTarget(srv.URL + "/tr/down")
	down["retryPolicy"] = map[string]any{"maximumRetryAttempts": 0, "maximumEventAgeInSeconds": 86400}
	a.must("PUT", "/api/v1/buses/tr/rules/all/targets/down", down, 201)

	a.putBatch("tr", []map[string]any{event("e1", "shop", "order.created", map[string]any{"amount": 20}),
		event("e1", "crm", "order.created", map[string]any{"amount": 30})})
	a.putBatch("quiet", []map[string]any{event("q1", "shop", "order.created", map[string]any{"amount": 20})})
	require.Eventually(t, func() bool {
		return rcv.requests("/tr", "shop", "e1") >= 2 && rcv.requests("/tr", "crm", "e1") >= 2 && rcv.requests("/quiet", "shop", "q1") >= 2
	}, 20*time.Second, 50*time.Millisecond, "both events delivered at their second attempt")

	trace := func(bus, id, source string) traced {
		t.Helper()
		var tr traced
		require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/buses/"+bus+"/events/"+id+"/trace?source="+source, nil, 200), &tr))
		return tr
	}
	var shop traced
	require.Eventually(t, func() bool {
		shop = trace("tr", "e1", "shop")
		return count(typesOf(shop.Log), "INVOCATION_ATTEMPT_SUCCESS") == 1 && len(shop.DeadLetters) == 1
	}, 10*time.Second, 50*time.Millisecond, "the trace shows the success and the dead letter")
	assert.Equal(t, "shop", shop.Event.Event.Source)
	assert.Equal(t, "log", shop.MatchedFrom)
	require.Len(t, shop.Rules, 2)
	assert.Equal(t, "all", shop.Rules[0].Rule)
	assert.True(t, shop.Rules[0].Match)
	assert.False(t, shop.Rules[1].Match)
	require.NotNil(t, shop.Rules[1].Explanation)
	assert.Equal(t, "data.amount", shop.Rules[1].Explanation.Path)
	var attempts []string
	for _, r := range shop.Log {
		assert.Equal(t, "shop", r.EventSource, "only the records of this event")
		if r.Target == "t" {
			attempts = append(attempts, r.Type)
		}
	}
	assert.Equal(t, []string{"INVOCATION_ATTEMPT_RETRYABLE_FAILURE", "INVOCATION_ATTEMPT_SUCCESS"}, attempts, "both attempts of t")
	assert.Equal(t, "down", shop.DeadLetters[0].Target)
	assert.Equal(t, "shop", shop.DeadLetters[0].Event.Source)

	crm := trace("tr", "e1", "crm")
	assert.Equal(t, "crm", crm.Event.Event.Source, "the same id from another source is another event")
	for _, r := range crm.Log {
		assert.Equal(t, "crm", r.EventSource)
	}
	require.Len(t, crm.DeadLetters, 1)
	assert.Equal(t, "crm", crm.DeadLetters[0].Event.Source)

	quiet := trace("quiet", "q1", "shop")
	assert.Equal(t, "current-rules", quiet.MatchedFrom, "a bus that did not log: recomputed")
	assert.Empty(t, quiet.Log)
	require.Len(t, quiet.Rules, 2)
	assert.True(t, quiet.Rules[0].Match)

	status, body := a.do("GET", "/api/v1/buses/tr/events/e1/trace", "", nil)
	assert.Equal(t, http.StatusBadRequest, status, "%s", body)
	assert.Contains(t, string(body), "source")
	status, body = a.do("GET", "/api/v1/buses/tr/events/nope/trace?source=shop", "", nil)
	assert.Equal(t, http.StatusNotFound, status, "%s", body)
	assert.Contains(t, string(body), "EventNotFound")
}

// TestTailOutlivesWriteTimeout: a tail through the real listener keeps streaming past --http-write-timeout.
func TestTailOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	m := startMain(t, t.TempDir(), "--http-write-timeout", "1s")
	t.Cleanup(func() { _ = m.Close() })
	a := apiOf(t, m)
	a.must("POST", "/api/v1/buses", map[string]any{"name": "live"}, 201)
	req, err := http.NewRequestWithContext(t.Context(), "GET", a.base+"/api/v1/buses/live/tail?source=shop", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+a.key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				lines <- string(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case l := <-lines:
		require.Contains(t, l, "event: ready")
	case <-time.After(5 * time.Second):
		t.Fatal("no ready event")
	}
	time.Sleep(2500 * time.Millisecond) // past the write timeout
	a.putBatch("live", []map[string]any{event("late", "shop", "t", map[string]any{})})
	got := ""
	deadline := time.After(10 * time.Second)
	for !strings.Contains(got, `"id":"late"`) {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the tail was cut: %q", got)
			got += l
		case <-deadline:
			t.Fatalf("the event put after the write timeout never came: %q", got)
		}
	}
}
