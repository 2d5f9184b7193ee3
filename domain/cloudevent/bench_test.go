package cloudevent_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/tidwall/gjson"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// BenchmarkJSONFormat measures this package's JSON format side by side with the SDK's own (the bare baseline, what
// PutEvents, the router and the structured sinks used before), on a small event and one with 16 KiB of JSON data:
// Unmarshal as PutEvents reads a structured entry, UnmarshalBatch of 100 such events as the router and the
// targets read a record batch (the SDK: its JSON decoding of []event.Event), Marshal as PutEvents builds the form it
// stores, and Validate as PutEvents and the store check an event. It reports the ratio of the two in the same run.
func BenchmarkJSONFormat(b *testing.B) {
	for _, size := range []int{200, 16 << 10} {
		items := strings.Repeat(`{"sku": "A-1", "qty": 2, "price": 12.5},`, size/40)
		raw := []byte(`{"specversion":"1.0","id":"8f3c1a2e-0a4d-4c4b-9b1e-2f0c6d1e7a55","source":"/shop/orders",` +
			`"type":"order.created","subject":"order-42","time":"2026-12-02T01:02:03.123Z","region":"eu","priority":3,` +
			`"datacontenttype":"application/json","data":{"orderId": 42, "items": [` + strings.TrimSuffix(items, ",") + `]}}`)
		b.Run(fmt.Sprintf("unmarshal/event=%dB", len(raw)), func(b *testing.B) {
			sideBySide(b, func() error {
				e := event.New()
				return e.UnmarshalJSON(raw)
			}, func() error {
				_, err := cloudevent.Unmarshal(raw)
				return err
			})
		})
		batch := []byte("[" + strings.TrimSuffix(strings.Repeat(string(raw)+",", 100), ",") + "]")
		b.Run(fmt.Sprintf("unmarshal-batch/events=100x%dB", len(raw)), func(b *testing.B) { unmarshalBatch(b, batch) })
		e, err := cloudevent.Unmarshal(raw)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("marshal/event=%dB", len(raw)), func(b *testing.B) {
			sideBySide(b, func() error {
				_, err := e.MarshalJSON()
				return err
			}, func() error {
				_, err := cloudevent.Marshal(e)
				return err
			})
		})
		if size == 200 {
			b.Run("validate", func(b *testing.B) {
				sideBySide(b, e.Validate, func() error { return cloudevent.Validate(e) })
			})
		}
	}
	// The body of a PutEvents call of BenchmarkSideBySide/putevents: 10 events of 1 KiB, most of it a string in data.
	body := putEventsBody()
	b.Run(fmt.Sprintf("unmarshal-batch/putevents=10x%dB", len(body)/10), func(b *testing.B) { unmarshalBatch(b, body) })
}

// unmarshalBatch runs the SDK's JSON decoding of batch into []event.Event and UnmarshalBatch of it side by side.
func unmarshalBatch(b *testing.B, batch []byte) {
	sideBySide(b, func() error {
		var events []event.Event
		return json.Unmarshal(batch, &events)
	}, func() error {
		_, err := cloudevent.UnmarshalBatch(batch)
		return err
	})
}

// putEventsBody is the body of a PutEvents call of 10 events of 1 KiB, as BenchmarkSideBySide/putevents puts them.
func putEventsBody() []byte {
	pad := strings.Repeat("0123456789abcdef", 52)
	ev := `{"specversion":"1.0","id":"put0-123","source":"bench","type":"put","datacontenttype":"application/json",` +
		`"data":{"i":123,"pad":"` + pad + `"}}`
	return []byte("[" + strings.TrimSuffix(strings.Repeat(ev+",", 10), ",") + "]")
}

// sideBySide runs the SDK's way (sdk) and ours one after the other b.N times and reports the time of each and their
// ratio.
func sideBySide(b *testing.B, sdk, ours func() error) {
	var bare, own time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := sdk(); err != nil {
			b.Fatal(err)
		}
		bare += time.Since(start)
		start = time.Now()
		if err := ours(); err != nil {
			b.Fatal(err)
		}
		own += time.Since(start)
	}
	b.ReportMetric(float64(bare.Nanoseconds())/float64(b.N), "sdk-ns/op")
	b.ReportMetric(float64(own.Nanoseconds())/float64(b.N), "ours-ns/op")
	b.ReportMetric(float64(own)/float64(bare), "ratio")
}

// BenchmarkValidJSON measures ValidJSON side by side with encoding/json.Valid (the standard library's) and
// gjson.ValidBytes (what PutEvents, the router and the store's check used before it), on the body of a PutEvents
// call of 10 events of 1 KiB, and reports the bytes each reads per second.
func BenchmarkValidJSON(b *testing.B) {
	batch := putEventsBody()
	var std, g, ours time.Duration
	for range b.N {
		start := time.Now()
		okStd := json.Valid(batch)
		std += time.Since(start)
		start = time.Now()
		okG := gjson.ValidBytes(batch)
		g += time.Since(start)
		start = time.Now()
		ok, _ := cloudevent.ValidJSON(batch)
		ours += time.Since(start)
		if !ok || !okStd || !okG {
			b.Fatal("the batch is valid JSON")
		}
	}
	rate := func(d time.Duration) float64 { return float64(b.N*len(batch)) / d.Seconds() / 1e6 }
	b.ReportMetric(rate(std), "encoding/json-MB/s")
	b.ReportMetric(rate(g), "gjson-MB/s")
	b.ReportMetric(rate(ours), "ours-MB/s")
	b.ReportMetric(ours.Seconds()/g.Seconds(), "ratio-to-gjson")
}
