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

// AccountHeader names the account of a request until API keys exist (safe only on a loopback address).
const AccountHeader = "X-Account-Id"

const accountKey = "eventbridge.account"

// account is middleware that reads the request's account from AccountHeader (domain.DefaultAccountID when
// absent) and answers 400 naming the header when it is not a valid account id.
func (a *api) account(c *gin.Context) {
	id := c.GetHeader(AccountHeader)
	if id == "" {
		id = domain.DefaultAccountID
	}
	if err := domain.ValidateAccountID(id); err != nil {
		a.writeError(c, domain.Invalid(AccountHeader, "%s %q must be 1 to 32 characters of a-z and 0-9", AccountHeader, id))
		return
	}
	c.Set(accountKey, id)
	c.Next()
}

// accountOf returns the account that the account middleware put on c.
func accountOf(c *gin.Context) string {
	return c.GetString(accountKey)
}

// pageOf reads the limit and nextToken query parameters.
func pageOf(c *gin.Context) (domain.Page, error) {
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

// decodeJSON reads the request body (at most MaxBodySize bytes) as exactly one JSON value into dst, refusing
// unknown fields. Its errors are domain errors that name the problem and, when known, the field: a malformed
// body is MalformedRequest, a value of the wrong type names its field, a body too large is PayloadTooLarge.
func decodeJSON(c *gin.Context, dst any) error {
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodySize))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return domain.ErrTooLarge.With("the request body is larger than %d bytes", mbe.Limit)
		}
		return malformed("", "reading the request body: %s", err)
	}
	return decodeStrict(body, dst)
}

// decodeStrict decodes body as exactly one JSON value into dst, refusing unknown fields (see decodeJSON).
func decodeStrict(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return malformed("", "the request body is empty; a JSON object is required")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err, body, reflect.TypeOf(dst))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return malformed("", "the request body holds more than one JSON value")
	}
	return nil
}

// jsonError turns an error of encoding/json into a domain error naming the problem and the field.
func jsonError(err error, body []byte, t reflect.Type) error {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntax):
		return malformed("", "the request body is not valid JSON: %s (at byte %d)", syntax.Error(), syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return malformed("", "the request body is not valid JSON: it ends too early")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return malformed("", "the request body must be %s, not a JSON %s", jsonKind(typ.Type), typ.Value)
		}
		return malformed(typ.Field, "%s must be %s, not a JSON %s", typ.Field, jsonKind(typ.Type), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		path := unknownFieldPath(body, t, name)
		return malformed(path, "unknown field %q", path)
	}
	return malformed("", "the request body cannot be read: %s", err)
}

// jsonKind names the JSON form of a Go type in error messages.
func jsonKind(t reflect.Type) string {
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
		return jsonKind(t.Elem())
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
