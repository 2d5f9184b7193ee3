package mqtt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/eclipse/paho.golang/paho"
	mqtt3 "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/listener/listenertest"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/mqtt"
)

const wait = 20 * time.Second

func sourceValues(cfg map[string]string) connector.Values {
	return mqtt.SourcePlugin().FullSpec().Values(cfg)
}

func sinkValues(cfg map[string]string) connector.Values {
	return mqtt.Plugin().FullSpec().Values(cfg)
}

// readN reads from src until it has n records.
func readN(t *testing.T, src connector.Source, n int) []connector.SourceRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var out []connector.SourceRecord
	for len(out) < n {
		recs, err := src.Read(ctx)
		require.NoError(t, err)
		out = append(out, recs...)
	}
	return out
}

// dropSession removes the persistent session of clientID from the broker: a clean connection, then a disconnect.
func dropSession(t *testing.T, version, brokerURL, clientID string) {
	t.Helper()
	if version == mqtt.Version311 {
		cli := mqtt3.NewClient(mqtt3.NewClientOptions().AddBroker(brokerURL).SetClientID(clientID).SetCleanSession(true).SetProtocolVersion(4))
		if tok := cli.Connect(); tok.WaitTimeout(5*time.Second) && tok.Error() == nil {
			cli.Disconnect(100)
		}
		return
	}
	u, err := url.Parse(brokerURL)
	require.NoError(t, err)
	nc, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	require.NoError(t, err)
	cli := paho.NewClient(paho.ClientConfig{Conn: nc})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Connect(ctx, &paho.Connect{ClientID: clientID, CleanStart: true, KeepAlive: 30}); err == nil {
		_ = cli.Disconnect(&paho.Disconnect{})
	}
}

// A worker killed with records read but not committed, and QoS 1 messages published while no task runs: a new
// task with the same client id finds them all in its session, and the bus stores each message once (the
// messages sent again keep their ids).
func TestSourceLosesNothingWhileTheWorkerIsDown(t *testing.T) {
	brokerURL := sharedBroker(t)
	for _, v := range []string{mqtt.Version5, mqtt.Version311} {
		t.Run("v"+v, func(t *testing.T) {
			topic := unique("eb-test") + "/dev1"
			clientID := unique("eb-killed")
			t.Cleanup(func() { dropSession(t, v, brokerURL, clientID) })
			cfg := map[string]string{mqtt.KeyURL: brokerURL, mqtt.KeyVersion: v, mqtt.KeyTopics: topic,
				mqtt.KeyQoS: "1", mqtt.KeyClientID: clientID}
			publish := func(from, to int) {
				var msgs []outgoing
				for i := from; i < to; i++ {
					msgs = append(msgs, outgoing{topic: topic, payload: fmt.Appendf(nil, `{"n":%d}`, i)})
				}
				if v == mqtt.Version5 {
					publish5(t, sharedBrokerAddr, msgs...)
				} else {
					publish311(t, brokerURL, msgs...)
				}
			}

			// The first worker reads five messages and dies before they are stored: no Commit.
			src, err := mqtt.NewSource(sourceValues(cfg), connector.Env{Egress: localBrokers, Connector: "killed"})
			require.NoError(t, err)
			require.NoError(t, src.Connect(context.Background()))
			publish(0, 5)
			first := readN(t, src, 5)
			require.Len(t, first, 5)
			require.NoError(t, src.Close())

			publish(5, 10) // while no task runs

			env := jetstreamtest.Start(t)
			env.Stream(t, "BUS", "bus.in")
			src2, err := mqtt.NewSource(sourceValues(cfg), connector.Env{Egress: localBrokers, Connector: "killed"})
			require.NoError(t, err)
			task, err := delivery.StartSource(context.Background(), delivery.SourceTaskConfig{
				Source: src2, JetStream: env.JS, Subject: "bus.in", Stream: "BUS", Tolerance: connector.ToleranceNone,
			})
			require.NoError(t, err)
			t.Cleanup(func() { _ = task.Stop(context.Background()) })
			require.Eventually(t, func() bool { return len(env.Messages(t, "BUS", "bus.in")) >= 10 }, wait, 20*time.Millisecond)
			require.NoError(t, task.Stop(context.Background()))

			stored := env.Messages(t, "BUS", "bus.in")
			var ns []int
			for _, m := range stored {
				var d struct{ N int }
				require.NoError(t, json.Unmarshal(m.Event.Data(), &d))
				ns = append(ns, d.N)
				assert.Equal(t, mqtt.MessageType, m.Event.Type())
				assert.Equal(t, topic, m.Event.Subject())
			}
			slices.Sort(ns)
			assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, ns, "every message stored once")
			firstIDs := map[string]bool{}
			for _, r := range first {
				firstIDs[r.Event.ID()] = true
			}
			for _, m := range stored {
				delete(firstIDs, m.Event.ID())
			}
			assert.Empty(t, firstIDs, "a message sent again has the id it had the first time")
		})
	}
}

// Messages become CloudEvents: plain payloads are wrapped (JSON as JSON, other bytes as bytes); CloudEvents in the
// binary mode (MQTT 5 user properties) and the structured mode are kept as they are.
func TestSourceMapsMessagesToCloudEvents(t *testing.T) {
	brokerURL := sharedBroker(t)
	base := unique("eb-test")
	clientID := unique("eb-map")
	t.Cleanup(func() { dropSession(t, mqtt.Version5, brokerURL, clientID) })
	src, err := mqtt.NewSource(sourceValues(map[string]string{mqtt.KeyURL: brokerURL, mqtt.KeyTopics: base + "/#",
		mqtt.KeyClientID: clientID, mqtt.KeyQoS: "2"}), connector.Env{Egress: localBrokers, Connector: "map"})
	require.NoError(t, err)
	require.NoError(t, src.Connect(context.Background()))
	t.Cleanup(func() { _ = src.Close() })

	structured := event.New()
	structured.SetID("s-1")
	structured.SetSource("urn:test")
	structured.SetType("test.structured")
	require.NoError(t, structured.SetData(event.ApplicationJSON, map[string]any{"k": "v"}))
	structuredJSON, err := json.Marshal(structured)
	require.NoError(t, err)
	publish5(t, sharedBrokerAddr,
		outgoing{topic: base + "/json", payload: []byte(`{"temp":21.5}`)},
		outgoing{topic: base + "/bytes", payload: []byte{0xff, 0x00, 0x01}},
		outgoing{topic: base + "/binary", payload: []byte(`{"a":1}`), contentType: "application/json",
			user: [][2]string{{"ce_specversion", "1.0"}, {"ce_id", "b-1"}, {"ce_source", "urn:dev"}, {"ce_type", "test.binary"},
				{"ce_subject", "s"}, {"ce_time", "2026-01-02T03:04:05Z"}, {"ce_tenant", "acme"}}},
		outgoing{topic: base + "/structured", payload: structuredJSON, contentType: "application/cloudevents+json"},
	)
	recs := readN(t, src, 4)
	require.NoError(t, src.Commit(context.Background(), recs))

	host := strings.TrimPrefix(brokerURL, "tcp://")
	e := recs[0].Event
	assert.Equal(t, mqtt.MessageType, e.Type())
	assert.Equal(t, "mqtt://"+host+"/"+base+"/json", e.Source())
	assert.Equal(t, base+"/json", e.Subject())
	assert.Equal(t, event.ApplicationJSON, e.DataContentType())
	assert.JSONEq(t, `{"temp":21.5}`, string(e.Data()))
	assert.NotEmpty(t, e.ID())
	assert.False(t, e.Time().IsZero())

	e = recs[1].Event
	assert.Equal(t, "application/octet-stream", e.DataContentType())
	assert.Equal(t, []byte{0xff, 0x00, 0x01}, e.Data())
	js, err := json.Marshal(e)
	require.NoError(t, err)
	assert.Contains(t, string(js), `"data_base64":"/wAB"`)

	e = recs[2].Event
	assert.Equal(t, "b-1", e.ID())
	assert.Equal(t, "urn:dev", e.Source())
	assert.Equal(t, "test.binary", e.Type())
	assert.Equal(t, "s", e.Subject())
	assert.Equal(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), e.Time().UTC())
	assert.Equal(t, "acme", e.Extensions()["tenant"])
	assert.JSONEq(t, `{"a":1}`, string(e.Data()))

	e = recs[3].Event
	assert.Equal(t, "s-1", e.ID())
	assert.Equal(t, "test.structured", e.Type())
	assert.JSONEq(t, `{"k":"v"}`, string(e.Data()))
}

func testEvent(t *testing.T) *event.Event {
	e := event.New()
	e.SetID("e-1")
	e.SetSource("urn:shop")
	e.SetType("order.created")
	e.SetSubject("orders")
	e.SetTime(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
	e.SetExtension("tenant", "acme")
	require.NoError(t, e.SetData(event.ApplicationJSON, map[string]any{"kind": "paper", "n": 1}))
	return &e
}

func newSink(t *testing.T, cfg map[string]string) connector.Sink {
	t.Helper()
	s, err := mqtt.New(sinkValues(cfg), connector.Env{Egress: localBrokers, Connector: unique("sink")})
	require.NoError(t, err)
	require.NoError(t, s.Connect(context.Background()))
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func next(t *testing.T, ch <-chan received) received {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(wait):
		t.Fatal("the subscriber received nothing")
		return received{}
	}
}

// The sink publishes binary (MQTT 5 user properties) and structured (MQTT 5 and 3.1.1) messages to a topic built
// from the event, and a subscriber receives them.
func TestSinkPublishesBinaryAndStructured(t *testing.T) {
	brokerURL := sharedBroker(t)
	base := unique("eb-test")
	tpl := base + "/{type}/{$.data.kind}"
	want := base + "/order.created/paper"
	e := testEvent(t)

	t.Run("binary v5", func(t *testing.T) {
		sub := subscriber5(t, sharedBrokerAddr, base+"/#")
		s := newSink(t, map[string]string{mqtt.KeyURL: brokerURL, mqtt.KeyTopic: tpl})
		require.NoError(t, s.Write(context.Background(), e))
		m := next(t, sub)
		assert.Equal(t, want, m.topic)
		assert.Equal(t, event.ApplicationJSON, m.contentType)
		assert.JSONEq(t, `{"kind":"paper","n":1}`, string(m.payload))
		assert.Equal(t, map[string]string{"specversion": "1.0", "id": "e-1", "source": "urn:shop", "type": "order.created",
			"subject": "orders", "time": "2026-05-06T07:08:09Z", "tenant": "acme"}, m.user)
	})
	t.Run("structured v5", func(t *testing.T) {
		sub := subscriber5(t, sharedBrokerAddr, base+"/#")
		s := newSink(t, map[string]string{mqtt.KeyURL: brokerURL, mqtt.KeyTopic: tpl, mqtt.KeyMode: mqtt.ModeStructured, mqtt.KeyQoS: "2"})
		require.NoError(t, s.Write(context.Background(), e))
		m := next(t, sub)
		assert.Equal(t, want, m.topic)
		assert.Equal(t, mqtt.StructuredContentType, m.contentType)
		assert.Empty(t, m.user)
		got := event.New()
		require.NoError(t, json.Unmarshal(m.payload, &got))
		assert.Equal(t, "e-1", got.ID())
		assert.Equal(t, "acme", got.Extensions()["tenant"])
		assert.JSONEq(t, `{"kind":"paper","n":1}`, string(got.Data()))
	})
	t.Run("structured v3.1.1 retained", func(t *testing.T) {
		s := newSink(t, map[string]string{mqtt.KeyURL: brokerURL, mqtt.KeyVersion: mqtt.Version311, mqtt.KeyTopic: tpl,
			mqtt.KeyRetain: "true"})
		require.NoError(t, s.Write(context.Background(), e))
		t.Cleanup(func() { clearRetained(t, brokerURL, want) })
		sub := subscriber311(t, brokerURL, base+"/#") // after the publication: the broker retained it
		m := next(t, sub)
		assert.Equal(t, want, m.topic)
		assert.True(t, m.retain)
		got := event.New()
		require.NoError(t, json.Unmarshal(m.payload, &got))
		assert.Equal(t, "e-1", got.ID())
		assert.Equal(t, "order.created", got.Type())
	})
}

func clearRetained(t *testing.T, brokerURL, topic string) {
	cli := mqtt3.NewClient(mqtt3.NewClientOptions().AddBroker(brokerURL).SetClientID(unique("clear")).SetProtocolVersion(4))
	if tok := cli.Connect(); tok.WaitTimeout(5*time.Second) && tok.Error() == nil {
		cli.Publish(topic, 1, true, []byte{}).WaitTimeout(5 * time.Second)
		cli.Disconnect(100)
	}
}

// A record whose topic cannot be built is given up at once; an unreachable broker is retried.
func TestSinkErrors(t *testing.T) {
	closed := "tcp://127.0.0.1:" + fmt.Sprint(listenertest.Port(t)) // nothing listens there
	s, err := mqtt.New(sinkValues(map[string]string{mqtt.KeyURL: closed, mqtt.KeyTopic: "t/{subject}/{$.data.x}",
		mqtt.KeyConnectTimeout: "1s"}), connector.Env{Egress: localBrokers, Connector: "errors"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	withSubject := func(subject string, data map[string]any) *event.Event {
		e := jetstreamtest.Event("x", "t", data)
		e.SetSubject(subject)
		return e
	}
	for name, e := range map[string]*event.Event{
		"missing value": withSubject("", map[string]any{"x": "1"}),
		"wildcard +":    withSubject("a+", map[string]any{"x": "1"}),
		"wildcard #":    withSubject("a", map[string]any{"x": "#"}),
	} {
		err := s.Write(context.Background(), e)
		require.Error(t, err, name)
		assert.True(t, connector.IsPermanent(err), "%s: %v", name, err)
		assert.Contains(t, err.Error(), mqtt.KeyTopic, name)
	}
	empty, err := mqtt.New(sinkValues(map[string]string{mqtt.KeyURL: closed, mqtt.KeyTopic: "{$.data.x}"}), connector.Env{Egress: localBrokers})
	require.NoError(t, err)
	err = empty.Write(context.Background(), withSubject("s", map[string]any{"x": ""}))
	assert.True(t, connector.IsPermanent(err), "an empty topic: %v", err)

	err = s.Write(context.Background(), withSubject("s", map[string]any{"x": 1}))
	require.Error(t, err)
	assert.False(t, connector.IsPermanent(err), "an unreachable broker is retried: %v", err)
}

// Bad configs are refused with errors naming their keys, before any connection.
func TestConfigErrorsNameTheirKeys(t *testing.T) {
	reg := connector.NewRegistry()
	require.NoError(t, reg.Register(mqtt.SourcePlugin()))
	require.NoError(t, reg.Register(mqtt.Plugin()))
	source := func(kv ...string) map[string]string {
		cfg := map[string]string{connector.KeyClass: mqtt.SourceName, connector.KeyOutputSubject: "eb.bus.x.in",
			connector.KeyOutputStream: "EB_BUS_X", mqtt.KeyURL: "tcp://127.0.0.1:1883", mqtt.KeyTopics: "a/+/b,c/#"}
		for i := 0; i < len(kv); i += 2 {
			cfg[kv[i]] = kv[i+1]
		}
		return cfg
	}
	sink := func(kv ...string) map[string]string {
		cfg := map[string]string{connector.KeyClass: mqtt.Name, connector.KeyTopics: "eb.bus.x.rule.y",
			connector.KeyStream: "EB_BUS_X", connector.KeyDurable: "d", mqtt.KeyURL: "tcp://127.0.0.1:1883", mqtt.KeyTopic: "out/{subject}"}
		for i := 0; i < len(kv); i += 2 {
			cfg[kv[i]] = kv[i+1]
		}
		return cfg
	}
	_, errs := reg.Validate(source(), connector.Env{})
	require.Empty(t, errs, "the base source config is valid")
	_, errs = reg.Validate(sink(), connector.Env{})
	require.Empty(t, errs, "the base sink config is valid")
	_, errs = reg.Validate(source(connector.KeyTasksMax, "2", mqtt.KeyTopics, "$share/g/a/+,$share/g/b"), connector.Env{})
	require.Empty(t, errs, "several tasks share MQTT 5 shared subscriptions")

	for name, c := range map[string]struct {
		cfg      map[string]string
		key, msg string
	}{
		"# not last":             {source(mqtt.KeyTopics, "a/#/b"), mqtt.KeyTopics, "'#' must be the last level"},
		"+ within a level":       {source(mqtt.KeyTopics, "a/b+"), mqtt.KeyTopics, "'+' must stand alone"},
		"empty filter":           {source(mqtt.KeyTopics, "a,,b"), mqtt.KeyTopics, "must not be empty"},
		"no topics":              {source(mqtt.KeyTopics, ""), mqtt.KeyTopics, "is required"},
		"shared with 3.1.1":      {source(mqtt.KeyTopics, "$share/g/a", mqtt.KeyVersion, "3.1.1"), mqtt.KeyTopics, "shared subscriptions need"},
		"http url":               {source(mqtt.KeyURL, "http://broker"), mqtt.KeyURL, "scheme"},
		"url without host":       {source(mqtt.KeyURL, "tcp://"), mqtt.KeyURL, "no host"},
		"url with a bad port":    {sink(mqtt.KeyURL, "tcp://h:99999"), mqtt.KeyURL, "invalid port"},
		"ws with v5":             {source(mqtt.KeyURL, "ws://broker/mqtt"), mqtt.KeyURL, "3.1.1 only"},
		"bad version":            {source(mqtt.KeyVersion, "4"), mqtt.KeyVersion, "is not one of"},
		"bad qos":                {sink(mqtt.KeyQoS, "3"), mqtt.KeyQoS, "is not one of"},
		"ca not pem":             {source(mqtt.KeyTLSCA, "nope"), mqtt.KeyTLSCA, "PEM"},
		"no topic":               {sink(mqtt.KeyTopic, ""), mqtt.KeyTopic, "is required"},
		"topic with a wildcard":  {sink(mqtt.KeyTopic, "out/#"), mqtt.KeyTopic, "wildcard"},
		"unclosed placeholder":   {sink(mqtt.KeyTopic, "out/{subject"), mqtt.KeyTopic, "without '}'"},
		"bad path":               {sink(mqtt.KeyTopic, "out/{$.data[}"), mqtt.KeyTopic, ""},
		"binary with 3.1.1":      {sink(mqtt.KeyMode, "binary", mqtt.KeyVersion, "3.1.1"), mqtt.KeyMode, "structured"},
		"cert without key":       {sink(mqtt.KeyTLSCert, "-----BEGIN CERTIFICATE-----\n"), mqtt.KeyTLSKey, "is required"},
		"keepalive not seconds":  {sink(mqtt.KeyKeepAlive, "1500ms"), mqtt.KeyKeepAlive, "whole seconds"},
		"password without user":  {sink(mqtt.KeyPassword, "p", mqtt.KeyVersion, "3.1.1", mqtt.KeyMode, "structured"), mqtt.KeyUsername, "is required"},
		"credentials in the url": {source(mqtt.KeyURL, "tcp://u:p@h"), mqtt.KeyURL, "not in the URL"},
		"tasks without sharing":  {source(connector.KeyTasksMax, "2"), connector.KeyTasksMax, "shared subscriptions"},
	} {
		t.Run(name, func(t *testing.T) {
			_, errs := reg.Validate(c.cfg, connector.Env{})
			require.NotEmpty(t, errs)
			var keys []string
			for _, e := range errs {
				keys = append(keys, e.Key)
				if e.Key == c.key {
					assert.Contains(t, e.Message, c.msg)
				}
			}
			assert.Contains(t, keys, c.key, "errors: %v", errs)
		})
	}
}

// Over TLS, with the broker's CA in mqtt.tls.ca, both protocol versions publish; without it, the certificate is
// refused (and retried: it is a connection error).
func TestTLS(t *testing.T) {
	files := newTLSFiles(t)
	b := startBroker(t, files)
	tlsURL := fmt.Sprintf("ssl://127.0.0.1:%d", b.tlsPort)
	for _, v := range []string{mqtt.Version5, mqtt.Version311} {
		t.Run("v"+v, func(t *testing.T) {
			topic := unique("tls")
			sub := subscriber5(t, b.addr(), topic)
			s := newSink(t, map[string]string{mqtt.KeyURL: tlsURL, mqtt.KeyVersion: v, mqtt.KeyTopic: topic,
				mqtt.KeyTLSCA: files.caPEM})
			require.NoError(t, s.Write(context.Background(), testEvent(t)))
			assert.Equal(t, topic, next(t, sub).topic)

			untrusting := newSink(t, map[string]string{mqtt.KeyURL: strings.Replace(tlsURL, "ssl://", "mqtts://", 1),
				mqtt.KeyVersion: v, mqtt.KeyTopic: topic})
			err := untrusting.Write(context.Background(), testEvent(t))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "certificate")
			assert.False(t, connector.IsPermanent(err))
		})
	}
}

// A broker that refuses the client: the sink's Connect fails the task (retrying cannot help); the source keeps
// reporting the refusal from Read, as it does for an unreachable broker.
func TestRefusedConnection(t *testing.T) {
	b := startBrokerWith(t, nil, false)
	for _, v := range []string{mqtt.Version5, mqtt.Version311} {
		t.Run("v"+v, func(t *testing.T) {
			cfg := map[string]string{mqtt.KeyURL: b.URL(), mqtt.KeyVersion: v, mqtt.KeyTopic: "t", mqtt.KeyTopics: "t",
				mqtt.KeyUsername: "nobody", mqtt.KeyPassword: "wrong"}
			s, err := mqtt.New(sinkValues(cfg), connector.Env{Egress: localBrokers, Connector: "refused"})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			err = s.Connect(context.Background())
			require.Error(t, err)
			assert.Contains(t, err.Error(), "refused the connection")

			src, err := mqtt.NewSource(sourceValues(cfg), connector.Env{Egress: localBrokers, Connector: "refused"})
			require.NoError(t, err)
			t.Cleanup(func() { _ = src.Close() })
			require.NoError(t, src.Connect(context.Background()))
			_, err = src.Read(context.Background())
			require.Error(t, err)
			assert.Contains(t, err.Error(), "refused the connection")
			assert.False(t, connector.IsPermanent(err))
		})
	}
}

// With MQTT 3.1.1 the sink and the source also reach a broker over WebSocket (ws://).
func TestWebSocket(t *testing.T) {
	b := startBroker(t, nil)
	wsURL := fmt.Sprintf("ws://127.0.0.1:%d/mqtt", b.wsPort)
	topic := unique("ws")
	src, err := mqtt.NewSource(sourceValues(map[string]string{mqtt.KeyURL: wsURL, mqtt.KeyVersion: mqtt.Version311,
		mqtt.KeyTopics: topic}), connector.Env{Egress: localBrokers, Connector: "ws"})
	require.NoError(t, err)
	require.NoError(t, src.Connect(context.Background()))
	t.Cleanup(func() { _ = src.Close() })
	s := newSink(t, map[string]string{mqtt.KeyURL: wsURL, mqtt.KeyVersion: mqtt.Version311, mqtt.KeyTopic: topic})
	require.NoError(t, s.Write(context.Background(), testEvent(t)))
	recs := readN(t, src, 1)
	assert.Equal(t, "e-1", recs[0].Event.ID(), "the structured event the sink published, read back by the source")
	require.NoError(t, src.Commit(context.Background(), recs))
}
