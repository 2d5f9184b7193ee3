package stream_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// consume acknowledges the first n messages a durable consumer of filters reads.
func consume(t *testing.T, s jetstream.Stream, name string, n int, filters ...string) {
	t.Helper()
	ctx := context.Background()
	c, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: name, FilterSubjects: filters, AckPolicy: jetstream.AckExplicitPolicy})
	require.NoError(t, err)
	if n == 0 {
		return
	}
	batch, err := c.Fetch(n, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(t, err)
	got := 0
	for m := range batch.Messages() {
		require.NoError(t, m.DoubleAck(ctx))
		got++
	}
	require.Equal(t, n, got)
}

// subjectsLeft counts what a bus's stream keeps per subject.
func subjectsLeft(t *testing.T, s jetstream.Stream) map[string]uint64 {
	t.Helper()
	info, err := s.Info(context.Background(), jetstream.WithSubjectFilter(">"))
	require.NoError(t, err)
	return info.State.Subjects
}

// TestTrimDelivered: what every consumer reading it acknowledged goes; what one of them has still to read, and what
// no consumer reads yet, stays; a stream without consumers is left alone.
func TestTrimDelivered(t *testing.T) {
	js := jetstreamtest.Start(t).JS
	ctx := context.Background()
	n := stream.Names{Cluster: "t"}
	const busID = "b1"
	require.NoError(t, n.EnsureBusStream(ctx, js, busID, time.Hour, 0, 1))
	in, r1, r2, src := n.BusIn(busID), n.RuleSubject(busID, "r1"), n.RuleSubject(busID, "r2"), n.SourceSubject(busID, "s1")
	for i := range 10 {
		for _, subj := range []string{in, r1, r2, src} {
			_, err := js.Publish(ctx, subj, fmt.Appendf(nil, "%s-%d", subj, i))
			require.NoError(t, err)
		}
	}
	s, err := js.Stream(ctx, n.BusStream(busID))
	require.NoError(t, err)

	freed, err := stream.TrimDelivered(ctx, js, n.BusStream(busID))
	require.NoError(t, err)
	assert.Zero(t, freed, "no consumer yet: nothing is known to be delivered")

	consume(t, s, "router", 10, in)                                   // the router routed everything
	consume(t, s, "r1-a", 10, r1, n.RedriveSubject(busID, "r1", "a")) // one target of r1 delivered everything
	consume(t, s, "r1-b", 4, r1, n.RedriveSubject(busID, "r1", "b"))  // another is behind
	consume(t, s, "r2-a", 0, r2)                                      // a paused target read nothing
	// src has no consumer: a webhook source whose connector did not start yet.

	freed, err = stream.TrimDelivered(ctx, js, n.BusStream(busID))
	require.NoError(t, err)
	assert.Positive(t, freed)
	left := subjectsLeft(t, s)
	assert.Zero(t, left[in], "routed events go")
	assert.EqualValues(t, 6, left[r1], "what the slower target of r1 has still to read stays")
	assert.EqualValues(t, 10, left[r2], "a paused target's events stay")
	assert.EqualValues(t, 10, left[src], "what no consumer reads yet stays")

	// A consumer of the whole stream bounds everything by its own floor.
	consume(t, s, "tail", 25)
	_, err = stream.TrimDelivered(ctx, js, n.BusStream(busID))
	require.NoError(t, err)
	left = subjectsLeft(t, s)
	assert.EqualValues(t, 6, left[r1], "the slower target still holds its events")
	assert.EqualValues(t, 10, left[r2])
	assert.EqualValues(t, 10, left[src])
}
