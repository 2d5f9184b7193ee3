package inspect

import (
	"errors"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain"
)

func TestTailsBoundEachAccount(t *testing.T) {
	tails := NewTails(2)
	r1, err := tails.acquire("a")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := tails.acquire("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tails.acquire("a"); !errors.Is(err, ErrTooManyTails) {
		t.Fatalf("the third tail of a: want ErrTooManyTails, got %v", err)
	}
	if _, err := tails.acquire("b"); err != nil {
		t.Fatalf("b has its own tails: %v", err)
	}
	r1()
	r1() // twice is once
	if _, err := tails.acquire("a"); err != nil {
		t.Fatalf("a released one: %v", err)
	}
	if _, err := tails.acquire("a"); !errors.Is(err, ErrTooManyTails) {
		t.Fatalf("a released one only: want ErrTooManyTails, got %v", err)
	}
	r2()
}

func TestLimiterAllowsRatePerSecond(t *testing.T) {
	l := newLimiter(3)
	t0 := time.Unix(1000, 0)
	got := 0
	for i := range 10 {
		if l.allow(t0.Add(time.Duration(i) * time.Millisecond)) {
			got++
		}
	}
	if got != 3 {
		t.Fatalf("allowed %d in a second, want 3", got)
	}
	if !l.allow(t0.Add(time.Second)) {
		t.Fatal("a new second allows again")
	}
}

func TestFilter(t *testing.T) {
	at := time.Unix(2000, 0)
	ev := event.New()
	ev.SetID("1")
	ev.SetSource("shop")
	ev.SetType("order.created")
	ev.SetSubject("vip")
	if err := ev.SetData("application/json", []byte(`{"amount":500}`)); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		from, to             time.Time
		typ, source, subject string
		pattern              string
		want                 bool
	}{
		"all":           {want: true},
		"type":          {typ: "order.created", want: true},
		"other type":    {typ: "order.paid"},
		"source":        {source: "shop", want: true},
		"other source":  {source: "crm"},
		"subject":       {subject: "vip", want: true},
		"other subject": {subject: "x"},
		"after from":    {from: at.Add(-time.Second), want: true},
		"before from":   {from: at.Add(time.Second)},
		"before to":     {to: at, want: true},
		"after to":      {to: at.Add(-time.Second)},
		"pattern":       {pattern: `{"data":{"amount":[{"numeric":[">",100]}]}}`, want: true},
		"pattern no":    {pattern: `{"data":{"amount":[{"numeric":["<",100]}]}}`},
	} {
		var p []byte
		if c.pattern != "" {
			p = []byte(c.pattern)
		}
		f, err := NewFilter(c.from, c.to, c.typ, c.source, c.subject, "", p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := f.Matches(at, &ev); got != c.want {
			t.Errorf("%s: Matches = %v, want %v", name, got, c.want)
		}
	}
	if _, err := NewFilter(at, at.Add(-time.Second), "", "", "", "", nil); !errors.Is(err, domain.ErrValidation) {
		t.Errorf("from after to: want a validation error, got %v", err)
	}
	if _, err := NewFilter(time.Time{}, time.Time{}, "", "", "", "", []byte(`{"a":1}`)); err == nil {
		t.Error("a pattern that is not one is refused")
	}
}
