package connect

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/rpc"
)

var (
	_ source.Runtime      = (*Adapter)(nil)
	_ source.StatusReader = (*Adapter)(nil)
)

// Keys of a source connector that the adapter sets: the common source keys of the worker
// (worker/connector.SourceSpec) and, for webhook sources, the eventbus-source keys with which the http-source
// plugin reads the source's intake subject.
const (
	keyOutputSubject  = "output.subject"
	keyOutputStream   = "output.stream"
	keyIntakeStream   = "source.stream"
	keyIntakeSubject  = "source.subject"
	keyIntakeStart    = "source.start"
	keySourceID       = "eb.source.id"
	sourceTasksMax    = "1"
	intakeStartPolicy = "all"
)

// SourcePhysical is the name the adapter needs for webhook sources beyond Physical: the intake subject of a
// source (worker/jetstream.Names has it).
type SourcePhysical interface {
	SourceSubject(busID, sourceID string) string
}

// SourceName is the source connector of a source: eb.<account>.<bus>.source.<source>.
func SourceName(accountID, busName, sourceName string) string {
	return busPrefix(accountID, busName) + "source." + namePart(sourceName)
}

// sourcePlugin finds the source plugin of type t among the runtime's plugins: ErrUnknownType naming the source
// types there are when it has none.
func (a *Adapter) sourcePlugin(ctx context.Context, t source.Type) (string, error) {
	classes, ok, err := a.plugin(ctx, rpc.TypeSource, t.Plugin())
	if err != nil {
		return "", sourceRuntimeErr(err)
	}
	if ok {
		return t.Plugin(), nil
	}
	var types []string
	for _, c := range classes {
		if st, ok := source.TypeOfPlugin(c); ok {
			types = append(types, string(st))
		}
	}
	return "", source.ErrUnknownType.With("type %q is not a source plugin of the runtime; the source types are: %s",
		t, strings.Join(types, ", ")).WithField("type")
}

// sourceRuntimeErr maps a failure to reach the runtime to domain.ErrUnavailable with a message that says what
// could not be done.
func sourceRuntimeErr(err error) error {
	return unavailable(err, "check the source's plugin and config")
}

// SecretKeys returns the keys the plugin of type t marks secret (type PASSWORD in its config definition).
func (a *Adapter) SecretKeys(ctx context.Context, t source.Type) ([]string, error) {
	plugin, err := a.sourcePlugin(ctx, t)
	if err != nil {
		return nil, err
	}
	keys, err := a.secretKeys(ctx, plugin)
	if err != nil {
		return nil, sourceRuntimeErr(err)
	}
	return keys, nil
}

// Validate checks the source's connector config (its config with the keys the adapter sets) with the plugin's
// validate endpoint. Every problem is named in one source.ErrInvalidConfig (see configError).
func (a *Adapter) Validate(ctx context.Context, b *bus.Bus, s *source.Source) error {
	plugin, err := a.sourcePlugin(ctx, s.Type())
	if err != nil {
		return err
	}
	cfg, err := a.sourceConfig(ctx, b, s)
	if err != nil {
		return err
	}
	// Its secrets are sealed for its connector, which the config names: the worker opens them only for it.
	cfg["name"] = SourceName(b.AccountID(), b.Name(), s.Name())
	problems, err := a.validateConfig(ctx, plugin, cfg)
	if err != nil {
		return sourceRuntimeErr(err)
	}
	if len(problems) == 0 {
		return nil
	}
	return configError(source.ErrInvalidConfig, problems)
}

// errRawStream refuses an eventbus source that reads the installation's NATS by stream or subject rather than by
// a bus of its account.
var errRawStream = errors.New("an eventbus source of the installation's NATS must name a bus of its account (config.bus)")

// sourceConfig is the connector config of a source: its config (secret values sealed, as stored) and the keys
// the adapter sets: the plugin, one task, the bus's input subject and stream as output, and for webhook sources
// the intake subject the http-source plugin reads.
func (a *Adapter) sourceConfig(ctx context.Context, b *bus.Bus, s *source.Source) (map[string]string, error) {
	cfg, err := s.OpenedConfig(a.opener())
	if err != nil {
		return nil, err
	}
	if s.Type() == source.EventBus && cfg[source.KeyNATSURL] == "" && cfg[source.KeyBus] == "" {
		return nil, errRawStream
	}
	if name := cfg[source.KeyBus]; s.Type() == source.EventBus && name != "" {
		// Another bus of the account, by name: its stream and the subject of what is put on it.
		if name == b.Name() {
			return nil, domain.Invalid("config."+source.KeyBus, "config.bus %q is the source's own bus: its events would come back to it", name)
		}
		other, err := a.cfg.Buses.Get(ctx, b.AccountID(), name)
		if errors.Is(err, bus.ErrNotFound) {
			return nil, domain.Invalid("config."+source.KeyBus, "config.bus: bus %q does not exist", name)
		}
		if err != nil {
			return nil, err
		}
		delete(cfg, source.KeyBus)
		cfg[keyIntakeStream] = a.cfg.Physical.BusStream(other.ID())
		cfg[keyIntakeSubject] = a.cfg.Physical.BusIn(other.ID())
	}
	maps.Copy(cfg, map[string]string{
		rpc.ConfigConnectorClass: s.Type().Plugin(),
		rpc.ConfigTasksMax:       sourceTasksMax,
		keyOutputSubject:         a.cfg.Physical.BusIn(b.ID()),
		keyOutputStream:          a.cfg.Physical.BusStream(b.ID()),
		keySourceID:              s.ID(),
		// A record the store's invariant refuses (an MQTT message whose CloudEvent has a NUL in its type, say) goes
		// to the account's dead letters with its reason, never dropped and never failing the source.
		"errors.tolerance":                  "all",
		"errors.deadletterqueue.topic.name": a.cfg.Physical.DLQSubject(b.AccountID()),
	})
	if s.Type() == source.HTTP {
		sp, ok := a.cfg.Physical.(SourcePhysical)
		if !ok {
			return nil, fmt.Errorf("the adapter's physical names have no intake subject for webhook sources")
		}
		cfg[keyIntakeStream] = a.cfg.Physical.BusStream(b.ID())
		cfg[keyIntakeSubject] = sp.SourceSubject(b.ID(), s.ID())
		cfg[keyIntakeStart] = intakeStartPolicy
	}
	return a.sealFor(SourceName(b.AccountID(), b.Name(), s.Name()), cfg, s.SecretKeys())
}

// desiredSources returns the source connectors of a bus as the declared state wants them: an enabled source's
// connector runs, a disabled one's exists STOPPED (keeping its offsets). Nil Config.Sources declares none.
func (a *Adapter) desiredSources(ctx context.Context, b *bus.Bus, actual map[string]rpc.ConnectorExpanded) (map[string]Desired, error) {
	out := map[string]Desired{}
	if a.cfg.Sources == nil {
		return out, nil
	}
	sources, err := a.cfg.Sources.ListByBus(ctx, b.ID())
	if err != nil {
		return nil, err
	}
	for _, s := range sources {
		name := SourceName(b.AccountID(), b.Name(), s.Name())
		state := "" // running
		if !s.Enabled() {
			state = rpc.StateStopped
		}
		cfg, err := a.sourceConfig(ctx, b, s)
		if errors.Is(err, errRawStream) {
			// Declared by a version that let a source name any stream of the installation's NATS (another account's
			// bus, the runtime's KV): not run, and its connector removed, until it names a bus of the account.
			a.cfg.Logger.Warn("an eventbus source names a stream of this installation instead of a bus of its account; "+
				"it does not run until config.bus replaces config.source.stream", "bus", b.ID(), "source", s.ID())
			continue
		}
		if err != nil {
			// Its connector stays as it is (a bus it reads was deleted since, say); the reconciler retries.
			a.cfg.Logger.Warn("a source cannot be applied", "bus", b.ID(), "source", s.ID(), "err", err)
			if c, ok := actual[name]; ok && c.Info != nil {
				out[name] = Desired{Config: c.Info.Config, State: state}
			}
			continue
		}
		out[name] = Desired{Config: cfg, State: state}
	}
	return out, nil
}

// sourceCounters is the domain's form of a source task's counters (nil for nil).
func sourceCounters(n *rpc.TaskCounters) *source.Counters {
	if n == nil {
		return nil
	}
	return &source.Counters{Read: n.Read, Written: n.Written, Failed: n.Failed, Dropped: n.Dropped, Filtered: n.Filtered}
}

// SourceStatus reads the state of the source's connector; a connector the runtime does not know is PENDING.
func (a *Adapter) SourceStatus(ctx context.Context, b *bus.Bus, s *source.Source) (*source.Status, error) {
	st, lastError, err := a.connectorStatus(ctx, SourceName(b.AccountID(), b.Name(), s.Name()))
	if err != nil {
		return nil, err
	}
	if st == nil {
		return &source.Status{State: source.StatePending}, nil
	}
	return sourceStatusOf(st, lastError), nil
}

// sourceStatusOf is the domain's form of a source connector's status.
func sourceStatusOf(st *rpc.ConnectorStatus, lastError string) *source.Status {
	out := &source.Status{State: st.Connector.State, LastError: lastError}
	for _, ts := range st.Tasks {
		out.Tasks = append(out.Tasks, source.TaskStatus{ID: ts.ID, State: ts.State, WorkerID: ts.WorkerID,
			Health: factsOf(ts.Health), Counters: sourceCounters(ts.Counters), Totals: sourceCounters(ts.Totals)})
	}
	return out
}
