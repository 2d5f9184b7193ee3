// Package rule holds rules: an event pattern on a bus that selects the events its targets receive.
package rule

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/awsevent"
	"github.com/eventbridge-go/eventbridge/domain/pattern"
)

// State says whether the router routes events to the rule.
type State string

const (
	Enabled  State = "ENABLED"
	Disabled State = "DISABLED"
)

// Syntax is the form an event pattern is written in.
type Syntax string

const (
	// CloudEvents patterns match the CloudEvents JSON form of events (attributes at the top level, the payload
	// under data): the rules of /api/v1 and RocketMQ EventBridge's API.
	CloudEvents Syntax = ""
	// AWS patterns are written for Amazon EventBridge's event envelope (source, detail-type, detail, account,
	// region, resources): the rules of the AWS API. They are kept as written and matched in the form
	// awsevent.RewritePattern makes of them, so they match every event of the bus, whichever API put it.
	AWS Syntax = "aws"
)

// MaxPatternSize is the largest event pattern accepted, in bytes.
const MaxPatternSize = 4096

// DefaultMaxWildcardRules is how many rules of a bus, enabled or not, may use wildcards (Service.MaxWildcardRules),
// as in Amazon EventBridge: each costs more to match than other rules.
const DefaultMaxWildcardRules = 30

// Errors returned by this package and its repository.
var (
	ErrNotFound      = &domain.Error{Kind: domain.KindNotFound, Code: "RuleNotFound"}
	ErrAlreadyExists = &domain.Error{Kind: domain.KindConflict, Code: "RuleAlreadyExists"}
	// ErrQuotaExceeded: the bus has as many rules as its quota allows.
	ErrQuotaExceeded       = &domain.Error{Kind: domain.KindLimitExceeded, Code: "RuleQuotaExceeded"}
	ErrInvalidEventPattern = &domain.Error{Kind: domain.KindInvalid, Code: "InvalidEventPattern", Field: "eventPattern"}
)

// ReservedName is the one name a rule cannot have (see New).
const ReservedName = "source"

// Rule selects events of its bus with an event pattern.
type Rule struct {
	id           string
	accountID    string
	busID        string
	name         string
	description  string
	eventPattern []byte
	syntax       Syntax
	// matchPattern is eventPattern in the CloudEvents form the matcher sees (eventPattern itself for CloudEvents).
	matchPattern []byte
	state        State
	layout       []byte
	createdAt    time.Time
	updatedAt    time.Time
}

// MaxLayoutSize bounds a rule's layout.
const MaxLayoutSize = 64 << 10

// SetLayout replaces what a client stored about how the rule is drawn (the console's node positions): a JSON
// object of at most MaxLayoutSize bytes, kept and answered as given; nil or empty removes it. The control plane
// never reads it.
func (r *Rule) SetLayout(layout []byte, now time.Time) error {
	layout = bytes.TrimSpace(layout)
	if len(layout) == 0 || bytes.Equal(layout, []byte("null")) {
		r.layout, r.updatedAt = nil, now.UTC()
		return nil
	}
	if len(layout) > MaxLayoutSize {
		return domain.Invalid("layout", "layout is %d bytes; at most %d are allowed", len(layout), MaxLayoutSize)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(layout, &obj); err != nil {
		return domain.Invalid("layout", "layout must be a JSON object: %s", err.Error())
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, layout) // valid JSON: cannot fail
	r.layout, r.updatedAt = buf.Bytes(), now.UTC()
	return nil
}

// Layout is the rule's layout as stored (nil when none).
func (r *Rule) Layout() []byte { return r.layout }

// WithLayout sets the layout of a rule read from storage, without validation.
func (r *Rule) WithLayout(layout []byte) *Rule {
	r.layout = layout
	return r
}

// New validates and returns a new rule with a fresh id. An empty state means ENABLED.
func New(accountID, busID, name, description string, eventPattern []byte, syntax Syntax, state State, now time.Time) (*Rule, error) {
	r := &Rule{id: domain.NewID(), accountID: accountID, busID: busID, createdAt: now.UTC(), updatedAt: now.UTC()}
	if err := domain.ValidateRuleName("name", name); err != nil {
		return nil, err
	}
	if name == ReservedName {
		return nil, domain.Invalid("name", "the rule name %q is reserved: the connectors of a bus's sources are named "+
			"eb.<account>.<bus>.source.<source>, which a target of a rule of that name would collide with", name)
	}
	r.name = name
	if err := r.Change(description, eventPattern, syntax, state, now); err != nil {
		return nil, err
	}
	return r, nil
}

// UnmarshalFromDatabase rebuilds a rule from storage without validation. An AWS pattern that no longer rewrites
// (it did when stored) matches as it is written.
func UnmarshalFromDatabase(id, accountID, busID, name, description string, eventPattern []byte, syntax Syntax, state State,
	createdAt, updatedAt time.Time) *Rule {
	r := &Rule{id: id, accountID: accountID, busID: busID, name: name, description: description,
		eventPattern: eventPattern, syntax: syntax, matchPattern: eventPattern, state: state, createdAt: createdAt, updatedAt: updatedAt}
	if syntax == AWS {
		if p, err := awsevent.RewritePattern(eventPattern); err == nil {
			r.matchPattern = p
		}
	}
	return r
}

// Change replaces the description, the pattern and its syntax, and the state (empty means ENABLED) after
// validating them. A CloudEvents pattern is kept in compact form; an AWS one as written (AWS's clients compare
// what they read back with what they wrote).
func (r *Rule) Change(description string, eventPattern []byte, syntax Syntax, state State, now time.Time) error {
	if err := domain.ValidateDescription(description); err != nil {
		return err
	}
	p, match, err := compileAs(eventPattern, syntax)
	if err != nil {
		return err
	}
	if state == "" {
		state = Enabled
	}
	if state != Enabled && state != Disabled {
		return domain.Invalid("state", "state must be ENABLED or DISABLED, not %q", state)
	}
	r.description, r.eventPattern, r.syntax, r.matchPattern, r.state, r.updatedAt = description, p, syntax, match, state, now.UTC()
	return nil
}

// compileAs checks a pattern of the syntax and returns the form to keep and the form to match.
func compileAs(eventPattern []byte, syntax Syntax) (kept, match []byte, err error) {
	switch syntax {
	case CloudEvents:
		p, err := CompilePattern(eventPattern)
		return p, p, err
	case AWS:
		if len(bytes.TrimSpace(eventPattern)) == 0 {
			return nil, nil, ErrInvalidEventPattern.With("EventPattern is required")
		}
		if len(eventPattern) > MaxPatternSize {
			return nil, nil, ErrInvalidEventPattern.With("EventPattern is %d bytes; at most %d are allowed", len(eventPattern), MaxPatternSize)
		}
		m, err := awsevent.RewritePattern(eventPattern)
		if err != nil {
			return nil, nil, ErrInvalidEventPattern.With("Event pattern is not valid. Reason: %s", err.Error())
		}
		return bytes.Clone(eventPattern), m, nil
	}
	return nil, nil, domain.Invalid("syntax", "a pattern's syntax is CloudEvents or aws, not %q", syntax)
}

// SetState enables or disables the rule.
func (r *Rule) SetState(s State, now time.Time) {
	r.state, r.updatedAt = s, now.UTC()
}

// CompilePattern checks an event pattern and returns its compact JSON form. Errors are ErrInvalidEventPattern
// naming the problem.
func CompilePattern(eventPattern []byte) ([]byte, error) {
	if len(bytes.TrimSpace(eventPattern)) == 0 {
		return nil, ErrInvalidEventPattern.With("eventPattern is required")
	}
	if len(eventPattern) > MaxPatternSize {
		return nil, ErrInvalidEventPattern.With("eventPattern is %d bytes; at most %d are allowed", len(eventPattern), MaxPatternSize)
	}
	if _, err := pattern.Compile(eventPattern); err != nil {
		return nil, ErrInvalidEventPattern.With("invalid eventPattern: %s", err.Error())
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, eventPattern); err != nil {
		return nil, ErrInvalidEventPattern.With("invalid eventPattern: %s", err.Error())
	}
	return buf.Bytes(), nil
}

// UsesWildcard reports whether the rule's pattern has a wildcard or an anything-but wildcard.
func (r *Rule) UsesWildcard() bool { return usesWildcard(r.matchPattern) }

func usesWildcard(eventPattern []byte) bool {
	p, err := pattern.Compile(eventPattern)
	return err == nil && p.UsesWildcard()
}

// checkWildcardRules returns ErrInvalidEventPattern when a rule of the bus named name, using wildcards, would make
// more than limit such rules among the bus's rules (the rule of that name, if stored, is not counted twice).
func checkWildcardRules(rules []*Rule, name string, limit int) error {
	n := 1
	for _, r := range rules {
		if r.Name() != name && r.UsesWildcard() {
			n++
		}
	}
	if n > limit {
		return ErrInvalidEventPattern.With("a bus may have at most %d rules whose event pattern uses wildcards; "+
			"this one would be number %d", limit, n)
	}
	return nil
}

func (r *Rule) ID() string           { return r.id }
func (r *Rule) AccountID() string    { return r.accountID }
func (r *Rule) BusID() string        { return r.busID }
func (r *Rule) Name() string         { return r.name }
func (r *Rule) Description() string  { return r.description }
func (r *Rule) EventPattern() []byte { return r.eventPattern }

// Syntax is the syntax the pattern is written in.
func (r *Rule) Syntax() Syntax { return r.syntax }

// MatchPattern is the pattern in the CloudEvents form the matcher sees: EventPattern for a CloudEvents pattern, its
// rewriting for an AWS one. The router and every test of events against rules use it.
func (r *Rule) MatchPattern() []byte { return r.matchPattern }
func (r *Rule) State() State         { return r.state }
func (r *Rule) Enabled() bool        { return r.state == Enabled }
func (r *Rule) CreatedAt() time.Time { return r.createdAt }
func (r *Rule) UpdatedAt() time.Time { return r.updatedAt }

// Repository stores rules. Names are unique per bus.
type Repository interface {
	// Create stores a new rule; ErrAlreadyExists when the bus has a rule of that name.
	Create(ctx context.Context, r *Rule) error
	// Get returns ErrNotFound when the bus has no rule of that name.
	Get(ctx context.Context, busID, name string) (*Rule, error)
	// GetByID returns ErrNotFound when no rule has that id.
	GetByID(ctx context.Context, id string) (*Rule, error)
	// List returns one page of a bus's rules ordered by name and the next page's token ("" at the end).
	List(ctx context.Context, busID string, page domain.Page) ([]*Rule, string, error)
	// ListByBus returns every rule of a bus (for the router's rule table).
	ListByBus(ctx context.Context, busID string) ([]*Rule, error)
	// CountByBus counts a bus's rules.
	CountByBus(ctx context.Context, busID string) (int, error)
	// Update loads the rule, lets fn change it and stores it, in one transaction. ErrNotFound when it does not
	// exist; fn's error is returned as is and nothing is stored.
	Update(ctx context.Context, busID, name string, fn func(*Rule) error) (*Rule, error)
	// Delete removes the rule and its targets; ErrNotFound when it does not exist.
	Delete(ctx context.Context, busID, name string) error
}
