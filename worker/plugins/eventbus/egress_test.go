package eventbus_test

import (
	"context"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/egress"
	"github.com/eventbridge-go/eventbridge/worker/egress/egresstest"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/eventbus"
)

// secret is a password no error may show.
const secret = "hunter2-do-not-show"

// newRemoteSource builds an eventbus source reading stream PEER of natsURL under policy.
func newRemoteSource(t *testing.T, natsURL string, policy egress.Config) connector.Source {
	t.Helper()
	p := eventbus.SourcePlugin()
	cfg := map[string]string{connector.KeyClass: eventbus.SourceName, connector.KeyOutputSubject: "x.bus.b.in",
		connector.KeyOutputStream: "X_BUS_b", eventbus.KeySourceStream: "PEER", eventbus.KeyNATSURL: natsURL,
		eventbus.KeyNATSUser: "u", eventbus.KeyNATSPassword: secret}
	require.Empty(t, p.FullSpec().Validate(cfg))
	src, err := p.NewSource(p.FullSpec().Values(cfg), connector.Env{Egress: policy, Connector: "egress"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = src.Close() })
	return src
}

// checkRefused requires a source of natsURL to be refused by the egress guard at Connect, with an error that
// shows no password.
func checkRefused(t *testing.T, natsURL string, policy egress.Config) {
	t.Helper()
	src := newRemoteSource(t, natsURL, policy)
	err := src.Connect(context.Background())
	require.Error(t, err, natsURL)
	assert.ErrorIs(t, err, egress.ErrRefused, natsURL)
	assert.True(t, connector.IsPermanent(err), "%s: %v", natsURL, err)
	assert.NotContains(t, err.Error(), secret)
	require.NoError(t, src.Close())
}

// TestEgressCorpus: the external NATS mode (nats.url) refuses every blocked form of a server address, over every
// scheme nats.go knows, before any connection is attempted.
func TestEgressCorpus(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	cases, names := egresstest.Corpus()
	require.GreaterOrEqual(t, len(cases), 300)
	policy := egress.Config{Lookup: egresstest.NewResolver(names).Lookup, Dial: trap.Dial}
	for _, scheme := range []string{"nats", "tls", "ws", "wss"} {
		t.Run(scheme, func(t *testing.T) {
			for _, c := range cases {
				checkRefused(t, scheme+"://"+c.HostPort(trap.Port()), policy)
			}
		})
	}
	// Credentials in the URL are not shown either, and every URL of a list is refused.
	checkRefused(t, "nats://u:"+secret+"@127.0.0.1:"+trap.Port()+",nats://10.0.0.1:4222", policy)
	assert.Zero(t, trap.Dials(), "connection attempts")
	assert.Zero(t, trap.Accepts(), "connections accepted")
}

// TestEgressListener: with the guard's own dialer, a listener of the test on loopback sees no connection,
// whatever the form of its address.
func TestEgressListener(t *testing.T) {
	t.Parallel()
	trap := egresstest.NewTrap(t)
	for _, host := range []string{"127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "2130706433", "127.1", "0.0.0.0", "[::1]"} {
		checkRefused(t, "nats://"+host+":"+trap.Port(), egress.Config{})
	}
	assert.Zero(t, trap.Accepts(), "connections accepted")
}

// TestEgressAllow: an exception for 127.0.0.1 lets the source read a NATS server of its own there, and nothing
// else: not another port's exception, not localhost (also ::1), not without an exception.
func TestEgressAllow(t *testing.T) {
	t.Parallel()
	peer := newRemotePeer(t, nil).(*remotePeer)
	peer.Emit(t, "a-1")
	u, err := url.Parse(peer.url)
	require.NoError(t, err)
	for _, policy := range []egress.Config{
		{Allow: []string{"127.0.0.1"}}, {Allow: []string{u.Host}}, {Allow: []string{"127.0.0.0/8"}}, {AllowPrivate: true},
	} {
		src := newRemoteSource(t, peer.url, policy)
		require.NoError(t, src.Connect(context.Background()), "%+v", policy)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		recs, err := src.Read(ctx)
		cancel()
		require.NoError(t, err, "%+v", policy)
		assert.Equal(t, "a-1", recs[0].Event.ID())
	}
	checkRefused(t, peer.url, egress.Config{})
	checkRefused(t, peer.url, egress.Config{Allow: []string{"127.0.0.1:1"}})
	checkRefused(t, peer.url, egress.Config{Allow: []string{"127.0.0.2", "10.0.0.0/8"}})
	checkRefused(t, "nats://localhost:"+u.Port(), egress.Config{Allow: []string{"127.0.0.1"}})
}

// TestEgressReconnect: every reconnection goes through the guard. A server name that resolved to a public address
// (standing for the test's server) and then to 127.0.0.1 cannot take the source's reconnection there: Read fails
// permanently with the refusal, and no connection is attempted.
func TestEgressReconnect(t *testing.T) {
	t.Parallel()
	peer := newRemotePeer(t, nil).(*remotePeer)
	peer.Emit(t, "a-1")
	u, err := url.Parse(peer.url)
	require.NoError(t, err)
	trap := egresstest.NewTrap(t)
	trap.Pass("8.8.8.8:4222", u.Host)
	resolver := egresstest.NewResolver(map[string][]netip.Addr{"nats.example": {netip.MustParseAddr("8.8.8.8")}})
	src := newRemoteSource(t, "nats://nats.example:4222", egress.Config{Lookup: resolver.Lookup, Dial: trap.Dial})
	require.NoError(t, src.Connect(context.Background()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs, err := src.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, "a-1", recs[0].Event.ID())

	resolver.Set("nats.example", netip.MustParseAddr("127.0.0.1"))
	peer.Stop() // drops the connection; nats.go reconnects through the guard
	peer.Start()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := src.Read(ctx)
		return err != nil && strings.Contains(err.Error(), "egress") && connector.IsPermanent(err)
	}, 30*time.Second, 50*time.Millisecond, "the reconnection is refused")
	assert.Zero(t, trap.Dials(), "no connection to 127.0.0.1 attempted")
	assert.Zero(t, trap.Accepts())
}

// The worker's own NATS (nats.url empty) is the installation's: it is not guarded, even on loopback.
func TestEgressOwnNATSIsNotGuarded(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	env.Stream(t, "OWN", "own.>")
	env.Publish(t, "own.x", jetstreamtest.Event("own-1", "t", map[string]any{"n": 1}))
	p := eventbus.SourcePlugin()
	cfg := map[string]string{connector.KeyClass: eventbus.SourceName, connector.KeyOutputSubject: "x.bus.b.in",
		connector.KeyOutputStream: "X_BUS_b", eventbus.KeySourceStream: "OWN"}
	src, err := p.NewSource(p.FullSpec().Values(cfg), connector.Env{JetStream: env.JS, Egress: egress.Config{}, Connector: "own"})
	require.NoError(t, err)
	require.NoError(t, src.Connect(context.Background()))
	t.Cleanup(func() { _ = src.Close() })
	recs, err := src.Read(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "own-1", recs[0].Event.ID())
}
