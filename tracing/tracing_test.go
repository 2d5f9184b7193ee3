package tracing_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/eventbridge-go/eventbridge/tracing"
)

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		env     map[string]string
		want    tracing.Config
		wantErr string
	}{
		{name: "nothing set: off", env: nil, want: tracing.Config{ServiceName: "svc"}},
		{name: "a base endpoint: on, /v1/traces appended",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"},
			want: tracing.Config{Enabled: true, Endpoint: "http://collector:4318/v1/traces", Protocol: tracing.ProtocolProtobuf, ServiceName: "svc"}},
		{name: "a traces endpoint is used as it is, before the base",
			env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://c.example/custom",
				"OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318"},
			want: tracing.Config{Enabled: true, Endpoint: "https://c.example/custom", Protocol: tracing.ProtocolProtobuf, ServiceName: "svc"}},
		{name: "otlp exporter without endpoint: the default",
			env:  map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SERVICE_NAME": "mine"},
			want: tracing.Config{Enabled: true, Endpoint: tracing.DefaultEndpoint, Protocol: tracing.ProtocolProtobuf, ServiceName: "mine"}},
		{name: "json", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			want: tracing.Config{Enabled: true, Endpoint: tracing.DefaultEndpoint, Protocol: tracing.ProtocolJSON, ServiceName: "svc"}},
		{name: "the traces protocol wins", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"},
			want: tracing.Config{Enabled: true, Endpoint: tracing.DefaultEndpoint, Protocol: tracing.ProtocolProtobuf, ServiceName: "svc"}},
		{name: "none wins over an endpoint",
			env:  map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			want: tracing.Config{ServiceName: "svc"}},
		{name: "the SDK disabled",
			env:  map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			want: tracing.Config{ServiceName: "svc"}},
		{name: "grpc is refused, named", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, wantErr: `OTEL_EXPORTER_OTLP_PROTOCOL="grpc"`},
		{name: "an exporter we do not have", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"},
			wantErr: `OTEL_TRACES_EXPORTER="zipkin"`},
		{name: "an endpoint that is no URL", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
			wantErr: "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{name: "a traces endpoint without a host", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http:///v1/traces"},
			wantErr: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tracing.ConfigFromEnv(func(k string) string { return tc.env[k] }, "svc")
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestStartOffIsNil(t *testing.T) {
	t.Parallel()
	p, err := tracing.Start(context.Background(), tracing.Config{}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	assert.Nil(t, p)
	assert.Nil(t, p.TracerProvider())
	assert.Nil(t, tracing.Tracer(p.TracerProvider()))
	assert.NoError(t, p.Shutdown(context.Background()))
}

func spanContext(t *testing.T) trace.SpanContext {
	t.Helper()
	tid, err := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	require.NoError(t, err)
	sid, err := trace.SpanIDFromHex("00f067aa0ba902b7")
	require.NoError(t, err)
	ts, err := trace.ParseTraceState("rojo=00f067aa0ba902b7")
	require.NoError(t, err)
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts})
}

// TestHeaderRoundTrip: a span context written into a NATS message's headers is read back, under the lower-case
// keys another client finds; without a valid span nothing is written.
func TestHeaderRoundTrip(t *testing.T) {
	t.Parallel()
	h := nats.Header{}
	tracing.Inject(context.Background(), h)
	assert.Empty(t, h, "no span, no header")

	sc := spanContext(t)
	tracing.Inject(trace.ContextWithSpanContext(context.Background(), sc), h)
	assert.Equal(t, []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, h["traceparent"])
	assert.Equal(t, []string{"rojo=00f067aa0ba902b7"}, h["tracestate"])

	ctx, ok := tracing.Extract(context.Background(), h)
	require.True(t, ok)
	got := trace.SpanContextFromContext(ctx)
	assert.True(t, got.IsRemote())
	assert.Equal(t, sc.TraceID(), got.TraceID())
	assert.Equal(t, sc.SpanID(), got.SpanID())
	assert.Equal(t, "rojo=00f067aa0ba902b7", got.TraceState().String())

	_, ok = tracing.Extract(context.Background(), nats.Header{"traceparent": {"00-zz-00f067aa0ba902b7-01"}})
	assert.False(t, ok, "an invalid traceparent is no parent")
	_, ok = tracing.Extract(context.Background(), nats.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}})
	assert.False(t, ok, "NATS headers are case-sensitive: only the lower-case key is ours")
}

// TestEventExtension: the CloudEvents distributed-tracing extension is read as a parent, Mark gives an event one
// and Unmark takes it back; an event with an invalid traceparent keeps it (HasTraceParent) and has no parent.
func TestEventExtension(t *testing.T) {
	t.Parallel()
	e := event.New()
	e.SetID("1")
	e.SetSource("s")
	e.SetType("t")
	_, ok := tracing.FromEvent(context.Background(), &e)
	assert.False(t, ok)
	assert.False(t, tracing.HasTraceParent(&e))

	tracing.Mark(&e, spanContext(t))
	assert.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", e.Extensions()["traceparent"])
	assert.Equal(t, "rojo=00f067aa0ba902b7", e.Extensions()["tracestate"])
	ctx, ok := tracing.FromEvent(context.Background(), &e)
	require.True(t, ok)
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", trace.SpanContextFromContext(ctx).TraceID().String())

	tracing.Unmark(&e)
	assert.Empty(t, e.Extensions())

	e.SetExtension("traceparent", "not-one")
	assert.True(t, tracing.HasTraceParent(&e))
	_, ok = tracing.FromEvent(context.Background(), &e)
	assert.False(t, ok)
}

type ctxKey int

// BenchmarkInjectOff is what tracing off adds on the router's path for each copy it stores (tracing.Inject with a
// context that holds no span: the task's context with its metadata and report), beside the cost of encoding the
// copy's headers, which the router pays anyway.
func BenchmarkInjectOff(b *testing.B) {
	ctx := context.WithValue(context.WithValue(context.WithValue(context.Background(), ctxKey(1), 1), ctxKey(2), 2), ctxKey(3), 3)
	b.Run("inject", func(b *testing.B) {
		h := nats.Header{}
		for b.Loop() {
			tracing.Inject(ctx, h)
		}
		if len(h) != 0 {
			b.Fatal("a header was written")
		}
	})
	b.Run("baseline-header-set", func(b *testing.B) {
		h := nats.Header{}
		for b.Loop() {
			h.Set(nats.MsgIdHdr, "0123456789abcdef0123456789abcdef")
		}
	})
}
