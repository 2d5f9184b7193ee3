package persistence_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/domain/transform"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
)

// repos are the repositories of one database. Cases share it: each works in an account of its own, so cases
// never see each other's buses (except through ListAll, which they check for inclusion only).
type repos struct {
	db       *persistence.DB
	accounts *persistence.AccountRepository
	buses    *persistence.BusRepository
	rules    *persistence.RuleRepository
	targets  *persistence.TargetRepository
}

// repositoryCases run against every dialect.
var repositoryCases = []struct {
	name string
	run  func(t *testing.T, r repos)
}{
	{"account Ensure is idempotent and concurrency-safe", testAccountEnsure},
	{"account Get of an unknown account", testAccountNotFound},
	{"bus create and get", testBusCreateGet},
	{"bus names are unique per account and case-sensitive", testBusNames},
	{"bus not found", testBusNotFound},
	{"bus list pages by name", testBusListPaging},
	{"bus ListAll", testBusListAll},
	{"bus delete is refused while the bus has rules", testBusDeleteNotEmpty},
	{"rule create, get and list", testRuleCreateGetList},
	{"rule names are unique per bus and case-sensitive", testRuleNames},
	{"rule on an unknown bus", testRuleUnknownBus},
	{"rule not found", testRuleNotFound},
	{"rule list pages by name", testRuleListPaging},
	{"rule update stores fn's change", testRuleUpdate},
	{"rule update stores nothing when fn fails", testRuleUpdateRollback},
	{"rule delete removes its targets", testRuleDeleteCascades},
	{"target create, get and list", testTargetCreateGetList},
	{"target names are unique per rule", testTargetNames},
	{"target on an unknown rule", testTargetUnknownRule},
	{"target limit per rule", testTargetLimit},
	{"target limit under concurrent creations", testTargetLimitConcurrent},
	{"target update and rollback", testTargetUpdate},
	{"target input transformers round-trip", testTargetTransformers},
	{"target delete", testTargetDelete},
	{"plugin target config round-trips", testPluginTarget},
	{"times round-trip in UTC", testTimesRoundTrip},
	{"rules and targets are stamped by bus", testStampsByBus},
}

func TestRepositories(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			db := persistencetest.Open(t, dialect)
			r := repos{
				db:       db,
				accounts: persistence.NewAccountRepository(db),
				buses:    persistence.NewBusRepository(db),
				rules:    persistence.NewRuleRepository(db),
				targets:  persistence.NewTargetRepository(db),
			}
			for _, tc := range repositoryCases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, r)
				})
			}
		})
	}
}

// --- fixtures

var ctx = context.Background()

// newAccount returns a fresh account id, unique to the case.
func newAccount() string { return "acc" + domain.NewID() }

// stored is how a time comes back: UTC, microsecond precision.
func stored(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func createBus(t *testing.T, r repos, accountID, name string) *bus.Bus {
	t.Helper()
	b, err := bus.New(accountID, name, "bus "+name, bus.Retention{}, time.Now())
	require.NoError(t, err)
	require.NoError(t, r.buses.Create(ctx, b))
	return b
}

func createRule(t *testing.T, r repos, b *bus.Bus, name string) *rule.Rule {
	t.Helper()
	ru, err := rule.New(b.AccountID(), b.ID(), name, "rule "+name, []byte(`{"type": ["order.created"]}`), rule.CloudEvents, "", time.Now())
	require.NoError(t, err)
	require.NoError(t, r.rules.Create(ctx, ru))
	return ru
}

func httpSpec(name string) target.Spec {
	return target.Spec{
		Name: name,
		Type: target.HTTP,
		HTTP: target.HTTPConfig{
			URL: "https://example.com/hooks/" + name, Method: "PUT", Headers: map[string]string{"X-Team": "shop", "X-Id": name},
			Mode: target.Structured, Timeout: 2500 * time.Millisecond,
		},
		RetryPolicy: target.RetryPolicy{MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 600},
	}
}

func newTarget(t *testing.T, ru *rule.Rule, name string) *target.Target {
	t.Helper()
	tg, err := target.New(ru.AccountID(), ru.BusID(), ru.ID(), httpSpec(name), nil, time.Now())
	require.NoError(t, err)
	return tg
}

func createTarget(t *testing.T, r repos, ru *rule.Rule, name string) *target.Target {
	t.Helper()
	tg := newTarget(t, ru, name)
	require.NoError(t, r.targets.Create(ctx, tg))
	return tg
}

func busNames(bs []*bus.Bus) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Name()
	}
	return out
}

func ruleNames(rs []*rule.Rule) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name()
	}
	return out
}

func targetNames(ts []*target.Target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name()
	}
	return out
}

func assertSameBus(t *testing.T, want, got *bus.Bus) {
	t.Helper()
	assert.Equal(t, want.ID(), got.ID())
	assert.Equal(t, want.AccountID(), got.AccountID())
	assert.Equal(t, want.Name(), got.Name())
	assert.Equal(t, want.Description(), got.Description())
	assert.Equal(t, want.Retention(), got.Retention())
	assert.Equal(t, want.Log(), got.Log())
	assert.Equal(t, stored(want.CreatedAt()), got.CreatedAt())
}

func assertSameRule(t *testing.T, want, got *rule.Rule) {
	t.Helper()
	assert.Equal(t, want.ID(), got.ID())
	assert.Equal(t, want.AccountID(), got.AccountID())
	assert.Equal(t, want.BusID(), got.BusID())
	assert.Equal(t, want.Name(), got.Name())
	assert.Equal(t, want.Description(), got.Description())
	assert.JSONEq(t, string(want.EventPattern()), string(got.EventPattern()))
	assert.Equal(t, want.State(), got.State())
	assert.Equal(t, stored(want.CreatedAt()), got.CreatedAt())
	assert.Equal(t, stored(want.UpdatedAt()), got.UpdatedAt())
}

func assertSameTarget(t *testing.T, want, got *target.Target) {
	t.Helper()
	assert.Equal(t, want.ID(), got.ID())
	assert.Equal(t, want.AccountID(), got.AccountID())
	assert.Equal(t, want.BusID(), got.BusID())
	assert.Equal(t, want.RuleID(), got.RuleID())
	assert.Equal(t, want.Name(), got.Name())
	assert.Equal(t, want.Type(), got.Type())
	assert.Equal(t, want.HTTP(), got.HTTP())
	assert.Equal(t, want.Transformer(), got.Transformer())
	assert.Equal(t, want.RetryPolicy(), got.RetryPolicy())
	assert.Equal(t, stored(want.CreatedAt()), got.CreatedAt())
	assert.Equal(t, stored(want.UpdatedAt()), got.UpdatedAt())
}

// --- accounts

func testAccountEnsure(t *testing.T, r repos) {
	id := newAccount()
	first, err := account.New(id, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.NoError(t, r.accounts.Ensure(ctx, first))

	// Later calls, concurrent ones included, succeed and keep the first creation time.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			a, err := account.New(id, time.Now())
			if err == nil {
				err = r.accounts.Ensure(ctx, a)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	got, err := r.accounts.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, id, got.ID())
	assert.Equal(t, stored(first.CreatedAt()), got.CreatedAt())

	// Concurrent first uses of a new account all succeed.
	fresh := newAccount()
	for i := range errs {
		wg.Go(func() {
			a, err := account.New(fresh, time.Now())
			if err == nil {
				err = r.accounts.Ensure(ctx, a)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	_, err = r.accounts.Get(ctx, fresh)
	require.NoError(t, err)
}

func testAccountNotFound(t *testing.T, r repos) {
	id := newAccount()
	_, err := r.accounts.Get(ctx, id)
	require.True(t, errors.Is(err, account.ErrNotFound), "got %v", err)
	assert.ErrorContains(t, err, id)
}

// --- buses

func testBusCreateGet(t *testing.T, r repos) {
	acc := newAccount()
	b, err := bus.New(acc, "orders", "shop orders", bus.Retention{MaxAge: 90 * time.Minute, MaxBytes: 5 << 20}, time.Now())
	require.NoError(t, err)
	require.NoError(t, r.buses.Create(ctx, b))

	got, err := r.buses.Get(ctx, acc, "orders")
	require.NoError(t, err)
	assertSameBus(t, b, got)

	got, err = r.buses.GetByID(ctx, b.ID())
	require.NoError(t, err)
	assertSameBus(t, b, got)
	assert.Equal(t, bus.LogConfig{Level: bus.LogOff, IncludeDetail: bus.LogDetailNone}, got.Log(), "a new bus does not log")

	// The log config is stored with the rest of the bus.
	trace := bus.LogConfig{Level: bus.LogTrace, IncludeDetail: bus.LogDetailFull}
	updated, err := r.buses.Update(ctx, acc, "orders", func(b *bus.Bus) error { return b.Apply(bus.Patch{Log: &trace}) })
	require.NoError(t, err)
	assert.Equal(t, trace, updated.Log())
	got, err = r.buses.Get(ctx, acc, "orders")
	require.NoError(t, err)
	assert.Equal(t, trace, got.Log())
}

func testBusNames(t *testing.T, r repos) {
	acc, other := newAccount(), newAccount()
	upper := createBus(t, r, acc, "Orders")
	lower := createBus(t, r, acc, "orders")
	createBus(t, r, other, "orders") // another account may use the name

	dup, err := bus.New(acc, "orders", "", bus.Retention{}, time.Now())
	require.NoError(t, err)
	err = r.buses.Create(ctx, dup)
	require.True(t, errors.Is(err, bus.ErrAlreadyExists), "got %v", err)
	assert.ErrorContains(t, err, `"orders"`)

	got, err := r.buses.Get(ctx, acc, "Orders")
	require.NoError(t, err)
	assert.Equal(t, upper.ID(), got.ID())
	got, err = r.buses.Get(ctx, acc, "orders")
	require.NoError(t, err)
	assert.Equal(t, lower.ID(), got.ID())
	_, err = r.buses.Get(ctx, acc, "ORDERS")
	require.True(t, errors.Is(err, bus.ErrNotFound), "got %v", err)
}

func testBusNotFound(t *testing.T, r repos) {
	acc := newAccount()
	createBus(t, r, acc, "orders")
	_, err := r.buses.Get(ctx, acc, "payments")
	require.True(t, errors.Is(err, bus.ErrNotFound), "got %v", err)
	assert.ErrorContains(t, err, `bus "payments" not found`)

	_, err = r.buses.Get(ctx, newAccount(), "orders")
	require.True(t, errors.Is(err, bus.ErrNotFound), "another account's bus: got %v", err)

	missing := domain.NewID()
	_, err = r.buses.GetByID(ctx, missing)
	require.True(t, errors.Is(err, bus.ErrNotFound), "got %v", err)
	assert.ErrorContains(t, err, missing)

	err = r.buses.Delete(ctx, missing)
	require.True(t, errors.Is(err, bus.ErrNotFound), "got %v", err)
}

func testBusListPaging(t *testing.T, r repos) {
	acc := newAccount()
	for _, name := range []string{"b-3", "c", "B-1", "a", "b-2"} {
		createBus(t, r, acc, name)
	}
	createBus(t, r, newAccount(), "a-other") // not the account's

	// Byte order: upper case before lower case, as on both dialects.
	want := []string{"B-1", "a", "b-2", "b-3", "c"}
	cases := []struct {
		limit int
		pages [][]string
	}{
		{2, [][]string{{"B-1", "a"}, {"b-2", "b-3"}, {"c"}}},
		{5, [][]string{want}},
		{4, [][]string{want[:4], want[4:]}},
		{0, [][]string{want}}, // the default limit
		{100, [][]string{want}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("limit %d", tc.limit), func(t *testing.T) {
			token := ""
			for i, wantPage := range tc.pages {
				page, err := domain.NewPage(tc.limit, token)
				require.NoError(t, err)
				got, next, err := r.buses.List(ctx, acc, page)
				require.NoError(t, err)
				assert.Equal(t, wantPage, busNames(got), "page %d", i)
				if i == len(tc.pages)-1 {
					assert.Empty(t, next, "no token after the last page")
				} else {
					require.NotEmpty(t, next, "page %d has a next page", i)
				}
				token = next
			}
		})
	}

	got, next, err := r.buses.List(ctx, newAccount(), domain.Page{Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Empty(t, next)
}

func testBusListAll(t *testing.T, r repos) {
	a1, a2 := newAccount(), newAccount()
	mine := []*bus.Bus{createBus(t, r, a1, "x"), createBus(t, r, a1, "y"), createBus(t, r, a2, "x")}
	all, err := r.buses.ListAll(ctx)
	require.NoError(t, err)
	byID := map[string]*bus.Bus{}
	for _, b := range all {
		byID[b.ID()] = b
	}
	for _, b := range mine {
		require.Contains(t, byID, b.ID())
		assertSameBus(t, b, byID[b.ID()])
	}
}

func testBusDeleteNotEmpty(t *testing.T, r repos) {
	acc := newAccount()
	b := createBus(t, r, acc, "orders")
	createRule(t, r, b, "created")

	err := r.buses.Delete(ctx, b.ID())
	require.True(t, errors.Is(err, bus.ErrNotEmpty), "got %v", err)
	assert.ErrorContains(t, err, `"orders"`)
	_, err = r.buses.Get(ctx, acc, "orders")
	require.NoError(t, err, "the bus is still there")

	require.NoError(t, r.rules.Delete(ctx, b.ID(), "created"))
	require.NoError(t, r.buses.Delete(ctx, b.ID()))
	_, err = r.buses.Get(ctx, acc, "orders")
	require.True(t, errors.Is(err, bus.ErrNotFound), "got %v", err)
}

// --- rules

func testRuleCreateGetList(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	other := createBus(t, r, b.AccountID(), "payments")
	ru, err := rule.New(b.AccountID(), b.ID(), "big", "big orders",
		[]byte(`{"type": ["order.created"], "data": {"size": ["big"]}}`), rule.CloudEvents, rule.Disabled, time.Now())
	require.NoError(t, err)
	require.NoError(t, r.rules.Create(ctx, ru))
	small := createRule(t, r, b, "small")
	createRule(t, r, other, "elsewhere")

	got, err := r.rules.Get(ctx, b.ID(), "big")
	require.NoError(t, err)
	assertSameRule(t, ru, got)
	assert.False(t, got.Enabled())

	got, err = r.rules.GetByID(ctx, small.ID())
	require.NoError(t, err)
	assertSameRule(t, small, got)

	all, err := r.rules.ListByBus(ctx, b.ID())
	require.NoError(t, err)
	assert.Equal(t, []string{"big", "small"}, ruleNames(all))

	n, err := r.rules.CountByBus(ctx, b.ID())
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	n, err = r.rules.CountByBus(ctx, domain.NewID())
	require.NoError(t, err)
	assert.Zero(t, n)
}

func testRuleNames(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	other := createBus(t, r, b.AccountID(), "payments")
	createRule(t, r, b, "Created")
	createRule(t, r, b, "created")
	createRule(t, r, other, "created")

	dup, err := rule.New(b.AccountID(), b.ID(), "created", "", []byte(`{"type": ["x"]}`), rule.CloudEvents, "", time.Now())
	require.NoError(t, err)
	err = r.rules.Create(ctx, dup)
	require.True(t, errors.Is(err, rule.ErrAlreadyExists), "got %v", err)
	assert.ErrorContains(t, err, `"created"`)

	n, err := r.rules.CountByBus(ctx, b.ID())
	require.NoError(t, err)
	assert.Equal(t, 2, n)
}

func testRuleUnknownBus(t *testing.T, r repos) {
	missing := domain.NewID()
	ru, err := rule.New(newAccount(), missing, "created", "", []byte(`{"type": ["x"]}`), rule.CloudEvents, "", time.Now())
	require.NoError(t, err)
	err = r.rules.Create(ctx, ru)
	require.True(t, errors.Is(err, bus.ErrNotFound), "got %v", err)
	assert.ErrorContains(t, err, missing)
}

func testRuleNotFound(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	createRule(t, r, b, "created")

	_, err := r.rules.Get(ctx, b.ID(), "CREATED")
	require.True(t, errors.Is(err, rule.ErrNotFound), "got %v", err)
	assert.ErrorContains(t, err, `rule "CREATED" not found`)
	_, err = r.rules.GetByID(ctx, domain.NewID())
	require.True(t, errors.Is(err, rule.ErrNotFound), "got %v", err)

	called := false
	_, err = r.rules.Update(ctx, b.ID(), "missing", func(*rule.Rule) error { called = true; return nil })
	require.True(t, errors.Is(err, rule.ErrNotFound), "got %v", err)
	assert.False(t, called, "fn is not called for a missing rule")

	err = r.rules.Delete(ctx, b.ID(), "missing")
	require.True(t, errors.Is(err, rule.ErrNotFound), "got %v", err)
}

func testRuleListPaging(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	for _, name := range []string{"r3", "R2", "r1"} {
		createRule(t, r, b, name)
	}
	got, next, err := r.rules.List(ctx, b.ID(), domain.Page{Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"R2", "r1"}, ruleNames(got))
	require.Equal(t, domain.EncodePageToken("r1"), next)

	got, next, err = r.rules.List(ctx, b.ID(), domain.Page{Limit: 2, Token: next})
	require.NoError(t, err)
	assert.Equal(t, []string{"r3"}, ruleNames(got))
	assert.Empty(t, next)
}

func testRuleUpdate(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	ru := createRule(t, r, b, "created")
	later := time.Now().Add(time.Minute)

	updated, err := r.rules.Update(ctx, b.ID(), "created", func(ru *rule.Rule) error {
		return ru.Change("changed", []byte(`{"source": ["shop"]}`), rule.CloudEvents, rule.Disabled, later)
	})
	require.NoError(t, err)
	assert.Equal(t, "changed", updated.Description())
	assert.Equal(t, stored(later), updated.UpdatedAt())

	got, err := r.rules.Get(ctx, b.ID(), "created")
	require.NoError(t, err)
	assertSameRule(t, updated, got)
	assert.Equal(t, rule.Disabled, got.State())
	assert.JSONEq(t, `{"source": ["shop"]}`, string(got.EventPattern()))
	assert.Equal(t, stored(ru.CreatedAt()), got.CreatedAt(), "the creation time stays")
}

func testRuleUpdateRollback(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	ru := createRule(t, r, b, "created")
	refused := errors.New("refused by fn")

	_, err := r.rules.Update(ctx, b.ID(), "created", func(ru *rule.Rule) error {
		ru.SetState(rule.Disabled, time.Now())
		return refused
	})
	require.Equal(t, refused, err, "fn's error comes back unchanged")

	// A domain error from fn comes back as is too.
	_, err = r.rules.Update(ctx, b.ID(), "created", func(ru *rule.Rule) error {
		return ru.Change("", []byte(`not json`), rule.CloudEvents, "", time.Now())
	})
	require.True(t, errors.Is(err, rule.ErrInvalidEventPattern), "got %v", err)

	got, err := r.rules.Get(ctx, b.ID(), "created")
	require.NoError(t, err)
	assertSameRule(t, ru, got)
	assert.Equal(t, rule.Enabled, got.State(), "nothing was stored")
}

func testRuleDeleteCascades(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	doomed := createRule(t, r, b, "doomed")
	kept := createRule(t, r, b, "kept")
	createTarget(t, r, doomed, "t1")
	createTarget(t, r, doomed, "t2")
	keptTarget := createTarget(t, r, kept, "t1")

	require.NoError(t, r.rules.Delete(ctx, b.ID(), "doomed"))

	_, err := r.rules.Get(ctx, b.ID(), "doomed")
	require.True(t, errors.Is(err, rule.ErrNotFound), "got %v", err)
	left, err := r.targets.ListByRule(ctx, doomed.ID())
	require.NoError(t, err)
	assert.Empty(t, left, "the rule's targets are deleted with it")
	_, err = r.targets.Get(ctx, doomed.ID(), "t1")
	require.True(t, errors.Is(err, target.ErrNotFound), "got %v", err)

	onBus, err := r.targets.ListByBus(ctx, b.ID())
	require.NoError(t, err)
	require.Len(t, onBus, 1, "another rule's targets stay")
	assert.Equal(t, keptTarget.ID(), onBus[0].ID())

	err = r.rules.Delete(ctx, b.ID(), "doomed")
	require.True(t, errors.Is(err, rule.ErrNotFound), "got %v", err)
}

// --- targets

func testTargetCreateGetList(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	r1 := createRule(t, r, b, "r1")
	r2 := createRule(t, r, b, "r2")
	hook := createTarget(t, r, r1, "hook")
	createTarget(t, r, r1, "Audit")
	createTarget(t, r, r2, "other")

	// Defaults and no headers round-trip as well.
	plain, err := target.New(b.AccountID(), b.ID(), r2.ID(), target.Spec{
		Name: "plain", Type: target.HTTP, HTTP: target.HTTPConfig{URL: "http://example.com"},
		RetryPolicy: target.DefaultRetryPolicy(),
	}, nil, time.Now())
	require.NoError(t, err)
	require.NoError(t, r.targets.Create(ctx, plain))

	got, err := r.targets.Get(ctx, r1.ID(), "hook")
	require.NoError(t, err)
	assertSameTarget(t, hook, got)
	assert.Equal(t, 2500*time.Millisecond, got.HTTP().Timeout)
	assert.Equal(t, map[string]string{"X-Team": "shop", "X-Id": "hook"}, got.HTTP().Headers)

	got, err = r.targets.Get(ctx, r2.ID(), "plain")
	require.NoError(t, err)
	assertSameTarget(t, plain, got)
	assert.Equal(t, target.DefaultTimeout, got.HTTP().Timeout)
	assert.Equal(t, target.Binary, got.HTTP().Mode)

	byRule, err := r.targets.ListByRule(ctx, r1.ID())
	require.NoError(t, err)
	assert.Equal(t, []string{"Audit", "hook"}, targetNames(byRule))

	byBus, err := r.targets.ListByBus(ctx, b.ID())
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"Audit", "hook", "other", "plain"}, targetNames(byBus))

	none, err := r.targets.ListByBus(ctx, domain.NewID())
	require.NoError(t, err)
	assert.Empty(t, none)
}

func testTargetNames(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	r1 := createRule(t, r, b, "r1")
	r2 := createRule(t, r, b, "r2")
	createTarget(t, r, r1, "hook")
	createTarget(t, r, r1, "Hook")
	createTarget(t, r, r2, "hook")

	err := r.targets.Create(ctx, newTarget(t, r1, "hook"))
	require.True(t, errors.Is(err, target.ErrAlreadyExists), "got %v", err)
	assert.ErrorContains(t, err, `"hook"`)
}

func testTargetUnknownRule(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	ru, err := rule.New(b.AccountID(), b.ID(), "never-stored", "", []byte(`{"type": ["x"]}`), rule.CloudEvents, "", time.Now())
	require.NoError(t, err)
	err = r.targets.Create(ctx, newTarget(t, ru, "hook"))
	require.True(t, errors.Is(err, rule.ErrNotFound), "got %v", err)
}

func testTargetLimit(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	ru := createRule(t, r, b, "r1")
	for i := range target.MaxPerRule {
		createTarget(t, r, ru, fmt.Sprintf("t%d", i))
	}
	err := r.targets.Create(ctx, newTarget(t, ru, "one-too-many"))
	require.True(t, errors.Is(err, target.ErrLimitExceeded), "got %v", err)
	assert.ErrorContains(t, err, fmt.Sprintf("at most %d targets", target.MaxPerRule))

	// The limit is per rule, and deleting a target makes room again.
	createTarget(t, r, createRule(t, r, b, "r2"), "t0")
	require.NoError(t, r.targets.Delete(ctx, ru.ID(), "t0"))
	createTarget(t, r, ru, "one-more")
	list, err := r.targets.ListByRule(ctx, ru.ID())
	require.NoError(t, err)
	assert.Len(t, list, target.MaxPerRule)
}

func testTargetLimitConcurrent(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	ru := createRule(t, r, b, "r1")
	const attempts = 2 * target.MaxPerRule
	errs := make([]error, attempts)
	var wg sync.WaitGroup
	for i := range attempts {
		tg := newTarget(t, ru, fmt.Sprintf("t%d", i))
		wg.Go(func() { errs[i] = r.targets.Create(ctx, tg) })
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		if err == nil {
			created++
			continue
		}
		require.True(t, errors.Is(err, target.ErrLimitExceeded), "got %v", err)
	}
	assert.Equal(t, target.MaxPerRule, created)
	list, err := r.targets.ListByRule(ctx, ru.ID())
	require.NoError(t, err)
	assert.Len(t, list, target.MaxPerRule)
}

func testTargetUpdate(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	ru := createRule(t, r, b, "r1")
	tg := createTarget(t, r, ru, "hook")
	later := time.Now().Add(time.Minute)

	spec := target.Spec{
		Name: "hook", Type: target.HTTP,
		HTTP:        target.HTTPConfig{URL: "https://example.org/new", Headers: map[string]string{"A": "b"}},
		RetryPolicy: target.RetryPolicy{MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60},
		RoleARN:     "arn:aws:iam::123456789012:role/" + strings.Repeat("r", 1500),
	}
	updated, err := r.targets.Update(ctx, ru.ID(), "hook", func(tg *target.Target) error { return tg.Change(spec, nil, later) })
	require.NoError(t, err)
	got, err := r.targets.Get(ctx, ru.ID(), "hook")
	require.NoError(t, err)
	assertSameTarget(t, updated, got)
	assert.Equal(t, "https://example.org/new", got.HTTP().URL)
	assert.Equal(t, "POST", got.HTTP().Method)
	assert.Equal(t, spec.RetryPolicy, got.RetryPolicy())
	assert.Equal(t, spec.RoleARN, got.RoleARN(), "a role ARN of nearly the longest length is kept")
	assert.Equal(t, stored(tg.CreatedAt()), got.CreatedAt())
	assert.Equal(t, stored(later), got.UpdatedAt())

	refused := errors.New("refused by fn")
	_, err = r.targets.Update(ctx, ru.ID(), "hook", func(tg *target.Target) error {
		require.NoError(t, tg.Change(httpSpec("hook"), nil, time.Now()))
		return refused
	})
	require.Equal(t, refused, err)
	again, err := r.targets.Get(ctx, ru.ID(), "hook")
	require.NoError(t, err)
	assertSameTarget(t, got, again)

	called := false
	_, err = r.targets.Update(ctx, ru.ID(), "missing", func(*target.Target) error { called = true; return nil })
	require.True(t, errors.Is(err, target.ErrNotFound), "got %v", err)
	assert.False(t, called)
}

func testTargetDelete(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	ru := createRule(t, r, b, "r1")
	createTarget(t, r, ru, "hook")
	createTarget(t, r, ru, "kept")

	require.NoError(t, r.targets.Delete(ctx, ru.ID(), "hook"))
	_, err := r.targets.Get(ctx, ru.ID(), "hook")
	require.True(t, errors.Is(err, target.ErrNotFound), "got %v", err)
	assert.ErrorContains(t, err, `target "hook" not found`)
	err = r.targets.Delete(ctx, ru.ID(), "hook")
	require.True(t, errors.Is(err, target.ErrNotFound), "got %v", err)

	list, err := r.targets.ListByRule(ctx, ru.ID())
	require.NoError(t, err)
	assert.Equal(t, []string{"kept"}, targetNames(list))
}

func testTargetTransformers(t *testing.T, r repos) {
	b := createBus(t, r, newAccount(), "orders")
	str := func(s string) *string { return &s }
	// Every form, with text that needs escaping and a template as large as allowed.
	big := `{"k": "` + strings.Repeat(`é\"<x>`, (transform.MaxTemplateSize-16)/7) + `"}`
	forms := map[string]transform.Spec{
		"inputTransformer": {InputTransformer: &transform.InputTransformer{
			InputPathsMap: map[string]string{"id": "$.data.orderId", "sku": "$.data.items[0].sku", "x": "$['odd key']"},
			InputTemplate: `{"order": <id>, "text": "Zoë said \"hi\"\n<sku>"}`}},
		"big":       {InputTransformer: &transform.InputTransformer{InputPathsMap: map[string]string{"x": "$.data.x"}, InputTemplate: big}},
		"input":     {Input: str(`{"fixed": [1, 2.50, null]}`)},
		"inputPath": {InputPath: str("$.data.customer")},
		"original":  {Transform: &transform.Param{Form: transform.Original}},
		"template": {Transform: &transform.Param{Form: transform.Template, Value: `{"c": "$.data.c"}`,
			Template: `{"msgtype": "text", "text": {"content": "${c}"}}`}},
		// Attributes beside a form and alone, with templates that need escaping.
		"attributes": {InputTransformer: &transform.InputTransformer{InputPathsMap: map[string]string{"id": "$.data.orderId"}, InputTemplate: `<id>`},
			Attributes: map[string]string{"subject": "orders/<id> \"é\" & <ce.id>", "type": "<ce.type>.v2", "dataschema": "",
				"orderid": strings.Repeat("<id>", transform.MaxAttributeTemplateSize/4)}},
		"attributesOnly": {Attributes: map[string]string{"source": "<ce.source>/copy", "tenant": "acme"}},
		"none":           {},
	}
	require.LessOrEqual(t, len(forms["big"].InputTransformer.InputTemplate), transform.MaxTemplateSize)
	require.Greater(t, len(forms["big"].InputTransformer.InputTemplate), transform.MaxTemplateSize-16)
	ru := createRule(t, r, b, "r1")
	for name, tr := range forms {
		spec := httpSpec(name)
		spec.Transformer = tr
		tg, err := target.New(ru.AccountID(), ru.BusID(), ru.ID(), spec, nil, time.Now())
		require.NoError(t, err, name)
		require.NoError(t, r.targets.Create(ctx, tg), name)
		got, err := r.targets.Get(ctx, ru.ID(), name)
		require.NoError(t, err, name)
		assertSameTarget(t, tg, got)
		assert.Equal(t, tr.IsZero(), got.Transformer().IsZero(), name)
		// A rule has at most MaxPerRule targets: make room for the next form.
		if name != "none" {
			require.NoError(t, r.targets.Delete(ctx, ru.ID(), name))
		}
	}

	// Update adds, replaces and removes a transformer.
	change := func(tr transform.Spec) *target.Target {
		t.Helper()
		spec := httpSpec("none")
		spec.Transformer = tr
		updated, err := r.targets.Update(ctx, ru.ID(), "none", func(tg *target.Target) error { return tg.Change(spec, nil, time.Now()) })
		require.NoError(t, err)
		got, err := r.targets.Get(ctx, ru.ID(), "none")
		require.NoError(t, err)
		assertSameTarget(t, updated, got)
		return got
	}
	assert.Equal(t, forms["inputPath"], change(forms["inputPath"]).Transformer())
	assert.Equal(t, forms["template"], change(forms["template"]).Transformer())
	assert.Equal(t, forms["attributes"], change(forms["attributes"]).Transformer())
	assert.Equal(t, forms["attributesOnly"], change(forms["attributesOnly"]).Transformer())
	var column string
	require.NoError(t, r.db.SQL().QueryRow("SELECT input_transformer FROM targets WHERE rule_id = ? AND name = 'none'", ru.ID()).Scan(&column))
	assert.JSONEq(t, `{"attributes": {"source": "<ce.source>/copy", "tenant": "acme"}}`, column, "attributes are part of the stored spec")
	assert.True(t, change(transform.Spec{}).Transformer().IsZero(), "removed: the column is NULL again")

	var stored *string
	require.NoError(t, r.db.SQL().QueryRow("SELECT input_transformer FROM targets WHERE rule_id = ? AND name = 'none'", ru.ID()).Scan(&stored))
	assert.Nil(t, stored, "a target without a transformer stores NULL")
}

// --- times

func testTimesRoundTrip(t *testing.T, r repos) {
	// A time with nanoseconds in a zone far from UTC comes back as the same instant, in UTC, to the microsecond.
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	at := time.Date(2026, 3, 29, 1, 30, 15, 123456789, zone)

	acc := newAccount()
	a, err := account.New(acc, at)
	require.NoError(t, err)
	require.NoError(t, r.accounts.Ensure(ctx, a))
	gotAccount, err := r.accounts.Get(ctx, acc)
	require.NoError(t, err)

	b, err := bus.New(acc, "orders", "", bus.Retention{}, at)
	require.NoError(t, err)
	require.NoError(t, r.buses.Create(ctx, b))
	gotBus, err := r.buses.Get(ctx, acc, "orders")
	require.NoError(t, err)

	ru, err := rule.New(acc, b.ID(), "created", "", []byte(`{"type": ["x"]}`), rule.CloudEvents, "", at)
	require.NoError(t, err)
	require.NoError(t, r.rules.Create(ctx, ru))
	gotRule, err := r.rules.Get(ctx, b.ID(), "created")
	require.NoError(t, err)

	tg, err := target.New(acc, b.ID(), ru.ID(), httpSpec("hook"), nil, at)
	require.NoError(t, err)
	require.NoError(t, r.targets.Create(ctx, tg))
	gotTarget, err := r.targets.Get(ctx, ru.ID(), "hook")
	require.NoError(t, err)

	want := time.Date(2026, 3, 29, 0, 0, 15, 123456000, time.UTC).Add(-4 * time.Hour) // 01:30:15 at +5:30
	for name, got := range map[string]time.Time{
		"account": gotAccount.CreatedAt(), "bus": gotBus.CreatedAt(),
		"rule created": gotRule.CreatedAt(), "rule updated": gotRule.UpdatedAt(),
		"target created": gotTarget.CreatedAt(), "target updated": gotTarget.UpdatedAt(),
	} {
		assert.Equal(t, time.UTC, got.Location(), name)
		assert.True(t, want.Equal(got), "%s: want %s, got %s", name, want, got)
		assert.Equal(t, want, got, name)
	}
}

func testPluginTarget(t *testing.T, r repos) {
	ctx := context.Background()
	b := createBus(t, r, newAccount(), "orders")
	ru := createRule(t, r, b, "r")
	spec := target.Spec{Name: "m", Type: "mqtt", RetryPolicy: target.DefaultRetryPolicy(),
		Config: map[string]string{"mqtt.url": "tcp://broker:1883", "mqtt.topic": "orders/{type}", "mqtt.password": "enc:v1:x"}}
	tg, err := target.New(b.AccountID(), b.ID(), ru.ID(), spec, nil, time.Now())
	require.NoError(t, err)
	require.NoError(t, r.targets.Create(ctx, tg))
	got, err := r.targets.Get(ctx, ru.ID(), "m")
	require.NoError(t, err)
	require.Equal(t, target.Type("mqtt"), got.Type())
	require.Equal(t, spec.Config, got.Config())
	require.Equal(t, target.SecretMask, got.PublicConfig()["mqtt.password"])
}

func testStampsByBus(t *testing.T, r repos) {
	acc := newAccount()
	one, two := createBus(t, r, acc, "one"), createBus(t, r, acc, "two")
	stamps := func() (rules, targets map[string]string) {
		t.Helper()
		rules, err := r.rules.StampsByBus(ctx)
		require.NoError(t, err)
		targets, err = r.targets.StampsByBus(ctx)
		require.NoError(t, err)
		return rules, targets
	}
	rules, targets := stamps()
	assert.NotContains(t, rules, one.ID(), "a bus without rules has no stamp")
	assert.NotContains(t, targets, one.ID())

	ru := createRule(t, r, one, "a")
	rules1, targets1 := stamps()
	assert.Contains(t, rules1, one.ID(), "a rule created")
	assert.NotContains(t, rules1, two.ID(), "on the other bus")
	assert.NotContains(t, targets1, one.ID())
	rules2, _ := stamps()
	assert.Equal(t, rules1[one.ID()], rules2[one.ID()], "nothing changed")

	_, err := r.rules.Update(ctx, one.ID(), "a", func(ru *rule.Rule) error {
		return ru.Change("changed", []byte(`{"source": ["shop"]}`), rule.CloudEvents, rule.Enabled, time.Now())
	})
	require.NoError(t, err)
	rules3, _ := stamps()
	assert.NotEqual(t, rules2[one.ID()], rules3[one.ID()], "a rule changed")

	createRule(t, r, two, "b")
	rules4, _ := stamps()
	assert.Equal(t, rules3[one.ID()], rules4[one.ID()], "a rule of another bus created")
	assert.Contains(t, rules4, two.ID())

	createTarget(t, r, ru, "hook")
	_, targets5 := stamps()
	assert.Contains(t, targets5, one.ID(), "a target created")
	_, err = r.targets.Update(ctx, ru.ID(), "hook", func(tg *target.Target) error {
		spec := httpSpec("hook")
		spec.HTTP.Method = "POST"
		return tg.Change(spec, nil, time.Now())
	})
	require.NoError(t, err)
	_, targets6 := stamps()
	assert.NotEqual(t, targets5[one.ID()], targets6[one.ID()], "a target changed")

	createRule(t, r, one, "c")
	rules7, _ := stamps()
	require.NoError(t, r.rules.Delete(ctx, one.ID(), "c"))
	rules8, _ := stamps()
	assert.NotEqual(t, rules7[one.ID()], rules8[one.ID()], "a rule deleted")
}
