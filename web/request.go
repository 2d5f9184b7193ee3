package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
)

// MaxBodySize is the largest JSON body of a control-plane request (events have their own limit).
const MaxBodySize = 1 << 20

const accountKey = "eventbridge.account"

// SetAccount records the account of the request, which a dialect's middleware selected, for AccountOf and the
// request log.
func SetAccount(c *gin.Context, id string) { c.Set(accountKey, id) }

// AccountOf returns the account that the dialect's middleware recorded with SetAccount ("" for an operation that
// takes none).
func AccountOf(c *gin.Context) string { return c.GetString(accountKey) }

// PageOf reads the limit and nextToken query parameters of a list.
func PageOf(c *gin.Context) (domain.Page, error) {
	limit := 0
	if s := c.Query("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return domain.Page{}, domain.Invalid("limit", "limit %q is not an integer", s)
		}
		if n < 1 {
			return domain.Page{}, domain.Invalid("limit", "limit must be between 1 and %d", domain.MaxPageLimit)
		}
		limit = n
	}
	return domain.NewPage(limit, c.Query("nextToken"))
}

// DecodeJSON reads the request body (at most MaxBodySize bytes) as exactly one JSON value into dst, refusing
// unknown fields. Its errors are domain errors that name the problem and, when known, the field: a malformed
// body is MalformedRequest, a value of the wrong type names its field, a body too large is PayloadTooLarge.
func DecodeJSON(c *gin.Context, dst any) error {
	body, err := ReadBody(c, MaxBodySize)
	if err != nil {
		return err
	}
	return DecodeStrict(body, dst)
}

// ReadBody reads the request body, at most limit bytes, into one buffer sized from its Content-Length when it
// states one (io.ReadAll grows its buffer step by step: a PutEvents batch was copied about ten times on its way
// in). A body over limit is PayloadTooLarge; one that cannot be read is MalformedRequest.
func ReadBody(c *gin.Context, limit int64) ([]byte, error) {
	r := http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	var buf bytes.Buffer
	if n := c.Request.ContentLength; n > 0 && n <= limit {
		buf.Grow(int(n) + bytes.MinRead) // room for the read that finds the end
	}
	if _, err := buf.ReadFrom(r); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, domain.ErrTooLarge.With("the request body is larger than %d bytes", mbe.Limit)
		}
		return nil, Malformed("", "reading the request body: %s", err)
	}
	return buf.Bytes(), nil
}

// DecodeStrict decodes body as exactly one JSON value into dst, refusing unknown fields (see DecodeJSON).
func DecodeStrict(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return Malformed("", "the request body is empty; a JSON object is required")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return JSONError(err, body, reflect.TypeOf(dst))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Malformed("", "the request body holds more than one JSON value")
	}
	return nil
}

// JSONError turns an error of encoding/json, decoding body into a value of type t, into a domain error naming
// the problem and the field.
func JSONError(err error, body []byte, t reflect.Type) error {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntax):
		return Malformed("", "the request body is not valid JSON: %s (at byte %d)", syntax.Error(), syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Malformed("", "the request body is not valid JSON: it ends too early")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return Malformed("", "the request body must be %s, not a JSON %s", JSONKind(typ.Type), typ.Value)
		}
		return Malformed(typ.Field, "%s must be %s, not a JSON %s", typ.Field, JSONKind(typ.Type), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		path := unknownFieldPath(body, t, name)
		return Malformed(path, "unknown field %q", path)
	}
	return Malformed("", "the request body cannot be read: %s", err)
}

// JSONKind names the JSON form of a Go type in error messages ("an integer", "an object", ...).
func JSONKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return JSONKind(t.Elem())
	}
	return "a " + t.String()
}

// unknownFieldPath finds the dotted path of the unknown key name in body, walking it along the struct type t
// (encoding/json names only the key). It returns name when it cannot tell.
func unknownFieldPath(body []byte, t reflect.Type, name string) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return name
	}
	if p, ok := findUnknown(v, t, name, ""); ok {
		return p
	}
	return name
}

func findUnknown(v any, t reflect.Type, name, prefix string) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		fields := jsonFields(t)
		for k, fv := range obj {
			ft, known := fields[strings.ToLower(k)]
			if !known {
				if k == name {
					return prefix + k, true
				}
				continue
			}
			if p, ok := findUnknown(fv, ft, name, prefix+k+"."); ok {
				return p, true
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return "", false
		}
		for i, ev := range arr {
			if p, ok := findUnknown(ev, t.Elem(), name, prefix[:max(len(prefix)-1, 0)]+"["+strconv.Itoa(i)+"]."); ok {
				return p, true
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		for k, ev := range obj {
			if p, ok := findUnknown(ev, t.Elem(), name, prefix+k+"."); ok {
				return p, true
			}
		}
	}
	return "", false
}

// jsonFields maps the lower-cased JSON names of t's fields to their types (encoding/json matches keys without
// regard to case).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	m := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag := f.Tag.Get("json"); tag != "" {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" {
				continue
			}
			if n != "" {
				name = n
			}
		}
		m[strings.ToLower(name)] = f.Type
	}
	return m
}
