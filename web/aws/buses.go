package aws

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/web"
)

// EventBus is a bus as ListEventBuses and DescribeEventBus answer it.
type EventBus struct {
	Name         string     `json:"Name"`
	Arn          string     `json:"Arn"`
	Description  string     `json:"Description,omitempty"`
	LogConfig    *LogConfig `json:"LogConfig,omitempty"`
	CreationTime epoch      `json:"CreationTime"`
}

// LogConfig is AWS's LogConfig of a bus: the bus log (bus.LogConfig, docs/events.md#the-bus-log).
type LogConfig struct {
	Level         string `json:"Level,omitempty"`
	IncludeDetail string `json:"IncludeDetail,omitempty"`
}

func (a *api) eventBus(c *gin.Context, b *bus.Bus) EventBus {
	out := EventBus{Name: b.Name(), Arn: a.busARN(c, b.Name()), Description: b.Description(), CreationTime: epoch(b.CreatedAt())}
	if l := b.Log(); l.On() {
		out.LogConfig = &LogConfig{Level: l.Level, IncludeDetail: l.IncludeDetail}
	}
	return out
}

// domain is the bus log an AWS LogConfig asks for (nil: none given).
func (l *LogConfig) domain() *bus.LogConfig {
	if l == nil {
		return nil
	}
	return &bus.LogConfig{Level: l.Level, IncludeDetail: l.IncludeDetail}
}

type createEventBusIn struct {
	Name             string
	EventSourceName  string
	Description      string
	KmsKeyIdentifier string
	DeadLetterConfig *struct{ Arn string }
	LogConfig        *LogConfig
	Tags             []Tag
}

// refuseUnsupported is the error of a member this API does not implement yet, or has no counterpart of, so that
// a request that sets it is never a silent success.
func refuseUnsupported(member, why string) error {
	return validation("Parameter %s is not supported by this API: %s (docs/aws-api.md).", member, why)
}

func (a *api) createEventBus(c *gin.Context, in *createEventBusIn) (any, error) {
	switch {
	case in.Name == "":
		return nil, validation("Parameter Name is required.")
	case in.EventSourceName != "":
		return nil, refuseUnsupported("EventSourceName", "there are no partner event sources")
	case in.KmsKeyIdentifier != "":
		return nil, refuseUnsupported("KmsKeyIdentifier", "events are not encrypted with customer keys")
	case in.DeadLetterConfig != nil && in.DeadLetterConfig.Arn != "":
		return nil, refuseUnsupported("DeadLetterConfig", "a bus's own dead-letter queue does not exist; targets have theirs")
	}
	if err := checkTags(in.Tags); err != nil {
		return nil, err
	}
	var logConfig bus.LogConfig
	if l := in.LogConfig.domain(); l != nil {
		logConfig = *l
	}
	b, err := a.s.Buses.CreateWithLog(c.Request.Context(), web.AccountOf(c), in.Name, in.Description, bus.Retention{}, logConfig)
	if errors.Is(err, bus.ErrAlreadyExists) {
		return nil, &Error{Type: excAlreadyExists, Message: "Event bus " + in.Name + " already exists."}
	}
	if err != nil {
		return nil, err
	}
	if err := a.tagCreated(c, b.ID(), in.Tags); err != nil {
		return nil, err
	}
	out := struct {
		EventBusArn string `json:"EventBusArn"`
		Description string `json:"Description,omitempty"`
	}{EventBusArn: a.busARN(c, b.Name()), Description: b.Description()}
	return out, nil
}

type nameIn struct{ Name string }

// deleteEventBus deletes a bus; deleting one that does not exist succeeds, as in AWS; the default bus cannot be
// deleted. A bus that still has rules is refused (AWS deletes them with it): delete them first.
func (a *api) deleteEventBus(c *gin.Context, in *nameIn) (any, error) {
	name, err := a.busName(c, "Name", in.Name)
	if err != nil {
		return nil, err
	}
	if in.Name == "" {
		return nil, validation("Parameter Name is required.")
	}
	if name == DefaultBus {
		return nil, validation("Cannot delete event bus default.")
	}
	err = a.s.Buses.Delete(c.Request.Context(), web.AccountOf(c), name)
	if err != nil && !errors.Is(err, bus.ErrNotFound) {
		return nil, err
	}
	return struct{}{}, nil
}

// lookupBus reads the named bus, answering AWS's message when it does not exist.
func (a *api) lookupBus(c *gin.Context, name string) (*bus.Bus, error) {
	b, err := a.s.Buses.Get(c.Request.Context(), web.AccountOf(c), name)
	if errors.Is(err, bus.ErrNotFound) {
		return nil, &Error{Type: excNotFound, Message: "Event bus " + name + " does not exist."}
	}
	return b, err
}

func (a *api) describeEventBus(c *gin.Context, in *nameIn) (any, error) {
	name, err := a.busName(c, "Name", in.Name)
	if err != nil {
		return nil, err
	}
	b, err := a.lookupBus(c, name)
	if err != nil {
		return nil, err
	}
	return a.eventBus(c, b), nil
}

type listIn struct {
	NamePrefix string
	NextToken  string
	Limit      *int
}

func (a *api) listEventBuses(c *gin.Context, in *listIn) (any, error) {
	all, err := domain.AllPages(c.Request.Context(), func(ctx context.Context, p domain.Page) ([]*bus.Bus, string, error) {
		return a.s.Buses.List(ctx, web.AccountOf(c), p)
	})
	if err != nil {
		return nil, err
	}
	page, next, err := pageOf(prefixed(all, in.NamePrefix, (*bus.Bus).Name), in.NextToken, in.Limit)
	if err != nil {
		return nil, err
	}
	out := struct {
		EventBuses []EventBus `json:"EventBuses"`
		NextToken  string     `json:"NextToken,omitempty"`
	}{EventBuses: make([]EventBus, 0, len(page)), NextToken: next}
	for _, b := range page {
		out.EventBuses = append(out.EventBuses, a.eventBus(c, b))
	}
	return out, nil
}

type updateEventBusIn struct {
	Name             string
	Description      *string
	KmsKeyIdentifier string
	DeadLetterConfig *struct{ Arn string }
	LogConfig        *LogConfig
}

func (a *api) updateEventBus(c *gin.Context, in *updateEventBusIn) (any, error) {
	switch {
	case in.KmsKeyIdentifier != "":
		return nil, refuseUnsupported("KmsKeyIdentifier", "events are not encrypted with customer keys")
	case in.DeadLetterConfig != nil && in.DeadLetterConfig.Arn != "":
		return nil, refuseUnsupported("DeadLetterConfig", "a bus's own dead-letter queue does not exist; targets have theirs")
	}
	name, err := a.busName(c, "Name", in.Name)
	if err != nil {
		return nil, err
	}
	b, err := a.s.Buses.Update(c.Request.Context(), web.AccountOf(c), name, bus.Patch{Description: in.Description,
		Log: in.LogConfig.domain()})
	if errors.Is(err, bus.ErrNotFound) {
		return nil, &Error{Type: excNotFound, Message: "Event bus " + name + " does not exist."}
	}
	if err != nil {
		return nil, err
	}
	eb := a.eventBus(c, b)
	out := struct {
		Arn         string     `json:"Arn"`
		Name        string     `json:"Name"`
		Description string     `json:"Description,omitempty"`
		LogConfig   *LogConfig `json:"LogConfig,omitempty"`
	}{Arn: eb.Arn, Name: eb.Name, Description: eb.Description, LogConfig: eb.LogConfig}
	return out, nil
}

// Paging as AWS does it: Limit from 1 to 100 (all when absent), NextToken opaque; here the decimal offset of the
// page's first item in the list sorted by name.
const maxLimit = 100

// prefixed keeps the items whose name starts with prefix.
func prefixed[T any](all []T, prefix string, name func(T) string) []T {
	if prefix == "" {
		return all
	}
	out := all[:0:0]
	for _, v := range all {
		if strings.HasPrefix(name(v), prefix) {
			out = append(out, v)
		}
	}
	return out
}

// pageOf is the page of all that token and limit select, and the token of the next page ("" for the last).
func pageOf[T any](all []T, token string, limit *int) ([]T, string, error) {
	n := len(all)
	if limit != nil {
		if *limit < 1 || *limit > maxLimit {
			return nil, "", validation("Parameter Limit is not valid: it must be between 1 and %d, not %d.", maxLimit, *limit)
		}
		n = *limit
	}
	offset := 0
	if token != "" {
		v, err := strconv.Atoi(token)
		if err != nil || v < 0 || strconv.Itoa(v) != token {
			return nil, "", validation("Parameter NextToken is not valid: %q is not a token this API answered.", token)
		}
		offset = v
	}
	if offset >= len(all) {
		return all[:0], "", nil
	}
	end := min(offset+n, len(all))
	next := ""
	if end < len(all) {
		next = strconv.Itoa(end)
	}
	return all[offset:end], next, nil
}
