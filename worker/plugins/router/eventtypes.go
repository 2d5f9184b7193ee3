package router

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/stream"
)

// Event types from all traffic (stream/eventtypes.go): the router counts the (source, type) pairs of the events it
// routed, with a few samples of their JSON data, and publishes a stream.EventTypesReport of them every interval.

// Bounds of the event-types reports.
const (
	// ReportMaxBytes is the largest message of a report: a report whose JSON would be larger is split into several
	// messages, each with some of its types (the first one carries Dropped).
	ReportMaxBytes = 512 << 10
	// ReportPublishTimeout bounds the wait for JetStream to store one message of a report.
	ReportPublishTimeout = 5 * time.Second
	// ReportCloseTimeout bounds the wait for JetStream to store the last report, which Close publishes (its
	// encoding, CPU work that a loaded machine slows, does not count).
	ReportCloseTimeout = 2 * time.Second
)

// typeKey is one (source, type) pair.
type typeKey struct{ source, typ string }

// seenType is what the router counted of one (source, type) pair since its last report.
type seenType struct {
	stream.ObservedType
	// considered counts the events whose data was looked at for a sample (at most stream.EventTypeSamples), taken
	// or not: data that turns out not to be JSON costs one check per report slot, not one per event.
	considered int
}

// eventTypes aggregates the event types a router routed between two reports, within the bounds of a report
// (stream.EventTypesPerReport types, stream.EventTypeSamples samples per type). Safe for concurrent use.
type eventTypes struct {
	mu      sync.Mutex
	types   map[typeKey]*seenType
	dropped int64
	// spawn, when set, starts the reporting goroutine; reporting tells whether one runs. An idle router has none:
	// the first event counted starts it, and it ends after an interval in which nothing was counted.
	spawn     func()
	reporting bool
}

func newEventTypes() *eventTypes {
	return &eventTypes{types: map[typeKey]*seenType{}}
}

// signal starts the reporting goroutine unless one runs. Called with a.mu held, when the aggregate stops being
// empty.
func (a *eventTypes) signal() {
	if !a.reporting && a.spawn != nil {
		a.reporting = true
		a.spawn()
	}
}

// empty reports whether nothing was counted since the last take. Called with a.mu held.
func (a *eventTypes) empty() bool { return len(a.types) == 0 && a.dropped == 0 }

// quiet reports whether nothing was counted since the last take, and if so marks the reporting goroutine, which
// asks, as ended: the next event counted starts another.
func (a *eventTypes) quiet() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.empty() {
		a.reporting = false
		return true
	}
	return false
}

// observe counts one event of (source, typ) stored at, whose data is data of datacontenttype contentType. Write
// calls it once the event was routed. For a type already counted in this report it costs a map update under the
// lock and no allocation; the first stream.EventTypeSamples events of a type per report also have their data
// checked, and copied when it is JSON (an empty content type counts as JSON, as in domain/eventtype) of at most
// stream.EventTypeSampleMaxBytes. An event of a new type when the report has stream.EventTypesPerReport types is
// counted in Dropped.
func (a *eventTypes) observe(source, typ, contentType string, data []byte, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.empty() {
		a.signal()
	}
	t, ok := a.types[typeKey{source, typ}]
	if !ok {
		if len(a.types) >= stream.EventTypesPerReport {
			a.dropped++
			return
		}
		t = &seenType{ObservedType: stream.ObservedType{Source: source, Type: typ, FirstSeen: at, LastSeen: at}}
		a.types[typeKey{source, typ}] = t
	}
	t.Count++
	if at.Before(t.FirstSeen) {
		t.FirstSeen = at
	}
	if at.After(t.LastSeen) {
		t.LastSeen = at
	}
	if t.considered >= stream.EventTypeSamples {
		return
	}
	t.considered++
	if sample := sampleOf(contentType, data); sample != nil {
		t.Samples = append(t.Samples, sample)
	}
}

// sampleOf returns a copy of data when it can be a sample: JSON (by its content type, and valid), non-empty and
// at most stream.EventTypeSampleMaxBytes; nil otherwise.
func sampleOf(contentType string, data []byte) json.RawMessage {
	if len(data) == 0 || len(data) > stream.EventTypeSampleMaxBytes {
		return nil
	}
	if contentType != "" && !cloudevent.IsJSONMedia(contentType) {
		return nil
	}
	// A sample is a JSON value of the report: data of a JSON type that is not JSON (or data of no type that is
	// not) would make the whole report unencodable.
	if !json.Valid(data) {
		return nil
	}
	return slices.Clone(data)
}

// take returns what was counted since the last take, the types ordered by source and type, and starts anew.
func (a *eventTypes) take() (types []stream.ObservedType, dropped int64) {
	a.mu.Lock()
	taken, dropped := a.types, a.dropped
	a.types, a.dropped = make(map[typeKey]*seenType, len(taken)), 0
	a.mu.Unlock()
	types = make([]stream.ObservedType, 0, len(taken))
	for _, t := range taken {
		types = append(types, t.ObservedType)
	}
	slices.SortFunc(types, func(a, b stream.ObservedType) int {
		return cmp.Or(strings.Compare(a.Source, b.Source), strings.Compare(a.Type, b.Type))
	})
	return types, dropped
}

// restore puts back what take returned and could not be reported, merged with what was counted since, within the
// same bounds: counts add up, first and last seen widen, samples fill the free places of a type, and the events of
// types beyond stream.EventTypesPerReport are added to Dropped.
func (a *eventTypes) restore(types []stream.ObservedType, dropped int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(types) > 0 || dropped > 0 {
		a.signal()
	}
	a.dropped += dropped
	for _, o := range types {
		k := typeKey{o.Source, o.Type}
		t, ok := a.types[k]
		if !ok {
			if len(a.types) >= stream.EventTypesPerReport {
				a.dropped += o.Count
				continue
			}
			a.types[k] = &seenType{ObservedType: o, considered: len(o.Samples)}
			continue
		}
		t.Count += o.Count
		if o.FirstSeen.Before(t.FirstSeen) {
			t.FirstSeen = o.FirstSeen
		}
		if o.LastSeen.After(t.LastSeen) {
			t.LastSeen = o.LastSeen
		}
		// The restored samples are older: they go first, and the newer ones keep the places left.
		t.Samples = append(o.Samples, t.Samples...)[:min(len(o.Samples)+len(t.Samples), stream.EventTypeSamples)]
		t.considered = min(t.considered+len(o.Samples), stream.EventTypeSamples)
	}
}

// reportPublisher stores the messages of a report (jetstream.JetStream does).
type reportPublisher interface {
	PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)
}

// reporter publishes a router's event types to its bus's subject of the event-types stream every interval while
// the router routes, from a goroutine that the first event counted starts (between start and stop) and that ends
// after an interval in which nothing was counted. An idle router's reporter has no goroutine and no timer: idle
// buses cost nothing per second, and no memory for a goroutine each.
type reporter struct {
	pub      reportPublisher
	subject  string
	busID    string
	interval time.Duration
	types    *eventTypes
	log      *slog.Logger

	ctx     context.Context
	cancel  context.CancelFunc
	running sync.WaitGroup
	// failures counts the reports in a row that could not be published, to log the first failure and the recovery
	// rather than every interval. One reporting goroutine at a time touches it (the next starts after the last
	// marked itself ended, under the aggregate's lock).
	failures int
}

// start lets the events counted start the reporting goroutine, until stop.
func (r *reporter) start() {
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.types.mu.Lock()
	defer r.types.mu.Unlock()
	r.types.spawn = func() {
		r.running.Add(1)
		go r.run()
	}
	if !r.types.empty() {
		r.types.signal() // counted before start
	}
}

// run publishes a report every interval until an interval in which nothing was counted, or stop.
func (r *reporter) run() {
	defer r.running.Done()
	for {
		timer := time.NewTimer(r.interval)
		select {
		case <-r.ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		if r.types.quiet() {
			return // the next event counted starts another goroutine
		}
		_, _, err := r.flush(r.ctx, ReportPublishTimeout, 0)
		switch {
		case r.ctx.Err() != nil: // stop interrupted the report; it publishes what was kept
		case err != nil:
			if r.failures == 0 {
				r.log.Warn("event types: publishing the router's report failed; its counts go with the next one",
					"subject", r.subject, "err", err)
			}
			r.failures++
		case r.failures > 0:
			r.log.Info("event types: the router's reports are published again", "subject", r.subject,
				"failed_reports", r.failures)
			r.failures = 0
		}
	}
}

// stop ends the reporting goroutine, if one runs, and no other starts; then it publishes what was counted and is
// left, waiting at most ReportCloseTimeout for JetStream once the report is encoded: what it cannot publish then
// is lost, and logged. It blocks until done.
func (r *reporter) stop() {
	if r.cancel != nil {
		r.types.mu.Lock()
		r.types.spawn = nil // no goroutine starts from now on
		r.types.mu.Unlock()
		r.cancel()
		r.running.Wait()
		r.types.mu.Lock()
		r.types.reporting = false
		r.types.mu.Unlock()
	}
	if types, dropped, err := r.flush(context.Background(), ReportCloseTimeout, ReportCloseTimeout); err != nil {
		r.log.Warn("event types: the router's last report could not be published; its counts are lost",
			"subject", r.subject, "types", types, "dropped", dropped, "err", err)
	}
}

// flush publishes what was counted since the last report, if anything, in messages of at most ReportMaxBytes,
// waiting up to timeout (and no longer than ctx) for each to be stored, and up to within for all of them when
// within is not 0, counted once they are encoded. It stops at the first message that could not be encoded or
// stored and puts that message's types and those of the following ones back into the aggregate, to go with the
// next report; then it returns how many types and dropped events it put back, and the error. A message that timed
// out waiting for its acknowledgement may have been stored nonetheless: its counts are then reported twice, as
// those of an event delivered twice are.
func (r *reporter) flush(ctx context.Context, timeout, within time.Duration) (keptTypes int, keptDropped int64, err error) {
	types, dropped := r.types.take()
	if len(types) == 0 && dropped == 0 {
		return 0, 0, nil
	}
	parts := splitReport(r.busID, types)
	keep := func(i int, err error) (int, int64, error) { // parts[i:] go back, with dropped when the first does
		var rest []stream.ObservedType
		for _, p := range parts[i:] {
			rest = append(rest, p...)
		}
		d := int64(0)
		if i == 0 {
			d = dropped
		}
		r.types.restore(rest, d)
		return len(rest), d, err
	}
	bodies := make([][]byte, len(parts))
	for i, part := range parts {
		rep := stream.EventTypesReport{BusID: r.busID, Types: part}
		if i == 0 {
			rep.Dropped = dropped
		}
		if rep.Types == nil {
			rep.Types = []stream.ObservedType{} // a report of dropped events only
		}
		if bodies[i], err = stream.EncodeEventTypesReport(rep); err != nil {
			return keep(0, err)
		}
	}
	if within > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, within)
		defer cancel()
	}
	for i, body := range bodies {
		if err := r.publish(ctx, timeout, body); err != nil {
			return keep(i, err)
		}
	}
	return 0, 0, nil
}

// publish stores one message of a report.
func (r *reporter) publish(ctx context.Context, timeout time.Duration, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := r.pub.PublishMsg(ctx, &nats.Msg{Subject: r.subject, Data: body}); err != nil {
		return fmt.Errorf("publishing a report of event types: %w", err)
	}
	return nil
}

// splitReport splits the types of a report into parts whose reports (with Dropped) encode to at most
// ReportMaxBytes each, keeping their order. A type that alone would not fit loses its samples (it is counted, not
// sampled, as data too large is).
func splitReport(busID string, types []stream.ObservedType) [][]stream.ObservedType {
	// What a report without types costs, Dropped at its widest.
	empty, _ := json.Marshal(stream.EventTypesReport{BusID: busID, Types: []stream.ObservedType{}, Dropped: math.MaxInt64})
	budget := ReportMaxBytes - len(empty)
	var parts [][]stream.ObservedType
	var part []stream.ObservedType
	used := 0
	for _, t := range types {
		size := encodedSize(t) + 1 // and a comma
		if size > budget && len(t.Samples) > 0 {
			t.Samples = nil
			size = encodedSize(t) + 1
		}
		if len(part) > 0 && used+size > budget {
			parts = append(parts, part)
			part, used = nil, 0
		}
		part = append(part, t)
		used += size
	}
	if len(part) > 0 || len(parts) == 0 {
		parts = append(parts, part)
	}
	return parts
}

// encodedSize is the length of t's JSON in a report.
func encodedSize(t stream.ObservedType) int {
	b, err := json.Marshal(t)
	if err != nil {
		// Samples are valid JSON (sampleOf) and the rest are strings, numbers and times: this does not happen; a
		// size over any budget puts the type alone in a message, without samples.
		return math.MaxInt32
	}
	return len(b)
}
