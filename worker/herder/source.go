package herder

import (
	"context"
	"fmt"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
)

// startSourceTask starts a source task: its source reads from the offsets stored for the connector and its
// records are stored on the connector's output subject.
func (h *Herder) startSourceTask(ctx context.Context, name string, pr prepared, env connector.Env,
	transforms []connector.NamedTransform) (runner, error) {
	offsets, err := delivery.LoadOffsets(ctx, h.offsets, name)
	if err != nil {
		return nil, fmt.Errorf("starting task %d: %w", env.Task, err)
	}
	env.Offsets = offsets
	src, err := pr.plugin.NewSource(pr.values, env)
	var t *delivery.SourceTask
	if err == nil {
		t, err = delivery.StartSource(ctx, delivery.SourceTaskConfig{
			Source: src, Transforms: transforms, JetStream: h.cfg.JetStream,
			Subject: pr.values.String(connector.KeyOutputSubject), Stream: pr.values.String(connector.KeyOutputStream),
			Tolerance: pr.values.String(connector.KeyErrorsTolerance), DLQSubject: pr.values.String(connector.KeyDLQTopic),
			Connector: name, Offsets: offsets, Logger: env.Log(), Used: h.topicUsed(name), Failed: h.failedFunc(name, env.Task),
			Redact: h.redactor(pr.cfg), Tracer: h.cfg.Tracer,
		})
	}
	if err != nil {
		return nil, fmt.Errorf("starting task %d: %w", env.Task, h.redact(err, pr.cfg))
	}
	return t, nil
}

// changeSourceOffsets stores the given offsets of a stopped source (a null offset removes its partition's), or
// removes them all (nil).
func (h *Herder) changeSourceOffsets(ctx context.Context, name string, offsets *rpc.ConnectorOffsets) (string, error) {
	if offsets == nil {
		if err := delivery.DeleteOffsets(ctx, h.offsets, name); err != nil {
			return "", err
		}
		return offsetsReset, nil
	}
	for i, o := range offsets.Offsets {
		if len(o.Partition) == 0 {
			return "", fmt.Errorf("%w: offsets[%d]: the partition is required (a JSON object)", ErrInvalid, i)
		}
	}
	stored, err := delivery.LoadOffsets(ctx, h.offsets, name)
	if err != nil {
		return "", err
	}
	for _, o := range offsets.Offsets {
		if o.Offset == nil {
			err = stored.Delete(ctx, o.Partition)
		} else {
			err = stored.Put(ctx, o.Partition, o.Offset)
		}
		if err != nil {
			return "", err
		}
	}
	return offsetsAltered, nil
}
