package awsevent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/eventbridge-go/eventbridge/domain/pattern"
)

// renamed are the top-level keys of AWS's envelope whose CloudEvents attribute has another name.
var renamed = map[string]string{"detail-type": "type", "detail": "data"}

// RewritePattern returns the event pattern awsPattern, written for Amazon EventBridge's envelope, as a pattern over
// the JSON form of the CloudEvents stored here (see the package doc): compact JSON, the top-level keys detail-type
// and detail (also as the first segment of a dotted key) renamed type and data, every other key and every value
// byte for byte as written, in the same order. The objects of a top-level $or are top level too, at any depth of
// $or; keys below detail are data and are never renamed.
//
// Errors name the problem: awsPattern is not JSON, or not a JSON object; it names version (no CloudEvent carries
// AWS's version, always "0"); it names both an AWS key and the attribute it becomes (detail and data, detail-type
// and type), which would be one field here; or the rewritten pattern does not compile (a *pattern.Error, its path
// in AWS's names). The caller wraps them into its own error (rule.ErrInvalidEventPattern).
func RewritePattern(awsPattern []byte) ([]byte, error) {
	var src bytes.Buffer
	if err := json.Compact(&src, awsPattern); err != nil {
		return nil, fmt.Errorf("event pattern is not valid JSON: %w", err)
	}
	in := src.Bytes()
	if in[0] != '{' {
		return nil, fmt.Errorf("event pattern must be a JSON object, not %s", kindOf(in[0]))
	}
	heads := map[string]bool{} // the first segments of the top-level keys, as written
	out, err := rewriteObject(make([]byte, 0, len(in)), in, heads)
	if err != nil {
		return nil, err
	}
	for aws, ce := range renamed {
		if heads[aws] && heads[ce] {
			return nil, fmt.Errorf("event pattern names both %q and %q, which are both the CloudEvents attribute %q "+
				"here: name %q only", aws, ce, ce, aws)
		}
	}
	if _, err := pattern.Compile(out); err != nil {
		return nil, awsPath(err, heads)
	}
	return out, nil
}

// rewriteObject appends the top-level object obj (compact, valid JSON) to dst with its keys renamed, recording the
// first segment of every key in heads.
func rewriteObject(dst, obj []byte, heads map[string]bool) ([]byte, error) {
	dst = append(dst, '{')
	first := true
	err := eachMember(obj, func(rawKey, val []byte) error {
		var key string
		if err := json.Unmarshal(rawKey, &key); err != nil {
			return fmt.Errorf("event pattern key %s: %w", rawKey, err)
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		head, rest, dotted := strings.Cut(key, ".")
		heads[head] = true
		switch {
		case head == "version":
			return fmt.Errorf("event pattern names %q: Amazon EventBridge's version (always \"0\") has no "+
				"counterpart in the CloudEvents stored here; remove it from the pattern", key)
		case key == "$or" && val[0] == '[':
			dst = append(dst, rawKey...)
			dst = append(dst, ':')
			var err error
			dst, err = rewriteOr(dst, val, heads)
			return err
		case renamed[head] != "":
			name := renamed[head]
			if dotted {
				name += "." + rest
			}
			dst = appendString(dst, name)
		default:
			dst = append(dst, rawKey...)
		}
		dst = append(dst, ':')
		dst = append(dst, val...)
		return nil
	})
	return append(dst, '}'), err
}

// rewriteOr appends the array of a top-level $or with its objects rewritten as top-level objects; elements that
// are not objects are kept for pattern.Compile to refuse.
func rewriteOr(dst, arr []byte, heads map[string]bool) ([]byte, error) {
	dst = append(dst, '[')
	for i := 1; i < len(arr)-1; {
		end := valueEnd(arr, i)
		if arr[i] == '{' {
			var err error
			if dst, err = rewriteObject(dst, arr[i:end], heads); err != nil {
				return nil, err
			}
		} else {
			dst = append(dst, arr[i:end]...)
		}
		if end < len(arr)-1 { // a comma
			dst = append(dst, ',')
			end++
		}
		i = end
	}
	return append(dst, ']'), nil
}

// eachMember calls fn with the raw key (quoted, as written) and raw value of every member of obj, a compact, valid
// JSON object, in order, until fn fails.
func eachMember(obj []byte, fn func(rawKey, val []byte) error) error {
	for i := 1; i < len(obj)-1; {
		keyEnd := valueEnd(obj, i)
		valEnd := valueEnd(obj, keyEnd+1) // past the colon
		if err := fn(obj[i:keyEnd], obj[keyEnd+1:valEnd]); err != nil {
			return err
		}
		i = valEnd + 1 // past the comma or onto the closing brace
	}
	return nil
}

// valueEnd returns the index just past the JSON value that starts at b[i]; b is compact, valid JSON.
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(b)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = valueEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j
}

// appendString appends s as a JSON string, without escaping HTML characters.
func appendString(dst []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// awsPath returns a compile error whose path starts (after the top-level $or branches it is in) with an attribute
// that the pattern named by its AWS name with that name again: "$or[1].type[0]" is "$or[1].detail-type[0]" when
// the pattern said detail-type. Collisions are refused before, so the AWS name is the only one it can stand for.
func awsPath(err error, heads map[string]bool) error {
	var pe *pattern.Error
	if !errors.As(err, &pe) {
		return err
	}
	branches, rest := "", pe.Path
	for strings.HasPrefix(rest, "$or[") {
		i := strings.Index(rest, "].")
		if i < 0 {
			break
		}
		branches, rest = branches+rest[:i+2], rest[i+2:]
	}
	for aws, ce := range renamed {
		if heads[aws] && (rest == ce || strings.HasPrefix(rest, ce+".") || strings.HasPrefix(rest, ce+"[")) {
			return &pattern.Error{Path: branches + aws + rest[len(ce):], Reason: pe.Reason}
		}
	}
	return err
}

// kindOf names the kind of JSON value that starts with c.
func kindOf(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
