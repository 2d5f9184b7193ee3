package mqtt_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	mqtt3 "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/listener/listenertest"
	"github.com/eventbridge-go/eventbridge/worker/egress"
)

// localBrokers is the egress policy of the tests' plugins: every broker of the tests listens on 127.0.0.1, which
// the egress guard refuses unless allowed.
var localBrokers = egress.Config{Allow: []string{"127.0.0.1"}}

// sharedBrokerAddr is the Mosquitto broker of the machine (.ci/run starts it).
const sharedBrokerAddr = "127.0.0.1:1883"

// sharedBroker returns the URL of the machine's broker; tests on it use topics and client ids of their own.
func sharedBroker(t *testing.T) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", sharedBrokerAddr, 2*time.Second)
	if err != nil {
		t.Skipf("no MQTT broker answers on %s (.ci/run starts Mosquitto there): %v", sharedBrokerAddr, err)
	}
	_ = c.Close()
	return "tcp://" + sharedBrokerAddr
}

// unique returns a name no other test uses.
func unique(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// broker is a Mosquitto process of one test, on a free loopback port, with its own persistence directory: Stop
// and Start restart it on the same port with the sessions and messages it held.
type broker struct {
	t       testing.TB
	bin     string
	dir     string
	port    int
	tlsPort int // 0: no TLS listener
	tlsConf string
	wsPort  int // a WebSocket listener

	mu  sync.Mutex
	cmd *exec.Cmd
}

// mosquittoBin finds the Mosquitto executable, or skips the test saying why.
func mosquittoBin(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("mosquitto")
	if err != nil {
		t.Skip("mosquitto is not installed (.ci/run installs the Debian package mosquitto)")
	}
	return p
}

// startBroker starts a private broker that accepts anonymous clients; tlsFiles, when set, adds a TLS listener
// with those PEM files.
func startBroker(t testing.TB, tlsFiles *tlsFiles) *broker {
	t.Helper()
	return startBrokerWith(t, tlsFiles, true)
}

// startBrokerWith is startBroker; anonymous false refuses every client (no password file: nobody is known).
func startBrokerWith(t testing.TB, tlsFiles *tlsFiles, anonymous bool) *broker {
	t.Helper()
	b := &broker{t: t, bin: mosquittoBin(t), dir: t.TempDir(), port: listenertest.Port(t)}
	if tlsFiles != nil {
		b.tlsPort = listenertest.Port(t)
		b.tlsConf = fmt.Sprintf("listener %d 127.0.0.1\ncafile %s\ncertfile %s\nkeyfile %s\n",
			b.tlsPort, tlsFiles.ca, tlsFiles.cert, tlsFiles.key)
	}
	b.wsPort = listenertest.Port(t)
	b.tlsConf += fmt.Sprintf("listener %d 127.0.0.1\nprotocol websockets\n", b.wsPort)
	conf := fmt.Sprintf("per_listener_settings false\nmax_queued_messages 0\nallow_anonymous %t\npersistence true\npersistence_location %s/\n"+
		"log_dest file %s\nlistener %d 127.0.0.1\n%s",
		anonymous, b.dir, filepath.Join(b.dir, "mosquitto.log"), b.port, b.tlsConf)
	if os.Geteuid() == 0 {
		conf = "user root\n" + conf // keeps the rights to the test's directory
	}
	require.NoError(t, os.WriteFile(filepath.Join(b.dir, "mosquitto.conf"), []byte(conf), 0o600))
	b.Start()
	t.Cleanup(b.Stop)
	return b
}

func (b *broker) addr() string { return "127.0.0.1:" + strconv.Itoa(b.port) }

// URL is the broker's plain TCP URL.
func (b *broker) URL() string { return "tcp://" + b.addr() }

// Start starts the stopped broker and waits until it accepts connections.
func (b *broker) Start() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd != nil {
		return
	}
	cmd := exec.Command(b.bin, "-c", filepath.Join(b.dir, "mosquitto.conf"))
	out, err := os.OpenFile(filepath.Join(b.dir, "stdout.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(b.t, err)
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(b.t, cmd.Start())
	b.cmd = cmd
	deadline := time.Now().Add(15 * time.Second)
	ports := []int{b.port, b.wsPort}
	if b.tlsPort != 0 {
		ports = append(ports, b.tlsPort)
	}
	for {
		var err error
		for len(ports) > 0 && err == nil {
			var c net.Conn
			if c, err = net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(ports[0]), time.Second); err == nil {
				_ = c.Close()
				ports = ports[1:]
			}
		}
		if len(ports) == 0 {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(b.dir, "mosquitto.log"))
			std, _ := os.ReadFile(filepath.Join(b.dir, "stdout.log"))
			b.t.Fatalf("mosquitto did not start on %s: %v\n%s\n%s", b.addr(), err, log, std)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops the broker (SIGTERM: it saves what it holds) and waits for it to exit. Mosquitto 2.0 notices a
// SIGTERM only when its event loop wakes up: a SIGTERM that arrives while it waits for events with nothing to do
// was seen to leave it running for 10 minutes. A connection to its port wakes it, once a second, and after 20 s
// it is killed.
func (b *broker) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil {
		return
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan struct{})
	go func() {
		_ = b.cmd.Wait()
		close(exited)
	}()
	wake := time.NewTicker(time.Second)
	defer wake.Stop()
	kill := time.After(20 * time.Second)
	for waiting := true; waiting; {
		select {
		case <-exited:
			waiting = false
		case <-wake.C:
			if c, err := net.DialTimeout("tcp", b.addr(), time.Second); err == nil {
				_ = c.Close()
			}
		case <-kill:
			_ = b.cmd.Process.Kill()
			<-exited
			waiting = false
		}
	}
	b.cmd = nil
}

// holdProxy forwards TCP connections to a broker and, while holding, keeps every PUBLISH from a client (and what
// follows it on that connection) waiting: the broker neither receives nor acknowledges it until release.
type holdProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	cond    *sync.Cond
	holding bool
	held    int
	conns   map[net.Conn]bool
}

func startProxy(t *testing.T, target string) *holdProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &holdProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.cond = sync.NewCond(&p.mu)
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.release()
		p.mu.Lock()
		for c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
	})
	return p
}

func (p *holdProxy) URL() string { return "tcp://" + p.ln.Addr().String() }

func (p *holdProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *holdProxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = true
	}
}

func (p *holdProxy) handle(client net.Conn) {
	up, err := net.DialTimeout("tcp", p.target, 2*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	p.track(client, up)
	closeBoth := func() { _ = client.Close(); _ = up.Close() }
	go func() {
		_, _ = io.Copy(client, up)
		closeBoth()
	}()
	defer closeBoth()
	r := bufio.NewReader(client)
	for {
		pkt, err := readPacket(r)
		if err != nil {
			return
		}
		if pkt[0]>>4 == 3 { // PUBLISH
			p.mu.Lock()
			if p.holding {
				p.held++
				for p.holding {
					p.cond.Wait()
				}
			}
			p.mu.Unlock()
		}
		if _, err := up.Write(pkt); err != nil {
			return
		}
	}
}

// readPacket reads one MQTT control packet: the fixed header (type, remaining length) and the rest.
func readPacket(r *bufio.Reader) ([]byte, error) {
	first, err := r.ReadByte()
	if err != nil {
		return nil, err
	}
	pkt := []byte{first}
	length, mult := 0, 1
	for i := 0; ; i++ {
		if i == 4 {
			return nil, errors.New("malformed remaining length")
		}
		b, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		pkt = append(pkt, b)
		length += int(b&0x7f) * mult
		mult *= 128
		if b&0x80 == 0 {
			break
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return append(pkt, body...), nil
}

func (p *holdProxy) hold() (held func() int, release func()) {
	p.mu.Lock()
	p.holding, p.held = true, 0
	p.mu.Unlock()
	return func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.held
	}, p.release
}

func (p *holdProxy) release() {
	p.mu.Lock()
	p.holding = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// received is a message a test subscriber got.
type received struct {
	topic       string
	payload     []byte
	contentType string
	user        map[string]string
	retain      bool
}

// subscriber5 subscribes to filter with paho.golang (MQTT 5) and sends what it receives on the returned channel.
func subscriber5(t *testing.T, addr, filter string) <-chan received {
	return subscriber5With(t, addr, filter, unique("sub5"), true)
}

// subscriber5With is subscriber5 with a client id and, when clean is false, a session the broker keeps an hour.
func subscriber5With(t *testing.T, addr, filter, clientID string, clean bool) <-chan received {
	t.Helper()
	ch := make(chan received, 1000)
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	cli := paho.NewClient(paho.ClientConfig{
		Conn: nc,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			m := received{topic: pr.Packet.Topic, payload: pr.Packet.Payload, retain: pr.Packet.Retain, user: map[string]string{}}
			if p := pr.Packet.Properties; p != nil {
				m.contentType = p.ContentType
				for _, u := range p.User {
					m.user[u.Key] = u.Value
				}
			}
			ch <- m
			return true, nil
		}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cp := &paho.Connect{ClientID: clientID, KeepAlive: 30, CleanStart: clean}
	if !clean {
		expiry := uint32(3600)
		cp.Properties = &paho.ConnectProperties{SessionExpiryInterval: &expiry}
	}
	_, err = cli.Connect(ctx, cp)
	require.NoError(t, err)
	_, err = cli.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cli.Disconnect(&paho.Disconnect{}) })
	return ch
}

// subscriber311 subscribes to filter with paho.mqtt.golang (MQTT 3.1.1).
func subscriber311(t *testing.T, url, filter string) <-chan received {
	return subscriber311With(t, url, filter, unique("sub311"), true)
}

// subscriber311With is subscriber311 with a client id and, when clean is false, a persistent session.
func subscriber311With(t *testing.T, url, filter, clientID string, clean bool) <-chan received {
	t.Helper()
	ch := make(chan received, 1000)
	handler := func(_ mqtt3.Client, m mqtt3.Message) {
		ch <- received{topic: m.Topic(), payload: m.Payload(), retain: m.Retained()}
	}
	o := mqtt3.NewClientOptions().AddBroker(url).SetClientID(clientID).SetCleanSession(clean).
		SetProtocolVersion(4).SetOrderMatters(true).SetAutoReconnect(false).
		SetDefaultPublishHandler(handler) // messages queued in a persistent session may arrive before SUBACK
	cli := mqtt3.NewClient(o)
	// A broker restarted a moment ago was seen once (CI, 2026-12-04) to reset the first connection after
	// accepting it; the test is about what reaches the subscriber, not about its first connection.
	var tok mqtt3.Token
	for attempt := 1; ; attempt++ {
		tok = cli.Connect()
		require.True(t, tok.WaitTimeout(10*time.Second))
		if tok.Error() == nil || attempt == 3 {
			break
		}
		t.Logf("subscriber %s: connecting again after %v", clientID, tok.Error())
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, tok.Error())
	tok = cli.Subscribe(filter, 1, handler)
	require.True(t, tok.WaitTimeout(10*time.Second))
	require.NoError(t, tok.Error())
	t.Cleanup(func() { cli.Disconnect(100) })
	return ch
}

// outgoing is a message a test publishes.
type outgoing struct {
	topic       string
	payload     []byte
	contentType string
	user        [][2]string
}

// publish5 publishes messages with QoS 1 over MQTT 5 and waits for each PUBACK.
func publish5(t testing.TB, addr string, msgs ...outgoing) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	cli := paho.NewClient(paho.ClientConfig{Conn: nc})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = cli.Connect(ctx, &paho.Connect{ClientID: unique("pub5"), KeepAlive: 30, CleanStart: true})
	require.NoError(t, err)
	defer func() { _ = cli.Disconnect(&paho.Disconnect{}) }()
	for _, m := range msgs {
		p := &paho.Publish{Topic: m.topic, QoS: 1, Payload: m.payload, Properties: &paho.PublishProperties{ContentType: m.contentType}}
		for _, kv := range m.user {
			p.Properties.User = append(p.Properties.User, paho.UserProperty{Key: kv[0], Value: kv[1]})
		}
		_, err := cli.Publish(ctx, p)
		require.NoError(t, err)
	}
}

// publish311 publishes messages with QoS 1 over MQTT 3.1.1 and waits for each PUBACK.
func publish311(t *testing.T, url string, msgs ...outgoing) {
	t.Helper()
	o := mqtt3.NewClientOptions().AddBroker(url).SetClientID(unique("pub311")).SetCleanSession(true).SetProtocolVersion(4)
	cli := mqtt3.NewClient(o)
	tok := cli.Connect()
	require.True(t, tok.WaitTimeout(10*time.Second))
	require.NoError(t, tok.Error())
	defer cli.Disconnect(100)
	for _, m := range msgs {
		tok := cli.Publish(m.topic, 1, false, m.payload)
		require.True(t, tok.WaitTimeout(10*time.Second))
		require.NoError(t, tok.Error())
	}
}
