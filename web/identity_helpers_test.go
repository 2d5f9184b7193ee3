package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/password"
	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/apikey"
	"github.com/eventbridge-go/eventbridge/domain/user"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/web"
)

// fastHasher is argon2id with the smallest parameters, for tests that create users.
var fastHasher = func() password.Hasher {
	p := *password.Params
	p.Memory, p.Iterations = 64, 1
	return password.Hasher{Params: &p}
}()

// withIdentity gives s the identity services on db (keys read again at every request: no cache, so tests see
// revocations at once), creates the account "default" and returns an instance administrator's key in it, as the
// control plane's bootstrap does.
func withIdentity(t testing.TB, db *persistence.DB, s *web.Services) string {
	t.Helper()
	accounts := persistence.NewAccountRepository(db)
	s.Accounts = &account.Service{Accounts: accounts}
	s.Users = &user.Service{Users: persistence.NewUserRepository(db), Accounts: accounts, Hasher: fastHasher}
	s.APIKeys = &apikey.Service{Keys: persistence.NewAPIKeyRepository(db), Accounts: accounts, CacheTTL: -1}
	s.Auth = s.APIKeys
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	acc, err := account.New(domain.DefaultAccountID, time.Now())
	require.NoError(t, err)
	require.NoError(t, accounts.Ensure(ctx, acc))
	_, token, err := s.APIKeys.Create(ctx, nil, domain.DefaultAccountID,
		apikey.Spec{Name: "test-admin", Role: access.Admin, InstanceAdmin: true})
	require.NoError(t, err)
	return token
}

// ensureAccount creates the account id unless it exists.
func ensureAccount(t testing.TB, s web.Services, id string) {
	t.Helper()
	acc, err := account.New(id, time.Now())
	require.NoError(t, err)
	require.NoError(t, s.Accounts.Accounts.Ensure(context.Background(), acc))
}

// keyOf creates a key of the account with role (and buses) and returns its token.
func keyOf(t testing.TB, s web.Services, accountID string, role access.Role, buses ...string) string {
	t.Helper()
	ensureAccount(t, s, accountID)
	_, token, err := s.APIKeys.Create(context.Background(), nil, accountID,
		apikey.Spec{Name: "k-" + string(role) + "-" + domain.NewID()[:6], Role: role, Buses: buses})
	require.NoError(t, err)
	return token
}

// as returns the headers of a request with the API key of account (e.accountKeys) and no account header, and the
// header pairs kv.
func (e *env) as(account string, kv ...string) map[string]string {
	key, ok := e.accountKeys[account]
	if !ok {
		panic("no key for account " + account)
	}
	h := map[string]string{"Authorization": "Bearer " + key}
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	return h
}
