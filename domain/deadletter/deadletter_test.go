package deadletter_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/deadletter"
)

func TestNewFilter(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name                string
		bus, rule, target   string
		from, to            time.Time
		wantField           string // "" = valid
		wantMessageContains string
	}{
		{name: "empty selects everything"},
		{name: "bus", bus: "orders"},
		{name: "bus and rule", bus: "orders", rule: "created"},
		{name: "bus, rule and target", bus: "orders", rule: "created", target: "hook"},
		{name: "time range", from: t0, to: t0.Add(time.Hour)},
		{name: "an instant", from: t0, to: t0},
		{name: "from only", from: t0},
		{name: "rule without bus", rule: "created", wantField: "rule", wantMessageContains: "needs its bus"},
		{name: "target without rule", bus: "orders", target: "hook", wantField: "target", wantMessageContains: "needs its rule"},
		{name: "from after to", from: t0.Add(time.Second), to: t0, wantField: "from", wantMessageContains: "after"},
		{name: "bad bus name", bus: "a b", wantField: "bus"},
		{name: "bad rule name", bus: "orders", rule: "a b", wantField: "rule"},
		{name: "bad target name", bus: "orders", rule: "r", target: strings.Repeat("x", 65), wantField: "target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := deadletter.NewFilter(tt.bus, tt.rule, tt.target, tt.from, tt.to)
			if tt.wantField == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.bus, f.Bus)
				return
			}
			require.ErrorIs(t, err, domain.ErrValidation)
			de, ok := domain.As(err)
			require.True(t, ok)
			assert.Equal(t, tt.wantField, de.Field)
			assert.Contains(t, de.Message, tt.wantMessageContains)
		})
	}
}

func ev(id string) *event.Event {
	e := event.New()
	e.SetID(id)
	e.SetSource("shop")
	e.SetType("order.created")
	return &e
}

func TestRebuildAndMatches(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	d := deadletter.Rebuild("acme", deadletter.Record{Sequence: 42, Time: t0, Connector: "eb.acme.orders.created.hook",
		Reason: "http: POST http://127.0.0.1:1/: 503 Service Unavailable", ErrorClass: "permanent", Attempts: 1, Event: ev("e1")})
	assert.Equal(t, "42", d.ID())
	assert.Equal(t, "orders", d.Bus())
	assert.Equal(t, "created", d.Rule())
	assert.Equal(t, "hook", d.Target())

	for _, c := range []struct {
		name string
		f    deadletter.Filter
		want bool
	}{
		{"zero filter", deadletter.Filter{}, true},
		{"its bus", deadletter.Filter{Bus: "orders"}, true},
		{"another bus", deadletter.Filter{Bus: "billing"}, false},
		{"its target", deadletter.Filter{Bus: "orders", Rule: "created", Target: "hook"}, true},
		{"another rule", deadletter.Filter{Bus: "orders", Rule: "paid"}, false},
		{"another target", deadletter.Filter{Bus: "orders", Rule: "created", Target: "audit"}, false},
		{"from its time", deadletter.Filter{From: t0}, true},
		{"to its time", deadletter.Filter{To: t0}, true},
		{"from later", deadletter.Filter{From: t0.Add(time.Nanosecond)}, false},
		{"to earlier", deadletter.Filter{To: t0.Add(-time.Nanosecond)}, false},
		{"its event", deadletter.Filter{EventID: "e1"}, true},
		{"another event", deadletter.Filter{EventID: "e2"}, false},
		{"a text of its reason, in another case", deadletter.Filter{Reason: "service UNAVAILABLE"}, true},
		{"a text not in its reason", deadletter.Filter{Reason: "timeout"}, false},
		{"its error class", deadletter.Filter{ErrorClass: "permanent"}, true},
		{"another error class", deadletter.Filter{ErrorClass: "transform"}, false},
		{"all of them", deadletter.Filter{Bus: "orders", EventID: "e1", Reason: "503", ErrorClass: "permanent"}, true},
	} {
		assert.Equal(t, c.want, c.f.Matches(d), c.name)
	}

	for _, c := range []struct {
		f    deadletter.Filter
		conn string
		want bool
	}{
		{deadletter.Filter{}, "anything", true},
		{deadletter.Filter{Bus: "orders"}, "eb.acme.orders.created.hook", true},
		{deadletter.Filter{Bus: "orders", Rule: "created", Target: "hook"}, "eb.acme.orders.created.hook", true},
		{deadletter.Filter{Bus: "orders", Rule: "created", Target: "audit"}, "eb.acme.orders.created.hook", false},
		{deadletter.Filter{Bus: "orders", Rule: "paid"}, "eb.acme.orders.created.hook", false},
		{deadletter.Filter{Bus: "orders"}, "eb.other.orders.created.hook", false},
		{deadletter.Filter{Bus: "orders"}, "eb.acme.orders.router", false},
	} {
		assert.Equal(t, c.want, c.f.SelectsConnector("acme", c.conn), "%+v %s", c.f, c.conn)
	}

	// Connectors that are not target connectors of the account name no target.
	for _, conn := range []string{"eb.acme.orders.router", "eb.other.orders.created.hook", "x.acme.orders.created.hook",
		"eb.acme.orders.created.hook.extra", ""} {
		d := deadletter.Rebuild("acme", deadletter.Record{Sequence: 1, Connector: conn, Event: ev("e")})
		assert.Empty(t, d.Bus(), conn)
		assert.False(t, deadletter.Filter{Bus: "orders"}.Matches(d), conn)
		assert.True(t, deadletter.Filter{}.Matches(d), conn)
	}
}

func TestNarrowed(t *testing.T) {
	t.Parallel()
	base, err := deadletter.NewFilter("orders", "", "", time.Time{}, time.Time{})
	require.NoError(t, err)
	f, err := base.Narrowed("e1", "503", "retries-exhausted")
	require.NoError(t, err)
	assert.Equal(t, deadletter.Filter{Bus: "orders", EventID: "e1", Reason: "503", ErrorClass: "retries-exhausted"}, f)
	for _, c := range []struct{ field, eventID, reason, class string }{
		{"errorClass", "", "", "fatal"},
		{"reason", "", strings.Repeat("r", deadletter.MaxReasonFilter+1), ""},
		{"eventId", strings.Repeat("e", 257), "", ""},
	} {
		_, err := base.Narrowed(c.eventID, c.reason, c.class)
		require.ErrorIs(t, err, domain.ErrValidation, c.field)
		de, _ := domain.As(err)
		assert.Equal(t, c.field, de.Field)
	}
}

func TestParseID(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"1", "42", "18446744073709551615"} {
		_, err := deadletter.ParseID("id", ok)
		assert.NoError(t, err, ok)
	}
	for _, bad := range []string{"", "0", "-1", "01", "+1", "1.5", "abc", "18446744073709551616", " 1"} {
		_, err := deadletter.ParseID("ids[3]", bad)
		require.Error(t, err, bad)
		de, _ := domain.As(err)
		assert.Equal(t, "ids[3]", de.Field, bad)
	}
}

func TestNewSelection(t *testing.T) {
	t.Parallel()
	many := make([]string, deadletter.MaxIDs+1)
	for i := range many {
		many[i] = "1" + strings.Repeat("0", i%10) + string(rune('1'+i%9))
	}
	tests := []struct {
		name      string
		ids       []string
		filter    *deadletter.Filter
		wantField string
	}{
		{name: "ids", ids: []string{"1", "7"}},
		{name: "filter", filter: &deadletter.Filter{Bus: "orders"}},
		{name: "every dead letter", filter: &deadletter.Filter{}},
		{name: "neither", wantField: "ids"},
		{name: "both", ids: []string{"1"}, filter: &deadletter.Filter{}, wantField: "filter"},
		{name: "no ids", ids: []string{}, wantField: "ids"},
		{name: "too many ids", ids: many, wantField: "ids"},
		{name: "bad id", ids: []string{"1", "x"}, wantField: "ids[1]"},
		{name: "id twice", ids: []string{"3", "4", "3"}, wantField: "ids[2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := deadletter.NewSelection(tt.ids, tt.filter)
			if tt.wantField == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			de, ok := domain.As(err)
			require.True(t, ok)
			assert.Equal(t, domain.KindInvalid, de.Kind)
			assert.Equal(t, tt.wantField, de.Field)
		})
	}
}

func TestResultCounts(t *testing.T) {
	t.Parallel()
	r := deadletter.Result{Entries: []deadletter.EntryResult{{ID: "1"}, {ID: "2", Err: deadletter.ErrNotFound}, {ID: "3"}}}
	assert.Equal(t, 2, r.Succeeded())
	assert.Equal(t, 1, r.Failed())
	assert.True(t, errors.Is(r.Entries[1].Err, deadletter.ErrNotFound))
}
