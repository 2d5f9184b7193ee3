package connectortest

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/egress"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// SourcePeer is the external system a source reads.
type SourcePeer interface {
	// Config returns the plugin keys that point a source at the peer.
	Config() map[string]string
	// Emit makes the running peer hold one record per id, in order, for the source to read; each becomes a
	// CloudEvent with that id.
	Emit(t *testing.T, ids ...string)
	// Stop stops the peer; reads fail until Start.
	Stop()
	// Start starts the stopped peer again at the same address, with what it held.
	Start()
}

// SourceSuite configures the suite for one source plugin: run through the real runtime (a source task storing
// on a bus stream of an embedded NATS server, offsets in its KV bucket), a source delivers every record once,
// commits a record (and stores its offset) only after the bus stored it, reconnects after the peer restarts,
// and a new task resumes after the last stored record.
type SourceSuite struct {
	Plugin connector.Plugin
	// NewPeer starts a peer for one test; env is the runtime's NATS server (a peer may use it or run its own).
	// The peer stops when the test ends.
	NewPeer func(t *testing.T, env *jetstreamtest.Env) SourcePeer
	// Egress is passed to the source: a peer that is not the runtime's NATS listens on loopback, so it must let
	// the peer through (AllowPrivate, or an Allow entry for the peer's address).
	Egress egress.Config
	// Timeout bounds each wait of the suite (default 20s).
	Timeout time.Duration
}

const (
	outStream  = "SUITE_OUT"
	outSubject = "suite.bus.in"
)

// RunSourceSuite runs the suite as subtests of t.
func RunSourceSuite(t *testing.T, s SourceSuite) {
	if s.Timeout == 0 {
		s.Timeout = 20 * time.Second
	}
	t.Run("DeliversEverythingOnce", func(t *testing.T) {
		t.Parallel()
		r := s.start(t, true)
		ids := numbered("every", 100)
		r.peer.Emit(t, ids...)
		require.Eventually(t, func() bool { return len(r.stored(t)) >= len(ids) }, s.Timeout, tick,
			"the bus stored every record")
		assert.Equal(t, ids, r.stored(t), "every record stored once, in the peer's order")
		require.Eventually(t, func() bool { return containsAll(r.committed(), ids) }, s.Timeout, tick,
			"every record committed")
	})
	t.Run("CommitsOnlyAfterStored", func(t *testing.T) {
		t.Parallel()
		r := s.start(t, false) // the bus stream does not exist yet: storing fails
		r.peer.Emit(t, "held")
		require.Eventually(t, func() bool { return r.task.Counters().Retried >= 2 }, s.Timeout, tick,
			"the task read the record and failed to store it, twice")
		assert.Empty(t, r.committed(), "nothing committed while the bus has not stored it")
		assert.Empty(t, r.storedOffsets(t), "no offset stored while the bus has not stored the record")
		r.env.Stream(t, outStream, outSubject)
		require.Eventually(t, func() bool { return slices.Contains(r.stored(t), "held") }, s.Timeout, tick,
			"stored once the bus exists")
		require.Eventually(t, func() bool { return slices.Contains(r.committed(), "held") }, s.Timeout, tick,
			"committed once stored")
	})
	t.Run("ReconnectsAfterPeerRestart", func(t *testing.T) {
		t.Parallel()
		r := s.start(t, true)
		r.peer.Emit(t, "before")
		require.Eventually(t, func() bool { return slices.Contains(r.stored(t), "before") }, s.Timeout, tick)
		r.peer.Stop()
		r.peer.Start()
		r.peer.Emit(t, "after")
		require.Eventually(t, func() bool { return slices.Contains(r.stored(t), "after") }, s.Timeout, tick,
			"the source read again after the peer restarted")
		assert.Equal(t, []string{"before", "after"}, r.stored(t))
	})
	t.Run("ResumesAfterItsLastRecord", func(t *testing.T) {
		t.Parallel()
		r := s.start(t, true)
		first := numbered("first", 10)
		r.peer.Emit(t, first...)
		require.Eventually(t, func() bool { return containsAll(r.committed(), first) }, s.Timeout, tick)
		require.NoError(t, r.task.Stop(context.Background()))
		second := numbered("second", 10)
		r.peer.Emit(t, second...)
		r.startTask(t)
		require.Eventually(t, func() bool { return len(r.stored(t)) >= 20 }, s.Timeout, tick)
		assert.Equal(t, append(first, second...), r.stored(t), "every record stored once")
		assert.Equal(t, uint64(len(second)), r.task.Counters().Read,
			"the new task read only the records after the last one stored")
	})
}

func numbered(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = prefix + "-" + strconv.Itoa(i)
	}
	return ids
}

// sourceRun is one source task of the suite and what it observes.
type sourceRun struct {
	s      SourceSuite
	env    *jetstreamtest.Env
	peer   SourcePeer
	kv     jetstream.KeyValue
	values connector.Values
	task   *delivery.SourceTask

	mu   sync.Mutex
	done []string // ids committed, in order
}

// recorder notes the records the runtime commits.
type recorder struct {
	connector.Source
	r *sourceRun
}

func (c recorder) Commit(ctx context.Context, records []connector.SourceRecord) error {
	c.r.mu.Lock()
	for _, rec := range records {
		if rec.Event != nil { // a record without an event moves its offset only
			c.r.done = append(c.r.done, rec.Event.ID())
		}
	}
	c.r.mu.Unlock()
	return c.Source.Commit(ctx, records)
}

// start runs the plugin's source on a fresh server, storing on a bus stream that exists when output says so.
func (s SourceSuite) start(t *testing.T, output bool) *sourceRun {
	t.Helper()
	env := jetstreamtest.Start(t)
	if output {
		env.Stream(t, outStream, outSubject)
	}
	kv, err := env.JS.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: "suite_offsets"})
	require.NoError(t, err)
	peer := s.NewPeer(t, env)
	cfg := map[string]string{
		connector.KeyClass:         s.Plugin.Name,
		connector.KeyOutputSubject: outSubject,
		connector.KeyOutputStream:  outStream,
	}
	maps.Copy(cfg, peer.Config())
	spec := s.Plugin.FullSpec()
	require.Empty(t, spec.Validate(cfg), "the suite's config is valid for the plugin")
	r := &sourceRun{s: s, env: env, peer: peer, kv: kv, values: spec.Values(cfg)}
	r.startTask(t)
	t.Cleanup(func() { _ = r.task.Stop(context.Background()) })
	return r
}

// startTask starts a task with the offsets stored so far.
func (r *sourceRun) startTask(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	offsets, err := delivery.LoadOffsets(ctx, r.kv, "suite")
	require.NoError(t, err)
	env := connector.Env{JetStream: r.env.JS, Egress: r.s.Egress, Connector: "suite", Tasks: 1, Offsets: offsets}
	src, err := r.s.Plugin.NewSource(r.values, env)
	require.NoError(t, err)
	task, err := delivery.StartSource(ctx, delivery.SourceTaskConfig{
		Source: recorder{Source: src, r: r}, JetStream: r.env.JS, Subject: outSubject, Stream: outStream,
		Tolerance: connector.ToleranceNone, Offsets: offsets,
	})
	require.NoError(t, err)
	r.task = task
}

// stored returns the ids of the records on the bus, in order.
func (r *sourceRun) stored(t *testing.T) []string {
	if _, err := r.env.JS.Stream(context.Background(), outStream); err != nil {
		return nil
	}
	var ids []string
	for _, m := range r.env.Messages(t, outStream, outSubject) {
		ids = append(ids, m.Event.ID())
	}
	return ids
}

func (r *sourceRun) committed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.done)
}

// storedOffsets reads the offsets in KV afresh.
func (r *sourceRun) storedOffsets(t *testing.T) []delivery.StoredOffset {
	o, err := delivery.LoadOffsets(context.Background(), r.kv, "suite")
	require.NoError(t, err)
	return o.List()
}
