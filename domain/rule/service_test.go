package rule_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/rule"
)

// memRules is an in-memory rule.Repository of one bus, enough for the service's use cases.
type memRules struct {
	mu    sync.Mutex
	rules map[string]*rule.Rule
}

var _ rule.Repository = (*memRules)(nil)

func (m *memRules) Create(_ context.Context, r *rule.Rule) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.rules[r.Name()]; ok {
		return rule.ErrAlreadyExists
	}
	m.rules[r.Name()] = r
	return nil
}

func (m *memRules) Get(_ context.Context, _, name string) (*rule.Rule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.rules[name]; ok {
		return r, nil
	}
	return nil, rule.ErrNotFound
}

func (m *memRules) GetByID(context.Context, string) (*rule.Rule, error) { return nil, rule.ErrNotFound }

func (m *memRules) List(ctx context.Context, busID string, _ domain.Page) ([]*rule.Rule, string, error) {
	rules, err := m.ListByBus(ctx, busID)
	return rules, "", err
}

func (m *memRules) ListByBus(context.Context, string) ([]*rule.Rule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*rule.Rule
	for _, r := range m.rules {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *rule.Rule) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

func (m *memRules) CountByBus(context.Context, string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.rules), nil
}

func (m *memRules) Update(_ context.Context, _, name string, fn func(*rule.Rule) error) (*rule.Rule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rules[name]
	if !ok {
		return nil, rule.ErrNotFound
	}
	c := *r
	if err := fn(&c); err != nil {
		return nil, err
	}
	m.rules[name] = &c
	return &c, nil
}

func (m *memRules) Delete(_ context.Context, _, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.rules[name]; !ok {
		return rule.ErrNotFound
	}
	delete(m.rules, name)
	return nil
}

// oneBus is a bus.Repository that holds one bus.
type oneBus struct{ b *bus.Bus }

func (o oneBus) Create(context.Context, *bus.Bus) error { return bus.ErrAlreadyExists }
func (o oneBus) Get(_ context.Context, _, name string) (*bus.Bus, error) {
	if name != o.b.Name() {
		return nil, bus.ErrNotFound
	}
	return o.b, nil
}
func (o oneBus) GetByID(context.Context, string) (*bus.Bus, error) { return o.b, nil }
func (o oneBus) List(context.Context, string, domain.Page) ([]*bus.Bus, string, error) {
	return []*bus.Bus{o.b}, "", nil
}
func (o oneBus) ListAll(context.Context) ([]*bus.Bus, error) { return []*bus.Bus{o.b}, nil }
func (o oneBus) Delete(context.Context, string) error        { return nil }
func (o oneBus) Update(context.Context, string, string, func(*bus.Bus) error) (*bus.Bus, error) {
	return o.b, nil
}
func (o oneBus) CountByAccount(context.Context, string) (int, error) { return 1, nil }

type noRuntime struct{}

func (noRuntime) SyncBus(context.Context, *bus.Bus) error { return nil }

func newService(t *testing.T, limit int) (*rule.Service, *memRules) {
	t.Helper()
	b, err := bus.New("acct", "orders", "", bus.Retention{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rules := &memRules{rules: map[string]*rule.Rule{}}
	return &rule.Service{Rules: rules, Buses: oneBus{b}, Runtime: noRuntime{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxWildcardRules: limit}, rules
}

const (
	wildcard    = `{"source":[{"wildcard":"shop/*"}]}`
	notWildcard = `{"source":[{"prefix":"shop/"}]}`
	abWildcard  = `{"source":[{"anything-but":{"wildcard":"crm/*"}}]}`
)

func TestWildcardRulesPerBus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newService(t, 2)
	create := func(name, pattern string, state rule.State) error {
		_, err := s.Create(ctx, "acct", "orders", rule.Spec{Name: name, EventPattern: []byte(pattern), State: state})
		return err
	}
	wantLimit := func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, rule.ErrInvalidEventPattern) || !strings.Contains(err.Error(), "at most 2 rules") {
			t.Fatalf("got %v, want InvalidEventPattern naming the limit of 2", err)
		}
	}
	if err := create("w1", wildcard, ""); err != nil {
		t.Fatal(err)
	}
	if err := create("w2", abWildcard, rule.Disabled); err != nil {
		t.Fatal(err)
	}
	wantLimit(t, create("w3", wildcard, rule.Disabled)) // disabled rules count too
	if err := create("plain", notWildcard, ""); err != nil {
		t.Fatalf("a rule without wildcards is not limited: %v", err)
	}
	// Updating a rule with wildcards does not count it twice; turning another rule into one does.
	if _, _, err := s.Put(ctx, "acct", "orders", rule.Spec{Name: "w1", EventPattern: []byte(abWildcard)}); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.Put(ctx, "acct", "orders", rule.Spec{Name: "plain", EventPattern: []byte(wildcard)})
	wantLimit(t, err)
	_, _, err = s.Put(ctx, "acct", "orders", rule.Spec{Name: "new", EventPattern: []byte(wildcard)})
	wantLimit(t, err)
	if _, err := s.Enable(ctx, "acct", "orders", "w2"); err != nil {
		t.Fatal(err)
	}
	// After the limit is lowered, enabling a rule with wildcards is refused; other rules are not affected.
	s.MaxWildcardRules = 1
	if _, err := s.Disable(ctx, "acct", "orders", "w2"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Enable(ctx, "acct", "orders", "w2")
	if !errors.Is(err, rule.ErrInvalidEventPattern) || !strings.Contains(err.Error(), "at most 1 rules") {
		t.Fatalf("Enable = %v, want InvalidEventPattern", err)
	}
	if _, err := s.Enable(ctx, "acct", "orders", "plain"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enable(ctx, "acct", "orders", "missing"); !errors.Is(err, rule.ErrNotFound) {
		t.Fatalf("Enable of a missing rule = %v", err)
	}
}

func TestWildcardRulesDefaultLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newService(t, 0)
	for i := range rule.DefaultMaxWildcardRules {
		if _, err := s.Create(ctx, "acct", "orders", rule.Spec{Name: fmt.Sprintf("w%d", i), EventPattern: []byte(wildcard)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Create(ctx, "acct", "orders", rule.Spec{Name: "one-more", EventPattern: []byte(wildcard)})
	if !errors.Is(err, rule.ErrInvalidEventPattern) || !strings.Contains(err.Error(), "at most 30 rules") {
		t.Fatalf("got %v, want the default limit of 30", err)
	}
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindInvalid {
		t.Fatalf("got %#v, want a domain error of kind invalid (HTTP 400)", err)
	}
}

func TestUsesWildcard(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{wildcard: true, abWildcard: true, notWildcard: false} {
		r, err := rule.New("acct", "bus", "r", "", []byte(p), rule.CloudEvents, "", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if r.UsesWildcard() != want {
			t.Errorf("%s: UsesWildcard = %v, want %v", p, r.UsesWildcard(), want)
		}
	}
}
