package mqtt_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector/connectortest"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/mqtt"
)

// sourcePeer is a private Mosquitto broker; Emit publishes CloudEvents with QoS 1 to peer/<id>, in the binary
// mode (MQTT 5) or the structured mode (MQTT 3.1.1).
type sourcePeer struct {
	b       *broker
	version string
}

func newSourcePeer(version string) func(t *testing.T, _ *jetstreamtest.Env) connectortest.SourcePeer {
	return func(t *testing.T, _ *jetstreamtest.Env) connectortest.SourcePeer {
		return &sourcePeer{b: startBroker(t, nil), version: version}
	}
}

func (p *sourcePeer) Config() map[string]string {
	return map[string]string{mqtt.KeyURL: p.b.URL(), mqtt.KeyVersion: p.version, mqtt.KeyTopics: "peer/+", mqtt.KeyQoS: "1"}
}

func (p *sourcePeer) Emit(t *testing.T, ids ...string) {
	var msgs []outgoing
	for _, id := range ids {
		e := jetstreamtest.Event(id, "peer.event", map[string]any{"id": id})
		if p.version == mqtt.Version5 {
			msgs = append(msgs, outgoing{topic: "peer/" + id, payload: e.Data(), contentType: e.DataContentType(),
				user: [][2]string{{"specversion", "1.0"}, {"id", e.ID()}, {"source", e.Source()}, {"type", e.Type()}}})
			continue
		}
		b, err := json.Marshal(e)
		require.NoError(t, err)
		msgs = append(msgs, outgoing{topic: "peer/" + id, payload: b})
	}
	if p.version == mqtt.Version5 {
		publish5(t, p.b.addr(), msgs...)
	} else {
		publish311(t, p.b.URL(), msgs...)
	}
}

func (p *sourcePeer) Stop()  { p.b.Stop() }
func (p *sourcePeer) Start() { p.b.Start() }

func TestSourceSuite(t *testing.T) {
	for _, v := range []string{mqtt.Version5, mqtt.Version311} {
		t.Run("v"+v, func(t *testing.T) {
			connectortest.RunSourceSuite(t, connectortest.SourceSuite{Plugin: mqtt.SourcePlugin(), NewPeer: newSourcePeer(v), Egress: localBrokers,
				Timeout: 30 * time.Second})
		})
	}
}

// sinkPeer is a private Mosquitto broker behind a proxy that can hold publications, and a subscriber to the
// sink's topics that notes the ids of the events it receives.
type sinkPeer struct {
	t       *testing.T
	b       *broker
	proxy   *holdProxy
	version string

	mu       sync.Mutex
	accepted []string
	stopSub  func()
}

func newSinkPeer(version string) func(t *testing.T, _ *jetstreamtest.Env) connectortest.Peer {
	return func(t *testing.T, _ *jetstreamtest.Env) connectortest.Peer {
		b := startBroker(t, nil)
		p := &sinkPeer{t: t, b: b, proxy: startProxy(t, b.addr()), version: version}
		p.subscribe()
		t.Cleanup(func() { p.unsubscribe() })
		return p
	}
}

func (p *sinkPeer) Config() map[string]string {
	return map[string]string{mqtt.KeyURL: p.proxy.URL(), mqtt.KeyVersion: p.version, mqtt.KeyTopic: "suite/{type}/{$.id}",
		mqtt.KeyQoS: "1", mqtt.KeyPublishTimeout: "2s", mqtt.KeyConnectTimeout: "2s"}
}

// subscribe starts a subscriber on the broker itself (not through the proxy).
func (p *sinkPeer) subscribe() {
	var ch <-chan received
	// A persistent session: what the sink publishes after a restart of the broker, before the subscriber is back,
	// waits for it.
	if p.version == mqtt.Version5 {
		ch = subscriber5With(p.t, p.b.addr(), "suite/#", "peer-subscriber", false)
	} else {
		ch = subscriber311With(p.t, p.b.URL(), "suite/#", "peer-subscriber", false)
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case m := <-ch:
				id := m.user["id"]
				if p.version == mqtt.Version311 {
					e := event.New()
					if json.Unmarshal(m.payload, &e) == nil {
						id = e.ID()
					}
				}
				if !strings.HasSuffix(m.topic, "/"+id) {
					p.t.Errorf("event %s arrived on topic %s", id, m.topic)
				}
				p.mu.Lock()
				p.accepted = append(p.accepted, id)
				p.mu.Unlock()
			case <-done:
				return
			}
		}
	}()
	p.stopSub = func() { close(done); <-stopped }
}

func (p *sinkPeer) unsubscribe() {
	if p.stopSub != nil {
		p.stopSub()
		p.stopSub = nil
	}
}

func (p *sinkPeer) Accepted() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.accepted...)
}

func (p *sinkPeer) Hold() (func() int, func()) { return p.proxy.hold() }

func (p *sinkPeer) Stop() {
	p.unsubscribe()
	p.b.Stop()
}

func (p *sinkPeer) Start() {
	p.b.Start()
	p.subscribe()
}

func TestSinkSuite(t *testing.T) {
	for _, v := range []string{mqtt.Version5, mqtt.Version311} {
		t.Run("v"+v, func(t *testing.T) {
			connectortest.RunSinkSuite(t, connectortest.SinkSuite{Plugin: mqtt.Plugin(), NewPeer: newSinkPeer(v), Egress: localBrokers,
				Timeout: 30 * time.Second})
		})
	}
}
