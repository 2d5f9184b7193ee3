// Package rpc is the contract of the worker's REST API in the Kafka Connect dialect: its wire types and a typed
// client. It imports the standard library only, so the worker and the control plane share it.
package rpc

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Connector and task states, as Kafka Connect names them.
const (
	StateUnassigned = "UNASSIGNED"
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateStopped    = "STOPPED"
	StateFailed     = "FAILED"
	StateRestarting = "RESTARTING"
)

// Connector types, lower-case as Kafka Connect writes them.
const (
	TypeSource = "source"
	TypeSink   = "sink"
)

// Well-known connector config keys.
const (
	ConfigConnectorClass = "connector.class"
	ConfigTasksMax       = "tasks.max"
	ConfigTopics         = "topics"
)

// CreateConnectorRequest is the body of POST /connectors.
type CreateConnectorRequest struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	// InitialState is RUNNING (default), PAUSED or STOPPED.
	InitialState string `json:"initial_state,omitempty"`
}

// TaskID names one task of a connector.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

// ConnectorInfo is the answer of POST /connectors and GET /connectors/{c}.
type ConnectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []TaskID          `json:"tasks"`
	Type   string            `json:"type"`
}

// ConnectorState is the state of a connector instance.
type ConnectorState struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// TaskState is the state of one task.
type TaskState struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
	// Counters are ours (Kafka Connect has metrics instead): what a running task did since it started.
	Counters *TaskCounters `json:"counters,omitempty"`
	// Health is ours too: how a running task's writes went since it started (the facts; the control plane's
	// target and source health is decided from them).
	Health *TaskHealth `json:"health,omitempty"`
	// Totals are what the task did since its connector was created, over all its runs (restarts, pauses, moves to
	// other workers, restarts of the process): live on the worker that runs it, else as last stored, which is at
	// most a second behind when that worker was killed.
	Totals *TaskCounters `json:"totals,omitempty"`
}

// Add returns the sum of c and d.
func (c TaskCounters) Add(d TaskCounters) TaskCounters {
	return TaskCounters{Read: c.Read + d.Read, Written: c.Written + d.Written, Retried: c.Retried + d.Retried,
		Dropped: c.Dropped + d.Dropped, Failed: c.Failed + d.Failed, Undecodable: c.Undecodable + d.Undecodable,
		Filtered: c.Filtered + d.Filtered, TransformFailed: c.TransformFailed + d.TransformFailed,
		DeadLettered: c.DeadLettered + d.DeadLettered, Matched: c.Matched + d.Matched, Unmatched: c.Unmatched + d.Unmatched,
		Routed: c.Routed + d.Routed, RoutedTo: addRoutes(c.RoutedTo, d.RoutedTo), LogDropped: c.LogDropped + d.LogDropped,
		LatencyMicros: c.LatencyMicros + d.LatencyMicros, Duplicates: c.Duplicates + d.Duplicates}
}

// addRoutes returns the sum of two counts per rule (nil when both are empty); it changes neither.
func addRoutes(a, b map[string]uint64) map[string]uint64 {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := make(map[string]uint64, max(len(a), len(b)))
	for id, n := range a {
		out[id] += n
	}
	for id, n := range b {
		out[id] += n
	}
	return out
}

// TaskHealth is what a running task knows of how its writes go. Times are absent when they never happened since
// the task started.
type TaskHealth struct {
	LastSuccessAt *time.Time   `json:"last_success_at,omitempty"`
	LastFailure   *TaskFailure `json:"last_failure,omitempty"`
	// FailuresSinceSuccess counts the failed attempts since the last success, the first of which was at
	// FailingSince.
	FailuresSinceSuccess uint64     `json:"failures_since_success"`
	FailingSince         *time.Time `json:"failing_since,omitempty"`
	// RetryScheduled: the last attempt failed and its record is attempted again.
	RetryScheduled     bool       `json:"retry_scheduled"`
	LastDeadLetteredAt *time.Time `json:"last_dead_lettered_at,omitempty"`
}

// TaskFailure is a failed attempt: when, which attempt of its record, the error class (connection-refused, dns,
// timeout, tls, egress-refused, http-4xx, http-5xx, ...), the target's status when it answered, the error and the
// start of the target's answer, without secret values.
type TaskFailure struct {
	At       time.Time `json:"at"`
	Attempt  uint64    `json:"attempt,omitempty"`
	Class    string    `json:"class"`
	Status   int       `json:"status,omitempty"`
	Message  string    `json:"message"`
	Response string    `json:"response,omitempty"`
}

// TaskCounters count what a task did with records since it started. A record retried twice counts two Retried.
type TaskCounters struct {
	Read        uint64 `json:"read"`
	Written     uint64 `json:"written"`
	Retried     uint64 `json:"retried"`
	Dropped     uint64 `json:"dropped"`
	Failed      uint64 `json:"failed"`
	Undecodable uint64 `json:"undecodable"`
	// Filtered records were removed by a transform and acked without being written.
	Filtered uint64 `json:"filtered"`
	// TransformFailed records were refused by a transform; each is also counted dropped or failed.
	TransformFailed uint64 `json:"transform_failed"`
	// DeadLettered records were given up and published to the dead-letter subject, then acked.
	DeadLettered uint64 `json:"dead_lettered"`
	// Matched records were written by a routing sink and matched at least one rule; Unmatched ones matched none.
	// Routed counts the copies stored for them, one per matched rule. Each record counts once, on the attempt
	// that was accepted. Sinks that do not route report 0.
	Matched   uint64 `json:"matched"`
	Unmatched uint64 `json:"unmatched"`
	Routed    uint64 `json:"routed"`
	// RoutedTo splits Routed by rule id (a rule's matched events); absent for sinks that do not route.
	RoutedTo map[string]uint64 `json:"routed_to,omitempty"`
	// LogDropped counts the task's bus-log records that could not be written (the log stream full or gone).
	LogDropped uint64 `json:"log_dropped,omitempty"`
	// LatencyMicros sums the delivery latency of the records Written (from their storing to their acceptance),
	// in microseconds.
	LatencyMicros uint64 `json:"latency_us,omitempty"`
	// Duplicates counts the records a source task stored that JetStream had stored already within the stream's
	// duplicate window (a batch read again after a crash or a handover): stored once, counted here.
	Duplicates uint64 `json:"duplicates,omitempty"`
}

// ConnectorStatus is the answer of GET /connectors/{c}/status.
type ConnectorStatus struct {
	Name      string         `json:"name"`
	Connector ConnectorState `json:"connector"`
	Tasks     []TaskState    `json:"tasks"`
	Type      string         `json:"type"`
}

// ConnectorExpanded is one entry of GET /connectors?expand=status&expand=info.
type ConnectorExpanded struct {
	Info   *ConnectorInfo   `json:"info,omitempty"`
	Status *ConnectorStatus `json:"status,omitempty"`
}

// ErrorResponse is the body of every error answer.
type ErrorResponse struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

// ServerInfo is the answer of GET /.
type ServerInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	ClusterID string `json:"kafka_cluster_id"`
	WorkerID  string `json:"worker_id"`
}

// PluginInfo is one entry of GET /connector-plugins.
type PluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version"`
}

// TaskInfo is one entry of GET /connectors/{c}/tasks.
type TaskInfo struct {
	ID     TaskID            `json:"id"`
	Config map[string]string `json:"config"`
}

// ActiveTopics is one connector's entry of GET /connectors/{c}/topics: the subjects it read (a sink) or wrote (a
// source) since it was created or its topics were reset.
type ActiveTopics struct {
	Topics []string `json:"topics"`
}

// ConnectorOffsets is the answer of GET /connectors/{c}/offsets and the body of PATCH /connectors/{c}/offsets,
// in Kafka Connect's shape: partitions and offsets are JSON objects whose keys depend on the connector. A
// JetStream-fed sink has one partition, {"subject": S}, the subject it reads; its offset is {"sequence": N}, the
// stream sequence of the consumer's ack floor (every record up to it is done). A source's partitions and offsets
// are the plugin's (see its doc); the worker stores them in KV.
type ConnectorOffsets struct {
	Offsets []ConnectorOffset `json:"offsets"`
}

// ConnectorOffset is the offset of one partition. A null Offset in a PATCH resets the partition to its start.
type ConnectorOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// Keys of the partition and offset of a JetStream-fed sink.
const (
	OffsetKeySubject  = "subject"
	OffsetKeySequence = "sequence"
)

// Message is the answer of the offsets changes: {"message": "..."}.
type Message struct {
	Message string `json:"message"`
}

// ConfigKeyInfo describes one config key as Kafka Connect does (GET /connector-plugins/{p}/config and the
// definitions of a validation).
type ConfigKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"` // BOOLEAN, STRING, LONG, PASSWORD
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"` // HIGH, MEDIUM or LOW
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
	OrderInGroup  int      `json:"order_in_group"`
	Order         int      `json:"order"`
}

// ConfigValueInfo is the validated value of one key.
type ConfigValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// ConfigInfo is one key of a validation: its definition and its value.
type ConfigInfo struct {
	Definition ConfigKeyInfo   `json:"definition"`
	Value      ConfigValueInfo `json:"value"`
}

// ConfigInfos is the answer of PUT /connector-plugins/{p}/config/validate: every problem as data.
type ConfigInfos struct {
	Name       string       `json:"name"`
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []ConfigInfo `json:"configs"`
}

// WorkerInfo is one live worker of GET /getClusterInfo (RocketMQ Connect's view).
type WorkerInfo struct {
	WorkerID string `json:"worker_id"`
	Version  string `json:"version"`
	URL      string `json:"url,omitempty"`
	// Started is when the worker joined; LastHeartbeat when its last heartbeat was stored (every 500 ms while it
	// lives). Both are absent when unknown.
	Started       time.Time `json:"started,omitzero"`
	LastHeartbeat time.Time `json:"last_heartbeat,omitzero"`
}

// ClusterInfo is the answer of GET /getClusterInfo.
type ClusterInfo struct {
	ClusterID string       `json:"cluster_id"`
	Workers   []WorkerInfo `json:"workers"`
}

// AllocatedTask is one entry of GET /allocated/tasks: a task this worker runs.
type AllocatedTask struct {
	ID     TaskID            `json:"id"`
	State  string            `json:"state"`
	Config map[string]string `json:"config"`
}

// SequenceOf reads a stream sequence from a decoded JSON offset value: a whole number ≥ 0 (float64 or
// json.Number as encoding/json gives them, or an unsigned integer).
func SequenceOf(v any) (uint64, error) {
	switch n := v.(type) {
	case float64:
		if n >= 0 && n <= 1<<53 && n == math.Trunc(n) {
			return uint64(n), nil
		}
	case json.Number:
		if u, err := strconv.ParseUint(n.String(), 10, 64); err == nil {
			return u, nil
		}
	case uint64:
		return n, nil
	case int:
		if n >= 0 {
			return uint64(n), nil
		}
	}
	return 0, fmt.Errorf("%v is not a stream sequence (a whole number ≥ 0)", v)
}

// Sequence returns the stream sequence of the offset of a JetStream-fed sink, {"sequence": N}.
func (o ConnectorOffset) Sequence() (uint64, error) { return SequenceOf(o.Offset[OffsetKeySequence]) }
