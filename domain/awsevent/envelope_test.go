package awsevent_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/awsevent"
)

// TestEnvelopeRoundTrip: an entry put through FromEntry is delivered as AWS delivers it, member for member and in
// AWS's order (eb-events-structure.html).
func TestEnvelopeRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2017, 12, 22, 19, 43, 48, 999_000_000, time.FixedZone("CET", 3600))
	tests := []struct {
		name  string
		entry awsevent.Entry
		want  string
	}{
		{"EC2 state change (eb-events-structure.html)", awsevent.Entry{Source: "aws.ec2",
			DetailType: "EC2 Instance State-change Notification", Time: &at,
			Detail:    `{"instance-id": "i-1234567890abcdef0", "state": "terminated"}`,
			Resources: []string{"arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0"}},
			`{"version":"0","id":"6a7e8feb-b491-4cf7-a9f1-bf3703467718","detail-type":"EC2 Instance State-change Notification",` +
				`"source":"aws.ec2","account":"111122223333","time":"2017-12-22T18:43:48Z","region":"us-west-1",` +
				`"resources":["arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0"],` +
				`"detail":{"instance-id":"i-1234567890abcdef0","state":"terminated"}}`},
		{"no resources, the call's time, HTML characters and numbers as written", awsevent.Entry{Source: "app&co",
			DetailType: "<t>", Detail: ` {"html": "<&>", "n": 1.50e400} `},
			`{"version":"0","id":"6a7e8feb-b491-4cf7-a9f1-bf3703467718","detail-type":"<t>","source":"app&co",` +
				`"account":"111122223333","time":"2026-03-04T04:06:07Z","region":"us-west-1","resources":[],` +
				`"detail":{"html":"<&>","n":1.50e400}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := awsevent.FromEntry(tt.entry, "6a7e8feb-b491-4cf7-a9f1-bf3703467718", "111122223333", "us-west-1", now)
			require.NoError(t, err)
			got, err := awsevent.Envelope(e, "999999999999", "eu-central-1")
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

// TestEnvelope: events that did not come through FromEntry: the arguments stand in for missing extensions, and
// detail follows the rule of the package doc.
func TestEnvelope(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		ct        string // datacontenttype; "" for none
		data      *string
		base64    bool
		ext       map[string]any
		detail    string
		resources string
		account   string
		region    string
	}{
		{name: "no data", detail: `{}`},
		{name: "empty data", ct: "text/plain", data: ptr(""), detail: `{}`},
		{name: "JSON without a type", data: ptr(`[1, 2]`), detail: `[1,2]`},
		{name: "JSON marked base64 without a type", data: ptr(`{"a":1}`), base64: true, detail: `{"a":1}`},
		{name: "application/json", ct: "application/json; charset=utf-8", data: ptr(`{"a": {"b": null}}`), detail: `{"a":{"b":null}}`},
		{name: "+json", ct: "application/vnd.shop+json", data: ptr(`{"sku":"A-1"}`), detail: `{"sku":"A-1"}`},
		{name: "text/json string", ct: "text/json", data: ptr(`"hi"`), detail: `"hi"`},
		{name: "a JSON type that is not JSON", ct: "application/json", data: ptr(`not json`), base64: true, detail: `"not json"`},
		{name: "text", ct: "text/plain", data: ptr("Hello, <World>!\n\"q\""), detail: `"Hello, <World>!\n\"q\""`},
		{name: "text without a type that is not JSON", data: ptr("hello"), detail: `"hello"`},
		{name: "XML", ct: "application/xml", data: ptr(`<a x="1"/>`), detail: `"<a x=\"1\"/>"`},
		{name: "binary", ct: "application/octet-stream", data: ptr("\x00\x01\xff"), base64: true, detail: `{"data_base64":"AAH/"}`},
		{name: "text that is not UTF-8", ct: "text/plain", data: ptr("caf\xe9"), detail: `{"data_base64":"Y2Fm6Q=="}`},
		{name: "extensions win", data: ptr(`{}`), detail: `{}`,
			ext:       map[string]any{"account": "111122223333", "region": "us-east-1", "resources": `["arn:a","arn:b"]`},
			resources: `["arn:a","arn:b"]`, account: "111122223333", region: "us-east-1"},
		{name: "empty extensions do not", data: ptr(`{}`), detail: `{}`, ext: map[string]any{"account": "", "region": ""}},
		{name: "extensions of other types do not", data: ptr(`{}`), detail: `{}`,
			ext: map[string]any{"account": int32(12), "region": true, "resources": int32(3)}},
		{name: "resources not an array of strings", data: ptr(`{}`), detail: `{}`, ext: map[string]any{"resources": `[1]`}},
		{name: "resources not JSON", data: ptr(`{}`), detail: `{}`, ext: map[string]any{"resources": `arn:a`}},
		{name: "resources null", data: ptr(`{}`), detail: `{}`, ext: map[string]any{"resources": `null`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := event.New()
			e.SetID("id-1")
			e.SetSource("/shop")
			e.SetType("order.created")
			e.SetTime(time.Date(2026, 1, 2, 3, 4, 5, 678, time.UTC))
			if tt.ct != "" {
				e.SetDataContentType(tt.ct)
			}
			if tt.data != nil {
				e.DataEncoded, e.DataBase64 = []byte(*tt.data), tt.base64
			}
			for k, v := range tt.ext {
				e.SetExtension(k, v)
			}
			require.NoError(t, e.Validate())
			got, err := awsevent.Envelope(&e, "000000000000", "eu-west-1")
			require.NoError(t, err)
			want := envelopeOf(tt.detail, tt.resources, tt.account, tt.region)
			assert.Equal(t, want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

// TestEnvelopeWithoutTime: an event without a time is delivered with the time of the call.
func TestEnvelopeWithoutTime(t *testing.T) {
	t.Parallel()
	e := event.New()
	e.SetID("1")
	e.SetSource("/s")
	e.SetType("t")
	before := time.Now().UTC().Truncate(time.Second)
	got, err := awsevent.Envelope(&e, "a", "r")
	require.NoError(t, err)
	var env struct{ Time string }
	require.NoError(t, json.Unmarshal(got, &env))
	at, err := time.Parse("2006-01-02T15:04:05Z", env.Time)
	require.NoError(t, err)
	assert.False(t, at.Before(before), "%s is before %s", at, before)
	assert.WithinDuration(t, time.Now(), at, 5*time.Second)
}

func ptr(s string) *string { return &s }

// envelopeOf is the envelope TestEnvelope's event is delivered in.
func envelopeOf(detail, resources, account, region string) string {
	if resources == "" {
		resources = "[]"
	}
	if account == "" {
		account = "000000000000"
	}
	if region == "" {
		region = "eu-west-1"
	}
	return `{"version":"0","id":"id-1","detail-type":"order.created","source":"/shop","account":"` + account +
		`","time":"2026-01-02T03:04:05Z","region":"` + region + `","resources":` + resources + `,"detail":` + detail + `}`
}
