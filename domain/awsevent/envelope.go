package awsevent

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

// envelope is an event as Amazon EventBridge delivers it to targets, its members in AWS's order.
type envelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// envelopeTime is the layout of the envelope's time: UTC, whole seconds (eb-events-structure: "2017-12-22T18:43:48Z").
const envelopeTime = "2006-01-02T15:04:05Z"

// Envelope returns e as Amazon EventBridge delivers an event to its targets, compact JSON with the members
// version ("0"), id, detail-type (e's type), source, account, time, region, resources and detail, in that order
// (see the package doc): account and region are e's String extensions of those names when it has them (not
// empty), else the arguments; time is e's in UTC and whole seconds, the time of the call when e has none;
// resources is the array its resources extension holds, [] when it holds no JSON array of strings; detail is e's
// data by the rule of the package doc. HTML characters are not escaped. The error is for an event JSON cannot
// encode, which the rule above does not make.
func Envelope(e *event.Event, account, region string) ([]byte, error) {
	at := e.Time()
	if at.IsZero() {
		at = time.Now()
	}
	ext := e.Extensions() // a copy, made once
	env := envelope{
		Version:    version,
		ID:         e.ID(),
		DetailType: e.Type(),
		Source:     e.Source(),
		Account:    stringExtension(ext, ExtAccount, account),
		Time:       at.UTC().Format(envelopeTime),
		Region:     stringExtension(ext, ExtRegion, region),
		Resources:  resourcesOf(ext),
		Detail:     detailOf(e),
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// stringExtension returns the String extension name of ext when it is not empty, else def.
func stringExtension(ext map[string]any, name, def string) string {
	if v, ok := ext[name].(string); ok && v != "" {
		return v
	}
	return def
}

// resourcesOf returns the array of strings the resources extension of ext holds, an empty one when it holds none.
func resourcesOf(ext map[string]any) []string {
	text, _ := ext[ExtResources].(string)
	var out []string
	if err := json.Unmarshal([]byte(text), &out); err != nil || out == nil {
		return []string{}
	}
	return out
}

// detailOf returns the envelope's detail for e's data: no data is {}; data of no type or a JSON type that is JSON
// is that JSON (UTF-8, as JSON is); other valid UTF-8 a JSON string; anything else {"data_base64": ...}.
func detailOf(e *event.Event) json.RawMessage {
	data := e.Data()
	if len(data) == 0 {
		return json.RawMessage(`{}`)
	}
	if ct := e.DataContentType(); (ct == "" || cloudevent.IsJSONMedia(ct)) && utf8.Valid(data) && json.Valid(data) {
		return bytes.TrimSpace(data)
	}
	if utf8.Valid(data) {
		return json.RawMessage(appendString(nil, string(data)))
	}
	var b strings.Builder
	b.WriteString(`{"data_base64":"`)
	b.WriteString(base64.StdEncoding.EncodeToString(data))
	b.WriteString(`"}`)
	return json.RawMessage(b.String())
}
