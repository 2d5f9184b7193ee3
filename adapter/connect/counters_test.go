package connect_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/connect"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/history"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
)

// TestCountersReadConfigsOnlyForNewRules: the metrics history's counters name each rule a router routed to, read
// the connectors' statuses without their configs at every sample, and list the configs again only when a router
// reports a rule not seen before; a deleted rule's series ends once reconciliation has listed the configs.
func TestCountersReadConfigsOnlyForNewRules(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	worker, err := url.Parse(e.client.BaseURL)
	require.NoError(t, err)
	var withConfigs, statusesOnly atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(worker)
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/connectors" {
			switch expand := r.URL.Query()["expand"]; {
			case slices.Contains(expand, "info"):
				withConfigs.Add(1)
			case slices.Contains(expand, "status"):
				statusesOnly.Add(1)
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(counting.Close)
	sampler := connect.New(connect.Config{Runtime: rpc.NewClient(counting.URL, rpc.WithToken(testToken)),
		Buses: persistence.NewBusRepository(e.db), Rules: persistence.NewRuleRepository(e.db),
		Targets: persistence.NewTargetRepository(e.db), Streams: e.store, Physical: stream.Names{Cluster: "t"},
		Logger: slog.New(slog.DiscardHandler), States: e.states})

	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	b, err := e.buses.Create(ctx, "acme", "orders", "", bus.Retention{})
	require.NoError(t, err)
	addRule := func(name string) {
		t.Helper()
		_, err := e.rules.Create(ctx, "acme", "orders", rule.Spec{Name: name, EventPattern: []byte(`{"type":["` + name + `"]}`)})
		require.NoError(t, err)
		_, _, err = e.targets.Put(ctx, "acme", "orders", name, httpSpec("hook", receiver.URL))
		require.NoError(t, err)
	}
	put := func(typ string, n int) {
		t.Helper()
		var events []*event.Event
		for i := range n {
			ev := event.New()
			ev.SetID(fmt.Sprintf("%s-%d-%d", typ, time.Now().UnixNano(), i))
			ev.SetSource("shop")
			ev.SetType(typ)
			events = append(events, &ev)
		}
		for _, r := range e.store.Put(ctx, b, events) {
			require.NoError(t, r.Err)
		}
	}
	// matched returns the rules' matched counters of the bus, by name, once the router's total reaches total.
	matched := func(total uint64) map[string]uint64 {
		t.Helper()
		var out map[string]uint64
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			all, err := sampler.Counters(ctx)
			require.NoError(c, err)
			out = map[string]uint64{}
			var bus history.Counters
			for _, k := range all["acme"] {
				switch {
				case k.Rule == "":
					bus = k
				case k.Target == "":
					out[k.Rule] = k.Matched
				}
			}
			assert.Equal(c, total, bus.Matched, "the router's matched events")
		}, 20*time.Second, 50*time.Millisecond)
		return out
	}

	addRule("a")
	put("a", 3)
	assert.Equal(t, map[string]uint64{"a": 3}, matched(3))
	require.EqualValues(t, 1, withConfigs.Load(), "the configs are listed when rule a is first routed to")
	samples := statusesOnly.Load()
	assert.Equal(t, map[string]uint64{"a": 3}, matched(3))
	assert.EqualValues(t, 1, withConfigs.Load(), "a known rule needs no listing of the configs")
	assert.Greater(t, statusesOnly.Load(), samples, "every sample reads the statuses")

	addRule("b")
	put("b", 2)
	put("a", 1)
	assert.Equal(t, map[string]uint64{"a": 4, "b": 2}, matched(6))
	assert.EqualValues(t, 2, withConfigs.Load(), "a new rule id: the configs once more")

	// Deleted: its router still reports what it routed to a (its totals), but no table names it after reconciliation.
	require.NoError(t, e.rules.Delete(ctx, "acme", "orders", "a"))
	require.NoError(t, sampler.ReconcileAll(ctx))
	listings := withConfigs.Load()
	put("b", 1)
	assert.Equal(t, map[string]uint64{"b": 3}, matched(7))
	assert.Equal(t, listings, withConfigs.Load(), "the deleted rule's id is known: no listing of the configs")

	// Idle, the worker answers the same bytes at every listing: the client does not decode them again.
	router := connect.RouterName("acme", "orders")
	require.Eventually(t, func() bool {
		one, err := e.client.ListConnectorStatuses(ctx)
		require.NoError(t, err)
		two, err := e.client.ListConnectorStatuses(ctx)
		require.NoError(t, err)
		return one[router].Status != nil && one[router].Status == two[router].Status
	}, 20*time.Second, 100*time.Millisecond, "idle listings are the same answer")
	// And the counters of the same listing are the last answer again, not built anew.
	require.Eventually(t, func() bool {
		one, err := sampler.Counters(ctx)
		require.NoError(t, err)
		two, err := sampler.Counters(ctx)
		require.NoError(t, err)
		return reflect.ValueOf(one).UnsafePointer() == reflect.ValueOf(two).UnsafePointer()
	}, 20*time.Second, 100*time.Millisecond, "idle counters are the same answer")
	put("b", 1)
	assert.Equal(t, map[string]uint64{"b": 4}, matched(8), "a counter moved: the answer is built anew")
}
