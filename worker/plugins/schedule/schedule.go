// Package schedule is the schedule-source plugin: a source that emits one CloudEvent per firing of a rate or
// cron expression written as Amazon EventBridge writes them, in a time zone. The last fired (scheduled) time is
// the source's offset, so a task that takes over after a restart or failover neither skips nor repeats a firing;
// firings missed while no task ran are emitted as schedule.catchup says.
package schedule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
	_ "time/tzdata" // time zones work in minimal images without /usr/share/zoneinfo

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// Name is the plugin's connector.class.
const Name = "schedule-source"

// Config keys of the plugin.
const (
	// KeyExpression is rate(value unit) or cron(minutes hours day-of-month month day-of-week year).
	KeyExpression = "schedule.expression"
	// KeyTimezone is the IANA time zone a cron expression is read in.
	KeyTimezone = "schedule.timezone"
	// KeyCatchup says what happens to firings missed while no task ran.
	KeyCatchup = "schedule.catchup"
	// KeyData is the JSON payload of every event.
	KeyData = "schedule.data"
	// KeyStart is the RFC 3339 time a rate counts from and before which a cron does not fire.
	KeyStart = "schedule.start"
)

// Values of schedule.catchup.
const (
	CatchupLast  = "last" // emit the last missed firing once (default)
	CatchupAll   = "all"  // emit every missed firing, in order
	CatchupNone  = "none" // skip missed firings
	catchupTrue  = "true" // = last
	catchupFalse = "false"
)

// EventType is the CloudEvent type of a firing.
const EventType = "eventbridge:Events:ScheduledEvent"

// SourcePrefix prefixes the connector's name in the CloudEvent source of its firings.
const SourcePrefix = "eventbridge:schedule:"

// Offset keys: the partition is {"schedule": <connector>}, the offset {"lastFired": <RFC 3339 time>}.
const (
	PartitionSchedule = "schedule"
	OffsetLastFired   = "lastFired"
)

// maxBatch bounds the firings of one Read when catching up with every missed firing.
const maxBatch = 100

// Clock tells the time and waits for it. The plugin registered in init uses the real clock; tests inject theirs.
type Clock interface {
	Now() time.Time
	// WaitUntil blocks until Now is at or after t, or ctx ends (it then returns ctx.Err()).
	WaitUntil(ctx context.Context, t time.Time) error
}

// realClock is the system clock. It wakes at least every minute to notice that the wall clock jumped.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) WaitUntil(ctx context.Context, t time.Time) error {
	for {
		d := time.Until(t)
		if d <= 0 {
			return nil
		}
		timer := time.NewTimer(min(d, time.Minute))
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		}
	}
}

func init() { connector.Register(Plugin()) }

// Plugin returns the schedule-source plugin, on the system clock.
func Plugin() connector.Plugin { return newPlugin(realClock{}) }

func newPlugin(clock Clock) connector.Plugin {
	return connector.Plugin{
		Name:    Name,
		Type:    connector.TypeSource,
		Version: "1.0.0",
		Doc: "Emits one CloudEvent of type " + EventType + " per firing of a rate or cron expression (as Amazon " +
			"EventBridge writes them) in a time zone: source " + SourcePrefix + "<connector>, time the scheduled time, " +
			"id derived from both (a firing emitted twice is stored once), data schedule.data. The last fired time is " +
			"the offset {\"lastFired\": T} of partition {\"schedule\": <connector>}. Only task 0 fires.",
		Spec: connector.Spec{
			{Name: KeyExpression, Title: "Schedule expression", Type: connector.TypeString, Required: true, Check: checkExpression,
				Example: "cron(0 18 ? * MON-FRI *)",
				Doc: "rate(value unit) with unit minute(s), hour(s) or day(s), singular iff value is 1: rate(5 minutes), " +
					"rate(1 day); or cron(minutes hours day-of-month month day-of-week year) with ? in exactly one of " +
					"day-of-month and day-of-week: cron(0 12 * * ? *), cron(0 18 ? * MON-FRI *), cron(15 10 L * ? *)."},
			{Name: KeyTimezone, Title: "Time zone", Type: connector.TypeString, Default: "UTC", Check: checkTimezone,
				Example: "Europe/Berlin",
				Doc:     "IANA time zone the cron expression is read in (Europe/Berlin); rates do not depend on it."},
			{Name: KeyCatchup, Title: "Missed firings", Type: connector.TypeEnum, Default: CatchupLast,
				Enum: []string{CatchupLast, CatchupAll, CatchupNone, catchupTrue, catchupFalse},
				Doc: "Firings missed while no task ran (the worker was down): last (or true) emits the last one once, " +
					"all emits each, in order, none (or false) skips them."},
			{Name: KeyData, Title: "Event data", Type: connector.TypeJSON, Default: "{}",
				Example: `{"job": "nightly-report"}`,
				Doc:     "JSON payload (data, application/json) of every event."},
			{Name: KeyStart, Title: "Start time", Type: connector.TypeString, Check: checkStart,
				Example: "2026-01-31T09:00:00Z",
				Doc: "RFC 3339 time a rate counts from (firings at start + k × rate, k ≥ 1) and before which a cron " +
					"does not fire. Empty: the first task start (a rate then keeps the phase of its first firing)."},
		},
		NewSource: func(cfg connector.Values, env connector.Env) (connector.Source, error) {
			return newSource(cfg, env, clock)
		},
	}
}

func checkExpression(v string) error {
	_, err := Parse(v)
	return err
}

func loadLocation(v string) (*time.Location, error) {
	if v == "Local" {
		return nil, errors.New(`"Local" is not an IANA time zone name; write one like Europe/Berlin or UTC`)
	}
	loc, err := time.LoadLocation(v)
	if err != nil {
		return nil, fmt.Errorf("%q is not an IANA time zone name (like Europe/Berlin or UTC)", v)
	}
	return loc, nil
}

func checkTimezone(v string) error {
	_, err := loadLocation(v)
	return err
}

func checkStart(v string) error {
	if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
		return fmt.Errorf("%q is not an RFC 3339 time (like 2026-01-31T09:00:00Z)", v)
	}
	return nil
}

// Source emits the firings of one schedule.
type Source struct {
	expr    Expression
	loc     *time.Location
	catchup string
	data    []byte
	start   time.Time // schedule.start; zero when unset
	clock   Clock
	env     connector.Env

	anchor time.Time  // what a rate counts from
	cursor time.Time  // the last firing emitted (or skipped); firings after it are due
	missed *time.Time // under catchup last: the last firing missed before Connect, emitted by the first Read
}

var _ connector.Source = (*Source)(nil)

// newSource builds a source from its config; problems the spec cannot see are FieldErrors.
func newSource(cfg connector.Values, env connector.Env, clock Clock) (*Source, error) {
	var errs connector.FieldErrors
	expr, err := Parse(cfg.String(KeyExpression))
	if err != nil {
		errs = append(errs, connector.FieldError{Key: KeyExpression, Message: err.Error()})
	}
	loc, err := loadLocation(cfg.String(KeyTimezone))
	if err != nil {
		errs = append(errs, connector.FieldError{Key: KeyTimezone, Message: err.Error()})
	}
	var data any
	if err := cfg.JSON(KeyData, &data); err != nil {
		var fe connector.FieldErrors
		if errors.As(err, &fe) {
			errs = append(errs, fe...)
		}
	}
	s := &Source{expr: expr, loc: loc, data: []byte(cfg.String(KeyData)), clock: clock, env: env}
	if v := cfg.String(KeyStart); v != "" {
		if s.start, err = time.Parse(time.RFC3339Nano, v); err != nil {
			errs = append(errs, connector.FieldError{Key: KeyStart, Message: checkStart(v).Error()})
		}
	}
	switch c := cfg.String(KeyCatchup); c {
	case CatchupLast, catchupTrue, "":
		s.catchup = CatchupLast
	case CatchupAll:
		s.catchup = CatchupAll
	case CatchupNone, catchupFalse:
		s.catchup = CatchupNone
	default:
		errs = append(errs, connector.FieldError{Key: KeyCatchup, Message: fmt.Sprintf("%q is not one of last, all, none, true, false", c)})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

func (s *Source) partition() map[string]any {
	return map[string]any{PartitionSchedule: s.env.Connector}
}

// Connect reads the stored offset and decides where the source starts: after the last fired time when there is
// one, else at schedule.start, else now. Firings missed since then are emitted by the first Reads as
// schedule.catchup says (none: they are skipped here).
func (s *Source) Connect(context.Context) error {
	now := s.clock.Now()
	switch off, ok := s.env.Offset(s.partition()); {
	case ok:
		v, _ := off[OffsetLastFired].(string)
		last, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return connector.Permanent(fmt.Errorf("schedule-source: stored offset %v has no RFC 3339 %s", off, OffsetLastFired))
		}
		s.cursor, s.anchor = last, last
		if !s.start.IsZero() {
			s.anchor = s.start
		}
	case !s.start.IsZero():
		s.cursor, s.anchor = s.start, s.start
	default:
		// Whole seconds keep the scheduled times of a rate readable.
		s.cursor = now.Truncate(time.Second)
		s.anchor = s.cursor
	}
	// What was missed is decided here, against the time of Connect, so that a firing that falls due while the
	// first Read is on its way is not taken for a missed one.
	if last, ok := s.expr.Last(s.cursor, now, s.anchor, s.loc); ok {
		switch s.catchup {
		case CatchupNone:
			s.cursor = last
		case CatchupLast:
			s.missed = &last
		}
	}
	return nil
}

// Read blocks until at least one firing is due (or ctx ends) and returns the due firings: first the one Connect
// found missed (catchup last); then every due firing (at most 100 at a time) under catchup all, else only the
// latest, so a task that fell behind while running (the machine slept) emits the last firing it slept through
// once. Tasks other than 0 never fire: Read waits for ctx.
func (s *Source) Read(ctx context.Context) ([]connector.SourceRecord, error) {
	if s.env.Task != 0 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if t := s.missed; t != nil {
		s.missed, s.cursor = nil, *t
		return []connector.SourceRecord{s.record(*t)}, nil
	}
	for {
		next, ok := s.expr.Next(s.cursor, s.anchor, s.loc)
		if !ok {
			<-ctx.Done() // the schedule has no more firings (a cron past its last year)
			return nil, ctx.Err()
		}
		if err := s.clock.WaitUntil(ctx, next); err != nil {
			return nil, err
		}
		now := s.clock.Now()
		var due []time.Time
		if s.catchup == CatchupAll {
			for t, ok := next, true; ok && !t.After(now) && len(due) < maxBatch; t, ok = s.expr.Next(t, s.anchor, s.loc) {
				due = append(due, t)
			}
		} else if last, ok := s.expr.Last(s.cursor, now, s.anchor, s.loc); ok {
			due = []time.Time{last}
		}
		if len(due) == 0 {
			continue
		}
		out := make([]connector.SourceRecord, len(due))
		for i, t := range due {
			out[i] = s.record(t)
		}
		s.cursor = due[len(due)-1]
		return out, nil
	}
}

// record is the record of the firing at t.
func (s *Source) record(t time.Time) connector.SourceRecord {
	return connector.SourceRecord{Event: s.event(t), Partition: s.partition(),
		Offset: map[string]any{OffsetLastFired: t.UTC().Format(time.RFC3339Nano)}}
}

// event is the CloudEvent of the firing at t.
func (s *Source) event(t time.Time) *event.Event {
	e := event.New()
	e.SetID(EventID(s.env.Connector, t))
	e.SetSource(SourcePrefix + s.env.Connector)
	e.SetType(EventType)
	e.SetTime(t.UTC())
	_ = e.SetData(event.ApplicationJSON, s.data)
	return &e
}

// EventID is the id of the firing of connector at t: a UUID-shaped hex SHA-256 of both, so a firing emitted
// twice (after a failover) has the same id and is stored once within the bus's duplicate window.
func EventID(connector string, t time.Time) string {
	h := sha256.Sum256([]byte(connector + "|" + t.UTC().Format(time.RFC3339Nano)))
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// Commit does nothing: the position is the offset the runtime stored.
func (s *Source) Commit(context.Context, []connector.SourceRecord) error { return nil }

// Close does nothing.
func (s *Source) Close() error { return nil }
