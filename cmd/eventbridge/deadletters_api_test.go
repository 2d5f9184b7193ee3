package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
)

// flakyReceiver is an HTTP target that answers 503 while broken, and otherwise records the CloudEvents it receives
// (binary mode) as receiver does.
type flakyReceiver struct {
	*receiver
	broken atomic.Bool
	failed atomic.Int64
}

func newFlakyReceiver(t *testing.T) *flakyReceiver {
	f := &flakyReceiver{receiver: &receiver{ids: map[string]int{}}}
	f.broken.Store(true)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		if f.broken.Load() {
			f.failed.Add(1)
			http.Error(w, "flaky target is down", http.StatusServiceUnavailable)
			return
		}
		f.mu.Lock()
		f.ids[req.Header.Get("ce-id")]++
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

type deadLetterList struct {
	DeadLetters []struct {
		ID, Bus, Rule, Target, Connector, Reason, ErrorClass string
		Attempts                                             uint64
		Time                                                 time.Time
		Event                                                struct{ ID, Type, Source string }
	} `json:"deadLetters"`
	NextToken string `json:"nextToken"`
}

func (a api) deadLetters(query string) deadLetterList {
	a.t.Helper()
	var l deadLetterList
	require.NoError(a.t, json.Unmarshal(a.must("GET", "/api/v1/dead-letters"+query, nil, 200), &l))
	return l
}

// TestDeadLettersAPIEndToEnd is the acceptance: a target that always fails fills the dead-letter list
// (each with its reason and attempts); once the target is fixed, a redrive by filter delivers every one of them to
// that target only (another target of the same rule receives none of the redriven copies), and the list empties.
// Then a discard removes dead letters without delivering them.
func TestDeadLettersAPIEndToEnd(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)

	flaky, audit := newFlakyReceiver(t), newReceiver(t)
	noRetries := func(url string) map[string]any {
		return map[string]any{"type": "http", "config": map[string]any{"url": url},
			"retryPolicy": map[string]any{"maximumRetryAttempts": 0, "maximumEventAgeInSeconds": 86400}}
	}
	a.must("POST", "/api/v1/buses", map[string]any{"name": "orders"}, 201)
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "all",
		"eventPattern": map[string]any{"type": []any{"order.created"}}}, 201)
	a.must("PUT", "/api/v1/buses/orders/rules/all/targets/flaky", noRetries(flaky.srv.URL), 201)
	a.must("PUT", "/api/v1/buses/orders/rules/all/targets/audit", noRetries(audit.srv.URL), 201)

	put := func(prefix string, n int) map[string]bool {
		var evs []map[string]any
		ids := map[string]bool{}
		for i := range n {
			id := fmt.Sprintf("%s-%d", prefix, i)
			evs = append(evs, event(id, "shop", "order.created", map[string]any{"i": i}))
			ids[id] = true
		}
		a.putBatch("orders", evs)
		return ids
	}
	const n = 25
	first := put("evt", n)
	audit.waitFor(t, first)

	// The failing target fills the list: every event once, with its reason and attempts.
	const ofFlaky = "?bus=orders&rule=all&target=flaky"
	require.Eventually(t, func() bool { return len(a.deadLetters(ofFlaky).DeadLetters) == n }, 60*time.Second, 50*time.Millisecond,
		"every event the failing target received is dead-lettered")
	listed := map[string]bool{}
	for _, d := range a.deadLetters(ofFlaky).DeadLetters {
		require.Equal(t, "orders", d.Bus)
		require.Equal(t, "all", d.Rule)
		require.Equal(t, "flaky", d.Target)
		require.Equal(t, "eb.default.orders.all.flaky", d.Connector)
		require.Contains(t, d.Reason, "503")
		require.Equal(t, stream.DLQClassExhausted, d.ErrorClass)
		require.EqualValues(t, 1, d.Attempts, "no retries: one attempt")
		require.Equal(t, "order.created", d.Event.Type)
		require.Equal(t, "shop", d.Event.Source)
		listed[d.Event.ID] = true
	}
	require.Equal(t, first, listed)
	require.Len(t, a.deadLetters("").DeadLetters, n, "the audit target gave up nothing")
	require.Empty(t, flaky.snapshot())

	// Paged: the pages hold every dead letter once.
	var paged []string
	for token := ""; ; {
		l := a.deadLetters("?limit=10&nextToken=" + token)
		for _, d := range l.DeadLetters {
			paged = append(paged, d.Event.ID)
		}
		if token = l.NextToken; token == "" {
			break
		}
	}
	require.Len(t, paged, n)

	// Fixed, then redriven by filter: every one reaches the flaky target, once; the list empties.
	flaky.broken.Store(false)
	var res struct {
		RedrivenCount, FailedCount int
		Entries                    []struct{ ID, ErrorCode, ErrorMessage string }
	}
	require.NoError(t, json.Unmarshal(a.must("POST", "/api/v1/dead-letters/redrive",
		map[string]any{"filter": map[string]any{"bus": "orders", "rule": "all", "target": "flaky"}}, 200), &res))
	require.Equal(t, n, res.RedrivenCount, "%+v", res)
	require.Zero(t, res.FailedCount)
	require.Len(t, res.Entries, n)
	require.Empty(t, a.deadLetters("").DeadLetters, "redriven dead letters leave the list")
	flaky.waitFor(t, first)

	// The audit target got none of the redriven copies: once its consumer has nothing left to deliver or to ack,
	// it has received everything it will ever receive of these events.
	js, err := jetstream.New(m.nc)
	require.NoError(t, err)
	ctx := context.Background()
	var busStream string
	for name := range js.StreamNames(ctx).Name() {
		if strings.HasPrefix(name, "eb_BUS_") {
			busStream = name
		}
	}
	require.NotEmpty(t, busStream)
	stream, err := js.Stream(ctx, busStream)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		settled := 0
		for info := range stream.ListConsumers(ctx).Info() {
			if info.NumPending != 0 || info.NumAckPending != 0 {
				return false
			}
			settled++
		}
		return settled == 3 // the router and the two targets
	}, 60*time.Second, 50*time.Millisecond, "every consumer of the bus settles")
	for id, count := range audit.snapshot() {
		require.Equalf(t, 1, count, "the audit target received %s %d times", id, count)
	}
	require.Len(t, audit.snapshot(), n)
	require.Empty(t, a.deadLetters("").DeadLetters, "the redriven events were delivered: nothing came back")

	// Discard: by ids, then the rest by filter; nothing of them is delivered.
	flaky.broken.Store(true)
	failedBefore := flaky.failed.Load()
	second := put("later", 4)
	require.Eventually(t, func() bool { return len(a.deadLetters(ofFlaky).DeadLetters) == len(second) }, 60*time.Second,
		50*time.Millisecond)
	require.EqualValues(t, len(second), flaky.failed.Load()-failedBefore)
	dls := a.deadLetters(ofFlaky).DeadLetters
	var del struct {
		DeletedCount, FailedCount int
		Entries                   []struct{ ID, ErrorCode string }
	}
	require.NoError(t, json.Unmarshal(a.must("DELETE", "/api/v1/dead-letters",
		map[string]any{"ids": []string{dls[0].ID}}, 200), &del))
	require.Equal(t, 1, del.DeletedCount)
	require.Equal(t, dls[0].ID, del.Entries[0].ID)
	require.Len(t, a.deadLetters("").DeadLetters, len(second)-1)
	status, body := a.do("DELETE", "/api/v1/dead-letters", "application/json", []byte(`{"ids": ["`+dls[0].ID+`"]}`))
	require.Equal(t, http.StatusNotFound, status, string(body))
	require.Equal(t, "DeadLetterNotFound", problemCode(t, body))
	require.NoError(t, json.Unmarshal(a.must("DELETE", "/api/v1/dead-letters", map[string]any{"filter": map[string]any{}}, 200), &del))
	require.Equal(t, len(second)-1, del.DeletedCount)
	require.Empty(t, a.deadLetters("").DeadLetters, "discarded")
	for id := range second {
		require.Zero(t, flaky.snapshot()[id], "a discarded event is not delivered")
	}

	// A redrive to a target that still fails dead-letters the event again, under a new id: its event id finds it
	// (what the console shows after a redrive). Reason and error class select too.
	put("again", 1)
	require.Eventually(t, func() bool { return len(a.deadLetters("?eventId=again-0").DeadLetters) == 1 }, 60*time.Second, 50*time.Millisecond)
	old := a.deadLetters("?eventId=again-0").DeadLetters[0]
	require.NoError(t, json.Unmarshal(a.must("POST", "/api/v1/dead-letters/redrive", map[string]any{"ids": []string{old.ID}}, 200), &res))
	require.Equal(t, 1, res.RedrivenCount)
	var again deadLetterList
	require.Eventually(t, func() bool {
		again = a.deadLetters("?eventId=again-0")
		return len(again.DeadLetters) == 1 && again.DeadLetters[0].ID != old.ID
	}, 60*time.Second, 50*time.Millisecond, "the redriven event failed again")
	require.Equal(t, "flaky", again.DeadLetters[0].Target)
	require.Len(t, a.deadLetters("?reason=503&errorClass=retries-exhausted").DeadLetters, 1)
	require.Empty(t, a.deadLetters("?reason=timeout").DeadLetters)
	require.Empty(t, a.deadLetters("?errorClass=permanent").DeadLetters)
	require.Empty(t, a.deadLetters("?eventId=evt-0").DeadLetters)
	status, body = a.do("GET", "/api/v1/dead-letters?errorClass=fatal", "", nil)
	require.Equal(t, http.StatusBadRequest, status, string(body))
	require.Contains(t, string(body), "errorClass")
}
