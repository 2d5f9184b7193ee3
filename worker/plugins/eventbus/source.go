package eventbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/egress"
)

// SourceName is the source plugin's connector.class.
const SourceName = "eventbus-source"

// Config keys of the source.
const (
	// KeySourceStream is the JetStream stream the source reads: another bus's stream, or any stream.
	KeySourceStream = "source.stream"
	// KeySourceSubject filters the subjects read (wildcards allowed); empty reads every subject of the stream.
	KeySourceSubject = "source.subject"
	// KeyStartPolicy says where a source without a stored offset starts: all or new.
	KeyStartPolicy = "source.start"
	// KeyBatch bounds the records of one read.
	KeyBatch = "source.batch.size"
	// KeyNATSURL points the source at another NATS server or cluster; empty reads the worker's own.
	KeyNATSURL = "nats.url"
	// KeyNATSUser and KeyNATSPassword authenticate to nats.url.
	KeyNATSUser     = "nats.user"
	KeyNATSPassword = "nats.password"
)

// NATSMessageType is the CloudEvent type of a message that was not a CloudEvent.
const NATSMessageType = "eventbridge:Events:NATSMessage"

// Offset keys: the partition is {"stream": S}, the offset {"sequence": N}, the last stream sequence stored.
const (
	PartitionStream = "stream"
	OffsetSequence  = "sequence"
)

// fetchWait bounds one pull of the source; Read pulls again until it has records.
const fetchWait = time.Second

// dialTimeout bounds one connection attempt to a server of nats.url.
const dialTimeout = 5 * time.Second

// resetAttempts bounds the attempts of a Fetch of nats.url's stream to re-create its consumer (1s, then 2s apart).
const resetAttempts = 3

func init() { connector.Register(SourcePlugin()) }

// SourcePlugin returns the eventbus source plugin.
func SourcePlugin() connector.Plugin {
	return connector.Plugin{
		Name:    SourceName,
		Type:    connector.TypeSource,
		Version: "1.0.0",
		Doc: "Feeds a bus from a JetStream stream: another bus, or any stream, on the worker's NATS or another " +
			"(nats.url). CloudEvents (binary or structured, and each event of a bus's record batch) are stored as they are; other messages become " +
			"CloudEvents of type " + NATSMessageType + " with the NATS subject as subject. One task reads the stream " +
			"in order; its position is the offset {\"sequence\": N} of partition {\"stream\": S}.",
		Spec: connector.Spec{
			{Name: KeySourceStream, Title: "Source stream", Type: connector.TypeString, Required: true, Check: checkStreamName,
				Example: "eb_BUS_q4xbm2n7vd3kza6e",
				Doc:     "The JetStream stream to read: another bus's stream (<cluster>_BUS_<busId>) or any other stream, on the worker's NATS or on nats.url."},
			{Name: KeySourceSubject, Title: "Subject filter", Type: connector.TypeString, Check: checkFilter,
				Example: "orders.>",
				Doc:     "Subjects of the stream to read, a NATS subject filter (wildcards * and > allowed); empty reads them all."},
			{Name: KeyStartPolicy, Title: "Start position", Type: connector.TypeEnum, Default: "all", Enum: []string{"all", "new"},
				Doc: "Where the source starts when no offset is stored: every stored message (all) or those stored from its first read on (new)."},
			{Name: KeyBatch, Title: "Batch size", Type: connector.TypeInt, Default: "100", Min: connector.Min(1),
				Doc: "Most messages one read fetches from the stream and stores on the bus."},
			{Name: KeyNATSURL, Title: "NATS server URLs", Type: connector.TypeString,
				Example: "nats://nats.example.com:4222",
				Doc: "NATS server URLs (comma-separated) of another NATS to read from; empty reads the worker's own. " +
					"Every connection to it, the servers it announces and every reconnection included, goes through the " +
					"worker's egress guard: a loopback, private or link-local address is refused unless the operator " +
					"allowed it (--egress-allow, --allow-private-targets)."},
			{Name: KeyNATSUser, Title: "NATS user", Type: connector.TypeString,
				Doc: "User name to authenticate to nats.url with, with nats.password; empty connects without credentials."},
			{Name: KeyNATSPassword, Title: "NATS password", Type: connector.TypeString, Secret: true,
				Doc: "Password of nats.user for nats.url; ignored without nats.user."},
		},
		NewSource: NewSource,
	}
}

func checkStreamName(v string) error {
	if strings.ContainsAny(v, ".*> \t\r\n/\\") {
		return errors.New("a stream name must not contain '.', '*', '>', '/', '\\' or whitespace")
	}
	return nil
}

func checkFilter(v string) error {
	if strings.ContainsAny(v, " \t\r\n") || strings.Contains(v, "..") || strings.HasPrefix(v, ".") || strings.HasSuffix(v, ".") {
		return fmt.Errorf("%q is not a NATS subject", v)
	}
	return nil
}

// Source reads one stream in order with an ordered consumer that it re-creates after the last sequence it read
// whenever reading fails (the server restarted, the connection dropped).
type Source struct {
	stream, filter, start string
	batch                 int
	url, user, password   string
	connector             string
	env                   connector.Env

	nc     *nats.Conn   // own connection when url is set
	dialer *refusalMemo // opens nc's connections through the egress guard
	js     jetstream.JetStream
	cons   jetstream.Consumer
	next   uint64 // the sequence to read next; 0 until known
}

var _ connector.Source = (*Source)(nil)

// NewSource builds a source from its config.
func NewSource(cfg connector.Values, env connector.Env) (connector.Source, error) {
	return &Source{
		stream: cfg.String(KeySourceStream), filter: cfg.String(KeySourceSubject), start: cfg.String(KeyStartPolicy),
		batch: int(cfg.Int(KeyBatch)), url: cfg.String(KeyNATSURL), user: cfg.String(KeyNATSUser),
		password: cfg.String(KeyNATSPassword), connector: env.Connector, env: env, js: env.JetStream,
	}, nil
}

func (s *Source) partition() map[string]any { return map[string]any{PartitionStream: s.stream} }

// Connect opens the connection to nats.url, if any, and finds the stored offset. A server address the egress guard
// refuses is a (permanent) error naming it, when no server of nats.url could be reached; the worker's own NATS
// (nats.url empty) is the installation's and not guarded.
func (s *Source) Connect(ctx context.Context) error {
	if off, ok := s.env.Offset(s.partition()); ok {
		seq, err := rpc.SequenceOf(off[OffsetSequence])
		if err != nil {
			return connector.Permanent(fmt.Errorf("eventbus-source: stored offset %v: %w", off, err))
		}
		s.next = seq + 1
	}
	if s.url == "" {
		if s.js == nil {
			return errors.New("eventbus-source: no JetStream context")
		}
		return nil
	}
	policy := s.env.Egress
	policy.Timeout = dialTimeout
	guard, err := egress.New(policy)
	if err != nil {
		return fmt.Errorf("eventbus-source: %w", err)
	}
	s.dialer = &refusalMemo{guard: guard}
	// Every connection, to the URLs and to the servers they announce, each reconnection too, is dialled by the
	// guard, which resolves the name itself: nats.go must not resolve it first (SkipHostLookup).
	// Requests fail at once while disconnected (no reconnect buffer), so that a Read in progress ends and the
	// next one can report a refused reconnection instead of waiting for a connection that will not come.
	opts := []nats.Option{nats.Name("eventbridge source " + s.connector), nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond), nats.RetryOnFailedConnect(true),
		nats.SetCustomDialer(s.dialer), nats.SkipHostLookup(), nats.ReconnectBufSize(-1)}
	if s.user != "" {
		opts = append(opts, nats.UserInfo(s.user, s.password))
	}
	nc, err := nats.Connect(s.url, opts...)
	if err != nil {
		return fmt.Errorf("eventbus-source: connecting to %s: %w", redactURLs(s.url), err)
	}
	// With RetryOnFailedConnect, Connect tried every server once and answers even if none could be reached.
	if err := s.refused(nc); err != nil {
		nc.Close()
		return err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return fmt.Errorf("eventbus-source: %w", err)
	}
	s.nc, s.js = nc, js
	return nil
}

// Close closes the connection to nats.url, if any.
func (s *Source) Close() error {
	if s.nc != nil {
		s.nc.Close()
	}
	return nil
}

// Commit does nothing: the position is the offset the runtime stored.
func (s *Source) Commit(context.Context, []connector.SourceRecord) error { return nil }

// consumer returns the ordered consumer, creating it at the next sequence (or where start says).
func (s *Source) consumer(ctx context.Context) (jetstream.Consumer, error) {
	if s.cons != nil {
		return s.cons, nil
	}
	if s.next == 0 {
		s.next = 1
		if s.start == "new" {
			st, err := s.js.Stream(ctx, s.stream)
			if err != nil {
				s.next = 0
				return nil, fmt.Errorf("eventbus-source: stream %s: %w", s.stream, err)
			}
			s.next = st.CachedInfo().State.LastSeq + 1
		}
	}
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: s.next}
	if s.nc != nil {
		// A Fetch re-creates the consumer, by default retrying for ever while the server cannot be reached; a few
		// attempts, then an error, let Read report the outage (and a refused reconnection) and be retried.
		cfg.MaxResetAttempts = resetAttempts
	}
	if s.filter != "" {
		cfg.FilterSubjects = []string{s.filter}
	}
	cons, err := s.js.OrderedConsumer(ctx, s.stream, cfg)
	if err != nil {
		return nil, fmt.Errorf("eventbus-source: reading stream %s: %w", s.stream, err)
	}
	s.cons = cons
	return cons, nil
}

// Read returns the next messages of the stream, in order, once there are some. While the connection to nats.url
// is down because the egress guard refused its reconnection, Read fails permanently with that refusal.
func (s *Source) Read(ctx context.Context) ([]connector.SourceRecord, error) {
	for {
		if err := s.refused(s.nc); err != nil {
			return nil, err
		}
		cons, err := s.consumer(ctx)
		if err != nil {
			return nil, err
		}
		batch, err := cons.Fetch(s.batch, jetstream.FetchMaxWait(fetchWait))
		if err != nil {
			s.cons = nil
			if rerr := s.refused(s.nc); rerr != nil {
				return nil, rerr
			}
			return nil, fmt.Errorf("eventbus-source: reading stream %s: %w", s.stream, err)
		}
		var out []connector.SourceRecord
		for msg := range batch.Messages() {
			md, err := msg.Metadata()
			if err != nil {
				continue
			}
			evs := s.toEvents(msg, md)
			for i, e := range evs {
				// The events of a record batch but its last leave the offset before the batch: a task that
				// stops inside one reads it again, and what it stored already is stored once.
				at := md.Sequence.Stream
				if i < len(evs)-1 {
					at--
				}
				out = append(out, connector.SourceRecord{Event: e, Partition: s.partition(),
					Offset: map[string]any{OffsetSequence: at}})
			}
			s.next = md.Sequence.Stream + 1
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
			s.cons = nil
			if len(out) == 0 {
				return nil, fmt.Errorf("eventbus-source: reading stream %s: %w", s.stream, err)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// refused returns, while nc is not connected and its last connection attempt was refused by the egress guard, that
// refusal as a permanent error: reconnecting cannot help. nil without an own connection.
func (s *Source) refused(nc *nats.Conn) error {
	if nc == nil || s.dialer == nil || nc.IsConnected() {
		return nil
	}
	if err := s.dialer.last(); err != nil {
		return connector.Permanent(fmt.Errorf("eventbus-source: connecting to %s: %w", redactURLs(s.url), err))
	}
	return nil
}

// refusalMemo is the nats.CustomDialer of an own connection: the egress guard, remembering whether the last
// connection attempt was refused.
type refusalMemo struct {
	guard *egress.Guard
	mu    sync.Mutex
	err   error
}

func (d *refusalMemo) Dial(network, address string) (net.Conn, error) {
	c, err := d.guard.Dial(network, address)
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case err == nil:
		d.err = nil
	case errors.Is(err, egress.ErrRefused):
		d.err = err
	}
	return c, err
}

func (d *refusalMemo) last() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// redactURLs returns the comma-separated URLs with their passwords masked, for messages.
func redactURLs(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if !strings.Contains(p, "://") {
			p = "nats://" + p // as nats.go reads it
		}
		if u, err := url.Parse(p); err == nil {
			parts[i] = u.Redacted()
		} else {
			parts[i] = "(a URL that does not parse)"
		}
	}
	return strings.Join(parts, ",")
}

// toEvents decodes a CloudEvent (binary mode headers, or a structured body), the events of a bus's record batch,
// or wraps any other message.
func (s *Source) toEvents(msg jetstream.Msg, md *jetstream.MsgMetadata) []*event.Event {
	m := &nats.Msg{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data()}
	if stream.IsBatch(m.Header) {
		if evs, err := stream.DecodeAll(m); err == nil && !slices.ContainsFunc(evs, func(e *event.Event) bool { return cloudevent.Validate(e) != nil }) {
			return evs
		}
	}
	if m.Header.Get("ce-specversion") != "" {
		if e, err := stream.Decode(m); err == nil && cloudevent.Validate(e) == nil {
			return []*event.Event{e}
		}
	}
	if ct := m.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/cloudevents+json") || ct == "" {
		if e, err := cloudevent.Unmarshal(m.Data); err == nil && cloudevent.Validate(e) == nil {
			return []*event.Event{e}
		}
	}
	e := event.New()
	e.SetID(s.stream + ":" + strconv.FormatUint(md.Sequence.Stream, 10))
	e.SetSource("urn:eventbridge:nats:" + s.stream)
	e.SetType(NATSMessageType)
	e.SetSubject(m.Subject)
	e.SetTime(md.Timestamp)
	switch ct := m.Header.Get("Content-Type"); {
	case ct != "":
		_ = e.SetData(ct, m.Data)
	case json.Valid(m.Data):
		_ = e.SetData(event.ApplicationJSON, m.Data)
	default:
		_ = e.SetData("application/octet-stream", m.Data)
	}
	return []*event.Event{&e}
}
