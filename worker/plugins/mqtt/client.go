package mqtt

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	mqtt3 "github.com/eclipse/paho.mqtt.golang"
	packets3 "github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/eventbridge-go/eventbridge/worker/egress"
)

// message is one PUBLISH received from the broker.
type message struct {
	topic       string
	payload     []byte
	qos         byte
	retain      bool
	packetID    uint16
	contentType string      // MQTT 5 Content Type
	user        [][2]string // MQTT 5 user properties, in order
	// ack acknowledges the message to the broker (PUBACK, or PUBREC for QoS 2); nil for QoS 0.
	ack func() error
}

// outMessage is one PUBLISH to send.
type outMessage struct {
	topic       string
	payload     []byte
	qos         byte
	retain      bool
	contentType string
	user        [][2]string
}

// conn is one MQTT connection, of either protocol version. It is used by one source or sink; publish is safe for
// concurrent use.
type conn interface {
	// subscribe subscribes to filters with qos and waits for the SUBACK; a refused filter is an error naming it.
	subscribe(ctx context.Context, filters []string, qos byte) error
	// publish sends m and, for QoS 1 and 2, waits for the broker's acknowledgement (PUBACK or PUBCOMP).
	publish(ctx context.Context, m outMessage) error
	// dead is closed when the connection is lost; cause tells why.
	dead() <-chan struct{}
	cause() error
	// close disconnects; acknowledgements given before are sent first.
	close()
}

// connectConfig says how to connect.
type connectConfig struct {
	options
	// clean asks for a new session; false resumes the session of the client id (and keeps it for
	// sessionExpiry after the connection closes, in MQTT 5).
	clean         bool
	sessionExpiry time.Duration
	// manualAck leaves the acknowledgement of received QoS 1 and 2 messages to message.ack.
	manualAck bool
	// deliver receives every message; it may block (back-pressure) until stop is closed.
	deliver func(message)
}

// permanentConnectError is a refusal of the broker that retrying does not cure (bad credentials, not authorized,
// bad client id, unsupported protocol version).
type permanentConnectError struct{ err error }

func (e *permanentConnectError) Error() string { return e.err.Error() }
func (e *permanentConnectError) Unwrap() error { return e.err }

// dial connects with cfg's protocol version.
func dial(ctx context.Context, cfg connectConfig) (conn, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.connectTimeout)
	defer cancel()
	if cfg.version == Version311 {
		return dial311(ctx, cfg)
	}
	return dial5(ctx, cfg)
}

// deathNote records the first cause of a lost connection.
type deathNote struct {
	once sync.Once
	ch   chan struct{}
	mu   sync.Mutex
	err  error
}

func newDeathNote() *deathNote { return &deathNote{ch: make(chan struct{})} }

func (d *deathNote) die(err error) {
	d.once.Do(func() {
		if err == nil {
			err = errors.New("connection closed")
		}
		d.mu.Lock()
		d.err = err
		d.mu.Unlock()
		close(d.ch)
	})
}

func (d *deathNote) dead() <-chan struct{} { return d.ch }

func (d *deathNote) cause() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// ---- MQTT 5 (paho.golang) ----

// ackInterval is how often paho.golang sends the acknowledgements given with Ack, in order.
const ackInterval = 5 * time.Millisecond

type conn5 struct {
	*deathNote
	cli *paho.Client

	mu      sync.Mutex
	lastAck time.Time
}

func dial5(ctx context.Context, cfg connectConfig) (conn, error) {
	nc, u, err := cfg.dialNet(ctx)
	if err != nil {
		return nil, err
	}
	if isTLS(u) {
		nc = packets.NewThreadSafeConn(nc)
	}
	c := &conn5{deathNote: newDeathNote()}
	c.cli = paho.NewClient(paho.ClientConfig{
		ClientID: cfg.clientID,
		Conn:     nc,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			if cfg.deliver != nil {
				cfg.deliver(c.toMessage(pr.Packet, cfg.manualAck))
			}
			return true, nil
		}},
		OnClientError:              func(err error) { c.die(err) },
		OnServerDisconnect:         func(d *paho.Disconnect) { c.die(disconnectError(d)) },
		EnableManualAcknowledgment: cfg.manualAck,
		SendAcksInterval:           ackInterval,
		PacketTimeout:              cfg.connectTimeout,
	})
	cp := &paho.Connect{
		ClientID:   cfg.clientID,
		KeepAlive:  uint16(cfg.keepAlive / time.Second),
		CleanStart: cfg.clean,
		Properties: &paho.ConnectProperties{},
	}
	if !cfg.clean {
		exp := uint32(cfg.sessionExpiry / time.Second)
		cp.Properties.SessionExpiryInterval = &exp
	}
	if cfg.username != "" {
		cp.Username, cp.UsernameFlag = cfg.username, true
	}
	if cfg.password != "" {
		cp.Password, cp.PasswordFlag = []byte(cfg.password), true
	}
	ca, err := c.cli.Connect(ctx, cp)
	if err != nil {
		_ = nc.Close()
		if ca != nil && isPermanentConnack(ca.ReasonCode) {
			return nil, &permanentConnectError{fmt.Errorf("the broker %s refused the connection: reason 0x%02x %s",
				u.Redacted(), ca.ReasonCode, reasonString(ca.Properties))}
		}
		return nil, fmt.Errorf("connecting to %s: %w", u.Redacted(), err)
	}
	go func() {
		<-c.cli.Done()
		c.die(errors.New("connection closed"))
	}()
	return c, nil
}

func reasonString(p *paho.ConnackProperties) string {
	if p == nil {
		return ""
	}
	return p.ReasonString
}

// isPermanentConnack: malformed, unsupported protocol version, client id not valid, bad user name or password, not
// authorized, banned, bad authentication method.
func isPermanentConnack(code byte) bool {
	switch code {
	case 0x81, 0x84, 0x85, 0x86, 0x87, 0x8A, 0x8C:
		return true
	}
	return false
}

func disconnectError(d *paho.Disconnect) error {
	if d == nil {
		return errors.New("the broker disconnected")
	}
	reason := ""
	if d.Properties != nil {
		reason = d.Properties.ReasonString
	}
	return fmt.Errorf("the broker disconnected: reason 0x%02x %s", d.ReasonCode, reason)
}

func (c *conn5) toMessage(p *paho.Publish, manual bool) message {
	m := message{topic: p.Topic, payload: p.Payload, qos: p.QoS, retain: p.Retain, packetID: p.PacketID}
	if p.Properties != nil {
		m.contentType = p.Properties.ContentType
		for _, up := range p.Properties.User {
			m.user = append(m.user, [2]string{up.Key, up.Value})
		}
	}
	if manual && p.QoS > 0 {
		m.ack = func() error {
			c.mu.Lock()
			c.lastAck = time.Now()
			c.mu.Unlock()
			return c.cli.Ack(p)
		}
	}
	return m
}

func (c *conn5) subscribe(ctx context.Context, filters []string, qos byte) error {
	s := &paho.Subscribe{}
	for _, f := range filters {
		// Retain handling 1: retained messages are sent when the subscription is new, not again on each reconnection.
		s.Subscriptions = append(s.Subscriptions, paho.SubscribeOptions{Topic: f, QoS: qos, RetainHandling: 1})
	}
	sa, err := c.cli.Subscribe(ctx, s)
	if err != nil {
		if sa != nil {
			return subackError(filters, sa.Reasons)
		}
		return fmt.Errorf("subscribing: %w", err)
	}
	return subackError(filters, sa.Reasons)
}

func subackError(filters []string, reasons []byte) error {
	var errs []error
	for i, r := range reasons {
		if r >= 0x80 && i < len(filters) {
			errs = append(errs, fmt.Errorf("the broker refused the subscription to %q (reason 0x%02x)", filters[i], r))
		}
	}
	return errors.Join(errs...)
}

// publishError is an MQTT 5 refusal of a PUBLISH (PUBACK or PUBREC reason code).
type publishError struct {
	code   byte
	reason string
}

func (e *publishError) Error() string {
	return fmt.Sprintf("the broker refused the message: reason 0x%02x %s", e.code, e.reason)
}

// permanent says whether the same message would be refused again: topic name invalid, packet too large, payload
// format invalid, not authorized.
func (e *publishError) permanent() bool {
	switch e.code {
	case 0x87, 0x90, 0x95, 0x99:
		return true
	}
	return false
}

func (c *conn5) publish(ctx context.Context, m outMessage) error {
	p := &paho.Publish{Topic: m.topic, QoS: m.qos, Retain: m.retain, Payload: m.payload,
		Properties: &paho.PublishProperties{ContentType: m.contentType}}
	for _, kv := range m.user {
		p.Properties.User = append(p.Properties.User, paho.UserProperty{Key: kv[0], Value: kv[1]})
	}
	resp, err := c.cli.Publish(ctx, p)
	if err != nil {
		if resp != nil && resp.ReasonCode >= 0x80 {
			return &publishError{code: resp.ReasonCode, reason: pubReason(resp)}
		}
		return err
	}
	if resp != nil && resp.ReasonCode >= 0x80 {
		return &publishError{code: resp.ReasonCode, reason: pubReason(resp)}
	}
	return nil
}

func pubReason(r *paho.PublishResponse) string {
	if r.Properties == nil {
		return ""
	}
	return r.Properties.ReasonString
}

// close waits until the acknowledgements given last were sent (paho.golang sends them every ackInterval), then
// disconnects normally: the session stays on the broker for its expiry interval.
func (c *conn5) close() {
	c.mu.Lock()
	wait := time.Until(c.lastAck.Add(4 * ackInterval))
	c.mu.Unlock()
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-c.dead():
		}
	}
	_ = c.cli.Disconnect(&paho.Disconnect{ReasonCode: 0})
	c.die(errors.New("closed"))
}

// ---- MQTT 3.1.1 (paho.mqtt.golang) ----

type conn311 struct {
	*deathNote
	cli mqtt3.Client
}

func dial311(ctx context.Context, cfg connectConfig) (conn, error) {
	c := &conn311{deathNote: newDeathNote()}
	o := mqtt3.NewClientOptions()
	for _, u := range cfg.urls {
		o.AddBroker(u.String())
	}
	// paho.mqtt.golang tries the brokers in turn with this function, which opens every connection through the
	// guard (its own would resolve and connect by itself, through any proxy of the environment). The client never
	// reconnects by itself (auto-reconnect off): a reconnection is a new dial311, guarded the same way. paho keeps
	// only the last broker's error; the guard's refusals are kept here so that one is never hidden.
	var refusedMu sync.Mutex
	var refused []error
	o.SetCustomOpenConnectionFn(func(u *url.URL, _ mqtt3.ClientOptions) (net.Conn, error) {
		nc, err := cfg.dialURL(ctx, u)
		if err != nil && errors.Is(err, egress.ErrRefused) {
			refusedMu.Lock()
			refused = append(refused, err)
			refusedMu.Unlock()
		}
		return nc, err
	})
	o.SetProtocolVersion(4)
	o.SetClientID(cfg.clientID)
	o.SetUsername(cfg.username)
	o.SetPassword(cfg.password)
	o.SetCleanSession(cfg.clean)
	o.SetKeepAlive(cfg.keepAlive)
	o.SetConnectTimeout(cfg.connectTimeout)
	o.SetAutoReconnect(false)
	o.SetConnectRetry(false)
	o.SetOrderMatters(true)
	o.SetAutoAckDisabled(cfg.manualAck)
	o.SetDefaultPublishHandler(func(_ mqtt3.Client, msg mqtt3.Message) {
		if cfg.deliver != nil {
			cfg.deliver(toMessage311(msg, cfg.manualAck))
		}
	})
	o.SetConnectionLostHandler(func(_ mqtt3.Client, err error) { c.die(err) })
	c.cli = mqtt3.NewClient(o)
	tok := c.cli.Connect()
	select {
	case <-tok.Done():
	case <-ctx.Done():
		c.cli.Disconnect(0)
		return nil, fmt.Errorf("connecting to %s: %w", brokers(cfg), ctx.Err())
	}
	if err := tok.Error(); err != nil {
		if isPermanent311(err) {
			return nil, &permanentConnectError{fmt.Errorf("the broker %s refused the connection: %w", brokers(cfg), err)}
		}
		refusedMu.Lock()
		defer refusedMu.Unlock()
		if len(refused) > 0 {
			err = errors.Join(append(refused, err)...)
		}
		return nil, fmt.Errorf("connecting to %s: %w", brokers(cfg), err)
	}
	return c, nil
}

func brokers(cfg connectConfig) string {
	var s []string
	for _, u := range cfg.urls {
		s = append(s, u.Redacted())
	}
	return strings.Join(s, ",")
}

func isPermanent311(err error) bool {
	return errors.Is(err, packets3.ErrorRefusedBadProtocolVersion) || errors.Is(err, packets3.ErrorRefusedIDRejected) ||
		errors.Is(err, packets3.ErrorRefusedBadUsernameOrPassword) || errors.Is(err, packets3.ErrorRefusedNotAuthorised)
}

func toMessage311(msg mqtt3.Message, manual bool) message {
	m := message{topic: msg.Topic(), payload: msg.Payload(), qos: msg.Qos(), retain: msg.Retained(), packetID: msg.MessageID()}
	if manual && msg.Qos() > 0 {
		m.ack = func() error { msg.Ack(); return nil }
	}
	return m
}

func (c *conn311) subscribe(ctx context.Context, filters []string, qos byte) error {
	subs := map[string]byte{}
	for _, f := range filters {
		subs[f] = qos
	}
	tok := c.cli.SubscribeMultiple(subs, nil)
	if err := waitToken(ctx, tok); err != nil {
		return fmt.Errorf("subscribing: %w", err)
	}
	if st, ok := tok.(*mqtt3.SubscribeToken); ok {
		var errs []error
		for f, code := range st.Result() {
			if code >= 0x80 {
				errs = append(errs, fmt.Errorf("the broker refused the subscription to %q", f))
			}
		}
		return errors.Join(errs...)
	}
	return nil
}

func waitToken(ctx context.Context, tok mqtt3.Token) error {
	select {
	case <-tok.Done():
		return tok.Error()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *conn311) publish(ctx context.Context, m outMessage) error {
	tok := c.cli.Publish(m.topic, m.qos, m.retain, m.payload)
	return waitToken(ctx, tok)
}

// close sends what waits (acknowledgements included) for up to 250ms, then disconnects; the session stays.
func (c *conn311) close() {
	c.cli.Disconnect(250)
	c.die(errors.New("closed"))
}
