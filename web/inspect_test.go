package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/web"
)

type ruleVerdict struct {
	Rule        string
	State       string
	Match       bool
	Explanation *struct {
		Path   string
		Reason string
		Actual json.RawMessage
	}
}

// TestBusTestEvent: an event tested against a bus with three rules matches one and is explained for the two
// others, each explanation naming the field that fails; a disabled rule is tested too, with its state.
func TestBusTestEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	mustDo(t, e, http.MethodPost, "/api/v1/buses", map[string]any{"name": "orders"}, http.StatusCreated)
	for _, r := range []map[string]any{
		{"name": "big", "eventPattern": map[string]any{"type": []any{"order.created"}, "data": map[string]any{"amount": []any{map[string]any{"numeric": []any{">", 100}}}}}},
		{"name": "created", "eventPattern": map[string]any{"type": []any{"order.created"}}},
		{"name": "eu", "eventPattern": map[string]any{"data": map[string]any{"region": []any{"eu"}}}, "state": "DISABLED"},
	} {
		mustDo(t, e, http.MethodPost, "/api/v1/buses/orders/rules", r, http.StatusCreated)
	}
	ev := ce("e1", "shop", "order.created", map[string]any{"amount": 20, "region": "us"})
	resp := mustDo(t, e, http.MethodPost, "/api/v1/buses/orders/test-event", map[string]any{"event": ev}, http.StatusOK)
	var out struct {
		MatchedCount int
		Rules        []ruleVerdict
	}
	require.NoError(t, json.Unmarshal(resp.Body, &out))
	assert.Equal(t, 1, out.MatchedCount)
	require.Len(t, out.Rules, 3)
	assert.Equal(t, []string{"big", "created", "eu"}, []string{out.Rules[0].Rule, out.Rules[1].Rule, out.Rules[2].Rule}, "in the order of their names")
	assert.True(t, out.Rules[1].Match)
	assert.Nil(t, out.Rules[1].Explanation)
	require.NotNil(t, out.Rules[0].Explanation)
	assert.False(t, out.Rules[0].Match)
	assert.Equal(t, "data.amount", out.Rules[0].Explanation.Path)
	assert.JSONEq(t, "20", string(out.Rules[0].Explanation.Actual))
	require.NotNil(t, out.Rules[2].Explanation)
	assert.Equal(t, "data.region", out.Rules[2].Explanation.Path)
	assert.Equal(t, "DISABLED", out.Rules[2].State)
	assert.Contains(t, string(resp.Body), `"explanation":null`, "a match has a null explanation")

	// Data of a JSON type is seen as the router sees it: {"data": "..."} of text/plain is a string.
	text := map[string]any{"specversion": "1.0", "id": "e2", "source": "shop", "type": "order.created",
		"datacontenttype": "text/plain", "data": `{"amount": 500}`}
	resp = mustDo(t, e, http.MethodPost, "/api/v1/buses/orders/test-event", map[string]any{"event": text}, http.StatusOK)
	require.NoError(t, json.Unmarshal(resp.Body, &out))
	assert.False(t, out.Rules[0].Match, "text data has no field amount")

	for name, c := range map[string]struct {
		body  any
		code  string
		names string
	}{
		"no event":          {map[string]any{}, "ValidationError", "event"},
		"not an object":     {map[string]any{"event": []any{1}}, "ValidationError", "event"},
		"not a CloudEvent":  {map[string]any{"event": map[string]any{"id": "x"}}, "InvalidEvent", "specversion"},
		"no type":           {map[string]any{"event": map[string]any{"specversion": "1.0", "id": "x", "source": "s"}}, "InvalidEvent", "type"},
		"data and its base": {map[string]any{"event": map[string]any{"specversion": "1.0", "id": "x", "source": "s", "type": "t", "data": 1, "data_base64": "AA=="}}, "InvalidEvent", "data"},
	} {
		resp := e.do(t, http.MethodPost, "/api/v1/buses/orders/test-event", nil, c.body)
		assert.Equalf(t, http.StatusBadRequest, resp.Status, "%s: %s", name, resp.Body)
		assert.Equalf(t, c.code, codeOf(t, resp), "%s: %s", name, resp.Body)
		assert.Containsf(t, string(resp.Body), c.names, "%s: the answer names the problem", name)
	}
	resp = e.do(t, http.MethodPost, "/api/v1/buses/nope/test-event", nil, map[string]any{"event": ev})
	assert.Equal(t, http.StatusNotFound, resp.Status)
	assert.Equal(t, "BusNotFound", codeOf(t, resp))
}

// TestBusTestEventWith300Rules: a bus with its quota of 300 rules answers every rule.
func TestBusTestEventWith300Rules(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	mustDo(t, e, http.MethodPost, "/api/v1/buses", map[string]any{"name": "many"}, http.StatusCreated)
	for i := range 300 {
		mustDo(t, e, http.MethodPost, "/api/v1/buses/many/rules", map[string]any{"name": fmt.Sprintf("r%03d", i),
			"eventPattern": map[string]any{"data": map[string]any{"n": []any{i}}}}, http.StatusCreated)
	}
	resp := mustDo(t, e, http.MethodPost, "/api/v1/buses/many/test-event",
		map[string]any{"event": ce("e1", "s", "t", map[string]any{"n": 7})}, http.StatusOK)
	var out struct {
		MatchedCount int
		Rules        []ruleVerdict
	}
	require.NoError(t, json.Unmarshal(resp.Body, &out))
	assert.Equal(t, 1, out.MatchedCount)
	require.Len(t, out.Rules, 300)
	assert.True(t, out.Rules[7].Match)
	assert.Equal(t, "data.n", out.Rules[8].Explanation.Path)
}

type storedEvent struct {
	Sequence uint64
	StoredAt time.Time
	Event    struct {
		ID, Source, Type string
	}
}

// TestSearchEvents: a bus's events are found by type, source, subject, pattern and the time they were stored,
// oldest first, in pages; bad parameters are refused naming them.
func TestSearchEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite)
	mustDo(t, e, http.MethodPost, "/api/v1/buses", map[string]any{"name": "orders"}, http.StatusCreated)
	put := func(events ...map[string]any) {
		t.Helper()
		resp := e.do(t, http.MethodPost, "/api/v1/buses/orders/events", map[string]string{"Content-Type": batch}, events)
		require.Equalf(t, http.StatusOK, resp.Status, "%s", resp.Body)
		require.Contains(t, string(resp.Body), `"failedEntryCount":0`)
	}
	withSubject := func(m map[string]any, subject string) map[string]any { m["subject"] = subject; return m }
	put(ce("a1", "shop", "order.created", map[string]any{"amount": 10}), ce("a2", "shop", "order.paid", map[string]any{"amount": 10}))
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	time.Sleep(20 * time.Millisecond)
	put(ce("b1", "shop", "order.created", map[string]any{"amount": 500}), withSubject(ce("b2", "crm", "order.created", map[string]any{"amount": 7}), "vip"))

	search := func(query string) ([]string, string) {
		t.Helper()
		resp := mustDo(t, e, http.MethodGet, "/api/v1/buses/orders/events?"+query, nil, http.StatusOK)
		var out struct {
			Events    []storedEvent
			NextToken string
		}
		require.NoError(t, json.Unmarshal(resp.Body, &out))
		ids := []string{}
		for _, ev := range out.Events {
			ids = append(ids, ev.Event.ID)
			assert.NotZero(t, ev.Sequence)
			assert.False(t, ev.StoredAt.IsZero())
		}
		return ids, out.NextToken
	}
	ids, next := search("")
	assert.Equal(t, []string{"a1", "a2", "b1", "b2"}, ids)
	assert.Empty(t, next)
	ids, _ = search("type=order.created")
	assert.Equal(t, []string{"a1", "b1", "b2"}, ids)
	ids, _ = search("type=order.created&from=" + url.QueryEscape(mid.UTC().Format(time.RFC3339Nano)))
	assert.Equal(t, []string{"b1", "b2"}, ids, "by the time they were stored")
	ids, _ = search("to=" + url.QueryEscape(mid.UTC().Format(time.RFC3339Nano)))
	assert.Equal(t, []string{"a1", "a2"}, ids)
	ids, _ = search("source=crm")
	assert.Equal(t, []string{"b2"}, ids)
	ids, _ = search("subject=vip")
	assert.Equal(t, []string{"b2"}, ids)
	ids, _ = search("pattern=" + url.QueryEscape(`{"data":{"amount":[{"numeric":[">",100]}]}}`))
	assert.Equal(t, []string{"b1"}, ids)

	ids, next = search("type=order.created&limit=2")
	assert.Equal(t, []string{"a1", "b1"}, ids)
	require.NotEmpty(t, next)
	ids, next = search("type=order.created&limit=2&nextToken=" + url.QueryEscape(next))
	assert.Equal(t, []string{"b2"}, ids)
	assert.Empty(t, next)

	for q, field := range map[string]string{
		"from=yesterday": "from",
		"from=" + url.QueryEscape(mid.Format(time.RFC3339Nano)) + "&to=" + url.QueryEscape(mid.Add(-time.Hour).Format(time.RFC3339Nano)): "from",
		"limit=0":                   "limit",
		"nextToken=%21%21":          "nextToken",
		"pattern=notjson":           "pattern",
		"pattern=%7B%22a%22%3A1%7D": "pattern",
	} {
		resp := e.do(t, http.MethodGet, "/api/v1/buses/orders/events?"+q, nil, nil)
		assert.Equalf(t, http.StatusBadRequest, resp.Status, "%s: %s", q, resp.Body)
		assert.Containsf(t, string(resp.Body), field, "%s names its parameter", q)
	}
	resp := e.do(t, http.MethodGet, "/api/v1/buses/nope/events", nil, nil)
	assert.Equal(t, "BusNotFound", codeOf(t, resp))
}

// sse reads Server-Sent Events.
type sse struct {
	resp *http.Response
	r    *bufio.Reader
}

// next returns the next event's kind and data, skipping comments.
func (s *sse) next(t *testing.T) (kind, data string) {
	t.Helper()
	for {
		line, err := s.r.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && kind != "":
			return kind, data
		case strings.HasPrefix(line, "event: "):
			kind = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// openTail opens a tail of the bus on srv with the query q; it answers the response when it is not 200.
func openTail(t *testing.T, e *env, srv *httptest.Server, busName, q string) (*sse, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/buses/"+busName+"/tail?"+q, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e.adminKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		return nil, resp
	}
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	s := &sse{resp: resp, r: bufio.NewReader(resp.Body)}
	kind, _ := s.next(t)
	require.Equal(t, "ready", kind, "a tail says when it listens")
	return s, resp
}

// TestTailEvents: a tail sends exactly the matching events stored while it listens, in order; over its rate it
// says how many it skipped; an account's tails beyond the limit are refused with 429 TooManyTails.
func TestTailEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, natsServer(t), persistence.SQLite) // 2 tails per account, 50 events a second
	srv := httptest.NewServer(e.router)
	t.Cleanup(srv.Close)
	mustDo(t, e, http.MethodPost, "/api/v1/buses", map[string]any{"name": "orders"}, http.StatusCreated)
	put := func(events ...map[string]any) {
		t.Helper()
		resp := e.do(t, http.MethodPost, "/api/v1/buses/orders/events", map[string]string{"Content-Type": batch}, events)
		require.Equalf(t, http.StatusOK, resp.Status, "%s", resp.Body)
	}
	put(ce("before", "shop", "order.created", map[string]any{"amount": 500}))

	tail, _ := openTail(t, e, srv, "orders", "pattern="+url.QueryEscape(`{"data":{"amount":[{"numeric":[">",100]}]}}`))
	put(ce("small", "shop", "order.created", map[string]any{"amount": 5}), ce("big1", "shop", "order.created", map[string]any{"amount": 500}))
	put(ce("big2", "shop", "order.paid", map[string]any{"amount": 900}))
	for _, want := range []string{"big1", "big2"} {
		kind, data := tail.next(t)
		require.Equal(t, "event", kind)
		var got storedEvent
		require.NoError(t, json.Unmarshal([]byte(data), &got))
		assert.Equal(t, want, got.Event.ID, "exactly the matching events put while it listens, in order")
	}

	// The second tail is the account's last; a third is refused while both are open.
	byType, _ := openTail(t, e, srv, "orders", "type=burst")
	_, refused := openTail(t, e, srv, "orders", "")
	require.NotNil(t, refused)
	assert.Equal(t, http.StatusTooManyRequests, refused.StatusCode)
	assert.NotEmpty(t, refused.Header.Get("Retry-After"))
	var problem struct{ Code, Detail string }
	require.NoError(t, json.NewDecoder(refused.Body).Decode(&problem))
	assert.Equal(t, "TooManyTails", problem.Code)
	assert.Contains(t, problem.Detail, "live tails")

	// Over its rate (50 a second here) a tail skips events and says how many before the next one it sends.
	burst := make([]map[string]any, 200)
	for i := range burst {
		burst[i] = ce(fmt.Sprintf("x%d", i), "shop", "burst", map[string]any{"n": i})
	}
	put(burst...)
	time.Sleep(1100 * time.Millisecond)
	put(ce("last", "shop", "burst", map[string]any{}))
	sent, skipped := 0, 0
	for {
		kind, data := byType.next(t)
		if kind == "skipped" {
			var s struct{ Skipped int }
			require.NoError(t, json.Unmarshal([]byte(data), &s))
			skipped += s.Skipped
			continue
		}
		sent++
		if strings.Contains(data, `"id":"last"`) {
			break
		}
	}
	assert.Equal(t, 201, sent+skipped, "every matching event is sent or counted as skipped")
	assert.Greater(t, skipped, 0, "over the rate, events are skipped")
	assert.LessOrEqual(t, sent, 151, "at most the rate per second")

	// Closing a tail frees its place.
	_ = byType.resp.Body.Close()
	require.Eventually(t, func() bool {
		s, _ := openTailNoFail(e, srv, "orders")
		if s != nil {
			_ = s.Body.Close()
		}
		return s != nil
	}, 5*time.Second, 50*time.Millisecond)

	resp := e.do(t, http.MethodGet, "/api/v1/buses/orders/tail?pattern=%5B%5D", nil, nil)
	assert.Equal(t, http.StatusBadRequest, resp.Status, "a bad pattern is refused before the tail starts: %s", resp.Body)
}

// openTailNoFail opens a tail and answers it when it is 200, else nil.
func openTailNoFail(e *env, srv *httptest.Server, busName string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/buses/"+busName+"/tail", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+e.adminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		return nil, nil
	}
	return resp, nil
}

// mustDo sends a request as the instance administrator and requires the status.
func mustDo(t *testing.T, e *env, method, url string, body any, status int) *response {
	t.Helper()
	resp := e.do(t, method, url, nil, body)
	require.Equalf(t, status, resp.Status, "%s %s: %s", method, url, resp.Body)
	return resp
}

// TestTailWithSessionCookie: a viewer signed in to the console tails a bus with the session cookie alone, as the
// browser's EventSource does.
func TestTailWithSessionCookie(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, persistence.SQLite, web.Config{})
	e.user(t, "vera", access.Viewer)
	b := e.browser(t)
	require.Equal(t, http.StatusCreated, b.signIn("vera", "password-vera").Code)
	mustDo(t, e.env, http.MethodPost, "/api/v1/buses", map[string]any{"name": "orders"}, http.StatusCreated)
	srv := httptest.NewServer(e.router)
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/buses/orders/tail", nil)
	require.NoError(t, err)
	req.AddCookie(&http.Cookie{Name: web.SessionCookie, Value: b.cookie})
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	s := &sse{resp: resp, r: bufio.NewReader(resp.Body)}
	kind, _ := s.next(t)
	require.Equal(t, "ready", kind)
	r := e.do(t, http.MethodPost, "/api/v1/buses/orders/events", map[string]string{"Content-Type": batch},
		[]map[string]any{ce("v1", "shop", "order.created", map[string]any{})})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	kind, data := s.next(t)
	assert.Equal(t, "event", kind)
	assert.Contains(t, data, `"id":"v1"`)

	// Without a credential: 401, before anything streams.
	anon, err := http.Get(srv.URL + "/api/v1/buses/orders/tail")
	require.NoError(t, err)
	defer anon.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, anon.StatusCode)
}
