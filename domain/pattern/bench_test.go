package pattern

import (
	"fmt"
	"testing"
)

// BenchmarkMatcher measures one pass of an event over a bus's rule table of 100 rules.
func BenchmarkMatcher(b *testing.B) {
	m := NewMatcher()
	for i := 0; i < 100; i++ {
		p, err := Compile([]byte(fmt.Sprintf(`{"source":["shop"],"type":[{"prefix":"order.%d."}],"data":{"region":["eu-%d"]}}`, i, i%5)))
		if err != nil {
			b.Fatal(err)
		}
		_ = m.Add(fmt.Sprintf("r%03d", i), p)
	}
	event := []byte(`{"specversion":"1.0","id":"1","source":"shop","type":"order.42.created","data":{"region":"eu-2","amount":12.5,"items":[{"sku":"a"},{"sku":"b"}]}}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ids, err := m.Match(event)
		if err != nil || len(ids) != 1 {
			b.Fatalf("ids %v err %v", ids, err)
		}
	}
}
