// Package replay is the replay source plugin: it reads an archive's stream (stream.Names.ArchiveStream) in order
// and puts back on its bus the archived events the bus stored within a window of time, as Amazon EventBridge's
// replays do. Each event goes back unchanged but for the extension replayname, stored with the headers that tell
// the bus's router it is a replay (stream.HeaderReplay, and HeaderReplayRules or HeaderReplayTarget when the
// replay names rules or a target): the router routes it to those rules only and never archives it again.
//
// The replay ends at the archive's last sequence when it started (replay.end.sequence): events archived since are
// not replayed. Its progress is its offset, so a task taken over after a crash or a move resumes after the last
// event stored, and an event read twice is stored once within the bus's duplicate window.
//
// Egress: the plugin opens no connection of its own; it reads the installation's JetStream through
// connector.Env.JetStream, which the egress guard does not cover because it is not an outbound connection.
package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/time/rate"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// Name is the plugin's connector.class.
const Name = "replay"

// Config keys of the plugin.
const (
	// KeyName is the replay's name: the value of the replayname extension and of stream.HeaderReplay.
	KeyName = "replay.name"
	// KeyArchiveStream is the archive's stream, <cluster>_ARCHIVE_<accountId>_<archiveId>.
	KeyArchiveStream = "replay.archive.stream"
	// KeyArchiveSubject is the archive's subject, <cluster>.archive.<accountId>.<archiveId>.
	KeyArchiveSubject = "replay.archive.subject"
	// KeyStart and KeyEnd bound the window [start, end) of the events replayed, RFC 3339 times compared with when
	// the bus stored each event (stream.HeaderStoredAt of the archived copy, else the copy's own stored time).
	KeyStart = "replay.start"
	KeyEnd   = "replay.end"
	// KeyEndSequence is the archive's last sequence when the replay started: the replay is done once it read it.
	KeyEndSequence = "replay.end.sequence"
	// KeyRules restricts the replay to rules of the bus: comma-separated rule ids (stream.HeaderReplayRules).
	KeyRules = "replay.rules"
	// KeyTarget restricts the replay to one target of one rule: <ruleId>.<targetId> (stream.HeaderReplayTarget).
	KeyTarget = "replay.target"
	// KeyRate bounds the events replayed per second.
	KeyRate = "replay.rate"
)

// DefaultRate is the default of replay.rate, in events per second.
const DefaultRate = 1000

// ExtReplayName is the CloudEvents extension every replayed event carries: the replay's name.
const ExtReplayName = "replayname"

// Offset keys: the partition is {"archive": <stream>}; the offset {"sequence": N, "replayed": R, "lastStoredAt":
// T, "done": D}: the last archive sequence read, the events replayed so far, the stored time (RFC 3339, UTC) of the
// last event replayed (absent until one is), and whether the replay read everything up to replay.end.sequence.
const (
	PartitionArchive   = "archive"
	OffsetSequence     = "sequence"
	OffsetReplayed     = "replayed"
	OffsetLastStoredAt = "lastStoredAt"
	OffsetDone         = "done"
)

// MaxBatch bounds the archived messages one Read handles, so the records it returns.
const MaxBatch = 500

// emptyWait is how long Read waits for the next archived message before it asks the archive whether any is left.
const emptyWait = time.Second

// resetAttempts bounds the attempts of the reading consumer to re-create itself after an error (1 s, then 2 s and
// 4 s apart).
const resetAttempts = 3

// closeTimeout bounds Close's deletion of the reading consumer (which the server would remove after 5 minutes
// anyway).
const closeTimeout = 2 * time.Second

// validName is a replay's name, as Amazon EventBridge allows them.
var validName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func init() { connector.Register(Plugin()) }

// Plugin returns the replay plugin.
func Plugin() connector.Plugin {
	return connector.Plugin{
		Name:    Name,
		Type:    connector.TypeSource,
		Version: "1.0.0",
		Doc: "Replays an archive to its bus: the archived events the bus stored in [replay.start, replay.end), read " +
			"in the archive's order up to replay.end.sequence at most replay.rate per second, go back on the bus " +
			"unchanged but for the extension " + ExtReplayName + " (the replay's name), with the headers that make " +
			"the router route them to the rules replay.rules or the target replay.target names (every rule when " +
			"neither) and never archive them again. The progress is the offset {\"sequence\": N, \"replayed\": R, " +
			"\"lastStoredAt\": T, \"done\": D} of partition {\"archive\": <stream>}. Only task 0 replays. The plugin " +
			"reads the installation's JetStream and opens no outbound connection.",
		Spec: connector.Spec{
			{Name: KeyName, Title: "Replay name", Type: connector.TypeString, Required: true, Check: checkName,
				Example: "orders-2026-01-31",
				Doc: "The replay's name (letters, digits, '.', '_', '-'; at most 64): the value of the " + ExtReplayName +
					" extension of every event replayed."},
			{Name: KeyArchiveStream, Title: "Archive stream", Type: connector.TypeString, Required: true, Check: checkStream,
				Example: "eb_ARCHIVE_default_w5n3kq7xz2vbm4dt",
				Doc:     "The archive's stream (<cluster>_ARCHIVE_<accountId>_<archiveId>)."},
			{Name: KeyArchiveSubject, Title: "Archive subject", Type: connector.TypeString, Required: true, Check: checkSubject,
				Example: "eb.archive.default.w5n3kq7xz2vbm4dt",
				Doc:     "The archive's subject (<cluster>.archive.<accountId>.<archiveId>)."},
			{Name: KeyStart, Title: "Window start", Type: connector.TypeString, Required: true, Check: checkTime,
				Example: "2026-01-31T09:00:00Z",
				Doc:     "RFC 3339 start of the window, included: events the bus stored at or after it are replayed."},
			{Name: KeyEnd, Title: "Window end", Type: connector.TypeString, Required: true, Check: checkTime,
				Example: "2026-01-31T17:00:00Z",
				Doc:     "RFC 3339 end of the window, excluded: events the bus stored before it are replayed."},
			{Name: KeyEndSequence, Title: "Last archive sequence", Type: connector.TypeInt, Required: true, Min: connector.Min(0),
				Doc: "The archive's last sequence when the replay started (0: the archive was empty); the replay is " +
					"done once it read it, or everything the archive holds when its last sequence is below it."},
			{Name: KeyRules, Title: "Rules", Type: connector.TypeString, Check: checkRules,
				Example: "k7d2mz4xq5vb3nta,m2c7xq4kz5vd3bna",
				Doc:     "Comma-separated ids of the rules the events are replayed to; empty: every rule of the bus."},
			{Name: KeyTarget, Title: "Target", Type: connector.TypeString, Check: checkTarget,
				Example: "k7d2mz4xq5vb3nta.t3xv6bn2qk7mzd4a",
				Doc: "<ruleId>.<targetId>: the events are replayed to that target of that rule only (on its redrive " +
					"subject); it wins over " + KeyRules + "."},
			{Name: KeyRate, Title: "Rate (events per second)", Type: connector.TypeInt, Default: strconv.Itoa(DefaultRate), Min: connector.Min(1),
				Doc: "Most events replayed per second."},
		},
		NewSource: New,
	}
}

func checkName(v string) error {
	if !validName.MatchString(v) {
		return errors.New("must be 1 to 64 letters, digits, '.', '_' or '-'")
	}
	return nil
}

func checkStream(v string) error {
	if strings.ContainsAny(v, ".*> \t\r\n/\\") {
		return errors.New("a stream name must not contain '.', '*', '>', '/', '\\' or whitespace")
	}
	return nil
}

func checkSubject(v string) error {
	for _, tok := range strings.Split(v, ".") {
		if !token(tok) {
			return fmt.Errorf("%q is not a literal NATS subject", v)
		}
	}
	return nil
}

func checkTime(v string) error {
	if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
		return fmt.Errorf("%q is not an RFC 3339 time (like 2026-01-31T09:00:00Z)", v)
	}
	return nil
}

func checkRules(v string) error {
	for id := range strings.SplitSeq(v, ",") {
		if !token(strings.TrimSpace(id)) {
			return fmt.Errorf("%q is not a comma-separated list of rule ids", v)
		}
	}
	return nil
}

func checkTarget(v string) error {
	rule, target, ok := strings.Cut(v, ".")
	if !ok || !token(rule) || !token(target) {
		return fmt.Errorf("%q is not <ruleId>.<targetId>", v)
	}
	return nil
}

// token reports whether v is one token of a literal NATS subject.
func token(v string) bool { return v != "" && !strings.ContainsAny(v, ".*> \t\r\n,") }

// Source replays one archive. Read and Commit are called from one goroutine (connector.Source).
type Source struct {
	name, stream, subject string
	start, end            time.Time
	endSeq                uint64
	header                map[string]string // the headers of every record stored
	env                   connector.Env
	limiter               *rate.Limiter
	burst                 int // most events of one Read: the limiter's burst

	cons jetstream.Consumer
	iter jetstream.MessagesContext
	held jetstream.Msg // read from iter for the next Read (this one had its events)

	bySeq    bool   // read from pos+1 (something was read, or an offset stored), else from start
	pos      uint64 // the last archive sequence read
	replayed uint64
	lastAt   string // stored time of the last event replayed; "" before the first
	done     bool   // everything up to endSeq was read
	finished bool   // the offset saying done was returned (or stored before Connect)
}

var _ connector.Source = (*Source)(nil)

// New builds a replay from its config; a window that ends before it starts is a FieldError of replay.end. It does
// no I/O.
func New(cfg connector.Values, env connector.Env) (connector.Source, error) {
	s := &Source{name: cfg.String(KeyName), stream: cfg.String(KeyArchiveStream), subject: cfg.String(KeyArchiveSubject),
		env: env}
	var errs connector.FieldErrors
	var err error
	if s.start, err = time.Parse(time.RFC3339Nano, cfg.String(KeyStart)); err != nil {
		errs = append(errs, connector.FieldError{Key: KeyStart, Message: "is not an RFC 3339 time"})
	}
	if s.end, err = time.Parse(time.RFC3339Nano, cfg.String(KeyEnd)); err != nil {
		errs = append(errs, connector.FieldError{Key: KeyEnd, Message: "is not an RFC 3339 time"})
	}
	if len(errs) == 0 && !s.end.After(s.start) {
		errs = append(errs, connector.FieldError{Key: KeyEnd, Message: "must be after " + KeyStart})
	}
	if n := cfg.Int(KeyEndSequence); n >= 0 {
		s.endSeq = uint64(n)
	} else {
		errs = append(errs, connector.FieldError{Key: KeyEndSequence, Message: "must not be negative"})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	s.header = map[string]string{stream.HeaderReplay: s.name}
	if v := cfg.String(KeyRules); v != "" {
		ids := strings.Split(v, ",")
		for i := range ids {
			ids[i] = strings.TrimSpace(ids[i])
		}
		s.header[stream.HeaderReplayRules] = strings.Join(ids, ",")
	}
	if v := cfg.String(KeyTarget); v != "" {
		s.header[stream.HeaderReplayTarget] = v
	}
	perSecond := max(cfg.Int(KeyRate), 1)
	// Half a second of events per Read: small batches at low rates, and at high rates few enough Reads that the
	// time each batch takes to store (its acknowledgements, then its offset) does not hold the replay below its
	// rate (with a tenth of a second, 1,000/s came out at about 480/s beside live traffic on 2 cores).
	s.burst = int(min(max(perSecond/2, 1), MaxBatch))
	s.limiter = rate.NewLimiter(rate.Limit(perSecond), s.burst)
	return s, nil
}

func (s *Source) partition() map[string]any { return map[string]any{PartitionArchive: s.stream} }

// offset is the current position as an offset (a new map).
func (s *Source) offset() map[string]any {
	o := map[string]any{OffsetSequence: s.pos, OffsetReplayed: s.replayed, OffsetDone: s.done}
	if s.lastAt != "" {
		o[OffsetLastStoredAt] = s.lastAt
	}
	return o
}

// Connect finds where the replay stands from its stored offset (Env.Offset): after the sequence it names, or, with
// none, at the archived messages stored from replay.start on. It reads nothing yet. A stored offset that cannot be
// read is a permanent error; no JetStream context, an error.
func (s *Source) Connect(context.Context) error {
	if s.env.JetStream == nil {
		return errors.New("replay: no JetStream context")
	}
	off, ok := s.env.Offset(s.partition())
	if !ok {
		return nil
	}
	seq, err := rpc.SequenceOf(off[OffsetSequence])
	if err != nil {
		return connector.Permanent(fmt.Errorf("replay: stored offset %v: %w", off, err))
	}
	s.pos, s.bySeq = seq, true
	if v, ok := off[OffsetReplayed]; ok {
		if s.replayed, err = rpc.SequenceOf(v); err != nil {
			return connector.Permanent(fmt.Errorf("replay: stored offset %v: %s: %w", off, OffsetReplayed, err))
		}
	}
	s.lastAt, _ = off[OffsetLastStoredAt].(string)
	s.done, _ = off[OffsetDone].(bool)
	s.finished = s.done
	return nil
}

// Read returns the next records of the replay, blocking until there are some or ctx ends (then ctx.Err()): an
// event record per archived message stored in the window (at most half a second of replay.rate's events per call, and
// no sooner than the rate allows), and, when the last messages read were outside the window, a record without an
// event that moves the offset past them. Once the replay read replay.end.sequence (or the archive holds nothing
// more and its last sequence is below it), a record without an event carries the offset with done true; after
// it Read blocks until ctx ends. Tasks other than 0 block at once. An archive stream that does not exist is a
// permanent error; other errors of the archive are returned (the runtime retries) and reading starts again after
// the last sequence returned.
func (s *Source) Read(ctx context.Context) ([]connector.SourceRecord, error) {
	if s.env.Task != 0 || s.finished {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	for {
		out, events, err := s.batch(ctx)
		if err != nil {
			return nil, err
		}
		if len(out) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			continue
		}
		if events > 0 {
			// A ctx that ends here stops the task: what this batch moved is read again by the next task.
			if err := s.limiter.WaitN(ctx, events); err != nil {
				return nil, cmp.Or(ctx.Err(), err)
			}
		}
		s.finished = s.done
		return out, nil
	}
}

// batch reads at most MaxBatch archived messages and returns their records, with the number of events among them.
// It returns no record when no message came within emptyWait and the archive still has some to read.
func (s *Source) batch(ctx context.Context) ([]connector.SourceRecord, int, error) {
	var out []connector.SourceRecord
	events := 0
	moved := false // messages were skipped since the last record
	for range MaxBatch {
		if s.pos >= s.endSeq {
			s.done = true
			break
		}
		msg := s.held
		s.held = nil
		if msg == nil {
			var err error
			if msg, err = s.next(ctx); err != nil {
				if len(out) > 0 || moved {
					break // return what was read; the next call reports the error if it lasts
				}
				return nil, 0, err
			}
			if msg == nil { // nothing came: is anything left to read?
				if len(out) == 0 && !moved {
					left, err := s.pending(ctx)
					if err != nil {
						return nil, 0, err
					}
					s.done = !left
				}
				break
			}
		}
		md, err := msg.Metadata()
		if err != nil {
			return nil, 0, fmt.Errorf("replay: reading archive %s: %w", s.stream, err)
		}
		seq := md.Sequence.Stream
		if seq > s.endSeq {
			s.done = true // archived after the replay started
			break
		}
		at := storedAt(msg, md)
		if !at.Before(s.start) && at.Before(s.end) {
			if events == s.burst {
				s.held = msg
				break
			}
			if e, err := s.event(msg); err != nil {
				s.env.Log().Warn("archived message skipped: it is not a CloudEvent", "stream", s.stream, "seq", seq, "err", err)
			} else {
				s.pos, s.bySeq = seq, true
				s.replayed++
				s.lastAt = stream.FormatStoredAt(at)
				out = append(out, connector.SourceRecord{Event: e, Partition: s.partition(), Offset: s.offset(),
					Header: s.header, MsgID: stream.HopMsgID(archivedID(msg, s.stream, seq), "replay", s.name)})
				events++
				moved = false
				if md.NumPending == 0 && seq < s.endSeq {
					s.done = true // the archive holds nothing more, and its last sequence is below the end
					break
				}
				continue
			}
		}
		s.pos, s.bySeq = seq, true
		moved = true
		if md.NumPending == 0 && seq < s.endSeq {
			s.done = true
			break
		}
	}
	if moved || s.done {
		out = append(out, connector.SourceRecord{Partition: s.partition(), Offset: s.offset()})
	}
	return out, events, nil
}

// next returns the next archived message, or nil when none came within emptyWait (or ctx ended). It opens the
// reading consumer on first use, and again after an error.
func (s *Source) next(ctx context.Context) (jetstream.Msg, error) {
	if s.iter == nil {
		if err := s.open(ctx); err != nil {
			return nil, err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, emptyWait)
	defer cancel()
	msg, err := s.iter.Next(jetstream.NextContext(wctx))
	switch {
	case err == nil:
		return msg, nil
	case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return nil, nil
	}
	s.stop()
	return nil, fmt.Errorf("replay: reading archive %s: %w", s.stream, err)
}

// open creates the ordered consumer that reads the archive (acknowledging nothing) after the last sequence read,
// or from replay.start when nothing was read yet.
func (s *Source) open(ctx context.Context) error {
	// A few attempts to re-create the consumer after an error, then Next fails: Read reports it, and a deleted
	// archive fails the task, rather than waiting for ever.
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{s.subject}, MaxResetAttempts: resetAttempts}
	if s.bySeq {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, s.pos+1
	} else {
		start := s.start
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &start
	}
	cons, err := s.env.JetStream.OrderedConsumer(ctx, s.stream, cfg)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return connector.Permanent(fmt.Errorf("replay: archive %s: %w", s.stream, err))
	}
	if err != nil {
		return fmt.Errorf("replay: reading archive %s: %w", s.stream, err)
	}
	iter, err := cons.Messages(jetstream.PullMaxMessages(MaxBatch))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return connector.Permanent(fmt.Errorf("replay: archive %s: %w", s.stream, err))
	}
	if err != nil {
		return fmt.Errorf("replay: reading archive %s: %w", s.stream, err)
	}
	s.cons, s.iter, s.held = cons, iter, nil
	return nil
}

// pending reports whether the reading consumer has archived messages left to deliver.
func (s *Source) pending(ctx context.Context) (bool, error) {
	info, err := s.cons.Info(ctx)
	if errors.Is(err, jetstream.ErrOrderedConsumerNotCreated) {
		return true, nil
	}
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return false, connector.Permanent(fmt.Errorf("replay: archive %s: %w", s.stream, err))
	}
	if err != nil {
		if ctx.Err() != nil {
			return true, nil
		}
		return false, fmt.Errorf("replay: reading archive %s: %w", s.stream, err)
	}
	return info.NumPending > 0, nil
}

// stop stops reading; the next read opens a consumer after the last sequence read (a held message is read again).
func (s *Source) stop() {
	if s.iter != nil {
		s.iter.Stop()
	}
	s.iter, s.held = nil, nil
}

// event is the archived event of msg, with the replay's name.
func (s *Source) event(msg jetstream.Msg) (*event.Event, error) {
	e, err := stream.Decode(&nats.Msg{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data()})
	if err != nil {
		return nil, err
	}
	e.SetExtension(ExtReplayName, s.name)
	return e, nil
}

// storedAt is when the bus stored the event msg is an archived copy of: its stream.HeaderStoredAt, else when the
// archive stored it.
func storedAt(msg jetstream.Msg, md *jetstream.MsgMetadata) time.Time {
	if v := msg.Headers().Get(stream.HeaderStoredAt); v != "" {
		if t, err := stream.ParseStoredAt(v); err == nil {
			return t
		}
	}
	return md.Timestamp
}

// archivedID is the id of an archived message that stays the same however often it is read: its Nats-Msg-Id, else
// <stream>:<sequence>.
func archivedID(msg jetstream.Msg, streamName string, seq uint64) string {
	if id := msg.Headers().Get(nats.MsgIdHdr); id != "" {
		return id
	}
	return streamName + ":" + strconv.FormatUint(seq, 10)
}

// Commit does nothing: the position is the offset the runtime stored.
func (s *Source) Commit(context.Context, []connector.SourceRecord) error { return nil }

// Close stops reading and deletes the reading consumer, waiting at most closeTimeout (the server removes it after
// five idle minutes otherwise). It returns nil.
func (s *Source) Close() error {
	cons := s.cons
	s.stop()
	s.cons = nil
	if cons == nil {
		return nil
	}
	if info := cons.CachedInfo(); info != nil && s.env.JetStream != nil {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		_ = s.env.JetStream.DeleteConsumer(ctx, s.stream, info.Name)
	}
	return nil
}
