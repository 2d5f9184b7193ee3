package router

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
)

var at = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// Counting an event of a type already in the report allocates nothing, sample or not.
func TestObserveAllocatesNothingForAKnownType(t *testing.T) {
	a := newEventTypes()
	data := []byte(`{"order":1}`)
	for range stream.EventTypeSamples {
		a.observe("shop", "order.created", "application/json", data, at)
	}
	allocs := testing.AllocsPerRun(1000, func() { a.observe("shop", "order.created", "application/json", data, at) })
	assert.Zero(t, allocs)
	types, _ := a.take()
	require.Len(t, types, 1)
	assert.Equal(t, int64(1001+stream.EventTypeSamples), types[0].Count)
	assert.Len(t, types[0].Samples, stream.EventTypeSamples)
}

// Data is sampled when its content type is JSON or absent, when it is JSON, not empty, and at most the sample
// size; a type's first stream.EventTypeSamples events are looked at, sampled or not.
func TestSamples(t *testing.T) {
	t.Parallel()
	big := []byte(fmt.Sprintf(`{"blob":%q}`, strings.Repeat("x", stream.EventTypeSampleMaxBytes)))
	tests := []struct {
		name        string
		contentType string
		data        []byte
		sampled     bool
	}{
		{"application/json", "application/json", []byte(`{"a":1}`), true},
		{"with parameters", "application/json; charset=utf-8", []byte(`[1]`), true},
		{"+json", "application/cloudevents+json", []byte(`"s"`), true},
		{"no content type", "", []byte(`{"a":1}`), true},
		{"no content type, not JSON", "", []byte(`hello`), false},
		{"JSON type, not JSON", "application/json", []byte(`{"a":`), false},
		{"text/plain", "text/plain", []byte(`{"a":1}`), false},
		{"no data", "application/json", nil, false},
		{"too large", "application/json", big, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := sampleOf(tt.contentType, tt.data)
			if !tt.sampled {
				assert.Nil(t, s)
				return
			}
			assert.Equal(t, tt.data, []byte(s))
		})
	}

	largest := []byte(`"` + strings.Repeat("x", stream.EventTypeSampleMaxBytes-2) + `"`)
	assert.NotNil(t, sampleOf("", largest), "data of exactly the sample size is sampled")

	// The sample is a copy.
	data := []byte(`{"a":1}`)
	s := sampleOf("", data)
	data[5] = '2'
	assert.Equal(t, `{"a":1}`, string(s))

	// Data that cannot be sampled takes a place: the type's 11th event is not looked at.
	a := newEventTypes()
	a.observe("s", "t", "text/plain", []byte(`1`), at)
	for range stream.EventTypeSamples {
		a.observe("s", "t", "", []byte(`1`), at)
	}
	types, _ := a.take()
	assert.Len(t, types[0].Samples, stream.EventTypeSamples-1)
}

// What could not be reported is merged into what was counted since, within the bounds of a report.
func TestRestoreKeepsTheBounds(t *testing.T) {
	t.Parallel()
	a := newEventTypes()
	for i := range stream.EventTypesPerReport {
		a.observe("s", fmt.Sprintf("t%05d", i), "", []byte(`{}`), at.Add(time.Duration(i)*time.Second))
	}
	a.observe("s", "one too many", "", nil, at)
	taken, dropped := a.take()
	require.Len(t, taken, stream.EventTypesPerReport)
	require.Equal(t, int64(1), dropped)

	// Since the take: a type of the report, seen earlier than it says, with more samples, and a new type.
	for range stream.EventTypeSamples {
		a.observe("s", "t00001", "", []byte(`{"new":1}`), at.Add(-time.Hour))
	}
	a.observe("s", "new", "", nil, at)
	a.restore(taken, dropped)

	types, dropped := a.take()
	assert.Len(t, types, stream.EventTypesPerReport)
	// The new type took a place: one restored type is dropped, with its one event, besides the first one.
	assert.Equal(t, int64(2), dropped)
	byType := map[string]stream.ObservedType{}
	for _, o := range types {
		byType[o.Type] = o
	}
	assert.Contains(t, byType, "new")
	o := byType["t00001"]
	assert.Equal(t, int64(1+stream.EventTypeSamples), o.Count)
	assert.Equal(t, at.Add(-time.Hour), o.FirstSeen)
	assert.Equal(t, at.Add(time.Second), o.LastSeen)
	require.Len(t, o.Samples, stream.EventTypeSamples)
	assert.Equal(t, `{}`, string(o.Samples[0]), "the restored sample is older: it comes first")
	assert.Equal(t, `{"new":1}`, string(o.Samples[1]))

	// Nothing is counted: restoring an empty report is a no-op.
	a.restore(nil, 0)
	types, dropped = a.take()
	assert.Empty(t, types)
	assert.Zero(t, dropped)
}

// A report is split into messages of at most ReportMaxBytes, in order; a type too large for a message alone loses
// its samples.
func TestSplitReport(t *testing.T) {
	t.Parallel()
	sample := json.RawMessage(`"` + strings.Repeat("x", stream.EventTypeSampleMaxBytes-2) + `"`)
	samples := make([]json.RawMessage, stream.EventTypeSamples)
	for i := range samples {
		samples[i] = sample
	}
	var types []stream.ObservedType
	for i := range 10 {
		types = append(types, stream.ObservedType{Source: "s", Type: fmt.Sprint("t", i), Count: 1, FirstSeen: at,
			LastSeen: at, Samples: samples})
	}
	// A type whose source alone almost fills a message.
	huge := stream.ObservedType{Source: strings.Repeat("s", ReportMaxBytes-1000), Type: "huge", Count: 1,
		FirstSeen: at, LastSeen: at, Samples: samples}
	types = append(types, huge)

	parts := splitReport("b1", types)
	var got []stream.ObservedType
	for _, p := range parts {
		body, err := stream.EncodeEventTypesReport(stream.EventTypesReport{BusID: "b1", Types: p, Dropped: 1 << 62})
		require.NoError(t, err)
		assert.LessOrEqual(t, len(body), ReportMaxBytes)
		got = append(got, p...)
	}
	// 10 types of 160 KiB: 3 per message; the huge one alone.
	assert.Len(t, parts, 5)
	require.Len(t, got, len(types))
	for i := range types[:10] {
		assert.Equal(t, types[i], got[i])
	}
	assert.Equal(t, huge.Source, got[10].Source)
	assert.Empty(t, got[10].Samples)

	assert.Equal(t, [][]stream.ObservedType{nil}, splitReport("b1", nil), "a report of dropped events only")
}

// countingPublisher records the reports published.
type countingPublisher struct {
	mu   sync.Mutex
	msgs []*nats.Msg
}

func (p *countingPublisher) PublishMsg(_ context.Context, m *nats.Msg, _ ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, m)
	return &jetstream.PubAck{}, nil
}

func (p *countingPublisher) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.msgs)
}

// TestReporterWakesOnTheFirstEventAfterIdling: the reporter of an idle router has no goroutine and no timer, and
// the first event counted after a quiet spell is reported within an interval, each time; an event counted before
// start is reported too.
func TestReporterWakesOnTheFirstEventAfterIdling(t *testing.T) {
	pub := &countingPublisher{}
	r := &reporter{pub: pub, subject: "t.eventtypes.b", busID: "b", interval: 20 * time.Millisecond, types: newEventTypes(),
		log: slog.New(slog.DiscardHandler)}
	reporting := func() bool {
		r.types.mu.Lock()
		defer r.types.mu.Unlock()
		return r.types.reporting
	}
	r.types.observe("shop", "early", "application/json", []byte(`{}`), at)
	r.start()
	defer r.stop()
	require.Eventually(t, func() bool { return pub.count() == 1 }, 2*time.Second, 5*time.Millisecond,
		"the event counted before start is reported")
	for round := 2; round <= 4; round++ {
		require.Eventually(t, func() bool { return !reporting() }, 2*time.Second, 5*time.Millisecond,
			"round %d: the goroutine ends after a quiet interval", round)
		time.Sleep(100 * time.Millisecond) // idle: several intervals with nothing
		require.Equal(t, round-1, pub.count(), "nothing is published while idle")
		require.False(t, reporting(), "no goroutine while idle")
		r.types.observe("shop", "t", "application/json", []byte(`{}`), at)
		require.True(t, reporting(), "the first event starts the goroutine")
		require.Eventually(t, func() bool { return pub.count() == round }, 2*time.Second, 5*time.Millisecond,
			"round %d: the event is reported", round)
	}
}

// TestStoppedReporterStartsNoGoroutine: an event counted after stop (a Write racing Close) starts no goroutine; it
// is lost with the router, as what stop could not publish is.
func TestStoppedReporterStartsNoGoroutine(t *testing.T) {
	pub := &countingPublisher{}
	r := &reporter{pub: pub, subject: "t.eventtypes.b", busID: "b", interval: time.Hour, types: newEventTypes(),
		log: slog.New(slog.DiscardHandler)}
	r.start()
	r.types.observe("shop", "t", "application/json", []byte(`{}`), at)
	r.stop() // ends the goroutine the event started, and publishes the event
	require.Equal(t, 1, pub.count())
	r.types.observe("shop", "t", "application/json", []byte(`{}`), at)
	r.types.mu.Lock()
	defer r.types.mu.Unlock()
	require.False(t, r.types.reporting)
}
