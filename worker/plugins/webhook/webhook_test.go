package webhook_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/connector/connectortest"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/webhook"
)

const (
	busID    = "b1"
	sourceID = "s1"
)

var names = stream.Names{Cluster: "hook"}

// intakePeer is the control plane's webhook endpoint as the connector sees it: it stores CloudEvents of type
// eventbridge:Events:HTTPEvent on the source's intake subject of a bus stream in the runtime's NATS, as the
// endpoint does. Stop deletes the bus stream (reads fail: no stream), remembering what it held; Start creates it
// again and stores what it held back, in order, so the stream has the same messages at the same sequences.
type intakePeer struct {
	t    *testing.T
	env  *jetstreamtest.Env
	held []*nats.Msg
}

func newIntakePeer(t *testing.T, env *jetstreamtest.Env) connectortest.SourcePeer {
	p := &intakePeer{t: t, env: env}
	p.Start()
	return p
}

func (p *intakePeer) Config() map[string]string {
	return map[string]string{webhook.KeySourceStream: names.BusStream(busID),
		webhook.KeySourceSubject: names.SourceSubject(busID, sourceID)}
}

func (p *intakePeer) Emit(t *testing.T, ids ...string) {
	for _, id := range ids {
		e := jetstreamtest.Event(id, webhook.EventType, map[string]any{"httpMethod": "POST", "path": "/webhook/putEvents",
			"body": map[string]any{"id": id}, "headers": map[string]any{}, "queryString": map[string]any{}})
		e.SetSource("eventbridge:webhook:" + sourceID)
		p.env.Publish(t, names.SourceSubject(busID, sourceID), e)
	}
}

func (p *intakePeer) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := p.env.JS.Stream(ctx, names.BusStream(busID))
	require.NoError(p.t, err)
	p.held = nil
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			break
		}
		p.held = append(p.held, &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
	}
	require.NoError(p.t, names.DeleteBusStream(ctx, p.env.JS, busID))
}

func (p *intakePeer) Start() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(p.t, names.EnsureBusStream(ctx, p.env.JS, busID, time.Hour, -1, 1))
	for _, m := range p.held {
		_, err := p.env.JS.PublishMsg(ctx, m)
		require.NoError(p.t, err)
	}
	p.held = nil
}

func TestSourceSuite(t *testing.T) {
	connectortest.RunSourceSuite(t, connectortest.SourceSuite{Plugin: webhook.Plugin(), NewPeer: newIntakePeer})
}

// The source moves only its own intake: not another source's, not the bus's other subjects.
func TestMovesOnlyItsIntake(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	require.NoError(t, names.EnsureBusStream(context.Background(), env.JS, busID, time.Hour, -1, 1))
	env.Publish(t, names.SourceSubject(busID, "other"), jetstreamtest.Event("other-1", webhook.EventType, nil))
	env.Publish(t, names.BusIn(busID), jetstreamtest.Event("in-1", "x", nil))
	env.Publish(t, names.SourceSubject(busID, sourceID), jetstreamtest.Event("mine-1", webhook.EventType, map[string]any{"n": 1}))

	p := webhook.Plugin()
	cfg := map[string]string{connector.KeyClass: webhook.Name, connector.KeyOutputSubject: names.BusIn(busID),
		connector.KeyOutputStream: names.BusStream(busID), webhook.KeySourceStream: names.BusStream(busID),
		webhook.KeySourceSubject: names.SourceSubject(busID, sourceID)}
	require.Empty(t, p.FullSpec().Validate(cfg))
	src, err := p.NewSource(p.FullSpec().Values(cfg), connector.Env{JetStream: env.JS, Connector: "c"})
	require.NoError(t, err)
	require.NoError(t, src.Connect(context.Background()))
	defer src.Close()
	recs, err := src.Read(context.Background())
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, "mine-1", recs[0].Event.ID())
	assert.Equal(t, webhook.EventType, recs[0].Event.Type())
	assert.JSONEq(t, `{"n": 1}`, string(recs[0].Event.Data()))
}

// Tasks other than 0 do not read: one reader keeps the intake's order.
func TestOnlyTaskZeroReads(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	require.NoError(t, names.EnsureBusStream(context.Background(), env.JS, busID, time.Hour, -1, 1))
	env.Publish(t, names.SourceSubject(busID, sourceID), jetstreamtest.Event("mine-1", webhook.EventType, nil))
	p := webhook.Plugin()
	cfg := map[string]string{connector.KeyClass: webhook.Name, webhook.KeySourceStream: names.BusStream(busID),
		webhook.KeySourceSubject: names.SourceSubject(busID, sourceID)}
	src, err := p.NewSource(p.FullSpec().Values(cfg), connector.Env{JetStream: env.JS, Connector: "c", Task: 1, Tasks: 2})
	require.NoError(t, err)
	require.NoError(t, src.Connect(context.Background()))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	recs, err := src.Read(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Empty(t, recs)
}

// A wrong webhook setting is refused through the runtime's validation, naming its key; good ones pass.
func TestConfigProblems(t *testing.T) {
	t.Parallel()
	reg := connector.NewRegistry()
	require.NoError(t, reg.Register(webhook.Plugin()))
	base := func(kv ...string) map[string]string {
		cfg := map[string]string{connector.KeyClass: webhook.Name, connector.KeyOutputSubject: "hook.bus.b1.in",
			connector.KeyOutputStream: "hook_BUS_b1", webhook.KeySourceStream: "hook_BUS_b1",
			webhook.KeySourceSubject: "hook.bus.b1.source.s1"}
		for i := 0; i+1 < len(kv); i += 2 {
			cfg[kv[i]] = kv[i+1]
		}
		return cfg
	}
	cases := []struct {
		name string
		cfg  map[string]string
		key  string
		want string
	}{
		{"bad method", base(webhook.KeyMethods, "POST,FETCH"), webhook.KeyMethods,
			`"FETCH" is not one of GET, POST, PUT, PATCH, DELETE`},
		{"no method", base(webhook.KeyMethods, " , "), webhook.KeyMethods, "names no method"},
		{"bad CIDR", base(webhook.KeyIPs, "10.0.0.0/33"), webhook.KeyIPs, `"10.0.0.0/33" is not a CIDR range`},
		{"bad IPv6 CIDR", base(webhook.KeyIPs, "2001:db8::/129"), webhook.KeyIPs, "is not a CIDR range"},
		{"bad IP", base(webhook.KeyIPs, "10.0.0.300"), webhook.KeyIPs, `"10.0.0.300" is not an IP address`},
		{"host name as IP", base(webhook.KeyIPs, "example.com"), webhook.KeyIPs, "is not an IP address"},
		{"referer with scheme", base(webhook.KeyReferers, "https://example.com"), webhook.KeyReferers,
			`"https://example.com" is not a host name`},
		{"referer wildcard inside", base(webhook.KeyReferers, "a.*.example.com"), webhook.KeyReferers, "is not a host name"},
		{"unknown scheme", base(webhook.KeySignatureScheme, "md5"), webhook.KeySignatureScheme, `"md5" is not one of`},
		{"scheme without secret", base(webhook.KeySignatureScheme, webhook.SchemeGitHub), webhook.KeySignatureSecret,
			"is required when http.signature.scheme is github"},
		{"standard-webhooks without whsec_", base(webhook.KeySignatureScheme, webhook.SchemeStandardWebhooks,
			webhook.KeySignatureSecret, "plain"), webhook.KeySignatureSecret, "whsec_ followed by the base64 key"},
		{"standard-webhooks with a bad key", base(webhook.KeySignatureScheme, webhook.SchemeStandardWebhooks,
			webhook.KeySignatureSecret, "whsec_!!!"), webhook.KeySignatureSecret, "is not base64"},
		{"standard-webhooks key without padding", base(webhook.KeySignatureScheme, webhook.SchemeStandardWebhooks,
			webhook.KeySignatureSecret, "whsec_YWJjZA"), webhook.KeySignatureSecret, "is not base64"},
		{"hmac-sha256 without header", base(webhook.KeySignatureScheme, webhook.SchemeHMACSHA256,
			webhook.KeySignatureSecret, "s3cret"), webhook.KeySignatureHeader, "is required when http.signature.scheme is hmac-sha256"},
		{"bad header name", base(webhook.KeySignatureScheme, webhook.SchemeHMACSHA256, webhook.KeySignatureSecret, "s3cret",
			webhook.KeySignatureHeader, "X Sig"), webhook.KeySignatureHeader, "is not an HTTP header name"},
		{"no intake subject", base(webhook.KeySourceSubject, ""), webhook.KeySourceSubject, "is required"},
		{"bad stream", base(webhook.KeySourceStream, "a.b"), webhook.KeySourceStream, "must not contain"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, errs := reg.Validate(c.cfg, connector.Env{})
			require.Len(t, errs, 1, "%v", errs)
			assert.Equal(t, c.key, errs[0].Key)
			assert.Contains(t, errs[0].Message, c.want)
		})
	}
	for name, cfg := range map[string]map[string]string{
		"defaults": base(),
		"everything": base(webhook.KeyMethods, "GET, post,PUT,,PATCH,DELETE", webhook.KeyIPs,
			"203.0.113.7, 10.0.0.0/8,2001:db8::/32,::1", webhook.KeyReferers, "example.com,*.Example.org",
			webhook.KeySignatureScheme, webhook.SchemeHMACSHA256, webhook.KeySignatureHeader, "X-Signature",
			webhook.KeySignatureSecret, "s3cret"),
		"github":            base(webhook.KeySignatureScheme, webhook.SchemeGitHub, webhook.KeySignatureSecret, "s3cret"),
		"standard-webhooks": base(webhook.KeySignatureScheme, webhook.SchemeStandardWebhooks, webhook.KeySignatureSecret, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
	} {
		_, errs := reg.Validate(cfg, connector.Env{})
		assert.Empty(t, errs, name)
	}
	f, ok := webhook.Plugin().Spec.Field(webhook.KeySignatureSecret)
	require.True(t, ok)
	assert.True(t, f.Secret, "the signing secret is stored encrypted")
}
