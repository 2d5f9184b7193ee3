package persistence_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/source"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
)

type sourceRepos struct {
	repos
	sources *persistence.SourceRepository
}

var sourceCases = []struct {
	name string
	run  func(t *testing.T, r sourceRepos)
}{
	{"source create, get, get by token and list", testSourceCreateGet},
	{"source names are unique per bus and case-sensitive", testSourceNames},
	{"source list pages by name and prefix", testSourceListPaging},
	{"source update stores fn's change, or nothing when fn fails", testSourceUpdate},
	{"source quota per bus under concurrent creations", testSourceQuota},
	{"source delete, and the bus's delete refused while it has sources", testSourceDelete},
	{"source on an unknown bus", testSourceUnknownBus},
}

func TestSourceRepositories(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			db := persistencetest.Open(t, dialect)
			r := sourceRepos{
				repos: repos{db: db, accounts: persistence.NewAccountRepository(db), buses: persistence.NewBusRepository(db),
					rules: persistence.NewRuleRepository(db), targets: persistence.NewTargetRepository(db)},
				sources: persistence.NewSourceRepository(db),
			}
			for _, tc := range sourceCases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, r)
				})
			}
		})
	}
}

// prefixSealer marks sealed values so that tests tell them from plain ones.
type prefixSealer struct{}

func (prefixSealer) Seal(_ domain.SecretOwner, p string) (string, error) {
	return "enc:v1:" + strings.ToUpper(p), nil
}

func newSource(t *testing.T, b *bus.Bus, name string, typ source.Type, cfg map[string]string) *source.Source {
	t.Helper()
	s, err := source.New(b.AccountID(), b.ID(), source.Spec{Name: name, Type: typ, Description: "source " + name, Config: cfg}, time.Now())
	require.NoError(t, err)
	return s
}

func testSourceCreateGet(t *testing.T, r sourceRepos) {
	b := createBus(t, r.repos, newAccount(), "orders")
	s := newSource(t, b, "hook", source.HTTP, map[string]string{"http.methods": "POST,PUT", "http.signature.secret": "s3cret"})
	require.NoError(t, s.Seal([]string{"http.signature.secret"}, prefixSealer{}))
	require.NoError(t, r.sources.Create(ctx, s, 10))
	sched := newSource(t, b, "tick", "schedule", map[string]string{"schedule.expression": "rate(5 minutes)"})
	require.NoError(t, r.sources.Create(ctx, sched, 10))

	got, err := r.sources.Get(ctx, b.ID(), "hook")
	require.NoError(t, err)
	assert.Equal(t, s.ID(), got.ID())
	assert.Equal(t, b.AccountID(), got.AccountID())
	assert.Equal(t, source.HTTP, got.Type())
	assert.Equal(t, "source hook", got.Description())
	assert.Equal(t, source.Enabled, got.State())
	assert.Equal(t, map[string]string{"http.methods": "POST,PUT", "http.signature.secret": "enc:v1:S3CRET"}, got.Config())
	assert.Equal(t, []string{"http.signature.secret"}, got.SecretKeys())
	assert.Equal(t, s.Token(), got.Token())
	assert.Len(t, got.Token(), 43, "a token of 256 bits in URL-safe base64")
	assert.Equal(t, stored(s.CreatedAt()), got.CreatedAt())

	byToken, err := r.sources.GetByToken(ctx, s.Token())
	require.NoError(t, err)
	assert.Equal(t, s.ID(), byToken.ID())
	_, err = r.sources.GetByToken(ctx, source.NewToken())
	assert.ErrorIs(t, err, source.ErrNotFound)

	gotSched, err := r.sources.Get(ctx, b.ID(), "tick")
	require.NoError(t, err)
	assert.Empty(t, gotSched.Token(), "only webhooks have tokens")
	assert.Empty(t, gotSched.SecretKeys())

	all, err := r.sources.ListByBus(ctx, b.ID())
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, "hook", all[0].Name())
	names, err := r.sources.NamesByBus(ctx, b.ID())
	require.NoError(t, err)
	assert.Equal(t, []string{"hook", "tick"}, names)
}

func testSourceNames(t *testing.T, r sourceRepos) {
	b := createBus(t, r.repos, newAccount(), "orders")
	other := createBus(t, r.repos, b.AccountID(), "other")
	require.NoError(t, r.sources.Create(ctx, newSource(t, b, "tick", "schedule", nil), 10))
	err := r.sources.Create(ctx, newSource(t, b, "tick", "schedule", nil), 10)
	assert.ErrorIs(t, err, source.ErrAlreadyExists)
	require.NoError(t, r.sources.Create(ctx, newSource(t, b, "Tick", "schedule", nil), 10), "names are case-sensitive")
	require.NoError(t, r.sources.Create(ctx, newSource(t, other, "tick", "schedule", nil), 10), "names are per bus")
	_, err = r.sources.Get(ctx, b.ID(), "TICK")
	assert.ErrorIs(t, err, source.ErrNotFound)
}

func testSourceListPaging(t *testing.T, r sourceRepos) {
	b := createBus(t, r.repos, newAccount(), "orders")
	for _, n := range []string{"c", "a", "b-1", "b-2", "d"} {
		require.NoError(t, r.sources.Create(ctx, newSource(t, b, n, "schedule", nil), 10))
	}
	var names []string
	page := domain.Page{Limit: 2}
	for {
		ss, next, err := r.sources.List(ctx, b.ID(), page)
		require.NoError(t, err)
		for _, s := range ss {
			names = append(names, s.Name())
		}
		if next == "" {
			break
		}
		page.Token = next
	}
	assert.Equal(t, []string{"a", "b-1", "b-2", "c", "d"}, names)
	ss, next, err := r.sources.List(ctx, b.ID(), domain.Page{Limit: 10, Prefix: "b-"})
	require.NoError(t, err)
	assert.Empty(t, next)
	require.Len(t, ss, 2)
	assert.Equal(t, "b-2", ss[1].Name())
}

func testSourceUpdate(t *testing.T, r sourceRepos) {
	b := createBus(t, r.repos, newAccount(), "orders")
	s := newSource(t, b, "hook", source.HTTP, map[string]string{"http.methods": "POST"})
	require.NoError(t, r.sources.Create(ctx, s, 10))
	oldToken := s.Token()
	later := time.Now().Add(time.Minute)
	got, err := r.sources.Update(ctx, b.ID(), "hook", func(s *source.Source) error {
		s.Disable(later)
		return s.RotateToken(later)
	})
	require.NoError(t, err)
	assert.Equal(t, source.Disabled, got.State())
	assert.NotEqual(t, oldToken, got.Token())
	_, err = r.sources.GetByToken(ctx, oldToken)
	assert.ErrorIs(t, err, source.ErrNotFound, "the former token names nothing")
	reread, err := r.sources.GetByToken(ctx, got.Token())
	require.NoError(t, err)
	assert.Equal(t, source.Disabled, reread.State())
	assert.Equal(t, stored(later), reread.UpdatedAt())

	boom := errors.New("boom")
	_, err = r.sources.Update(ctx, b.ID(), "hook", func(s *source.Source) error {
		s.Enable(time.Now())
		return boom
	})
	assert.ErrorIs(t, err, boom)
	reread, err = r.sources.Get(ctx, b.ID(), "hook")
	require.NoError(t, err)
	assert.Equal(t, source.Disabled, reread.State(), "nothing stored when fn fails")

	_, err = r.sources.Update(ctx, b.ID(), "nope", func(*source.Source) error { return nil })
	assert.ErrorIs(t, err, source.ErrNotFound)
}

func testSourceQuota(t *testing.T, r sourceRepos) {
	b := createBus(t, r.repos, newAccount(), "orders")
	const max = 3
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.sources.Create(ctx, newSource(t, b, fmt.Sprintf("s%d", i), "schedule", nil), max)
		}()
	}
	wg.Wait()
	created, refused := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case errors.Is(err, source.ErrQuotaExceeded):
			refused++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	assert.Equal(t, max, created)
	assert.Equal(t, len(errs)-max, refused)
}

func testSourceDelete(t *testing.T, r sourceRepos) {
	b := createBus(t, r.repos, newAccount(), "orders")
	require.NoError(t, r.sources.Create(ctx, newSource(t, b, "tick", "schedule", nil), 10))
	assert.ErrorIs(t, r.buses.Delete(ctx, b.ID()), bus.ErrNotEmpty, "a bus that a source feeds is not deleted")
	require.NoError(t, r.sources.Delete(ctx, b.ID(), "tick"))
	assert.ErrorIs(t, r.sources.Delete(ctx, b.ID(), "tick"), source.ErrNotFound)
	require.NoError(t, r.buses.Delete(ctx, b.ID()))
}

func testSourceUnknownBus(t *testing.T, r sourceRepos) {
	b, err := bus.New(newAccount(), "ghost", "", bus.Retention{}, time.Now())
	require.NoError(t, err)
	err = r.sources.Create(ctx, newSource(t, b, "tick", "schedule", nil), 10)
	assert.ErrorIs(t, err, bus.ErrNotFound)
}
