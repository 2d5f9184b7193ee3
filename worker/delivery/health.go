package delivery

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/egress"
)

// Error classes of a failed attempt (Failure.Class), from the most specific cause an error holds.
const (
	ClassEgressRefused     = "egress-refused"     // the egress guard refused the address (not public, not allowed)
	ClassDNS               = "dns"                // the name did not resolve
	ClassConnectionRefused = "connection-refused" // nothing listens at the address
	ClassConnectionReset   = "connection-reset"   // the peer closed or reset the connection
	ClassUnreachable       = "unreachable"        // no route to the host or network
	ClassTimeout           = "timeout"            // no answer within the target's timeout
	ClassTLS               = "tls"                // the TLS handshake or the certificate failed
	ClassHTTP4xx           = "http-4xx"           // the target answered 4xx
	ClassHTTP5xx           = "http-5xx"           // the target answered 5xx
	ClassStatus            = "refused"            // the target answered with another status that means no
	ClassTransform         = "transform"          // a transform refused the record
	ClassOther             = "error"              // anything else
)

// ErrorClass returns the class of the error of a failed attempt.
func ErrorClass(err error) string {
	if status, _, ok := connector.StatusOf(err); ok {
		switch {
		case status >= 400 && status < 500:
			return ClassHTTP4xx
		case status >= 500 && status < 600:
			return ClassHTTP5xx
		default:
			return ClassStatus
		}
	}
	var (
		dnsErr    *net.DNSError
		tlsHeader tls.RecordHeaderError
		tlsVerify *tls.CertificateVerificationError
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		netErr    net.Error
	)
	switch {
	case errors.Is(err, egress.ErrRefused):
		return ClassEgressRefused
	case IsTransformError(err):
		return ClassTransform
	case errors.As(err, &dnsErr):
		return ClassDNS
	case errors.As(err, &tlsHeader), errors.As(err, &tlsVerify), errors.As(err, &unknownCA),
		errors.As(err, &hostname), errors.As(err, &invalid):
		return ClassTLS
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassConnectionRefused
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return ClassUnreachable
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return ClassTimeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF):
		return ClassConnectionReset
	}
	return ClassOther
}

// Failure is a failed attempt to write a record.
type Failure struct {
	At      time.Time
	Attempt uint64
	// Class is the error class (ErrorClass), Status the answer's status when the target answered (an HTTP status).
	Class  string
	Status int
	// Message is the error, Response the start of the target's answer (at most MaxResponse bytes); neither holds a
	// secret value of the connector's config.
	Message, Response string
}

// MaxResponse bounds Failure.Response.
const MaxResponse = 256

// Health is what a task knows of how its writes go, for the health of its connector (domain/target): the facts,
// not a verdict, so that whoever shows them decides with its own thresholds.
type Health struct {
	// LastSuccessAt is when a record was last written (zero: never since the task started).
	LastSuccessAt time.Time
	// LastFailure is the last failed attempt, nil when none since the task started.
	LastFailure *Failure
	// FailuresSinceSuccess counts the failed attempts since the last success; FailingSince is the first of them
	// (zero when the last attempt succeeded).
	FailuresSinceSuccess uint64
	FailingSince         time.Time
	// RetryScheduled is set when the last attempt failed and its record will be attempted again.
	RetryScheduled bool
	// LastDeadLetteredAt is when a record was last given up to the dead letters.
	LastDeadLetteredAt time.Time
}

// health follows the outcomes of a task's attempts.
type health struct {
	mu     sync.Mutex
	h      Health
	redact func(string) string
}

// success records an attempt that wrote its record; it reports whether it ended failures.
func (x *health) success(now time.Time) (recovered bool, after uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	after = x.h.FailuresSinceSuccess
	x.h.LastSuccessAt, x.h.FailuresSinceSuccess, x.h.FailingSince, x.h.RetryScheduled = now, 0, time.Time{}, false
	return after > 0, after
}

// failure records a failed attempt, whose record is retried or, when not, was dead-lettered or not; it reports
// whether it is the first since a success (or since the start).
func (x *health) failure(now time.Time, attempt uint64, err error, retry, deadLettered bool) (first bool, f Failure) {
	f = Failure{At: now, Attempt: attempt, Class: ErrorClass(err), Message: "unknown error"}
	if err != nil {
		f.Message = err.Error()
	}
	if status, response, ok := connector.StatusOf(err); ok {
		f.Status = status
		if len(response) > MaxResponse {
			response = response[:MaxResponse]
		}
		f.Response = strings.ToValidUTF8(response, "\uFFFD")
	}
	if x.redact != nil {
		f.Message, f.Response = x.redact(f.Message), x.redact(f.Response)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	first = x.h.FailuresSinceSuccess == 0
	if first {
		x.h.FailingSince = now
	}
	x.h.FailuresSinceSuccess++
	x.h.LastFailure = &f
	x.h.RetryScheduled = retry
	if deadLettered {
		x.h.LastDeadLetteredAt = now
	}
	return first, f
}

// deadLettered records records given up to the dead letters without a failed attempt of their own (a source's
// records the store refused).
func (x *health) deadLettered(now time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.h.LastDeadLetteredAt = now
}

func (x *health) get() Health {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := x.h
	if f := x.h.LastFailure; f != nil {
		c := *f
		out.LastFailure = &c
	}
	return out
}

// Equal reports whether h and o hold the same facts.
func (h Health) Equal(o Health) bool {
	if (h.LastFailure == nil) != (o.LastFailure == nil) || (h.LastFailure != nil && *h.LastFailure != *o.LastFailure) {
		return false
	}
	h.LastFailure, o.LastFailure = nil, nil
	return h == o
}
