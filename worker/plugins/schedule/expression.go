package schedule

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Expression is a parsed schedule expression, as Amazon EventBridge writes them: rate(5 minutes) or
// cron(Minutes Hours Day-of-month Month Day-of-week Year). Build one with Parse.
type Expression struct {
	raw    string
	period time.Duration // rate; 0 for a cron
	cron   *cronSpec
}

// Cron years, as Amazon EventBridge accepts them.
const (
	minYear = 1970
	maxYear = 2199
)

// maxRate bounds a rate's period so that the arithmetic of firings cannot overflow.
const maxRate = 36500 * 24 * time.Hour

// String returns the expression as it was written.
func (e Expression) String() string { return e.raw }

// Period returns a rate's period, or 0 for a cron.
func (e Expression) Period() time.Duration { return e.period }

// Parse parses a rate or cron expression. The error says what is wrong, starting with the expression.
func Parse(s string) (Expression, error) {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "rate(") && strings.HasSuffix(s, ")"):
		d, err := parseRate(strings.TrimSuffix(strings.TrimPrefix(s, "rate("), ")"))
		if err != nil {
			return Expression{}, fmt.Errorf("%s: %w", s, err)
		}
		return Expression{raw: s, period: d}, nil
	case strings.HasPrefix(s, "cron(") && strings.HasSuffix(s, ")"):
		c, err := parseCron(strings.TrimSuffix(strings.TrimPrefix(s, "cron("), ")"))
		if err != nil {
			return Expression{}, fmt.Errorf("%s: %w", s, err)
		}
		return Expression{raw: s, cron: c}, nil
	case s == "":
		return Expression{}, errors.New("is empty: write rate(value unit) or cron(fields)")
	}
	return Expression{}, fmt.Errorf("%q is neither rate(value unit), like rate(5 minutes), nor cron(fields), like cron(0 12 * * ? *)", s)
}

// parseRate reads "value unit": a positive integer and minute(s), hour(s) or day(s), singular iff the value is 1.
func parseRate(s string) (time.Duration, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, errors.New("a rate is a value and a unit, like rate(5 minutes)")
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || n <= 0 || strings.HasPrefix(f[0], "+") {
		return 0, fmt.Errorf("the value %q is not a positive integer", f[0])
	}
	var unit time.Duration
	var singular string
	switch f[1] {
	case "minute", "minutes":
		unit, singular = time.Minute, "minute"
	case "hour", "hours":
		unit, singular = time.Hour, "hour"
	case "day", "days":
		unit, singular = 24*time.Hour, "day"
	default:
		return 0, fmt.Errorf("the unit %q is not minute(s), hour(s) or day(s)", f[1])
	}
	switch {
	case n == 1 && f[1] != singular:
		return 0, fmt.Errorf("a value of 1 takes the singular unit: rate(1 %s)", singular)
	case n != 1 && f[1] == singular:
		return 0, fmt.Errorf("a value other than 1 takes the plural unit: rate(%d %ss)", n, singular)
	case n > int64(maxRate/unit):
		return 0, fmt.Errorf("the period must be at most %d %ss", int64(maxRate/unit), singular)
	}
	return time.Duration(n) * unit, nil
}

// Next returns the first firing strictly after after, and false when there is none (a cron past the year 2199).
// A rate fires at start + k×period, k ≥ 1; a cron fires at the wall-clock times it matches in loc (start is
// ignored): a time skipped by a daylight-saving change fires when the skipped hour ends, a time repeated by one
// fires once, the first time.
func (e Expression) Next(after, start time.Time, loc *time.Location) (time.Time, bool) {
	if e.cron != nil {
		return e.cron.next(after, loc)
	}
	if e.period <= 0 {
		return time.Time{}, false
	}
	if after.Before(start) {
		return start.Add(e.period), true
	}
	k := after.Sub(start)/e.period + 1
	return start.Add(k * e.period), true
}

// Last returns the last firing in (after, until], and false when there is none.
func (e Expression) Last(after, until, start time.Time, loc *time.Location) (time.Time, bool) {
	if e.cron == nil {
		if e.period <= 0 || !until.After(after) {
			return time.Time{}, false
		}
		if until.Before(start) {
			return time.Time{}, false
		}
		t := start.Add(until.Sub(start) / e.period * e.period)
		if !t.After(after) || !t.After(start) {
			return time.Time{}, false
		}
		return t, true
	}
	// Look back from until in growing windows first, so that catching up after a long time does not walk every
	// firing since after: the first window holding a firing holds the last one.
	for _, w := range []time.Duration{2 * time.Hour, 48 * time.Hour, 64 * 24 * time.Hour, 2 * 366 * 24 * time.Hour} {
		from := until.Add(-w)
		if !from.After(after) {
			break
		}
		if n, ok := e.cron.next(from, loc); ok && !n.After(until) {
			after = from
			break
		}
	}
	var last time.Time
	found := false
	for t := after; ; {
		n, ok := e.cron.next(t, loc)
		if !ok || n.After(until) {
			return last, found
		}
		last, found, t = n, true, n
	}
}

// Day-of-month and day-of-week modes beyond a plain set of values.
const (
	dayAny            = iota // ? : the other field decides
	daySet                   // a set of values (also *)
	dayLast                  // L or L-n in day-of-month; nL in day-of-week
	dayWeekday               // nW in day-of-month
	dayLastWeekday           // LW in day-of-month
	dayNth                   // n#k in day-of-week
	firstDOM, lastDOM = 1, 31
	firstDOW, lastDOW = 1, 7 // 1 = Sunday
)

// cronSpec is a parsed cron expression.
type cronSpec struct {
	minutes, hours, months, years set
	domMode, dowMode              int
	dom, dow                      set
	domN                          int // L-n offset, or nW day
	dowN, dowK                    int // nL and n#k: the weekday n, and k
}

// set holds the values of one field: set[v-lo] for v in [lo, hi].
type set struct {
	lo   int
	bits []bool
}

func (s set) has(v int) bool { return v >= s.lo && v-s.lo < len(s.bits) && s.bits[v-s.lo] }

// field describes one cron field.
type field struct {
	name   string
	lo, hi int
	names  []string // names[i] is the value lo+i (months, weekdays)
}

var (
	fMinutes = field{name: "minutes", lo: 0, hi: 59}
	fHours   = field{name: "hours", lo: 0, hi: 23}
	fDOM     = field{name: "day-of-month", lo: firstDOM, hi: lastDOM}
	fMonth   = field{name: "month", lo: 1, hi: 12,
		names: []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}}
	fDOW  = field{name: "day-of-week", lo: firstDOW, hi: lastDOW, names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}}
	fYear = field{name: "year", lo: minYear, hi: maxYear}
)

func parseCron(s string) (*cronSpec, error) {
	f := strings.Fields(s)
	if len(f) != 6 {
		return nil, fmt.Errorf("a cron expression has 6 fields (minutes hours day-of-month month day-of-week year), this one has %d", len(f))
	}
	c := &cronSpec{}
	var err error
	if c.minutes, err = fMinutes.parse(f[0]); err != nil {
		return nil, err
	}
	if c.hours, err = fHours.parse(f[1]); err != nil {
		return nil, err
	}
	if c.months, err = fMonth.parse(f[3]); err != nil {
		return nil, err
	}
	if c.years, err = fYear.parse(f[5]); err != nil {
		return nil, err
	}
	switch dom, dow := f[2], f[4]; {
	case dom == "?" && dow == "?":
		return nil, errors.New("day-of-month and day-of-week cannot both be ?; use ? in exactly one")
	case dom != "?" && dow != "?":
		return nil, errors.New("day-of-month and day-of-week cannot both be specified; use ? in one")
	}
	if err := c.parseDOM(f[2]); err != nil {
		return nil, err
	}
	if err := c.parseDOW(f[4]); err != nil {
		return nil, err
	}
	if _, ok := c.next(time.Date(minYear, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Minute), time.UTC); !ok {
		return nil, errors.New("never fires: no date matches it between 1970 and 2199")
	}
	return c, nil
}

func (c *cronSpec) parseDOM(v string) error {
	switch {
	case v == "?":
		c.domMode = dayAny
	case v == "L":
		c.domMode = dayLast
	case v == "LW":
		c.domMode = dayLastWeekday
	case strings.HasPrefix(v, "L-"):
		n, err := strconv.Atoi(v[2:])
		if err != nil || n < 0 || n > 30 {
			return fmt.Errorf("day-of-month: %q: L-n takes n from 0 to 30 days before the last day of the month", v)
		}
		c.domMode, c.domN = dayLast, n
	case strings.HasSuffix(v, "W"):
		n, err := strconv.Atoi(strings.TrimSuffix(v, "W"))
		if err != nil || n < firstDOM || n > lastDOM {
			return fmt.Errorf("day-of-month: %q: nW takes a single day n from 1 to 31 (the weekday nearest to it)", v)
		}
		c.domMode, c.domN = dayWeekday, n
	case strings.ContainsAny(v, "LW#"):
		return fmt.Errorf("day-of-month: %q: L and W stand alone (L, L-3, LW, 15W), not in lists or ranges; # belongs to day-of-week", v)
	default:
		s, err := fDOM.parse(v)
		if err != nil {
			return err
		}
		c.domMode, c.dom = daySet, s
	}
	return nil
}

func (c *cronSpec) parseDOW(v string) error {
	switch {
	case v == "?":
		c.dowMode = dayAny
	case v == "L":
		c.dowMode, c.dowN = dayLast, lastDOW // the last day of the week: Saturday
	case strings.HasSuffix(v, "L"):
		n, err := fDOW.value(strings.TrimSuffix(v, "L"))
		if err != nil {
			return fmt.Errorf("day-of-week: %q: nL takes a single day n (1-7 or SUN-SAT): the last such day of the month", v)
		}
		c.dowMode, c.dowN = dayLast, n
	case strings.Contains(v, "#"):
		a, b, _ := strings.Cut(v, "#")
		n, err := fDOW.value(a)
		if err != nil {
			return fmt.Errorf("day-of-week: %q: n#k takes a single day n (1-7 or SUN-SAT)", v)
		}
		k, err := strconv.Atoi(b)
		if err != nil || k < 1 || k > 5 {
			return fmt.Errorf("day-of-week: %q: n#k takes k from 1 to 5 (the k-th such day of the month)", v)
		}
		c.dowMode, c.dowN, c.dowK = dayNth, n, k
	case strings.ContainsAny(v, "LW"):
		return fmt.Errorf("day-of-week: %q: L stands alone (L, 6L), not in lists or ranges; W belongs to day-of-month", v)
	default:
		s, err := fDOW.parse(v)
		if err != nil {
			return err
		}
		c.dowMode, c.dow = daySet, s
	}
	return nil
}

// value reads one value of the field: a number, or a name where the field has names.
func (f field) value(v string) (int, error) {
	for i, n := range f.names {
		if strings.EqualFold(v, n) {
			return f.lo + i, nil
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || strings.HasPrefix(v, "+") || strings.HasPrefix(v, "-") {
		if len(f.names) > 0 {
			return 0, fmt.Errorf("%s: %q is not a number from %d to %d or a name %s-%s", f.name, v, f.lo, f.hi,
				f.names[0], f.names[len(f.names)-1])
		}
		return 0, fmt.Errorf("%s: %q is not a number from %d to %d", f.name, v, f.lo, f.hi)
	}
	if n < f.lo || n > f.hi {
		return 0, fmt.Errorf("%s: %d is out of range %d-%d", f.name, n, f.lo, f.hi)
	}
	return n, nil
}

// parse reads a list of elements: *, */n, a, a-b, a/n, a-b/n.
func (f field) parse(v string) (set, error) {
	s := set{lo: f.lo, bits: make([]bool, f.hi-f.lo+1)}
	if v == "?" {
		return s, fmt.Errorf("%s: ? is only allowed in day-of-month or day-of-week", f.name)
	}
	for _, el := range strings.Split(v, ",") {
		if el == "" {
			return s, fmt.Errorf("%s: %q has an empty list element", f.name, v)
		}
		rng, stepStr, hasStep := strings.Cut(el, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepStr)
			if err != nil || n < 1 {
				return s, fmt.Errorf("%s: %q: the increment after / must be a positive integer", f.name, el)
			}
			step = n
		}
		lo, hi := f.lo, f.hi
		switch {
		case rng == "*":
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			var err error
			if lo, err = f.value(a); err != nil {
				return s, err
			}
			if hi, err = f.value(b); err != nil {
				return s, err
			}
			if lo > hi {
				return s, fmt.Errorf("%s: the range %q starts after it ends", f.name, rng)
			}
		default:
			n, err := f.value(rng)
			if err != nil {
				return s, err
			}
			lo = n
			if !hasStep {
				hi = n
			}
		}
		for x := lo; x <= hi; x += step {
			s.bits[x-f.lo] = true
		}
	}
	return s, nil
}

// matchDay reports whether the date matches the day-of-month and day-of-week fields.
func (c *cronSpec) matchDay(y int, m time.Month, d int) bool {
	last := daysIn(y, m)
	switch c.domMode {
	case daySet:
		return c.dom.has(d)
	case dayLast:
		return d == last-c.domN
	case dayLastWeekday:
		return d == nearestWeekday(y, m, last)
	case dayWeekday:
		return c.domN <= last && d == nearestWeekday(y, m, c.domN)
	}
	wd := int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Weekday()) + 1 // 1 = Sunday
	switch c.dowMode {
	case daySet:
		return c.dow.has(wd)
	case dayLast:
		return wd == c.dowN && d+7 > last
	case dayNth:
		return wd == c.dowN && (d-1)/7+1 == c.dowK
	}
	return false
}

// nearestWeekday returns the weekday (Monday to Friday) nearest to day d of the month, within the month.
func nearestWeekday(y int, m time.Month, d int) int {
	last := daysIn(y, m)
	switch time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Weekday() {
	case time.Saturday:
		if d == 1 {
			return 3 // Monday: Friday would be in the previous month
		}
		return d - 1
	case time.Sunday:
		if d == last {
			return d - 2 // Friday: Monday would be in the next month
		}
		return d + 1
	}
	return d
}

func daysIn(y int, m time.Month) int { return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day() }

// next returns the first firing strictly after after, in loc's wall clock.
func (c *cronSpec) next(after time.Time, loc *time.Location) (time.Time, bool) {
	w := after.In(loc)
	// Every wall time before w's minute resolves to an instant at or before after (resolve is monotonic and picks
	// the earliest instant of a wall time), so the search starts at w's minute.
	sy, sm, sd := w.Date()
	sh, smin := w.Hour(), w.Minute()
	for y := max(sy, minYear); y <= maxYear; y++ {
		if !c.years.has(y) {
			continue
		}
		for m := time.January; m <= time.December; m++ {
			if !c.months.has(int(m)) || (y == sy && m < sm) {
				continue
			}
			for d := 1; d <= daysIn(y, m); d++ {
				if (y == sy && m == sm && d < sd) || !c.matchDay(y, m, d) {
					continue
				}
				today := y == sy && m == sm && d == sd
				for h := 0; h < 24; h++ {
					if !c.hours.has(h) || (today && h < sh) {
						continue
					}
					for mi := 0; mi < 60; mi++ {
						if !c.minutes.has(mi) || (today && h == sh && mi < smin) {
							continue
						}
						if t := resolve(loc, y, m, d, h, mi); t.After(after) {
							return t, true
						}
					}
				}
			}
		}
	}
	return time.Time{}, false
}

// resolve returns the instant of a wall-clock time of loc: the earliest one when the time occurs twice (the clock
// went back), and the end of the gap when it does not occur (the clock went forward over it).
func resolve(loc *time.Location, y int, m time.Month, d, h, mi int) time.Time {
	wall := time.Date(y, m, d, h, mi, 0, 0, time.UTC)
	t := time.Date(y, m, d, h, mi, 0, 0, loc)
	if sameWall(t, wall) {
		if start, _ := t.ZoneBounds(); !start.IsZero() {
			_, prev := start.Add(-time.Second).Zone()
			if u := wall.Add(-time.Duration(prev) * time.Second); u.Before(start) && sameWall(u.In(loc), wall) {
				return u
			}
		}
		return t
	}
	// In a gap: read the wall time with the offset in force before the change; that instant is after the change,
	// in the zone that begins at the gap's end.
	_, before := t.Add(-12 * time.Hour).Zone()
	u := wall.Add(-time.Duration(before) * time.Second)
	if start, _ := u.In(loc).ZoneBounds(); !start.IsZero() && !start.After(u) {
		return start
	}
	return t
}

func sameWall(t, wall time.Time) bool {
	y, m, d := t.Date()
	wy, wm, wd := wall.Date()
	return y == wy && m == wm && d == wd && t.Hour() == wall.Hour() && t.Minute() == wall.Minute()
}
