package connector

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/stream"
)

// LogConfig is what a sink's config says of its bus log (KeyLogTopic, KeyLogLevel, KeyLogDetail).
type LogConfig struct {
	// Subject is where the records are published; "" writes none.
	Subject string
	// Level is stream.LogOff, LogError, LogInfo or LogTrace; any other value writes none.
	Level string
	// Full is set when records carry the event and the start of the target's answers (stream.LogDetailFull).
	Full bool
}

// ParseLogConfig reads the bus-log keys of a config that passed SinkSpec validation.
func ParseLogConfig(v Values) LogConfig {
	return LogConfig{
		Subject: v.String(KeyLogTopic),
		Level:   v.String(KeyLogLevel),
		Full:    v.String(KeyLogDetail) == stream.LogDetailFull,
	}
}

// On reports whether c writes any record: a subject and a level above OFF.
func (c LogConfig) On() bool { return c.Subject != "" && stream.LogRank(c.Level) > 0 }

// LogPublisher publishes a message without waiting for JetStream's acknowledgement; jetstream.JetStream is one.
type LogPublisher interface {
	PublishMsgAsync(m *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error)
}

// SelfLogging is implemented by sinks that write the bus-log records of the attempts they accept themselves (the
// router: what it matched). The runtime then writes only the failure records of their attempts, never
// stream.LogAttemptSuccess nor stream.LogEventFiltered.
type SelfLogging interface {
	// LogsOwnRecords reports whether the sink writes its own records of accepted attempts.
	LogsOwnRecords() bool
	// LogDropped counts the sink's own records that could not be published (EventLog.Dropped).
	LogDropped() uint64
}

// Bounds of an EventLog.
const (
	// LogStallWait is the longest a record waits for room among the connection's unacknowledged asynchronous
	// publishes (4,000 by default) before it is dropped: a busy JetStream slows a task by that much at most.
	LogStallWait = 50 * time.Millisecond
	// LogAckWait is how long the acknowledgement of a record is awaited before the record is counted as dropped.
	LogAckWait = 10 * time.Second
	// logFollowed bounds the records whose acknowledgement is awaited at one time; those beyond are published
	// but not followed.
	logFollowed = 256
	// logFollowIdle is how long the goroutine that follows acknowledgements waits for the next record before it
	// ends.
	logFollowIdle = time.Second
	// logDropEvery spaces the debug messages about records dropped.
	logDropEvery = time.Minute
)

// logPublishOpts are the options of every record's publish: no retries when no stream answers (the bus-log
// stream may not exist), and a short wait for room.
var logPublishOpts = []jetstream.PublishOpt{jetstream.WithRetryAttempts(0), jetstream.WithStallWait(LogStallWait)}

// EventLog writes the bus-log records of one task (stream.LogRecord) to the subject of its LogConfig, at its
// level and detail. Records are best effort: they are published asynchronously (PublishMsgAsync) and Write never
// waits for JetStream's acknowledgement; a record that cannot be published, or whose acknowledgement is an error
// or does not come within LogAckWait, is counted (Dropped) and reported at debug level at most once a minute.
// Acknowledgements are followed by one goroutine that runs only while records are written and ends after a
// second without any.
//
// A nil *EventLog writes nothing and is what NewEventLog returns for a config that writes nothing: callers check
// it (or Enabled) once and pay nothing more when the log is off. Safe for concurrent use.
type EventLog struct {
	pub       LogPublisher
	subject   string
	rank      int
	full      bool
	connector string
	log       *slog.Logger

	followed  chan jetstream.PubAckFuture // acknowledgements the follower awaits
	following atomic.Bool                 // a follower runs
	dropped   atomic.Uint64
	reported  atomic.Int64 // UnixNano of the last debug message about drops
}

// NewEventLog returns the writer of c's records on behalf of the connector connectorName (stream.LogRecord's
// Connector), or nil when c writes none or pub is nil. It starts nothing; log may be nil.
func NewEventLog(pub LogPublisher, c LogConfig, connectorName string, log *slog.Logger) *EventLog {
	if pub == nil || !c.On() {
		return nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &EventLog{
		pub: pub, subject: c.Subject, rank: stream.LogRank(c.Level), full: c.Full, connector: connectorName,
		log: log, followed: make(chan jetstream.PubAckFuture, logFollowed),
	}
}

// Enabled reports whether records of level (stream.LogError, LogInfo, LogTrace) are written; false for a nil l.
func (l *EventLog) Enabled(level string) bool {
	if l == nil {
		return false
	}
	r := stream.LogRank(level)
	return r > 0 && r <= l.rank
}

// Full reports whether records carry the event and the start of answers (stream.LogDetailFull).
func (l *EventLog) Full() bool { return l != nil && l.full }

// Dropped counts the records that could not be published or whose publish JetStream refused; 0 for a nil l.
func (l *EventLog) Dropped() uint64 {
	if l == nil {
		return 0
	}
	return l.dropped.Load()
}

// Write publishes r when its level (stream.LogLevelOf of its type, unless r.Level says) is enabled. It fills in
// the record's Time (now), Connector (the writer's connector) and Level when they are empty, and removes Event and
// Snippet unless the detail is FULL. It does not wait for JetStream: at most LogStallWait when the connection has
// too many publishes unacknowledged. Failures are counted, never returned. Nothing happens for a nil l.
func (l *EventLog) Write(r stream.LogRecord) {
	if l == nil {
		return
	}
	if r.Level == "" {
		r.Level = stream.LogLevelOf(r.Type)
	}
	if !l.Enabled(r.Level) {
		return
	}
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	if r.Connector == "" {
		r.Connector = l.connector
	}
	if !l.full {
		r.Event, r.Snippet = nil, ""
	}
	m, err := stream.EncodeLogRecord(l.subject, r)
	if err != nil {
		l.drop(err)
		return
	}
	f, err := l.pub.PublishMsgAsync(m, logPublishOpts...)
	if err != nil {
		l.drop(err)
		return
	}
	l.follow(f)
}

// follow hands f to the follower, starting one when none runs. A future the follower has no room for is not
// followed: its record is published, and only its failure would go uncounted.
func (l *EventLog) follow(f jetstream.PubAckFuture) {
	select {
	case l.followed <- f:
	default:
		return
	}
	if l.following.CompareAndSwap(false, true) {
		go l.follower()
	}
}

// follower awaits the acknowledgements handed to it, counting the failed ones, until none came for
// logFollowIdle.
func (l *EventLog) follower() {
	idle := time.NewTimer(logFollowIdle)
	defer idle.Stop()
	late := time.NewTimer(LogAckWait)
	defer late.Stop()
	for {
		select {
		case f := <-l.followed:
			late.Reset(LogAckWait)
			select {
			case <-f.Ok():
			case err := <-f.Err():
				l.drop(err)
			case <-late.C:
				l.drop(jetstream.ErrAsyncPublishTimeout)
			}
			idle.Reset(logFollowIdle)
		case <-idle.C:
			l.following.Store(false)
			// A record handed over after the last receive and before the flag was cleared found the flag set and
			// started no follower: take it, unless a new follower already runs.
			if len(l.followed) == 0 || !l.following.CompareAndSwap(false, true) {
				return
			}
			idle.Reset(logFollowIdle)
		}
	}
}

// drop counts a record not published and says so at debug level, at most once per logDropEvery.
func (l *EventLog) drop(err error) {
	n := l.dropped.Add(1)
	now := time.Now().UnixNano()
	last := l.reported.Load()
	if last != 0 && now-last < int64(logDropEvery) {
		return
	}
	if l.reported.CompareAndSwap(last, now) {
		l.log.Debug("bus-log records could not be published; they are dropped", "subject", l.subject,
			"dropped", n, "err", err)
	}
}
