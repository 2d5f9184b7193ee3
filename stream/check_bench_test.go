package stream

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
)

// encodeEarlier is the stored form of the previous release (every attribute as header text, no check): the
// baseline the new path is measured against.
func encodeEarlier(e *event.Event) *nats.Msg {
	m := nats.NewMsg("")
	h := m.Header
	h.Set(headerPrefix+"specversion", e.SpecVersion())
	h.Set(headerPrefix+"id", e.ID())
	h.Set(headerPrefix+"source", e.Source())
	h.Set(headerPrefix+"type", e.Type())
	if v := e.Subject(); v != "" {
		h.Set(headerPrefix+"subject", v)
	}
	if t := e.Time(); !t.IsZero() {
		h.Set(headerPrefix+"time", t.UTC().Format(time.RFC3339Nano))
	}
	if v := e.DataContentType(); v != "" {
		h.Set(headerContentType, v)
	}
	for k, v := range e.Extensions() {
		h.Set(headerPrefix+k, fmt.Sprint(v))
	}
	m.Data = e.Data()
	return m
}

// BenchmarkCheckAndEncode measures what storing an event costs before it reaches JetStream: the new path (Check,
// the invariant, then Encode with types and the binary marker) side by side with the previous release's encoding
// alone, for a small JSON event and one of 16 KiB of JSON data, and reports their ratio.
func BenchmarkCheckAndEncode(b *testing.B) {
	for _, size := range []int{200, 16 << 10} {
		e := event.New()
		e.SetID("8f3c1a2e-0a4d-4c4b-9b1e-2f0c6d1e7a55")
		e.SetSource("/shop/orders")
		e.SetType("order.created")
		e.SetSubject("order-42")
		e.SetTime(time.Now())
		e.SetExtension("region", "eu")
		e.SetExtension("priority", int32(3))
		items := strings.Repeat(`{"sku": "A-1", "qty": 2, "price": 12.5},`, size/40)
		_ = e.SetData("application/json", []byte(`{"orderId": 42, "items": [`+strings.TrimSuffix(items, ",")+`]}`))
		e.DataBase64 = false // as PutEvents decodes JSON data
		b.Run(fmt.Sprintf("data=%dB", len(e.Data())), func(b *testing.B) {
			var bare, checked time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				_ = encodeEarlier(&e)
				bare += time.Since(start)
				start = time.Now()
				if err := Check(&e, 0); err != nil {
					b.Fatal(err)
				}
				_ = Encode(&e)
				checked += time.Since(start)
			}
			b.ReportMetric(float64(bare.Nanoseconds())/float64(b.N), "earlier-ns/event")
			b.ReportMetric(float64(checked.Nanoseconds())/float64(b.N), "checked-ns/event")
			b.ReportMetric(float64(checked)/float64(bare), "checked/earlier")
		})
	}
}
