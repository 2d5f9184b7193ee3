package eventtype_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/eventtype"
)

func schemaJSON(t *testing.T, s *eventtype.Schema) string {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}

func TestInferAndMerge(t *testing.T) {
	t.Parallel()
	a := eventtype.Infer([]byte(`{"id": 1, "amount": 9.5, "tags": ["x"], "shop": {"name": "s", "open": true}, "note": null}`))
	assert.JSONEq(t, `{"type": "object", "required": ["amount","id","note","shop","tags"], "properties": {
		"id": {"type": "integer"}, "amount": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}},
		"shop": {"type": "object", "required": ["name","open"], "properties": {"name": {"type": "string"}, "open": {"type": "boolean"}}},
		"note": {"type": "null"}}}`, schemaJSON(t, a))

	b := eventtype.Infer([]byte(`{"id": 2.5, "shop": {"name": "t"}, "extra": "e"}`))
	m := eventtype.Merge(a, b)
	assert.JSONEq(t, `{"type": "object", "required": ["id","shop"], "properties": {
		"id": {"type": "number"}, "amount": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}},
		"shop": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "open": {"type": "boolean"}}},
		"note": {"type": "null"}, "extra": {"type": "string"}}}`, schemaJSON(t, m),
		"required: in both; integer and number: number; properties: all")
	assert.Equal(t, schemaJSON(t, m), schemaJSON(t, eventtype.Merge(b, a)), "merge is symmetric")

	both := eventtype.Merge(eventtype.Infer([]byte(`"text"`)), eventtype.Infer([]byte(`{"a": 1}`)))
	assert.JSONEq(t, `{"type": ["object","string"], "required": ["a"], "properties": {"a": {"type": "integer"}}}`, schemaJSON(t, both))
	var back eventtype.Schema
	require.NoError(t, json.Unmarshal([]byte(schemaJSON(t, both)), &back))
	assert.Equal(t, schemaJSON(t, both), schemaJSON(t, &back), "a schema reads back as written")

	assert.Nil(t, eventtype.Infer([]byte(`not json`)))
	assert.Nil(t, eventtype.Merge(nil, nil))
}

func TestInferIsBounded(t *testing.T) {
	t.Parallel()
	deep := `1`
	for range 20 {
		deep = `{"a": ` + deep + `}`
	}
	s := eventtype.Infer([]byte(deep))
	depth := 0
	for s != nil && s.Properties != nil {
		s = s.Properties["a"]
		depth++
	}
	assert.Equal(t, eventtype.MaxDepth, depth)

	wide := map[string]int{}
	for i := range 300 {
		wide[fmt.Sprintf("k%03d", i)] = i
	}
	b, _ := json.Marshal(wide)
	assert.Len(t, eventtype.Infer(b).Properties, eventtype.MaxProperties)
}

type memRepo struct {
	mu     sync.Mutex
	merged [][]*eventtype.EventType
	fail   bool
}

func (m *memRepo) Merge(_ context.Context, observed []*eventtype.EventType) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return errors.New("database down")
	}
	m.merged = append(m.merged, observed)
	return nil
}

func (m *memRepo) ListByBus(context.Context, string, domain.Page) ([]*eventtype.EventType, string, error) {
	return nil, "", nil
}

func ev(source, typ, data string) *event.Event {
	e := event.New()
	e.SetID("x")
	e.SetSource(source)
	e.SetType(typ)
	_ = e.SetData(event.ApplicationJSON, []byte(data))
	return &e
}

func TestRecorderAggregatesAndWritesPeriodically(t *testing.T) {
	t.Parallel()
	repo := &memRepo{}
	r := &eventtype.Recorder{Repo: repo, Samples: 2}
	for i := range 100 {
		r.Observe("b1", ev("shop", "order.created", fmt.Sprintf(`{"n": %d}`, i)))
	}
	r.Observe("b1", ev("shop", "order.paid", `{"late": true}`))
	r.Observe("b1", ev("shop", "order.created", `{"n": 1, "only": "after the samples"}`))
	assert.Empty(t, repo.merged, "nothing is written per event")
	require.NoError(t, r.Flush(context.Background()))
	require.Len(t, repo.merged, 1, "one write for the whole interval")
	byType := map[string]*eventtype.EventType{}
	for _, et := range repo.merged[0] {
		byType[et.Type] = et
	}
	assert.Equal(t, int64(101), byType["order.created"].Count)
	assert.Equal(t, int64(1), byType["order.paid"].Count)
	assert.NotContains(t, schemaJSON(t, byType["order.created"].Schema), "only", "only the first samples are inferred")

	// A failed write keeps the aggregates for the next one.
	repo.fail = true
	r.Observe("b1", ev("shop", "order.created", `{"n": 2}`))
	require.Error(t, r.Flush(context.Background()))
	r.Observe("b1", ev("shop", "order.created", `{"n": 3}`))
	repo.fail = false
	require.NoError(t, r.Flush(context.Background()))
	require.Len(t, repo.merged, 2)
	assert.Equal(t, int64(2), repo.merged[1][0].Count, "counts of the failed write carried over")

	require.NoError(t, r.Flush(context.Background()))
	assert.Len(t, repo.merged, 2, "an empty interval writes nothing")
}

// TestRecorderAddsReports: a router's report adds its count, widens first and last seen, and has its samples
// inferred up to Samples per type and interval, with those of other reports.
func TestRecorderAddsReports(t *testing.T) {
	t.Parallel()
	repo := &memRepo{}
	r := &eventtype.Recorder{Repo: repo, Samples: 3}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	r.Add(eventtype.Observation{BusID: "b1", Source: "hook", Type: "t", Count: 40, FirstSeen: t0, LastSeen: t0.Add(time.Second),
		Samples: [][]byte{[]byte(`{"a": 1}`), []byte(`{"a": 2}`)}})
	r.Add(eventtype.Observation{BusID: "b1", Source: "hook", Type: "t", Count: 2, FirstSeen: t0.Add(-time.Second), LastSeen: t0,
		Samples: [][]byte{[]byte(`{"a": 3, "b": true}`), []byte(`{"late": 1}`)}})
	require.NoError(t, r.Flush(context.Background()))
	require.Len(t, repo.merged, 1)
	et := repo.merged[0][0]
	assert.Equal(t, int64(42), et.Count)
	assert.Equal(t, t0.Add(-time.Second), et.FirstSeen)
	assert.Equal(t, t0.Add(time.Second), et.LastSeen)
	s := schemaJSON(t, et.Schema)
	assert.Contains(t, s, `"b"`, "the third sample is inferred")
	assert.NotContains(t, s, "late", "the fourth is not")
}

// BenchmarkObserve is the cost of recording one event for event types: after the first Samples events
// of a type in an interval, a map lookup under a lock.
func BenchmarkObserve(b *testing.B) {
	r := &eventtype.Recorder{Repo: &memRepo{}}
	events := make([]*event.Event, 16)
	for i := range events {
		events[i] = ev(fmt.Sprintf("shop/%d", i%4), fmt.Sprintf("order.%d", i), `{"id": 1, "items": [{"sku": "a", "n": 2}], "total": 9.5}`)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Observe("b1", events[i%len(events)])
	}
}
