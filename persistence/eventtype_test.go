package persistence_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/eventtype"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
)

func TestEventTypes(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			db := persistencetest.Open(t, dialect)
			r := repos{db: db, accounts: persistence.NewAccountRepository(db), buses: persistence.NewBusRepository(db),
				rules: persistence.NewRuleRepository(db), targets: persistence.NewTargetRepository(db)}
			types := persistence.NewEventTypeRepository(db)
			b := createBus(t, r, newAccount(), "orders")
			t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
			obs := func(source, typ string, first, last time.Time, n int64, data string) *eventtype.EventType {
				return &eventtype.EventType{BusID: b.ID(), Source: source, Type: typ, FirstSeen: first, LastSeen: last,
					Count: n, Schema: eventtype.Infer([]byte(data))}
			}
			require.NoError(t, types.Merge(ctx, []*eventtype.EventType{
				obs("shop", "order.created", t0, t0.Add(time.Minute), 10, `{"id": 1, "sku": "a"}`),
				obs("shop", "order.paid", t0, t0, 1, `{"id": 1}`),
			}))
			require.NoError(t, types.Merge(ctx, []*eventtype.EventType{
				obs("shop", "order.created", t0.Add(-time.Hour), t0.Add(time.Hour), 5, `{"id": 2, "note": "x"}`),
			}))
			got, next, err := types.ListByBus(ctx, b.ID(), domain.Page{})
			require.NoError(t, err)
			assert.Empty(t, next)
			require.Len(t, got, 2)
			created := got[0]
			assert.Equal(t, "order.created", created.Type)
			assert.Equal(t, int64(15), created.Count, "counts add up")
			assert.Equal(t, t0.Add(-time.Hour), created.FirstSeen, "first seen widens")
			assert.Equal(t, t0.Add(time.Hour), created.LastSeen, "last seen widens")
			s, _ := json.Marshal(created.Schema)
			assert.JSONEq(t, `{"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"},
				"sku": {"type": "string"}, "note": {"type": "string"}}}`, string(s), "schemas merge")
			// The schema changed with the second observation: the first is kept as version 1.
			assert.Equal(t, 2, created.SchemaVersion)
			assert.Equal(t, t0.Add(-time.Hour), created.SchemaSince)
			require.Len(t, created.Previous, 1)
			v1 := created.Previous[0]
			assert.Equal(t, 1, v1.Version)
			s, _ = json.Marshal(v1.Schema)
			assert.JSONEq(t, `{"type": "object", "required": ["id", "sku"], "properties": {"id": {"type": "integer"},
				"sku": {"type": "string"}}}`, string(s), "the schema before")
			assert.Equal(t, t0, v1.FirstSeen)
			paid := got[1]
			assert.Equal(t, 1, paid.SchemaVersion, "a schema that never changed is the first")
			assert.Empty(t, paid.Previous)

			// The same data again changes nothing: no new version.
			require.NoError(t, types.Merge(ctx, []*eventtype.EventType{
				obs("shop", "order.created", t0.Add(2*time.Hour), t0.Add(2*time.Hour), 1, `{"id": 3, "sku": "b", "note": "y"}`),
			}))
			again, _, err := types.ListByBus(ctx, b.ID(), domain.Page{})
			require.NoError(t, err)
			assert.Equal(t, 2, again[0].SchemaVersion, "a schema that did not change is not a new version")

			// Paging by source, then type.
			var all []string
			for i := range 5 {
				require.NoError(t, types.Merge(ctx, []*eventtype.EventType{obs(fmt.Sprintf("src%d", i), "t", t0, t0, 1, `1`)}))
			}
			page := domain.Page{Limit: 3}
			for {
				items, next, err := types.ListByBus(ctx, b.ID(), page)
				require.NoError(t, err)
				for _, et := range items {
					all = append(all, et.Source+"/"+et.Type)
				}
				if next == "" {
					break
				}
				page.Token = next
			}
			assert.Equal(t, []string{"shop/order.created", "shop/order.paid", "src0/t", "src1/t", "src2/t", "src3/t", "src4/t"}, all)

			// They go with their bus; observations of a deleted bus are skipped.
			require.NoError(t, r.buses.Delete(ctx, b.ID()))
			got, _, err = types.ListByBus(ctx, b.ID(), domain.Page{})
			require.NoError(t, err)
			assert.Empty(t, got)
			require.NoError(t, types.Merge(ctx, []*eventtype.EventType{obs("shop", "late", t0, t0, 1, `{}`)}))
			got, _, err = types.ListByBus(ctx, b.ID(), domain.Page{})
			require.NoError(t, err)
			assert.Empty(t, got)
		})
	}
}
