package apikey_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/apikey"
)

// memKeys is an in-memory apikey.Repository that counts its reads and writes of last use.
type memKeys struct {
	mu      sync.Mutex
	keys    map[string]*apikey.Key
	reads   int
	touches int
}

func (m *memKeys) Create(_ context.Context, k *apikey.Key, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, o := range m.keys {
		if o.AccountID() == k.AccountID() && o.Name() == k.Name() && o.Live(now) {
			n++
		}
	}
	if n >= apikey.MaxLiveWithName {
		return apikey.ErrTooManyWithName
	}
	m.keys[k.ID()] = k
	return nil
}

func (m *memKeys) Get(_ context.Context, id string) (*apikey.Key, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	k, ok := m.keys[id]
	if !ok {
		return nil, apikey.ErrNotFound
	}
	return k, nil
}

func (m *memKeys) List(context.Context, string, domain.Page) ([]*apikey.Key, string, error) {
	return nil, "", nil
}

func (m *memKeys) Revoke(_ context.Context, accountID, id string, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.keys[id]
	if !ok || k.AccountID() != accountID || k.Revoked() {
		return apikey.ErrNotFound
	}
	m.keys[id] = apikey.UnmarshalFromDatabase(k.ID(), k.AccountID(), k.Name(), k.Role(), k.InstanceAdmin(), k.Buses(),
		k.SecretHash(), k.CreatedBy(), k.CreatedAt(), k.ExpiresAt(), k.LastUsedAt(), now)
	return nil
}

func (m *memKeys) Touch(_ context.Context, id string, t time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.touches++
	k := m.keys[id]
	m.keys[id] = apikey.UnmarshalFromDatabase(k.ID(), k.AccountID(), k.Name(), k.Role(), k.InstanceAdmin(), k.Buses(),
		k.SecretHash(), k.CreatedBy(), k.CreatedAt(), k.ExpiresAt(), t, k.RevokedAt())
	return nil
}

func (m *memKeys) CountInstanceAdminKeys(context.Context, time.Time) (int, error) { return 0, nil }
func (m *memKeys) DeleteAccount(context.Context, string) error                    { return nil }

func (m *memKeys) counts() (reads, touches int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads, m.touches
}

// memAccounts knows every account.
type memAccounts struct{ account.Repository }

func (memAccounts) Get(_ context.Context, id string) (*account.Account, error) {
	return account.UnmarshalFromDatabase(id, time.Time{}, account.Limits{}), nil
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newService(repo *memKeys, c *clock, ttl time.Duration) *apikey.Service {
	return &apikey.Service{Keys: repo, Accounts: memAccounts{}, Clock: c.Now, CacheTTL: ttl}
}

func TestTokenForm(t *testing.T) {
	t.Parallel()
	k, token, err := apikey.New("shop", apikey.Spec{Name: "ci", Role: access.Viewer}, "test", time.Now())
	require.NoError(t, err)
	parts := strings.SplitN(token, "_", 3)
	require.Len(t, parts, 3)
	assert.Equal(t, "ebk", parts[0])
	assert.Equal(t, k.ID(), parts[1])
	assert.Len(t, parts[2], 43, "32 bytes of base64url")
	assert.Equal(t, "ebk_"+k.ID(), k.DisplayPrefix())
	h := k.SecretHash()
	assert.NotContains(t, string(h[:]), parts[2], "the secret is not kept")

	_, token2, err := apikey.New("shop", apikey.Spec{Name: "ci", Role: access.Viewer}, "test", time.Now())
	require.NoError(t, err)
	assert.NotEqual(t, token, token2)

	back, err := apikey.FromToken(token, "shop", apikey.Spec{Name: "ci", Role: access.Viewer}, "test", time.Now())
	require.NoError(t, err)
	assert.Equal(t, k.ID(), back.ID())
	assert.Equal(t, k.SecretHash(), back.SecretHash())
	for _, bad := range []string{"", "ebk_", "ebk_short_" + parts[2], "xyz_" + parts[1] + "_" + parts[2], "ebk_" + parts[1] + "_tooshort",
		"ebk_" + parts[1] + "_" + strings.Repeat("!", 43), "ebk_" + strings.ToUpper(parts[1]) + "_" + parts[2]} {
		_, err := apikey.FromToken(bad, "shop", apikey.Spec{Name: "ci", Role: access.Viewer}, "test", time.Now())
		assert.Errorf(t, err, "%q is not a key", bad)
	}
}

func TestSpecValidation(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for name, spec := range map[string]apikey.Spec{
		"no name":            {Role: access.Viewer},
		"bad name":           {Name: "a b", Role: access.Viewer},
		"no role":            {Name: "x"},
		"unknown role":       {Name: "x", Role: "owner"},
		"expired":            {Name: "x", Role: access.Viewer, ExpiresAt: now.Add(-time.Second)},
		"too far":            {Name: "x", Role: access.Viewer, ExpiresAt: now.Add(11 * 365 * 24 * time.Hour)},
		"buses of a viewer":  {Name: "x", Role: access.Viewer, Buses: []string{"orders"}},
		"bad bus":            {Name: "x", Role: access.Publisher, Buses: []string{"no such!"}},
		"instance non-admin": {Name: "x", Role: access.Editor, InstanceAdmin: true},
		"too many bus names": {Name: "x", Role: access.Publisher, Buses: strings.Split(strings.Repeat("b,", 101), ",")},
	} {
		_, _, err := apikey.New("shop", spec, "test", now)
		assert.ErrorIsf(t, err, domain.ErrValidation, "%s", name)
	}
	k, _, err := apikey.New("shop", apikey.Spec{Name: "x", Role: access.Publisher, Buses: []string{"a", "b", "a"}}, "test", now)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, k.Buses())
}

// TestAuthenticate: every way a token can be wrong gives the same error; a good one gives its principal.
func TestAuthenticate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{now: time.Now()}
	repo := &memKeys{keys: map[string]*apikey.Key{}}
	s := newService(repo, c, 0)
	k, token, err := s.Create(ctx, nil, "shop", apikey.Spec{Name: "ci", Role: access.Publisher, Buses: []string{"orders"},
		ExpiresAt: c.Now().Add(time.Hour)})
	require.NoError(t, err)
	p, err := s.Authenticate(ctx, token)
	require.NoError(t, err)
	assert.Equal(t, k.ID(), p.ID())
	assert.True(t, p.Can("shop", access.PutEvents))
	assert.True(t, p.MayPutOn("orders"))
	assert.False(t, p.MayPutOn("payments"))

	secret := token[len("ebk_"+k.ID()+"_"):]
	for name, bad := range map[string]string{
		"unknown id":   "ebk_" + strings.Repeat("a", 16) + "_" + secret,
		"wrong secret": "ebk_" + k.ID() + "_" + strings.Repeat("A", 43),
		"malformed":    "nope",
		"empty":        "",
	} {
		_, err := s.Authenticate(ctx, bad)
		assert.ErrorIsf(t, err, access.ErrUnauthenticated, "%s", name)
		assert.Equalf(t, access.UnauthenticatedMessage, err.Error(), "%s: one message", name)
	}
	c.add(2 * time.Hour)
	_, err = s.Authenticate(ctx, token)
	assert.ErrorIs(t, err, access.ErrUnauthenticated, "expired")
}

// TestCacheAndRevocation: a key is read from the repository at most once per cache lifetime; a revocation on this
// service is seen at once, one on another service (another replica) once the lifetime has passed.
func TestCacheAndRevocation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{now: time.Now()}
	repo := &memKeys{keys: map[string]*apikey.Key{}}
	replica1, replica2 := newService(repo, c, 0), newService(repo, c, 0)
	k, token, err := replica1.Create(ctx, nil, "shop", apikey.Spec{Name: "ci", Role: access.Viewer})
	require.NoError(t, err)
	for range 100 {
		_, err := replica2.Authenticate(ctx, token)
		require.NoError(t, err)
	}
	reads, _ := repo.counts()
	assert.Equal(t, 1, reads, "read once for 100 requests within the cache's lifetime")

	require.NoError(t, replica1.Revoke(ctx, "shop", k.ID()))
	_, err = replica1.Authenticate(ctx, token)
	assert.ErrorIs(t, err, access.ErrUnauthenticated, "refused at once where it was revoked")
	_, err = replica2.Authenticate(ctx, token)
	assert.NoError(t, err, "the other replica believes its cache within its lifetime")
	c.add(apikey.DefaultCacheTTL)
	_, err = replica2.Authenticate(ctx, token)
	assert.ErrorIs(t, err, access.ErrUnauthenticated, "and reads the key again after it")
}

// TestLastUse: a key's last use is written at most once per TouchInterval.
func TestLastUse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{now: time.Now()}
	repo := &memKeys{keys: map[string]*apikey.Key{}}
	s := newService(repo, c, 0)
	k, token, err := s.Create(ctx, nil, "shop", apikey.Spec{Name: "ci", Role: access.Viewer})
	require.NoError(t, err)
	for range 50 {
		_, err := s.Authenticate(ctx, token)
		require.NoError(t, err)
		c.add(time.Second)
	}
	_, touches := repo.counts()
	assert.Equal(t, 1, touches, "50 uses in 50 seconds: one write")
	c.add(time.Minute)
	_, err = s.Authenticate(ctx, token)
	require.NoError(t, err)
	_, touches = repo.counts()
	assert.Equal(t, 2, touches)
	got, err := repo.Get(ctx, k.ID())
	require.NoError(t, err)
	assert.Equal(t, domain.Clock(c.Now).Now(), got.LastUsedAt())
}

// TestRotation: two live keys of one name, not three; a revoked one does not count. Only an instance
// administrator (or the system) makes an instance administrator's key.
func TestRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{now: time.Now()}
	repo := &memKeys{keys: map[string]*apikey.Key{}}
	s := newService(repo, c, 0)
	spec := apikey.Spec{Name: "ci", Role: access.Viewer}
	k1, _, err := s.Create(ctx, nil, "shop", spec)
	require.NoError(t, err)
	_, _, err = s.Create(ctx, nil, "shop", spec)
	require.NoError(t, err)
	_, _, err = s.Create(ctx, nil, "shop", spec)
	assert.ErrorIs(t, err, apikey.ErrTooManyWithName)
	require.NoError(t, s.Revoke(ctx, "shop", k1.ID()))
	_, _, err = s.Create(ctx, nil, "shop", spec)
	assert.NoError(t, err)

	admin := access.KeyPrincipal("x", "shop-admin", "shop", access.Admin, false, nil, time.Time{})
	_, _, err = s.Create(ctx, admin, "shop", apikey.Spec{Name: "root", Role: access.Admin, InstanceAdmin: true})
	assert.ErrorIs(t, err, access.ErrForbidden)
	_, err = s.Get(ctx, "other", k1.ID())
	assert.ErrorIs(t, err, apikey.ErrNotFound, "a key of another account is not found")
}
