package cloudevent

import (
	"encoding/binary"
	"math/bits"
)

// ValidJSON reports whether data is exactly one JSON value (RFC 8259), white space around it allowed, as
// encoding/json.Valid does but at any depth, and how deeply its objects and arrays nest (0 for a scalar). It reads
// data once, without recursion, and skips the plain runs of a string eight bytes at a time: every event put or
// routed is validated, and most of an event's bytes are in strings. FuzzValidJSON holds it to encoding/json.Valid.
func ValidJSON(data []byte) (ok bool, depth int) {
	end, depth := endOfValue(data, skipSpace(data, 0))
	if end < 0 || skipSpace(data, end) != len(data) {
		return false, 0
	}
	return true, depth
}

// endOfValue returns where the JSON value that starts at i ends (past it, white space after it not skipped) and
// how deeply its objects and arrays nest, reading it as ValidJSON does; end -1 when no valid value starts at i.
func endOfValue(data []byte, i int) (end, depth int) {
	var buf [64]byte
	open := buf[:0] // the objects and arrays the value at i is in, innermost last: '{' or '['
	for {
		// A value starts at i.
		if i >= len(data) {
			return -1, 0
		}
		switch c := data[i]; {
		case c == '{' || c == '[':
			open = append(open, c)
			depth = max(depth, len(open))
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				open = open[:len(open)-1]
				i++
				break
			}
			if c == '{' {
				if i = memberValue(data, i); i < 0 {
					return -1, 0
				}
			}
			continue
		case c == '"':
			if i = endOfString(data, i); i < 0 {
				return -1, 0
			}
		case c == '-' || '0' <= c && c <= '9':
			if i = endOfNumber(data, i); i < 0 {
				return -1, 0
			}
		case c == 't':
			if i = literal(data, i, "true"); i < 0 {
				return -1, 0
			}
		case c == 'f':
			if i = literal(data, i, "false"); i < 0 {
				return -1, 0
			}
		case c == 'n':
			if i = literal(data, i, "null"); i < 0 {
				return -1, 0
			}
		default:
			return -1, 0
		}
		// A value ended before i: close what it ends, then go on to the next value of its array or object.
		for {
			if len(open) == 0 {
				return i, depth
			}
			i = skipSpace(data, i)
			if i >= len(data) {
				return -1, 0
			}
			top := open[len(open)-1]
			if data[i] == top+2 {
				open = open[:len(open)-1]
				i++
				continue
			}
			if data[i] != ',' {
				return -1, 0
			}
			i = skipSpace(data, i+1)
			if top == '{' {
				if i = memberValue(data, i); i < 0 {
					return -1, 0
				}
			}
			break
		}
	}
}

// isJSON reports whether data is one JSON value (ValidJSON).
func isJSON(data []byte) bool {
	ok, _ := ValidJSON(data)
	return ok
}

// memberValue reads an object member's name and colon at i and returns where its value starts (white space skipped),
// -1 when there is none.
func memberValue(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = endOfString(data, i); i < 0 {
		return -1
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	return skipSpace(data, i+1)
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// SWAR constants: a byte of each in every lane.
const (
	lanes01 = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

// endOfString returns where the string that starts at i (its opening quote) ends, past its closing quote; -1 when
// it is not a valid JSON string (a control character, a bad escape, no end).
func endOfString(data []byte, i int) int {
	i++
	for {
		// Eight bytes at a time while none is a quote, a backslash or a control character: a lane of x that is
		// zero after the xor, or below 0x20, sets its high bit in found (bytes of 0x80 and above set none). The
		// lowest lane set is always such a byte (a borrow only sets lanes above it): i goes to it.
		for i+8 <= len(data) {
			x := binary.LittleEndian.Uint64(data[i:])
			q, b := x^(lanes01*'"'), x^(lanes01*'\\')
			if found := (((q - lanes01) &^ q) | ((b - lanes01) &^ b) | ((x - lanes01*0x20) &^ x)) & lanes80; found != 0 {
				i += bits.TrailingZeros64(found) / 8
				break
			}
			i += 8
		}
		if i >= len(data) {
			return -1
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= len(data) {
				return -1
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) || !isHex(data[i+2]) || !isHex(data[i+3]) || !isHex(data[i+4]) || !isHex(data[i+5]) {
					return -1
				}
				i += 6
			default:
				return -1
			}
		case c < 0x20:
			return -1
		default:
			i++
		}
	}
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// endOfNumber returns where the number that starts at i ends, -1 when it is not a valid JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func endOfNumber(data []byte, i int) int {
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && '1' <= data[i] && data[i] <= '9':
		i = digits(data, i)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(data []byte, i int) int {
	for i < len(data) && '0' <= data[i] && data[i] <= '9' {
		i++
	}
	return i
}

// literal returns where word, expected at i, ends; -1 when it is not there.
func literal(data []byte, i int, word string) int {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}
