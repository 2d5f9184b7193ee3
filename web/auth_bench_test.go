package web_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/apikey"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/web"
)

// fixedAuth authenticates every request as one principal without looking at it: the baseline that costs nothing.
type fixedAuth struct{ p *access.Principal }

func (f fixedAuth) Authenticate(context.Context, string) (*access.Principal, error) { return f.p, nil }

// BenchmarkPutEventsAuth measures PutEvents through the router (in process, a real JetStream store and SQLite)
// with API-key authentication (the key checked by apikey.Service with its default cache, as in production) side by
// side with the same router whose authenticator answers a fixed principal (bare: no key work at all), for single
// structured events and batches of 100, with 4 concurrent callers. Every caller alternates one request through each
// router, each to a bus of its own, so that both see the same load of the machine and the same growth of the store;
// it reports the events stored per second through each (the time spent in its requests) and their ratio.
func BenchmarkPutEventsAuth(b *testing.B) {
	e := newEnv(b, natsServer(b), persistence.SQLite)
	key := keyOf(b, e.services, "bench", access.Publisher)
	keyed := e.services
	keyed.Auth = &apikey.Service{Keys: persistence.NewAPIKeyRepository(e.db), Accounts: persistence.NewAccountRepository(e.db)}
	bare := e.services
	p, err := keyed.Auth.Authenticate(context.Background(), key)
	require.NoError(b, err)
	bare.Auth = fixedAuth{p: p}
	routers := [2]http.Handler{
		newRouter(web.Config{Logger: slog.New(slog.DiscardHandler)}, bare),
		newRouter(web.Config{Logger: slog.New(slog.DiscardHandler)}, keyed),
	}
	var seq atomic.Int64
	event := func(buf *bytes.Buffer) {
		n := seq.Add(1)
		fmt.Fprintf(buf, `{"specversion":"1.0","id":"e%d","source":"bench","type":"order.created","data":{"n":%d,"pad":"0123456789abcdef0123456789abcdef"}}`, n, n)
	}
	for _, shape := range []struct {
		name string
		size int
	}{{"single", 1}, {"batch100", 100}} {
		b.Run(shape.name, func(b *testing.B) {
			var buses [2]string
			for i := range buses {
				buses[i] = fmt.Sprintf("b%d", seq.Add(1))
				resp := e.do(b, http.MethodPost, "/api/v1/buses", map[string]string{"X-Account-Id": "bench"}, map[string]any{"name": buses[i]})
				require.Equal(b, http.StatusCreated, resp.Status, "%s", resp.Body)
			}
			var spent [2]atomic.Int64 // nanoseconds in the requests through each router
			var turn atomic.Int64
			put := func(which int) {
				var buf bytes.Buffer
				ct := "application/cloudevents+json"
				if shape.size > 1 {
					ct = "application/cloudevents-batch+json"
					buf.WriteByte('[')
					for i := range shape.size {
						if i > 0 {
							buf.WriteByte(',')
						}
						event(&buf)
					}
					buf.WriteByte(']')
				} else {
					event(&buf)
				}
				req := localRequest(http.MethodPost, "/api/v1/buses/"+buses[which]+"/events", &buf)
				req.Header.Set("Content-Type", ct)
				req.Header.Set("Authorization", "Bearer "+key)
				rec := httptest.NewRecorder()
				start := time.Now()
				routers[which].ServeHTTP(rec, req)
				spent[which].Add(int64(time.Since(start)))
				if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errorCode"`)) {
					b.Errorf("PutEvents answered %d: %s", rec.Code, rec.Body)
				}
			}
			b.SetParallelism(2) // 4 callers on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					first := int(turn.Add(1) % 2)
					put(first)
					put(1 - first)
				}
			})
			b.StopTimer()
			callers := float64(2 * runtime.GOMAXPROCS(0))
			events := float64(b.N * shape.size)
			rate := func(i int) float64 { return events / (time.Duration(spent[i].Load()).Seconds() / callers) }
			b.ReportMetric(rate(0), "bare-events/s")
			b.ReportMetric(rate(1), "apiKey-events/s")
			b.ReportMetric(rate(1)/rate(0), "apiKey/bare")
		})
	}
}
