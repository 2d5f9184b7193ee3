package mqtt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// dialWebSocket opens an MQTT-over-WebSocket connection to u (ws or wss) whose TCP connection the guard opens:
// paho.mqtt.golang's own WebSocket dialer resolves and connects by itself, through any proxy of the environment.
func (o options) dialWebSocket(ctx context.Context, u *url.URL) (net.Conn, error) {
	d := &websocket.Dialer{
		NetDialContext:   o.guard.DialContext,
		Proxy:            nil,
		HandshakeTimeout: o.connectTimeout,
		Subprotocols:     []string{"mqtt"},
	}
	if u.Scheme == "wss" {
		d.TLSClientConfig = o.tlsFor(u)
	}
	target := *u
	target.User = nil
	ws, resp, err := d.DialContext(ctx, target.String(), nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("WebSocket handshake answered %s: %w", resp.Status, err)
		}
		return nil, err
	}
	return &wsConn{Conn: ws}, nil
}

// wsConn is a WebSocket connection read and written as a stream of bytes: MQTT packets in binary messages, as MQTT
// over WebSocket requires (a packet may span messages and a message hold several packets).
type wsConn struct {
	*websocket.Conn
	rmu sync.Mutex
	r   io.Reader // the message being read
	wmu sync.Mutex
}

var _ net.Conn = (*wsConn)(nil)

func (c *wsConn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	for {
		if c.r == nil {
			_, r, err := c.NextReader()
			if err != nil {
				return 0, err
			}
			c.r = r
		}
		n, err := c.r.Read(p)
		if errors.Is(err, io.EOF) {
			c.r = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (c *wsConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *wsConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}
