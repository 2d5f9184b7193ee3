package cloudevent_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// validCases are texts at the edges of RFC 8259 (and of eight-byte runs in strings), with what encoding/json.Valid
// answers for them.
var validCases = []string{
	``, ` `, `1`, ` 1 `, `-`, `-0`, `-01`, `01`, `0.`, `0.5`, `.5`, `1e`, `1e+`, `1E-7`, `1.5e+300`, `-1.0E2`,
	`true`, `tru`, `truex`, `false`, `null`, `nul`, `"`, `""`, `"a`, `"\"`, `"\\"`, `"\/"`, `"\u00e9"`, `"\u00G9"`,
	`"\u12"`, `"\x"`, "\"\t\"", "\"\x7f\"", "\"\xff\xfe\"", `"abcdefghijklmnop"`, `"abcdefg"hijklmnop"`,
	`"abcdefghijklmno\"pq"`, "\"abcdefghijk\x01lmnop\"", `"abcdefgh\\ijklmnop"`, `[]`, `[ ]`, `[1,]`, `[,1]`,
	`[1 2]`, `[1,2]`, `[[[]]]`, `[[]`, `[]]`, `{}`, `{ }`, `{"a":1}`, `{"a" : 1 , "b":[true,{"c":null}]}`,
	`{"a"}`, `{"a":}`, `{"a":1,}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":1}}`, `{"a":[}`, `[{]`, `{}{}`, `1 2`,
	"\n\r\t[\n1\r,\t2 ]\n", `[1,{"a":"b"},"c",[0.5e1]]`, `"\ud83d\ude00"`, `1e700`,
}

func TestValidJSONAsEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		checkValidJSON(t, []byte(c))
	}
	// Every byte that ends a plain run of a string, at every place of strings of 1 to 24 bytes, in lanes of eight.
	for n := 1; n <= 24; n++ {
		for at := range n {
			for _, special := range []string{`"`, `\\`, `\"`, `\u0041`, `\q`, `\`, "\x00", "\x1f", " ", "\x7f", "\x80", "\xff", "é"} {
				text := []byte(`["` + strings.Repeat("a", at) + special + strings.Repeat("b", n-at) + `"]`)
				checkValidJSON(t, text)
			}
		}
	}
	// Deeper than encoding/json goes (10,000), and deeper than its array of 64 levels on the stack.
	deep := strings.Repeat(`{"a":[`, 15000) + `1` + strings.Repeat(`]}`, 15000)
	if ok, depth := cloudevent.ValidJSON([]byte(deep)); !ok || depth != 30000 {
		t.Errorf("30,000 levels: %v, depth %d", ok, depth)
	}
	if ok, _ := cloudevent.ValidJSON([]byte(deep[:len(deep)-1])); ok {
		t.Error("30,000 levels, the last one not closed: valid")
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkValidJSON(t, data) })
}

// checkValidJSON checks ValidJSON's answer for data against encoding/json: Valid, and the depth its tokens reach.
func checkValidJSON(t *testing.T, data []byte) {
	t.Helper()
	ok, depth := cloudevent.ValidJSON(data)
	if want := json.Valid(data); ok != want {
		t.Fatalf("ValidJSON(%q) = %v, encoding/json says %v", data, ok, want)
	}
	if !ok {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // 1e700 is valid JSON
	level, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			level++
			deepest = max(deepest, level)
		case json.Delim('}'), json.Delim(']'):
			level--
		}
	}
	if depth != deepest {
		t.Fatalf("ValidJSON(%q) depth %d, encoding/json's tokens reach %d", data, depth, deepest)
	}
}
