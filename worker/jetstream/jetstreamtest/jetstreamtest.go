// Package jetstreamtest starts an embedded NATS server with JetStream for tests and publishes CloudEvents the way the
// control plane stores them. Tests never use a NATS server that happens to run on the machine.
package jetstreamtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/stream"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
)

// Env is an embedded server and a client connection to it, both closed when the test ends.
type Env struct {
	Server *ebjs.Server
	Conn   *nats.Conn
	JS     jetstream.JetStream
	// Credentials are the server's (nil when it has none): TCP clients connect with Credentials.Option().
	Credentials *ebjs.Credentials
}

// Start starts a server whose files live in a temporary directory of t.
func Start(t testing.TB) *Env {
	t.Helper()
	return StartWith(t, ebjs.ServerConfig{})
}

// StartWith starts a server configured by cfg; an empty StoreDir is a temporary directory of t, and a server with a
// TCP listener gets new credentials unless cfg has some or allows anonymous clients.
func StartWith(t testing.TB, cfg ebjs.ServerConfig) *Env {
	t.Helper()
	if cfg.StoreDir == "" {
		cfg.StoreDir = t.TempDir()
	}
	if cfg.Listen != "" && cfg.Credentials == nil && !cfg.AllowAnonymous {
		c, err := ebjs.NewCredentials()
		if err != nil {
			t.Fatalf("NATS credentials: %v", err)
		}
		cfg.Credentials = &c
	}
	if cfg.ServerName == "" {
		cfg.ServerName = "test"
	}
	if cfg.MaxStore == 0 {
		// Tests create many buses on one server, each reserving its stream's maximum size (1 GiB by default)
		// against the store limit; the files stay small.
		cfg.MaxStore = 1 << 40
	}
	srv, err := ebjs.StartServer(cfg)
	if err != nil {
		t.Fatalf("starting NATS: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	nc := Connect(t, srv)
	return &Env{Server: srv, Conn: nc, JS: jetstreamOf(t, nc), Credentials: cfg.Credentials}
}

// Connect opens another in-process connection with opts besides the server's own, closed when the test ends.
func Connect(t testing.TB, srv *ebjs.Server, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := srv.Connect(t.Name(), opts...)
	if err != nil {
		t.Fatalf("connecting to NATS: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func jetstreamOf(t testing.TB, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("JetStream: %v", err)
	}
	return js
}

// Stream creates a stream named name over subjects.
func (e *Env) Stream(t testing.TB, name string, subjects ...string) jetstream.Stream {
	t.Helper()
	s, err := e.JS.CreateOrUpdateStream(context.Background(), jetstream.StreamConfig{
		Name: name, Subjects: subjects, Storage: jetstream.FileStorage, Duplicates: stream.DuplicateWindow,
	})
	if err != nil {
		t.Fatalf("creating stream %s: %v", name, err)
	}
	return s
}

// Event returns a valid CloudEvent with a JSON object as data.
func Event(id, typ string, data map[string]any) *event.Event {
	e := event.New()
	e.SetID(id)
	e.SetSource("test/source")
	e.SetType(typ)
	e.SetTime(time.Now().UTC())
	if data != nil {
		if err := e.SetData(event.ApplicationJSON, data); err != nil {
			panic(err)
		}
	}
	return &e
}

// Publish stores e on subject as PutEvents does (binary mode, de-duplicating Nats-Msg-Id) and returns its
// stream sequence.
func (e *Env) Publish(t testing.TB, subject string, ev *event.Event) uint64 {
	t.Helper()
	m := stream.Encode(ev)
	m.Subject = subject
	m.Header.Set(nats.MsgIdHdr, stream.PutMsgID(ev.Source(), ev.ID()))
	ack, err := e.JS.PublishMsg(context.Background(), m)
	if err != nil {
		t.Fatalf("publishing %s: %v", ev.ID(), err)
	}
	return ack.Sequence
}

// PublishN publishes n events with ids prefix-0 .. prefix-(n-1) and returns the ids.
func (e *Env) PublishN(t testing.TB, subject, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i)
		e.Publish(t, subject, Event(ids[i], "test.event", map[string]any{"n": i}))
	}
	return ids
}

// ConsumerInfo returns the info of a consumer, failing the test on error.
func (e *Env) ConsumerInfo(t testing.TB, stream, durable string) *jetstream.ConsumerInfo {
	t.Helper()
	c, err := e.JS.Consumer(context.Background(), stream, durable)
	if err != nil {
		t.Fatalf("consumer %s: %v", durable, err)
	}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatalf("consumer %s: %v", durable, err)
	}
	return info
}

// Messages returns the events stored on subject in the stream streamName, in order, with their Nats-Msg-Id: each
// event of a record batch with the batch's sequence and id, its index and its own id (stream.EntryMsgID).
func (e *Env) Messages(t testing.TB, streamName, subject string) []Stored {
	t.Helper()
	ctx := context.Background()
	s, err := e.JS.Stream(ctx, streamName)
	if err != nil {
		t.Fatalf("stream %s: %v", streamName, err)
	}
	var out []Stored
	seq := uint64(0)
	for {
		m, err := s.GetMsg(ctx, seq+1, jetstream.WithGetMsgSubject(subject))
		if err != nil {
			return out
		}
		seq = m.Sequence
		evs, err := stream.DecodeAll(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
		if err != nil {
			t.Fatalf("stored message %d: %v", m.Sequence, err)
		}
		for i, ev := range evs {
			out = append(out, Stored{Seq: m.Sequence, Index: i, MsgID: m.Header.Get(nats.MsgIdHdr),
				EntryID: stream.EntryMsgID(m.Header, i, ev), Event: ev})
		}
	}
}

// Stored is one stored event.
type Stored struct {
	Seq uint64
	// Index is the event's place in its message (0 but in a record batch).
	Index int
	MsgID string
	// EntryID is the event's own id: MsgID for a message of one event.
	EntryID string
	Event   *event.Event
}

// SlowConsumers has nats.go report a slow consumer on nc for each of two subscriptions, each sent more messages
// than it has room for: one with a callback on busy, held until the test ends, and a channel subscription on parked,
// as a parked task's wake is. nats.go reports the parked one first, in the order it dropped their messages.
func SlowConsumers(t testing.TB, nc *nats.Conn, busy, parked string) {
	t.Helper()
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	sub, err := nc.Subscribe(busy, func(*nats.Msg) { <-hold })
	if err != nil {
		t.Fatalf("subscribing to %s: %v", busy, err)
	}
	if err := sub.SetPendingLimits(1, -1); err != nil {
		t.Fatalf("limiting %s: %v", busy, err)
	}
	wake, err := nc.ChanSubscribe(parked, make(chan *nats.Msg, 1))
	if err != nil {
		t.Fatalf("subscribing to %s: %v", parked, err)
	}
	// parked: 1 in the channel, then dropped; busy: 1 in the callback, 1 pending, then dropped.
	for range 3 {
		if err := nc.Publish(parked, nil); err != nil {
			t.Fatalf("publishing: %v", err)
		}
		if err := nc.Publish(busy, nil); err != nil {
			t.Fatalf("publishing: %v", err)
		}
	}
	if err := nc.Flush(); err != nil { // answered once the connection read every message
		t.Fatalf("flushing: %v", err)
	}
	if n, err := wake.Dropped(); err != nil || n == 0 {
		t.Fatalf("the channel subscription dropped %d messages (%v)", n, err)
	}
}
