package throttle_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/eventbridge-go/eventbridge/adapter/throttle"
	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/account"
)

type accounts struct {
	mu     sync.Mutex
	limits map[string]int
	reads  int
}

func (a *accounts) Get(_ context.Context, id string) (*account.Account, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reads++
	n, ok := a.limits[id]
	if !ok {
		return nil, account.ErrNotFound
	}
	return account.UnmarshalFromDatabase(id, time.Time{}, account.Limits{PutEventsPerSecond: n}), nil
}

func (a *accounts) set(id string, n int) {
	a.mu.Lock()
	a.limits[id] = n
	a.mu.Unlock()
}

func TestThrottle(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	accs := &accounts{limits: map[string]int{"slow": 10, "other": 0}}
	th := &throttle.Throttle{Accounts: accs, Default: 100, Now: func() time.Time { return now }}
	ctx := context.Background()

	// One second's worth at once, then nothing until tokens come back; the wait is in the answer.
	if err := th.Admit(ctx, "slow", 10); err != nil {
		t.Fatalf("a burst of the rate: %v", err)
	}
	err := th.Admit(ctx, "slow", 1)
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindThrottled || de.Code != "PutEventsRateExceeded" ||
		de.RetryAfter <= 0 || de.RetryAfter > 100*time.Millisecond {
		t.Fatalf("over the rate: %v (%+v)", err, de)
	}
	// The other account, at the default rate, is not affected.
	if err := th.Admit(ctx, "other", 100); err != nil {
		t.Fatalf("another account: %v", err)
	}
	// A refused request took nothing: 100 ms later one event is admitted.
	now = now.Add(100 * time.Millisecond)
	if err := th.Admit(ctx, "slow", 1); err != nil {
		t.Fatalf("after the wait: %v", err)
	}
	// A batch larger than the burst takes the whole bucket, once it is full.
	now = now.Add(2 * time.Second)
	if err := th.Admit(ctx, "slow", 500); err != nil {
		t.Fatalf("a large batch on a full bucket: %v", err)
	}
	if err := th.Admit(ctx, "slow", 1); err == nil {
		t.Fatal("the large batch took nothing")
	}
	// A new limit is believed once the old one's lifetime is over; reads are cached meanwhile.
	reads := accs.reads
	accs.set("slow", 1000)
	now = now.Add(throttle.DefaultLimitsTTL + time.Second)
	if err := th.Admit(ctx, "slow", 1000); err != nil {
		t.Fatalf("at the new limit: %v", err)
	}
	if accs.reads > reads+1 {
		t.Errorf("%d reads of the limits for one admission", accs.reads-reads)
	}
	// An unknown account (or a database that does not answer) gets the default.
	if err := th.Admit(ctx, "unknown", 100); err != nil {
		t.Fatalf("default rate: %v", err)
	}
	if err := th.Admit(ctx, "unknown", 1); err == nil {
		t.Fatal("the default rate is not enforced")
	}
	if err := th.PurgeAccount(ctx, "slow"); err != nil {
		t.Fatal(err)
	}
}
