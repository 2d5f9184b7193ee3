package pattern

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	event := `{"specversion":"1.0","id":"1","source":"shop","type":"order.created",
		"data":{"amount":300,"currency":"EUR","tags":["a","b"],"items":[{"sku":"x1"},{"sku":"y2"}],"gift":false,"note":null}}`
	cases := []struct {
		name    string
		pattern string
		want    bool
	}{
		{"exact attribute", `{"type":["order.created"]}`, true},
		{"exact attribute mismatch", `{"type":["order.deleted"]}`, false},
		{"or within array", `{"type":["x","order.created"]}`, true},
		{"and across keys", `{"type":["order.created"],"source":["other"]}`, false},
		{"nested", `{"data":{"currency":["EUR"]}}`, true},
		{"number by value", `{"data":{"amount":[300.0]}}`, true},
		{"number exponent", `{"data":{"amount":[3.0e2]}}`, true},
		{"number mismatch", `{"data":{"amount":[301]}}`, false},
		{"number is not string", `{"data":{"amount":["300"]}}`, false},
		{"bool", `{"data":{"gift":[false]}}`, true},
		{"null", `{"data":{"note":[null]}}`, true},
		{"null is not empty string", `{"data":{"note":[""]}}`, false},
		{"missing field", `{"data":{"missing":["x"]}}`, false},
		{"array element", `{"data":{"tags":["b"]}}`, true},
		{"array of objects", `{"data":{"items":{"sku":["y2"]}}}`, true},
		{"prefix", `{"type":[{"prefix":"order."}]}`, true},
		{"prefix mismatch", `{"type":[{"prefix":"user."}]}`, false},
		{"prefix on number", `{"data":{"amount":[{"prefix":"3"}]}}`, false},
		{"nested under non-object", `{"type":{"x":["y"]}}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Compile([]byte(tc.pattern))
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			got, err := p.Match([]byte(event))
			if err != nil {
				t.Fatalf("match: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Match = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, pattern, wantPath, wantReason string
	}{
		{"not json", `{`, "", "not valid JSON"},
		{"not object", `[1]`, "", "JSON object"},
		{"empty", `{}`, "", "at least one field"},
		{"scalar value", `{"type":"x"}`, "type", "object or an array"},
		{"empty array", `{"type":[]}`, "type", "must not be empty"},
		{"nested array", `{"type":[["x"]]}`, "type[0]", "nested"},
		{"unknown operator", `{"data":{"a":[{"bogus":1}]}}`, "data.a[0].bogus", "unsupported operator"},
		{"prefix not string", `{"type":[{"prefix":1}]}`, "type[0].prefix", "takes a string"},
		{"two keys in operator", `{"type":[{"prefix":"a","suffix":"b"}]}`, "type[0]", "exactly one key"},
		{"trailing data", `{"type":["x"]} {}`, "", "unexpected data"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile([]byte(tc.pattern))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("want *Error, got %v", err)
			}
			if pe.Path != tc.wantPath || !strings.Contains(pe.Reason, tc.wantReason) {
				t.Fatalf("got path %q reason %q; want path %q reason containing %q", pe.Path, pe.Reason, tc.wantPath, tc.wantReason)
			}
		})
	}
}

func TestCompileDepthLimit(t *testing.T) {
	t.Parallel()
	p := `["x"]`
	for i := 0; i < MaxDepth+1; i++ {
		p = `{"a":` + p + `}`
	}
	if _, err := Compile([]byte(p)); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Fatalf("want depth error, got %v", err)
	}
}

func TestMatcher(t *testing.T) {
	t.Parallel()
	m := NewMatcher()
	add := func(id, p string) {
		c, err := Compile([]byte(p))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Add(id, c); err != nil {
			t.Fatal(err)
		}
	}
	add("b", `{"type":[{"prefix":"order."}]}`)
	add("a", `{"type":["order.created"]}`)
	add("c", `{"type":["user.created"]}`)
	got, err := m.Match([]byte(`{"type":"order.created"}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "a,b" {
		t.Fatalf("got %v, want [a b]", got)
	}
	m.Delete("a")
	add("b", `{"type":["nothing"]}`) // replace
	got, _ = m.Match([]byte(`{"type":"order.created"}`))
	if len(got) != 0 {
		t.Fatalf("got %v, want none", got)
	}
	if _, err := m.Match([]byte(`[1]`)); err == nil {
		t.Fatal("want error for a non-object event")
	}

	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				if _, err := m.Match([]byte(`{"type":"user.created"}`)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	add("d", `{"type":["user.created"]}`)
	wg.Wait()
}
