package pattern

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// cloudEvent is the JSON form of a CloudEvent used by the operator tables.
const cloudEvent = `{"specversion":"1.0","id":"1","source":"shop/eu","type":"order.created","time":"2026-01-02T03:04:05Z",
	"subject":"orders/42.PNG",
	"data":{"amount":300,"price":12.5,"currency":"EUR","tags":["a","b"],"items":[{"sku":"x1","qty":1},{"sku":"y2","qty":5}],
	"gift":false,"note":null,"empty":"","ip":"10.0.0.255","ip6":"2001:db8:1234:1a00::1","owner":"Ana Müller",
	"nested":{"deep":{"value":"v"}},"none":[],"matrix":[[1,2],[3]],"big":1e400}}`

type matchCase struct {
	name    string
	pattern string
	want    bool
}

func runMatchCases(t *testing.T, event string, cases []matchCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Compile([]byte(tc.pattern))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			got, err := p.Match([]byte(event))
			if err != nil {
				t.Fatalf("Match: %v", err)
			}
			if got != tc.want {
				t.Errorf("Pattern.Match = %v, want %v", got, tc.want)
			}
			m := NewMatcher()
			if err := m.Add("p", p); err != nil {
				t.Fatal(err)
			}
			ids, err := m.Match([]byte(event))
			if err != nil {
				t.Fatalf("Matcher.Match: %v", err)
			}
			if (len(ids) == 1) != tc.want {
				t.Errorf("Matcher.Match = %v, want match %v", ids, tc.want)
			}
		})
	}
}

func TestOperators(t *testing.T) {
	t.Parallel()
	runMatchCases(t, cloudEvent, []matchCase{
		// exact values
		{"exact string", `{"type":["order.created"]}`, true},
		{"exact string mismatch", `{"type":["order.deleted"]}`, false},
		{"exact is case-sensitive", `{"type":["Order.Created"]}`, false},
		{"or within the array", `{"type":["x","order.created"]}`, true},
		{"and across keys", `{"type":["order.created"],"source":["other"]}`, false},
		{"nested under data", `{"data":{"currency":["EUR"]}}`, true},
		{"number by value", `{"data":{"amount":[300.0]}}`, true},
		{"number in exponent form", `{"data":{"amount":[3.0e2]}}`, true},
		{"number mismatch", `{"data":{"amount":[301]}}`, false},
		{"number is not a string", `{"data":{"amount":["300"]}}`, false},
		{"string is not a number", `{"data":{"currency":[0]}}`, false},
		{"false", `{"data":{"gift":[false]}}`, true},
		{"true does not match false", `{"data":{"gift":[true]}}`, false},
		{"null", `{"data":{"note":[null]}}`, true},
		{"null is not the empty string", `{"data":{"note":[""]}}`, false},
		{"empty string", `{"data":{"empty":[""]}}`, true},
		{"empty string is not null", `{"data":{"empty":[null]}}`, false},
		{"missing field", `{"data":{"missing":["x"]}}`, false},
		{"unnamed keys are ignored", `{"id":["1"]}`, true},
		{"array element", `{"data":{"tags":["b"]}}`, true},
		{"array of objects", `{"data":{"items":{"sku":["y2"]}}}`, true},
		{"nested arrays", `{"data":{"matrix":[3]}}`, true},
		{"object is not a value", `{"data":{"nested":["v"]}}`, false},
		{"nested under a string", `{"type":{"x":["y"]}}`, false},
		{"number beyond float64", `{"data":{"big":[{"numeric":[">",1e300]}]}}`, true},
		// prefix and suffix
		{"prefix", `{"type":[{"prefix":"order."}]}`, true},
		{"prefix mismatch", `{"type":[{"prefix":"user."}]}`, false},
		{"empty prefix matches any string", `{"type":[{"prefix":""}]}`, true},
		{"empty prefix does not match a number", `{"data":{"amount":[{"prefix":""}]}}`, false},
		{"prefix on a number", `{"data":{"amount":[{"prefix":"3"}]}}`, false},
		{"prefix ignoring case", `{"type":[{"prefix":{"equals-ignore-case":"ORDER."}}]}`, true},
		{"prefix ignoring case, non-ASCII", `{"data":{"owner":[{"prefix":{"equals-ignore-case":"ANA MÜ"}}]}}`, true},
		{"suffix", `{"subject":[{"suffix":".PNG"}]}`, true},
		{"suffix is case-sensitive", `{"subject":[{"suffix":".png"}]}`, false},
		{"suffix ignoring case", `{"subject":[{"suffix":{"equals-ignore-case":".png"}}]}`, true},
		{"suffix ignoring case mismatch", `{"subject":[{"suffix":{"equals-ignore-case":".jpg"}}]}`, false},
		{"suffix longer than the value", `{"data":{"empty":[{"suffix":"x"}]}}`, false},
		// equals-ignore-case
		{"equals-ignore-case", `{"data":{"currency":[{"equals-ignore-case":"eur"}]}}`, true},
		{"equals-ignore-case, non-ASCII", `{"data":{"owner":[{"equals-ignore-case":"ANA MÜLLER"}]}}`, true},
		{"equals-ignore-case mismatch", `{"data":{"currency":[{"equals-ignore-case":"eu"}]}}`, false},
		{"equals-ignore-case of the empty string", `{"data":{"empty":[{"equals-ignore-case":""}]}}`, true},
		// wildcard
		{"wildcard", `{"source":[{"wildcard":"shop/*"}]}`, true},
		{"wildcard in the middle", `{"time":[{"wildcard":"2026-*T03:*Z"}]}`, true},
		{"wildcard mismatch", `{"source":[{"wildcard":"crm/*"}]}`, false},
		{"wildcard without star is exact", `{"source":[{"wildcard":"shop/eu"}]}`, true},
		{"wildcard star matches nothing", `{"source":[{"wildcard":"shop/eu*"}]}`, true},
		{"wildcard escaped star", `{"source":[{"wildcard":"shop\\*"}]}`, false},
		{"wildcard on a number", `{"data":{"amount":[{"wildcard":"*"}]}}`, false},
		{"wildcard pieces do not overlap", `{"data":{"currency":[{"wildcard":"EU*UR"}]}}`, false},
		// anything-but
		{"anything-but string", `{"type":[{"anything-but":"order.deleted"}]}`, true},
		{"anything-but string excluded", `{"type":[{"anything-but":"order.created"}]}`, false},
		{"anything-but list", `{"type":[{"anything-but":["a","order.created"]}]}`, false},
		{"anything-but number", `{"data":{"amount":[{"anything-but":300.0}]}}`, false},
		{"anything-but number list", `{"data":{"amount":[{"anything-but":[1,2]}]}}`, true},
		{"anything-but string matches a number", `{"data":{"amount":[{"anything-but":"300"}]}}`, true},
		{"anything-but matches null", `{"data":{"note":[{"anything-but":"x"}]}}`, true},
		{"anything-but needs the field", `{"data":{"missing":[{"anything-but":"x"}]}}`, false},
		{"anything-but on an object", `{"data":{"nested":[{"anything-but":"x"}]}}`, false},
		{"anything-but prefix", `{"type":[{"anything-but":{"prefix":"user."}}]}`, true},
		{"anything-but prefix excluded", `{"type":[{"anything-but":{"prefix":"order."}}]}`, false},
		{"anything-but prefix list", `{"type":[{"anything-but":{"prefix":["x","order"]}}]}`, false},
		{"anything-but suffix", `{"subject":[{"anything-but":{"suffix":".PNG"}}]}`, false},
		{"anything-but suffix list", `{"subject":[{"anything-but":{"suffix":[".a",".b"]}}]}`, true},
		{"anything-but ignoring case", `{"data":{"currency":[{"anything-but":{"equals-ignore-case":"eur"}}]}}`, false},
		{"anything-but ignoring case list", `{"data":{"currency":[{"anything-but":{"equals-ignore-case":["usd","gbp"]}}]}}`, true},
		{"anything-but wildcard", `{"source":[{"anything-but":{"wildcard":"shop/*"}}]}`, false},
		{"anything-but wildcard list", `{"source":[{"anything-but":{"wildcard":["crm/*","*/us"]}}]}`, true},
		{"anything-but in an array: one element not excluded", `{"data":{"tags":[{"anything-but":"a"}]}}`, true},
		{"anything-but in an array: all excluded", `{"data":{"tags":[{"anything-but":["a","b"]}]}}`, false},
		// numeric
		{"numeric =", `{"data":{"amount":[{"numeric":["=",300]}]}}`, true},
		{"numeric <", `{"data":{"price":[{"numeric":["<",12.5]}]}}`, false},
		{"numeric <=", `{"data":{"price":[{"numeric":["<=",12.5]}]}}`, true},
		{"numeric >", `{"data":{"price":[{"numeric":[">",12]}]}}`, true},
		{"numeric >=", `{"data":{"price":[{"numeric":[">=",13]}]}}`, false},
		{"numeric range", `{"data":{"amount":[{"numeric":[">",0,"<=",300]}]}}`, true},
		{"numeric range upper first", `{"data":{"amount":[{"numeric":["<",301,">=",300]}]}}`, true},
		{"numeric range outside", `{"data":{"amount":[{"numeric":[">",300,"<",400]}]}}`, false},
		{"numeric on a string", `{"data":{"currency":[{"numeric":[">",0]}]}}`, false},
		{"numeric on an array element", `{"data":{"items":{"qty":[{"numeric":[">",3]}]}}}`, true},
		// exists
		{"exists", `{"data":{"currency":[{"exists":true}]}}`, true},
		{"exists on null", `{"data":{"note":[{"exists":true}]}}`, true},
		{"exists on a missing field", `{"data":{"missing":[{"exists":true}]}}`, false},
		{"exists on an object", `{"data":{"nested":[{"exists":true}]}}`, false},
		{"exists on an empty array", `{"data":{"none":[{"exists":true}]}}`, false},
		{"exists false on a missing field", `{"data":{"missing":[{"exists":false}]}}`, true},
		{"exists false under a missing parent", `{"data":{"absent":{"child":[{"exists":false}]}}}`, true},
		{"exists false on a present field", `{"data":{"currency":[{"exists":false}]}}`, false},
		{"exists false on an empty array", `{"data":{"none":[{"exists":false}]}}`, true},
		{"exists false on an object", `{"data":{"nested":[{"exists":false}]}}`, true},
		{"exists false or a value", `{"data":{"currency":[{"exists":false},"EUR"]}}`, true},
		{"exists false or another value", `{"data":{"currency":[{"exists":false},"USD"]}}`, false},
		// cidr
		{"cidr IPv4", `{"data":{"ip":[{"cidr":"10.0.0.0/24"}]}}`, true},
		{"cidr IPv4 mismatch", `{"data":{"ip":[{"cidr":"10.0.1.0/24"}]}}`, false},
		{"cidr single address", `{"data":{"ip":[{"cidr":"10.0.0.255"}]}}`, true},
		{"cidr IPv6", `{"data":{"ip6":[{"cidr":"2001:db8:1234:1a00::/64"}]}}`, true},
		{"cidr IPv6 does not contain IPv4", `{"data":{"ip":[{"cidr":"::/0"}]}}`, false},
		{"cidr on a non-address", `{"data":{"currency":[{"cidr":"0.0.0.0/0"}]}}`, false},
		// $or
		{"$or", `{"$or":[{"type":["x"]},{"source":["shop/eu"]}]}`, true},
		{"$or none", `{"$or":[{"type":["x"]},{"source":["y"]}]}`, false},
		{"$or nested", `{"data":{"$or":[{"currency":["USD"]},{"$or":[{"amount":[1]},{"price":[12.5]}]}]}}`, true},
		{"$or with common fields", `{"type":["order.created"],"$or":[{"data":{"gift":[true]}},{"data":{"tags":["a"]}}]}`, true},
		// paths
		{"dotted pattern key", `{"data.nested.deep.value":["v"]}`, true},
		{"dotted pattern key partly", `{"data":{"nested.deep":{"value":["v"]}}}`, true},
	})
}

func TestArraySemantics(t *testing.T) {
	t.Parallel()
	event := `{"items":[{"sku":"a","qty":1,"gift":true},{"sku":"b","qty":2}],"groups":[[{"k":"x"}],[{"k":"y","v":1}]],
		"dotted":{"a.b":"1"},"nest":{"a":{"b":"2"}},"list":[{"a.b":"3"},{"a":{"b":"4"}}]}`
	runMatchCases(t, event, []matchCase{
		{"same element", `{"items":{"sku":["a"],"qty":[1]}}`, true},
		{"fields of different elements never combine", `{"items":{"sku":["a"],"qty":[2]}}`, false},
		{"exists false in the element that matches", `{"items":{"sku":["b"],"gift":[{"exists":false}]}}`, true},
		{"exists false where the element has it", `{"items":{"sku":["a"],"gift":[{"exists":false}]}}`, false},
		{"exists false alone looks at every element", `{"items":{"gift":[{"exists":false}]}}`, false},
		{"nested arrays", `{"groups":{"k":["y"],"v":[1]}}`, true},
		{"nested arrays, different elements", `{"groups":{"k":["x"],"v":[1]}}`, false},
		{"event key with a dot", `{"dotted":{"a":{"b":["1"]}}}`, true},
		{"pattern key with a dot", `{"nest":{"a.b":["2"]}}`, true},
		{"dots on both sides", `{"list":{"a.b":["3"]}}`, true},
		{"dots in one element, nesting in another", `{"list":{"a":{"b":["4"]}}}`, true},
	})
}

// TestDottedKeyChoices covers events whose dotted keys give one field values in several arrays, where the
// matcher must choose (found by the differential test; checked against the brute-force reference too).
func TestDottedKeyChoices(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, pattern, event string
		want                 bool
	}{
		{"a value below chooses the element that makes exists:false hold",
			`{"a":{"a":[{"exists":false}],"a.b":[{"exists":true}]}}`,
			`{"a":[{"a":[[["x"],{"b":2}]],"a.b":"x"}]}`, true},
		{"a field that allows absence but has values in two arrays",
			`{"a":{"a":[{"exists":true}],"b":[{"anything-but":"x"}],"b.a":["z",{"exists":false}]}}`,
			`{"a":[[{"a":1,"b":"y","b.a":"y"}]],"a.b":[{"a":[["x"]]}]}`, false},
		{"values in two arrays, either may be used",
			`{"o":{"a":{"b":{"c":["1"],"d":["4"]}}}}`,
			`{"o":{"a.b":[{"c":"1","d":"2"}],"a":{"b":[{"c":"3","d":"4"}]}}}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if ref, ok := refBrute([]byte(tc.pattern), []byte(tc.event)); !ok || ref != tc.want {
				t.Fatalf("the brute-force reference gives %v (decided: %v); the case wants %v", ref, ok, tc.want)
			}
			runMatchCases(t, tc.event, []matchCase{{"", tc.pattern, tc.want}})
		})
	}
}

func TestRepeatedKeyLastWins(t *testing.T) {
	t.Parallel()
	runMatchCases(t, `{"location":"eu-central-1"}`, []matchCase{
		{"last occurrence", `{"location":[{"prefix":"us-"}],"location":[{"anything-but":"us-east"}]}`, true},
		{"last occurrence fails", `{"location":[{"anything-but":"us-east"}],"location":[{"prefix":"us-"}]}`, false},
	})
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
		{"number value", `{"type":1}`, "type", "object or an array"},
		{"empty array", `{"type":[]}`, "type", "must not be empty"},
		{"empty object", `{"data":{}}`, "data", "must not be empty"},
		{"nested array", `{"type":[["x"]]}`, "type[0]", "nested"},
		{"unknown operator", `{"data":{"a":[{"bogus":1}]}}`, "data.a[0].bogus", `unsupported operator "bogus"`},
		{"operator names are case-sensitive", `{"a":[{"EXISTS":true}]}`, "a[0].EXISTS", "unsupported operator"},
		{"two keys in operator", `{"type":[{"prefix":"a","suffix":"b"}]}`, "type[0]", "exactly one key"},
		{"trailing data", `{"type":["x"]} {}`, "", "unexpected data"},
		{"number out of range", `{"a":[1e400]}`, "a[0]", "out of range"},
		{"prefix not string", `{"type":[{"prefix":1}]}`, "type[0].prefix", "takes a string"},
		{"prefix list", `{"type":[{"prefix":["a"]}]}`, "type[0].prefix", "takes a string"},
		{"prefix with another operator", `{"type":[{"prefix":{"wildcard":"a"}}]}`, "type[0].prefix", "equals-ignore-case"},
		{"suffix not string", `{"type":[{"suffix":1}]}`, "type[0].suffix", "takes a string"},
		{"equals-ignore-case list", `{"type":[{"equals-ignore-case":["a"]}]}`, "type[0].equals-ignore-case", "takes a string"},
		{"wildcard not string", `{"type":[{"wildcard":1}]}`, "type[0].wildcard", "takes a string"},
		{"wildcard consecutive stars", `{"type":[{"wildcard":"a**b"}]}`, "type[0].wildcard", "consecutive"},
		{"wildcard bad escape", `{"type":[{"wildcard":"a\\b"}]}`, "type[0].wildcard", "escapes only"},
		{"wildcard trailing backslash", `{"type":[{"wildcard":"a\\"}]}`, "type[0].wildcard", "escapes only"},
		{"wildcard too complex", `{"type":[{"wildcard":"*:*:*:*:*:event-bus/*"}]}`, "type[0].wildcard", "too complex (limit 10)"},
		{"anything-but null", `{"a":[{"anything-but":null}]}`, "a[0].anything-but", "anything-but takes"},
		{"anything-but bool", `{"a":[{"anything-but":true}]}`, "a[0].anything-but", "anything-but takes"},
		{"anything-but empty list", `{"a":[{"anything-but":[]}]}`, "a[0].anything-but", "must not be empty"},
		{"anything-but null in list", `{"a":[{"anything-but":["a",null]}]}`, "a[0].anything-but[1]", "strings or numbers"},
		{"anything-but mixed list", `{"a":[{"anything-but":["a",1]}]}`, "a[0].anything-but", "only strings or only numbers"},
		{"anything-but empty prefix", `{"a":[{"anything-but":{"prefix":""}}]}`, "a[0].anything-but.prefix", "must not be empty"},
		{"anything-but empty suffix", `{"a":[{"anything-but":{"suffix":[""]}}]}`, "a[0].anything-but.suffix", "must not be empty"},
		{"anything-but prefix ignoring case", `{"a":[{"anything-but":{"prefix":{"equals-ignore-case":"x"}}}]}`,
			"a[0].anything-but.prefix", "string or a list of strings"},
		{"anything-but prefix number", `{"a":[{"anything-but":{"prefix":[1]}}]}`, "a[0].anything-but.prefix[0]", "takes strings"},
		{"anything-but ignore-case number", `{"a":[{"anything-but":{"equals-ignore-case":1}}]}`, "a[0].anything-but.equals-ignore-case", "string or a list"},
		{"anything-but numeric", `{"a":[{"anything-but":{"numeric":[">",1]}}]}`, "a[0].anything-but.numeric", "unsupported anything-but operator"},
		{"anything-but wildcard consecutive stars", `{"a":[{"anything-but":{"wildcard":["**"]}}]}`, "a[0].anything-but.wildcard", "consecutive"},
		{"numeric not array", `{"a":[{"numeric":10}]}`, "a[0].numeric", "takes an array"},
		{"numeric odd", `{"a":[{"numeric":[">",0,"<"]}]}`, "a[0].numeric", "takes an array"},
		{"numeric two lower bounds", `{"a":[{"numeric":[">",0,">",1]}]}`, "a[0].numeric[2]", "one lower bound"},
		{"numeric two upper bounds", `{"a":[{"numeric":["<",0,"<=",1]}]}`, "a[0].numeric[2]", "one upper bound"},
		{"numeric = in a range", `{"a":[{"numeric":["=",0,"<",1]}]}`, "a[0].numeric[0]", "cannot be combined"},
		{"numeric unknown operator", `{"a":[{"numeric":["!=",0]}]}`, "a[0].numeric[0]", `unsupported numeric operator "!="`},
		{"numeric string operand", `{"a":[{"numeric":[">","0"]}]}`, "a[0].numeric[1]", "numbers only"},
		{"numeric empty range", `{"a":[{"numeric":[">",5,"<",5]}]}`, "a[0].numeric", "range is empty"},
		{"numeric inverted range", `{"a":[{"numeric":[">",5,"<",1]}]}`, "a[0].numeric", "range is empty"},
		{"exists not bool", `{"a":[{"exists":"true"}]}`, "a[0].exists", "true or false"},
		{"cidr bad", `{"a":[{"cidr":"bad-filter"}]}`, "a[0].cidr", "not an IPv4 or IPv6 network"},
		{"cidr bad mask", `{"a":[{"cidr":"10.0.0.0/33"}]}`, "a[0].cidr", "not an IPv4 or IPv6 network"},
		{"cidr zone", `{"a":[{"cidr":"fe80::1%eth0"}]}`, "a[0].cidr", "not an IPv4 or IPv6 network"},
		{"cidr list", `{"a":[{"cidr":["10.0.0.0/8"]}]}`, "a[0].cidr", "takes a string"},
		{"$or not array", `{"$or":{"a":["x"]}}`, "$or", "at least two objects"},
		{"$or one branch", `{"$or":[{"a":["x"]}]}`, "$or", "at least two objects"},
		{"$or with a value", `{"$or":[{"a":["x"]},"b"]}`, "$or[1]", "at least two objects"},
		{"$or empty branch", `{"$or":[{"a":["x"]},{}]}`, "$or[1]", "must not be empty"},
		{"error inside $or", `{"d":{"$or":[{"a":["x"]},{"b":[{"nope":1}]}]}}`, "d.$or[1].b[0].nope", "unsupported operator"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Compile([]byte(tc.pattern))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("want *Error, got %v", err)
			}
			if pe.Path != tc.wantPath || !strings.Contains(pe.Reason, tc.wantReason) {
				t.Fatalf("got path %q reason %q; want path %q reason containing %q", pe.Path, pe.Reason, tc.wantPath, tc.wantReason)
			}
			if want := tc.wantPath + ": "; tc.wantPath != "" && !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("Error() = %q, want it to start with %q", err.Error(), want)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	nest := func(n int) string {
		p := `["x"]`
		for range n {
			p = `{"a":` + p + `}`
		}
		return p
	}
	// or expands to 2^n clauses.
	or := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"k%d":{"$or":[{"a":["x"]},{"b":["y"]}]}`, i)
		}
		b.WriteString("}")
		return b.String()
	}
	values := func(n int) string {
		vs := make([]string, n)
		for i := range vs {
			vs[i] = fmt.Sprint(i)
		}
		return `{"a":[` + strings.Join(vs, ",") + `]}`
	}
	cases := []struct {
		name    string
		limits  Limits
		pattern string
		reason  string // "" for accepted
	}{
		{"size at the limit", Limits{}, `{"a":["` + strings.Repeat("x", DefaultMaxSize-10) + `"]}`, ""},
		{"size over the limit", Limits{}, `{"a":["` + strings.Repeat("x", DefaultMaxSize-9) + `"]}`, "4097 bytes; at most 4096"},
		{"size configured", Limits{MaxSize: 20}, `{"a":["xxxxxxxxxxxxxxxxxx"]}`, "at most 20 are allowed"},
		{"depth at the limit", Limits{}, nest(MaxDepth), ""},
		{"depth over the limit", Limits{}, nest(MaxDepth + 1), "deeper than 16 levels"},
		{"depth configured", Limits{MaxDepth: 2}, nest(3), "deeper than 2 levels"},
		{"$or combinations at the limit", Limits{}, or(6), ""}, // 64
		{"$or combinations over the limit", Limits{}, or(7), "more than 100 combinations"},
		{"$or combinations configured", Limits{MaxCombinations: 4}, or(3), "more than 4 combinations"},
		{"values over the limit", Limits{MaxValues: 10}, values(11), "more than 10 values"},
		{"wildcard complexity configured", Limits{MaxWildcardComplexity: 20}, `{"a":[{"wildcard":"*:*:*:*:*:event-bus/*"}]}`, ""},
		{"wildcard complexity lowered", Limits{MaxWildcardComplexity: 2}, `{"a":[{"wildcard":"a*b"}]}`, "too complex (limit 2)"},
		{"negative limit", Limits{MaxSize: -1}, `{"a":["x"]}`, "must not be negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.limits.Compile([]byte(tc.pattern))
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("Compile: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("Compile = %v, want an error containing %q", err, tc.reason)
			}
		})
	}
}

func TestUsesWildcard(t *testing.T) {
	t.Parallel()
	for pattern, want := range map[string]bool{
		`{"a":["*"]}`:                                   false,
		`{"a":[{"prefix":"x"}]}`:                        false,
		`{"a":[{"wildcard":"x*"}]}`:                     true,
		`{"a":[{"anything-but":{"wildcard":"x*"}}]}`:    true,
		`{"$or":[{"a":["x"]},{"b":[{"wildcard":""}]}]}`: true,
	} {
		p, err := Compile([]byte(pattern))
		if err != nil {
			t.Fatal(err)
		}
		if p.UsesWildcard() != want {
			t.Errorf("%s: UsesWildcard = %v, want %v", pattern, p.UsesWildcard(), want)
		}
	}
}

func TestEventErrors(t *testing.T) {
	t.Parallel()
	p, err := Compile([]byte(`{"a":["x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := NewMatcher()
	if err := m.Add("p", p); err != nil {
		t.Fatal(err)
	}
	for event, want := range map[string]string{
		`[1]`:                 "must be a JSON object",
		`"x"`:                 "must be a JSON object",
		``:                    "unexpected end",
		`{"a":"x"`:            "unexpected end",
		`{"a":"x"} {}`:        "unexpected data",
		`{"a":x}`:             "invalid character",
		`{"b":[1,]}`:          "invalid character",
		`{"b":01}`:            "after object key:value pair",
		"{\"b\":\"\x01\"}":    "control character",
		`{"b":"\q"}`:          "invalid escape",
		`{"b":"\u12"}`:        "\\u escape",
		`{"b":tru}`:           "invalid literal",
		`{"b":1.}`:            "decimal point",
		`{"b":1e}`:            "exponent",
		`{"a" "x"}`:           "after object key",
		`{a:1}`:               "object key string",
		`{"b":{"c":[[[[1]]]]`: "unexpected end",
	} {
		if _, err := p.Match([]byte(event)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Pattern.Match(%q) = %v, want an error containing %q", event, err, want)
		}
		if _, err := m.Match([]byte(event)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Matcher.Match(%q) = %v, want an error containing %q", event, err, want)
		}
		if _, err := Explain(p, []byte(event)); err == nil {
			t.Errorf("Explain(%q) gave no error", event)
		}
	}
	deep := strings.Repeat("[", maxEventDepth+1) + strings.Repeat("]", maxEventDepth+1)
	if _, err := m.Match([]byte(`{"a":` + deep + `}`)); err == nil || !strings.Contains(err.Error(), "max depth") {
		t.Errorf("deep event: %v", err)
	}
}

// TestEventStrings checks that escapes and invalid UTF-8 in events decode as with encoding/json.
func TestEventStrings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ event, value string }{
		{`{"a":"caf\u00e9"}`, "café"},
		{`{"a":"\ud83d\ude80"}`, "🚀"},
		{`{"a":"\ud83d"}`, "\ufffd"},
		{`{"a":"\"\\\/\b\f\n\r\t"}`, "\"\\/\b\f\n\r\t"},
		{"{\"a\":\"x\xffy\"}", "x\ufffdy"},
		{`{"a.b":"dotted"}`, ""},
	} {
		if tc.value == "" {
			continue
		}
		var decoded map[string]string
		if err := json.Unmarshal([]byte(tc.event), &decoded); err != nil || decoded["a"] != tc.value {
			t.Fatalf("test case %s: encoding/json gives %q, %v", tc.event, decoded["a"], err)
		}
		p, err := Compile(mustJSON(t, map[string]any{"a": []any{tc.value}}))
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := p.Match([]byte(tc.event)); err != nil || !ok {
			t.Errorf("%s: Match = %v, %v; want a match of %q", tc.event, ok, err, tc.value)
		}
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
	add("d", `{"$or":[{"type":["order.created"]},{"source":["shop"]}]}`) // two clauses, one id
	add("e", `{"missing":[{"exists":false}]}`)                           // verified for every event
	got, err := m.Match([]byte(`{"type":"order.created","source":"shop"}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "a,b,d,e" {
		t.Fatalf("got %v, want [a b d e]", got)
	}
	m.Delete("a")
	m.Delete("nothing")
	add("b", `{"type":["nothing"]}`) // replace
	add("e", `{"type":[{"exists":false}]}`)
	got, _ = m.Match([]byte(`{"type":"order.created"}`))
	if strings.Join(got, ",") != "d" {
		t.Fatalf("got %v, want [d]", got)
	}
	if _, err := m.Match([]byte(`[1]`)); err == nil {
		t.Fatal("want an error for a non-object event")
	}
	if err := m.Add("x", nil); err == nil {
		t.Fatal("want an error for a nil pattern")
	}
	if got, err := NewMatcher().Match([]byte(`{"a":1}`)); err != nil || got != nil {
		t.Fatalf("empty matcher: %v, %v", got, err)
	}
	var zero Matcher
	if err := zero.Add("z", mustCompile(t, `{"a":[1]}`)); err != nil {
		t.Fatal(err)
	}
	if got, _ := zero.Match([]byte(`{"a":1.0}`)); strings.Join(got, ",") != "z" {
		t.Fatalf("zero Matcher: %v", got)
	}

	// Match is safe while patterns change.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				ids, err := m.Match([]byte(`{"type":"user.created","source":"shop"}`))
				if err != nil {
					t.Error(err)
					return
				}
				if len(ids) == 0 || ids[0] != "c" && ids[0] != "d" {
					t.Errorf("goroutine %d: %v", i, ids)
					return
				}
			}
		}()
	}
	for i := range 50 {
		add(fmt.Sprintf("n%d", i), `{"type":["user.created"]}`)
	}
	wg.Wait()
}

func mustCompile(t testing.TB, p string) *Pattern {
	t.Helper()
	c, err := Compile([]byte(p))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExplain(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		pattern string
		want    *Explanation // nil: a match
	}{
		{"match", `{"type":["order.created"]}`, nil},
		{"value", `{"source":["shop/eu"],"type":["order.paid","order.sent"]}`,
			&Explanation{Path: "type", Expected: json.RawMessage(`["order.paid","order.sent"]`), Actual: json.RawMessage(`"order.created"`), Reason: "no value matches"}},
		{"missing", `{"data":{"customer":[{"prefix":"c-"}]}}`,
			&Explanation{Path: "data.customer", Expected: json.RawMessage(`[{"prefix":"c-"}]`), Reason: "the event has no value at this path"}},
		{"first in path order", `{"type":["x"],"data":{"currency":["USD"]}}`,
			&Explanation{Path: "data.currency", Expected: json.RawMessage(`["USD"]`), Actual: json.RawMessage(`"EUR"`), Reason: "no value matches"}},
		{"exists false", `{"data":{"gift":[{"exists":false}]}}`,
			&Explanation{Path: "data.gift", Expected: json.RawMessage(`[{"exists":false}]`), Actual: json.RawMessage(`false`), Reason: "the field exists; the pattern requires it to be absent"}},
		{"array values", `{"data":{"tags":["c"]}}`,
			&Explanation{Path: "data.tags", Expected: json.RawMessage(`["c"]`), Actual: json.RawMessage(`["a","b"]`), Reason: "no value matches"}},
		{"array consistency", `{"data":{"items":{"sku":["x1"],"qty":[5]}}}`,
			&Explanation{Path: "data.items.sku", Expected: json.RawMessage(`["x1"]`), Actual: json.RawMessage(`["x1","y2"]`),
				Reason: "the values that match are not in the array elements that the fields before it match"}},
		{"mixed", `{"data":{"currency":[{"exists":false},"USD"]}}`,
			&Explanation{Path: "data.currency", Expected: json.RawMessage(`[{"exists":false},"USD"]`), Actual: json.RawMessage(`"EUR"`), Reason: "the field exists and no value matches"}},
		{"$or", `{"$or":[{"type":["x"]},{"source":["shop/eu"],"time":[{"prefix":"2027"}]}]}`,
			&Explanation{Path: "time", Expected: json.RawMessage(`[{"prefix":"2027"}]`), Actual: json.RawMessage(`"2026-01-02T03:04:05Z"`),
				Reason: "no $or branch matches; in the closest (2 of 2): no value matches"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Explain(mustCompile(t, tc.pattern), []byte(cloudEvent))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil || got == nil {
				if got != tc.want {
					t.Fatalf("Explain = %+v, want %+v", got, tc.want)
				}
				return
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tc.want)
			if string(gj) != string(wj) {
				t.Fatalf("Explain =\n%s\nwant\n%s", gj, wj)
			}
		})
	}
	if _, err := Explain(nil, []byte(`{}`)); err == nil {
		t.Fatal("want an error for a nil pattern")
	}
}

// hostileCases are patterns and events built to make matchers backtrack. A backtracking matcher would not finish
// them within the test timeout; their cost is measured by BenchmarkHostile, not asserted here.
func hostileCases() []struct{ name, pattern, event string } {
	long := strings.Repeat("a", 200000)
	return []struct{ name, pattern, event string }{
		{"wildcard pieces that almost match", `{"a":[{"wildcard":"*a*a*a*ab"}]}`, `{"a":"` + long + `"}`},
		{"anything-but wildcards", `{"a":[{"anything-but":{"wildcard":["*aab","*a*b"]}}]}`, `{"a":"` + long + `"}`},
		{"wide array of objects", `{"a":{"b":["x"],"c":["y"],"d":[{"exists":false}]}}`,
			`{"a":[` + strings.Repeat(`{"b":"x","c":"z","d":1},{"b":"z","c":"y"},`, 20000) + `{"b":"q"}]}`},
		{"deep arrays", `{"a":{"b":["x"],"c":["y"]}}`, `{"a":` + strings.Repeat("[", 5000) + `{"b":"x"},{"c":"y"}` + strings.Repeat("]", 5000) + `}`},
		{"dotted keys everywhere", `{"a":{"b":{"c":["x"],"d":["y"]}}}`,
			`{"a":[` + strings.Repeat(`{"b.c":"x","b":{"d":"y"},"b.d":"z","b":{"c":"y"}},`, 2000) + `{}]}`},
	}
}

// TestHostile checks that the hostile cases are matched (they finish, without error).
func TestHostile(t *testing.T) {
	t.Parallel()
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := mustCompile(t, tc.pattern)
			m := NewMatcher()
			if err := m.Add("p", p); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Match([]byte(tc.event)); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Match([]byte(tc.event)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// BenchmarkHostile measures the hostile cases: each stays linear in the size of its event.
func BenchmarkHostile(b *testing.B) {
	for _, tc := range hostileCases() {
		b.Run(tc.name, func(b *testing.B) {
			p, err := Compile([]byte(tc.pattern))
			if err != nil {
				b.Fatal(err)
			}
			m := NewMatcher()
			if err := m.Add("p", p); err != nil {
				b.Fatal(err)
			}
			event := []byte(tc.event)
			b.SetBytes(int64(len(event)))
			for b.Loop() {
				if _, err := m.Match(event); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
