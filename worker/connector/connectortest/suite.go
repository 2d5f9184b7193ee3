// Package connectortest is the behaviour suite every sink plugin passes: run through the real runtime (a durable
// consumer on an embedded NATS server, delivery tasks with retry), a sink delivers every record, a record is
// acked only after the peer accepted it, records wait and are retried while the peer is down, and the sink
// reconnects after the peer restarts.
//
// A plugin's test provides a Peer, the real system the sink talks to, run by the test; the peer may live on the
// suite's NATS server:
//
//	connectortest.RunSinkSuite(t, connectortest.SinkSuite{Plugin: httpsink.Plugin(), NewPeer: newHTTPPeer})
package connectortest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
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

// Peer is the external system a sink delivers to.
type Peer interface {
	// Config returns the plugin keys that point a sink at the peer.
	Config() map[string]string
	// Accepted returns the ids of the events the peer accepted, in order, duplicates included.
	Accepted() []string
	// Hold makes the peer keep every delivery waiting, unanswered, until release is called; held reports how many
	// deliveries wait.
	Hold() (held func() int, release func())
	// Stop stops the peer; deliveries fail until Start.
	Stop()
	// Start starts the stopped peer again at the same address.
	Start()
}

// EnvPeer is a Peer the sink reaches through the worker's environment rather than, or as well as, through plugin
// keys: a bus of the installation (Names), the worker's log (Logger).
type EnvPeer interface {
	Peer
	// Env returns env with what points the sink at the peer set. The suite calls it once per run, before it builds
	// the sinks, and builds every task's sink with the result.
	Env(env connector.Env) connector.Env
}

// SinkSuite configures the suite for one sink plugin.
type SinkSuite struct {
	Plugin connector.Plugin
	// NewPeer starts a peer for one test on the suite's server of that test (a peer that is not on NATS ignores
	// env); the peer stops when the test ends. It is called after the suite's stream exists, before any sink.
	NewPeer func(t *testing.T, env *jetstreamtest.Env) Peer
	// Egress is passed to the sink: peers of tests listen on loopback, so it must let them through
	// (AllowPrivate, or an Allow entry for the peer's address).
	Egress egress.Config
	// Timeout bounds each wait of the suite (default 20s).
	Timeout time.Duration
	// CannotFail, when not empty, says why the plugin's sink cannot fail (its Write returns nil whatever the peer
	// does), so that its peer cannot be stopped: the subtests that stop the peer (RetriesWhilePeerIsDown,
	// ReconnectsAfterPeerRestart) are skipped with this reason and the peer's Stop and Start are never called.
	// The other subtests run in full.
	CannotFail string
	// PeerStoresOnSuiteStream says the peer keeps what it accepts on the suite's own stream, on subjects other
	// than the suite's topic (the router stores its copies on the stream it reads). The stream's sequences then
	// interleave the suite's records with the peer's, so the n-th record is not at sequence n, and the server may
	// move the consumer's ack floor past trailing messages the consumer does not read. The suite then waits for
	// exactly n records on its topic and an ack floor at or past the sequence of the n-th, rather than for an ack
	// floor at sequence n; on a stream holding the suite's records only, both mean the same.
	PeerStoresOnSuiteStream bool
}

const (
	stream  = "SUITE"
	subject = "suite.in"
	durable = "suite"
	tick    = 10 * time.Millisecond
)

// RunSinkSuite runs the suite as subtests of t.
func RunSinkSuite(t *testing.T, s SinkSuite) {
	if s.Timeout == 0 {
		s.Timeout = 20 * time.Second
	}
	t.Run("DeliversEverything", func(t *testing.T) {
		t.Parallel()
		r := s.start(t, 2)
		ids := r.env.PublishN(t, subject, "every", 100)
		require.Eventually(t, func() bool { return containsAll(r.peer.Accepted(), ids) }, s.Timeout, tick,
			"the peer accepted every event")
		require.Eventually(t, func() bool { return r.settled(t, 100) }, s.Timeout, tick, "every record acked")
	})
	t.Run("AcksOnlyAfterAcceptance", func(t *testing.T) {
		t.Parallel()
		r := s.start(t, 1)
		held, release := r.peer.Hold()
		r.env.Publish(t, subject, jetstreamtest.Event("held", "suite.event", map[string]any{"n": 1}))
		require.Eventually(t, func() bool { return held() == 1 }, s.Timeout, tick, "the delivery reached the peer")
		info := r.env.ConsumerInfo(t, stream, durable)
		assert.Equal(t, uint64(0), info.AckFloor.Stream, "not acked while the peer has not answered")
		assert.Equal(t, 1, info.NumAckPending)
		assert.Empty(t, r.peer.Accepted())
		release()
		require.Eventually(t, func() bool { return slices.Contains(r.peer.Accepted(), "held") }, s.Timeout, tick)
		require.Eventually(t, func() bool { return r.settled(t, 1) }, s.Timeout, tick, "acked once accepted")
	})
	t.Run("RetriesWhilePeerIsDown", func(t *testing.T) {
		t.Parallel()
		s.skipIfCannotFail(t)
		r := s.start(t, 1)
		r.peer.Stop()
		r.env.Publish(t, subject, jetstreamtest.Event("waits", "suite.event", map[string]any{"n": 1}))
		require.Eventually(t, func() bool { return r.retried() >= 2 }, s.Timeout, tick, "the sink failed and retried")
		assert.Equal(t, uint64(0), r.env.ConsumerInfo(t, stream, durable).AckFloor.Stream, "a failed record is not acked")
		r.peer.Start()
		require.Eventually(t, func() bool { return slices.Contains(r.peer.Accepted(), "waits") }, s.Timeout, tick)
		require.Eventually(t, func() bool { return r.settled(t, 1) }, s.Timeout, tick)
	})
	t.Run("ReconnectsAfterPeerRestart", func(t *testing.T) {
		t.Parallel()
		s.skipIfCannotFail(t)
		r := s.start(t, 1)
		r.env.Publish(t, subject, jetstreamtest.Event("before", "suite.event", map[string]any{"n": 1}))
		require.Eventually(t, func() bool { return slices.Contains(r.peer.Accepted(), "before") }, s.Timeout, tick)
		r.peer.Stop()
		r.peer.Start()
		r.env.Publish(t, subject, jetstreamtest.Event("after", "suite.event", map[string]any{"n": 2}))
		// What the peer accepted before it stopped stays accepted: Accepted covers the whole test.
		require.Eventually(t, func() bool { return containsAll(r.peer.Accepted(), []string{"before", "after"}) },
			s.Timeout, tick)
		require.Eventually(t, func() bool { return r.settled(t, 2) }, s.Timeout, tick)
	})
}

func (s SinkSuite) skipIfCannotFail(t *testing.T) {
	if s.CannotFail != "" {
		t.Skipf("the %s sink cannot fail, so its peer cannot be stopped: %s", s.Plugin.Name, s.CannotFail)
	}
}

type run struct {
	env    *jetstreamtest.Env
	peer   Peer
	tasks  []*delivery.Task
	shared bool // SinkSuite.PeerStoresOnSuiteStream
}

// start runs the plugin's sink with tasks tasks on a fresh server, reading a fresh stream.
func (s SinkSuite) start(t *testing.T, tasks int) *run {
	t.Helper()
	env := jetstreamtest.Start(t)
	env.Stream(t, stream, "suite.>")
	peer := s.NewPeer(t, env)
	cfg := map[string]string{
		connector.KeyClass:             s.Plugin.Name,
		connector.KeyTasksMax:          strconv.Itoa(tasks),
		connector.KeyTopics:            subject,
		connector.KeyStream:            stream,
		connector.KeyDurable:           durable,
		connector.KeyRetryMaxAttempts:  "1000",
		connector.KeyRetryDelayInitial: "20",
		connector.KeyRetryDelayMax:     "100",
	}
	maps.Copy(cfg, peer.Config())
	spec := s.Plugin.FullSpec()
	require.Empty(t, spec.Validate(cfg), "the suite's config is valid for the plugin")
	values := spec.Values(cfg)
	dc := delivery.ParseConfig(values)
	env0 := connector.Env{JetStream: env.JS, Egress: s.Egress, Connector: "suite"}
	if ep, ok := peer.(EnvPeer); ok {
		env0 = ep.Env(env0)
	}

	cons, err := delivery.EnsureConsumer(context.Background(), env.JS, dc, delivery.AckWait)
	require.NoError(t, err)
	r := &run{env: env, peer: peer, shared: s.PeerStoresOnSuiteStream}
	for i := range tasks {
		e := env0
		e.Task = i
		sink, err := s.Plugin.NewSink(values, e)
		require.NoError(t, err)
		task, err := delivery.Start(context.Background(), delivery.TaskConfig{
			Consumer: cons, Sink: sink, Handler: dc.Chain(sink), AckWait: delivery.AckWait,
		})
		require.NoError(t, err)
		r.tasks = append(r.tasks, task)
	}
	t.Cleanup(func() {
		for _, task := range r.tasks {
			_ = task.Stop(context.Background())
		}
	})
	return r
}

// settled reports whether the consumer acked every one of the run's last records, and nothing waits.
func (r *run) settled(t *testing.T, last uint64) bool {
	i := r.env.ConsumerInfo(t, stream, durable)
	if !r.shared {
		return i.NumAckPending == 0 && i.NumPending == 0 && i.AckFloor.Stream == last
	}
	seqs, ok := r.recordSeqs(t)
	return ok && uint64(len(seqs)) == last && i.NumAckPending == 0 && i.NumPending == 0 &&
		(last == 0 || i.AckFloor.Stream >= seqs[last-1])
}

// recordSeqs returns the stream sequences of the records on the suite's topic, in order; false after a problem,
// reported with Errorf (the suite polls from other goroutines).
func (r *run) recordSeqs(t *testing.T) ([]uint64, bool) {
	ctx := context.Background()
	s, err := r.env.JS.Stream(ctx, stream)
	if err != nil {
		t.Errorf("stream %s: %v", stream, err)
		return nil, false
	}
	var seqs []uint64
	for seq := uint64(1); ; {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return seqs, true
		}
		if err != nil {
			t.Errorf("stream %s from sequence %d: %v", stream, seq, err)
			return nil, false
		}
		seqs = append(seqs, m.Sequence)
		seq = m.Sequence + 1
	}
}

func (r *run) retried() uint64 {
	var n uint64
	for _, task := range r.tasks {
		n += task.Counters().Retried
	}
	return n
}

func containsAll(have, want []string) bool {
	set := make(map[string]bool, len(have))
	for _, id := range have {
		set[id] = true
	}
	for _, id := range want {
		if !set[id] {
			return false
		}
	}
	return true
}
