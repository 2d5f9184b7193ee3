package pattern

import (
	"fmt"
	"testing"
)

// benchEvent is the JSON form of a CloudEvent of about 1 KiB.
var benchEvent = []byte(`{"specversion":"1.0","id":"6f1c2a9e-3b7d-4c1e-9f5a-2d8e7b6c5a41",` +
	`"source":"https://shop.example.com/0","type":"com.example.order.created","subject":"orders/0/lines",` +
	`"time":"2026-11-30T10:15:00Z","datacontenttype":"application/json","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",` +
	`"data":{"orderId":"ord-2026-000042","status":"created","amount":5,"currency":"EUR","channel":"web",` +
	`"customer":{"id":"cus-981273","tier":"gold","email":"ana.muller@d0.example.com","country":"DE","since":"2019-04-01"},` +
	`"items":[{"sku":"sku-1001","name":"Espresso beans 1kg","qty":2,"price":18.5},` +
	`{"sku":"sku-2002","name":"Milk frother","qty":1,"price":39.9},{"sku":"sku-3003","name":"Ceramic cup","qty":4,"price":7.25}],` +
	`"shipping":{"method":"express","address":{"street":"Hauptstrasse 1","city":"Berlin","zip":"10115","country":"DE"}},` +
	`"payment":{"method":"card","brand":"visa","last4":"4242","authorized":true},` +
	`"tags":["priority","gift-wrap","newsletter"],"notes":"Please ring twice; leave at the door if nobody answers."}}`)

// benchFamilies make the i-th pattern of each operator family; the pattern 0 of a family matches benchEvent,
// no other does.
var benchFamilies = []struct {
	name string
	make func(i int) string
}{
	{"exact", func(i int) string {
		if i == 0 {
			return `{"type":["com.example.order.created"]}`
		}
		return fmt.Sprintf(`{"type":["com.example.order.t%d"]}`, i)
	}},
	{"prefix", func(i int) string { return fmt.Sprintf(`{"subject":[{"prefix":"orders/%d/"}]}`, i) }},
	{"suffix", func(i int) string {
		return fmt.Sprintf(`{"data":{"customer":{"email":[{"suffix":"@d%d.example.com"}]}}}`, i)
	}},
	{"equals-ignore-case", func(i int) string {
		return fmt.Sprintf(`{"source":[{"equals-ignore-case":"HTTPS://SHOP.EXAMPLE.COM/%d"}]}`, i)
	}},
	{"anything-but", func(i int) string {
		if i == 0 {
			return `{"data":{"currency":[{"anything-but":["USD","GBP"]}]}}`
		}
		return fmt.Sprintf(`{"data":{"currency":[{"anything-but":["EUR","X%d"]}]}}`, i)
	}},
	{"numeric", func(i int) string {
		return fmt.Sprintf(`{"data":{"amount":[{"numeric":[">=",%d,"<",%d]}]}}`, i*10, i*10+10)
	}},
}

// benchMatcher builds a matcher of n patterns: n of one family, or, for "mixed", n spread over every family
// (pattern 0 of each family included).
func benchMatcher(b *testing.B, family string, n int) (*Matcher, int) {
	b.Helper()
	m := NewMatcher()
	add := func(id, p string) {
		c, err := Compile([]byte(p))
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Add(id, c); err != nil {
			b.Fatal(err)
		}
	}
	want := 0
	for i := 0; i < n; i++ {
		for fi, f := range benchFamilies {
			if family == f.name {
				add(fmt.Sprintf("%s-%d", f.name, i), f.make(i))
			}
			if family == "mixed" && i%len(benchFamilies) == fi {
				add(fmt.Sprintf("%s-%d", f.name, i/len(benchFamilies)), f.make(i/len(benchFamilies)))
				if i/len(benchFamilies) == 0 {
					want++
				}
			}
		}
	}
	if family != "mixed" {
		want = 1
	}
	return m, want
}

func runMatch(b *testing.B, m *Matcher, want int) {
	b.Helper()
	// The index is built by the first Match; the expected matches are checked before timing.
	ids, err := m.Match(benchEvent)
	if err != nil || len(ids) != want {
		b.Fatalf("Match = %v, %v; want %d matches", ids, err, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Match(benchEvent); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(benchEvent)), "event-bytes")
}

// BenchmarkMatcher is the cost of Matcher.Match for one event of about 1 KiB against 1 to 10,000 patterns of an
// operator family, of which one matches ("mixed": the six families, one match each). One op is one event.
func BenchmarkMatcher(b *testing.B) {
	if len(benchEvent) < 1000 || len(benchEvent) > 1100 {
		b.Fatalf("benchEvent is %d bytes; want about 1 KiB", len(benchEvent))
	}
	families := []string{"mixed"}
	for _, f := range benchFamilies {
		families = append(families, f.name)
	}
	for _, family := range families {
		for _, n := range []int{1, 100, 1000, 10000} {
			if family == "mixed" && n == 1 {
				n = len(benchFamilies) // one pattern of each family: the baseline of the mixed figures
			}
			b.Run(fmt.Sprintf("family=%s/patterns=%d", family, n), func(b *testing.B) {
				m, want := benchMatcher(b, family, n)
				runMatch(b, m, want)
			})
		}
	}
}

// BenchmarkMatcherMatches is the cost of k matching patterns among 10,000: the matcher verifies and reports
// each match, so its cost grows with k.
func BenchmarkMatcherMatches(b *testing.B) {
	const n = 10000
	for _, k := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("patterns=%d/matches=%d", n, k), func(b *testing.B) {
			m := NewMatcher()
			for i := 0; i < n; i++ {
				p := fmt.Sprintf(`{"type":["com.example.order.t%d"],"data":{"channel":["web"]}}`, i)
				if i < k {
					p = fmt.Sprintf(`{"type":["com.example.order.created"],"data":{"customer":{"tier":["gold","t%d"]}}}`, i)
				}
				if err := m.Add(fmt.Sprintf("p%05d", i), mustCompile(b, p)); err != nil {
					b.Fatal(err)
				}
			}
			runMatch(b, m, k)
		})
	}
}

// BenchmarkPatternMatch is one pattern matched alone, as the test-event-pattern API does.
func BenchmarkPatternMatch(b *testing.B) {
	p := mustCompile(b, `{"type":[{"prefix":"com.example.order."}],"data":{"items":{"sku":["sku-2002"],"qty":[{"numeric":[">",0]}]},`+
		`"customer":{"country":["DE"]}}}`)
	if ok, err := p.Match(benchEvent); err != nil || !ok {
		b.Fatalf("Match = %v, %v", ok, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Match(benchEvent); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompile is the cost of compiling a typical rule's pattern.
func BenchmarkCompile(b *testing.B) {
	src := []byte(`{"source":["shop"],"type":[{"prefix":"order."}],"data":{"amount":[{"numeric":[">",100]}],` +
		`"region":[{"anything-but":["us-east-1","us-west-2"]}],"$or":[{"vip":[true]},{"total":[{"numeric":[">=",1000]}]}]}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatcherBuild is the cost of loading 10,000 compiled mixed patterns into a matcher and building its
// index (which the first Match does), as the router does when its rule table changes.
func BenchmarkMatcherBuild(b *testing.B) {
	const n = 10000
	pats := make([]*Pattern, n)
	for i := range pats {
		f := benchFamilies[i%len(benchFamilies)]
		pats[i] = mustCompile(b, f.make(i/len(benchFamilies)))
	}
	b.ReportAllocs()
	for b.Loop() {
		m := NewMatcher()
		for i, p := range pats {
			if err := m.Add(fmt.Sprint(i), p); err != nil {
				b.Fatal(err)
			}
		}
		if ids, err := m.Match(benchEvent); err != nil || len(ids) != len(benchFamilies) {
			b.Fatalf("Match = %v, %v", ids, err)
		}
	}
}
