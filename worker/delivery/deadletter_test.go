package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
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

const (
	dlqStream  = "DLQ"
	dlqSubject = "dlq.acct"
	connName   = "c1"
)

// deadLetter is one stored dead letter.
type deadLetter struct {
	MsgID string
	Event *event.Event
	stream.DeadLetter
}

func deadLetters(t *testing.T, js jetstream.JetStream) []deadLetter {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, dlqStream)
	require.NoError(t, err)
	var out []deadLetter
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			return out
		}
		e, d, err := stream.DecodeDeadLetter(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
		require.NoError(t, err, "a dead letter holds the original event")
		out = append(out, deadLetter{MsgID: m.Header.Get(nats.MsgIdHdr), Event: e, DeadLetter: d})
	}
}

func newDLQFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.env.Stream(t, dlqStream, dlqSubject)
	f.cfg.DLQSubject = dlqSubject
	return f
}

// startDLQ starts a task whose handler dead-letters (ChainDLQ, or h when given).
func (f *fixture) startDLQ(t *testing.T, s connector.Sink, h delivery.Handler, ts ...connector.NamedTransform) *delivery.Task {
	t.Helper()
	ackWait := 15 * time.Second
	cons, err := delivery.EnsureConsumer(context.Background(), f.env.JS, f.cfg, ackWait)
	require.NoError(t, err)
	if h == nil {
		h = f.cfg.ChainDLQ(f.env.JS, connName, s, ts...)
	}
	task, err := delivery.Start(context.Background(), delivery.TaskConfig{
		Consumer: cons, Sink: s, Handler: h, AckWait: ackWait,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })
	return task
}

func TestTaskDeadLettersGivenUpRecords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		err        error
		transform  bool
		maxRetries int
		attempts   uint64
		class      string
		reason     string
	}{
		{"retries exhausted", nil, false, 2, 3, stream.DLQClassExhausted, "target unavailable"},
		{"permanent at once", connector.Permanent(errors.New("answered 400")), false, 5, 1, stream.DLQClassPermanent, "answered 400"},
		{"transform refuses", nil, true, 5, 1, stream.DLQClassTransform, "transform input: bad template"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newDLQFixture(t)
			f.cfg.Retry.MaxRetries = tt.maxRetries
			ids := f.env.PublishN(t, "s.in", "e", 5)
			sink := newSink()
			sink.FailFirst, sink.Err = 100, tt.err
			var ts []connector.NamedTransform
			if tt.transform {
				ts = []connector.NamedTransform{{Name: "input", Transform: fnTransform(func(*event.Event) ([]*event.Event, error) {
					return nil, errors.New("bad template")
				})}}
			}
			task := f.startDLQ(t, sink, nil, ts...)
			require.Eventually(t, func() bool { return f.settled(t, 5) }, wait, tick, "dead-lettered records are acked")
			c := task.Counters()
			assert.Equal(t, uint64(5), c.DeadLettered)
			assert.Zero(t, c.Dropped)
			dls := deadLetters(t, f.env.JS)
			require.Len(t, dls, 5)
			var got []string
			for _, d := range dls {
				got = append(got, d.Event.ID())
				assert.Equal(t, tt.attempts, d.Attempts)
				assert.Equal(t, connName, d.Connector)
				assert.Equal(t, tt.class, d.ErrorClass)
				assert.Contains(t, d.Reason, tt.reason)
				assert.Equal(t, "S", d.Stream)
				assert.Equal(t, "s.in", d.Subject)
				assert.Equal(t, "test.event", d.Event.Type())
				assert.NotEmpty(t, d.Event.Data(), "the original data travels with the dead letter")
				assert.Equal(t, stream.DLQMsgID(stream.PutMsgID(d.Event.Source(), d.Event.ID()), connName), d.MsgID)
			}
			assert.ElementsMatch(t, ids, got)
			if !tt.transform {
				for _, id := range ids {
					assert.Len(t, sink.Attempts(id), int(tt.attempts))
				}
			}
		})
	}
}

// Without a dead-letter topic, records given up are dropped as before, even through ChainDLQ.
func TestTaskWithoutDLQTopicDrops(t *testing.T) {
	t.Parallel()
	f := newDLQFixture(t)
	f.cfg.DLQSubject = ""
	f.cfg.Retry.MaxRetries = 0
	f.env.PublishN(t, "s.in", "e", 3)
	sink := newSink()
	sink.FailFirst = 100
	task := f.startDLQ(t, sink, nil)
	require.Eventually(t, func() bool { return f.settled(t, 3) }, wait, tick)
	assert.Equal(t, uint64(3), task.Counters().Dropped)
	assert.Zero(t, task.Counters().DeadLettered)
	assert.Empty(t, deadLetters(t, f.env.JS))
}

// A record whose dead letter cannot be stored is never acked: it comes back until the dead letter is stored, and
// then it is stored once.
func TestTaskNeverAcksWhenDLQPublishFails(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.cfg.DLQSubject = dlqSubject // no stream yet: every publish fails
	f.cfg.Retry.MaxRetries = 0
	f.env.Publish(t, "s.in", jetstreamtest.Event("x", "t", nil))
	sink := newSink()
	sink.FailFirst = 1000
	h := delivery.Tolerate(f.cfg.Tolerance, delivery.WithDeadLetter(delivery.DeadLetterConfig{
		Publisher: f.env.JS, Subject: dlqSubject, Connector: connName, Retry: f.cfg.Retry,
		PublishTimeout: 500 * time.Millisecond, MinRetryDelay: 20 * time.Millisecond,
	}, delivery.WithRetry(f.cfg.Retry, delivery.Write(sink))))
	task := f.startDLQ(t, sink, h)
	require.Eventually(t, func() bool { return len(sink.Attempts("x")) >= 3 }, wait, tick)
	i := f.info(t)
	assert.Zero(t, i.AckFloor.Stream, "the record is not acked while its dead letter is not stored")
	c := task.Counters()
	assert.Zero(t, c.DeadLettered)
	assert.Zero(t, c.Dropped)
	assert.GreaterOrEqual(t, c.Retried, uint64(2))

	f.env.Stream(t, dlqStream, dlqSubject)
	require.Eventually(t, func() bool { return f.settled(t, 1) }, wait, tick)
	assert.Equal(t, uint64(1), task.Counters().DeadLettered)
	dls := deadLetters(t, f.env.JS)
	require.Len(t, dls, 1)
	assert.Equal(t, "x", dls[0].Event.ID())
	assert.Greater(t, dls[0].Attempts, uint64(1), "attempts count every delivery")
}

// A dead letter published twice (the worker died between the publish and the ack) is stored once.
func TestDeadLetterStoredOnce(t *testing.T) {
	t.Parallel()
	f := newDLQFixture(t)
	h := delivery.WithDeadLetter(delivery.DeadLetterConfig{Publisher: f.env.JS, Subject: dlqSubject, Connector: connName},
		delivery.Write(errSink{connector.Permanent(errors.New("400"))}))
	e := jetstreamtest.Event("x", "t", nil)
	for n := range uint64(2) {
		ctx := connector.WithMeta(context.Background(), connector.Meta{Stream: "S", Sequence: 7, Attempt: n + 1, MsgID: "m1"})
		assert.Equal(t, delivery.DeadLettered, h(ctx, e).Action)
	}
	require.Len(t, deadLetters(t, f.env.JS), 1)
}

// A record being retried when its task stops is dead-lettered by the next task after the attempts of both.
func TestTaskDeadLettersAcrossTaskRestart(t *testing.T) {
	t.Parallel()
	f := newDLQFixture(t)
	f.cfg.Retry.MaxRetries = 3
	f.env.Publish(t, "s.in", jetstreamtest.Event("doomed", "t", nil))
	first := newSink()
	first.FailFirst = 100
	t1 := f.startDLQ(t, first, nil)
	require.Eventually(t, func() bool { return len(first.Attempts("doomed")) >= 2 }, wait, tick)
	require.NoError(t, t1.Stop(context.Background()))

	second := newSink()
	second.FailFirst = 100
	t2 := f.startDLQ(t, second, nil)
	require.Eventually(t, func() bool { return t2.Counters().DeadLettered == 1 }, wait, tick)
	require.Eventually(t, func() bool { return f.settled(t, 1) }, wait, tick)
	dls := deadLetters(t, f.env.JS)
	require.Len(t, dls, 1)
	assert.Equal(t, uint64(4), dls[0].Attempts)
	assert.Len(t, append(first.Attempts("doomed"), second.Attempts("doomed")...), 4)
}

// timedSink records when each attempt of each record happened, relative to the record's stored timestamp.
type timedSink struct {
	mu    sync.Mutex
	since map[uint64]time.Duration // Attempt → time since stored
	err   func(n uint64) error
}

func (s *timedSink) Connect(context.Context) error { return nil }
func (s *timedSink) Close() error                  { return nil }
func (s *timedSink) Write(ctx context.Context, _ *event.Event) error {
	m, _ := connector.MetaFrom(ctx)
	s.mu.Lock()
	s.since[m.Attempt] = time.Since(m.Timestamp)
	s.mu.Unlock()
	return s.err(m.Attempt)
}

func (s *timedSink) at(n uint64) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.since[n]
	return d, ok
}

// A Retry-After from the target replaces the policy's delay: the second delivery comes no sooner.
func TestTaskHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	f := newDLQFixture(t)
	f.cfg.Retry = delivery.RetryPolicy{MaxRetries: 3, MaxAge: -1, InitialDelay: 10 * time.Millisecond, MaxDelay: 5 * time.Second}
	f.env.Publish(t, "s.in", jetstreamtest.Event("x", "t", nil))
	const after = 700 * time.Millisecond
	sink := &timedSink{since: map[uint64]time.Duration{}, err: func(n uint64) error {
		if n == 1 {
			return connector.RetryAfter(errors.New("429"), after)
		}
		return nil
	}}
	task := f.startDLQ(t, sink, nil)
	require.Eventually(t, func() bool { return f.settled(t, 1) }, wait, tick)
	first, ok1 := sink.at(1)
	second, ok2 := sink.at(2)
	require.True(t, ok1 && ok2)
	assert.GreaterOrEqual(t, second-first, after, "the redelivery waited for Retry-After (policy delay is 10ms)")
	assert.Equal(t, uint64(1), task.Counters().Written)
}

// The worker-level behaviour with the http sink: an always-failing target (500) sends every event to the
// dead-letter stream after the configured attempts; a 400 dead-letters at once.
func TestHTTPTargetDeadLetters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status   int
		attempts uint64
		class    string
	}{
		{http.StatusInternalServerError, 3, stream.DLQClassExhausted},
		{http.StatusBadRequest, 1, stream.DLQClassPermanent},
	} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			hits := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				hits++
				mu.Unlock()
				http.Error(w, "nope", tc.status)
			}))
			t.Cleanup(srv.Close)
			p := httpsink.Plugin()
			cfg := map[string]string{
				connector.KeyClass: httpsink.Name, connector.KeyTopics: "s.in", connector.KeyStream: "S",
				connector.KeyDurable: "d", connector.KeyRetryMaxAttempts: "2", connector.KeyRetryDelayInitial: "10",
				connector.KeyRetryDelayMax: "50", connector.KeyErrorsTolerance: connector.ToleranceAll,
				connector.KeyDLQTopic: dlqSubject, httpsink.KeyURL: srv.URL,
			}
			env := connector.Env{Egress: egress.Config{AllowPrivate: true}, Connector: connName}
			values := p.FullSpec().Values(cfg)
			sink, err := p.NewSink(values, env)
			require.NoError(t, err)

			f := newDLQFixture(t)
			f.cfg = delivery.ParseConfig(values)
			require.Equal(t, dlqSubject, f.cfg.DLQSubject)
			ids := f.env.PublishN(t, "s.in", "e", 10)
			task := f.startDLQ(t, sink, nil)
			require.Eventually(t, func() bool { return f.settled(t, 10) }, wait, tick)
			assert.Equal(t, uint64(10), task.Counters().DeadLettered)
			dls := deadLetters(t, f.env.JS)
			require.Len(t, dls, 10)
			var got []string
			for _, d := range dls {
				got = append(got, d.Event.ID())
				assert.Equal(t, tc.attempts, d.Attempts)
				assert.Equal(t, tc.class, d.ErrorClass)
				assert.Contains(t, d.Reason, fmt.Sprintf("answered %d", tc.status))
				assert.Equal(t, connName, d.Connector)
			}
			assert.ElementsMatch(t, ids, got)
			mu.Lock()
			assert.Equal(t, 10*int(tc.attempts), hits)
			mu.Unlock()
		})
	}
}
