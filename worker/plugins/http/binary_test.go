package http

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// binaryCases are events in the JSON format, read as the router and targets read them, at the edges of what
// binaryHeaders writes and what it leaves to the SDK.
var binaryCases = []string{
	`{"specversion":"1.0","id":"1","source":"shop","type":"order.created"}`,
	`{"specversion":"1.0","id":"1","source":"/a/b?c=d#e","type":"t","subject":"s","time":"2026-12-04T10:00:00.123456789+01:00","datacontenttype":"application/json","dataschema":"https://schemas.example.com/x.json","data":{"a":1}}`,
	`{"specversion":"1.0","id":"1","source":"https://example.com/x%20y","type":"t","subject":"","time":"2026-12-04T10:00:00Z"}`,
	`{"specversion":"1.0","id":"1","source":"urn:a:b","type":"t","datacontenttype":"text/plain","data":"hello"}`,
	`{"specversion":"1.0","id":"1","source":"s","type":"t","data_base64":"AAEC/w=="}`,
	`{"specversion":"1.0","id":"1","source":"s","type":"t","data":null}`,
	`{"specversion":"1.0","id":"1","source":"s","type":"t","data":""}`,
	`{"specversion":"1.0","id":"1","source":"s","type":"t","ext":"v","flag":true,"off":false,"n":-7,"empty":"","x1":"é \" %"}`,
	`{"specversion":"1.0","id":"1","source":"s","type":"t","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"a=b"}`,
	`{"specversion":"1.0","id":"1","source":"s","type":"t","1abc":"digit first"}`,
	`{"specversion":"1.0","id":"a\"b\u00e9","source":"s","type":"t\nu"}`,
	`{"specversion":"0.3","id":"1","source":"s","type":"t","schemaurl":"http://x"}`,
}

// TestBinaryHeadersAsTheSDKWrites: the headers and body binaryHeaders gives an event are exactly those of the SDK's
// HTTP binding, for every event it takes; the others are left to the SDK.
func TestBinaryHeadersAsTheSDKWrites(t *testing.T) {
	took := 0
	for _, c := range binaryCases {
		e, err := cloudevent.Unmarshal([]byte(c))
		require.NoError(t, err, c)
		if sameBinaryAsTheSDK(t, e) {
			took++
		}
	}
	require.Equal(t, len(binaryCases)-2, took, "every v1.0 case but the digit-first extension name is written directly")

	// Extensions of the SDK's other types, set by hand, go to the SDK.
	e := event.New()
	e.SetID("1")
	e.SetSource("s")
	e.SetType("t")
	e.SetExtension("uri", types.URI{URL: mustURL(t, "http://x/y").URL})
	require.False(t, sameBinaryAsTheSDK(t, &e), "a URI extension is written by the SDK")
}

func FuzzBinaryHeaders(f *testing.F) {
	f.Add("1", "shop", "t", "sub", "application/json", "http://x/s", "2026-12-04T10:00:00.5+02:00", "ext", "v", `{"a":1}`)
	f.Add("", "/a b", "", "", "", "", "", "x", "", "")
	f.Fuzz(func(t *testing.T, id, source, typ, subject, ct, schema, tm, ext, extValue, data string) {
		e := event.New()
		e.SetID(id)
		e.SetType(typ)
		if e.Context.SetSource(source) != nil || e.Context.SetSubject(subject) != nil ||
			ct != "" && e.Context.SetDataContentType(ct) != nil {
			return
		}
		if schema != "" && e.Context.SetDataSchema(schema) != nil {
			return
		}
		if tm != "" {
			parsed, err := types.ParseTime(tm)
			if err != nil {
				return
			}
			e.SetTime(parsed)
		}
		if ext != "" && e.Context.SetExtension(ext, extValue) != nil {
			return
		}
		if data != "" {
			e.DataEncoded = []byte(data)
		}
		sameBinaryAsTheSDK(t, &e)
	})
}

// sameBinaryAsTheSDK checks binaryHeaders of e against the SDK's writer and reports whether it took e.
func sameBinaryAsTheSDK(t *testing.T, e *event.Event) bool {
	t.Helper()
	req := &http.Request{Header: http.Header{}}
	require.NoError(t, cehttp.WriteRequest(context.Background(), binding.ToMessage(e), req))
	var want []byte
	if req.Body != nil {
		var err error
		want, err = io.ReadAll(req.Body)
		require.NoError(t, err)
	}
	got := http.Header{}
	if !binaryHeaders(e, got) {
		return false
	}
	require.Equal(t, req.Header, got, "headers of %v", e)
	if len(want) == 0 {
		require.Empty(t, e.Data())
	} else {
		require.Equal(t, string(want), string(e.Data()), "body of %v", e)
	}
	return true
}

func mustURL(t *testing.T, s string) *types.URIRef {
	t.Helper()
	u := types.ParseURIRef(s)
	require.NotNil(t, u)
	return u
}

// BenchmarkEncodeBinary measures the binary mode's headers and body of a plain event: binaryHeaders side by side
// with the SDK's HTTP binding (what the sink used for every event before), in the same loop.
func BenchmarkEncodeBinary(b *testing.B) {
	e, err := cloudevent.Unmarshal([]byte(`{"specversion":"1.0","id":"8f3c1a2e-0a4d","source":"/shop/orders",` +
		`"type":"order.created","subject":"order-42","time":"2026-12-02T01:02:03.123Z","region":"eu",` +
		`"datacontenttype":"application/json","data":{"orderId":42}}`))
	if err != nil {
		b.Fatal(err)
	}
	var sdk, ours time.Duration
	for range b.N {
		start := time.Now()
		req := &http.Request{Header: make(http.Header, 8)}
		if err := cehttp.WriteRequest(context.Background(), binding.ToMessage(e), req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadAll(req.Body); err != nil {
			b.Fatal(err)
		}
		sdk += time.Since(start)
		start = time.Now()
		if !binaryHeaders(e, make(http.Header, 8)) {
			b.Fatal("a plain event")
		}
		ours += time.Since(start)
	}
	b.ReportMetric(float64(sdk.Nanoseconds())/float64(b.N), "sdk-ns/op")
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "ours-ns/op")
	b.ReportMetric(float64(ours)/float64(sdk), "ratio")
}
