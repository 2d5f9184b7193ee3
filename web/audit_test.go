package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/audit"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
	"github.com/eventbridge-go/eventbridge/web"
)

// notControlOperations are the only operations without an audit entry: health, the API's documentation,
// PutEvents and webhook intake (metrics count those two), the scrapes of the metrics (a reader every few
// seconds; they count themselves), and the Amazon EventBridge API's answer to a request that names none of its
// operations (public: no caller, nothing done). Any other operation that writes none fails
// TestEveryControlOperationIsAudited.
var notControlOperations = map[string]bool{
	"health.live": true, "health.ready": true, "docs.swagger": true,
	"events.put": true, "rocketmq.putEvents": true, "aws.putEvents": true, "webhooks.receive": true, "metrics.read": true,
	"aws.unknownOperation": true,
}

// auditEntries returns every entry of the audit log whose operation is op ("" for all), newest first.
func (e *env) auditEntries(t *testing.T, op string) []audit.Entry {
	t.Helper()
	var all []audit.Entry
	page := domain.Page{Limit: domain.MaxPageLimit}
	for {
		es, next, err := e.services.AuditLog.List(context.Background(), audit.Filter{AllAccounts: true, Operation: op}, page)
		require.NoError(t, err)
		all = append(all, es...)
		if next == "" {
			return all
		}
		page.Token = next
	}
}

// TestEveryControlOperationIsAudited: every operation of every dialect, called once, writes exactly one audit
// entry naming it, its caller, account, resource and outcome; but the operations of notControlOperations, which
// write none. The calls are an instance administrator's, but on the Amazon EventBridge API, where an instance
// administrator has no credential: those are signed by an access key of matrixAccount with role admin.
func TestEveryControlOperationIsAudited(t *testing.T) {
	t.Parallel()
	e := withDeadLetters(withRuntime(newEnv(t, natsServer(t), persistence.SQLite)))
	e.exactAccounts = true
	awsCaller := keyOf(t, e.services, matrixAccount, access.Admin)
	awsKey, ok := e.accessKeyOf(t, awsCaller)
	require.True(t, ok)
	require.NotNil(t, awsKey, "an account's API key has an access key")
	audited := 0
	for _, d := range allDialects() {
		for _, op := range d.Operations {
			t.Run(op.Name+" "+op.Method+" "+op.Route(), func(t *testing.T) {
				require.Equalf(t, !notControlOperations[op.Name], op.Audited(),
					"%s is a control operation exactly when it is audited", op.Name)
				before := len(e.auditEntries(t, op.Name))
				method, url := requestOf(op)
				headers := map[string]string{"Content-Type": "application/json", "X-Account-Id": ""}
				if d.Name == "aws" {
					headers["Authorization"] = "Bearer " + awsCaller // signed by awsKey
				}
				resp := e.do(t, method, url, headers, "{}")
				after := e.auditEntries(t, op.Name)
				if !op.Audited() {
					assert.Len(t, after, before, "%s writes no entry", op.Name)
					return
				}
				require.Len(t, after, before+1, "%s %s (%d) writes one entry", method, url, resp.Status)
				audited++
				got := after[0]
				assert.Equal(t, op.Name, got.Operation)
				assert.Equal(t, resp.Status, got.Status)
				assert.Equal(t, audit.SourceControlPlane, got.Source)
				assert.NotEmpty(t, got.ID)
				assert.WithinDuration(t, time.Now(), got.Time, time.Minute)
				assert.Equal(t, "192.0.2.1", got.ClientAddr, "httptest's client address")
				if resp.Status >= 400 {
					assert.Equal(t, audit.Failure, got.Outcome)
					assert.NotEmpty(t, got.ErrorCode, "a failure names its code: %s", resp.Body)
				} else {
					assert.Equal(t, audit.Success, got.Outcome)
				}
				if op.Public {
					assert.Equal(t, audit.ActorAnonymous, got.ActorKind, "signing in with no valid name")
					return
				}
				if d.Name == "aws" {
					// The access key is the actor: its principal is a key's, of its account.
					assert.NotEqualf(t, http.StatusForbidden, resp.Status, "%s is authenticated: %s", op.Name, resp.Body)
					assert.Equal(t, string(access.KindAccessKey), got.ActorKind)
					assert.Equal(t, awsKey.key.ID(), got.ActorID)
					assert.Equal(t, awsKey.key.Name(), got.ActorName)
					assert.Equal(t, matrixAccount, got.AccountID)
					assert.NotContains(t, got.Resource, "#", "the resource is named, not the routed path")
					assert.NotEmpty(t, got.Resource)
					return
				}
				assert.Equal(t, string(access.KindAPIKey), got.ActorKind)
				assert.Equal(t, "test-admin", got.ActorName)
				if op.Permission.Scope() == access.ScopeAccount && resp.Status != http.StatusUnauthorized {
					want := domain.DefaultAccountID
					if strings.Contains(op.Path, ":account") {
						want = matrixAccount
					}
					assert.Equal(t, want, got.AccountID)
				}
				assert.NotEmpty(t, got.Resource)
			})
		}
	}
	assert.Greater(t, audited, 100)
}

// TestAuditEntries: what entries say, in both dialects: the resource a create names, the actor of a user's session
// and of a failed sign-in, failures with their codes, and no credential anywhere in the log or the router's log.
func TestAuditEntries(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, persistence.SQLite, web.Config{})
	e.user(t, "alice", access.Admin)
	const (
		password       = "password-alice"
		connectionPass = "c0nnection-pa55word"
		headerSecret   = "Bearer h3ader-secret"
		signingSecret  = "s1gning-secret-value"
	)
	must := func(status int, resp *response) *response {
		t.Helper()
		require.Equal(t, status, resp.Status, string(resp.Body))
		return resp
	}
	must(http.StatusCreated, e.do(t, http.MethodPost, "/api/v1/buses", nil, map[string]any{"name": "orders"}))
	must(http.StatusConflict, e.do(t, http.MethodPost, "/api/v1/buses", nil, map[string]any{"name": "orders"}))
	must(http.StatusCreated, e.do(t, http.MethodPost, "/api/v1/buses/orders/rules", nil, map[string]any{"name": "paid",
		"eventPattern": map[string]any{"type": []string{"paid"}}}))
	must(http.StatusCreated, e.do(t, http.MethodPost, "/api/v1/connections", nil, map[string]any{"name": "shop",
		"authorizationType": "BASIC", "authParameters": map[string]any{"basicAuthParameters": map[string]any{
			"username": "u", "password": connectionPass}}}))
	must(http.StatusCreated, e.do(t, http.MethodPut, "/api/v1/buses/orders/rules/paid/targets/hook", nil, map[string]any{
		"type": "http", "config": map[string]any{"url": "https://example.com/", "headers": map[string]any{"Authorization": headerSecret}}}))
	src := must(http.StatusCreated, e.do(t, http.MethodPost, "/api/v1/buses/orders/sources", nil, map[string]any{"name": "gh",
		"type": "http", "config": map[string]any{"http.signature.scheme": "github", "http.signature.secret": signingSecret}}))
	var source struct{ Webhook struct{ Token string } }
	require.NoError(t, json.Unmarshal(src.Body, &source))
	key := must(http.StatusCreated, e.do(t, http.MethodPost, "/api/v1/api-keys", nil, map[string]any{"name": "ci", "role": "viewer"}))
	var created struct{ ID, Secret string }
	require.NoError(t, json.Unmarshal(key.Body, &created))
	must(http.StatusOK, e.do(t, http.MethodPost, "/bus/getEventBus", nil, map[string]any{"eventBusName": "orders"}))
	must(http.StatusUnauthorized, e.do(t, http.MethodPost, "/api/v1/webhooks/"+source.Webhook.Token, nil, map[string]any{"x": 1})) // unsigned

	b := e.browser(t)
	b.addr = "198.51.100.4:1234"
	require.Equal(t, http.StatusUnauthorized, b.signIn("alice", "wrong-"+password).Code)
	require.Equal(t, http.StatusUnauthorized, b.signIn(password, password).Code) // a password typed as the name
	require.Equal(t, http.StatusCreated, b.signIn("alice", password).Code)
	require.Equal(t, http.StatusCreated, b.request(http.MethodPost, "/api/v1/buses", `{"name": "by-alice"}`).Code)

	byOp := map[string][]audit.Entry{}
	for _, en := range e.auditEntries(t, "") {
		byOp[en.Operation] = append(byOp[en.Operation], en)
	}
	creates := byOp["buses.create"]
	require.Len(t, creates, 3)
	assert.Equal(t, "buses/by-alice", creates[0].Resource)
	assert.Equal(t, "user", creates[0].ActorKind)
	assert.Equal(t, "alice", creates[0].ActorName)
	assert.Equal(t, "198.51.100.4", creates[0].ClientAddr)
	assert.Equal(t, audit.Failure, creates[1].Outcome)
	assert.Equal(t, "BusAlreadyExists", creates[1].ErrorCode)
	assert.Equal(t, http.StatusConflict, creates[1].Status)
	assert.Equal(t, "buses/orders", creates[2].Resource)
	assert.Equal(t, "default", creates[2].AccountID)
	assert.Equal(t, "buses/orders/rules/paid", byOp["rules.create"][0].Resource)
	assert.Equal(t, "buses/orders/rules/paid/targets/hook", byOp["targets.put"][0].Resource)
	assert.Equal(t, "api-keys/"+created.ID, byOp["apiKeys.create"][0].Resource)
	assert.Equal(t, "buses/orders", byOp["rocketmq.getEventBus"][0].Resource)
	assert.Empty(t, byOp["webhooks.receive"], "webhook intake is not a control operation")

	signIns := byOp["session.create"]
	require.Len(t, signIns, 3)
	assert.Equal(t, audit.Success, signIns[0].Outcome)
	assert.Equal(t, "alice", signIns[0].ActorName)
	assert.Equal(t, "user", signIns[0].ActorKind)
	assert.Equal(t, audit.Failure, signIns[1].Outcome)
	assert.Equal(t, audit.ActorAnonymous, signIns[1].ActorKind)
	assert.Empty(t, signIns[1].ActorName, "a password typed as the user name is not kept")
	assert.Equal(t, "alice", signIns[2].ActorName, "the name that was tried")
	assert.Equal(t, "Unauthenticated", signIns[2].ErrorCode)

	// No credential anywhere: not in the log, not in the router's log.
	all, err := json.Marshal(e.auditEntries(t, ""))
	require.NoError(t, err)
	for _, secret := range []string{password, connectionPass, headerSecret, "h3ader-secret", signingSecret,
		source.Webhook.Token, created.Secret, e.adminKey, b.cookie, b.csrf} {
		require.NotEmpty(t, secret)
		assert.NotContains(t, string(all), secret, "the audit log holds a credential")
		assert.NotContains(t, e.logs.String(), secret, "the router's log holds a credential")
	}
}

// TestAuditLogAPI: account administrators read their account's entries; filters by time, actor, operation,
// resource and outcome; pages; allAccounts for instance administrators only.
func TestAuditLogAPI(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dialect string) {
		e := newEnv(t, natsServer(t), dialect)
		e.exactAccounts = true
		shop := keyOf(t, e.services, "shop", access.Admin)
		viewer := keyOf(t, e.services, "shop", access.Viewer)
		as := func(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }
		start := time.Now().UTC()
		for _, name := range []string{"a", "b", "c"} {
			require.Equal(t, http.StatusCreated, e.do(t, http.MethodPost, "/api/v1/buses", as(shop), map[string]any{"name": name}).Status)
		}
		require.Equal(t, http.StatusCreated, e.do(t, http.MethodPost, "/api/v1/buses", nil, map[string]any{"name": "elsewhere"}).Status)
		require.Equal(t, http.StatusNotFound, e.do(t, http.MethodGet, "/api/v1/buses/zzz", as(shop), nil).Status)

		list := func(key, query string) (int, []map[string]any, string) {
			resp := e.do(t, http.MethodGet, "/api/v1/audit-log"+query, as(key), nil)
			var out struct {
				Entries   []map[string]any
				NextToken string
			}
			if resp.Status == http.StatusOK {
				require.NoError(t, json.Unmarshal(resp.Body, &out))
			}
			return resp.Status, out.Entries, out.NextToken
		}
		status, entries, _ := list(shop, "?operation=buses.create")
		require.Equal(t, http.StatusOK, status)
		require.Len(t, entries, 3, "the account's entries only")
		assert.Equal(t, "buses/c", entries[0]["resource"], "newest first")
		assert.Equal(t, "shop", entries[0]["account"])

		status, entries, next := list(shop, "?operation=buses.*&limit=2")
		require.Equal(t, http.StatusOK, status)
		require.Len(t, entries, 2)
		require.NotEmpty(t, next)
		_, rest, _ := list(shop, "?operation=buses.*&limit=2&nextToken="+next)
		require.Len(t, rest, 2, "buses.create a, and buses.get zzz")

		_, entries, _ = list(shop, "?outcome=failure")
		require.Len(t, entries, 1)
		assert.Equal(t, "BusNotFound", entries[0]["errorCode"])
		_, entries, _ = list(shop, "?resource=buses/b*")
		require.Len(t, entries, 1)
		_, entries, _ = list(shop, "?from="+start.Add(time.Hour).Format(time.RFC3339))
		assert.Empty(t, entries)
		_, entries, _ = list(shop, "?to="+start.Add(-time.Hour).Format(time.RFC3339))
		assert.Empty(t, entries)
		_, entries, _ = list(shop, "?operation=buses.create&actor="+keyName(t, e, shop))
		assert.Len(t, entries, 3, "by the key's name")
		_, entries, _ = list(shop, "?operation=buses.create&actor=someone-else")
		assert.Empty(t, entries)

		status, _, _ = list(viewer, "")
		assert.Equal(t, http.StatusForbidden, status, "a viewer reads no audit log")
		status, _, _ = list(shop, "?allAccounts=true")
		assert.Equal(t, http.StatusForbidden, status, "allAccounts is for instance administrators")
		status, entries, _ = list(e.adminKey, "?allAccounts=true&operation=buses.create")
		require.Equal(t, http.StatusOK, status)
		assert.Len(t, entries, 4)
		for _, q := range []string{"?from=yesterday", "?outcome=maybe", "?allAccounts=1", "?operation=a*b", "?nextToken=zz"} {
			status, _, _ = list(shop, q)
			assert.Equal(t, http.StatusBadRequest, status, q)
		}
	})
}

// keyName is the name of the API key key, as the audit log records it.
func keyName(t *testing.T, e *env, key string) string {
	t.Helper()
	resp := e.do(t, http.MethodGet, "/api/v1/me", map[string]string{"Authorization": "Bearer " + key}, nil)
	var me struct{ Name string }
	require.NoError(t, json.Unmarshal(resp.Body, &me))
	return me.Name
}

// TestAuditRecorderBatchesReads: with Run, reads are written in batches and all of them once Run ends; changes
// are written before Record returns.
func TestAuditRecorderBatchesReads(t *testing.T) {
	t.Parallel()
	db := persistencetest.Open(t, persistence.SQLite)
	repo := persistence.NewAuditRepository(db)
	rec := &audit.Recorder{Entries: repo, FlushInterval: time.Hour, BatchSize: 1000}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); rec.Run(ctx) }()
	time.Sleep(50 * time.Millisecond) // Run has started taking entries
	count := func() int {
		es, _, err := repo.List(context.Background(), audit.Filter{AllAccounts: true}, domain.Page{Limit: 500})
		require.NoError(t, err)
		return len(es)
	}
	for i := range 10 {
		require.NoError(t, rec.Record(context.Background(), audit.Entry{ID: domain.NewID(), Time: time.Now(), Operation: "buses.get",
			Status: 200, Resource: "buses/" + string(rune('a'+i))}, false))
	}
	assert.Equal(t, 0, count(), "reads wait for their batch")
	require.NoError(t, rec.Record(context.Background(), audit.Entry{ID: domain.NewID(), Time: time.Now(), Operation: "buses.create", Status: 201}, true))
	assert.Equal(t, 1, count(), "a change is written at once")
	cancel()
	<-done
	assert.Equal(t, 11, count(), "Run writes what it holds when it ends")
}
