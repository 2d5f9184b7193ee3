package delivery_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/egress"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

// The bus log of the tests: account a1, bus b1.
var (
	logNames   = stream.Names{Cluster: "eb"}
	logSubject = logNames.LogSubject("a1", "b1")
)

// quiet is how long a test waits after the last record it expects for records it does not expect. Records are
// published before their input record is acked, so they come within milliseconds.
const quiet = 300 * time.Millisecond

// logStream creates the account's bus-log stream.
func logStream(t *testing.T, env *jetstreamtest.Env) {
	t.Helper()
	_, err := env.JS.CreateStream(context.Background(), logNames.LogStreamConfig("a1", 1, stream.LogLimits{}))
	require.NoError(t, err)
}

// logRecords returns the records of the bus log, in order.
func logRecords(t *testing.T, js jetstream.JetStream) []stream.LogRecord {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, logNames.LogStream("a1"))
	require.NoError(t, err)
	var out []stream.LogRecord
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			return out
		}
		require.Equal(t, logSubject, m.Subject)
		r, err := stream.DecodeLogRecord(m.Data)
		require.NoError(t, err)
		out = append(out, r)
	}
}

func types(rs []stream.LogRecord) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Type)
	}
	return out
}

// failingServer answers the first fail requests with status and "try later", then 204.
func failingServer(t *testing.T, fail, status int) *httptest.Server {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		if k <= fail {
			http.Error(w, "try later", status)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// startLogged starts a task of the http sink on the fixture's stream, configured by cfg on top of the fixture's
// keys, with the bus log its config says, as the herder does.
func (f *fixture) startLogged(t *testing.T, url string, cfg map[string]string) *delivery.Task {
	t.Helper()
	p := httpsink.Plugin()
	full := map[string]string{
		connector.KeyClass: httpsink.Name, connector.KeyTopics: "s.in", connector.KeyStream: "S",
		connector.KeyDurable: "d", connector.KeyRetryDelayInitial: "10", connector.KeyRetryDelayMax: "50",
		httpsink.KeyURL: url,
	}
	for k, v := range cfg {
		full[k] = v
	}
	values := p.FullSpec().Values(full)
	sink, err := p.NewSink(values, connector.Env{Egress: egress.Config{AllowPrivate: true}, Connector: connName})
	require.NoError(t, err)
	f.cfg = delivery.ParseConfig(values)
	cons, err := delivery.EnsureConsumer(context.Background(), f.env.JS, f.cfg, 15*time.Second)
	require.NoError(t, err)
	task, err := delivery.Start(context.Background(), delivery.TaskConfig{
		Consumer: cons, Sink: sink, Handler: f.cfg.ChainDLQ(f.env.JS, connName, sink), AckWait: 15 * time.Second,
		EventLog: f.cfg.EventLog(f.env.JS, connName, nil),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })
	return task
}

// A target task writes a record per attempt and, when it gives a record up, what became of it, at the bus's level.
func TestTaskWritesBusLog(t *testing.T) {
	t.Parallel()
	type want struct {
		typ        string
		attempt    uint64
		class      string
		status     int
		hasSnippet bool
	}
	retry := want{stream.LogAttemptRetryableFailure, 1, delivery.ClassHTTP5xx, 500, false}
	tests := []struct {
		name    string
		fail    int // requests answered status before the target accepts
		status  int
		cfg     map[string]string
		noTopic bool
		want    []want
	}{
		{"INFO: a retry then a success", 1, 500, map[string]string{connector.KeyLogLevel: stream.LogInfo},
			false, []want{retry, {typ: stream.LogAttemptSuccess, attempt: 2}}},
		{"ERROR: the failure only", 1, 500, map[string]string{connector.KeyLogLevel: stream.LogError},
			false, []want{retry}},
		{"TRACE: as INFO", 1, 500, map[string]string{connector.KeyLogLevel: stream.LogTrace},
			false, []want{retry, {typ: stream.LogAttemptSuccess, attempt: 2}}},
		{"FULL: the start of the answer", 1, 500,
			map[string]string{connector.KeyLogLevel: stream.LogError, connector.KeyLogDetail: stream.LogDetailFull},
			false, []want{{stream.LogAttemptRetryableFailure, 1, delivery.ClassHTTP5xx, 500, true}}},
		{"OFF: nothing", 1, 500, map[string]string{connector.KeyLogLevel: stream.LogOff}, false, nil},
		{"default level: nothing", 1, 500, map[string]string{}, false, nil},
		{"INFO without a topic: nothing", 1, 500, map[string]string{connector.KeyLogLevel: stream.LogInfo}, true, nil},
		{"retries exhausted: dead-lettered", 10, 503,
			map[string]string{connector.KeyLogLevel: stream.LogError, connector.KeyRetryMaxAttempts: "1",
				connector.KeyDLQTopic: dlqSubject},
			false, []want{
				{stream.LogAttemptRetryableFailure, 1, delivery.ClassHTTP5xx, 503, false},
				{stream.LogAttemptPermanentFailure, 2, delivery.ClassHTTP5xx, 503, false},
				{stream.LogInvocationDLQ, 2, delivery.ClassHTTP5xx, 503, false},
			}},
		{"permanent error without a dead-letter subject: dropped", 10, 400,
			map[string]string{connector.KeyLogLevel: stream.LogInfo},
			false, []want{
				{stream.LogAttemptPermanentFailure, 1, delivery.ClassHTTP4xx, 400, false},
				{stream.LogInvocationDropped, 1, delivery.ClassHTTP4xx, 400, false},
			}},
		{"tolerance none: the task fails", 10, 400,
			map[string]string{connector.KeyLogLevel: stream.LogError, connector.KeyErrorsTolerance: connector.ToleranceNone},
			false, []want{
				{stream.LogAttemptPermanentFailure, 1, delivery.ClassHTTP4xx, 400, false},
				{stream.LogInvocationFailure, 1, delivery.ClassHTTP4xx, 400, false},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := failingServer(t, tt.fail, tt.status)
			f := newDLQFixture(t)
			logStream(t, f.env)
			cfg := map[string]string{}
			for k, v := range tt.cfg {
				cfg[k] = v
			}
			if !tt.noTopic {
				cfg[connector.KeyLogTopic] = logSubject
			}
			task := f.startLogged(t, srv.URL, cfg)
			if tt.want == nil {
				assert.Nil(t, f.cfg.EventLog(f.env.JS, connName, nil), "a log that writes nothing has no writer")
			}
			seq := f.env.Publish(t, "s.in", jetstreamtest.Event("e1", "order.created", map[string]any{"n": 1}))
			if tt.cfg[connector.KeyErrorsTolerance] == connector.ToleranceNone {
				require.Eventually(t, func() bool { s, _ := task.State(); return s == "FAILED" }, wait, tick)
			} else {
				require.Eventually(t, func() bool { return f.settled(t, seq) }, wait, tick)
			}
			require.Eventually(t, func() bool { return len(logRecords(t, f.env.JS)) >= len(tt.want) }, wait, tick)
			time.Sleep(quiet)
			got := logRecords(t, f.env.JS)
			wantTypes := []string{}
			for _, w := range tt.want {
				wantTypes = append(wantTypes, w.typ)
			}
			require.Equal(t, wantTypes, types(got))
			for i, w := range tt.want {
				r := got[i]
				assert.Equal(t, stream.LogLevelOf(w.typ), r.Level, "record %d", i)
				assert.Equal(t, "e1", r.EventID)
				assert.Equal(t, "test/source", r.EventSource)
				assert.Equal(t, "order.created", r.EventType)
				assert.Equal(t, seq, r.Sequence)
				assert.False(t, r.StoredAt.IsZero(), "when the record was stored")
				assert.WithinDuration(t, time.Now(), r.Time, time.Minute)
				assert.Equal(t, connName, r.Connector)
				assert.Equal(t, w.attempt, r.Attempt, "record %d", i)
				assert.Equal(t, w.class, r.ErrorClass, "record %d", i)
				assert.Equal(t, w.status, r.HTTPStatus, "record %d", i)
				if w.class != "" {
					assert.Contains(t, r.Message, strconv.Itoa(w.status), "record %d", i)
				} else {
					assert.Empty(t, r.Message)
				}
				if w.hasSnippet {
					assert.Contains(t, r.Snippet, "try later")
				} else {
					assert.Empty(t, r.Snippet, "record %d: the answer only with FULL", i)
				}
				switch w.typ {
				case stream.LogAttemptSuccess, stream.LogAttemptRetryableFailure, stream.LogAttemptPermanentFailure:
					assert.Positive(t, r.LatencyMs, "record %d: the attempt's duration", i)
				}
			}
			assert.Zero(t, task.Counters().LogDropped)
		})
	}
}

// Secret values of the connector's config never reach the bus log.
func TestTaskBusLogRedacts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	logStream(t, f.env)
	f.cfg.Log = connector.LogConfig{Subject: logSubject, Level: stream.LogError, Full: true}
	s := newSink()
	s.FailFirst = 1
	s.Err = connector.WithStatus(errors.New("refused with token s3cr3t"), 500, "the token s3cr3t is wrong")
	cons, err := delivery.EnsureConsumer(context.Background(), f.env.JS, f.cfg, delivery.AckWait)
	require.NoError(t, err)
	task, err := delivery.Start(context.Background(), delivery.TaskConfig{
		Consumer: cons, Sink: s, Handler: f.cfg.Chain(s), EventLog: f.cfg.EventLog(f.env.JS, connName, nil),
		Redact: func(v string) string { return strings.ReplaceAll(v, "s3cr3t", "****") },
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })
	seq := f.env.Publish(t, "s.in", jetstreamtest.Event("e1", "t", nil))
	require.Eventually(t, func() bool { return f.settled(t, seq) }, wait, tick)
	require.Eventually(t, func() bool { return len(logRecords(t, f.env.JS)) >= 1 }, wait, tick)
	r := logRecords(t, f.env.JS)[0]
	assert.Equal(t, stream.LogAttemptRetryableFailure, r.Type)
	assert.Equal(t, "refused with token ****", r.Message)
	assert.Equal(t, "the token **** is wrong", r.Snippet)
}

// selfLoggingSink is a sink that writes the records of its accepted attempts itself, as the router does.
type selfLoggingSink struct{ *recordingSink }

func (selfLoggingSink) LogsOwnRecords() bool { return true }
func (selfLoggingSink) LogDropped() uint64   { return 0 }

// A sink that writes its own records gets only the failure records of its attempts from the task.
func TestTaskLeavesSuccessRecordsToSelfLoggingSinks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	logStream(t, f.env)
	f.cfg.Log = connector.LogConfig{Subject: logSubject, Level: stream.LogInfo}
	s := newSink()
	s.FailFirst = 1
	sink := selfLoggingSink{s}
	cons, err := delivery.EnsureConsumer(context.Background(), f.env.JS, f.cfg, delivery.AckWait)
	require.NoError(t, err)
	task, err := delivery.Start(context.Background(), delivery.TaskConfig{
		Consumer: cons, Sink: sink, Handler: f.cfg.Chain(sink), EventLog: f.cfg.EventLog(f.env.JS, connName, nil),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })
	seq := f.env.Publish(t, "s.in", jetstreamtest.Event("e1", "t", nil))
	require.Eventually(t, func() bool { return f.settled(t, seq) }, wait, tick)
	require.Eventually(t, func() bool { return len(logRecords(t, f.env.JS)) >= 1 }, wait, tick)
	time.Sleep(quiet)
	assert.Equal(t, []string{stream.LogAttemptRetryableFailure}, types(logRecords(t, f.env.JS)))
	assert.Equal(t, []uint64{1, 2}, s.Attempts("e1"), "the record was written at its second attempt")
}

// Without the bus-log stream, records cannot be stored: they are counted, and delivery goes on.
func TestTaskCountsBusLogRecordsNotStored(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.cfg.Log = connector.LogConfig{Subject: logSubject, Level: stream.LogInfo}
	s := newSink()
	cons, err := delivery.EnsureConsumer(context.Background(), f.env.JS, f.cfg, delivery.AckWait)
	require.NoError(t, err)
	task, err := delivery.Start(context.Background(), delivery.TaskConfig{
		Consumer: cons, Sink: s, Handler: f.cfg.Chain(s), EventLog: f.cfg.EventLog(f.env.JS, connName, nil),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })
	f.env.PublishN(t, "s.in", "e", 3)
	require.Eventually(t, func() bool { return f.settled(t, 3) }, wait, tick)
	assert.Len(t, s.Accepted(), 3)
	require.Eventually(t, func() bool { return task.Counters().LogDropped == 3 }, wait, tick,
		"one success record per event, none stored")
}
