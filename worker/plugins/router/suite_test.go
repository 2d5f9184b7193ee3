package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector/connectortest"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/router"
)

func TestSinkSuite(t *testing.T) {
	connectortest.RunSinkSuite(t, connectortest.SinkSuite{
		Plugin:  router.Plugin(),
		NewPeer: newRulePeer,
		// The router stores its copies on the stream it reads (it expects the record's stream), so the suite's
		// stream holds copies between its records.
		PeerStoresOnSuiteStream: true,
	})
}

// The suite's stream, its subjects and the subject its records are put on (connectortest's constants).
const (
	suiteStream   = "SUITE"
	suiteSubjects = "suite.>"
	suiteIn       = "suite.in"
)

// suiteRule is the one rule of the peer's table: it matches every event the suite publishes (all of them come
// from jetstreamtest.Event, whose source is test/source, with types suite.event and test.event).
var suiteRule = router.Rule{
	ID:      "r1",
	Subject: "suite.rule.r1",
	Pattern: json.RawMessage(`{"source": ["test/source"]}`),
}

// peerTimeout bounds each request of the peer to the server.
const peerTimeout = 5 * time.Second

// rulePeer is what the router delivers to: the rule subject suite.rule.r1 of the suite's own stream, where the
// router stores its copies (it expects the stream its record came from). The peer reaches the stream through its
// own connection. Stop takes the rule subject off the stream, so the router's publishes find no responder (a
// retryable error of the sink), and Start gives it back; the stream, its messages and the suite's consumer (which
// filters on suite.in) stay. Hold takes the rule subject from the stream too and answers the publishes itself,
// late (see Hold).
type rulePeer struct {
	t  *testing.T
	nc *nats.Conn
	js jetstream.JetStream
}

var _ connectortest.Peer = (*rulePeer)(nil)

func newRulePeer(t *testing.T, env *jetstreamtest.Env) connectortest.Peer {
	nc := jetstreamtest.Connect(t, env.Server)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return &rulePeer{t: t, nc: nc, js: js}
}

func (p *rulePeer) Config() map[string]string {
	b, err := json.Marshal([]router.Rule{suiteRule})
	require.NoError(p.t, err)
	return map[string]string{router.KeyRules: string(b)}
}

// Accepted returns the ids of the copies stored on the rule subject, in order. The copies stay on the stream
// while the subject is off it (Stop, Hold), so they cover the whole test. It reports problems with Errorf: the
// suite calls Accepted from its polling goroutines.
func (p *rulePeer) Accepted() []string {
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	s, err := p.js.Stream(ctx, suiteStream)
	if err != nil {
		p.t.Errorf("peer: reading the suite's stream: %v", err)
		return nil
	}
	var ids []string
	for seq := uint64(1); ; {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(suiteRule.Subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return ids
		}
		if err != nil {
			p.t.Errorf("peer: reading the suite's stream from sequence %d: %v", seq, err)
			return ids
		}
		e, err := stream.Decode(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
		if err != nil {
			p.t.Errorf("peer: stored copy %d: %v", m.Sequence, err)
			return ids
		}
		ids = append(ids, e.ID())
		seq = m.Sequence + 1
	}
}

// Stop takes the rule subject off the suite's stream: the router's copies find no stream until Start.
func (p *rulePeer) Stop() { p.setSubjects(suiteIn) }

// Start gives the rule subject back to the suite's stream.
func (p *rulePeer) Start() { p.setSubjects(suiteSubjects) }

// setSubjects updates the subjects of the suite's stream, keeping its messages and consumers. It runs on the
// test's goroutine.
func (p *rulePeer) setSubjects(subjects ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	s, err := p.js.Stream(ctx, suiteStream)
	require.NoError(p.t, err)
	cfg := s.CachedInfo().Config
	cfg.Subjects = subjects
	_, err = p.js.UpdateStream(ctx, cfg)
	require.NoError(p.t, err)
}

// Hold makes the router's copies wait unanswered. JetStream answers a publish once it stored it, so the stream
// itself cannot hold one: Hold takes the rule subject from the stream and subscribes to it, keeping each publish
// (a request) without replying, so the router's Write waits for its copy. release gives the subject back to the
// stream, then stores each held publish as it came (same headers, so the same Nats-Msg-Id and
// Nats-Expected-Stream) and answers it with JetStream's own reply. Nothing held is on the stream before release.
// release also runs when the test ends.
func (p *rulePeer) Hold() (held func() int, release func()) {
	// The stream lets go of the subject before the peer takes it, so no publish is answered by both.
	p.setSubjects(suiteIn)
	var (
		mu       sync.Mutex
		waiting  []*nats.Msg
		released bool
	)
	sub, err := p.nc.Subscribe(suiteRule.Subject, func(m *nats.Msg) {
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
			p.setSubjects(suiteSubjects)
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
func (p *rulePeer) forward(m *nats.Msg) {
	reply, err := p.nc.RequestMsg(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data}, peerTimeout)
	if err != nil {
		p.t.Errorf("peer: storing a held copy: %v", err)
		return
	}
	if err := m.Respond(reply.Data); err != nil {
		p.t.Errorf("peer: answering a held copy: %v", err)
	}
}
