package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Event types from all traffic: each bus's router counts the (source, type) pairs of the events it routes, keeps a
// few samples of their JSON data, and publishes what it saw every few seconds to the event-types stream, a work
// queue that the control plane empties into its database (where schemas are inferred from the samples). Events
// reach the router whatever way they came in (PutEvents, webhooks, MQTT, eventbus and schedule sources), so every
// event type of a bus is learned; the worker never touches the database.

// EventTypesStreamMaxAge is how long a report waits for a control plane.
const EventTypesStreamMaxAge = 24 * time.Hour

// EventTypesStream is the stream of the routers' reports: <cluster>_EVENT_TYPES.
func (n Names) EventTypesStream() string { return n.Cluster + "_EVENT_TYPES" }

// EventTypesSubject is the subject of one bus's reports: <cluster>.eventtypes.<busId>.
func (n Names) EventTypesSubject(busID string) string { return n.Cluster + ".eventtypes." + busID }

// EventTypesConsumer is the durable consumer through which the control-plane replicas merge the reports.
func (n Names) EventTypesConsumer() string { return n.Cluster + "_eventtypes_merge" }

// EventTypesStreamConfig is the event-types stream.
func (n Names) EventTypesStreamConfig(replicas int) jetstream.StreamConfig {
	if replicas < 1 {
		replicas = 1
	}
	return jetstream.StreamConfig{
		Name:      n.EventTypesStream(),
		Subjects:  []string{n.Cluster + ".eventtypes.*"},
		Retention: jetstream.WorkQueuePolicy,
		Storage:   jetstream.FileStorage,
		MaxAge:    EventTypesStreamMaxAge,
		// No MaxBytes: it would be reserved in the store's budget (small installations start with 50 MiB); the
		// stream is emptied as the control plane merges, and bounded by MaxAge while none does.
		Discard:  jetstream.DiscardOld,
		Replicas: replicas,
	}
}

// EnsureEventTypesStream creates the event-types stream, or updates it. Idempotent.
func (n Names) EnsureEventTypesStream(ctx context.Context, js jetstream.JetStream, replicas int) error {
	if err := ensure(ctx, js, n.EventTypesStreamConfig(replicas)); err != nil {
		return fmt.Errorf("ensuring the event-types stream: %w", err)
	}
	return nil
}

// Bounds of a report.
const (
	// EventTypeSamples is how many samples of data one report keeps per event type.
	EventTypeSamples = 10
	// EventTypeSampleMaxBytes is the largest data sampled; larger data is counted, not sampled.
	EventTypeSampleMaxBytes = 16 << 10
	// EventTypesPerReport bounds the event types one router counts between two reports; events of further types
	// are counted in Dropped.
	EventTypesPerReport = 10_000
)

// EventTypesReport is what one router saw of its bus's events since its last report.
type EventTypesReport struct {
	BusID string         `json:"busId"`
	Types []ObservedType `json:"types"`
	// Dropped counts the events not counted because the report had EventTypesPerReport types already.
	Dropped int64 `json:"dropped,omitempty"`
}

// ObservedType is one (source, type) pair of a report.
type ObservedType struct {
	Source string `json:"source"`
	Type   string `json:"type"`
	Count  int64  `json:"count"`
	// FirstSeen and LastSeen are when the first and last of these events were stored on the bus.
	FirstSeen time.Time `json:"firstSeen"`
	LastSeen  time.Time `json:"lastSeen"`
	// Samples are the data of up to EventTypeSamples of these events whose data is JSON (cloudevent.IsJSONMedia),
	// each at most EventTypeSampleMaxBytes.
	Samples []json.RawMessage `json:"samples,omitempty"`
}

// EncodeEventTypesReport is the body of a report's message.
func EncodeEventTypesReport(r EventTypesReport) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encoding an event-types report: %w", err)
	}
	return b, nil
}

// DecodeEventTypesReport reads a report.
func DecodeEventTypesReport(data []byte) (EventTypesReport, error) {
	var r EventTypesReport
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("decoding an event-types report: %w", err)
	}
	return r, nil
}
