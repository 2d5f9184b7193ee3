package cloudevent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// scanCases are batches and events at the edges of what the one-pass reader (scanBatch, scanObject) meets: white
// space everywhere JSON allows it, escapes in names and values, every kind of value as an element and as a member,
// members repeated, data of every kind, nesting, and texts that are not valid JSON or not an array.
var scanCases = []string{
	`[]`, ` [ ] `, "\t[\n]\r\n", `[{}]`, `[ { } ]`, `[1]`, `[1,2]`, `["x",true,false,null,-1.5e3,[],[1],{"a":{}}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","data":{"a":[1,{"b":"c"}]}}]`,
	` [ { "specversion" : "1.0" , "id" : "1" , "source" : "/s" , "type" : "t" , "data" : [ 1 , 2 ] } ] `,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","data":"x"},{"specversion":"1.0","id":"2","source":"/s","type":"t","data":null}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","datacontenttype":"text/plain","data":"a\nb\u00e9"}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","datacontenttype":"text/plain","data":5}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","data_base64":"aGk="}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","data_base64":"aGk\/"}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","data_base64":1}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","data":1,"data_base64":"aGk="}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","data":1,"data":2}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","d\u0061ta":{"a":1}}]`,
	`[{"specversion":"1.0","id":"1","source":"/a","source":"/b","type":"t"}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","n":1.5}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","n":1e3}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","n":-0}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","dataschema":"http://x/y","dataschema":"z"}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","data":` + strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + `}]`,
	`{"specversion":"1.0","id":"1","source":"/s","type":"t"}`, `"a"`, `1`, `null`, ``, ` `,
	`[`, `]`, `[,]`, `[1,]`, `[1 2]`, `[{]`, `[{"a"}]`, `[{"a":}]`, `[{"a":1,}]`, `[{"a":1 "b":2}]`, `[{1:2}]`,
	`[{"a":1}}`, `[{"a":1}] x`, `[{"a":"\x"}]`, "[{\"a\":\"\x01\"}]", `[{"a":01}]`, `[{"a":tru}]`, `[{"a":[1}]`,
	`[{"specversion":"1.0","id":"1","source":"/s","type":"t","data":{"a":1}]`,
}

// TestScanReadsAsGJSON: UnmarshalBatch and Unmarshal, which read an array or an object in one pass, give what
// parsing with gjson gives (the path they take for JSON that is not valid, or not what they expect), for every case
// and for every event of the fast reader's cases, alone and in a batch.
func TestScanReadsAsGJSON(t *testing.T) {
	cases := append([]string(nil), scanCases...)
	for _, c := range attributeCases {
		cases = append(cases, c, "["+c+"]", "[ "+strings.Replace(c, "}", `,"data":{"x":[1,"y"]}}`, 1)+" , 1 ]")
	}
	for _, c := range cases {
		sameAsGJSON(t, []byte(c))
		if strings.HasPrefix(c, "[") && len(c) > 2 {
			sameAsGJSON(t, []byte(c[1:len(c)-1])) // its elements, as one text
		}
	}
}

func FuzzScanBatch(f *testing.F) {
	for _, c := range scanCases {
		f.Add([]byte(c))
	}
	for _, c := range attributeCases {
		f.Add([]byte("[" + c + "]"))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { sameAsGJSON(t, raw) })
}

// sameAsGJSON checks UnmarshalBatch and Unmarshal of raw against gjson's parse of it, and that the one pass is taken
// exactly when raw is a valid JSON array (scanBatch) or object (Unmarshal's scanObject).
func sameAsGJSON(t *testing.T, raw []byte) {
	t.Helper()
	valid := json.Valid(raw)
	trimmed := strings.TrimLeft(string(raw), " \t\r\n")
	_, scanned := scanBatch(raw)
	require.Equal(t, valid && strings.HasPrefix(trimmed, "["), scanned, "scanBatch of %q", raw)
	if valid && strings.HasPrefix(trimmed, "{") {
		members, end := scanObject(raw, len(raw)-len(trimmed), nil)
		require.GreaterOrEqual(t, end, 0, "scanObject of %q", raw)
		require.Equal(t, len(strings.TrimRight(string(raw), " \t\r\n")), end, "the end of %q", raw)
		var want []member
		gjson.Parse(trimmed).ForEach(func(k, v gjson.Result) bool {
			k.Index, v.Index = k.Index+len(raw)-len(trimmed), v.Index+len(raw)-len(trimmed)
			want = append(want, member{name: k.String(), k: k, v: v})
			return true
		})
		require.Equal(t, fmt.Sprintf("%#v", want), fmt.Sprintf("%#v", members), "the members of %q", raw)
	}

	got, err := UnmarshalBatch(raw)
	want, wantErr := parseBatch(raw)
	if wantErr != nil {
		require.EqualError(t, err, wantErr.Error(), "UnmarshalBatch(%q)", raw)
	} else {
		require.NoError(t, err, "UnmarshalBatch(%q)", raw)
		require.Len(t, got, len(want), "UnmarshalBatch(%q)", raw)
		for i := range want {
			g, w := got[i], want[i]
			require.Equal(t, fmt.Sprint(w.Err), fmt.Sprint(g.Err), "entry %d of %q", i, raw)
			require.Equal(t, w.Event, g.Event, "entry %d of %q", i, raw)
			require.Equal(t, w.Size, g.Size, "entry %d of %q", i, raw)
			require.Equal(t, string(w.JSON), string(g.JSON), "entry %d of %q", i, raw)
			require.Equal(t, len(g.JSON), cap(g.JSON), "an append to entry %d's JSON copies it", i)
		}
	}

	e, err := Unmarshal(raw)
	doc, wantErr := parse(raw)
	var wantEvent any
	if wantErr == nil {
		wantEvent, wantErr = fromDoc(doc, raw)
	}
	if wantErr != nil {
		require.EqualError(t, err, wantErr.Error(), "Unmarshal(%q)", raw)
		return
	}
	require.NoError(t, err, "Unmarshal(%q)", raw)
	require.Equal(t, wantEvent, e, "Unmarshal(%q)", raw)
}
