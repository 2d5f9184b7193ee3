// Package channel holds channels: a rule with all its targets and the sources of its bus, declared as one
// document, checked whole and stored all or nothing. It is how the console's builder saves (and how any client may
// save what it draws): a document with problems changes nothing and answers every problem at its place.
package channel

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/domain/target"
)

// ErrInvalid is a document with problems; its Details hold each, with the JSON pointer of its place.
var ErrInvalid = &domain.Error{Kind: domain.KindInvalid, Code: "InvalidChannel"}

// Spec is what a caller declares: sources of the bus (each created or replaced; the bus's other sources are kept,
// since they feed its other rules too), the rule, and every target of the rule (targets not listed are deleted).
type Spec struct {
	// CreateBus creates the bus, with the default retention, when it does not exist (after the document passed its
	// checks, so a document with problems creates nothing).
	CreateBus bool
	Sources   []source.Spec
	Rule      rule.Spec
	Targets   []target.Spec
}

// Channel is a rule with its targets and the sources of its bus, read at one moment.
type Channel struct {
	Bus     *bus.Bus
	Sources []*source.Source
	Rule    *rule.Rule
	Targets []*target.Target
}

// Plan is the change of a document to store in one transaction. The aggregates are checked and their secrets
// sealed; the store only writes them.
type Plan struct {
	BusID string
	// Rule is the rule to create (CreateRule) or to replace (by its id).
	Rule       *rule.Rule
	CreateRule bool
	// MaxRules is the quota of rules of the bus, checked again in the transaction when the rule is created.
	MaxRules int
	// Sources to create (MaxSources is the bus's quota, checked in the transaction) and to replace (by id).
	CreateSources, ReplaceSources []*source.Source
	MaxSources                    int
	// Targets to create, to replace (by id) and to delete (ids).
	CreateTargets, ReplaceTargets []*target.Target
	DeleteTargets                 []string
}

// Repository reads and writes channels.
type Repository interface {
	// Read returns the bus's rule name (rule.ErrNotFound when it has none of that name), its targets ordered by
	// name and the bus's sources ordered by name, read in one transaction: never half of a change Apply made.
	Read(ctx context.Context, busID, ruleName string) (*rule.Rule, []*target.Target, []*source.Source, error)
	// Apply stores the plan in one transaction: all of it or nothing. Errors: bus.ErrNotFound (the bus was deleted
	// meanwhile), rule.ErrAlreadyExists or ErrChanged (another request created or deleted the rule, a source or a
	// target meanwhile), rule.ErrQuotaExceeded, source.ErrQuotaExceeded.
	Apply(ctx context.Context, p Plan) error
}

// ErrChanged is a document saved over a channel another request changed between its read and its write.
var ErrChanged = &domain.Error{Kind: domain.KindConflict, Code: "ChannelChanged"}

// index is a JSON pointer's array index or "[i]" in a field path.
var index = regexp.MustCompile(`\[(\d+)\]`)

// Pointer returns the JSON pointer (RFC 6901) of a domain error's field (a dotted path such as
// "config.headers.X-Team" or "retryPolicy.maximumRetryAttempts") under prefix. flatConfig says that config is a flat
// map whose keys may hold dots (plugin configs: "config.http.signature.scheme" is the key "http.signature.scheme").
func Pointer(prefix, field string, flatConfig bool) string {
	if field == "" {
		return prefix
	}
	var parts []string
	if key, ok := strings.CutPrefix(field, "config."); ok && flatConfig {
		parts = []string{"config", key}
	} else {
		parts = strings.Split(index.ReplaceAllString(field, ".$1"), ".")
	}
	var b strings.Builder
	b.WriteString(prefix)
	for _, p := range parts {
		if p == "" {
			continue
		}
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(p))
	}
	return b.String()
}

// problems collects the problems of a document.
type problems []domain.Detail

// add records err at prefix when it is a validation error and reports whether it did; any other error is the
// caller's to return.
func (ps *problems) add(prefix string, flatConfig bool, err error) bool {
	ds, ok := DetailsOf(prefix, flatConfig, err)
	*ps = append(*ps, ds...)
	return ok
}

// DetailsOf is a validation error (of kind Invalid) as problems at their places in a document: each of its
// Details under prefix (a plugin's problems, one per key), else its field under prefix (see Pointer). ok is false
// for any other error.
func DetailsOf(prefix string, flatConfig bool, err error) (ds []domain.Detail, ok bool) {
	de, ok := domain.As(err)
	if !ok || de.Kind != domain.KindInvalid {
		return nil, false
	}
	for _, d := range de.Details {
		if d.Code == "" {
			d.Code = de.Code
		}
		d.Pointer = prefix + d.Pointer
		ds = append(ds, d)
	}
	if len(ds) > 0 {
		return ds, true
	}
	msg := de.Message
	if msg == "" {
		msg = de.Error()
	}
	return []domain.Detail{{Pointer: Pointer(prefix, de.Field, flatConfig), Code: de.Code, Message: msg}}, true
}

// at records a problem of the document's own making at pointer.
func (ps *problems) at(pointer, code, format string, args ...any) {
	*ps = append(*ps, domain.Detail{Pointer: pointer, Code: code, Message: fmt.Sprintf(format, args...)})
}

// err is Invalid(ps), nil when there are no problems.
func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return Invalid(ps)
}

// Invalid is the ErrInvalid of a document's problems: every one in Details, the first in Field, all of them in
// the message.
func Invalid(ds []domain.Detail) *domain.Error {
	var b strings.Builder
	for i, p := range ds {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", p.Pointer, p.Message)
	}
	e := ErrInvalid.With("the channel has %d problem(s): %s", len(ds), b.String())
	if len(ds) > 0 {
		e.Field = ds[0].Pointer
	}
	e.Details = ds
	return e
}
