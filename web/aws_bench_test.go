package web_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/accesskey"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/web/aws"
)

// BenchmarkPutEventsAWS measures Amazon EventBridge's PutEvents (10 entries of about 200 bytes per call, signed with
// Signature Version 4 by an access key, each entry mapped to a CloudEvent) side by side with CloudEvents' PutEvents
// in batch mode (the same 10 events as a JSON batch, an API key): the same router in process, a real JetStream
// store and SQLite, 4 concurrent callers, each alternating one call of each API to a bus of its own (as
// BenchmarkPutEventsAuth). It reports the events stored per second through each and their ratio.
func BenchmarkPutEventsAWS(b *testing.B) {
	e := newEnv(b, natsServer(b), persistence.SQLite) // keys checked as in production (withIdentity)
	key := keyOf(b, e.services, "bench", access.Publisher)
	ak, secret, err := e.services.AccessKeys.Create(context.Background(), nil, "bench", accesskey.Spec{Name: "bench", Role: access.Publisher})
	require.NoError(b, err)
	var buses [2]string
	for i := range buses {
		buses[i] = fmt.Sprintf("aws%d", i)
		resp := e.do(b, http.MethodPost, "/api/v1/buses", map[string]string{"X-Account-Id": "bench"}, map[string]any{"name": buses[i]})
		require.Equal(b, http.StatusCreated, resp.Status, "%s", resp.Body)
	}
	const entries = 10
	var seq atomic.Int64
	body := func(awsAPI bool) []byte {
		var buf bytes.Buffer
		if awsAPI {
			buf.WriteString(`{"Entries":[`)
		} else {
			buf.WriteByte('[')
		}
		for i := range entries {
			if i > 0 {
				buf.WriteByte(',')
			}
			n := seq.Add(1)
			if awsAPI {
				fmt.Fprintf(&buf, `{"EventBusName":%q,"Source":"bench","DetailType":"order.created","Detail":"{\"n\":%d,\"pad\":\"0123456789abcdef0123456789abcdef\"}"}`, buses[1], n)
			} else {
				fmt.Fprintf(&buf, `{"specversion":"1.0","id":"e%d","source":"bench","type":"order.created","data":{"n":%d,"pad":"0123456789abcdef0123456789abcdef"}}`, n, n)
			}
		}
		if awsAPI {
			buf.WriteString(`]}`)
		} else {
			buf.WriteByte(']')
		}
		return buf.Bytes()
	}
	var spent [2]atomic.Int64 // nanoseconds in the calls of each API: 0 CloudEvents, 1 AWS
	tb := testing.TB(b)
	put := func(which int) {
		b := body(which == 1)
		var req *http.Request
		if which == 1 {
			req = localRequest(http.MethodPost, "/", bytes.NewReader(b))
			req.Header.Set("Content-Type", aws.ContentType)
			req.Header.Set(aws.TargetHeader, aws.TargetPrefix+"PutEvents")
			signAWS(tb, req, b, ak.ID(), secret)
		} else {
			req = localRequest(http.MethodPost, "/api/v1/buses/"+buses[0]+"/events", bytes.NewReader(b))
			req.Header.Set("Content-Type", "application/cloudevents-batch+json")
			req.Header.Set("Authorization", "Bearer "+key)
		}
		rec := httptest.NewRecorder()
		start := time.Now()
		e.router.ServeHTTP(rec, req)
		spent[which].Add(int64(time.Since(start)))
		if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`rrorCode"`)) {
			panic(fmt.Sprintf("PutEvents answered %d: %s", rec.Code, rec.Body))
		}
	}
	var turn atomic.Int64
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
	events := float64(b.N * entries)
	rate := func(i int) float64 { return events / (time.Duration(spent[i].Load()).Seconds() / callers) }
	b.ReportMetric(rate(0), "cloudevents-events/s")
	b.ReportMetric(rate(1), "aws-events/s")
	b.ReportMetric(rate(1)/rate(0), "aws/cloudevents")
}
