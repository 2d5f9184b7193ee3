package mqtt_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/egress"
	"github.com/eventbridge-go/eventbridge/worker/egress/egresstest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/mqtt"
)

// secret is a password no error may show.
const secret = "hunter2-do-not-show"

// brokerConfig points a sink and a source at url.
func brokerConfig(url, version string) map[string]string {
	return map[string]string{mqtt.KeyURL: url, mqtt.KeyVersion: version, mqtt.KeyTopic: "t", mqtt.KeyTopics: "t",
		mqtt.KeyUsername: "u", mqtt.KeyPassword: secret, mqtt.KeyConnectTimeout: "2s"}
}

// checkRefused connects a sink and a source to url under policy and requires both to be refused by the egress
// guard: Connect fails the task, Write and Read give up at once (permanent), and no error shows the password.
func checkRefused(t *testing.T, url, version string, policy egress.Config) {
	t.Helper()
	cfg := brokerConfig(url, version)
	require.Empty(t, mqtt.Plugin().Spec.Validate(cfg), url)
	s, err := mqtt.New(sinkValues(cfg), connector.Env{Egress: policy, Connector: "egress"})
	require.NoError(t, err, url)
	defer func() { _ = s.Close() }()
	err = s.Connect(context.Background())
	assert.ErrorIs(t, err, egress.ErrRefused, "sink Connect %s", url)
	err = s.Write(context.Background(), testEvent(t))
	assert.ErrorIs(t, err, egress.ErrRefused, "sink Write %s", url)
	assert.True(t, connector.IsPermanent(err), "sink Write %s: %v", url, err)
	if err != nil {
		assert.NotContains(t, err.Error(), secret)
	}

	src, err := mqtt.NewSource(sourceValues(cfg), connector.Env{Egress: policy, Connector: "egress"})
	require.NoError(t, err, url)
	defer func() { _ = src.Close() }()
	err = src.Connect(context.Background())
	assert.ErrorIs(t, err, egress.ErrRefused, "source Connect %s", url)
	_, err = src.Read(context.Background())
	assert.ErrorIs(t, err, egress.ErrRefused, "source Read %s", url)
	assert.True(t, connector.IsPermanent(err), "source Read %s: %v", url, err)
	if err != nil {
		assert.NotContains(t, err.Error(), secret)
	}
}

// schemes are the broker URL schemes of each protocol version.
var schemes = map[string][]string{
	mqtt.Version5:   {"tcp", "mqtt", "ssl", "mqtts"},
	mqtt.Version311: {"tcp", "ssl", "ws", "wss"},
}

// TestEgressCorpus: a sink and a source of either version, over every scheme, refuse every blocked form of a
// broker address (the egress corpus: literal, encoded, localhost names, names resolving to blocked addresses)
// before any connection is attempted.
func TestEgressCorpus(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	cases, names := egresstest.Corpus()
	require.GreaterOrEqual(t, len(cases), 300)
	policy := egress.Config{Lookup: egresstest.NewResolver(names).Lookup, Dial: trap.Dial}
	for _, v := range []string{mqtt.Version5, mqtt.Version311} {
		for _, scheme := range schemes[v] {
			t.Run("v"+v+"/"+scheme, func(t *testing.T) {
				t.Parallel()
				for _, c := range cases {
					checkRefused(t, scheme+"://"+c.HostPort(trap.Port()), v, policy)
				}
			})
		}
	}
	t.Cleanup(func() {
		assert.Zero(t, trap.Dials(), "connection attempts")
		assert.Zero(t, trap.Accepts(), "connections accepted")
	})
}

// TestEgressListener: with the guard's own dialer, a listener of the test on loopback sees no connection from a
// sink or a source of either version, whatever the form of its address and the scheme.
func TestEgressListener(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	p := trap.Port()
	for _, v := range []string{mqtt.Version5, mqtt.Version311} {
		for _, scheme := range schemes[v] {
			for _, host := range []string{"127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "2130706433", "127.1", "0.0.0.0"} {
				checkRefused(t, fmt.Sprintf("%s://%s:%s", scheme, host, p), v, egress.Config{})
			}
		}
	}
	assert.Zero(t, trap.Accepts(), "connections accepted")
}

// TestEgressAllow: an exception for 127.0.0.1 lets a sink and a source reach a private broker there (over TCP,
// TLS and, with 3.1.1, WebSocket), and nothing else: not 127.0.0.2, not ::1, not localhost (which is also ::1).
func TestEgressAllow(t *testing.T) {
	files := newTLSFiles(t)
	b := startBroker(t, files)
	port := fmt.Sprint(b.port)
	urls := map[string][]string{
		mqtt.Version5:   {b.URL(), fmt.Sprintf("ssl://127.0.0.1:%d", b.tlsPort)},
		mqtt.Version311: {b.URL(), fmt.Sprintf("ssl://127.0.0.1:%d", b.tlsPort), fmt.Sprintf("ws://127.0.0.1:%d/mqtt", b.wsPort)},
	}
	for _, v := range []string{mqtt.Version5, mqtt.Version311} {
		t.Run("v"+v, func(t *testing.T) {
			for _, u := range urls[v] {
				topic := unique("allow")
				cfg := map[string]string{mqtt.KeyURL: u, mqtt.KeyVersion: v, mqtt.KeyTopic: topic, mqtt.KeyTopics: topic,
					mqtt.KeyTLSCA: files.caPEM}
				src, err := mqtt.NewSource(sourceValues(cfg), connector.Env{Egress: localBrokers, Connector: unique("allow")})
				require.NoError(t, err)
				t.Cleanup(func() { _ = src.Close() })
				require.NoError(t, src.Connect(context.Background()), u)
				s, err := mqtt.New(sinkValues(cfg), connector.Env{Egress: localBrokers, Connector: unique("allow")})
				require.NoError(t, err)
				t.Cleanup(func() { _ = s.Close() })
				require.NoError(t, s.Connect(context.Background()), u)
				require.NoError(t, s.Write(context.Background(), testEvent(t)), u)
				assert.Equal(t, "e-1", readN(t, src, 1)[0].Event.ID(), u)
			}
			for _, host := range []string{"127.0.0.2", "[::1]", "localhost"} {
				checkRefused(t, "tcp://"+host+":"+port, v, localBrokers)
			}
			checkRefused(t, b.URL(), v, egress.Config{Allow: []string{"127.0.0.1:1"}})
			checkRefused(t, b.URL(), v, egress.Config{})
		})
	}
}

// TestEgressReconnect: every reconnection goes through the guard. A broker name that resolved to a public address
// (standing for the test's broker) and then to 127.0.0.1 cannot take the sink's or the source's next connection
// there: it is refused, and no connection is attempted.
func TestEgressReconnect(t *testing.T) {
	b := startBroker(t, nil)
	for _, v := range []string{mqtt.Version5, mqtt.Version311} {
		t.Run("v"+v, func(t *testing.T) {
			trap := egresstest.NewTrap(t)
			trap.Pass("8.8.8.8:1883", b.addr())
			resolver := egresstest.NewResolver(map[string][]netip.Addr{"broker.example": {netip.MustParseAddr("8.8.8.8")}})
			policy := egress.Config{Lookup: resolver.Lookup, Dial: trap.Dial}
			topic := unique("rebind")
			cfg := map[string]string{mqtt.KeyURL: "tcp://broker.example:1883", mqtt.KeyVersion: v, mqtt.KeyTopic: topic,
				mqtt.KeyTopics: topic, mqtt.KeyConnectTimeout: "2s"}
			src, err := mqtt.NewSource(sourceValues(cfg), connector.Env{Egress: policy, Connector: unique("rebind")})
			require.NoError(t, err)
			t.Cleanup(func() { _ = src.Close() })
			require.NoError(t, src.Connect(context.Background()))
			s, err := mqtt.New(sinkValues(cfg), connector.Env{Egress: policy, Connector: unique("rebind")})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			require.NoError(t, s.Write(context.Background(), testEvent(t)))
			assert.Len(t, readN(t, src, 1), 1)

			resolver.Set("broker.example", netip.MustParseAddr("127.0.0.1"))
			b.Stop() // drops both connections
			b.Start()
			require.Eventually(t, func() bool {
				err := s.Write(context.Background(), testEvent(t))
				return err != nil && strings.Contains(err.Error(), "egress") && connector.IsPermanent(err)
			}, 30*time.Second, 50*time.Millisecond, "the sink's reconnection is refused")
			require.Eventually(t, func() bool {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				_, err := src.Read(ctx)
				return err != nil && strings.Contains(err.Error(), "egress") && connector.IsPermanent(err)
			}, 30*time.Second, 50*time.Millisecond, "the source's reconnection is refused")
			assert.Zero(t, trap.Dials(), "no connection to 127.0.0.1 attempted")
			assert.Zero(t, trap.Accepts())
		})
	}
}
