package herder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
)

// ErrPluginNotFound is returned for a plugin the registry does not have; REST answers 404.
var ErrPluginNotFound = errors.New("plugin not found")

// Restart restarts a connector, as POST /connectors/{c}/restart does. Without onlyFailed, or when the connector
// is FAILED, it restarts the connector whole: its consumer is ensured again and every task restarts with the
// stored config. With onlyFailed and includeTasks it restarts the FAILED tasks only; with onlyFailed alone a
// connector that is not FAILED is left as it is. Restarts are requests in the connector's record that the tasks'
// owners honour, wherever they run; it answers once they did, with the status then. Errors: ErrNotFound,
// ErrClosed, *StartError.
func (h *Herder) Restart(ctx context.Context, name string, includeTasks, onlyFailed bool) (rpc.ConnectorStatus, error) {
	if err := h.ready(); err != nil {
		return rpc.ConnectorStatus{}, err
	}
	st, err := h.Status(name)
	if err != nil {
		return rpc.ConnectorStatus{}, err
	}
	var which []int
	switch {
	case st.Connector.State == rpc.StateFailed || !onlyFailed:
		for _, t := range st.Tasks {
			which = append(which, t.ID)
		}
	case includeTasks:
		for _, t := range st.Tasks {
			if t.State == rpc.StateFailed {
				which = append(which, t.ID)
			}
		}
	default:
		return st, nil
	}
	err = h.requestRestarts(ctx, name, which, true)
	st, _ = h.Status(name)
	return st, err
}

// RestartTask restarts task t of a running connector with the stored config, wherever it runs. Errors:
// ErrNotFound (connector or task), ErrClosed, *StartError.
func (h *Herder) RestartTask(ctx context.Context, name string, task int) error {
	if err := h.ready(); err != nil {
		return err
	}
	e, err := h.get(name)
	if err != nil {
		return err
	}
	if e.rec.TargetState != rpc.StateRunning || task < 0 || task >= tasksOf(e.rec.Config) {
		return fmt.Errorf("task %d of connector %s: %w", task, name, ErrNotFound)
	}
	return h.requestRestarts(ctx, name, []int{task}, false)
}

// requestRestarts stores one more restart request for each task of which, and waits until their owners honoured
// them; always also re-applies a record whose tasks need no restart (the connector-level work).
func (h *Herder) requestRestarts(ctx context.Context, name string, which []int, always bool) error {
	ctx, cancel := h.opContext(ctx)
	defer cancel()
	defer h.lockOp(name)()
	return h.change(ctx, name, func(old record) (record, map[int]uint64, error) {
		if len(which) == 0 && !always {
			return old, nil, errUnchanged
		}
		rec := old
		rec.Restarts = maps.Clone(old.Restarts)
		if rec.Restarts == nil {
			rec.Restarts = map[int]uint64{}
		}
		if old.TargetState == rpc.StateRunning {
			for _, i := range which {
				rec.Restarts[i]++
			}
		}
		return rec, rec.Restarts, nil
	}, nil)
}

// Offsets returns the offsets of a connector: for a source, the offsets stored for its partitions; for a
// JetStream-fed sink, its subject and the stream sequence of its durable consumer's ack floor (none when the
// consumer does not exist). Errors: ErrNotFound, JetStream errors.
func (h *Herder) Offsets(ctx context.Context, name string) (rpc.ConnectorOffsets, error) {
	e, err := h.get(name)
	if err != nil {
		return rpc.ConnectorOffsets{}, err
	}
	cfg, kind := e.rec.Config, connector.Type(h.typeOf(e.rec.Config))
	out := rpc.ConnectorOffsets{Offsets: []rpc.ConnectorOffset{}}
	if kind == connector.TypeSource {
		offsets, err := delivery.LoadOffsets(ctx, h.offsets, name)
		if err != nil {
			return out, err
		}
		for _, o := range offsets.List() {
			out.Offsets = append(out.Offsets, rpc.ConnectorOffset{Partition: o.Partition, Offset: o.Offset})
		}
		return out, nil
	}
	stream, durable := cfg[connector.KeyStream], cfg[connector.KeyDurable]
	if stream == "" || durable == "" {
		return out, nil
	}
	cons, err := h.cfg.JetStream.Consumer(ctx, stream, durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("reading consumer %s of stream %s: %w", durable, stream, err)
	}
	info := cons.CachedInfo()
	out.Offsets = append(out.Offsets, rpc.ConnectorOffset{
		Partition: map[string]any{rpc.OffsetKeySubject: cfg[connector.KeyTopics]},
		Offset:    map[string]any{rpc.OffsetKeySequence: info.AckFloor.Stream},
	})
	return out, nil
}

// AlterOffsets changes the offsets of a STOPPED connector. A source's offsets are stored as given (a null offset
// removes the partition's, so the source starts it afresh). A sink's durable consumer is re-created to deliver
// from the stream sequence after the given offset (a null offset: from the start of the subject); the offsets
// must name the connector's subject. Errors: ErrNotFound, ErrInvalid (not STOPPED, bad offsets), ErrClosed.
func (h *Herder) AlterOffsets(ctx context.Context, name string, offsets rpc.ConnectorOffsets) (string, error) {
	return h.changeOffsets(ctx, name, &offsets)
}

// ResetOffsets removes a STOPPED source's offsets, or re-creates a STOPPED sink's durable consumer at the start
// of its subject. Errors as AlterOffsets.
func (h *Herder) ResetOffsets(ctx context.Context, name string) (string, error) {
	return h.changeOffsets(ctx, name, nil)
}

const (
	offsetsAltered = "The offsets for this connector have been altered successfully"
	offsetsReset   = "The offsets for this connector have been reset successfully"
)

// changeOffsets alters (offsets given) or resets (nil) the offsets of a STOPPED connector.
func (h *Herder) changeOffsets(ctx context.Context, name string, offsets *rpc.ConnectorOffsets) (string, error) {
	if err := h.ready(); err != nil {
		return "", err
	}
	ctx, cancel := h.opContext(ctx)
	defer cancel()
	defer h.lockOp(name)()
	e, err := h.get(name)
	if err != nil {
		return "", err
	}
	rec, kind := e.rec, connector.Type(h.typeOf(e.rec.Config))
	if rec.TargetState != rpc.StateStopped || !h.stopped(ctx, name) {
		return "", fmt.Errorf("%w: connectors must be in the STOPPED state before their offsets can be modified; "+
			"stop connector %s with PUT /connectors/%s/stop", ErrInvalid, name, name)
	}
	if kind == connector.TypeSource {
		return h.changeSourceOffsets(ctx, name, offsets)
	}
	var off *rpc.ConnectorOffset
	if offsets != nil {
		if len(offsets.Offsets) != 1 {
			return "", fmt.Errorf("%w: offsets must list exactly one partition, the connector's subject; got %d",
				ErrInvalid, len(offsets.Offsets))
		}
		off = &offsets.Offsets[0]
	}
	subject := rec.Config[connector.KeyTopics]
	var seq uint64
	if off != nil {
		if _, ok := off.Partition[kafkaTopic]; ok {
			ours, err := fromKafkaSinkOffset(*off)
			if err != nil {
				return "", err
			}
			off = &ours
		}
		if got, _ := off.Partition[rpc.OffsetKeySubject].(string); got != subject || len(off.Partition) != 1 {
			return "", fmt.Errorf("%w: unknown partition %s; the connector's only partition is {\"subject\": %q} "+
				"(in Kafka Connect's form {\"kafka_topic\": %q, \"kafka_partition\": 0})",
				ErrInvalid, jsonText(off.Partition), subject, subject)
		}
		if off.Offset != nil {
			if seq, err = sequenceOf(off.Offset); err != nil {
				return "", err
			}
		}
	}
	pr, err := h.prepare(rec.Config, connector.Env{Connector: name})
	if err != nil {
		return "", err
	}
	cc := pr.dc.ConsumerConfig(delivery.AckWait)
	cc.DeliverPolicy = jetstream.DeliverAllPolicy
	if off != nil && off.Offset != nil {
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, seq+1
	}
	if err := delivery.DeleteConsumer(ctx, h.cfg.JetStream, pr.dc.Stream, pr.dc.Durable); err != nil {
		return "", err
	}
	if _, err := h.cfg.JetStream.CreateConsumer(ctx, pr.dc.Stream, cc); err != nil {
		return "", fmt.Errorf("creating consumer %s of stream %s: %w", pr.dc.Durable, pr.dc.Stream, err)
	}
	if off == nil || off.Offset == nil {
		return offsetsReset, nil
	}
	return offsetsAltered, nil
}

// sequenceOf reads {"sequence": N}, N a whole number ≥ 0.
// Kafka Connect's keys of a sink connector's offsets: a topic partition, and the offset of the next record to read.
const (
	kafkaTopic     = "kafka_topic"
	kafkaPartition = "kafka_partition"
	kafkaOffset    = "kafka_offset"
)

// fromKafkaSinkOffset reads an offset written with Kafka Connect's sink keys, {"kafka_topic": T, "kafka_partition":
// 0} and {"kafka_offset": N}, as ours: the subject T (one partition, 0) and {"sequence": N}. A record's Kafka offset
// is its stream sequence minus one, so the next offset to read, N, is the last sequence read. A null offset stays
// null (the partition is reset).
func fromKafkaSinkOffset(off rpc.ConnectorOffset) (rpc.ConnectorOffset, error) {
	topic, ok := off.Partition[kafkaTopic].(string)
	partition, perr := rpc.SequenceOf(off.Partition[kafkaPartition])
	if !ok || perr != nil || partition != 0 || len(off.Partition) != 2 {
		return off, fmt.Errorf("%w: partition %s must be {\"kafka_topic\": S, \"kafka_partition\": 0} with S the subject "+
			"the connector reads (a subject has one partition, 0), or ours, {\"subject\": S}", ErrInvalid, jsonText(off.Partition))
	}
	out := rpc.ConnectorOffset{Partition: map[string]any{rpc.OffsetKeySubject: topic}}
	if off.Offset != nil {
		n, err := rpc.SequenceOf(off.Offset[kafkaOffset])
		if err != nil || len(off.Offset) != 1 {
			return off, fmt.Errorf("%w: offset %s must be {\"kafka_offset\": N} with N the next record to read "+
				"(a whole number ≥ 0), or ours, {\"sequence\": N} with N the last stream sequence read", ErrInvalid, jsonText(off.Offset))
		}
		out.Offset = map[string]any{rpc.OffsetKeySequence: n}
	}
	return out, nil
}

func sequenceOf(offset map[string]any) (uint64, error) {
	n, err := rpc.SequenceOf(offset[rpc.OffsetKeySequence])
	if err != nil || len(offset) != 1 {
		return 0, fmt.Errorf("%w: offset %s must be {\"sequence\": N} with N a stream sequence (a whole number ≥ 0)",
			ErrInvalid, jsonText(offset))
	}
	return n, nil
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func (h *Herder) plugin(name string) (connector.Plugin, error) {
	p, ok := h.cfg.Registry.Lookup(name)
	if !ok {
		return connector.Plugin{}, fmt.Errorf("%w: %s", ErrPluginNotFound, name)
	}
	return p, nil
}

// PluginConfig describes the config keys of a plugin (its full spec) as Kafka Connect does. Errors:
// ErrPluginNotFound.
func (h *Herder) PluginConfig(name string) ([]rpc.ConfigKeyInfo, error) {
	p, err := h.plugin(name)
	if err != nil {
		return nil, err
	}
	return p.FullSpec().ConfigKeys(), nil
}

// PluginSchema renders the full spec of a plugin as a JSON Schema. Errors: ErrPluginNotFound.
func (h *Herder) PluginSchema(name string) (map[string]any, error) {
	p, err := h.plugin(name)
	if err != nil {
		return nil, err
	}
	s := p.FullSpec().JSONSchema(p.Name, p.Doc)
	s["$id"] = "urn:eventbridge:connector-plugin:" + p.Name
	return s, nil
}

// ValidateConfig validates cfg for plugin name and answers every problem as data, as Kafka Connect does: one
// entry per key of the plugin's full spec, then one per other key given or named by a problem. A config without
// connector.class is validated as if it named the plugin. Errors: ErrPluginNotFound, ErrInvalid (connector.class
// names another plugin).
func (h *Herder) ValidateConfig(name string, cfg map[string]string) (rpc.ConfigInfos, error) {
	p, err := h.plugin(name)
	if err != nil {
		return rpc.ConfigInfos{}, err
	}
	cfg = maps.Clone(cfg)
	if cfg == nil {
		cfg = map[string]string{}
	}
	if class, ok := cfg[connector.KeyClass]; ok && class != p.Name {
		return rpc.ConfigInfos{}, fmt.Errorf("%w: included connector type %q does not match request type %q",
			ErrInvalid, class, p.Name)
	}
	cfg[connector.KeyClass] = p.Name
	env := connector.Env{JetStream: h.cfg.JetStream, Names: h.cfg.Names, Egress: h.cfg.Egress}
	// Encrypted secrets are validated as their plaintext; no answer shows a secret value, even in a message.
	plain, secrets, errs := h.open(cfg["name"], cfg)
	if len(errs) == 0 {
		_, errs = h.cfg.Registry.Validate(plain, env)
		errs, _ = redact(errs, secrets).(connector.FieldErrors)
	}
	secret := map[string]bool{}
	for _, k := range h.secretKeys(cfg) {
		secret[k] = true
	}
	byKey := map[string][]string{}
	for _, e := range errs {
		byKey[e.Key] = append(byKey[e.Key], e.Message)
	}
	out := rpc.ConfigInfos{Name: p.Name, ErrorCount: len(errs), Groups: []string{}, Configs: []rpc.ConfigInfo{}}
	seen := map[string]bool{}
	add := func(def rpc.ConfigKeyInfo, f connector.Field) {
		seen[def.Name] = true
		v := rpc.ConfigValueInfo{Name: def.Name, RecommendedValues: f.RecommendedValues(), Visible: true,
			Errors: append([]string{}, byKey[def.Name]...)}
		if s, ok := cfg[def.Name]; ok {
			if f.Secret || secret[def.Name] {
				s = hidden
			}
			v.Value = &s
		} else if def.DefaultValue != nil {
			d := *def.DefaultValue
			v.Value = &d
		}
		out.Configs = append(out.Configs, rpc.ConfigInfo{Definition: def, Value: v})
	}
	spec := p.FullSpec()
	for i, f := range spec {
		add(f.ConfigKey(i+1), f)
	}
	var extra []string
	for k := range cfg {
		if !seen[k] {
			extra = append(extra, k)
		}
	}
	for k := range byKey {
		if !seen[k] && !slices.Contains(extra, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		f := connector.Field{Name: k, Type: connector.TypeString}
		add(f.ConfigKey(len(out.Configs)+1), f)
	}
	return out, nil
}

// stopped reports whether no task of a connector holds a lease any more.
func (h *Herder) stopped(ctx context.Context, name string) bool {
	holders, err := h.leases.Holders(ctx)
	if err != nil {
		return false
	}
	for id := range holders {
		if id.Connector == name {
			return false
		}
	}
	return true
}

// ClusterInfo lists the live workers.
func (h *Herder) ClusterInfo() rpc.ClusterInfo {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := rpc.ClusterInfo{ClusterID: h.cfg.Names.Cluster, Workers: []rpc.WorkerInfo{}}
	for _, m := range h.live {
		out.Workers = append(out.Workers, rpc.WorkerInfo{WorkerID: m.ID, Version: m.Version, URL: m.URL,
			Started: m.Started, LastHeartbeat: m.LastHeartbeat})
	}
	return out
}

// AllocatedConnectors returns the configs of the connectors this worker runs tasks of, by name.
func (h *Herder) AllocatedConnectors() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, id := range h.localTasks() {
		if e, err := h.get(id.Connector); err == nil {
			out[id.Connector] = maps.Clone(e.rec.Config)
		}
	}
	return out
}

// AllocatedTasks returns the tasks this worker runs, sorted by connector and task.
func (h *Herder) AllocatedTasks() []rpc.AllocatedTask {
	out := []rpc.AllocatedTask{}
	for _, id := range h.localTasks() {
		st, ok := h.localStatus(id)
		e, err := h.get(id.Connector)
		if !ok || err != nil {
			continue
		}
		out = append(out, rpc.AllocatedTask{ID: id, State: st.State, Config: maps.Clone(e.rec.Config)})
	}
	return out
}

// Local is the view of this worker's own tasks, for its metrics.
func (h *Herder) Local() LocalView { return LocalView{h} }

// LocalView gives the connectors this worker runs tasks of, with those tasks only.
type LocalView struct{ h *Herder }

// Connectors returns the connectors this worker runs tasks of, sorted.
func (v LocalView) Connectors() []string {
	var out []string
	for _, id := range v.h.localTasks() {
		if len(out) == 0 || out[len(out)-1] != id.Connector {
			out = append(out, id.Connector)
		}
	}
	return out
}

// Status returns the connector's status with this worker's tasks only, with their live counters.
func (v LocalView) Status(name string) (rpc.ConnectorStatus, error) {
	e, err := v.h.get(name)
	if err != nil {
		return rpc.ConnectorStatus{}, err
	}
	st := rpc.ConnectorStatus{Name: name, Type: v.h.typeOf(e.rec.Config), Tasks: []rpc.TaskState{},
		Connector: rpc.ConnectorState{State: e.rec.TargetState, WorkerID: v.h.cfg.WorkerID}}
	for _, id := range v.h.localTasks() {
		if id.Connector != name {
			continue
		}
		if ts, ok := v.h.localStatus(id); ok {
			st.Tasks = append(st.Tasks, ts)
		}
	}
	return st, nil
}
