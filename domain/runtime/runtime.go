// Package runtime is the control plane's view of the worker runtime for operators: its workers, the connectors
// of an account with their tasks, the actions on them (pause, resume, stop, restart) and the plugins the
// workers offer. The worker runtime is reached through the Runtime port; adapter/connect implements it.
//
// An operator's pause or stop through this package is desired state: it is recorded (DesiredStates) before the
// runtime is asked, and the reconciler keeps the connector in that state, even when it recreates it, until the
// operator resumes it.
package runtime

import (
	"context"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/health"
)

// Worker is one live worker of the runtime.
type Worker struct {
	ID string
	// URL is the worker's REST address when the runtime reports it ("" otherwise).
	URL     string
	Version string
	// Started is when the worker joined, LastHeartbeat when its last heartbeat was stored (zero when unknown).
	Started, LastHeartbeat time.Time
}

// Counters count what a running task did with records since it started.
type Counters struct {
	Read, Written, Retried, Dropped, Failed, Filtered, DeadLettered uint64
	// Matched, Unmatched and Routed are counted by routers only.
	Matched, Unmatched, Routed uint64
}

// Task is one task of a connector.
type Task struct {
	ID       int
	State    string
	WorkerID string
	// Trace is the last error of a FAILED task ("" otherwise).
	Trace string
	// Counters is nil when the runtime reports none (a task that does not run).
	Counters *Counters
	// Health is what the task reported of its writes since it started (nil when it reported nothing: a task that
	// does not run, or a source's or router's).
	Health *health.Facts
}

// Connector is one connector of the runtime with its tasks. State is the runtime's (RUNNING, PAUSED, STOPPED,
// FAILED, UNASSIGNED, RESTARTING).
type Connector struct {
	Name     string
	Type     string // source or sink
	State    string
	WorkerID string
	Trace    string
	Tasks    []Task
	// Health is decided from the state and the tasks' reports, as a target's (package health): HEALTHY,
	// RETRYING, FAILING, ...; LastFailure is the latest failed attempt of its tasks (nil when none since they
	// started), LastSuccessAt the latest success.
	Health        string
	LastFailure   *health.Failure
	LastSuccessAt time.Time
}

// Plugin is a connector plugin that the workers offer.
type Plugin struct {
	Class   string
	Type    string
	Version string
}

// States of a connector that operators set and the runtime reports.
const (
	StateRunning = "RUNNING"
	StatePaused  = "PAUSED"
	StateStopped = "STOPPED"
)

// DesiredStates stores the states operators set on connectors, for the reconciler to keep. Every method does I/O;
// errors are internal failures.
type DesiredStates interface {
	// SetDesiredState records state (StatePaused or StateStopped) for the account's connector; StateRunning
	// removes the record.
	SetDesiredState(ctx context.Context, accountID, connector, state string, now time.Time) error
	// ForgetDesiredState removes the record of a connector (none is not an error).
	ForgetDesiredState(ctx context.Context, connector string) error
	// DesiredStates returns every recorded state by connector name.
	DesiredStates(ctx context.Context) (map[string]string, error)
}

// Errors of the runtime use cases.
var (
	// ErrConnectorNotFound is a connector the runtime does not have, or one of another account.
	ErrConnectorNotFound = &domain.Error{Kind: domain.KindNotFound, Code: "ConnectorNotFound"}
	// ErrTaskNotFound is a task number that the connector does not have.
	ErrTaskNotFound = &domain.Error{Kind: domain.KindNotFound, Code: "TaskNotFound"}
	// ErrPluginNotFound is a plugin that the workers do not offer.
	ErrPluginNotFound = &domain.Error{Kind: domain.KindNotFound, Code: "PluginNotFound"}
)

// Runtime is the port to the worker runtime. Every method does I/O. Errors: ErrConnectorNotFound,
// ErrTaskNotFound and ErrPluginNotFound for what the runtime does not have; domain.ErrUnavailable when the
// runtime cannot be reached; anything else is an internal failure.
type Runtime interface {
	// Workers lists the live workers.
	Workers(ctx context.Context) ([]Worker, error)
	// Connectors lists every connector of the runtime (of every account) with its state, ordered by name.
	Connectors(ctx context.Context) ([]Connector, error)
	// Pause, Resume and Stop ask the runtime to change the connector's state; they return before the state
	// changed.
	Pause(ctx context.Context, connector string) error
	Resume(ctx context.Context, connector string) error
	Stop(ctx context.Context, connector string) error
	// Restart restarts the connector, and its tasks with includeTasks (only the failed ones with onlyFailed), as
	// Kafka Connect's POST /connectors/{c}/restart does.
	Restart(ctx context.Context, connector string, includeTasks, onlyFailed bool) error
	// RestartTask restarts one task of the connector.
	RestartTask(ctx context.Context, connector string, task int) error
	// Plugins lists the connector plugins the workers offer.
	Plugins(ctx context.Context) ([]Plugin, error)
	// PluginSchema returns the JSON Schema of a plugin's config.
	PluginSchema(ctx context.Context, plugin string) (map[string]any, error)
}
