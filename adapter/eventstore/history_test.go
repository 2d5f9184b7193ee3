package eventstore

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/history"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// counting is a history.Source whose counters grow by 10 at each read.
type counting struct{ n uint64 }

func (c *counting) Counters(context.Context) (map[string][]history.Counters, error) {
	c.n += 10
	return map[string][]history.Counters{
		"acme":  {{Bus: "orders", In: c.n, Matched: c.n / 2}, {Bus: "orders", Rule: "r", Target: "t", In: c.n / 2, Delivered: c.n / 2, LatencyMicros: c.n * 100}},
		"other": {{Bus: "x", In: 1}},
	}, nil
}

// TestHistoryReplicasAnswerAlike: two control-plane replicas sample on one lease, so each tick is stored once, and
// both answer the same history from the shared stream; each account's subject keeps an hour and the sample before
// (the memory bound of an answer), however many samples were taken.
func TestHistoryReplicasAnswerAlike(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	db := persistencetest.Open(t, persistence.SQLite)
	replica := func(holder string) (*history.Service, *history.Sampler) {
		js, err := jetstream.New(jetstreamtest.Connect(t, env.Server))
		require.NoError(t, err)
		store := NewHistory(js, "h", 1)
		return &history.Service{Store: store}, &history.Sampler{Source: &counting{}, Store: store,
			Lease: persistence.NewLease(db, "metrics-history", holder, time.Minute)}
	}
	svc1, s1 := replica("r1")
	svc2, s2 := replica("r2")
	t0 := time.Now().Truncate(10 * time.Second).Add(-time.Hour)
	for i := range 400 {
		at := t0.Add(time.Duration(i) * 10 * time.Second).UTC()
		require.NoError(t, s1.SampleAt(ctx, at, history.Hour, history.Day))
		require.NoError(t, s2.SampleAt(ctx, at, history.Hour, history.Day), "the replica without the lease samples nothing")
	}
	h1, err := svc1.History(ctx, "acme", history.Hour, history.Filter{})
	require.NoError(t, err)
	h2, err := svc2.History(ctx, "acme", history.Hour, history.Filter{})
	require.NoError(t, err)
	j1, _ := json.Marshal(h1)
	j2, _ := json.Marshal(h2)
	assert.JSONEq(t, string(j1), string(j2), "both replicas answer the same")

	byMetric := map[string]history.Series{}
	for _, s := range h1 {
		byMetric[s.Rule+"/"+s.Target+":"+s.Metric] = s
	}
	in := byMetric["/:in"]
	require.Len(t, in.Points, history.Hour.Points, "an hour of points, however many samples were taken")
	for _, p := range in.Points {
		require.NotNil(t, p.Value)
		assert.EqualValues(t, 10, *p.Value, "one replica sampled each tick: 10 events per step")
	}
	lat := byMetric["r/t:latencyMs"]
	require.NotEmpty(t, lat.Points)
	assert.InDelta(t, 0.2, *lat.Points[0].Value, 0.0001, "1000 µs over 5 deliveries")

	info, err := env.JS.Stream(ctx, "h_METRICS")
	require.NoError(t, err)
	subjects, err := info.Info(ctx, jetstream.WithSubjectFilter(">"))
	require.NoError(t, err)
	for subject, n := range subjects.State.Subjects {
		assert.LessOrEqualf(t, n, uint64(stream.MetricsSamplesPerSubject), "%s keeps at most %d samples", subject, stream.MetricsSamplesPerSubject)
	}
	day, err := svc1.History(ctx, "acme", history.Day, history.Filter{})
	require.NoError(t, err)
	require.NotEmpty(t, day)
	for _, p := range day[0].Points {
		assert.Zero(t, p.At.Sub(p.At.Truncate(5*time.Minute)), "day points are on 5 min boundaries")
	}
	other, err := svc1.History(ctx, "other", history.Hour, history.Filter{})
	require.NoError(t, err)
	for _, s := range other {
		assert.Equal(t, "x", s.Bus, "an account sees its own series only")
	}
}
