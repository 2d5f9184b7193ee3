package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/persistence"
)

func hookTarget(name string) map[string]any {
	return map[string]any{"name": name, "type": "http", "config": map[string]any{"url": "https://example.com/" + name}}
}

func TestRulePatchPrefixAndTargetsOnCreate(t *testing.T) {
	t.Parallel()
	orders := withBus("orders")
	created := setups(orders, withRule("orders", "created"))
	run(t, []scenario{
		{
			name: "patch the state", method: http.MethodPatch, url: "/api/v1/buses/orders/rules/created",
			setup: created, body: map[string]any{"state": "DISABLED"},
			status: http.StatusOK, json: map[string]any{"name": "created", "state": "DISABLED"},
			after: func(t *testing.T, e *env, resp *response) {
				got := e.must(t, http.MethodGet, "/api/v1/buses/orders/rules/created", nil, http.StatusOK)
				assert.JSONEq(t, string(resp.Body), string(got.Body))
				synced, _ := e.runtime.calls()
				assert.Contains(t, synced, "orders", "the router applies the change")
			},
		},
		{
			name: "patch the pattern keeps the rest", method: http.MethodPatch, url: "/api/v1/buses/orders/rules/created",
			setup: created, body: `{"eventPattern": "{\"type\": [\"order.paid\"]}"}`,
			status: http.StatusOK, json: map[string]any{"state": "ENABLED", "eventPattern": map[string]any{"type": []any{"order.paid"}}},
		},
		{
			name: "patch with a bad pattern", method: http.MethodPatch, url: "/api/v1/buses/orders/rules/created",
			setup: created, body: `{"eventPattern": {"type": "order.paid"}}`,
			status: http.StatusBadRequest, json: map[string]any{"code": "InvalidEventPattern"},
		},
		{
			name: "patch with a bad state", method: http.MethodPatch, url: "/api/v1/buses/orders/rules/created",
			setup: created, body: `{"state": "SLEEPING"}`,
			status: http.StatusBadRequest, json: map[string]any{"field": "state"},
		},
		{
			name: "patch an unknown rule", method: http.MethodPatch, url: "/api/v1/buses/orders/rules/nope",
			setup: orders, body: `{"state": "DISABLED"}`, status: http.StatusNotFound, json: map[string]any{"code": "RuleNotFound"},
		},
		{
			name: "list by name prefix", method: http.MethodGet, url: "/api/v1/buses/orders/rules?namePrefix=order_",
			setup: setups(orders, withRule("orders", "order_a"), withRule("orders", "order_b"), withRule("orders", "orderX"),
				withRule("orders", "other")),
			status: http.StatusOK,
			after: func(t *testing.T, _ *env, resp *response) {
				assert.Contains(t, string(resp.Body), `"name":"order_a"`)
				assert.Contains(t, string(resp.Body), `"name":"order_b"`)
				assert.NotContains(t, string(resp.Body), `"name":"orderX"`, "'_' is not a wildcard")
				assert.NotContains(t, string(resp.Body), `"name":"other"`)
			},
		},
		{
			name: "list with a bad prefix", method: http.MethodGet, url: "/api/v1/buses/orders/rules?namePrefix=a%2Fb",
			setup: orders, status: http.StatusBadRequest, json: map[string]any{"field": "namePrefix"},
		},
		{
			name: "create with targets", method: http.MethodPost, url: "/api/v1/buses/orders/rules", setup: orders,
			body: map[string]any{"name": "paid", "eventPattern": map[string]any{"type": []any{"order.paid"}},
				"targets": []any{hookTarget("a"), hookTarget("b")}},
			status: http.StatusCreated,
			after: func(t *testing.T, e *env, resp *response) {
				assert.Contains(t, string(resp.Body), `"targets":[{"name":"a"`)
				got := e.must(t, http.MethodGet, "/api/v1/buses/orders/rules/paid/targets", nil, http.StatusOK)
				assert.Contains(t, string(got.Body), `"name":"a"`)
				assert.Contains(t, string(got.Body), `"name":"b"`)
			},
		},
		{
			name: "create with a bad target creates nothing", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup: orders,
			body: map[string]any{"name": "paid", "eventPattern": map[string]any{"type": []any{"order.paid"}},
				"targets": []any{hookTarget("a"), map[string]any{"name": "b", "type": "http", "config": map[string]any{"url": "ftp://x"}}}},
			status: http.StatusBadRequest, json: map[string]any{"field": "targets[1].config.url"},
			after: func(t *testing.T, e *env, _ *response) {
				e.must(t, http.MethodGet, "/api/v1/buses/orders/rules/paid", nil, http.StatusNotFound)
			},
		},
		{
			name: "create with two targets of one name", method: http.MethodPost, url: "/api/v1/buses/orders/rules",
			setup: orders,
			body: map[string]any{"name": "paid", "eventPattern": map[string]any{"type": []any{"order.paid"}},
				"targets": []any{hookTarget("a"), hookTarget("a")}},
			status: http.StatusBadRequest, json: map[string]any{"field": "targets[1].name"},
		},
		{
			name: "create with six targets", method: http.MethodPost, url: "/api/v1/buses/orders/rules", setup: orders,
			body: map[string]any{"name": "paid", "eventPattern": map[string]any{"type": []any{"order.paid"}},
				"targets": []any{hookTarget("a"), hookTarget("b"), hookTarget("c"), hookTarget("d"), hookTarget("e"), hookTarget("f")}},
			status: http.StatusConflict, json: map[string]any{"code": "LimitExceeded"},
		},
		{
			name: "targets in a PUT are refused", method: http.MethodPut, url: "/api/v1/buses/orders/rules/created",
			setup:  created,
			body:   map[string]any{"eventPattern": map[string]any{"type": []any{"x"}}, "targets": []any{hookTarget("a")}},
			status: http.StatusBadRequest, json: map[string]any{"field": "targets"},
		},
	})
}

// TestRuleQuota: a bus has at most its quota of rules.
func TestRuleQuota(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dialect string) {
		e := newEnv(t, natsServer(t), dialect)
		e.services.Rules.MaxPerBus = 2
		e.createBus(t, "orders")
		for i := range 2 {
			e.createRule(t, "orders", fmt.Sprintf("r%d", i))
		}
		resp := e.must(t, http.MethodPost, "/api/v1/buses/orders/rules",
			map[string]any{"name": "r2", "eventPattern": map[string]any{"type": []any{"x"}}}, http.StatusConflict)
		assert.Contains(t, string(resp.Body), `"code":"RuleQuotaExceeded"`)
		assert.Contains(t, string(resp.Body), "rules per bus (2)")
	})
}

// A rule created with targets is stored with them in one transaction: a reader never finds the rule with some of
// its targets missing (it did when the targets were stored one by one after the rule), on SQLite and MariaDB.
func TestRuleCreatedWithItsTargetsAtOnce(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{persistence.SQLite, persistence.MySQL} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, natsServer(t), dialect)
			withBus("orders")(t, e)
			const rules = 40
			done := make(chan struct{})
			var halves, whole atomic.Int64
			go func() {
				defer close(done)
				for i := range rules {
					body := map[string]any{"name": fmt.Sprintf("r%d", i), "eventPattern": map[string]any{"source": []any{"s"}},
						"targets": []any{hookTarget("a"), hookTarget("b"), hookTarget("c"), hookTarget("d"), hookTarget("e")}}
					resp := e.do(t, http.MethodPost, "/api/v1/buses/orders/rules", nil, body)
					assert.Equal(t, http.StatusCreated, resp.Status, string(resp.Body))
				}
			}()
			for i := 0; i < rules; {
				select {
				case <-done:
					i = rules
					continue
				default:
				}
				resp := e.do(t, http.MethodGet, fmt.Sprintf("/api/v1/buses/orders/rules/r%d/targets", i), nil, nil)
				if resp.Status != http.StatusOK {
					continue // not created yet
				}
				var list struct{ Targets []any }
				require.NoError(t, json.Unmarshal(resp.Body, &list))
				if len(list.Targets) < 5 {
					halves.Add(1)
				} else {
					whole.Add(1)
					i++
				}
			}
			<-done
			assert.Zero(t, halves.Load(), "a rule was read with some of its targets missing")
			assert.Positive(t, whole.Load())
		})
	}
}
