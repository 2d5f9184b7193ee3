package auditlog_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/auditlog"
	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/audit"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/persistence/persistencetest"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

const token = "ebct_audit-test-token-0123456789abcdef0123456789"

// TestWorkerCallsReachTheAuditLog: a real worker records every call of its REST API (refused ones included) in
// the audit stream; two mergers, as two control-plane replicas, move each record into the audit log exactly once,
// with the worker as its source, the cluster token (or nobody) as its actor and the connector's account.
func TestWorkerCallsReachTheAuditLog(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	w, err := worker.New(worker.Config{NATS: env.Conn, Token: token, ClusterID: "aud", WorkerID: "w.1", RESTAddr: "127.0.0.1:0",
		Registry: connector.NewRegistry(), StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(func() { _ = w.Close(context.Background()) })

	call := func(method, path, tok string) int {
		req, err := http.NewRequest(method, w.URL()+path, nil)
		require.NoError(t, err)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, call(http.MethodGet, "/connectors", token))
	require.Equal(t, http.StatusNotFound, call(http.MethodPut, "/connectors/eb.shop.orders.router/pause", token))
	require.Equal(t, http.StatusUnauthorized, call(http.MethodDelete, "/connectors/eb.shop.orders.router", "wrong"))
	require.Equal(t, http.StatusOK, call(http.MethodGet, "/healthz", ""), "public: not audited")

	repo := persistence.NewAuditRepository(persistencetest.Open(t, persistence.SQLite))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 2 {
		m := &auditlog.Merger{JS: env.JS, Names: stream.Names{Cluster: "aud"}, Replicas: 1, Entries: repo}
		go m.Run(ctx)
	}
	var entries []audit.Entry
	require.Eventually(t, func() bool {
		entries, _, err = repo.List(context.Background(), audit.Filter{AllAccounts: true}, domain.Page{Limit: 100})
		require.NoError(t, err)
		return len(entries) >= 3
	}, 10*time.Second, 20*time.Millisecond)
	time.Sleep(300 * time.Millisecond) // nothing more comes
	entries, _, err = repo.List(context.Background(), audit.Filter{AllAccounts: true}, domain.Page{Limit: 100})
	require.NoError(t, err)
	require.Len(t, entries, 3, "each record once")
	byOp := map[string]audit.Entry{}
	for _, e := range entries {
		byOp[e.Operation] = e
		assert.Equal(t, "worker:w.1", e.Source)
		assert.Equal(t, "127.0.0.1", e.ClientAddr)
		assert.False(t, strings.Contains(e.Resource, token))
	}
	list := byOp["worker.connectors.list"]
	assert.Equal(t, audit.ActorClusterToken, list.ActorKind)
	assert.Equal(t, audit.Success, list.Outcome)
	assert.Equal(t, "", list.AccountID)
	pause := byOp["worker.connectors.pause"]
	assert.Equal(t, "connectors/eb.shop.orders.router", pause.Resource)
	assert.Equal(t, "shop", pause.AccountID)
	assert.Equal(t, http.StatusNotFound, pause.Status)
	assert.Equal(t, audit.Failure, pause.Outcome)
	refused := byOp["worker.connectors.delete"]
	assert.Equal(t, audit.ActorAnonymous, refused.ActorKind, "no token")
	assert.Equal(t, http.StatusUnauthorized, refused.Status)

	info := env.ConsumerInfo(t, "aud_AUDIT", "aud_audit_merge")
	assert.Zero(t, info.NumPending, "every record was taken")
	assert.Zero(t, info.NumAckPending, "and acknowledged")
}
