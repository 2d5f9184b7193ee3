package transform

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// syntax is how a template writes its placeholders.
type syntax int

const (
	// angle is Amazon EventBridge's <name>.
	angle syntax = iota
	// dollar is Apache RocketMQ EventBridge's ${name}.
	dollar
)

// segment is a piece of a template: literal text, or a placeholder naming a variable.
type segment struct {
	text     string
	variable string
	// inString tells that the placeholder sits inside a JSON string literal of the template ("Order <id>").
	inString bool
}

// template is a compiled input template.
type template struct {
	segments []segment
	// json tells that the template is JSON once its placeholders are filled in; else it is a text template.
	json bool
}

// isNameByte reports whether c may occur in a placeholder's name.
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// placeholderAt returns the name of the placeholder that starts at s[i] and its length in bytes.
func placeholderAt(s string, i int, syn syntax) (name string, n int, ok bool) {
	open, closing := "<", byte('>')
	if syn == dollar {
		open, closing = "${", '}'
	}
	if !strings.HasPrefix(s[i:], open) {
		return "", 0, false
	}
	j := i + len(open)
	for j < len(s) && isNameByte(s[j]) {
		j++
	}
	if j == i+len(open) || j >= len(s) || s[j] != closing {
		return "", 0, false
	}
	return s[i+len(open) : j], j + 1 - i, true
}

// parseTemplate splits s into literal text and placeholders. Only the names for which known answers true are
// placeholders; anything else between the delimiters stays literal text (an HTML tag in a text template, a
// comparison such as a<b>c). The template is a JSON template when it is valid JSON with every placeholder outside
// a string literal taken as null and every placeholder inside one taken as nothing.
func parseTemplate(s string, syn syntax, known func(name string) bool) *template {
	t := &template{}
	var (
		lit     strings.Builder
		probe   strings.Builder
		inStr   bool
		escaped bool
	)
	flush := func() {
		if lit.Len() > 0 {
			t.segments = append(t.segments, segment{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if escaped {
			escaped = false
			lit.WriteByte(c)
			probe.WriteByte(c)
			i++
			continue
		}
		if name, n, ok := placeholderAt(s, i, syn); ok && known(name) {
			flush()
			t.segments = append(t.segments, segment{variable: name, inString: inStr})
			if !inStr {
				probe.WriteString("null")
			}
			i += n
			continue
		}
		switch {
		case c == '"':
			inStr = !inStr
		case c == '\\' && inStr:
			escaped = true
		}
		lit.WriteByte(c)
		probe.WriteByte(c)
		i++
	}
	flush()
	t.json = json.Valid([]byte(probe.String()))
	return t
}

// variables returns the names of the template's placeholders, each once, in order.
func (t *template) variables() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range t.segments {
		if s.variable != "" && !seen[s.variable] {
			seen[s.variable] = true
			out = append(out, s.variable)
		}
	}
	return out
}

// value is the value of a variable for one event.
type value struct {
	found bool
	// str is the value when it is a JSON string (isString); raw is its JSON text otherwise.
	str      string
	isString bool
	raw      []byte
}

// errTooLarge is returned by render when the output would exceed its limit.
type errTooLarge struct{ limit int }

func (e errTooLarge) Error() string {
	return fmt.Sprintf("the output is larger than %d bytes", e.limit)
}

// render fills the placeholders with values. In a JSON template a value outside a string literal is written as
// JSON (a string quoted, a missing value as null) and a value inside one as the content of a JSON string (a
// missing value as nothing); in a text template a string is written as its text, another value as its JSON text
// and a missing value as nothing. It fails with errTooLarge beyond limit bytes.
func (t *template) render(values map[string]value, limit int) ([]byte, error) {
	out := make([]byte, 0, 256)
	for _, s := range t.segments {
		if s.variable == "" {
			out = append(out, s.text...)
		} else {
			v := values[s.variable]
			switch {
			case !t.json:
				if v.isString {
					out = append(out, v.str...)
				} else if v.found {
					out = append(out, v.raw...)
				}
			case s.inString:
				if v.isString {
					out = appendEscaped(out, v.str)
				} else if v.found {
					out = appendEscaped(out, string(v.raw))
				}
			default:
				switch {
				case v.isString:
					out = append(out, '"')
					out = appendEscaped(out, v.str)
					out = append(out, '"')
				case v.found:
					out = append(out, v.raw...)
				default:
					out = append(out, "null"...)
				}
			}
		}
		if len(out) > limit {
			return nil, errTooLarge{limit: limit}
		}
	}
	return out, nil
}

const hexDigits = "0123456789abcdef"

// appendEscaped appends s as the content of a JSON string (without the quotes): quotes, backslashes and control
// characters escaped, invalid UTF-8 replaced by U+FFFD, everything else as is.
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// Valid JSON, but not valid JavaScript in a string literal: escaped as encoding/json does.
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}
