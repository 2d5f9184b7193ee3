package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAccountStorageQuotaEndToEnd: a paused target holds its events; once they fill the account's storage quota,
// that account's PutEvents and webhooks answer 409 AccountStorageQuotaExceeded while another account keeps putting;
// after resume every acknowledged event is delivered, what was delivered is trimmed, and the account puts again
// without a restart.
func TestAccountStorageQuotaEndToEnd(t *testing.T) {
	m := startMain(t, t.TempDir(), "--account-storage-quota-mib", "6", "--dead-letter-max-mib", "1", "--bus-log-max-mib", "1",
		"--storage-check-interval", "100ms")
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	other := a.newAccount("other")
	for _, c := range []api{a, other} {
		c.must("POST", "/api/v1/buses", map[string]any{"name": "orders"}, 201)
	}
	r := newReceiver(t)
	a.must("POST", "/api/v1/buses/orders/rules", map[string]any{"name": "all",
		"eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
	a.must("PUT", "/api/v1/buses/orders/rules/all/targets/hook", httpTarget(r.srv.URL), 201)
	const hook = "eb.default.orders.all.hook"
	src := decodeSource(t, a.must("POST", "/api/v1/buses/orders/sources", map[string]any{"name": "hook", "type": "http"}, 201))
	a.must("POST", "/api/v1/runtime/connectors/"+hook+"/pause", nil, 202)
	a.waitState(hook, "PAUSED")

	// 16 KiB events, 20 a batch: the quota (5 MiB besides the dead letters) fills with what the paused target holds.
	acked := map[string]bool{}
	pad := strings.Repeat("x", 16<<10)
	batch := func(prefix string, n int) ([]map[string]any, []string) {
		var evs []map[string]any
		var ids []string
		for i := range n {
			id := fmt.Sprintf("%s-%d", prefix, i)
			evs = append(evs, event(id, "shop", "order.created", map[string]any{"pad": pad}))
			ids = append(ids, id)
		}
		return evs, ids
	}
	var refused []byte
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; refused == nil; n++ {
		require.True(t, time.Now().Before(deadline), "the quota never filled; %d events stored", len(acked))
		evs, ids := batch(fmt.Sprintf("b%d", n), 20)
		body, err := json.Marshal(evs)
		require.NoError(t, err)
		status, out := a.do("POST", "/api/v1/buses/orders/events", "application/cloudevents-batch+json", body)
		switch status {
		case http.StatusOK:
			var res struct{ FailedEntryCount int }
			require.NoError(t, json.Unmarshal(out, &res))
			require.Zero(t, res.FailedEntryCount, string(out))
			for _, id := range ids {
				acked[id] = true
			}
			time.Sleep(50 * time.Millisecond)
		case http.StatusConflict:
			require.Equal(t, "AccountStorageQuotaExceeded", problemCode(t, out))
			refused = out
		default:
			t.Fatalf("PutEvents answered %d: %s", status, out)
		}
	}
	t.Logf("%d events stored before the quota filled", len(acked))
	assert.Contains(t, string(refused), "storage quota")
	// A webhook of the account over its quota is refused too. The meter may have trimmed what the router had routed
	// since (at 80 % of the quota, the .in copies of what the paused target holds), bringing the account under its
	// quota again: then the account fills again, with nothing left to trim, until the webhook is refused.
	require.Eventually(t, func() bool {
		resp, err := http.Post(src.Webhook.URLs[0], "application/json", strings.NewReader(`{"a":1}`))
		require.NoError(t, err)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusConflict {
			return true
		}
		require.Equal(t, http.StatusOK, resp.StatusCode)
		evs, ids := batch(fmt.Sprintf("refill%d", len(acked)), 20)
		body, err := json.Marshal(evs)
		require.NoError(t, err)
		if status, _ := a.do("POST", "/api/v1/buses/orders/events", "application/cloudevents-batch+json", body); status == http.StatusOK {
			for _, id := range ids {
				acked[id] = true
			}
		}
		return false
	}, 60*time.Second, 100*time.Millisecond, "a webhook of the account over its quota is refused too")

	// The other account is not affected.
	evs, _ := batch("other", 20)
	other.putBatch("orders", evs)

	// Resume: every acknowledged event arrives, and the account puts again once what was delivered is trimmed.
	a.must("POST", "/api/v1/runtime/connectors/"+hook+"/resume", nil, 202)
	r.waitFor(t, acked)
	require.Eventually(t, func() bool {
		evs, _ := batch("after", 1)
		body, err := json.Marshal(evs)
		require.NoError(t, err)
		status, _ := a.do("POST", "/api/v1/buses/orders/events", "application/cloudevents-batch+json", body)
		return status == http.StatusOK
	}, 30*time.Second, 200*time.Millisecond, "the account puts again once its target caught up")
}
