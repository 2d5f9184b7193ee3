package deadletter_test

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/deadletter"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/target"
)

// memStore is an in-memory dead-letter store of account "acme": the stream at the process boundary.
type memStore struct {
	mu   sync.Mutex
	dls  map[uint64]*deadletter.DeadLetter
	last uint64
	// redriven lists the destinations of the redrives; failRedrive fails the redrive of these sequences;
	// failAgain stores a new dead letter for each redrive (the event failing again at once).
	redriven    map[uint64]deadletter.Destination
	failRedrive map[uint64]bool
	failAgain   bool
}

func newMemStore() *memStore {
	return &memStore{dls: map[uint64]*deadletter.DeadLetter{}, redriven: map[uint64]deadletter.Destination{}, failRedrive: map[uint64]bool{}}
}

func (m *memStore) add(connector string) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last++
	m.dls[m.last] = deadletter.Rebuild("acme", deadletter.Record{Sequence: m.last, Time: time.Now(), Connector: connector,
		Event: ev("e" + strconv.FormatUint(m.last, 10))})
	return m.last
}

func (m *memStore) List(_ context.Context, _ string, q deadletter.Query) ([]*deadletter.DeadLetter, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var seqs []uint64
	for s := range m.dls {
		if s > q.After && (q.Until == 0 || s <= q.Until) {
			seqs = append(seqs, s)
		}
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	var out []*deadletter.DeadLetter
	for i, s := range seqs {
		if q.Filter.Matches(m.dls[s]) {
			out = append(out, m.dls[s])
		}
		if len(out) == q.Limit && i < len(seqs)-1 {
			return out, s, nil
		}
	}
	return out, 0, nil
}

func (m *memStore) Last(context.Context, string) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last, nil
}

func (m *memStore) Get(_ context.Context, _ string, seq uint64) (*deadletter.DeadLetter, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.dls[seq]; ok {
		return d, nil
	}
	return nil, deadletter.ErrNotFound
}

func (m *memStore) Redrive(_ context.Context, _ string, seq uint64, to deadletter.Destination) error {
	m.mu.Lock()
	if m.failRedrive[seq] {
		m.mu.Unlock()
		return errors.New("nats: timeout")
	}
	if _, ok := m.dls[seq]; !ok {
		m.mu.Unlock()
		return deadletter.ErrNotFound
	}
	conn := m.dls[seq].Connector()
	delete(m.dls, seq)
	m.redriven[seq] = to
	again := m.failAgain
	m.mu.Unlock()
	if again {
		m.add(conn)
	}
	return nil
}

func (m *memStore) Delete(_ context.Context, _ string, seq uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.dls[seq]; !ok {
		return deadletter.ErrNotFound
	}
	delete(m.dls, seq)
	return nil
}

// Repositories holding one bus orders, its rule created and its target hook; they count the lookups. The methods
// the service does not call are left to the embedded interfaces (calling one panics).
type oneBus struct {
	bus.Repository
	b    *bus.Bus
	gets int
}

func (o *oneBus) Get(_ context.Context, _, name string) (*bus.Bus, error) {
	o.gets++
	if name == o.b.Name() {
		return o.b, nil
	}
	return nil, bus.ErrNotFound
}

type oneRule struct {
	rule.Repository
	r *rule.Rule
}

func (o *oneRule) Get(_ context.Context, busID, name string) (*rule.Rule, error) {
	if busID == o.r.BusID() && name == o.r.Name() {
		return o.r, nil
	}
	return nil, rule.ErrNotFound
}

type oneTarget struct {
	target.Repository
	t *target.Target
}

func (o *oneTarget) Get(_ context.Context, ruleID, name string) (*target.Target, error) {
	if ruleID == o.t.RuleID() && name == o.t.Name() {
		return o.t, nil
	}
	return nil, target.ErrNotFound
}

type fixture struct {
	svc   *deadletter.Service
	store *memStore
	buses *oneBus
	dest  deadletter.Destination
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	now := time.Now()
	b, err := bus.New("acme", "orders", "", bus.Retention{}, now)
	require.NoError(t, err)
	r, err := rule.New("acme", b.ID(), "created", "", []byte(`{"source":["shop"]}`), rule.CloudEvents, rule.Enabled, now)
	require.NoError(t, err)
	tg, err := target.New("acme", b.ID(), r.ID(), target.Spec{Name: "hook", Type: target.Log, RetryPolicy: target.DefaultRetryPolicy()}, nil, now)
	require.NoError(t, err)
	f := &fixture{store: newMemStore(), buses: &oneBus{b: b}, dest: deadletter.Destination{BusID: b.ID(), RuleID: r.ID(), TargetID: tg.ID()}}
	f.svc = &deadletter.Service{Store: f.store, Buses: f.buses, Rules: &oneRule{r: r}, Targets: &oneTarget{t: tg}}
	return f
}

func codes(r deadletter.Result) []string {
	out := make([]string, 0, len(r.Entries))
	for _, e := range r.Entries {
		c := ""
		if e.Err != nil {
			c = e.Err.Code
		}
		out = append(out, e.ID+":"+c)
	}
	return out
}

func TestServiceRedriveByIDs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	ok1 := f.store.add("eb.acme.orders.created.hook")
	goneTarget := f.store.add("eb.acme.orders.created.gone")
	goneRule := f.store.add("eb.acme.orders.paid.hook")
	goneBus := f.store.add("eb.acme.billing.paid.hook")
	router := f.store.add("eb.acme.orders.router")
	failing := f.store.add("eb.acme.orders.created.hook")
	ok2 := f.store.add("eb.acme.orders.created.hook")
	f.store.failRedrive[failing] = true

	ids := []string{}
	for _, s := range []uint64{ok1, goneTarget, goneRule, goneBus, router, failing, ok2} {
		ids = append(ids, strconv.FormatUint(s, 10))
	}
	sel, err := deadletter.NewSelection(ids, nil)
	require.NoError(t, err)
	res, err := f.svc.Redrive(ctx, "acme", sel)
	require.NoError(t, err)
	assert.Equal(t, []string{"1:", "2:TargetNotFound", "3:TargetNotFound", "4:TargetNotFound", "5:DeadLetterNotRedrivable",
		"6:RedriveFailed", "7:"}, codes(res))
	assert.Contains(t, res.Entries[1].Err.Message, `target "gone" was deleted`)
	assert.Contains(t, res.Entries[2].Err.Message, `rule "paid" was deleted`)
	assert.Contains(t, res.Entries[3].Err.Message, `bus "billing" was deleted`)
	assert.Equal(t, 2, res.Succeeded())
	assert.Equal(t, map[uint64]deadletter.Destination{ok1: f.dest, ok2: f.dest}, f.store.redriven)
	assert.Equal(t, 4, f.buses.gets, "one lookup per target named (orders/created/hook once for two dead letters)")

	// An id that does not exist: nothing is redriven, the error names it.
	before := len(f.store.redriven)
	sel, err = deadletter.NewSelection([]string{strconv.FormatUint(failing, 10), "99"}, nil)
	require.NoError(t, err)
	f.store.failRedrive[failing] = false
	_, err = f.svc.Redrive(ctx, "acme", sel)
	require.ErrorIs(t, err, deadletter.ErrNotFound)
	de, _ := domain.As(err)
	assert.Equal(t, "ids[1]", de.Field)
	assert.Len(t, f.store.redriven, before)
}

// A redrive by filter reads the dead letters stored when it starts: an event that fails again at once comes back
// as a new dead letter that the same call does not redrive.
func TestServiceRedriveByFilterStopsAtTheStart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for range 1200 { // more than one batch
		f.store.add("eb.acme.orders.created.hook")
	}
	f.store.add("eb.acme.orders.created.other")
	f.store.failAgain = true
	res, err := f.svc.Redrive(context.Background(), "acme", deadletter.Selection{Filter: &deadletter.Filter{Bus: "orders", Rule: "created", Target: "hook"}})
	require.NoError(t, err)
	assert.Equal(t, 1200, res.Succeeded())
	assert.Zero(t, res.Failed())
	last, _ := f.store.Last(context.Background(), "acme")
	assert.EqualValues(t, 2401, last, "every one came back once, none was redriven twice")
	dls, _, err := f.store.List(context.Background(), "acme", deadletter.Query{Limit: 5000})
	require.NoError(t, err)
	assert.Len(t, dls, 1201, "the other target's and the ones that came back")
}

func TestServiceDeleteAndList(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	for range 5 {
		f.store.add("eb.acme.orders.created.hook")
	}
	page, err := domain.NewPage(2, "")
	require.NoError(t, err)
	var ids []string
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5)
		dls, next, err := f.svc.List(ctx, "acme", deadletter.Filter{}, page)
		require.NoError(t, err)
		for _, d := range dls {
			ids = append(ids, d.ID())
		}
		if next == "" {
			break
		}
		page, err = domain.NewPage(2, next)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"1", "2", "3", "4", "5"}, ids)

	_, _, err = f.svc.List(ctx, "acme", deadletter.Filter{}, domain.Page{Limit: 2, Token: domain.EncodePageToken("orders")})
	require.ErrorIs(t, err, domain.ErrValidation, "a token of a list by name")

	sel, err := deadletter.NewSelection([]string{"2", "4"}, nil)
	require.NoError(t, err)
	res, err := f.svc.Delete(ctx, "acme", sel)
	require.NoError(t, err)
	assert.Equal(t, []string{"2:", "4:"}, codes(res))
	res, err = f.svc.Delete(ctx, "acme", deadletter.Selection{Filter: &deadletter.Filter{}})
	require.NoError(t, err)
	assert.Equal(t, []string{"1:", "3:", "5:"}, codes(res))
	last, _ := f.store.Last(ctx, "acme")
	dls, _, _ := f.store.List(ctx, "acme", deadletter.Query{Limit: 10, Until: last})
	assert.Empty(t, dls)

	// A caller gone: nothing more is done.
	f.store.add("eb.acme.orders.created.hook")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = f.svc.Delete(cctx, "acme", deadletter.Selection{Filter: &deadletter.Filter{}})
	require.ErrorIs(t, err, context.Canceled)
	dls, _, _ = f.store.List(ctx, "acme", deadletter.Query{Limit: 10})
	assert.Len(t, dls, 1)
}
