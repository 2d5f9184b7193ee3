// Package domain holds what every aggregate package shares: the error model, identifiers, names and paging.
// It imports the standard library only.
package domain

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies a domain error. The web layer maps each kind to one HTTP status in one table.
type Kind int

const (
	// KindInternal is an unexpected failure; its details are logged, never returned to a caller.
	KindInternal Kind = iota
	// KindInvalid is input that breaks a rule of the domain (HTTP 400).
	KindInvalid
	// KindNotFound is a reference to something that does not exist (HTTP 404).
	KindNotFound
	// KindConflict is a request that contradicts the current state (HTTP 409).
	KindConflict
	// KindTooLarge is input over a size limit (HTTP 413).
	KindTooLarge
	// KindUnavailable is a dependency that cannot be reached right now (HTTP 503).
	KindUnavailable
	// KindLimitExceeded is a quota that would be exceeded (HTTP 409).
	KindLimitExceeded
	// KindUnauthenticated is a request without valid credentials (HTTP 401).
	KindUnauthenticated
	// KindForbidden is a request its credentials do not permit (HTTP 403).
	KindForbidden
	// KindThrottled is a request that came too soon after others; Error.RetryAfter says when to try again
	// (HTTP 429 with Retry-After).
	KindThrottled
	// KindUnsupportedMediaType is a body of a type the operation does not take (HTTP 415).
	KindUnsupportedMediaType
)

// Error is the one error type of the domain. Code is stable and part of the API (`BusNotFound`,
// `RuleAlreadyExists`, ...); Message is for people; Field names the offending input field when there is one.
//
// Two errors are the same for errors.Is when their codes are equal, so packages declare sentinels such as
// bus.ErrNotFound and return copies with a message made by With.
type Error struct {
	Kind    Kind
	Code    string
	Field   string
	Message string
	Err     error
	// RetryAfter, for KindThrottled, is how long to wait before trying again.
	RetryAfter time.Duration
	// Details are every problem of a request found at once, each at its place in the request's body (a document
	// checked whole, such as a channel); Field and Message then say the first.
	Details []Detail
}

// Detail is one problem of a request among several: Pointer is the JSON pointer (RFC 6901) of its place in the
// request's body, Code and Message say what is wrong there.
type Detail struct {
	Pointer string
	Code    string
	Message string
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Code
	}
	if e.Err != nil {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is a domain error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// With returns a copy of the sentinel e with a formatted message.
func (e *Error) With(format string, args ...any) *Error {
	c := *e
	c.Message = fmt.Sprintf(format, args...)
	return &c
}

// WithField returns a copy of e that names the offending field.
func (e *Error) WithField(field string) *Error {
	c := *e
	c.Field = field
	return &c
}

// Codes shared by every aggregate.
var (
	// ErrValidation is input that breaks a rule; Field names the input.
	ErrValidation = &Error{Kind: KindInvalid, Code: "ValidationError"}
	// ErrInternal is an unexpected failure.
	ErrInternal = &Error{Kind: KindInternal, Code: "InternalError"}
	// ErrUnavailable is a dependency that cannot be reached.
	ErrUnavailable = &Error{Kind: KindUnavailable, Code: "ServiceUnavailable"}
	// ErrTooLarge is input over a size limit.
	ErrTooLarge = &Error{Kind: KindTooLarge, Code: "PayloadTooLarge"}
)

// Invalid returns a validation error about field.
func Invalid(field, format string, args ...any) *Error {
	e := ErrValidation.With(format, args...)
	e.Field = field
	return e
}

// As returns the domain error in err's chain, if there is one.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// KindOf returns the kind of err: KindInternal unless err wraps a domain error.
func KindOf(err error) Kind {
	if e, ok := As(err); ok {
		return e.Kind
	}
	return KindInternal
}

// SecretMask is how a secret value of a config (a plugin's secret keys in a source's or a target's config) is
// answered. Sent back unchanged in a replacement, it keeps the stored secret, so a client can send back what it read.
const SecretMask = "***"
