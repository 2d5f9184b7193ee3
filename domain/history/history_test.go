package history

import (
	"testing"
	"time"
)

func value(t *testing.T, p Point) float64 {
	t.Helper()
	if p.Value == nil {
		t.Fatalf("point at %s has no value", p.At)
	}
	return *p.Value
}

// TestDerive: each point is the difference of two consecutive samples; a target's latency is the mean over the
// events delivered in the step (none when none was); a series that appears counts from 0; a counter that went
// down (its connector made anew) counts from 0 again; filters select.
func TestDerive(t *testing.T) {
	t0 := time.Unix(1_000_000, 0).UTC()
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 10 * time.Second) }
	samples := []Sample{
		{At: at(0), Series: []Counters{{Bus: "b", In: 10, Matched: 4}, {Bus: "b", Rule: "r", Target: "t", In: 4, Delivered: 4, LatencyMicros: 8000}}},
		{At: at(1), Series: []Counters{{Bus: "b", In: 15, Matched: 6}, {Bus: "b", Rule: "r", Matched: 6},
			{Bus: "b", Rule: "r", Target: "t", In: 6, Delivered: 6, DeadLettered: 1, LatencyMicros: 14000}}},
		{At: at(2), Series: []Counters{{Bus: "b", In: 3, Matched: 1}, {Bus: "b", Rule: "r", Matched: 7},
			{Bus: "b", Rule: "r", Target: "t", In: 6, Delivered: 6, DeadLettered: 1, LatencyMicros: 14000}}},
	}
	got := map[string][]Point{}
	for _, s := range Derive(samples, Filter{}) {
		got[s.Bus+"/"+s.Rule+"/"+s.Target+":"+s.Metric] = s.Points
	}
	check := func(key string, want ...float64) {
		t.Helper()
		ps := got[key]
		if len(ps) != len(want) {
			t.Fatalf("%s: %d points, want %d", key, len(ps), len(want))
		}
		for i, w := range want {
			if v := value(t, ps[i]); v != w {
				t.Errorf("%s[%d] = %v, want %v", key, i, v, w)
			}
		}
	}
	check("b//:in", 5, 3) // 15-10; then the router was made anew: 3 from 0
	check("b//:matched", 2, 1)
	check("b/r/:matched", 6, 1) // appeared in the second sample: from 0
	check("b/r/t:delivered", 2, 0)
	check("b/r/t:deadLettered", 1, 0)
	lat := got["b/r/t:latencyMs"]
	if len(lat) != 2 || value(t, lat[0]) != 3 { // (14000-8000)/2 µs = 3 ms
		t.Errorf("latency: %v", lat)
	}
	if len(lat) == 2 && lat[1].Value != nil {
		t.Errorf("no latency in a step without deliveries: %v", *lat[1].Value)
	}
	if got["b//:in"][0].At != at(1) {
		t.Errorf("a point is at the end of its step")
	}
	if n := len(Derive(samples, Filter{Bus: "b", Rule: "r", Target: "t"})); n != 5 {
		t.Errorf("a target's filter keeps its five metrics (in, delivered, failed, deadLettered, latencyMs), not %d", n)
	}
	if len(Derive(samples, Filter{Bus: "other"})) != 0 {
		t.Error("another bus's filter keeps nothing")
	}
	if len(Derive(samples[:1], Filter{})) != 0 {
		t.Error("one sample has no difference")
	}
}

func TestNewFilter(t *testing.T) {
	for _, c := range []struct{ bus, rule, target string }{{"", "r", ""}, {"b", "", "t"}, {"b c", "", ""}, {"b", "r/s", ""}} {
		if _, err := NewFilter(c.bus, c.rule, c.target); err == nil {
			t.Errorf("%v: want an error", c)
		}
	}
	if _, err := NewFilter("b", "r", "t"); err != nil {
		t.Error(err)
	}
}
