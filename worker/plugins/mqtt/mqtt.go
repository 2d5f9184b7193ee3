// Package mqtt holds the MQTT connector plugins: the mqtt-source source, which subscribes to topic filters of an
// MQTT broker and feeds a bus with one CloudEvent per message, and the mqtt sink, which publishes each record to a
// topic built from the event. Both speak MQTT 5 (github.com/eclipse/paho.golang) or MQTT 3.1.1
// (github.com/eclipse/paho.mqtt.golang), chosen by mqtt.version, over TCP or TLS (and WebSocket with 3.1.1). Every
// connection, and every reconnection, goes through the worker's egress guard (worker/egress): a broker on a
// loopback, private or link-local address is refused unless the operator allowed it.
//
//	connector.class=mqtt-source
//	mqtt.url=tcp://broker:1883
//	mqtt.topics=devices/+/telemetry,alerts/#
//
// The source keeps a persistent session on the broker (clean start false with a session expiry in MQTT 5, clean
// session false in 3.1.1) under a client id that is stable across restarts, and acknowledges a QoS 1 or 2 message
// only in Commit, once the runtime stored its event on the bus: messages published while no task runs, and
// messages read but not stored when a task died, are delivered again when a task returns. See docs/mqtt.md.
package mqtt

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/egress"
)

// Config keys common to the source and the sink.
const (
	// KeyURL is the broker's URL, or several comma-separated URLs tried in order.
	KeyURL = "mqtt.url"
	// KeyVersion is the protocol version: 5 or 3.1.1.
	KeyVersion  = "mqtt.version"
	KeyUsername = "mqtt.username"
	KeyPassword = "mqtt.password"
	// KeyTLSCA is a PEM bundle of the certificate authorities trusted for the broker (empty: the system's).
	KeyTLSCA = "mqtt.tls.ca"
	// KeyTLSInsecure turns off the verification of the broker's certificate.
	KeyTLSInsecure = "mqtt.tls.insecure.skip.verify"
	// KeyTLSCert and KeyTLSKey are the client certificate and its private key (PEM), for brokers that ask.
	KeyTLSCert = "mqtt.tls.cert"
	KeyTLSKey  = "mqtt.tls.key"
	// KeyClientID is the MQTT client identifier; the default is derived from the connector name and task.
	KeyClientID       = "mqtt.client.id"
	KeyKeepAlive      = "mqtt.keepalive"
	KeyConnectTimeout = "mqtt.connect.timeout"
	// KeyQoS is the QoS of the source's subscriptions or of the sink's messages.
	KeyQoS = "mqtt.qos"
)

// Protocol versions (values of mqtt.version).
const (
	Version5   = "5"
	Version311 = "3.1.1"
)

// commonSpec returns the keys shared by the source and the sink.
func commonSpec() connector.Spec {
	return connector.Spec{
		{Name: KeyURL, Title: "Broker URL", Type: connector.TypeString, Required: true, Check: checkURLs,
			Example: "tcp://broker.example.com:1883",
			Doc: "Broker URL: tcp:// (or mqtt://), ssl:// (or tls://, mqtts://), and with mqtt.version 3.1.1 also " +
				"ws:// and wss://; several URLs, comma-separated, are tried in order. The port defaults to 1883 " +
				"(8883 with TLS, 80/443 for WebSocket). Credentials go in mqtt.username and mqtt.password, not in the URL."},
		{Name: KeyVersion, Title: "MQTT version", Type: connector.TypeEnum, Default: Version5, Enum: []string{Version5, Version311},
			Doc: "MQTT protocol version: 5, or 3.1.1 for brokers without MQTT 5 (WebSocket URLs need it)."},
		{Name: KeyUsername, Title: "User name", Type: connector.TypeString,
			Doc: "User name sent in CONNECT; with MQTT 3.1.1 it is required when mqtt.password is set."},
		{Name: KeyPassword, Title: "Password", Type: connector.TypeString, Secret: true, Doc: "Password sent in CONNECT."},
		{Name: KeyTLSCA, Title: "CA certificates", Type: connector.TypeString, Check: checkPEM,
			Doc: "PEM certificates of the authorities trusted for a TLS broker; empty trusts the system's."},
		{Name: KeyTLSInsecure, Title: "Skip certificate verification", Type: connector.TypeBool, Default: "false",
			Doc: "Accept any certificate from a TLS broker (tests only)."},
		{Name: KeyTLSCert, Title: "Client certificate", Type: connector.TypeString, Check: checkPEM,
			Doc: "PEM client certificate for brokers that authenticate clients by certificate (with mqtt.tls.key)."},
		{Name: KeyTLSKey, Title: "Client private key", Type: connector.TypeString, Secret: true,
			Doc: "PEM private key of mqtt.tls.cert."},
		{Name: KeyClientID, Title: "Client ID", Type: connector.TypeString, Check: checkClientID,
			Example: "eb-orders-ingest",
			Doc: "MQTT client identifier (1 to 256 printable ASCII characters without spaces); with several tasks, " +
				"-<task> is appended. Default: derived from the connector name and task number (eb-<connector>-<task>, " +
				"and -sink after it for the sink), stable across restarts so that the source's persistent session is " +
				"found again. Two clients with the same id take the connection from each other."},
		{Name: KeyKeepAlive, Title: "Keep-alive interval", Type: connector.TypeDuration, Default: "30s", Check: checkKeepAlive,
			Example: "60s",
			Doc:     "Keep-alive interval sent in CONNECT (whole seconds, at most 18h12m15s)."},
		{Name: KeyConnectTimeout, Title: "Connect timeout", Type: connector.TypeDuration, Default: "10s", Check: checkPositive,
			Example: "15s",
			Doc:     "Bound of one connection attempt (TCP, TLS and CONNACK)."},
	}
}

// options are the connection settings read from a config.
type options struct {
	urls           []*url.URL
	version        string
	username       string
	password       string
	tls            *tls.Config // nil: no TLS configured (TLS URLs still use a default config)
	clientID       string
	keepAlive      time.Duration
	connectTimeout time.Duration
	// guard opens every connection to a broker: TCP, TLS and WebSocket, each attempt and reconnection.
	guard *egress.Guard
}

// parseOptions reads the common keys; suffix is appended to the derived client id (the sink's differ from the
// source's). Problems the spec cannot see are FieldErrors; an egress policy that is not valid is the error.
func parseOptions(cfg connector.Values, env connector.Env, suffix string) (options, connector.FieldErrors, error) {
	var errs connector.FieldErrors
	o := options{
		version: cfg.String(KeyVersion), username: cfg.String(KeyUsername), password: cfg.String(KeyPassword),
		clientID: cfg.String(KeyClientID), keepAlive: cfg.Duration(KeyKeepAlive),
		connectTimeout: cfg.Duration(KeyConnectTimeout),
	}
	policy := env.Egress
	policy.Timeout = o.connectTimeout
	guard, err := egress.New(policy)
	if err != nil {
		return o, nil, fmt.Errorf("mqtt: %w", err)
	}
	o.guard = guard
	urls, err := parseURLs(cfg.String(KeyURL))
	if err != nil {
		errs = append(errs, connector.FieldError{Key: KeyURL, Message: err.Error()})
	}
	for _, u := range urls {
		if (u.Scheme == "ws" || u.Scheme == "wss") && o.version != Version311 {
			errs = append(errs, connector.FieldError{Key: KeyURL,
				Message: fmt.Sprintf("%s:// is supported with %s=%s only", u.Scheme, KeyVersion, Version311)})
			break
		}
	}
	o.urls = urls
	switch {
	case o.clientID == "":
		o.clientID = defaultClientID(env, suffix)
	case env.Tasks > 1: // tasks with one id would take the connection from each other
		o.clientID += "-" + strconv.Itoa(env.Task)
	}
	t, ferrs := parseTLS(cfg)
	errs = append(errs, ferrs...)
	o.tls = t
	if o.password != "" && o.username == "" && o.version == Version311 {
		errs = append(errs, connector.FieldError{Key: KeyUsername, Message: "is required with a password in MQTT 3.1.1"})
	}
	return o, errs, nil
}

// defaultClientID is eb-<connector>-<task><suffix>, with characters other than letters, digits, '-', '_' and '.'
// replaced; a long connector name is replaced by a hash of it, so the id stays short and stable.
func defaultClientID(env connector.Env, suffix string) string {
	name := env.Connector
	if name == "" {
		name = "connector"
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
	if len(name) > 48 {
		sum := sha256.Sum256([]byte(env.Connector))
		name = hex.EncodeToString(sum[:12])
	}
	return "eb-" + name + "-" + strconv.Itoa(env.Task) + suffix
}

var schemes = map[string]string{
	"tcp": "1883", "mqtt": "1883", "ssl": "8883", "tls": "8883", "mqtts": "8883", "ws": "80", "wss": "443",
}

func checkURLs(v string) error {
	_, err := parseURLs(v)
	return err
}

// parseURLs reads a comma-separated list of broker URLs, adding default ports.
func parseURLs(v string) ([]*url.URL, error) {
	var out []*url.URL
	for _, raw := range strings.Split(v, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return nil, errors.New("has an empty URL")
		}
		u, err := url.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("%q is not a URL", raw)
		}
		port, ok := schemes[u.Scheme]
		if !ok {
			return nil, fmt.Errorf("%q: the scheme must be tcp, mqtt, ssl, tls, mqtts, ws or wss", raw)
		}
		if u.Hostname() == "" {
			return nil, fmt.Errorf("%q has no host", raw)
		}
		if u.Port() == "" {
			u.Host = net.JoinHostPort(u.Hostname(), port)
		} else if n, err := strconv.Atoi(u.Port()); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%q has an invalid port", raw)
		}
		if u.User != nil {
			return nil, fmt.Errorf("%q: put credentials in %s and %s, not in the URL", raw, KeyUsername, KeyPassword)
		}
		out = append(out, u)
	}
	return out, nil
}

func isTLS(u *url.URL) bool {
	return u.Scheme == "ssl" || u.Scheme == "tls" || u.Scheme == "mqtts" || u.Scheme == "wss"
}

func checkPEM(v string) error {
	if !strings.Contains(v, "-----BEGIN ") {
		return errors.New("is not PEM (-----BEGIN ...)")
	}
	return nil
}

// MQTT 3.1.1 servers must accept 1 to 23 letters and digits and may accept more; MQTT strings hold 65535 bytes.
var clientIDPattern = regexp.MustCompile(`^[\x21-\x7e]{1,256}$`)

func checkClientID(v string) error {
	if !clientIDPattern.MatchString(v) {
		return errors.New("must be 1 to 256 printable ASCII characters without spaces")
	}
	return nil
}

func checkKeepAlive(v string) error {
	d, _ := time.ParseDuration(v)
	if d%time.Second != 0 || d > 65535*time.Second {
		return errors.New("must be whole seconds, at most 65535s")
	}
	return nil
}

func checkPositive(v string) error {
	if d, _ := time.ParseDuration(v); d <= 0 {
		return errors.New("must be positive")
	}
	return nil
}

// parseTLS builds the TLS config of the TLS keys; nil when none is set.
func parseTLS(cfg connector.Values) (*tls.Config, connector.FieldErrors) {
	ca, cert, key := cfg.String(KeyTLSCA), cfg.String(KeyTLSCert), cfg.String(KeyTLSKey)
	insecure := cfg.Bool(KeyTLSInsecure)
	if ca == "" && cert == "" && key == "" && !insecure {
		return nil, nil
	}
	var errs connector.FieldErrors
	t := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure} //nolint:gosec // asked for by mqtt.tls.insecure.skip.verify
	if ca != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(ca)) {
			errs = append(errs, connector.FieldError{Key: KeyTLSCA, Message: "holds no PEM certificate"})
		}
		t.RootCAs = pool
	}
	switch {
	case cert != "" && key == "":
		errs = append(errs, connector.FieldError{Key: KeyTLSKey, Message: "is required with " + KeyTLSCert})
	case cert == "" && key != "":
		errs = append(errs, connector.FieldError{Key: KeyTLSCert, Message: "is required with " + KeyTLSKey})
	case cert != "":
		pair, err := tls.X509KeyPair([]byte(cert), []byte(key))
		if err != nil {
			errs = append(errs, connector.FieldError{Key: KeyTLSCert, Message: "cannot be used with mqtt.tls.key: " + err.Error()})
		} else {
			t.Certificates = []tls.Certificate{pair}
		}
	}
	return t, errs
}

// tlsFor returns the TLS config for a connection to u.
func (o options) tlsFor(u *url.URL) *tls.Config {
	var t *tls.Config
	if o.tls != nil {
		t = o.tls.Clone()
	} else {
		t = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if t.ServerName == "" {
		t.ServerName = u.Hostname()
	}
	return t
}

// dialNet opens a TCP or TLS connection to the first of the URLs that answers. A URL the egress guard refuses is
// skipped; when no URL answers, the error holds every URL's (and matches egress.ErrRefused if one was refused).
func (o options) dialNet(ctx context.Context) (net.Conn, *url.URL, error) {
	var errs []error
	for _, u := range o.urls {
		c, err := o.dialURL(ctx, u)
		if err == nil {
			return c, u, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", u.Redacted(), err))
	}
	return nil, nil, errors.Join(errs...)
}

// dialURL opens the connection to one broker URL through the guard: TCP, TLS over it, or a WebSocket (over TLS
// for wss) whose TCP connection the guard opens too. No proxy is used: it would hide the broker's address from the
// guard.
func (o options) dialURL(ctx context.Context, u *url.URL) (net.Conn, error) {
	if u.Scheme == "ws" || u.Scheme == "wss" {
		return o.dialWebSocket(ctx, u)
	}
	c, err := o.guard.DialContext(ctx, "tcp", u.Host)
	if err != nil || !isTLS(u) {
		return c, err
	}
	tc := tls.Client(c, o.tlsFor(u))
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil
}

// checkTopicFilter accepts an MQTT topic filter: '+' stands alone in its level, '#' alone in the last level; a
// shared subscription $share/<group>/<filter> needs MQTT 5 (shared false refuses it).
func checkTopicFilter(f string, shared bool) error {
	if f == "" {
		return errors.New("a topic filter must not be empty")
	}
	if len(f) > 65535 || strings.ContainsRune(f, 0) || !utfValid(f) {
		return fmt.Errorf("%q is not a valid topic filter", f)
	}
	if strings.HasPrefix(f, "$share/") {
		if !shared {
			return fmt.Errorf("%q: shared subscriptions need %s=%s", f, KeyVersion, Version5)
		}
		rest := strings.TrimPrefix(f, "$share/")
		group, filter, ok := strings.Cut(rest, "/")
		if !ok || group == "" || strings.ContainsAny(group, "+#") || filter == "" {
			return fmt.Errorf("%q: a shared subscription is $share/<group>/<filter>", f)
		}
		return checkTopicFilter(filter, false)
	}
	levels := strings.Split(f, "/")
	for i, l := range levels {
		switch {
		case l == "#" && i != len(levels)-1:
			return fmt.Errorf("%q: '#' must be the last level", f)
		case l != "#" && strings.Contains(l, "#"):
			return fmt.Errorf("%q: '#' must stand alone in its level", f)
		case l != "+" && strings.Contains(l, "+"):
			return fmt.Errorf("%q: '+' must stand alone in its level", f)
		}
	}
	return nil
}

// checkTopicName accepts a topic to publish to: not empty, no wildcards.
func checkTopicName(t string) error {
	if t == "" {
		return errors.New("the topic is empty")
	}
	if strings.ContainsAny(t, "+#") {
		return fmt.Errorf("topic %q contains a wildcard ('+' or '#')", t)
	}
	if len(t) > 65535 || strings.ContainsRune(t, 0) || !utfValid(t) {
		return fmt.Errorf("topic %q is not a valid MQTT topic name", t)
	}
	return nil
}

func utfValid(s string) bool { return utf8.ValidString(s) }

// qosOf reads mqtt.qos.
func qosOf(cfg connector.Values) byte {
	return byte(cfg.Int(KeyQoS))
}
