package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/rpc"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
)

// Reclaim takes over a live lease of task that names this worker: one left by this worker's previous run (a
// restart under the same id within the lease's TTL), so that the restarted worker need not wait for it to
// expire. It is a compare-and-set update at the revision read, so it fails when the lease changed meanwhile.
// Errors: ErrLeaseHeld when the lease is another worker's (or gone: Acquire it), or the request failed. Worker
// ids must be unique among running workers: two running workers with one id would reclaim each other's leases.
func (l *Leases) Reclaim(ctx context.Context, task rpc.TaskID) (*Lease, error) {
	key := LeaseKey(task)
	e, err := l.kv.Get(ctx, key)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil, fmt.Errorf("cluster: reclaiming %s: %w", key, ErrLeaseHeld)
		}
		return nil, fmt.Errorf("cluster: reclaiming %s: %w", key, err)
	}
	var v leaseValue
	if json.Unmarshal(e.Value(), &v) != nil || v.Worker != l.cfg.WorkerID {
		return nil, fmt.Errorf("cluster: reclaiming %s: %w", key, ErrLeaseHeld)
	}
	sent := time.Now()
	rev, err := l.kv.Update(ctx, key, l.encode(sent, sent), e.Revision())
	if err != nil {
		if ebjs.IsRevisionConflict(err) {
			return nil, fmt.Errorf("cluster: reclaiming %s: %w", key, ErrLeaseHeld)
		}
		return nil, fmt.Errorf("cluster: reclaiming %s: %w", key, err)
	}
	return &Lease{Task: task, acquired: sent, revision: rev, deadline: sent.Add(l.cfg.Local)}, nil
}
