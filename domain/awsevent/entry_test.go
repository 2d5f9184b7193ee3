package awsevent_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/awsevent"
	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
)

var now = time.Date(2026, 3, 4, 5, 6, 7, 890, time.FixedZone("CET", 3600))

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestFromEntry(t *testing.T) {
	t.Parallel()
	given := time.Date(2022, 1, 2, 3, 4, 5, 600, time.FixedZone("X", -7200))
	tests := []struct {
		name     string
		entry    awsevent.Entry
		time     time.Time
		ext      map[string]any // every extension
		wantData string
	}{
		{"minimal", awsevent.Entry{Source: "com.example.app", DetailType: "Order Placed", Detail: `{}`},
			now.UTC().Truncate(time.Second), map[string]any{"account": "123456789012", "region": "eu-west-1"}, `{}`},
		{"detail byte for byte", awsevent.Entry{Source: "s", DetailType: "t",
			Detail: " {\"n\": 1.50e400, \"s\": \"\\u00e9<&>\", \"big\": 12345678901234567890} \n"},
			now.UTC().Truncate(time.Second), map[string]any{"account": "123456789012", "region": "eu-west-1"},
			" {\"n\": 1.50e400, \"s\": \"\\u00e9<&>\", \"big\": 12345678901234567890} \n"},
		{"time given, resources, traceparent", awsevent.Entry{Source: "s", DetailType: "t", Detail: `{"a":1}`, Time: &given,
			Resources: []string{"arn:a", "arn:b<&>"}, TraceHeader: traceparent},
			given.UTC().Truncate(time.Second), map[string]any{"account": "123456789012", "region": "eu-west-1",
				"resources": `["arn:a","arn:b<&>"]`, "traceparent": traceparent}, `{"a":1}`},
		{"empty resources: no extension", awsevent.Entry{Source: "s", DetailType: "t", Detail: `{}`, Resources: []string{}},
			now.UTC().Truncate(time.Second), map[string]any{"account": "123456789012", "region": "eu-west-1"}, `{}`},
		{"an X-Ray header is not kept", awsevent.Entry{Source: "s", DetailType: "t", Detail: `{}`,
			TraceHeader: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"},
			now.UTC().Truncate(time.Second), map[string]any{"account": "123456789012", "region": "eu-west-1"}, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := awsevent.FromEntry(tt.entry, "id-1", "123456789012", "eu-west-1", now)
			require.NoError(t, err)
			require.NoError(t, e.Validate())
			assert.Equal(t, "id-1", e.ID())
			assert.Equal(t, tt.entry.Source, e.Source())
			assert.Equal(t, tt.entry.DetailType, e.Type())
			assert.Equal(t, tt.time, e.Time())
			assert.Equal(t, time.UTC, e.Time().Location())
			assert.Equal(t, "application/json", e.DataContentType())
			assert.Equal(t, tt.wantData, string(e.Data()))
			assert.False(t, e.DataBase64, "the detail is JSON, not bytes")
			assert.Equal(t, tt.ext, e.Extensions())
			assert.False(t, cloudevent.IsBinary(e))
		})
	}
}

func TestFromEntryWithoutAccountOrRegion(t *testing.T) {
	t.Parallel()
	e, err := awsevent.FromEntry(awsevent.Entry{Source: "s", DetailType: "t", Detail: `{}`}, "1", "", "", now)
	require.NoError(t, err)
	assert.Empty(t, e.Extensions())
}

// TestFromEntryErrors: the per-entry codes and messages AWS answers, as LocalStack's AWS-validated snapshots
// recorded them (tests/aws/services/events/test_events.snapshot.json).
func TestFromEntryErrors(t *testing.T) {
	t.Parallel()
	const (
		noSource     = "Parameter Source is not valid. Reason: Source is a required argument."
		noDetailType = "Parameter DetailType is not valid. Reason: DetailType is a required argument."
		noDetail     = "Parameter Detail is not valid. Reason: Detail is a required argument."
		malformed    = "Detail is malformed."
	)
	ok := awsevent.Entry{Source: "s", DetailType: "t", Detail: `{}`}
	with := func(f func(*awsevent.Entry)) awsevent.Entry { e := ok; f(&e); return e }
	tests := []struct {
		name          string
		entry         awsevent.Entry
		code, message string
	}{
		{"no source", with(func(e *awsevent.Entry) { e.Source = "" }), "InvalidArgument", noSource},
		{"no detail type", with(func(e *awsevent.Entry) { e.DetailType = "" }), "InvalidArgument", noDetailType},
		{"no detail", with(func(e *awsevent.Entry) { e.Detail = "" }), "InvalidArgument", noDetail},
		{"nothing: source first", awsevent.Entry{}, "InvalidArgument", noSource},
		{"no detail type nor detail: detail type first", awsevent.Entry{Source: "s"}, "InvalidArgument", noDetailType},
		// The four details of test_put_event_malformed_detail.
		{"a string", with(func(e *awsevent.Entry) { e.Detail = "NotJSON" }), "MalformedDetail", malformed},
		{"an array", with(func(e *awsevent.Entry) { e.Detail = "[]" }), "MalformedDetail", malformed},
		{"malformed JSON", with(func(e *awsevent.Entry) { e.Detail = "{{}" }), "MalformedDetail", malformed},
		{"a serialized string", with(func(e *awsevent.Entry) { e.Detail = `"NotJSON"` }), "MalformedDetail", malformed},
		{"a number", with(func(e *awsevent.Entry) { e.Detail = "1" }), "MalformedDetail", malformed},
		{"two objects", with(func(e *awsevent.Entry) { e.Detail = "{} {}" }), "MalformedDetail", malformed},
		{"white space only", with(func(e *awsevent.Entry) { e.Detail = "  " }), "MalformedDetail", malformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := awsevent.FromEntry(tt.entry, "1", "123456789012", "eu-west-1", now)
			assert.Nil(t, e)
			var ee *awsevent.EntryError
			require.True(t, errors.As(err, &ee), "%v", err)
			assert.Equal(t, tt.code, ee.Code)
			assert.Equal(t, tt.message, ee.Message)
			assert.Equal(t, ee, tt.entry.Validate())
		})
	}
	// Validate answers a copy: changing one does not change the next.
	first := awsevent.Entry{}.Validate()
	first.Message = "changed"
	assert.Equal(t, noSource, awsevent.Entry{}.Validate().Message)
	assert.Nil(t, ok.Validate())
}

// TestFromEntryNoCloudEvent: an entry AWS takes that makes no valid CloudEvent is refused with an error that is not
// an *EntryError.
func TestFromEntryNoCloudEvent(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		entry awsevent.Entry
		id    string
		err   string
	}{
		"source with a space":   {awsevent.Entry{Source: "my app", DetailType: "t", Detail: `{}`}, "1", "percent-encode"},
		"source not a URI":      {awsevent.Entry{Source: "%zz", DetailType: "t", Detail: `{}`}, "1", "source"},
		"source with non-ASCII": {awsevent.Entry{Source: "zoë", DetailType: "t", Detail: `{}`}, "1", "percent-encode"},
		"no id":                 {awsevent.Entry{Source: "s", DetailType: "t", Detail: `{}`}, "", "id"},
	} {
		_, err := awsevent.FromEntry(c.entry, c.id, "a", "r", now)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.err, name)
		var ee *awsevent.EntryError
		assert.False(t, errors.As(err, &ee), name)
	}
	var ue *cloudevent.URIError
	_, err := awsevent.FromEntry(awsevent.Entry{Source: "my app", DetailType: "t", Detail: `{}`}, "1", "a", "r", now)
	assert.True(t, errors.As(err, &ue))
}

// TestFromEntryTraceHeader: only a W3C traceparent (version 00's form) becomes the traceparent extension.
func TestFromEntryTraceHeader(t *testing.T) {
	t.Parallel()
	for header, kept := range map[string]bool{
		traceparent: true,
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00": true,
		"": false,
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":    false, // version ff
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01":    false, // zero trace id
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01":    false, // zero parent id
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01":    false, // upper case
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-xy": false, // longer
		"00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01":    false, // fields misplaced
		"00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01":    false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g":    false,
		"Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1":         false, // X-Ray
	} {
		e, err := awsevent.FromEntry(awsevent.Entry{Source: "s", DetailType: "t", Detail: `{}`, TraceHeader: header},
			"1", "a", "r", now)
		require.NoError(t, err)
		got, ok := e.Extensions()["traceparent"]
		assert.Equal(t, kept, ok, "%q", header)
		if kept {
			assert.Equal(t, header, got)
		}
	}
}

// TestFromEntryStoredForm: the stored event's JSON form carries the detail as its data, and its extensions.
func TestFromEntryStoredForm(t *testing.T) {
	t.Parallel()
	e, err := awsevent.FromEntry(awsevent.Entry{Source: "com.example", DetailType: "Order Placed",
		Detail: `{"id": 7}`, Resources: []string{"arn:a"}}, "id-1", "123456789012", "eu-west-1", now)
	require.NoError(t, err)
	out, err := cloudevent.Marshal(e)
	require.NoError(t, err)
	assert.JSONEq(t, `{"specversion":"1.0","id":"id-1","source":"com.example","type":"Order Placed",
		"time":"2026-03-04T04:06:07Z","datacontenttype":"application/json","account":"123456789012",
		"region":"eu-west-1","resources":"[\"arn:a\"]","data":{"id":7}}`, string(out))
	back, err := cloudevent.Unmarshal(out)
	require.NoError(t, err)
	assert.Equal(t, `{"id": 7}`, string(back.Data()))
}
