package aws

import (
	"bytes"
	"errors"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/awsevent"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/pattern"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/web"
)

// PutEvents limits, as AWS has them: 1 to 10 entries, 256 KB of entries (their size as AWS counts it: Source,
// DetailType, Detail and each of Resources in UTF-8 bytes, 14 bytes for a Time).
const (
	maxEntries        = 10
	maxEntriesSize    = 256 << 10
	timeSizeInEntries = 14
)

type putEventsEntry struct {
	Source       string
	DetailType   string
	Detail       string
	Resources    []string
	Time         *epoch
	EventBusName string
	TraceHeader  string
}

type putEventsIn struct {
	Entries    []putEventsEntry
	EndpointID string `json:"EndpointId"`
}

// ResultEntry is the outcome of one entry of PutEvents: the event's id, or why it was not stored.
type ResultEntry struct {
	EventID      string `json:"EventId,omitempty"`
	ErrorCode    string `json:"ErrorCode,omitempty"`
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

// putEvents stores each entry as a CloudEvent (awsevent.FromEntry) on the bus it names, every bus of one call
// with one call of the bus service; the caller's key must be allowed to put on each. An entry that fails is a
// failed entry with its error, the others are stored.
func (a *api) putEvents(c *gin.Context, in *putEventsIn) (any, error) {
	if in.EndpointID != "" {
		return nil, refuseUnsupported("EndpointId", "global endpoints do not exist here")
	}
	if len(in.Entries) == 0 || len(in.Entries) > maxEntries {
		return nil, validation("1 validation error detected: Value at 'entries' failed to satisfy constraint: "+
			"Member must have length between 1 and %d, not %d", maxEntries, len(in.Entries))
	}
	size := 0
	for _, e := range in.Entries {
		size += len(e.Source) + len(e.DetailType) + len(e.Detail)
		for _, r := range e.Resources {
			size += len(r)
		}
		if e.Time != nil {
			size += timeSizeInEntries
		}
	}
	if size > maxEntriesSize {
		return nil, validation("Total size of the entries in the request is over the limit.")
	}

	account, number := web.AccountOf(c), accountNumber(c)
	results := make([]ResultEntry, len(in.Entries))
	byBus := map[string][]int{} // bus name → indexes of its entries, in order
	var order []string
	events := make([]*event.Event, len(in.Entries))
	now := time.Now()
	for i, e := range in.Entries {
		name, err := a.busName(c, "EventBusName", e.EventBusName)
		if err != nil {
			results[i] = a.failed(c, err)
			continue
		}
		entry := awsevent.Entry{Source: e.Source, DetailType: e.DetailType, Detail: e.Detail, Resources: e.Resources,
			TraceHeader: e.TraceHeader}
		if e.Time != nil {
			t := time.Time(*e.Time)
			entry.Time = &t
		}
		ev, err := awsevent.FromEntry(entry, domain.NewUUID(), number, a.region, now)
		var ee *awsevent.EntryError
		switch {
		case errors.As(err, &ee):
			results[i] = ResultEntry{ErrorCode: ee.Code, ErrorMessage: ee.Message}
			continue
		case err != nil: // what AWS takes but a CloudEvent cannot hold: a Source that is no URI reference
			results[i] = ResultEntry{ErrorCode: awsevent.CodeInvalidArgument, ErrorMessage: "The entry makes no valid " +
				"CloudEvent: " + strings.TrimSpace(err.Error()) + " (docs/aws-api.md#events-in-awss-shape)."}
			continue
		}
		if err == nil {
			err = bus.ValidateEvent(ev, len(e.Detail)+len(e.Source)+len(e.DetailType))
		}
		if err != nil {
			results[i] = a.failed(c, err)
			continue
		}
		events[i] = ev
		if _, ok := byBus[name]; !ok {
			order = append(order, name)
		}
		byBus[name] = append(byBus[name], i)
	}
	for _, name := range order {
		idx := byBus[name]
		evs, errs := make([]*event.Event, len(idx)), make([]error, len(idx))
		for j, i := range idx {
			evs[j] = events[i]
		}
		entries, _, err := web.StoreEvents(c, a.log, a.s.Buses, account, name, evs, errs)
		if errors.Is(err, bus.ErrNotFound) {
			err = &Error{Type: excNotFound, Message: "Event bus " + name + " does not exist."}
		}
		for j, i := range idx {
			switch {
			case err != nil:
				results[i] = a.failed(c, err)
			case entries[j].ErrorCode != "":
				results[i] = a.failed(c, errs[j])
			default:
				results[i] = ResultEntry{EventID: entries[j].EventID}
			}
		}
	}
	failed := 0
	for _, r := range results {
		if r.ErrorCode != "" {
			failed++
		}
	}
	return struct {
		FailedEntryCount int           `json:"FailedEntryCount"`
		Entries          []ResultEntry `json:"Entries"`
	}{FailedEntryCount: failed, Entries: results}, nil
}

// failed is the result entry of an entry that failed with err, its code the exception name errorOf gives (a
// throttled call or a full quota fails every entry of its bus: the other buses' entries may be stored already).
func (a *api) failed(c *gin.Context, err error) ResultEntry {
	_, e := a.errorOf(c, err)
	return ResultEntry{ErrorCode: e.Type, ErrorMessage: e.Message}
}

type testEventPatternIn struct {
	EventPattern string
	Event        string
}

// testEventPattern matches an AWS pattern against an event in AWS's envelope, both as given: the pattern as a
// rule of this API would keep it (the same checks), the event as AWS's envelope.
func (a *api) testEventPattern(c *gin.Context, in *testEventPatternIn) (any, error) {
	if in.EventPattern == "" {
		return nil, validation("Parameter EventPattern is required.")
	}
	ev := bytes.TrimSpace([]byte(in.Event))
	if len(ev) == 0 || ev[0] != '{' {
		return nil, validation("Parameter Event is not valid: it must be an event as a JSON object.")
	}
	if _, err := awsevent.RewritePattern([]byte(in.EventPattern)); err != nil {
		return nil, &Error{Type: excInvalidEventPattern, Message: "Event pattern is not valid. Reason: " + err.Error()}
	}
	if len(in.EventPattern) > rule.MaxPatternSize {
		return nil, &Error{Type: excInvalidEventPattern, Message: "Event pattern is not valid. Reason: it is longer than 4096 bytes."}
	}
	p, err := pattern.Compile([]byte(in.EventPattern))
	if err != nil {
		return nil, &Error{Type: excInvalidEventPattern, Message: "Event pattern is not valid. Reason: " + err.Error()}
	}
	ok, err := p.Match(ev)
	if err != nil {
		return nil, validation("Parameter Event is not valid. Reason: %s", err.Error())
	}
	return struct {
		Result bool `json:"Result"`
	}{Result: ok}, nil
}
