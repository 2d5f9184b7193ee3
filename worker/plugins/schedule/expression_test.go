package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Expressions as the Amazon EventBridge documentation writes them parse; the rest are refused with a message that
// names the expression and says what is wrong.
func TestParse(t *testing.T) {
	t.Parallel()
	valid := []string{
		"rate(1 minute)", "rate(5 minutes)", "rate(1 hour)", "rate(2 hours)", "rate(1 day)", "rate(7 days)",
		"cron(0 10 * * ? *)", "cron(15 12 * * ? *)", "cron(0 18 ? * MON-FRI *)", "cron(0 8 1 * ? *)",
		"cron(0/15 * * * ? *)", "cron(0/10 * ? * MON-FRI *)", "cron(0/5 8-17 ? * MON-FRI *)",
		"cron(0 9 ? * 2#1 *)", "cron(30 0 1 1,6,12 ? 2026)", "cron(0 0 L * ? *)", "cron(0 0 L-2 * ? *)",
		"cron(0 0 15W * ? *)", "cron(0 0 LW * ? *)", "cron(0 0 ? * 6L *)", "cron(0 0 ? * L *)",
		"cron(0 12 ? JAN-MAR SUN,SAT 2026-2030)", "cron(*/5 */2 1-15/2 */3 ? 1970/10)", "cron(0 0 ? * 1-7 *)",
		"cron(0 0 29 2 ? *)", "cron(0 12 * * ? 2199)", "  rate(5 minutes)  ",
	}
	for _, s := range valid {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			e, err := Parse(s)
			require.NoError(t, err)
			assert.Equal(t, strings.TrimSpace(s), e.String())
		})
	}
	invalid := map[string]string{
		"":                            "is empty",
		"every 5 minutes":             "is neither rate",
		"rate(1 minutes)":             "a value of 1 takes the singular unit: rate(1 minute)",
		"rate(5 minute)":              "a value other than 1 takes the plural unit: rate(5 minutes)",
		"rate(2 day)":                 "rate(2 days)",
		"rate(0 minutes)":             `the value "0" is not a positive integer`,
		"rate(-1 minutes)":            "not a positive integer",
		"rate(1.5 hours)":             "not a positive integer",
		"rate(5 seconds)":             `the unit "seconds" is not minute(s), hour(s) or day(s)`,
		"rate(5)":                     "a rate is a value and a unit",
		"rate(100000000 days)":        "the period must be at most",
		"cron(0 12 * * * *)":          "cron(0 12 * * * *): day-of-month and day-of-week cannot both be specified; use ? in one",
		"cron(0 12 1 * MON *)":        "cannot both be specified",
		"cron(0 12 ? * ? *)":          "cannot both be ?",
		"cron(0 12 * * ?)":            "has 6 fields",
		"cron(0 12 * * ? * *)":        "this one has 7",
		"cron(60 12 * * ? *)":         "minutes: 60 is out of range 0-59",
		"cron(0 24 * * ? *)":          "hours: 24 is out of range 0-23",
		"cron(0 0 32 * ? *)":          "day-of-month: 32 is out of range 1-31",
		"cron(0 0 0 * ? *)":           "day-of-month: 0 is out of range",
		"cron(0 0 ? * 8 *)":           "day-of-week: 8 is out of range 1-7",
		"cron(0 0 ? * 0 *)":           "day-of-week: 0 is out of range 1-7",
		"cron(0 0 * 13 ? *)":          "month: 13 is out of range 1-12",
		"cron(0 0 * FOO ? *)":         `month: "FOO" is not a number from 1 to 12 or a name JAN-DEC`,
		"cron(0 0 ? * FUN *)":         "SUN-SAT",
		"cron(0 0 * * ? 1969)":        "year: 1969 is out of range 1970-2199",
		"cron(0 0 * * ? 2200)":        "year: 2200 is out of range",
		"cron(0 0 ? * 2#6 *)":         "n#k takes k from 1 to 5",
		"cron(0 0 ? * 9#1 *)":         "n#k takes a single day",
		"cron(0 0 1W,15 * ? *)":       "L and W stand alone",
		"cron(0 0 32W * ? *)":         "nW takes a single day",
		"cron(0 0 ? * 2-4L *)":        "nL takes a single day",
		"cron(0 0 ? * MON#1,FRI *)":   "n#k takes k from 1 to 5",
		"cron(0 0 30 2 ? *)":          "never fires",
		"cron(5-1 0 * * ? *)":         `minutes: the range "5-1" starts after it ends`,
		"cron(*/0 * * * ? *)":         "the increment after / must be a positive integer",
		"cron(1,,2 * * * ? *)":        "empty list element",
		"cron(? * * * ? *)":           "? is only allowed in day-of-month or day-of-week",
		"cron(0 0 ? * 2W *)":          "W belongs to day-of-month",
		"cron(0 0 1#2 * ? *)":         "# belongs to day-of-week",
		"cron(0 0 L-31 * ? *)":        "L-n takes n from 0 to 30",
		"cron(0 0 * * ? 2026-2025)":   "starts after it ends",
		"cron(0 0 * * ? 2019 extra)":  "has 6 fields",
		"CRON(0 0 * * ? *)":           "is neither rate",
		"cron(0 0 * * ? *":            "is neither rate",
		"cron(+1 0 * * ? *)":          "minutes",
		"cron(0 0 ? * MON-FRI/x *)":   "increment",
		"cron(0 0 ? * MON-SUN *)":     "starts after it ends",
		"rate(01 minute) trailing x)": "a rate is a value and a unit",
	}
	for s, want := range invalid {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(s)
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
		})
	}
}

// Next and Last compute the firings of an expression, in its time zone, across daylight-saving changes.
func TestNext(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	cases := []struct {
		name, expr string
		loc        *time.Location
		start      string // a rate's start
		after      string
		want       []string // the next firings, in UTC; fewer than asked means the schedule ends
		n          int
	}{
		{name: "daily at 02:30 in Berlin over the spring change: the skipped 02:30 fires when the gap ends",
			expr: "cron(30 2 * * ? *)", loc: berlin, after: "2026-03-27T12:00:00Z",
			want: []string{"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
		{name: "daily at 02:30 in Berlin over the autumn change: the repeated 02:30 fires once, the first time",
			expr: "cron(30 2 * * ? *)", loc: berlin, after: "2026-10-24T12:00:00Z",
			want: []string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		{name: "every 30 minutes in Berlin over the autumn change: the repeated hour does not fire again",
			expr: "cron(0/30 * * * ? *)", loc: berlin, after: "2026-10-24T23:45:00Z",
			want: []string{"2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T02:00:00Z", "2026-10-25T02:30:00Z"}},
		{name: "every 30 minutes in Berlin over the spring change: the gap's times fire once, when it ends",
			expr: "cron(0/30 * * * ? *)", loc: berlin, after: "2026-03-29T00:45:00Z",
			want: []string{"2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z", "2026-03-29T02:00:00Z"}},
		{name: "starting inside the repeated hour, on its second pass",
			expr: "cron(0/30 * * * ? *)", loc: berlin, after: "2026-10-25T01:10:00Z",
			want: []string{"2026-10-25T02:00:00Z"}},
		{name: "noon in Berlin moves in UTC with the change", expr: "cron(0 12 * * ? *)", loc: berlin,
			after: "2026-03-28T00:00:00Z", want: []string{"2026-03-28T11:00:00Z", "2026-03-29T10:00:00Z"}},
		{name: "noon in New York", expr: "cron(0 12 * * ? *)", loc: ny,
			after: "2026-03-07T00:00:00Z", want: []string{"2026-03-07T17:00:00Z", "2026-03-08T16:00:00Z"}},
		{name: "last day of the month, leap year", expr: "cron(0 0 L * ? *)", loc: time.UTC, after: "2028-01-15T00:00:00Z",
			want: []string{"2028-01-31T00:00:00Z", "2028-02-29T00:00:00Z", "2028-03-31T00:00:00Z"}},
		{name: "two days before the last day", expr: "cron(0 0 L-2 * ? *)", loc: time.UTC, after: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-29T00:00:00Z", "2026-02-26T00:00:00Z"}},
		{name: "weekday nearest the 15th", expr: "cron(0 0 15W * ? *)", loc: time.UTC, after: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-15T00:00:00Z", "2026-02-16T00:00:00Z", "2026-03-16T00:00:00Z"}},
		{name: "weekday nearest the 1st stays in the month", expr: "cron(0 0 1W * ? *)", loc: time.UTC,
			after: "2026-07-15T00:00:00Z", want: []string{"2026-08-03T00:00:00Z"}},
		{name: "last weekday of the month", expr: "cron(0 0 LW * ? *)", loc: time.UTC, after: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z"}},
		{name: "last Friday of the month", expr: "cron(0 0 ? * 6L *)", loc: time.UTC, after: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z"}},
		{name: "first Monday", expr: "cron(0 9 ? * 2#1 *)", loc: time.UTC, after: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-05T09:00:00Z", "2026-02-02T09:00:00Z"}},
		{name: "fifth Friday, only in months that have one", expr: "cron(0 0 ? * FRI#5 *)", loc: time.UTC,
			after: "2026-01-01T00:00:00Z", want: []string{"2026-01-30T00:00:00Z", "2026-05-29T00:00:00Z"}},
		{name: "weekdays at 18:00 skip the weekend", expr: "cron(0 18 ? * MON-FRI *)", loc: time.UTC,
			after: "2026-01-02T19:00:00Z", want: []string{"2026-01-05T18:00:00Z", "2026-01-06T18:00:00Z"}},
		{name: "every 15 minutes, strictly after", expr: "cron(0/15 * * * ? *)", loc: time.UTC,
			after: "2026-01-01T00:15:00Z", want: []string{"2026-01-01T00:30:00Z", "2026-01-01T00:45:00Z", "2026-01-01T01:00:00Z"}},
		{name: "a year ends the schedule", expr: "cron(0 0 1 1 ? 2027)", loc: time.UTC, after: "2026-06-01T00:00:00Z",
			want: []string{"2027-01-01T00:00:00Z"}, n: 3},
		{name: "rate counts from its start", expr: "rate(5 minutes)", loc: berlin, start: "2026-01-01T00:00:00Z",
			after: "2026-01-01T00:07:00Z", want: []string{"2026-01-01T00:10:00Z", "2026-01-01T00:15:00Z"}},
		{name: "rate before its start fires one period after it", expr: "rate(1 hour)", loc: time.UTC,
			start: "2026-01-01T00:00:00Z", after: "2025-12-01T00:00:00Z", want: []string{"2026-01-01T01:00:00Z"}},
		{name: "rate(1 day) is 24 hours, whatever the time zone's changes", expr: "rate(1 day)", loc: berlin,
			start: "2026-03-28T12:00:00Z", after: "2026-03-28T12:00:00Z", want: []string{"2026-03-29T12:00:00Z", "2026-03-30T12:00:00Z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, err := Parse(c.expr)
			require.NoError(t, err)
			var start time.Time
			if c.start != "" {
				start = utc(c.start)
			}
			n := max(c.n, len(c.want))
			var got []string
			after := utc(c.after)
			for range n {
				next, ok := e.Next(after, start, c.loc)
				if !ok {
					break
				}
				got = append(got, next.UTC().Format(time.RFC3339))
				after = next
			}
			assert.Equal(t, c.want, got)
			if len(c.want) > 0 {
				last, ok := e.Last(utc(c.after), utc(c.want[len(c.want)-1]).Add(time.Second), start, c.loc)
				require.True(t, ok)
				assert.Equal(t, c.want[len(c.want)-1], last.UTC().Format(time.RFC3339), "Last finds the latest firing")
				_, ok = e.Last(utc(c.after), utc(c.want[0]).Add(-time.Second), start, c.loc)
				assert.False(t, ok, "no firing before the first")
			}
		})
	}
}

// Parse never panics, and an expression it accepts has a next firing from 1970 on.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"rate(5 minutes)", "cron(0 12 * * ? *)", "cron(0/5 8-17 ? * MON-FRI *)",
		"cron(0 0 L-2 * ? *)", "cron(0 0 ? * 6#3 2026-2030)", "cron(0 0 15W * ? *)", "rate(1 day)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			if !strings.Contains(err.Error(), " ") {
				t.Fatalf("error without a message: %v", err)
			}
			return
		}
		next, ok := e.Next(time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.UTC)
		if !ok && e.Period() > 0 {
			t.Fatalf("%s: a rate always has a next firing", s)
		}
		if ok && !next.After(time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("%s: next %v is not after its start", s, next)
		}
	})
}

// Last finds the last firing of a long stretch without walking it from the start, and the same one it would
// find by walking.
func TestLastAfterALongTime(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ expr, after, until, want string }{
		{"cron(* * * * ? *)", "2000-01-01T00:00:00Z", "2026-06-01T12:34:56Z", "2026-06-01T12:34:00Z"},
		{"cron(0 0 1 1 ? *)", "2000-01-01T00:00:00Z", "2026-06-01T12:34:56Z", "2026-01-01T00:00:00Z"},
		{"cron(0 0 1 1 ? 2001)", "2000-01-01T00:00:00Z", "2026-06-01T12:34:56Z", "2001-01-01T00:00:00Z"},
		{"cron(0/5 * ? * MON-FRI *)", "2026-05-01T00:00:00Z", "2026-05-31T12:00:00Z", "2026-05-29T23:55:00Z"},
	} {
		e, err := Parse(c.expr)
		require.NoError(t, err)
		got, ok := e.Last(utc(c.after), utc(c.until), time.Time{}, time.UTC)
		require.True(t, ok, c.expr)
		assert.Equal(t, c.want, got.UTC().Format(time.RFC3339), c.expr)
	}
}
