package delivery_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// TestTaskHealthFollowsAttempts: a task's health records the first failed attempt with its class, status and
// answer (without the connector's secret), counts the failures until a success, and clears them at the success.
func TestTaskHealthFollowsAttempts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.cfg.Retry.InitialDelay, f.cfg.Retry.MaxDelay = 100*time.Millisecond, 100*time.Millisecond
	sink := newSink()
	sink.FailFirst = 3
	sink.Err = connector.WithStatus(errors.New("http: POST https://api.example.com/?key=s3cr3t-k3y answered 503: busy, s3cr3t-k3y"),
		503, "busy, s3cr3t-k3y")
	cons, err := delivery.EnsureConsumer(context.Background(), f.env.JS, f.cfg, 15*time.Second)
	require.NoError(t, err)
	task, err := delivery.Start(context.Background(), delivery.TaskConfig{Consumer: cons, Sink: sink, Handler: f.cfg.Chain(sink),
		AckWait: 15 * time.Second, Redact: func(s string) string { return strings.ReplaceAll(s, "s3cr3t-k3y", "[hidden]") }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = task.Stop(context.Background()) })
	assert.Equal(t, delivery.Health{}, task.Health(), "nothing attempted yet")

	start := time.Now()
	f.env.Publish(t, "s.in", jetstreamtest.Event("flaky", "t", nil))
	require.Eventually(t, func() bool { return task.Health().FailuresSinceSuccess >= 1 }, wait, tick)
	h := task.Health()
	require.NotNil(t, h.LastFailure)
	assert.Equal(t, delivery.ClassHTTP5xx, h.LastFailure.Class)
	assert.Equal(t, 503, h.LastFailure.Status)
	assert.Equal(t, "busy, [hidden]", h.LastFailure.Response)
	assert.NotContains(t, h.LastFailure.Message, "s3cr3t")
	assert.True(t, h.RetryScheduled)
	assert.False(t, h.FailingSince.Before(start))
	assert.True(t, h.LastSuccessAt.IsZero())
	failingSince := h.FailingSince

	require.Eventually(t, func() bool { return task.Health().FailuresSinceSuccess == 3 }, wait, tick)
	h = task.Health()
	assert.Equal(t, failingSince, h.FailingSince, "failing since the first failure")
	assert.EqualValues(t, 3, h.LastFailure.Attempt)

	require.Eventually(t, func() bool { return !task.Health().LastSuccessAt.IsZero() }, wait, tick)
	h = task.Health()
	assert.Zero(t, h.FailuresSinceSuccess)
	assert.True(t, h.FailingSince.IsZero())
	assert.False(t, h.RetryScheduled)
	require.NotNil(t, h.LastFailure, "the last failure stays")
	assert.True(t, h.LastSuccessAt.After(h.LastFailure.At))
	assert.True(t, h.LastDeadLetteredAt.IsZero())
}

// TestTaskHealthRecordsGivingUp: a record given up without retries is a failure with no retry scheduled.
func TestTaskHealthRecordsGivingUp(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.cfg.Retry.MaxRetries = 0
	sink := newSink()
	sink.FailFirst = 100
	task := f.start(t, sink, 15*time.Second)
	f.env.Publish(t, "s.in", jetstreamtest.Event("doomed", "t", nil))
	require.Eventually(t, func() bool { return task.Counters().Dropped == 1 }, wait, tick)
	h := task.Health()
	assert.EqualValues(t, 1, h.FailuresSinceSuccess)
	assert.False(t, h.RetryScheduled)
	require.NotNil(t, h.LastFailure)
	assert.Equal(t, delivery.ClassOther, h.LastFailure.Class)
	assert.Contains(t, h.LastFailure.Message, "target unavailable")
}

func TestHealthEqual(t *testing.T) {
	t.Parallel()
	at := time.Now()
	a := delivery.Health{FailuresSinceSuccess: 1, LastFailure: &delivery.Failure{At: at, Class: "dns"}}
	b := delivery.Health{FailuresSinceSuccess: 1, LastFailure: &delivery.Failure{At: at, Class: "dns"}}
	assert.True(t, a.Equal(b), "equal facts behind different pointers")
	b.LastFailure.Class = "timeout"
	assert.False(t, a.Equal(b))
	assert.False(t, a.Equal(delivery.Health{FailuresSinceSuccess: 1}))
	assert.True(t, delivery.Health{}.Equal(delivery.Health{}))
}
