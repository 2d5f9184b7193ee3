package web

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traced is the first handler of an operation when the API traces (Config.Tracer): a server span named after the
// route ("POST /api/v1/buses/:bus/events"), a child of the W3C Trace Context headers of the request when it
// carries them, in the request's context for what the operation does (PutEvents' store spans are its children).
// The span is ended once the operation answered, an error status for a 5xx.
func traced(tracer trace.Tracer, op Operation) gin.HandlerFunc {
	name := op.Method + " " + op.Path
	prop := propagation.TraceContext{}
	return func(c *gin.Context) {
		ctx := prop.Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
		ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
			attribute.String("http.request.method", op.Method),
			attribute.String("http.route", op.Path),
			attribute.String("eventbridge.operation", op.Name),
		))
		defer span.End()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
		status := c.Writer.Status()
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, fmt.Sprintf("answered %d", status))
		}
	}
}
