package eventbus_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/connector/connectortest"
	"github.com/eventbridge-go/eventbridge/worker/egress"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/eventbus"
)

// remotePeer is a NATS server of its own, reached over TCP through nats.url, holding stream PEER; Stop and Start
// restart it on the same port and files.
type remotePeer struct {
	cfg ebjs.ServerConfig
	srv *ebjs.Server
	url string
}

func newRemotePeer(t *testing.T, _ *jetstreamtest.Env) connectortest.SourcePeer {
	// The peer stands for a NATS of another installation, which may take anonymous clients.
	p := &remotePeer{cfg: ebjs.ServerConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1", ServerName: "peer", AllowAnonymous: true}}
	p.Start()
	u, err := url.Parse(p.url)
	require.NoError(t, err)
	p.cfg.Listen = u.Host // restart on the same port
	t.Cleanup(p.Stop)
	nc, err := p.srv.Connect("setup")
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	_, err = js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "PEER", Subjects: []string{"peer.>"}})
	require.NoError(t, err)
	return p
}

func (p *remotePeer) Config() map[string]string {
	return map[string]string{eventbus.KeyNATSURL: p.url, eventbus.KeySourceStream: "PEER"}
}

func (p *remotePeer) Emit(t *testing.T, ids ...string) {
	nc, err := p.srv.Connect("emit")
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	for _, id := range ids {
		m := stream.Encode(jetstreamtest.Event(id, "peer.event", map[string]any{"id": id}))
		m.Subject = "peer.events"
		_, err := js.PublishMsg(context.Background(), m)
		require.NoError(t, err)
	}
}

func (p *remotePeer) Stop() {
	if p.srv != nil {
		p.srv.Shutdown()
		p.srv = nil
	}
}

func (p *remotePeer) Start() {
	srv, err := ebjs.StartServer(p.cfg)
	if err != nil {
		panic(err)
	}
	p.srv, p.url = srv, srv.ClientURL()
}

func TestSourceSuite(t *testing.T) {
	// The peer listens on 127.0.0.1, which the egress guard refuses unless allowed.
	connectortest.RunSourceSuite(t, connectortest.SourceSuite{Plugin: eventbus.SourcePlugin(), NewPeer: newRemotePeer,
		Egress: egress.Config{Allow: []string{"127.0.0.1"}}})
}

// The source reads the worker's own NATS when nats.url is empty, keeps CloudEvents as they are, and wraps other
// messages.
func TestSourceReadsLocalStreamAndWrapsPlainMessages(t *testing.T) {
	env := jetstreamtest.Start(t)
	env.Stream(t, "ORIGIN", "origin.>")
	env.Publish(t, "origin.ce", jetstreamtest.Event("ce-1", "order.created", map[string]any{"n": 1}))
	_, err := env.JS.Publish(context.Background(), "origin.raw", []byte(`{"temp": 21.5}`))
	require.NoError(t, err)
	_, err = env.JS.PublishMsg(context.Background(), &nats.Msg{Subject: "origin.text", Data: []byte("hello"),
		Header: nats.Header{"Content-Type": []string{"text/plain"}}})
	require.NoError(t, err)

	p := eventbus.SourcePlugin()
	cfg := map[string]string{connector.KeyClass: eventbus.SourceName, connector.KeyOutputSubject: "x.bus.b.in",
		connector.KeyOutputStream: "X_BUS_b", eventbus.KeySourceStream: "ORIGIN"}
	require.Empty(t, p.FullSpec().Validate(cfg))
	src, err := p.NewSource(p.FullSpec().Values(cfg), connector.Env{JetStream: env.JS, Connector: "c"})
	require.NoError(t, err)
	require.NoError(t, src.Connect(context.Background()))
	defer src.Close()
	var got []connector.SourceRecord
	for len(got) < 3 {
		recs, err := src.Read(context.Background())
		require.NoError(t, err)
		got = append(got, recs...)
	}
	require.Len(t, got, 3)
	assert.Equal(t, "ce-1", got[0].Event.ID())
	assert.Equal(t, "order.created", got[0].Event.Type())

	assert.Equal(t, eventbus.NATSMessageType, got[1].Event.Type())
	assert.Equal(t, "ORIGIN:2", got[1].Event.ID(), "a wrapped message's id is stable across reads")
	assert.Equal(t, "origin.raw", got[1].Event.Subject())
	assert.JSONEq(t, `{"temp": 21.5}`, string(got[1].Event.Data()))
	assert.Equal(t, map[string]any{"stream": "ORIGIN"}, got[1].Partition)
	assert.Equal(t, map[string]any{"sequence": uint64(2)}, got[1].Offset)

	assert.Equal(t, "text/plain", got[2].Event.DataContentType())
	assert.Equal(t, "hello", string(got[2].Event.Data()))
}

// A bus's record batch (the events of one PutEvents call) is read as its events, in order; all but the last leave
// the offset before the batch, so a task that stops inside it reads it again from its first event (and the events
// stored already are stored once: the same source and id).
func TestSourceReadsTheEventsOfARecordBatch(t *testing.T) {
	env := jetstreamtest.Start(t)
	env.Stream(t, "ORIGIN", "origin.>")
	env.Publish(t, "origin.ce", jetstreamtest.Event("one", "order.created", nil))
	batch, err := stream.EncodeBatch([]*event.Event{jetstreamtest.Event("b0", "order.created", map[string]any{"n": 0}),
		jetstreamtest.Event("b1", "order.paid", nil), jetstreamtest.Event("b2", "order.created", map[string]any{"n": 2})}, nil, nil)
	require.NoError(t, err)
	batch.Subject = "origin.ce"
	_, err = env.JS.PublishMsg(context.Background(), batch)
	require.NoError(t, err)
	env.Publish(t, "origin.ce", jetstreamtest.Event("three", "order.created", nil))

	p := eventbus.SourcePlugin()
	cfg := map[string]string{connector.KeyClass: eventbus.SourceName, connector.KeyOutputSubject: "x.bus.b.in",
		connector.KeyOutputStream: "X_BUS_b", eventbus.KeySourceStream: "ORIGIN"}
	src, err := p.NewSource(p.FullSpec().Values(cfg), connector.Env{JetStream: env.JS, Connector: "c"})
	require.NoError(t, err)
	require.NoError(t, src.Connect(context.Background()))
	defer src.Close()
	var got []connector.SourceRecord
	for len(got) < 5 {
		recs, err := src.Read(context.Background())
		require.NoError(t, err)
		got = append(got, recs...)
	}
	var ids []string
	var offsets []any
	for _, r := range got {
		ids = append(ids, r.Event.ID())
		offsets = append(offsets, r.Offset["sequence"])
	}
	assert.Equal(t, []string{"one", "b0", "b1", "b2", "three"}, ids)
	assert.Equal(t, []any{uint64(1), uint64(1), uint64(1), uint64(2), uint64(3)}, offsets)
	assert.Equal(t, "order.paid", got[2].Event.Type())
	assert.JSONEq(t, `{"n": 2}`, string(got[3].Event.Data()))
}

// A bad config is refused with each problem named.
func TestSourceConfigProblems(t *testing.T) {
	p := eventbus.SourcePlugin()
	errs := p.FullSpec().Validate(map[string]string{connector.KeyClass: eventbus.SourceName,
		eventbus.KeySourceStream: "a.b", eventbus.KeySourceSubject: "x..y", eventbus.KeyStartPolicy: "middle"})
	keys := map[string]bool{}
	for _, e := range errs {
		keys[e.Key] = true
	}
	for _, k := range []string{connector.KeyOutputSubject, connector.KeyOutputStream, eventbus.KeySourceStream,
		eventbus.KeySourceSubject, eventbus.KeyStartPolicy} {
		assert.True(t, keys[k], "problem of %s reported: %v", k, errs)
	}
}
