package worker_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/rest"
)

// TestEveryRESTCallIsAudited: every route of the worker REST API but the public ones and the metrics, called once
// with the token and once without, publishes one record per call to the audit stream, with the route's name, the
// connector it named, whether it carried the token and the status; never the token.
func TestEveryRESTCallIsAudited(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	w, err := worker.New(worker.Config{Token: testToken, NATS: env.Conn, WorkerID: "a1", RESTAddr: "127.0.0.1:0",
		Registry: registry(t), StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(func() { _ = w.Close(context.Background()) })

	routes := rest.NewHandler(nil, rest.Config{Metrics: http.NotFoundHandler()}).Routes()
	want := map[string]int{}
	for _, r := range routes {
		path := strings.NewReplacer("{$}", "", "{c}", "eb.acme.b1.router", "{t}", "0", "{p}", "http").Replace(r.Pattern)
		for _, tok := range []string{testToken, ""} {
			req, err := http.NewRequest(r.Method, w.URL()+path, strings.NewReader("{}"))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			_ = resp.Body.Close()
			if r.Audited() {
				want[r.Name]++
			}
		}
	}
	require.Greater(t, len(want), 20)

	cons, err := env.JS.CreateOrUpdateConsumer(context.Background(), names.AuditStream(), jetstreamConsumer())
	require.NoError(t, err)
	got := map[string]int{}
	unauthenticated := 0
	deadline := time.Now().Add(10 * time.Second)
	total := 0
	for _, n := range want {
		total += n
	}
	for seen := 0; seen < total && time.Now().Before(deadline); {
		msgs, err := cons.Fetch(100, fetchWait())
		require.NoError(t, err)
		for m := range msgs.Messages() {
			seen++
			assert.NotContains(t, string(m.Data()), testToken)
			rec, err := stream.DecodeAuditRecord(m.Data())
			require.NoError(t, err)
			got[rec.Operation]++
			assert.Equal(t, "a1", rec.Worker)
			assert.Equal(t, "127.0.0.1", rec.ClientAddr)
			if strings.Contains(rec.Resource, "connectors/") && rec.Operation != "connectors.list" && rec.Operation != "connectors.create" {
				assert.Equal(t, "eb.acme.b1.router", rec.Connector, rec.Operation)
			}
			if !rec.Authenticated {
				unauthenticated++
				assert.Equal(t, http.StatusUnauthorized, rec.Status)
			}
			_ = m.Ack()
		}
	}
	assert.Equal(t, want, got, "one record per call of every audited route")
	assert.Equal(t, total/2, unauthenticated, "the calls without the token are recorded as such")
}

func jetstreamConsumer() jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{Durable: "test", AckPolicy: jetstream.AckExplicitPolicy}
}

func fetchWait() jetstream.FetchOpt { return jetstream.FetchMaxWait(500 * time.Millisecond) }
