package health_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/eventbridge-go/eventbridge/domain/health"
)

func TestJudge(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	failure := func(at time.Time, class string) *health.Failure {
		return &health.Failure{At: at, Attempt: 1, Class: class, Message: class + " failed"}
	}
	rules := health.Rules{FailingAttempts: 10, FailingAfter: 5 * time.Minute, DeadLetterWindow: 5 * time.Minute}
	running := func(f *health.Facts) health.Task { return health.Task{State: "RUNNING", Facts: f} }
	cases := []struct {
		name      string
		connector string
		tasks     []health.Task
		want      string
	}{
		{"not run by the runtime", "", nil, health.Pending},
		{"unassigned", "UNASSIGNED", nil, health.Pending},
		{"running without a task yet", "RUNNING", nil, health.Pending},
		{"running, nothing attempted", "RUNNING", []health.Task{running(&health.Facts{})}, health.Healthy},
		{"running, no facts reported", "RUNNING", []health.Task{running(nil)}, health.Healthy},
		{"last attempt succeeded", "RUNNING", []health.Task{running(&health.Facts{LastSuccessAt: ago(time.Second),
			LastFailure: failure(ago(time.Minute), "dns")})}, health.Healthy},
		{"first failure, retry scheduled", "RUNNING", []health.Task{running(&health.Facts{FailuresSinceSuccess: 1,
			FailingSince: ago(time.Second), RetryScheduled: true, LastFailure: failure(ago(time.Second), "dns")})}, health.Retrying},
		{"nine failures", "RUNNING", []health.Task{running(&health.Facts{FailuresSinceSuccess: 9, FailingSince: ago(time.Minute),
			RetryScheduled: true})}, health.Retrying},
		{"ten failures", "RUNNING", []health.Task{running(&health.Facts{FailuresSinceSuccess: 10, FailingSince: ago(time.Minute),
			RetryScheduled: true})}, health.Failing},
		{"failing for five minutes", "RUNNING", []health.Task{running(&health.Facts{FailuresSinceSuccess: 2,
			FailingSince: ago(5 * time.Minute), RetryScheduled: true})}, health.Failing},
		{"ten failures, nothing waiting", "RUNNING", []health.Task{running(&health.Facts{FailuresSinceSuccess: 10,
			FailingSince: ago(time.Hour)})}, health.Healthy},
		{"dead-lettered a minute ago", "RUNNING", []health.Task{running(&health.Facts{FailuresSinceSuccess: 1,
			FailingSince: ago(time.Minute), LastDeadLetteredAt: ago(time.Minute)})}, health.DeadLettering},
		{"dead-lettered, then succeeding", "RUNNING", []health.Task{running(&health.Facts{LastSuccessAt: ago(time.Second),
			LastDeadLetteredAt: ago(time.Minute)})}, health.DeadLettering},
		{"dead-lettered long ago", "RUNNING", []health.Task{running(&health.Facts{LastSuccessAt: ago(time.Second),
			LastDeadLetteredAt: ago(10 * time.Minute)})}, health.Healthy},
		{"failing beats dead-lettering", "RUNNING", []health.Task{running(&health.Facts{FailuresSinceSuccess: 20,
			FailingSince: ago(time.Minute), RetryScheduled: true, LastDeadLetteredAt: ago(time.Minute)})}, health.Failing},
		{"dead-lettering beats retrying", "RUNNING", []health.Task{running(&health.Facts{FailuresSinceSuccess: 1,
			FailingSince: ago(time.Second), RetryScheduled: true, LastDeadLetteredAt: ago(time.Minute)})}, health.DeadLettering},
		{"worst task wins", "RUNNING", []health.Task{running(&health.Facts{LastSuccessAt: ago(time.Second)}),
			running(&health.Facts{FailuresSinceSuccess: 1, FailingSince: ago(time.Second), RetryScheduled: true})}, health.Retrying},
		{"a failed task", "RUNNING", []health.Task{running(&health.Facts{}), {State: "FAILED"}}, health.Failed},
		{"a task not started", "RUNNING", []health.Task{running(&health.Facts{}), {State: "UNASSIGNED"}}, health.Pending},
		{"paused", "PAUSED", []health.Task{{State: "PAUSED"}}, health.Paused},
		{"stopped", "STOPPED", nil, health.Stopped},
		{"failed connector", "FAILED", nil, health.Failed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, c.want, health.Judge(c.connector, c.tasks, rules, now).State)
		})
	}
}

func TestJudgeKeepsTheLatestFailureAndSuccess(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	older := &health.Failure{At: now.Add(-time.Minute), Class: "dns", Message: "old"}
	newer := &health.Failure{At: now.Add(-time.Second), Class: "timeout", Message: "new"}
	v := health.Judge("RUNNING", []health.Task{
		{State: "RUNNING", Facts: &health.Facts{LastFailure: newer, LastSuccessAt: now.Add(-time.Hour), FailuresSinceSuccess: 1, RetryScheduled: true, FailingSince: newer.At}},
		{State: "RUNNING", Facts: &health.Facts{LastFailure: older, LastSuccessAt: now.Add(-2 * time.Second)}},
	}, health.Rules{}, now)
	assert.Equal(t, health.Retrying, v.State)
	assert.Equal(t, "new", v.LastFailure.Message)
	assert.Equal(t, now.Add(-2*time.Second), v.LastSuccessAt)
	assert.Equal(t, "new", v.LastError(""), "the last failure came after the last success")
	assert.Equal(t, "task failed", v.LastError("task failed"), "a task's own error wins")

	v = health.Judge("RUNNING", []health.Task{{State: "RUNNING", Facts: &health.Facts{LastFailure: older, LastSuccessAt: now}}}, health.Rules{}, now)
	assert.Equal(t, health.Healthy, v.State)
	assert.Empty(t, v.LastError(""), "no error once an attempt succeeded after the failure")
	assert.Equal(t, "old", v.LastFailure.Message, "the failure stays visible")
}

func TestRulesOrDefault(t *testing.T) {
	t.Parallel()
	assert.Equal(t, health.DefaultRules(), health.Rules{}.OrDefault())
	r := health.Rules{FailingAttempts: 3, FailingAfter: time.Minute, DeadLetterWindow: time.Hour}
	assert.Equal(t, r, r.OrDefault())
}

type pair struct{ a, b uint64 }

func (p pair) Add(q pair) pair { return pair{p.a + q.a, p.b + q.b} }

func TestSum(t *testing.T) {
	t.Parallel()
	assert.Nil(t, health.Sum[pair](nil))
	assert.Nil(t, health.Sum([]*pair{nil, nil}))
	one := &pair{1, 2}
	assert.Equal(t, &pair{1, 2}, health.Sum([]*pair{nil, one}))
	assert.Equal(t, &pair{4, 6}, health.Sum([]*pair{one, nil, {3, 4}}))
	assert.Equal(t, pair{1, 2}, *one, "the operands do not change")
	assert.Equal(t, health.Pending, health.Judge(health.Pending, nil, health.Rules{}, time.Now()).State)
}
