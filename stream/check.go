package stream

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// The invariant: what may be stored on a bus. Every way in — PutEvents of every dialect, webhook intake, the source
// connectors' writer — checks an event with Check before storing it, so that whatever is stored can be encoded
// (Encode), decoded (Decode), matched (its JSON form) and delivered; an event that Check refuses is answered 400 or
// 413 (or dead-lettered by a source connector), never taken and then lost.

// Limits of a stored event.
const (
	// MaxEventSize is the largest event: its attributes and its data as a request carried them.
	MaxEventSize = 256 << 10
	// MaxAttributesSize bounds the names and values of an event's attributes together, as the stored message's
	// headers carry them: JetStream refuses a message whose headers pass 64 KiB (measured: nats-server 2.15,
	// err_code 10097), and a dead letter adds its own.
	MaxAttributesSize = 32 << 10
	// MaxExtensions bounds the number of extension attributes.
	MaxExtensions = 100
	// MaxAttributeNameLength bounds an extension's name (CloudEvents: SHOULD NOT exceed 20).
	MaxAttributeNameLength = 64
	// MaxDataDepth bounds how deeply JSON data nests (objects and arrays).
	MaxDataDepth = 512
)

// CheckError is an event that may not be stored: Field names the attribute ("source", an extension's name, "data",
// "" for the whole event) and TooLarge tells a size limit from a rule of the format.
type CheckError struct {
	Field    string
	Reason   string
	TooLarge bool
}

func (e *CheckError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

func invalid(field, format string, args ...any) error {
	return &CheckError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

func tooLarge(field, format string, args ...any) error {
	return &CheckError{Field: field, Reason: fmt.Sprintf(format, args...), TooLarge: true}
}

// Check reports whether e may be stored; encodedSize is its size as the request carried it (0 when unknown: the
// size of its attributes and data is taken). Errors are *CheckError.
func Check(e *event.Event, encodedSize int) error {
	if err := cloudevent.Validate(e); err != nil {
		return invalid("", "invalid CloudEvent: %s", strings.TrimSpace(err.Error()))
	}
	attrs := 0
	str := func(field, v string) error {
		attrs += len(field) + len(v) + len(headerPrefix)
		return checkString(field, v)
	}
	for _, a := range []struct{ name, value string }{
		{"id", e.ID()}, {"source", cloudevent.Source(e)}, {"type", e.Type()}, {"subject", e.Subject()},
		{"dataschema", e.DataSchema()}, {"datacontenttype", e.DataContentType()},
	} {
		if err := str(a.name, a.value); err != nil {
			return err
		}
	}
	exts := e.Extensions()
	if len(exts) > MaxExtensions {
		return tooLarge("", "the event has %d extension attributes; at most %d are allowed", len(exts), MaxExtensions)
	}
	for name, v := range exts {
		if len(name) > MaxAttributeNameLength {
			return invalid(name[:MaxAttributeNameLength]+"...", "an extension's name is %d characters long; at most %d are allowed",
				len(name), MaxAttributeNameLength)
		}
		text, err := extensionText(v)
		if err != nil {
			return invalid(name, "%s", err)
		}
		if err := str(name, text); err != nil {
			return err
		}
	}
	if attrs > MaxAttributesSize {
		return tooLarge(largestAttribute(e), "the attributes take %d bytes; at most %d are allowed (the data has no such limit)",
			attrs, MaxAttributesSize)
	}
	if encodedSize == 0 {
		encodedSize = attrs + len(e.Data())
	}
	if encodedSize > MaxEventSize {
		return tooLarge("", "event is %d bytes; at most %d are allowed", encodedSize, MaxEventSize)
	}
	return checkData(e)
}

// checkString applies CloudEvents' rules of String values: valid UTF-8, no control characters (U+0000–U+001F,
// U+007F–U+009F), no noncharacters; and refuses white space at either end, which the SDK's setters and header
// parsers (NATS's and HTTP's) trim: such a value would not arrive as it was sent.
func checkString(field, v string) error {
	if !utf8.ValidString(v) {
		return invalid(field, "the value is not valid UTF-8")
	}
	if r, _ := utf8.DecodeRuneInString(v); unicode.IsSpace(r) {
		return invalid(field, "the value begins with the white space U+%04X, which CloudEvents SDKs and header parsers trim", r)
	}
	if r, _ := utf8.DecodeLastRuneInString(v); unicode.IsSpace(r) {
		return invalid(field, "the value ends with the white space U+%04X, which CloudEvents SDKs and header parsers trim", r)
	}
	for i, r := range v {
		switch {
		case r <= 0x1f || (r >= 0x7f && r <= 0x9f):
			return invalid(field, "the value holds the control character U+%04X at byte %d; CloudEvents forbids control characters", r, i)
		case (r >= 0xfdd0 && r <= 0xfdef) || r&0xfffe == 0xfffe:
			return invalid(field, "the value holds the noncharacter U+%04X at byte %d", r, i)
		}
	}
	return nil
}

// largestAttribute names the attribute with the longest value.
func largestAttribute(e *event.Event) string {
	name, size := "", -1
	for _, a := range []struct{ name, value string }{
		{"id", e.ID()}, {"source", cloudevent.Source(e)}, {"type", e.Type()}, {"subject", e.Subject()}, {"dataschema", e.DataSchema()},
	} {
		if len(a.value) > size {
			name, size = a.name, len(a.value)
		}
	}
	for n, v := range e.Extensions() {
		if t, err := extensionText(v); err == nil && len(t) > size {
			name, size = n, len(t)
		}
	}
	return name
}

// checkData checks data that is JSON (of a JSON type, or of none): nested at most MaxDataDepth deep. Data of a
// JSON type must be JSON unless it came as data_base64 (bytes, then); data of no type that is not JSON, and data
// of other types, are bytes and pass.
func checkData(e *event.Event) error {
	data := e.Data()
	if len(data) == 0 {
		return nil
	}
	ct := e.DataContentType()
	if ct != "" && !cloudevent.IsJSONMedia(ct) {
		return nil
	}
	valid, depth := cloudevent.ValidJSON(data)
	if !valid {
		if ct == "" || e.DataBase64 {
			return nil // bytes: Encode marks them binary
		}
		if jsonDepth(data) > MaxDataDepth {
			return invalid("data", "the data nests more than %d levels deep (objects and arrays)", MaxDataDepth)
		}
		return invalid("data", "the data is not valid JSON, while datacontenttype is %q", ct)
	}
	if depth > MaxDataDepth {
		return invalid("data", "the data nests more than %d levels deep (objects and arrays)", MaxDataDepth)
	}
	return nil
}

// jsonDepth is how deeply the objects and arrays of a JSON text nest (strings skipped, with bytes.IndexByte); it
// stops counting past MaxDataDepth+1.
func jsonDepth(data []byte) int {
	depth, max := 0, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for { // to the closing quote: one not escaped by an odd number of backslashes
				j := bytes.IndexByte(data[i+1:], '"')
				if j < 0 {
					return max
				}
				i += j + 1
				backslashes := 0
				for k := i - 1; k >= 0 && data[k] == '\\'; k-- {
					backslashes++
				}
				if backslashes%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
			if depth > max {
				max = depth
				if max > MaxDataDepth {
					return max
				}
			}
		case '}', ']':
			depth--
		}
	}
	return max
}

// StandInType is the type of the event a dead letter carries in place of one the invariant refuses (StandIn).
const StandInType = "eventbridge.refused-event"

// Extensions of a stand-in: that it is one, and the size of the refused event's JSON form when its data holds only
// the beginning of it.
const (
	ExtStandIn       = "ebstandin"
	ExtTruncatedFrom = "ebtruncatedfrom"
)

// maxStandInAttribute bounds each attribute a stand-in keeps of the refused event.
const maxStandInAttribute = 1024

// StandIn is the event a dead letter carries in place of e when Check refuses e (attributes a header cannot carry,
// too many or too large, characters CloudEvents forbids): e's id, source and type where each passes Check's string
// rules and is at most 1 KiB (else a digest of it, a URN, StandInType), the extension ebstandin=true, and e in the
// JSON format as its data (application/cloudevents+json); when that form is over MaxEventSize its data is the
// beginning of it as text, and ebtruncatedfrom gives the whole size.
func StandIn(e *event.Event) *event.Event {
	keep := func(field, v, otherwise string) string {
		if v != "" && len(v) <= maxStandInAttribute && checkString(field, v) == nil {
			return v
		}
		return otherwise
	}
	sum := sha256.Sum256([]byte(e.ID()))
	out := event.New()
	out.SetID(keep("id", e.ID(), "sha256:"+hex.EncodeToString(sum[:])))
	out.SetSource(keep("source", e.Source(), "urn:eventbridge:refused-event"))
	if out.Source() == "" {
		out.SetSource("urn:eventbridge:refused-event")
	}
	out.SetType(keep("type", e.Type(), StandInType))
	if !e.Time().IsZero() {
		out.SetTime(e.Time())
	}
	out.SetExtension(ExtStandIn, true)
	raw, err := cloudevent.Marshal(e)
	if err != nil {
		raw, _ = json.Marshal(map[string]string{"error": "the event's JSON form cannot be built: " + err.Error()})
	}
	if len(raw) > MaxEventSize {
		out.SetExtension(ExtTruncatedFrom, int32(min(len(raw), math.MaxInt32)))
		head := strings.ToValidUTF8(string(raw[:MaxEventSize/2]), "")
		_ = out.SetData("text/plain; charset=utf-8", head)
		return &out
	}
	out.SetDataContentType("application/cloudevents+json")
	out.DataEncoded, out.DataBase64 = raw, false
	return &out
}
