// Package tracing is the OpenTelemetry tracing of both binaries: the configuration read from the standard OTEL_*
// variables, the tracer provider that exports spans by OTLP/HTTP, and the propagation of the W3C trace context
// through NATS message headers (the hop from one process to the next) and through the CloudEvents
// distributed-tracing extension (traceparent, tracestate: the trace an event started in).
//
// Tracing is off unless the variables ask for it; then no span is made, no header written and no event changed.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Protocols of OTLP this package exports with (OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	ProtocolProtobuf = "http/protobuf"
	ProtocolJSON     = "http/json"
)

// DefaultEndpoint is where spans go when OTEL_TRACES_EXPORTER=otlp names no endpoint, as the OpenTelemetry
// specification says for OTLP/HTTP.
const DefaultEndpoint = "http://localhost:4318/v1/traces"

// Config says whether and where spans are exported.
type Config struct {
	// Enabled turns tracing on; without it nothing else is read.
	Enabled bool
	// Endpoint is the full URL spans are posted to (…/v1/traces).
	Endpoint string
	// Protocol is ProtocolProtobuf or ProtocolJSON.
	Protocol string
	// ServiceName is the service.name of the spans' resource.
	ServiceName string
}

// ConfigFromEnv reads the standard variables through getenv:
//
//   - OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none: off;
//   - OTEL_TRACES_EXPORTER=otlp, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT set: on
//     (unlike the specification's default of otlp, an installation that sets nothing traces nothing);
//   - the endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces
//     appended, else DefaultEndpoint;
//   - OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf (default) or http/json;
//   - OTEL_SERVICE_NAME, default service.
//
// Other OTEL_EXPORTER_OTLP_* variables (headers, timeout, compression, certificates), OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER and OTEL_BSP_* are read by the OpenTelemetry SDK itself from the process's environment. An
// error names the variable and the value it cannot use.
func ConfigFromEnv(getenv func(string) string, service string) (Config, error) {
	c := Config{ServiceName: service}
	if v := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); v != "" {
		c.ServiceName = v
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return c, nil
	}
	tracesEndpoint := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	baseEndpoint := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	switch exporter := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))); exporter {
	case "none":
		return c, nil
	case "otlp":
	case "":
		if tracesEndpoint == "" && baseEndpoint == "" {
			return c, nil
		}
	default:
		return c, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: only otlp and none are supported", exporter)
	}
	c.Enabled = true
	switch {
	case tracesEndpoint != "":
		c.Endpoint = tracesEndpoint
		if err := checkEndpoint(c.Endpoint); err != nil {
			return c, fmt.Errorf("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=%q: %w", tracesEndpoint, err)
		}
	case baseEndpoint != "":
		c.Endpoint = strings.TrimRight(baseEndpoint, "/") + "/v1/traces"
		if err := checkEndpoint(c.Endpoint); err != nil {
			return c, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT=%q: %w", baseEndpoint, err)
		}
	default:
		c.Endpoint = DefaultEndpoint
	}
	protocol, name := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	if protocol == "" {
		protocol, name = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	switch protocol {
	case "", ProtocolProtobuf:
		c.Protocol = ProtocolProtobuf
	case ProtocolJSON:
		c.Protocol = ProtocolJSON
	default:
		return c, fmt.Errorf("%s=%q: only http/protobuf and http/json are supported (OTLP over HTTP, port 4318)", name, protocol)
	}
	return c, nil
}

func checkEndpoint(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("not an http or https URL")
	}
	if u.Host == "" {
		return errors.New("a URL without a host")
	}
	return nil
}

// Provider is the tracer provider of a process that traces.
type Provider struct {
	tp *sdktrace.TracerProvider
}

// Start returns the provider c asks for, exporting in batches to c.Endpoint, and says so on log; nil when c is
// not Enabled. It does no I/O: an endpoint that does not answer costs dropped spans, logged by the SDK, never a
// failed start.
func Start(ctx context.Context, c Config, log *slog.Logger) (*Provider, error) {
	if !c.Enabled {
		return nil, nil
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(c.Endpoint)}
	if c.Protocol == ProtocolJSON {
		opts = append(opts, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("the OTLP exporter of %s: %w", c.Endpoint, err)
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(c.ServiceName)))
	if err != nil && res == nil {
		return nil, fmt.Errorf("the resource of the spans: %w", err)
	}
	log.Info("tracing: spans exported by OTLP", "endpoint", c.Endpoint, "protocol", c.Protocol, "service", c.ServiceName)
	return &Provider{tp: sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))}, nil
}

// TracerProvider is p's provider, nil when p is nil (tracing off).
func (p *Provider) TracerProvider() trace.TracerProvider {
	if p == nil {
		return nil
	}
	return p.tp
}

// Shutdown exports what is buffered and stops the provider, within ctx. Nothing when p is nil.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return p.tp.Shutdown(ctx)
}

// Tracer returns the tracer of this project from tp, nil when tp is nil: the callers test for nil and make no
// span at all, so tracing off costs one comparison.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer(InstrumentationName)
}

// InstrumentationName names the spans' instrumentation scope.
const InstrumentationName = "github.com/eventbridge-go/eventbridge"
