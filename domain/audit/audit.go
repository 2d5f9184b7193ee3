// Package audit keeps the audit log: one entry per control operation of every API dialect (who, in which account,
// which operation on which resource, its outcome, when and from where), and the worker REST API's own entries, which
// the workers publish to a stream and the control plane merges. PutEvents and webhook intake are not control
// operations: metrics count them. An entry never holds a credential: no body, no query string, no header is kept.
package audit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

// Outcomes of an operation.
const (
	Success = "success"
	Failure = "failure"
)

// Kinds of actors besides access.KindAPIKey, access.KindAccessKey and access.KindUser.
const (
	// ActorAnonymous made a request without valid credentials (a failed sign-in, a 401).
	ActorAnonymous = "anonymous"
	// ActorClusterToken called the worker REST API with the installation's cluster token (the control plane's
	// runtime adapter, or an operator who holds the token).
	ActorClusterToken = "clusterToken"
)

// Sources of entries.
const (
	// SourceControlPlane is the control plane's API.
	SourceControlPlane = "control-plane"
	// SourceWorkerPrefix starts the source of a worker's entries: "worker:<worker id>".
	SourceWorkerPrefix = "worker:"
)

// Limits of the fields, in bytes (longer values are cut).
const (
	MaxResource  = 512
	MaxOperation = 64
	MaxActor     = 128
)

// Entry is one audited operation.
type Entry struct {
	// ID is unique (domain.NewID); merging the same entry twice keeps one.
	ID   string
	Time time.Time
	// Source is SourceControlPlane or SourceWorkerPrefix + the worker's id.
	Source string
	// AccountID is the account the operation acted in; "" for operations of the instance (accounts, users) and the
	// worker's calls that name no account's connector.
	AccountID string
	// ActorKind is access.KindAPIKey, access.KindAccessKey, access.KindUser, ActorAnonymous or ActorClusterToken;
	// ActorID the key's or the user's id; ActorName its name (a user's login name, a key's name).
	ActorKind string
	ActorID   string
	ActorName string
	// Operation is the operation's stable name ("buses.create", "rocketmq.createEventBus",
	// "worker.connectors.pause").
	Operation string
	// Resource names what the operation acted on ("buses/orders/rules/paid"); never a query string or a body.
	Resource string
	// Outcome is Success or Failure; Status the HTTP status answered; ErrorCode the error's stable code.
	Outcome   string
	Status    int
	ErrorCode string
	// ClientAddr is the client's IP address.
	ClientAddr string
}

// Normalize cuts the fields to their limits and fills the outcome from the status; the time is UTC to the
// microsecond.
func (e *Entry) Normalize() {
	cut := func(s string, n int) string {
		if len(s) <= n {
			return s
		}
		return strings.ToValidUTF8(s[:n], "")
	}
	e.Resource = cut(e.Resource, MaxResource)
	e.Operation = cut(e.Operation, MaxOperation)
	e.ActorName = cut(e.ActorName, MaxActor)
	e.ActorID = cut(e.ActorID, MaxActor)
	e.ErrorCode = cut(e.ErrorCode, MaxOperation)
	e.ClientAddr = cut(e.ClientAddr, 64)
	e.Source = cut(e.Source, MaxOperation)
	if e.Outcome == "" {
		e.Outcome = Success
		if e.Status >= 400 {
			e.Outcome = Failure
		}
	}
	e.Time = e.Time.UTC().Truncate(time.Microsecond)
}

// Filter selects entries. Zero fields select everything.
type Filter struct {
	// AllAccounts selects the entries of every account and of none; else AccountID's only.
	AllAccounts bool
	AccountID   string
	// From and To bound the time: From <= time < To.
	From, To time.Time
	// Actor is an actor's id or name.
	Actor string
	// Operation is an operation's name, or a prefix ending in "*" ("rules.*", "worker.*").
	Operation string
	// Resource is a resource or a prefix of one ending in "*" ("buses/orders*").
	Resource string
	// Outcome is Success or Failure.
	Outcome string
}

// Validate checks the filter's fields.
func (f Filter) Validate() error {
	switch {
	case !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To):
		return domain.Invalid("from", "from must be before to")
	case f.Outcome != "" && f.Outcome != Success && f.Outcome != Failure:
		return domain.Invalid("outcome", "outcome %q must be %s or %s", f.Outcome, Success, Failure)
	case len(f.Actor) > MaxActor:
		return domain.Invalid("actor", "actor is longer than %d bytes", MaxActor)
	case len(f.Operation) > MaxOperation:
		return domain.Invalid("operation", "operation is longer than %d bytes", MaxOperation)
	case len(f.Resource) > MaxResource:
		return domain.Invalid("resource", "resource is longer than %d bytes", MaxResource)
	case strings.Contains(strings.TrimSuffix(f.Operation, "*"), "*"), strings.Contains(strings.TrimSuffix(f.Resource, "*"), "*"):
		return domain.Invalid("operation", "only a trailing * is a wildcard")
	}
	return nil
}

// Repository stores entries.
type Repository interface {
	// Append stores entries; an entry whose ID is already stored is skipped (merges are at least once).
	Append(ctx context.Context, entries []Entry) error
	// List returns a page of the entries that f selects, newest first, and the next page's token.
	List(ctx context.Context, f Filter, page domain.Page) ([]Entry, string, error)
	// DeleteBefore deletes the entries older than t and returns how many.
	DeleteBefore(ctx context.Context, t time.Time) (int, error)
}

// DefaultRetention is how long entries are kept.
const DefaultRetention = 90 * 24 * time.Hour

// Service lists entries and deletes them after their retention.
type Service struct {
	Entries Repository
	// Retention is how long entries are kept (DefaultRetention when zero).
	Retention time.Duration
	Clock     domain.Clock
}

// List returns a page of the entries f selects, newest first. Errors: validation.
func (s *Service) List(ctx context.Context, f Filter, page domain.Page) ([]Entry, string, error) {
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	return s.Entries.List(ctx, f, page)
}

// Sweep deletes the entries past their retention; the control plane calls it now and then.
func (s *Service) Sweep(ctx context.Context) error {
	r := s.Retention
	if r <= 0 {
		r = DefaultRetention
	}
	if _, err := s.Entries.DeleteBefore(ctx, s.Clock.Now().Add(-r)); err != nil {
		return fmt.Errorf("deleting audit entries older than %s: %w", r, err)
	}
	return nil
}
