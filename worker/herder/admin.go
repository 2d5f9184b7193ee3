package herder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
)

// ErrPluginNotFound is returned for a plugin the registry does not have; REST answers 404.
var ErrPluginNotFound = errors.New("plugin not found")

// Restart restarts a connector, as POST /connectors/{c}/restart does. Without includeTasks it restarts the
// connector: it stops its tasks and brings it back to its target state with the stored config (with onlyFailed,
// only when the connector is FAILED). With includeTasks it also restarts its tasks: every task, or with onlyFailed
// the FAILED ones only (a FAILED connector restarts whole). It answers once the restart ran, with the status
// then. Errors: ErrNotFound, ErrClosed, *StartError.
func (h *Herder) Restart(ctx context.Context, name string, includeTasks, onlyFailed bool) (rpc.ConnectorStatus, error) {
	ctx, cancel := h.opContext(ctx)
	defer cancel()
	c, err := h.lock(name)
	if err != nil {
		return rpc.ConnectorStatus{}, err
	}
	defer c.op.Unlock()
	h.mu.RLock()
	connFailed := c.state == rpc.StateFailed
	var failed []int
	for i, t := range c.tasks {
		if s, _ := t.State(); s == rpc.StateFailed {
			failed = append(failed, i)
		}
	}
	h.mu.RUnlock()
	switch {
	case connFailed || !onlyFailed:
		// The connector's runtime is its consumer and tasks: restarting it re-creates them.
		h.stopTasks(ctx, c)
		err = h.apply(ctx, c)
	case includeTasks:
		for _, i := range failed {
			if err = h.restartTaskLocked(ctx, c, i, false); err != nil {
				break
			}
		}
	}
	st, _ := h.Status(name)
	return st, err
}

// RestartTask stops task t of a running connector and starts it again with the stored config. Errors:
// ErrNotFound (connector or task), ErrClosed, *StartError.
func (h *Herder) RestartTask(ctx context.Context, name string, task int) error {
	ctx, cancel := h.opContext(ctx)
	defer cancel()
	c, err := h.lock(name)
	if err != nil {
		return err
	}
	defer c.op.Unlock()
	return h.restartTaskLocked(ctx, c, task, false)
}

// restartTaskLocked replaces task i; called with c.op held. A manual restart that cannot start the task fails
// the connector (its status says why); an automatic one (auto) leaves the task FAILED with the error noted and
// backs off further.
func (h *Herder) restartTaskLocked(ctx context.Context, c *conn, i int, auto bool) error {
	h.mu.RLock()
	running := c.state == rpc.StateRunning && i >= 0 && i < len(c.tasks)
	rec := c.rec
	var old runner
	if running {
		old = c.tasks[i]
	}
	h.mu.RUnlock()
	if !running {
		return fmt.Errorf("task %d of connector %s: %w", i, c.name, ErrNotFound)
	}
	if err := h.stopTask(ctx, old); err != nil {
		h.log.Warn("closing a task's sink or source", "connector", c.name, "task", i, "err", err)
	}
	pr, err := h.prepare(rec.Config, connector.Env{Connector: c.name})
	var t runner
	if err == nil {
		var cons jetstream.Consumer
		cons, err = h.ensureInput(ctx, pr)
		if err == nil {
			t, err = h.startTask(ctx, c.name, rec, pr, cons, i)
		}
	}
	if err != nil && auto {
		h.mu.Lock()
		if i < len(c.sup) {
			c.sup[i].lastErr, c.sup[i].nextAt = err.Error(), time.Time{}
		}
		h.mu.Unlock()
		return &StartError{Connector: c.name, Err: err}
	}
	if err != nil {
		// The connector would run without this task; it is FAILED so that /status says why.
		h.stopTasks(ctx, c)
		h.mu.Lock()
		c.state, c.trace, c.tasks, c.sup = rpc.StateFailed, err.Error(), nil, nil
		h.mu.Unlock()
		return &StartError{Connector: c.name, Err: err}
	}
	h.mu.Lock()
	c.tasks[i] = t
	if i < len(c.sup) {
		attempts := c.sup[i].attempts
		if !auto {
			attempts = 0
		}
		c.sup[i] = taskSup{startedAt: time.Now(), attempts: attempts}
	}
	h.mu.Unlock()
	return nil
}

// Offsets returns the offsets of a connector: for a source, the offsets stored for its partitions; for a
// JetStream-fed sink, its subject and the stream sequence of its durable consumer's ack floor (none when the
// consumer does not exist). Errors: ErrNotFound, JetStream errors.
func (h *Herder) Offsets(ctx context.Context, name string) (rpc.ConnectorOffsets, error) {
	h.mu.RLock()
	c, ok := h.conns[name]
	var cfg map[string]string
	var kind connector.Type
	if ok {
		cfg, kind = c.rec.Config, c.kind
	}
	h.mu.RUnlock()
	if !ok {
		return rpc.ConnectorOffsets{}, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
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
	ctx, cancel := h.opContext(ctx)
	defer cancel()
	c, err := h.lock(name)
	if err != nil {
		return "", err
	}
	defer c.op.Unlock()
	h.mu.RLock()
	rec, state, kind := c.rec, c.state, c.kind
	h.mu.RUnlock()
	if rec.TargetState != rpc.StateStopped || state != rpc.StateStopped {
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
		if got, _ := off.Partition[rpc.OffsetKeySubject].(string); got != subject || len(off.Partition) != 1 {
			return "", fmt.Errorf("%w: unknown partition %s; the connector's only partition is {\"subject\": %q}",
				ErrInvalid, jsonText(off.Partition), subject)
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
	cc := pr.dc.ConsumerConfig(pr.ackWait)
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
	env := connector.Env{JetStream: h.cfg.JetStream, Names: h.cfg.Names, AllowPrivateTargets: h.cfg.AllowPrivateTargets}
	// Encrypted secrets are validated as their plaintext; no answer shows a secret value, even in a message.
	plain, secrets, errs := h.open(cfg)
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

// ClusterInfo lists the live workers: this standalone worker.
func (h *Herder) ClusterInfo() rpc.ClusterInfo {
	return rpc.ClusterInfo{ClusterID: h.cfg.Names.Cluster,
		Workers: []rpc.WorkerInfo{{WorkerID: h.cfg.WorkerID, Version: Version}}}
}

// AllocatedConnectors returns the configs of the connectors this worker runs, by name.
func (h *Herder) AllocatedConnectors() map[string]map[string]string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make(map[string]map[string]string, len(h.conns))
	for name, c := range h.conns {
		out[name] = maps.Clone(c.rec.Config)
	}
	return out
}

// AllocatedTasks returns the tasks this worker runs, sorted by connector and task.
func (h *Herder) AllocatedTasks() []rpc.AllocatedTask {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := []rpc.AllocatedTask{}
	for _, name := range slices.Sorted(maps.Keys(h.conns)) {
		c := h.conns[name]
		for i, t := range c.tasks {
			state, _ := t.State()
			out = append(out, rpc.AllocatedTask{ID: rpc.TaskID{Connector: name, Task: i}, State: state,
				Config: maps.Clone(c.rec.Config)})
		}
	}
	return out
}
