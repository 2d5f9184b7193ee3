// Package deadletter holds the dead letters of an account: the events that a target gave up (retries exhausted,
// a permanent error, refused by its input transformer) and that went to the account's dead-letter stream because
// the target has no dead-letter bus. Users list them, redrive them to the target that gave them up, or discard
// them. The stream is reached through the Store port; adapter/eventstore implements it.
//
// Dead letters of a target with a dead-letter bus are events on that bus, not part of this list.
package deadletter

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain"
)

// DeadLetter is one event given up by a target, as stored in the account's dead-letter stream. It is read-only:
// the store rebuilds it with Rebuild.
type DeadLetter struct {
	id   uint64
	time time.Time
	// connector gave the event up: eb.<account>.<bus>.<rule>.<target> for a target connector.
	connector               string
	busName, ruleName, name string
	reason, errorClass      string
	attempts                uint64
	event                   *event.Event
}

// Record is what the store read of a dead letter.
type Record struct {
	// Sequence is the dead letter's sequence in the account's dead-letter stream: its id.
	Sequence uint64
	// Time is when the dead letter was stored.
	Time       time.Time
	Connector  string
	Reason     string
	ErrorClass string
	Attempts   uint64
	// Event is the original event, without the dead letter's own attributes.
	Event *event.Event
}

// Rebuild makes the dead letter of a stored record; the bus, rule and target names come from its connector name
// (empty when the connector is not a target connector of this account).
func Rebuild(accountID string, r Record) *DeadLetter {
	d := &DeadLetter{id: r.Sequence, time: r.Time.UTC(), connector: r.Connector, reason: r.Reason,
		errorClass: r.ErrorClass, attempts: r.Attempts, event: r.Event}
	d.busName, d.ruleName, d.name, _ = domain.TargetConnector(accountID, r.Connector)
	return d
}

// ID is the dead letter's sequence in the account's dead-letter stream, in decimal.
func (d *DeadLetter) ID() string { return strconv.FormatUint(d.id, 10) }

// Sequence is the dead letter's sequence in the account's dead-letter stream.
func (d *DeadLetter) Sequence() uint64 { return d.id }

// Time is when the dead letter was stored (UTC).
func (d *DeadLetter) Time() time.Time { return d.time }

// Connector is the connector that gave the event up.
func (d *DeadLetter) Connector() string { return d.connector }

// Bus, Rule and Target name the target that gave the event up ("" when the connector is not a target's).
func (d *DeadLetter) Bus() string    { return d.busName }
func (d *DeadLetter) Rule() string   { return d.ruleName }
func (d *DeadLetter) Target() string { return d.name }

// Reason is the error that made the target give the event up.
func (d *DeadLetter) Reason() string { return d.reason }

// ErrorClass is permanent, retries-exhausted or transform.
func (d *DeadLetter) ErrorClass() string { return d.errorClass }

// Attempts is the number of delivery attempts made.
func (d *DeadLetter) Attempts() uint64 { return d.attempts }

// Event is the original event.
func (d *DeadLetter) Event() *event.Event { return d.event }

// ParseID reads a dead letter's id (a stream sequence in decimal, from 1); field names the input in the error.
func ParseID(field, id string) (uint64, error) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil || n == 0 || strconv.FormatUint(n, 10) != id {
		return 0, domain.Invalid(field, "%s %q is not a dead-letter id (a whole number from 1, in decimal)", field, id)
	}
	return n, nil
}

// Filter selects dead letters by the target that gave them up, the time they were stored, their event, their
// reason and their error class. The zero Filter selects every dead letter.
type Filter struct {
	Bus, Rule, Target string
	// From and To bound the time the dead letter was stored, both included; zero is unbounded.
	From, To time.Time
	// EventID selects the dead letters of the event with that id (a redriven event keeps its id: the dead letter
	// of a redrive that failed again is found by it).
	EventID string
	// Reason selects the dead letters whose reason contains it, ignoring case.
	Reason string
	// ErrorClass selects one class: permanent, retries-exhausted or transform.
	ErrorClass string
}

// Error classes of dead letters.
var errorClasses = []string{"permanent", "retries-exhausted", "transform"}

// MaxReasonFilter is the longest text a filter looks for in reasons, in bytes.
const MaxReasonFilter = 256

// Narrowed returns f that also selects by event id, by a text the reason contains and by error class ("" for
// any). Errors name the parameter (eventId, reason, errorClass).
func (f Filter) Narrowed(eventID, reason, errorClass string) (Filter, error) {
	switch {
	case len(eventID) > 256:
		return Filter{}, domain.Invalid("eventId", "eventId is %d bytes long; an event id has at most 256", len(eventID))
	case len(reason) > MaxReasonFilter:
		return Filter{}, domain.Invalid("reason", "reason is %d bytes long; at most %d are looked for", len(reason), MaxReasonFilter)
	case errorClass != "" && !slices.Contains(errorClasses, errorClass):
		return Filter{}, domain.Invalid("errorClass", "errorClass must be one of %s, not %q", strings.Join(errorClasses, ", "), errorClass)
	}
	f.EventID, f.Reason, f.ErrorClass = eventID, reason, errorClass
	return f, nil
}

// NewFilter validates a filter: names are names, a rule needs its bus, a target needs its rule, From is not after
// To. Errors name the parameter (bus, rule, target, from, to).
func NewFilter(busName, ruleName, targetName string, from, to time.Time) (Filter, error) {
	for _, p := range []struct{ field, v string }{{"bus", busName}, {"rule", ruleName}, {"target", targetName}} {
		if p.v == "" {
			continue
		}
		if err := domain.ValidateNameOf(p.field, p.v); err != nil {
			return Filter{}, err
		}
	}
	if ruleName != "" && busName == "" {
		return Filter{}, domain.Invalid("rule", "rule %q needs its bus: rule names are unique within a bus only", ruleName)
	}
	if targetName != "" && ruleName == "" {
		return Filter{}, domain.Invalid("target", "target %q needs its rule: target names are unique within a rule only", targetName)
	}
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		return Filter{}, domain.Invalid("from", "from (%s) is after to (%s)", from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano))
	}
	return Filter{Bus: busName, Rule: ruleName, Target: targetName, From: from.UTC(), To: to.UTC()}, nil
}

// Matches reports whether the filter selects d.
func (f Filter) Matches(d *DeadLetter) bool {
	switch {
	case f.Bus != "" && d.busName != f.Bus,
		f.Rule != "" && d.ruleName != f.Rule,
		f.Target != "" && d.name != f.Target,
		!f.From.IsZero() && d.time.Before(f.From),
		!f.To.IsZero() && d.time.After(f.To),
		f.EventID != "" && (d.event == nil || d.event.ID() != f.EventID),
		f.ErrorClass != "" && d.errorClass != f.ErrorClass,
		f.Reason != "" && !strings.Contains(strings.ToLower(d.reason), strings.ToLower(f.Reason)):
		return false
	}
	return true
}

// SelectsConnector reports whether the filter's bus, rule and target can select the dead letters of connector in
// the account (the time bounds aside): a store checks it before it decodes a dead letter.
func (f Filter) SelectsConnector(accountID, connector string) bool {
	if f.Bus == "" {
		return true
	}
	b, r, t, ok := domain.TargetConnector(accountID, connector)
	return ok && b == f.Bus && (f.Rule == "" || r == f.Rule) && (f.Target == "" || t == f.Target)
}

// Query asks the store for dead letters of an account in stream order.
type Query struct {
	Filter Filter
	// After is the sequence after which the scan starts (0: from the first dead letter).
	After uint64
	// Limit is the number of matching dead letters at most returned.
	Limit int
	// Until, when not 0, ends the scan after that sequence: dead letters stored later are not read.
	Until uint64
	// MaxScan bounds the number of dead letters read, matching or not (0: ScanLimit).
	MaxScan int
}

// ScanLimit is the number of dead letters one page reads at most, matching or not: a page with a selective filter
// over a large stream may hold fewer than its limit, even none, and a next token.
const ScanLimit = 10_000

// Destination is where a dead letter is redriven: the ids of the target that gave it up, its rule and its bus.
type Destination struct {
	BusID, RuleID, TargetID string
}

// Store is the port to the account dead-letter streams. Every method does I/O.
type Store interface {
	// List returns, in stream order, the dead letters of the account after q.After that match q.Filter, at most
	// q.Limit, and the sequence of the last one it read when more may follow (0 when the scan reached the end of
	// the stream, or q.Until). An account without a dead-letter stream has none.
	List(ctx context.Context, accountID string, q Query) ([]*DeadLetter, uint64, error)
	// Last returns the sequence of the account's last dead letter (0 when there is none).
	Last(ctx context.Context, accountID string) (uint64, error)
	// Get returns one dead letter; ErrNotFound when the account has none with that sequence.
	Get(ctx context.Context, accountID string, seq uint64) (*DeadLetter, error)
	// Redrive stores the original event of the dead letter on the redrive subject of the destination, waits for
	// the acknowledgement, then removes the dead letter: a failure between the two redrives it twice at worst, never
	// loses it. ErrNotFound when the account has no dead letter with that sequence.
	Redrive(ctx context.Context, accountID string, seq uint64, to Destination) error
	// Delete removes one dead letter; ErrNotFound when the account has none with that sequence.
	Delete(ctx context.Context, accountID string, seq uint64) error
}

// Errors of the dead-letter use cases.
var (
	// ErrNotFound is a dead-letter id the account does not have.
	ErrNotFound = &domain.Error{Kind: domain.KindNotFound, Code: "DeadLetterNotFound"}
	// ErrNotRedrivable is a dead letter whose connector is not a target connector of the account: it names no
	// target to redrive it to.
	ErrNotRedrivable = &domain.Error{Kind: domain.KindInvalid, Code: "DeadLetterNotRedrivable"}
	// ErrRedriveFailed is a redrive that the event store could not complete; the dead letter stays.
	ErrRedriveFailed = &domain.Error{Kind: domain.KindUnavailable, Code: "RedriveFailed"}
	// ErrDeleteFailed is a discard that the event store could not complete; the dead letter stays.
	ErrDeleteFailed = &domain.Error{Kind: domain.KindUnavailable, Code: "DeleteFailed"}
)
