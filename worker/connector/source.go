package connector

import (
	"context"
	"encoding/json"

	"github.com/cloudevents/sdk-go/v2/event"
)

// Source reads records from an external system. The runtime calls, for each task:
//
//	NewSource → Connect → (Read → store on the bus → store offsets → Commit)* → Close
//
// from one goroutine. Close may also follow NewSource directly (a config being validated) or a failed Connect.
type Source interface {
	// Connect prepares the source (opens connections, finds where to start: Env.Offset gives the offsets the
	// runtime stored for the connector). An error fails the task.
	Connect(ctx context.Context) error
	// Read blocks until the source has records or ctx ends, and returns them in the order of the external
	// system (at most a few hundred at a time). It returns ctx.Err() when ctx ends. Any other error is counted
	// and Read is called again after a back-off, so a source whose peer is unreachable reports the error and
	// keeps trying (it should reconnect on its own); an error wrapped with Permanent fails the task.
	Read(ctx context.Context) ([]SourceRecord, error)
	// Commit says that the records of one Read are stored on the connector's output (or given up, under
	// errors.tolerance=all), and their offsets with them: the source may acknowledge them to the external
	// system. A record is never committed before it is stored; records read but not committed when a task
	// stops are read again by the next task (at least once). An error is logged, not retried.
	Commit(ctx context.Context, records []SourceRecord) error
	// Close releases what Connect opened.
	Close() error
}

// SourceRecord is one record a source read.
type SourceRecord struct {
	// Event is the record as a CloudEvent; its source and id identify it, so the same record read twice is
	// stored once within the bus's duplicate window. nil: the record only moves its partition's offset (the
	// source skipped what it read): nothing is stored, the offset is stored in its turn, and the record is
	// committed with the others.
	Event *event.Event
	// Partition names the part of the external system the record comes from (a stream, a topic, a file) and
	// Offset is the record's position in it, both as JSON objects, as in Kafka Connect. Once the record is
	// stored, the runtime stores the offset of its partition in the worker's KV offsets bucket; Env.Offset
	// gives it back to the next task. Both nil: the external system keeps the position (acked in Commit).
	Partition map[string]any
	Offset    map[string]any
	// Header holds NATS headers the runtime adds to the stored message, besides the event's own (a replay's
	// stream.HeaderReplay). Names the event's encoding uses (ce-*, content-type, stream.HeaderTypes,
	// stream.HeaderDataEncoding) and Nats-Msg-Id are not overwritten.
	Header map[string]string
	// MsgID, when set, is the Nats-Msg-Id the runtime stores the record under, instead of stream.PutMsgID of its
	// source and id: a source whose records are copies of stored events (a replay) names each copy so that it is
	// stored once when read twice, while two legitimate copies of one event are both stored. When a transform
	// makes several events of the record, each is stored under stream.HopMsgID(MsgID, PutMsgID of the event).
	MsgID string
}

// NewSourceFunc builds one source for one task. It must not do I/O (Connect does) and must be cheap enough to be
// called to validate a config. cfg reads the connector config through the plugin's Spec merged with SourceSpec.
// Problems of the config that the Spec cannot express are returned as FieldErrors.
type NewSourceFunc func(cfg Values, env Env) (Source, error)

// OffsetReader gives the offsets stored for a connector's partitions.
type OffsetReader interface {
	// Offset returns the offset stored for partition, if any.
	Offset(partition map[string]any) (map[string]any, bool)
}

// Offset returns the offset the runtime stored for partition when the task started, if any.
func (e Env) Offset(partition map[string]any) (map[string]any, bool) {
	if e.Offsets == nil {
		return nil, false
	}
	return e.Offsets.Offset(partition)
}

// PartitionKey is the canonical form of a partition: its JSON with sorted keys. Two partitions with the same
// content have the same key.
func PartitionKey(partition map[string]any) string {
	b, err := json.Marshal(partition) // encoding/json sorts map keys
	if err != nil {
		return ""
	}
	return string(b)
}

// Common config keys of sources.
const (
	// KeyOutputSubject is the subject a source's records are stored on: the .in subject of its bus.
	KeyOutputSubject = "output.subject"
	// KeyOutputStream is the stream expected to store them (the bus's stream).
	KeyOutputStream = "output.stream"
)

// SourceSpec returns the common keys of sources.
func SourceSpec() Spec {
	return Spec{
		{Name: KeyClass, Title: "Connector plugin", Type: TypeString, Required: true,
			Doc: "Name of the connector plugin that runs the connector (Kafka Connect's connector.class)."},
		{Name: KeyTasksMax, Title: "Number of tasks", Type: TypeInt, Default: DefaultTasksMax, Min: Min(1),
			Doc: "Number of tasks; how a source shares its work among tasks is the plugin's (see its doc)."},
		{Name: KeyOutputSubject, Title: "Output subject", Type: TypeString, Required: true, Check: checkPublishSubject,
			Example: "eb.bus.q4xbm2n7vd3kza6e.in",
			Doc:     "Subject the records are stored on: the input subject of the bus the source feeds (<cluster>.bus.<busId>.in)."},
		{Name: KeyOutputStream, Title: "Output stream", Type: TypeString, Required: true, Check: checkName,
			Example: "eb_BUS_q4xbm2n7vd3kza6e",
			Doc:     "Stream expected to store the records (the bus's stream); a record is stored only there."},
		{Name: KeyErrorsTolerance, Title: "Error tolerance", Type: TypeEnum, Default: ToleranceNone, Enum: []string{ToleranceNone, ToleranceAll},
			Doc: "What happens to a record a transform refuses: none fails the task (the record is read again when " +
				"it restarts), all drops it (logged and counted) and goes on."},
		{Name: KeyTransforms, Title: "Transforms", Type: TypeString, Example: "tenant,input",
			Doc: "Names of the transforms applied, in this order, to each record before it is stored, " +
				"comma-separated; each is configured by transforms.<name>.type and transforms.<name>.<key>."},
	}
}
