package eventbus_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/connector/connectortest"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/eventbus"
)

func TestSinkSuite(t *testing.T) {
	connectortest.RunSinkSuite(t, connectortest.SinkSuite{Plugin: eventbus.Plugin(), NewPeer: newBusPeer})
}

// busPeer is the destination bus of the suite's sinks: a bus stream on the suite's server, reached through its own
// connection. Stop deletes the bus's stream (the sink retries a missing destination) and Start creates it again;
// Hold takes the bus's .in subject from the stream and answers the publishes itself, late (see Hold).
type busPeer struct {
	t     *testing.T
	names stream.Names
	busID string
	nc    *nats.Conn
	js    jetstream.JetStream

	mu      sync.Mutex
	deleted []string // ids the stream held when Stop deleted it
}

var (
	_ connectortest.Peer    = (*busPeer)(nil)
	_ connectortest.EnvPeer = (*busPeer)(nil)
)

// peerTimeout bounds each request of the peer to the server.
const peerTimeout = 5 * time.Second

func newBusPeer(t *testing.T, env *jetstreamtest.Env) connectortest.Peer {
	nc := jetstreamtest.Connect(t, env.Server)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	p := &busPeer{t: t, names: stream.Names{Cluster: "ebsuite"}, busID: "dest", nc: nc, js: js}
	p.Start()
	return p
}

func (p *busPeer) Config() map[string]string { return map[string]string{eventbus.KeyBusID: p.busID} }

// Env gives the sinks the peer's installation, so bus.id names the peer's stream.
func (p *busPeer) Env(env connector.Env) connector.Env {
	env.Names = p.names
	return env
}

// Accepted returns the ids of the events stored on the bus's .in subject, those of the streams deleted by Stop
// first.
func (p *busPeer) Accepted() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append(slices.Clone(p.deleted), p.stored()...)
}

// stored reads the ids of the events on the bus's .in subject, in order; none when the stream does not exist.
// It reports problems with Errorf: the suite calls Accepted from its polling goroutines.
func (p *busPeer) stored() []string {
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	s, err := p.js.Stream(ctx, p.names.BusStream(p.busID))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		p.t.Errorf("peer: reading the destination stream: %v", err)
		return nil
	}
	var ids []string
	for seq := uint64(1); ; {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(p.names.BusIn(p.busID)))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return ids
		}
		if err != nil {
			p.t.Errorf("peer: reading the destination stream from sequence %d: %v", seq, err)
			return ids
		}
		e, err := stream.Decode(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
		if err != nil {
			p.t.Errorf("peer: stored message %d: %v", m.Sequence, err)
			return ids
		}
		ids = append(ids, e.ID())
		seq = m.Sequence + 1
	}
}

// Stop deletes the bus's stream, remembering what it held: publishing fails with no stream (a retryable error of
// the sink) until Start.
func (p *busPeer) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deleted = append(p.deleted, p.stored()...)
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	require.NoError(p.t, p.names.DeleteBusStream(ctx, p.js, p.busID))
}

// Start creates the bus's stream, under the same name and subjects.
func (p *busPeer) Start() {
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	require.NoError(p.t, p.names.EnsureBusStream(ctx, p.js, p.busID, time.Hour, -1, 1))
}

// Hold makes the publishes to the bus wait unanswered. JetStream answers a publish once it stored it, so the
// stream itself cannot hold one: Hold takes the bus's .in subject from the stream and subscribes to it, keeping
// each publish (a request) without replying, so the sink's Write blocks in PublishMsg. release gives the subject
// back to the stream, then stores each held publish as it came (same headers, so the same Nats-Msg-Id and
// Nats-Expected-Stream) and answers it with JetStream's own reply. Nothing held is on the stream before release.
// release also runs when the test ends.
func (p *busPeer) Hold() (held func() int, release func()) {
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	in := p.names.BusIn(p.busID)
	s, err := p.js.Stream(ctx, p.names.BusStream(p.busID))
	require.NoError(p.t, err)
	cfg := s.CachedInfo().Config
	cfg.Subjects = slices.DeleteFunc(slices.Clone(cfg.Subjects), func(s string) bool { return s == in })
	// The stream lets go of the subject before the peer takes it, so no publish is answered by both.
	_, err = p.js.UpdateStream(ctx, cfg)
	require.NoError(p.t, err)

	var (
		mu       sync.Mutex
		waiting  []*nats.Msg
		released bool
	)
	sub, err := p.nc.Subscribe(in, func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		if released { // came in while release ran: the stream has the subject again
			go p.forward(m)
			return
		}
		waiting = append(waiting, m)
	})
	require.NoError(p.t, err)
	require.NoError(p.t, p.nc.Flush(), "the subscription is on the server before Hold returns")

	var once sync.Once
	release = func() {
		once.Do(func() {
			require.NoError(p.t, sub.Unsubscribe())
			ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
			defer cancel()
			cfg.Subjects = p.names.BusSubjects(p.busID)
			_, err := p.js.UpdateStream(ctx, cfg)
			require.NoError(p.t, err)
			mu.Lock()
			released = true
			msgs := waiting
			waiting = nil
			mu.Unlock()
			for _, m := range msgs {
				p.forward(m)
			}
		})
	}
	p.t.Cleanup(release) // before the suite stops its tasks, which wait for the held Writes
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(waiting)
	}, release
}

// forward stores a held publish on the stream and answers it with JetStream's reply.
func (p *busPeer) forward(m *nats.Msg) {
	reply, err := p.nc.RequestMsg(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data}, peerTimeout)
	if err != nil {
		p.t.Errorf("peer: storing a held publish: %v", err)
		return
	}
	if err := m.Respond(reply.Data); err != nil {
		p.t.Errorf("peer: answering a held publish: %v", err)
	}
}
