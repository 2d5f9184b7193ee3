package pattern

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// program maps the paths that conditions name to small ids, in a trie of path segments that lets the event
// scanner skip every part of an event that no condition names.
type program struct {
	root *pathNode
	ids  map[string]int32
}

type pathNode struct {
	children map[string]*pathNode
	id       int32 // -1 when no condition names exactly this path
}

func newProgram() *program {
	return &program{root: &pathNode{id: -1}, ids: map[string]int32{}}
}

func (pr *program) npaths() int { return len(pr.ids) }

// add returns the id of a path ("a.b.c"), adding it if needed.
func (pr *program) add(path string) int32 {
	if id, ok := pr.ids[path]; ok {
		return id
	}
	n := pr.root
	for _, seg := range strings.Split(path, ".") {
		if n.children == nil {
			n.children = map[string]*pathNode{}
		}
		c := n.children[seg]
		if c == nil {
			c = &pathNode{id: -1}
			n.children[seg] = c
		}
		n = c
	}
	id := int32(len(pr.ids))
	pr.ids[path] = id
	n.id = id
	return id
}

// boundClause is a clause whose conditions know the id of their path in one program.
type boundClause struct {
	conds []*condition
	paths []int32
}

func (pr *program) bind(cl *clause) boundClause {
	b := boundClause{conds: cl.conds, paths: make([]int32, len(cl.conds))}
	for i, c := range cl.conds {
		b.paths[i] = pr.add(c.path)
	}
	return b
}

// lookup follows an event key, which may itself hold dots, from n; nil when no condition lies below.
func (n *pathNode) lookup(key []byte) *pathNode {
	for {
		i := bytes.IndexByte(key, '.')
		if i < 0 {
			return n.children[string(key)]
		}
		n = n.children[string(key[:i])]
		if n == nil || n.children == nil {
			return nil
		}
		key = key[i+1:]
	}
}

type leafKind uint8

const (
	lString leafKind = iota + 1
	lNumber
	lTrue
	lFalse
	lNull
)

// leaf is a scalar of the event at a path some condition names.
type leaf struct {
	str  []byte // a decoded string, or the text of a number
	num  float64
	path int32
	ctx  int32 // the innermost array element that holds it; 0 when it is in no array
	next int32 // the previous leaf of the same path, -1 for none
	kind leafKind
}

// arrayCtx is an element of an array of the event that is an object or an array: leaves in different such
// elements of one array never combine. A scalar element is in the context of the array itself.
type arrayCtx struct {
	parent, array, index, depth int32
}

// maxEventDepth is how deeply an event may nest, as for encoding/json.
const maxEventDepth = 10000

// flatEvent is a scanned event: its leaves at the paths of one program. Reused from event to event.
type flatEvent struct {
	data    []byte
	pos     int
	leaves  []leaf
	ctxs    []arrayCtx
	arrays  int32
	buf     []byte // decoded strings that differ from their JSON text
	head    []int32
	headGen []uint32
	gen     uint32
}

var errNotObject = errors.New("event must be a JSON object")

// syntaxError is an event that is not valid JSON.
type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("event is not valid JSON: %s at offset %d", e.msg, e.off)
}

// first is the last scanned leaf at path (follow next for the others), -1 for none.
func (e *flatEvent) first(path int32) int32 {
	if e.headGen[path] != e.gen {
		return -1
	}
	return e.head[path]
}

func (e *flatEvent) reset(npaths int) {
	e.leaves = e.leaves[:0]
	e.ctxs = append(e.ctxs[:0], arrayCtx{parent: -1})
	e.arrays = 0
	e.buf = e.buf[:0]
	if len(e.head) < npaths {
		e.head = make([]int32, npaths)
		e.headGen = make([]uint32, npaths)
		e.gen = 0
	}
	e.gen++
	if e.gen == 0 {
		clear(e.headGen)
		e.gen = 1
	}
}

// scan reads a JSON object and records its leaves at the paths under root.
func (e *flatEvent) scan(data []byte, root *pathNode, npaths int) error {
	e.reset(npaths)
	e.data, e.pos = data, 0
	defer func() { e.data = nil }()
	e.ws()
	if e.pos >= len(data) {
		return e.fail("unexpected end of JSON input")
	}
	object := data[e.pos] == '{'
	if !object {
		root = nil
	}
	if err := e.value(root, 0, 0); err != nil {
		return err
	}
	e.ws()
	if e.pos != len(data) {
		return e.fail("unexpected data after the JSON value")
	}
	if !object {
		return errNotObject
	}
	return nil
}

func (e *flatEvent) fail(msg string) error { return &syntaxError{msg: msg, off: e.pos} }

func (e *flatEvent) ws() {
	for e.pos < len(e.data) {
		switch e.data[e.pos] {
		case ' ', '\t', '\n', '\r':
			e.pos++
		default:
			return
		}
	}
}

func (e *flatEvent) newCtx(parent, array, index int32) int32 {
	e.ctxs = append(e.ctxs, arrayCtx{parent: parent, array: array, index: index, depth: e.ctxs[parent].depth + 1})
	return int32(len(e.ctxs) - 1)
}

func (e *flatEvent) addLeaf(n *pathNode, ctx int32, kind leafKind, str []byte, num float64) {
	e.leaves = append(e.leaves, leaf{str: str, num: num, path: n.id, ctx: ctx, next: e.first(n.id), kind: kind})
	e.head[n.id] = int32(len(e.leaves) - 1)
	e.headGen[n.id] = e.gen
}

// value scans the value at e.pos. n is the path trie node of the value (nil: no condition below, only
// validate); ctx the array element it is in.
func (e *flatEvent) value(n *pathNode, ctx int32, depth int) error {
	if depth > maxEventDepth {
		return e.fail("exceeded max depth")
	}
	if e.pos >= len(e.data) {
		return e.fail("unexpected end of JSON input")
	}
	switch c := e.data[e.pos]; {
	case c == '{':
		return e.object(n, ctx, depth)
	case c == '[':
		return e.array(n, ctx, depth)
	case c == '"':
		want := n != nil && n.id >= 0
		s, err := e.str(want)
		if err != nil || !want {
			return err
		}
		e.addLeaf(n, ctx, lString, s, 0)
	case c == '-' || ('0' <= c && c <= '9'):
		text, err := e.number()
		if err != nil || n == nil || n.id < 0 {
			return err
		}
		f, err := strconv.ParseFloat(string(text), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return e.fail("invalid number")
		}
		e.addLeaf(n, ctx, lNumber, text, f)
	case c == 't':
		return e.literal("true", n, ctx, lTrue)
	case c == 'f':
		return e.literal("false", n, ctx, lFalse)
	case c == 'n':
		return e.literal("null", n, ctx, lNull)
	default:
		return e.fail(fmt.Sprintf("invalid character %q looking for beginning of value", c))
	}
	return nil
}

func (e *flatEvent) literal(word string, n *pathNode, ctx int32, kind leafKind) error {
	if !bytes.HasPrefix(e.data[e.pos:], []byte(word)) {
		return e.fail("invalid literal")
	}
	e.pos += len(word)
	if n != nil && n.id >= 0 {
		e.addLeaf(n, ctx, kind, nil, 0)
	}
	return nil
}

func (e *flatEvent) object(n *pathNode, ctx int32, depth int) error {
	e.pos++
	e.ws()
	if e.pos < len(e.data) && e.data[e.pos] == '}' {
		e.pos++
		return nil
	}
	want := n != nil && n.children != nil
	for {
		if e.pos >= len(e.data) || e.data[e.pos] != '"' {
			return e.fail("looking for beginning of object key string")
		}
		key, err := e.str(want)
		if err != nil {
			return err
		}
		e.ws()
		if e.pos >= len(e.data) || e.data[e.pos] != ':' {
			return e.fail("after object key")
		}
		e.pos++
		e.ws()
		var child *pathNode
		if want {
			child = n.lookup(key)
		}
		if err := e.value(child, ctx, depth+1); err != nil {
			return err
		}
		e.ws()
		if e.pos >= len(e.data) {
			return e.fail("unexpected end of JSON input")
		}
		switch e.data[e.pos] {
		case ',':
			e.pos++
			e.ws()
		case '}':
			e.pos++
			return nil
		default:
			return e.fail("after object key:value pair")
		}
	}
}

func (e *flatEvent) array(n *pathNode, ctx int32, depth int) error {
	e.pos++
	e.ws()
	if e.pos < len(e.data) && e.data[e.pos] == ']' {
		e.pos++
		return nil
	}
	arr := int32(-1)
	if n != nil {
		arr = e.arrays
		e.arrays++
	}
	for i := int32(0); ; i++ {
		e.ws()
		ectx := ctx
		if n != nil && e.pos < len(e.data) && (e.data[e.pos] == '{' || e.data[e.pos] == '[') {
			// Only an object or an array is an element that leaves must share to combine: a scalar directly in
			// the array belongs to none, as in event-ruler (EventTest "HeterogeneousArrays"), and combines with
			// the leaves of every element.
			ectx = e.newCtx(ctx, arr, i)
		}
		if err := e.value(n, ectx, depth+1); err != nil {
			return err
		}
		e.ws()
		if e.pos >= len(e.data) {
			return e.fail("unexpected end of JSON input")
		}
		switch e.data[e.pos] {
		case ',':
			e.pos++
		case ']':
			e.pos++
			return nil
		default:
			return e.fail("after array element")
		}
	}
}

// strPlain marks the bytes a string can hold as they are: not a quote, a backslash, a control or non-ASCII byte.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Lanes of a uint64 read as eight bytes, for str.
const (
	lanes01 = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

// str scans the string at e.pos and, when want, returns its decoded bytes (invalid UTF-8 becomes U+FFFD, as with
// encoding/json).
func (e *flatEvent) str(want bool) ([]byte, error) {
	data := e.data
	i := e.pos + 1
	start := i
	escaped, wide := false, false
	for {
		// Eight bytes at a time while none is a quote, a backslash or a control character (a lane of x that is
		// zero after the xor, or below 0x20, sets its high bit; a borrow only sets lanes above a lane that is such
		// a byte, so none is set without one); bytes of 0x80 and above only mark the string wide. Eight bytes
		// that hold such a byte are read one at a time below.
		for i+8 <= len(data) {
			x := binary.LittleEndian.Uint64(data[i:])
			q, b := x^(lanes01*'"'), x^(lanes01*'\\')
			if (((q-lanes01)&^q)|((b-lanes01)&^b)|((x-lanes01*0x20)&^x))&lanes80 != 0 {
				break
			}
			wide = wide || x&lanes80 != 0
			i += 8
		}
		for i < len(data) && strPlain[data[i]] {
			i++
		}
		if i >= len(data) {
			e.pos = i
			return nil, e.fail("unexpected end of JSON input")
		}
		switch c := data[i]; {
		case c == '"':
			raw := data[start:i]
			e.pos = i + 1
			if !want {
				return nil, nil
			}
			if !escaped && (!wide || utf8.Valid(raw)) {
				return raw, nil
			}
			return e.unquote(raw), nil
		case c == '\\':
			escaped = true
			if i+1 >= len(data) {
				e.pos = i + 1
				return nil, e.fail("unexpected end of JSON input")
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) || hex4(data[i+2:i+6]) < 0 {
					e.pos = i
					return nil, e.fail("invalid \\u escape in string literal")
				}
				i += 6
			default:
				e.pos = i
				return nil, e.fail("invalid escape in string literal")
			}
		case c < 0x20:
			e.pos = i
			return nil, e.fail("invalid control character in string literal")
		default:
			wide = true
			i++
		}
	}
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// unquote decodes a validated string body into e.buf, as encoding/json does.
func (e *flatEvent) unquote(raw []byte) []byte {
	start := len(e.buf)
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			switch raw[i+1] {
			case 'b':
				e.buf = append(e.buf, '\b')
			case 'f':
				e.buf = append(e.buf, '\f')
			case 'n':
				e.buf = append(e.buf, '\n')
			case 'r':
				e.buf = append(e.buf, '\r')
			case 't':
				e.buf = append(e.buf, '\t')
			case 'u':
				r := hex4(raw[i+2:])
				i += 6
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
						r2 = hex4(raw[i+2:])
					}
					if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
						r = d
						i += 6
					} else {
						r = unicode.ReplacementChar
					}
				}
				e.buf = utf8.AppendRune(e.buf, r)
				continue
			default: // " \ /
				e.buf = append(e.buf, raw[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			e.buf = append(e.buf, c)
			i++
		default:
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n == 1 {
				e.buf = utf8.AppendRune(e.buf, unicode.ReplacementChar)
			} else {
				e.buf = append(e.buf, raw[i:i+n]...)
			}
			i += n
		}
	}
	return e.buf[start:len(e.buf):len(e.buf)]
}

// number scans a JSON number at e.pos and returns its text.
func (e *flatEvent) number() ([]byte, error) {
	data := e.data
	i := e.pos
	start := i
	digits := func() bool {
		j := i
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
		return i > j
	}
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case !digits():
		e.pos = i
		return nil, e.fail("invalid character in numeric literal")
	}
	if i < len(data) && data[i] == '.' {
		i++
		if !digits() {
			e.pos = i
			return nil, e.fail("invalid character after decimal point in numeric literal")
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if !digits() {
			e.pos = i
			return nil, e.fail("invalid character in exponent of numeric literal")
		}
	}
	e.pos = i
	return data[start:i], nil
}
