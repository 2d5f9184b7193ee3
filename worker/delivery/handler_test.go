package delivery_test

import (
	"context"
	"errors"
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
			ctx := connector.WithMeta(context.Background(), connector.Meta{NumDelivered: tt.attempt, Timestamp: tt.stored})
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
