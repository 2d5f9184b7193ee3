package log_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	logsink "github.com/eventbridge-go/eventbridge/worker/plugins/log"
)

// lines is a log destination safe for concurrent writes.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lines) records(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

func newSink(t *testing.T, cfg map[string]string, minLevel slog.Level) (connector.Sink, *lines) {
	t.Helper()
	out := &lines{}
	spec := logsink.Plugin().FullSpec()
	full := map[string]string{connector.KeyClass: logsink.Name, connector.KeyTopics: "a.b", connector.KeyStream: "S",
		connector.KeyDurable: "d"}
	for k, v := range cfg {
		full[k] = v
	}
	require.Empty(t, spec.Validate(full))
	logger := slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: minLevel})).With("connector", "dbg")
	s, err := logsink.New(spec.Values(full), connector.Env{Logger: logger, Connector: "dbg"})
	require.NoError(t, err)
	require.NoError(t, s.Connect(context.Background()))
	t.Cleanup(func() { _ = s.Close() })
	return s, out
}

func sample() *event.Event {
	e := event.New()
	e.SetID("e1")
	e.SetSource("shop/eu")
	e.SetType("order.created")
	e.SetSubject("orders/1")
	e.SetTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	e.SetExtension("tenant", "acme")
	e.SetExtension("partitionkey", "p1")
	if err := e.SetData(event.ApplicationJSON, map[string]any{"orderId": "o-1", "note": "héllo"}); err != nil {
		panic(err)
	}
	return &e
}

func TestSpec(t *testing.T) {
	t.Parallel()
	spec := logsink.Plugin().FullSpec()
	tests := []struct {
		key, value, wantMsg string
	}{
		{logsink.KeyLevel, "trace", "is not one of"},
		{logsink.KeyIncludeData, "yes", "is not true or false"},
		{logsink.KeyDataMaxBytes, "-1", "less than the minimum"},
		{logsink.KeyDataMaxBytes, "lots", "not an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			t.Parallel()
			errs := spec.Validate(map[string]string{connector.KeyClass: logsink.Name, connector.KeyTopics: "a",
				connector.KeyStream: "S", connector.KeyDurable: "d", tt.key: tt.value})
			require.Len(t, errs, 1)
			assert.Equal(t, tt.key, errs[0].Key)
			assert.Contains(t, errs[0].Message, tt.wantMsg)
		})
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	meta := connector.Meta{Stream: "S", Subject: "a.b", Sequence: 42, Attempt: 3}
	binary := func() *event.Event {
		e := sample()
		e.SetDataContentType("application/octet-stream")
		e.DataEncoded = []byte{0xff, 0xfe, 0x00, 0x01}
		return e
	}
	tests := []struct {
		name     string
		cfg      map[string]string
		minLevel slog.Level
		event    *event.Event
		noMeta   bool
		want     map[string]any // expected fields; nil: no line
		absent   []string
	}{
		{name: "defaults: info, no data", event: sample(),
			want: map[string]any{"level": "INFO", "msg": "event", "connector": "dbg", "id": "e1", "source": "shop/eu",
				"type": "order.created", "subject": "orders/1", "specversion": "1.0", "time": "2026-01-02T03:04:05Z",
				"datacontenttype": "application/json", "ext": map[string]any{"tenant": "acme", "partitionkey": "p1"},
				"stream": "S", "seq": float64(42), "attempt": float64(3)},
			absent: []string{"data", "data.truncated"}},
		{name: "level warn", cfg: map[string]string{logsink.KeyLevel: "warn"}, event: sample(),
			want: map[string]any{"level": "WARN", "id": "e1"}},
		{name: "level debug below the logger's level writes nothing", cfg: map[string]string{logsink.KeyLevel: "debug"},
			minLevel: slog.LevelInfo, event: sample()},
		{name: "level debug", cfg: map[string]string{logsink.KeyLevel: "debug"}, minLevel: slog.LevelDebug, event: sample(),
			want: map[string]any{"level": "DEBUG"}},
		{name: "data whole", cfg: map[string]string{logsink.KeyIncludeData: "true"}, event: sample(),
			want:   map[string]any{"data": `{"note":"héllo","orderId":"o-1"}`},
			absent: []string{"data.truncated", "data.size"}},
		{name: "data truncated on a rune boundary", cfg: map[string]string{logsink.KeyIncludeData: "true", logsink.KeyDataMaxBytes: "11"},
			event: sample(),
			want:  map[string]any{"data": `{"note":"h`, "data.truncated": true, "data.size": float64(33)}},
		{name: "data cut to nothing", cfg: map[string]string{logsink.KeyIncludeData: "true", logsink.KeyDataMaxBytes: "0"},
			event: sample(), want: map[string]any{"data": "", "data.truncated": true}},
		{name: "binary data in base64", cfg: map[string]string{logsink.KeyIncludeData: "true", logsink.KeyDataMaxBytes: "3"},
			event: binary(), want: map[string]any{"data": "//4A", "data.encoding": "base64", "data.truncated": true, "data.size": float64(4)}},
		{name: "no data", cfg: map[string]string{logsink.KeyIncludeData: "true"}, event: jetstreamtest.Event("bare", "t", nil),
			want: map[string]any{"id": "bare"}, absent: []string{"data", "ext", "subject", "datacontenttype"}},
		{name: "without metadata", event: sample(), noMeta: true,
			want: map[string]any{"id": "e1"}, absent: []string{"stream", "seq", "attempt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, out := newSink(t, tt.cfg, tt.minLevel)
			ctx := context.Background()
			if !tt.noMeta {
				ctx = connector.WithMeta(ctx, meta)
			}
			require.NoError(t, s.Write(ctx, tt.event))
			recs := out.records(t)
			if tt.want == nil {
				assert.Empty(t, recs)
				return
			}
			require.Len(t, recs, 1, "one line per event")
			for k, v := range tt.want {
				assert.Equal(t, v, recs[0][k], k)
			}
			for _, k := range tt.absent {
				assert.NotContains(t, recs[0], k)
			}
		})
	}
}

// Without a logger the sink writes nowhere and still accepts everything.
func TestWithoutLogger(t *testing.T) {
	t.Parallel()
	s, err := logsink.New(logsink.Plugin().FullSpec().Values(map[string]string{}), connector.Env{})
	require.NoError(t, err)
	assert.NoError(t, s.Write(context.Background(), sample()))
}

// Through the runtime: every record is logged once and acked.
func TestLogsEveryRecord(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	env.Stream(t, "LOG", "log.>")
	ctx := context.Background()
	dc := delivery.Config{Stream: "LOG", Subject: "log.in", Durable: "dbg", Tasks: 1, Tolerance: connector.ToleranceNone,
		Retry: delivery.RetryPolicy{MaxRetries: 1, MaxAge: -1, InitialDelay: 10 * time.Millisecond, MaxDelay: 10 * time.Millisecond}}
	cons, err := delivery.EnsureConsumer(ctx, env.JS, dc, delivery.AckWait)
	require.NoError(t, err)
	s, out := newSink(t, map[string]string{logsink.KeyIncludeData: "true"}, slog.LevelInfo)
	task, err := delivery.Start(ctx, delivery.TaskConfig{Consumer: cons, Sink: s, Handler: dc.Chain(s)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })
	ids := env.PublishN(t, "log.in", "l", 50)
	require.Eventually(t, func() bool {
		i := env.ConsumerInfo(t, "LOG", "dbg")
		return i.NumAckPending == 0 && i.NumPending == 0 && i.AckFloor.Stream == 50
	}, 10*time.Second, 10*time.Millisecond)
	got := []string{}
	for _, r := range out.records(t) {
		got = append(got, r["id"].(string))
	}
	assert.ElementsMatch(t, ids, got)
}
