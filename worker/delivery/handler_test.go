package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
)

func TestRetryPolicyAllows(t *testing.T) {
	t.Parallel()
	p := delivery.RetryPolicy{MaxRetries: 2, MaxAge: time.Hour}
	tests := []struct {
		name    string
		policy  delivery.RetryPolicy
		attempt uint64
		age     time.Duration
		want    bool
	}{
		{"first failure", p, 1, 0, true},
		{"second failure", p, 2, 0, true},
		{"third failure: two retries done", p, 3, 0, false},
		{"too old", p, 1, 2 * time.Hour, false},
		{"no retries", delivery.RetryPolicy{MaxRetries: 0, MaxAge: -1}, 1, 0, false},
		{"unbounded age", delivery.RetryPolicy{MaxRetries: 5, MaxAge: -1}, 1, 1000 * time.Hour, true},
		{"zero age disables", delivery.RetryPolicy{MaxRetries: 5, MaxAge: 0}, 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.policy.Allows(tt.attempt, tt.age))
		})
	}
}

func TestRetryPolicyDelay(t *testing.T) {
	t.Parallel()
	p := delivery.RetryPolicy{InitialDelay: time.Second, MaxDelay: 60 * time.Second}
	tests := []struct {
		attempt uint64
		base    time.Duration
	}{
		{1, time.Second},
		{2, 2 * time.Second},
		{3, 4 * time.Second},
		{6, 32 * time.Second},
		{7, 60 * time.Second},
		{185, 60 * time.Second},
	}
	for _, tt := range tests {
		for range 50 {
			d := p.Delay(tt.attempt)
			assert.GreaterOrEqual(t, d, tt.base*8/10, "attempt %d", tt.attempt)
			assert.LessOrEqual(t, d, tt.base*12/10, "attempt %d", tt.attempt)
		}
	}
}

type errSink struct{ err error }

func (s errSink) Connect(context.Context) error             { return nil }
func (s errSink) Write(context.Context, *event.Event) error { return s.err }
func (s errSink) Close() error                              { return nil }

func TestMiddleware(t *testing.T) {
	t.Parallel()
	retryable := errors.New("503")
	permanent := connector.Permanent(errors.New("400"))
	policy := delivery.RetryPolicy{MaxRetries: 2, MaxAge: time.Hour, InitialDelay: time.Second, MaxDelay: time.Minute}
	fresh := time.Now()
	tests := []struct {
		name      string
		err       error
		tolerance string
		attempt   uint64
		stored    time.Time
		want      delivery.Action
	}{
		{"accepted", nil, connector.ToleranceAll, 1, fresh, delivery.Ack},
		{"retryable", retryable, connector.ToleranceAll, 1, fresh, delivery.Retry},
		{"retries exhausted, dropped", retryable, connector.ToleranceAll, 3, fresh, delivery.Drop},
		{"retries exhausted, failed", retryable, connector.ToleranceNone, 3, fresh, delivery.Fail},
		{"too old", retryable, connector.ToleranceAll, 1, fresh.Add(-2 * time.Hour), delivery.Drop},
		{"permanent, dropped at once", permanent, connector.ToleranceAll, 1, fresh, delivery.Drop},
		{"permanent, failed at once", permanent, connector.ToleranceNone, 1, fresh, delivery.Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := delivery.Config{Retry: policy, Tolerance: tt.tolerance}
			h := cfg.Chain(errSink{err: tt.err})
			ctx := connector.WithMeta(context.Background(), connector.Meta{Attempt: tt.attempt, Timestamp: tt.stored})
			o := h(ctx, nil)
			require.Equal(t, tt.want, o.Action, "%v", o.Err)
			assert.Equal(t, tt.attempt, o.Attempts)
			if tt.err != nil {
				assert.ErrorIs(t, o.Err, tt.err)
			}
			if o.Action == delivery.Retry {
				assert.InDelta(t, float64(time.Second), float64(o.Delay), float64(200*time.Millisecond))
			}
		})
	}
}

// fnTransform is a transform made of a function.
type fnTransform func(e *event.Event) ([]*event.Event, error)

func (f fnTransform) Apply(_ context.Context, e *event.Event) ([]*event.Event, error) { return f(e) }

func withData(data string) fnTransform {
	return func(e *event.Event) ([]*event.Event, error) {
		c := e.Clone()
		c.DataEncoded = []byte(data)
		return []*event.Event{&c}, nil
	}
}

// writtenSink records what it is given and answers the errors of errs in turn (nil once they are used up).
type writtenSink struct {
	errs    []error
	written []string
	forms   []string // the JSON form of each record written (connector.Meta.JSON)
}

func (s *writtenSink) Connect(context.Context) error { return nil }
func (s *writtenSink) Close() error                  { return nil }
func (s *writtenSink) Write(ctx context.Context, e *event.Event) error {
	s.written = append(s.written, e.ID()+":"+string(e.Data()))
	m, _ := connector.MetaFrom(ctx)
	s.forms = append(s.forms, string(m.JSON))
	if len(s.errs) == 0 {
		return nil
	}
	err := s.errs[0]
	s.errs = s.errs[1:]
	return err
}

func TestTransformMiddleware(t *testing.T) {
	t.Parallel()
	refused := errors.New("no JSON form")
	split := fnTransform(func(e *event.Event) ([]*event.Event, error) {
		a, b := e.Clone(), e.Clone()
		a.SetID(e.ID() + "-a")
		b.SetID(e.ID() + "-b")
		return []*event.Event{&a, &b}, nil
	})
	drop := fnTransform(func(*event.Event) ([]*event.Event, error) { return nil, nil })
	fail := fnTransform(func(*event.Event) ([]*event.Event, error) { return nil, refused })
	policy := delivery.RetryPolicy{MaxRetries: 2, MaxAge: time.Hour, InitialDelay: time.Second, MaxDelay: time.Minute}
	named := func(ts ...connector.Transform) []connector.NamedTransform {
		out := make([]connector.NamedTransform, len(ts))
		for i, tr := range ts {
			out[i] = connector.NamedTransform{Name: fmt.Sprintf("t%d", i), Transform: tr}
		}
		return out
	}
	tests := []struct {
		name        string
		ts          []connector.NamedTransform
		sinkErrs    []error
		tolerance   string
		want        delivery.Action
		wantWritten []string
		refused     bool // a transform refused the record
	}{
		{"no transforms", nil, nil, connector.ToleranceAll, delivery.Ack, []string{"e1:in"}, false},
		{"data replaced", named(withData("out")), nil, connector.ToleranceAll, delivery.Ack, []string{"e1:out"}, false},
		{"applied in order", named(withData("one"), withData("two")), nil, connector.ToleranceAll, delivery.Ack, []string{"e1:two"}, false},
		{"one record made into two", named(split, withData("x")), nil, connector.ToleranceAll, delivery.Ack, []string{"e1-a:x", "e1-b:x"}, false},
		{"filtered", named(drop), nil, connector.ToleranceAll, delivery.Filtered, nil, false},
		{"filtered after a split", named(split, drop), nil, connector.ToleranceAll, delivery.Filtered, nil, false},
		{"refused, dropped", named(withData("x"), fail), nil, connector.ToleranceAll, delivery.Drop, nil, true},
		{"refused, failed", named(fail), nil, connector.ToleranceNone, delivery.Fail, nil, true},
		{"sink retry after a split", named(split), []error{nil, errors.New("503")}, connector.ToleranceAll, delivery.Retry, []string{"e1-a:in", "e1-b:in"}, false},
		{"sink refuses the first of a split", named(split), []error{connector.Permanent(errors.New("400"))}, connector.ToleranceAll, delivery.Drop, []string{"e1-a:in"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sink := &writtenSink{errs: tt.sinkErrs}
			h := delivery.Config{Retry: policy, Tolerance: tt.tolerance}.Chain(sink, tt.ts...)
			e := event.New()
			e.SetID("e1")
			e.SetSource("s")
			e.SetType("t")
			e.DataEncoded = []byte("in")
			form := `{"specversion":"1.0","id":"e1","source":"s","type":"t","data":"in"}`
			ctx := connector.WithMeta(context.Background(), connector.Meta{Attempt: 1, Timestamp: time.Now(), JSON: []byte(form)})
			o := h(ctx, &e)
			require.Equal(t, tt.want, o.Action, "%v", o.Err)
			assert.Equal(t, tt.wantWritten, sink.written)
			for _, got := range sink.forms { // the form read is not the form of what the transforms made
				assert.Equal(t, map[bool]string{true: form}[tt.ts == nil], got)
			}
			assert.Equal(t, "in", string(e.Data()), "the record itself is not modified")
			assert.Equal(t, uint64(1), o.Attempts)
			if tt.refused {
				var te *delivery.TransformError
				require.ErrorAs(t, o.Err, &te)
				assert.True(t, delivery.IsTransformError(o.Err))
				assert.ErrorIs(t, o.Err, refused)
				assert.True(t, connector.IsPermanent(o.Err), "a transform error is permanent")
				assert.Contains(t, o.Err.Error(), "transform t")
			} else {
				assert.False(t, delivery.IsTransformError(o.Err))
			}
		})
	}
}
