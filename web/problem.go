package web

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
)

// ProblemTypeBase prefixes the code of a problem to make its type URI.
const ProblemTypeBase = "https://eventbridge-go.dev/problems/"

// Codes of problems that the web layer raises itself (the domain's codes are the others).
const (
	CodeMalformedRequest = "MalformedRequest"
	CodeRouteNotFound    = "RouteNotFound"
	CodeMethodNotAllowed = "MethodNotAllowed"
)

// Problem is an RFC 9457 problem document, served as application/problem+json.
type Problem struct {
	// Type is a URI naming the problem: ProblemTypeBase + code, or about:blank when the status says it all.
	Type string `json:"type" example:"https://eventbridge-go.dev/problems/BusNotFound"`
	// Title is the status text of Status.
	Title  string `json:"title" example:"Not Found"`
	Status int    `json:"status" example:"404"`
	// Detail explains this occurrence for people.
	Detail string `json:"detail" example:"bus \"orders\" does not exist"`
	// Code is stable and meant for programs.
	Code string `json:"code" example:"BusNotFound"`
	// Field names the offending input when it is known (a JSON path, a query parameter or a header).
	Field string `json:"field,omitempty" example:"name"`
	// Errors are every problem of a document checked whole (a channel), each at its place in the request's body;
	// Field and Detail then say the first. Absent when the problem is one.
	Errors []ProblemError `json:"errors,omitempty"`
} //@name Problem

// ProblemError is one problem of a request's body among several (RFC 9457's "errors" extension, as its example).
type ProblemError struct {
	// Pointer is the JSON pointer (RFC 6901) of the offending value in the request's body.
	Pointer string `json:"pointer" example:"/targets/0/config/url"`
	// Detail explains the problem for people.
	Detail string `json:"detail" example:"config.url \"not a url\" is not an absolute http or https URL"`
	// Code is stable and meant for programs.
	Code string `json:"code" example:"ValidationError"`
} //@name ProblemError

// statusOfKind is the one table that maps domain errors to HTTP statuses.
var statusOfKind = map[domain.Kind]int{
	domain.KindInvalid:              http.StatusBadRequest,
	domain.KindNotFound:             http.StatusNotFound,
	domain.KindConflict:             http.StatusConflict,
	domain.KindLimitExceeded:        http.StatusConflict,
	domain.KindTooLarge:             http.StatusRequestEntityTooLarge,
	domain.KindUnavailable:          http.StatusServiceUnavailable,
	domain.KindInternal:             http.StatusInternalServerError,
	domain.KindUnauthenticated:      http.StatusUnauthorized,
	domain.KindForbidden:            http.StatusForbidden,
	domain.KindThrottled:            http.StatusTooManyRequests,
	domain.KindUnsupportedMediaType: http.StatusUnsupportedMediaType,
}

// StatusOf returns the HTTP status of a domain error kind (500 for a kind the table does not know).
func StatusOf(k domain.Kind) int {
	if s, ok := statusOfKind[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ProblemOf turns any error into the problem to answer. An error that is not a domain error, or a domain error
// of kind Internal, becomes a generic 500 whose details are logged, never returned.
func ProblemOf(log *slog.Logger, r *http.Request, err error) Problem {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		err = domain.ErrTooLarge.With("the request body is larger than %d bytes", mbe.Limit)
	}
	de, ok := domain.As(err)
	if !ok || de.Kind == domain.KindInternal {
		log.Error("internal error", "method", r.Method, "path", redactPath(r.URL.Path), "err", err)
		return NewProblem(http.StatusInternalServerError, domain.ErrInternal.Code, "", "an internal error occurred; it has been logged")
	}
	p := NewProblem(StatusOf(de.Kind), de.Code, de.Field, MessageOf(de))
	for _, d := range de.Details {
		p.Errors = append(p.Errors, ProblemError{Pointer: d.Pointer, Detail: d.Message, Code: d.Code})
	}
	return p
}

// MessageOf is the message of a domain error on one line (the CloudEvents SDK ends its validation errors with a
// newline and separates several with newlines).
func MessageOf(e *domain.Error) string {
	msg := e.Message
	if msg == "" {
		msg = e.Error()
	}
	var lines []string
	for l := range strings.Lines(msg) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

// NewProblem returns the problem of status with code, the offending field ("" when none) and detail.
func NewProblem(status int, code, field, detail string) Problem {
	typ := ProblemTypeBase + code
	switch code {
	case CodeRouteNotFound, CodeMethodNotAllowed, domain.ErrInternal.Code:
		typ = "about:blank" // nothing to say beyond the status
	}
	return Problem{Type: typ, Title: http.StatusText(status), Status: status, Detail: detail, Code: code, Field: field}
}

// WriteProblem answers p as application/problem+json and stops the handler chain.
func WriteProblem(c *gin.Context, p Problem) {
	SetErrorCode(c, p.Code)
	c.Header("Content-Type", "application/problem+json")
	c.AbortWithStatusJSON(p.Status, p)
}

// Malformed is a MalformedRequest error about field ("" when the problem is not about one field).
func Malformed(field, format string, args ...any) *domain.Error {
	e := &domain.Error{Kind: domain.KindInvalid, Code: CodeMalformedRequest, Field: field}
	return e.With(format, args...)
}

// redactPath is a request path as logs show it: the segment after /webhooks/ (a webhook's token, its credential)
// is masked.
func redactPath(p string) string {
	const marker = "/webhooks/"
	i := strings.Index(p, marker)
	if i < 0 {
		return p
	}
	rest := p[i+len(marker):]
	tail := ""
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		tail = rest[j:]
	}
	return p[:i+len(marker)] + domain.SecretMask + tail
}

// SetRetryAfter sets Retry-After (whole seconds, at least one) for an error that says when to try again.
func SetRetryAfter(c *gin.Context, err error) {
	if de, ok := domain.As(err); ok && de.RetryAfter > 0 {
		c.Header("Retry-After", strconv.Itoa(int((de.RetryAfter+time.Second-1)/time.Second)))
	}
}
