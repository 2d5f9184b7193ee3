package persistence_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/connect"
	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
	"github.com/eventbridge-go/eventbridge/rpc"
)

// connRepos are the repositories of one database for the connection and API destination cases.
type connRepos struct {
	repos
	connections  *persistence.ConnectionRepository
	destinations *persistence.APIDestinationRepository
	sealer       *connect.Sealer
	key          []byte
}

var connectionCases = []struct {
	name string
	run  func(t *testing.T, r connRepos)
}{
	{"connection create, get and list", testConnectionCreateGetList},
	{"connection names are unique per account and case-sensitive", testConnectionNames},
	{"connection list pages by name", testConnectionListPaging},
	{"connection update stores fn's change, or nothing when fn fails", testConnectionUpdate},
	{"connection quota", testConnectionQuota},
	{"connection quota under concurrent creations", testConnectionQuotaConcurrent},
	{"connection secrets are stored as ciphertext only", testConnectionCiphertextOnly},
	{"connection delete, refused while an API destination uses it", testConnectionDelete},
	{"API destination create, get, list and update", testAPIDestinationCRUD},
	{"API destination of a missing connection", testAPIDestinationMissingConnection},
	{"API destination list pages by name", testAPIDestinationListPaging},
	{"API destination quota", testAPIDestinationQuota},
	{"API destination targets using it", testAPIDestinationTargetsUsing},
}

func TestConnectionRepositories(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			r := openConnRepos(t, dialect)
			for _, tc := range connectionCases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, r)
				})
			}
		})
	}
}

// --- fixtures

// openConnRepos opens a fresh database of dialect with the repositories the connection cases use.
func openConnRepos(t *testing.T, dialect string) connRepos {
	t.Helper()
	key := bytes.Repeat([]byte{0x42}, rpc.MasterKeySize)
	sealer, err := connect.NewSealer(key)
	require.NoError(t, err)
	db := persistencetest.Open(t, dialect)
	return connRepos{
		repos: repos{db: db, accounts: persistence.NewAccountRepository(db), buses: persistence.NewBusRepository(db),
			rules: persistence.NewRuleRepository(db), targets: persistence.NewTargetRepository(db)},
		connections:  persistence.NewConnectionRepository(db),
		destinations: persistence.NewAPIDestinationRepository(db),
		sealer:       sealer,
		key:          key,
	}
}

func ensureAccount(t *testing.T, r connRepos, id string) {
	t.Helper()
	a, err := account.New(id, time.Now())
	require.NoError(t, err)
	require.NoError(t, r.accounts.Ensure(ctx, a))
}

func oauthSpec(name string) connection.Spec {
	return connection.Spec{
		Name: name, Description: "conn " + name, AuthorizationType: connection.OAuthClientCredentials,
		OAuth: &connection.OAuthParameters{
			AuthorizationEndpoint: "https://auth.example.com/token", HTTPMethod: "POST", ClientID: "client-" + name,
			ClientSecret: "client-secret-" + name, Scopes: []string{"orders.read", "orders.write"},
			HTTPParameters: connection.HTTPParameters{BodyParameters: []connection.Parameter{
				{Key: "audience", Value: "shop"}, {Key: "assertion", Value: "oauth-param-secret-" + name, IsValueSecret: true}}},
		},
		InvocationHTTPParameters: connection.HTTPParameters{
			HeaderParameters:      []connection.Parameter{{Key: "X-Team", Value: "shop"}, {Key: "X-Token", Value: "header-secret-" + name, IsValueSecret: true}},
			QueryStringParameters: []connection.Parameter{{Key: "v", Value: "2"}},
		},
	}
}

func newConnection(t *testing.T, r connRepos, accountID string, spec connection.Spec) *connection.Connection {
	t.Helper()
	c, err := connection.New(accountID, spec, r.sealer, time.Now())
	require.NoError(t, err)
	return c
}

func createConnection(t *testing.T, r connRepos, accountID, name string) *connection.Connection {
	t.Helper()
	ensureAccount(t, r, accountID)
	c := newConnection(t, r, accountID, oauthSpec(name))
	require.NoError(t, r.connections.Create(ctx, c, 100))
	return c
}

func createDestination(t *testing.T, r connRepos, c *connection.Connection, name string) *apidestination.APIDestination {
	t.Helper()
	d, err := apidestination.New(c.AccountID(), apidestination.Spec{Name: name, Connection: c.Name(),
		InvocationEndpoint: "https://api.example.com/orders/*", HTTPMethod: "PUT", InvocationRateLimitPerSecond: 10},
		apidestination.ConnectionRef{ID: c.ID(), Name: c.Name()}, time.Now())
	require.NoError(t, err)
	require.NoError(t, r.destinations.Create(ctx, d, 100))
	return d
}

func assertSameConnection(t *testing.T, want, got *connection.Connection) {
	t.Helper()
	assert.Equal(t, want.ID(), got.ID())
	assert.Equal(t, want.AccountID(), got.AccountID())
	assert.Equal(t, want.Name(), got.Name())
	assert.Equal(t, want.Description(), got.Description())
	assert.Equal(t, want.AuthorizationType(), got.AuthorizationType())
	assert.Equal(t, want.Sealed(), got.Sealed())
	assert.Equal(t, stored(want.CreatedAt()), got.CreatedAt())
	assert.Equal(t, stored(want.UpdatedAt()), got.UpdatedAt())
	assert.Equal(t, want.State(), got.State())
	assert.Equal(t, stored(want.AuthorizedAt()), got.AuthorizedAt())
	assert.Equal(t, stored(want.DeauthorizedAt()), got.DeauthorizedAt())
}

func assertSameDestination(t *testing.T, want, got *apidestination.APIDestination) {
	t.Helper()
	assert.Equal(t, want.ID(), got.ID())
	assert.Equal(t, want.AccountID(), got.AccountID())
	assert.Equal(t, want.Name(), got.Name())
	assert.Equal(t, want.Description(), got.Description())
	assert.Equal(t, want.Connection(), got.Connection())
	assert.Equal(t, want.InvocationEndpoint(), got.InvocationEndpoint())
	assert.Equal(t, want.HTTPMethod(), got.HTTPMethod())
	assert.Equal(t, want.InvocationRateLimitPerSecond(), got.InvocationRateLimitPerSecond())
	assert.Equal(t, stored(want.CreatedAt()), got.CreatedAt())
	assert.Equal(t, stored(want.UpdatedAt()), got.UpdatedAt())
}

// --- connections

func testConnectionCreateGetList(t *testing.T, r connRepos) {
	acc := newAccount()
	c := createConnection(t, r, acc, "shop")
	got, err := r.connections.Get(ctx, acc, "shop")
	require.NoError(t, err)
	assertSameConnection(t, c, got)

	basic := newConnection(t, r, acc, connection.Spec{Name: "basic", AuthorizationType: connection.Basic,
		Basic: &connection.BasicAuth{Username: "u", Password: "p"}})
	require.NoError(t, r.connections.Create(ctx, basic, 100))
	key := newConnection(t, r, acc, connection.Spec{Name: "key", AuthorizationType: connection.APIKey,
		APIKey: &connection.APIKeyAuth{APIKeyName: "X-Api-Key", APIKeyValue: "k"}})
	require.NoError(t, r.connections.Create(ctx, key, 100))

	list, next, err := r.connections.List(ctx, acc, domain.Page{})
	require.NoError(t, err)
	assert.Empty(t, next)
	require.Len(t, list, 3)
	assertSameConnection(t, basic, list[0])
	assertSameConnection(t, key, list[1])
	assertSameConnection(t, c, list[2])

	_, err = r.connections.Get(ctx, newAccount(), "shop")
	assert.ErrorIs(t, err, connection.ErrNotFound, "another account does not see it")
}

func testConnectionNames(t *testing.T, r connRepos) {
	acc := newAccount()
	createConnection(t, r, acc, "shop")
	err := r.connections.Create(ctx, newConnection(t, r, acc, oauthSpec("shop")), 100)
	assert.ErrorIs(t, err, connection.ErrAlreadyExists)
	createConnection(t, r, acc, "Shop")
	createConnection(t, r, newAccount(), "shop")
	_, err = r.connections.Get(ctx, acc, "SHOP")
	assert.ErrorIs(t, err, connection.ErrNotFound)
}

func testConnectionListPaging(t *testing.T, r connRepos) {
	acc := newAccount()
	for _, n := range []string{"e", "a", "c", "b", "d"} {
		createConnection(t, r, acc, n)
	}
	var names []string
	page := domain.Page{Limit: 2}
	for range 5 {
		list, next, err := r.connections.List(ctx, acc, page)
		require.NoError(t, err)
		for _, c := range list {
			names = append(names, c.Name())
		}
		if next == "" {
			break
		}
		page.Token = next
	}
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, names)
}

func testConnectionUpdate(t *testing.T, r connRepos) {
	acc := newAccount()
	c := createConnection(t, r, acc, "shop")
	later := time.Now().Add(time.Hour)
	spec := c.Redacted()
	spec.Description = "changed"
	spec.OAuth.ClientID = "other"
	got, err := r.connections.Update(ctx, acc, "shop", func(c *connection.Connection) error {
		return c.Change(spec, r.sealer, later)
	})
	require.NoError(t, err)
	read, err := r.connections.Get(ctx, acc, "shop")
	require.NoError(t, err)
	assertSameConnection(t, got, read)
	assert.Equal(t, "changed", read.Description())
	assert.Equal(t, "other", read.Sealed().OAuth.ClientID)
	assert.Equal(t, c.Sealed().OAuth.ClientSecret, read.Sealed().OAuth.ClientSecret, "an omitted secret keeps its ciphertext")

	boom := errors.New("boom")
	_, err = r.connections.Update(ctx, acc, "shop", func(c *connection.Connection) error {
		require.NoError(t, c.Change(connection.Spec{AuthorizationType: connection.Basic,
			Basic: &connection.BasicAuth{Username: "u", Password: "p"}}, r.sealer, later))
		return boom
	})
	assert.ErrorIs(t, err, boom)
	again, err := r.connections.Get(ctx, acc, "shop")
	require.NoError(t, err)
	assertSameConnection(t, read, again)

	_, err = r.connections.Update(ctx, acc, "missing", func(*connection.Connection) error { return nil })
	assert.ErrorIs(t, err, connection.ErrNotFound)

	// The state and its times are stored: DEAUTHORIZED without secrets, then AUTHORIZED again.
	deauthorized, err := r.connections.Update(ctx, acc, "shop", func(c *connection.Connection) error {
		c.Deauthorize(later.Add(time.Minute))
		return nil
	})
	require.NoError(t, err)
	read, err = r.connections.Get(ctx, acc, "shop")
	require.NoError(t, err)
	assertSameConnection(t, deauthorized, read)
	assert.Equal(t, connection.Deauthorized, read.State())
	assert.Empty(t, read.Sealed().OAuth.ClientSecret)
	spec = oauthSpec("shop")
	_, err = r.connections.Update(ctx, acc, "shop", func(c *connection.Connection) error {
		return c.Change(spec, r.sealer, later.Add(2*time.Minute))
	})
	require.NoError(t, err)
	read, err = r.connections.Get(ctx, acc, "shop")
	require.NoError(t, err)
	assert.Equal(t, connection.Authorized, read.State())
	assert.Equal(t, stored(later.Add(2*time.Minute)), read.AuthorizedAt())
	assert.True(t, read.DeauthorizedAt().IsZero())
}

func testConnectionQuota(t *testing.T, r connRepos) {
	acc := newAccount()
	ensureAccount(t, r, acc)
	for i := range 3 {
		require.NoError(t, r.connections.Create(ctx, newConnection(t, r, acc, oauthSpec(fmt.Sprint("c", i))), 3))
	}
	err := r.connections.Create(ctx, newConnection(t, r, acc, oauthSpec("c3")), 3)
	assert.ErrorIs(t, err, connection.ErrQuotaExceeded)
	createConnection(t, r, newAccount(), "c3") // the quota is per account
}

func testConnectionQuotaConcurrent(t *testing.T, r connRepos) {
	acc := newAccount()
	ensureAccount(t, r, acc)
	const max, tries = 3, 8
	errs := make([]error, tries)
	var wg sync.WaitGroup
	for i := range tries {
		c := newConnection(t, r, acc, oauthSpec(fmt.Sprint("c", i)))
		wg.Go(func() { errs[i] = r.connections.Create(ctx, c, max) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else {
			assert.ErrorIs(t, err, connection.ErrQuotaExceeded)
		}
	}
	assert.Equal(t, max, ok)
	list, _, err := r.connections.List(ctx, acc, domain.Page{})
	require.NoError(t, err)
	assert.Len(t, list, max)
}

// testConnectionCiphertextOnly reads the raw auth_parameters column: every secret is sealed for its owner (enc:v2:,
// the connection and field), and no plaintext secret is there.
func testConnectionCiphertextOnly(t *testing.T, r connRepos) {
	acc := newAccount()
	c := createConnection(t, r, acc, "shop")
	var raw string
	require.NoError(t, r.db.SQL().QueryRowContext(ctx, "SELECT auth_parameters FROM connections WHERE id = ?", c.ID()).Scan(&raw))
	for _, secret := range []string{"client-secret-shop", "oauth-param-secret-shop", "header-secret-shop"} {
		assert.NotContains(t, raw, secret)
	}
	assert.Equal(t, 3, strings.Count(raw, rpc.SecretPrefixV2), "three sealed secrets: %s", raw)
	assert.Contains(t, raw, "client-shop", "what is not secret is stored as it is")
	sealer, err := connect.NewSealer(r.key)
	require.NoError(t, err)
	opened, err := c.Opened(sealer)
	require.NoError(t, err)
	assert.Equal(t, "client-secret-shop", opened.OAuth.ClientSecret)
}

func testConnectionDelete(t *testing.T, r connRepos) {
	acc := newAccount()
	c := createConnection(t, r, acc, "shop")
	d := createDestination(t, r, c, "orders")
	users, err := r.destinations.DestinationsUsing(ctx, c.ID())
	require.NoError(t, err)
	assert.Equal(t, []string{"orders"}, users)

	err = r.connections.Delete(ctx, c.ID())
	assert.ErrorIs(t, err, connection.ErrInUse, "the foreign key refuses it")
	require.NoError(t, r.destinations.Delete(ctx, d.ID()))
	assert.ErrorIs(t, r.destinations.Delete(ctx, d.ID()), apidestination.ErrNotFound)
	require.NoError(t, r.connections.Delete(ctx, c.ID()))
	assert.ErrorIs(t, r.connections.Delete(ctx, c.ID()), connection.ErrNotFound)
	_, err = r.connections.Get(ctx, acc, "shop")
	assert.ErrorIs(t, err, connection.ErrNotFound)
}

// --- API destinations

func testAPIDestinationCRUD(t *testing.T, r connRepos) {
	acc := newAccount()
	c := createConnection(t, r, acc, "shop")
	other := createConnection(t, r, acc, "other")
	d := createDestination(t, r, c, "orders")
	got, err := r.destinations.Get(ctx, acc, "orders")
	require.NoError(t, err)
	assertSameDestination(t, d, got)
	assert.Equal(t, "shop", got.Connection().Name, "the connection's name is read back")

	_, err = r.destinations.Get(ctx, newAccount(), "orders")
	assert.ErrorIs(t, err, apidestination.ErrNotFound)
	err = r.destinations.Create(ctx, d, 100)
	assert.ErrorIs(t, err, apidestination.ErrAlreadyExists)

	updated, err := r.destinations.Update(ctx, acc, "orders", func(d *apidestination.APIDestination) error {
		return d.Change(apidestination.Spec{Description: "x", Connection: "other", InvocationEndpoint: "http://x/y", HTTPMethod: "GET"},
			apidestination.ConnectionRef{ID: other.ID(), Name: other.Name()}, time.Now().Add(time.Minute))
	})
	require.NoError(t, err)
	read, err := r.destinations.Get(ctx, acc, "orders")
	require.NoError(t, err)
	assertSameDestination(t, updated, read)
	assert.Equal(t, "other", read.Connection().Name)
	assert.Equal(t, apidestination.DefaultRateLimitPerSecond, read.InvocationRateLimitPerSecond())

	boom := errors.New("boom")
	_, err = r.destinations.Update(ctx, acc, "orders", func(*apidestination.APIDestination) error { return boom })
	assert.ErrorIs(t, err, boom)
	_, err = r.destinations.Update(ctx, acc, "missing", func(*apidestination.APIDestination) error { return nil })
	assert.ErrorIs(t, err, apidestination.ErrNotFound)
}

func testAPIDestinationMissingConnection(t *testing.T, r connRepos) {
	acc := newAccount()
	ensureAccount(t, r, acc)
	d, err := apidestination.New(acc, apidestination.Spec{Name: "orders", Connection: "gone", InvocationEndpoint: "https://x/y", HTTPMethod: "POST"},
		apidestination.ConnectionRef{ID: domain.NewID(), Name: "gone"}, time.Now())
	require.NoError(t, err)
	err = r.destinations.Create(ctx, d, 100)
	assert.ErrorIs(t, err, connection.ErrNotFound)
	e, ok := domain.As(err)
	require.True(t, ok)
	assert.Equal(t, "connection", e.Field)
}

func testAPIDestinationListPaging(t *testing.T, r connRepos) {
	acc := newAccount()
	c := createConnection(t, r, acc, "shop")
	for _, n := range []string{"e", "a", "c", "b", "d"} {
		createDestination(t, r, c, n)
	}
	createDestination(t, r, createConnection(t, r, newAccount(), "shop"), "a") // another account's
	var names []string
	page := domain.Page{Limit: 2}
	for range 5 {
		list, next, err := r.destinations.List(ctx, acc, page)
		require.NoError(t, err)
		for _, d := range list {
			names = append(names, d.Name())
			assert.Equal(t, "shop", d.Connection().Name)
		}
		if next == "" {
			break
		}
		page.Token = next
	}
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, names)
}

func testAPIDestinationQuota(t *testing.T, r connRepos) {
	acc := newAccount()
	c := createConnection(t, r, acc, "shop")
	mk := func(name string) *apidestination.APIDestination {
		d, err := apidestination.New(acc, apidestination.Spec{Name: name, Connection: "shop", InvocationEndpoint: "https://x/y", HTTPMethod: "POST"},
			apidestination.ConnectionRef{ID: c.ID(), Name: "shop"}, time.Now())
		require.NoError(t, err)
		return d
	}
	require.NoError(t, r.destinations.Create(ctx, mk("a"), 2))
	require.NoError(t, r.destinations.Create(ctx, mk("b"), 2))
	assert.ErrorIs(t, r.destinations.Create(ctx, mk("c"), 2), apidestination.ErrQuotaExceeded)
}

// testAPIDestinationTargetsUsing sets the api_destination column of target rows (as api-destination targets
// will) and finds them, in the account only.
func testAPIDestinationTargetsUsing(t *testing.T, r connRepos) {
	acc := newAccount()
	refs, err := r.destinations.TargetsUsing(ctx, acc, "orders")
	require.NoError(t, err)
	assert.Empty(t, refs)

	b := createBus(t, r.repos, acc, "shop")
	ru := createRule(t, r.repos, b, "created")
	t1 := createTarget(t, r.repos, ru, "t1")
	t2 := createTarget(t, r.repos, ru, "t2")
	createTarget(t, r.repos, ru, "t3") // another destination
	otherAcc := newAccount()
	ob := createBus(t, r.repos, otherAcc, "shop")
	ot := createTarget(t, r.repos, createRule(t, r.repos, ob, "created"), "t1")
	for id, dest := range map[string]string{t1.ID(): "orders", t2.ID(): "orders", ot.ID(): "orders"} {
		_, err := r.db.SQL().ExecContext(ctx, "UPDATE targets SET api_destination = ? WHERE id = ?", dest, id)
		require.NoError(t, err)
	}
	refs, err = r.destinations.TargetsUsing(ctx, acc, "orders")
	require.NoError(t, err)
	assert.Equal(t, []apidestination.TargetRef{{Bus: "shop", Rule: "created", Target: "t1"}, {Bus: "shop", Rule: "created", Target: "t2"}}, refs)
	refs, err = r.destinations.TargetsUsing(ctx, acc, "Orders")
	require.NoError(t, err)
	assert.Empty(t, refs, "names are case-sensitive")
}

// The stamps of connections and API destinations change with every create, update and delete, and only then (the
// runtime adapter skips a periodic pass while they are unchanged).
func TestConnectionAndAPIDestinationStamps(t *testing.T) {
	t.Parallel()
	for _, dialect := range persistencetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			r := openConnRepos(t, dialect)
			stamps := func() (string, string) {
				t.Helper()
				c, err := r.connections.Stamp(ctx)
				require.NoError(t, err)
				d, err := r.destinations.Stamp(ctx)
				require.NoError(t, err)
				return c, d
			}
			c0, d0 := stamps()
			acc := newAccount()
			c := createConnection(t, r, acc, "shop")
			c1, d1 := stamps()
			assert.NotEqual(t, c0, c1, "a connection created")
			assert.Equal(t, d0, d1)
			c2, d2 := stamps()
			assert.Equal(t, c1, c2, "nothing changed")
			assert.Equal(t, d1, d2)

			spec := c.Redacted()
			spec.Description = "changed"
			_, err := r.connections.Update(ctx, acc, "shop", func(c *connection.Connection) error {
				return c.Change(spec, r.sealer, time.Now())
			})
			require.NoError(t, err)
			c3, _ := stamps()
			assert.NotEqual(t, c2, c3, "a connection changed")

			d := createDestination(t, r, c, "orders")
			_, d4 := stamps()
			assert.NotEqual(t, d2, d4, "an API destination created")
			_, err = r.destinations.Update(ctx, acc, "orders", func(d *apidestination.APIDestination) error {
				return d.Change(apidestination.Spec{Name: "orders", Connection: "shop",
					InvocationEndpoint: "https://api.example.com/v2/*", HTTPMethod: "PUT"},
					apidestination.ConnectionRef{ID: c.ID(), Name: c.Name()}, time.Now())
			})
			require.NoError(t, err)
			_, d5 := stamps()
			assert.NotEqual(t, d4, d5, "an API destination changed")
			require.NoError(t, r.destinations.Delete(ctx, d.ID()))
			_, d6 := stamps()
			assert.NotEqual(t, d5, d6, "an API destination deleted")
			require.NoError(t, r.connections.Delete(ctx, c.ID()))
			c7, _ := stamps()
			assert.NotEqual(t, c3, c7, "a connection deleted")
		})
	}
}
