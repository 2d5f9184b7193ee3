package awsevent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// awsNames are the CloudEvents attributes whose name in AWS's envelope is another (RewritePattern the other way
// round).
var awsNames = map[string]string{"type": "detail-type", "data": "detail"}

// PatternForAWS is a pattern over the CloudEvents stored (compact JSON, as RewritePattern makes it) in AWS's names:
// the top-level keys type and data (also as the first segment of a dotted key, and in the objects of a top-level
// $or) are detail-type and detail again; the rest is as kept. A pattern written through /api/v1 that names an
// extension called detail shows it as written. Errors: p is not a JSON object.
func PatternForAWS(p []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(p))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("the pattern is not a JSON object: %s", p)
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for first := true; dec.More(); first = false {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if !first {
			out.WriteByte(',')
		}
		if key == "$or" && len(val) > 0 && val[0] == '[' {
			var branches []json.RawMessage
			if err := json.Unmarshal(val, &branches); err != nil {
				return nil, err
			}
			for i, b := range branches {
				if len(b) > 0 && b[0] == '{' {
					if branches[i], err = PatternForAWS(b); err != nil {
						return nil, err
					}
				}
			}
			joined := []byte{'['}
			for i, b := range branches {
				if i > 0 {
					joined = append(joined, ',')
				}
				joined = append(joined, b...)
			}
			val = append(joined, ']')
		}
		head, rest, dotted := strings.Cut(key, ".")
		if name, ok := awsNames[head]; ok {
			key = name
			if dotted {
				key += "." + rest
			}
		}
		writeString(&out, key)
		out.WriteByte(':')
		out.Write(val)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// writeString writes s as a JSON string, without escaping HTML characters (as RewritePattern writes keys).
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}
