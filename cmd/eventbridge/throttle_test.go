package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPutEventsRatePerAccount: an account over its own PutEvents rate is answered 429 PutEventsRateExceeded with
// Retry-After, on PutEvents and on its webhooks, while another account, at the installation's rate, is not.
func TestPutEventsRatePerAccount(t *testing.T) {
	m := startMain(t, t.TempDir(), "--put-events-rate", "100")
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	other := a.newAccount("other")
	for _, c := range []api{a, other} {
		c.must("POST", "/api/v1/buses", map[string]any{"name": "b"}, 201)
	}

	var acc struct {
		ID     string
		Limits struct{ PutEventsPerSecond int }
	}
	require.NoError(t, json.Unmarshal(a.must("PATCH", "/api/v1/accounts/default",
		map[string]any{"limits": map[string]any{"putEventsPerSecond": 5}}, 200), &acc))
	require.Equal(t, 5, acc.Limits.PutEventsPerSecond)
	require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/accounts/default", nil, 200), &acc))
	require.Equal(t, 5, acc.Limits.PutEventsPerSecond)
	status, out := a.do("PATCH", "/api/v1/accounts/default", "application/json", []byte(`{"limits": {"putEventsPerSecond": -1}}`))
	require.Equal(t, http.StatusBadRequest, status, string(out))
	assert.Contains(t, string(out), "limits.putEventsPerSecond")

	batch := func(prefix string, n int) []map[string]any {
		var evs []map[string]any
		for i := range n {
			evs = append(evs, event(prefix+strconv.Itoa(i), "shop", "t", map[string]any{"i": i}))
		}
		return evs
	}
	a.putBatch("b", batch("first-", 5)) // one second's worth at once
	body, err := json.Marshal(batch("over-", 1))
	require.NoError(t, err)
	status, out = a.do("POST", "/api/v1/buses/b/events", "application/cloudevents-batch+json", body)
	require.Equal(t, http.StatusTooManyRequests, status, string(out))
	assert.Equal(t, "PutEventsRateExceeded", problemCode(t, out))

	// The other account, at the installation's 100 events/s, is not affected.
	other.putBatch("b", batch("other-", 50))

	// A webhook of the throttled account is throttled too.
	src := decodeSource(t, a.must("POST", "/api/v1/buses/b/sources", map[string]any{"name": "hook", "type": "http"}, 201))
	require.NotNil(t, src.Webhook)
	var throttled *http.Response
	for range 10 { // twice the bucket, whatever came back to it while the source was created
		resp, err := http.Post(src.Webhook.URLs[0], "application/json", nil)
		require.NoError(t, err)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			throttled = resp
			break
		}
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	require.NotNil(t, throttled, "ten webhook requests at once on an account of 5 events/s: none throttled")
	assert.NotEmpty(t, throttled.Header.Get("Retry-After"))
}

// newAccount creates the account id and returns a client of it with a's credentials.
func (a api) newAccount(id string) api {
	a.must("POST", "/api/v1/accounts", map[string]any{"id": id}, 201)
	a.account = id
	return a
}
