package attribute_test

import (
	"context"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/plugins/attribute"
)

func sample() *event.Event {
	e := event.New()
	e.SetID("e1")
	e.SetSource("shop/eu")
	e.SetType("order.created")
	e.SetSubject("orders/1")
	e.SetDataSchema("https://example.com/order.json")
	e.SetTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	e.SetExtension("tenant", "acme")
	if err := e.SetData(event.ApplicationJSON, map[string]any{"n": 1}); err != nil {
		panic(err)
	}
	return &e
}

func build(t *testing.T, p connector.TransformPlugin, cfg map[string]string) (connector.Transform, connector.FieldErrors) {
	t.Helper()
	if errs := p.Spec.Validate(cfg); len(errs) > 0 {
		return nil, errs
	}
	tr, err := p.New(p.Spec.Values(cfg), connector.Env{})
	if err != nil {
		var fe connector.FieldErrors
		require.ErrorAs(t, err, &fe)
		return nil, fe
	}
	return tr, nil
}

func apply(t *testing.T, tr connector.Transform, e *event.Event) *event.Event {
	t.Helper()
	before := e.Clone()
	out, err := tr.Apply(context.Background(), e)
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.Equal(t, before.String(), e.String(), "the input is not modified")
	require.NoError(t, out[0].Validate())
	return out[0]
}

func TestSetConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, attr, value string
		wantKey, wantMsg  string
	}{
		{name: "extension", attr: "tenant", value: "acme"},
		{name: "subject", attr: "subject", value: "x"},
		{name: "time", attr: "time", value: "2026-01-01T00:00:00Z"},
		{name: "name missing", value: "x", wantKey: attribute.KeyName, wantMsg: "is required"},
		{name: "value missing", attr: "subject", wantKey: attribute.KeyValue, wantMsg: "is required"},
		{name: "specversion", attr: "specversion", value: "0.3", wantKey: attribute.KeyName, wantMsg: "identifies the event"},
		{name: "id", attr: "id", value: "x", wantKey: attribute.KeyName, wantMsg: "identifies the event"},
		{name: "data", attr: "data", value: "x", wantKey: attribute.KeyName, wantMsg: "is not an attribute"},
		{name: "upper case", attr: "Tenant", value: "x", wantKey: attribute.KeyName, wantMsg: "not an attribute name"},
		{name: "dash", attr: "my-ext", value: "x", wantKey: attribute.KeyName, wantMsg: "not an attribute name"},
		{name: "bad time", attr: "time", value: "yesterday", wantKey: attribute.KeyValue, wantMsg: "not an RFC 3339 time"},
		{name: "bad source", attr: "source", value: "::nope", wantKey: attribute.KeyValue, wantMsg: "not a valid value of source"},
		{name: "bad dataschema", attr: "dataschema", value: "%zz", wantKey: attribute.KeyValue, wantMsg: "not a valid value of dataschema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, errs := build(t, attribute.SetPlugin(), map[string]string{attribute.KeyName: tt.attr, attribute.KeyValue: tt.value})
			if tt.wantKey == "" {
				assert.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1, "%v", errs)
			assert.Equal(t, tt.wantKey, errs[0].Key)
			assert.Contains(t, errs[0].Message, tt.wantMsg)
		})
	}
}

func TestSetApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attr, value string
		check       func(t *testing.T, e *event.Event)
	}{
		{"source", "crm/us", func(t *testing.T, e *event.Event) { assert.Equal(t, "crm/us", e.Source()) }},
		{"type", "order.placed", func(t *testing.T, e *event.Event) { assert.Equal(t, "order.placed", e.Type()) }},
		{"subject", "orders/2", func(t *testing.T, e *event.Event) { assert.Equal(t, "orders/2", e.Subject()) }},
		{"time", "2027-05-06T07:08:09.5Z", func(t *testing.T, e *event.Event) {
			assert.Equal(t, time.Date(2027, 5, 6, 7, 8, 9, 5e8, time.UTC), e.Time().UTC())
		}},
		{"dataschema", "https://example.com/v2.json", func(t *testing.T, e *event.Event) {
			assert.Equal(t, "https://example.com/v2.json", e.DataSchema())
		}},
		{"datacontenttype", "application/cloudevents+json", func(t *testing.T, e *event.Event) {
			assert.Equal(t, "application/cloudevents+json", e.DataContentType())
			assert.JSONEq(t, `{"n": 1}`, string(e.Data()), "the data stays")
		}},
		{"tenant", "globex", func(t *testing.T, e *event.Event) { assert.Equal(t, "globex", e.Extensions()["tenant"]) }},
		{"region", "eu", func(t *testing.T, e *event.Event) {
			assert.Equal(t, "eu", e.Extensions()["region"])
			assert.Equal(t, "acme", e.Extensions()["tenant"], "other extensions stay")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.attr, func(t *testing.T) {
			t.Parallel()
			tr, errs := build(t, attribute.SetPlugin(), map[string]string{attribute.KeyName: tt.attr, attribute.KeyValue: tt.value})
			require.Empty(t, errs)
			out := apply(t, tr, sample())
			assert.Equal(t, "e1", out.ID())
			tt.check(t, out)
		})
	}
}

func TestRemoveConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attr, wantMsg string
	}{
		{"subject", ""},
		{"time", ""},
		{"dataschema", ""},
		{"datacontenttype", ""},
		{"tenant", ""},
		{"", "is required"},
		{"specversion", "required attribute"},
		{"id", "required attribute"},
		{"source", "required attribute"},
		{"type", "required attribute"},
		{"data", "is not an attribute"},
		{"no.dots", "not an attribute name"},
	}
	for _, tt := range tests {
		t.Run(tt.attr, func(t *testing.T) {
			t.Parallel()
			_, errs := build(t, attribute.RemovePlugin(), map[string]string{attribute.KeyName: tt.attr})
			if tt.wantMsg == "" {
				assert.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1)
			assert.Equal(t, attribute.KeyName, errs[0].Key)
			assert.Contains(t, errs[0].Message, tt.wantMsg)
		})
	}
}

func TestRemoveApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attr  string
		check func(t *testing.T, e *event.Event)
	}{
		{"subject", func(t *testing.T, e *event.Event) { assert.Empty(t, e.Subject()) }},
		{"time", func(t *testing.T, e *event.Event) { assert.True(t, e.Time().IsZero()) }},
		{"dataschema", func(t *testing.T, e *event.Event) { assert.Empty(t, e.DataSchema()) }},
		{"datacontenttype", func(t *testing.T, e *event.Event) {
			assert.Empty(t, e.DataContentType())
			assert.JSONEq(t, `{"n": 1}`, string(e.Data()))
		}},
		{"tenant", func(t *testing.T, e *event.Event) { assert.NotContains(t, e.Extensions(), "tenant") }},
		{"absent", func(t *testing.T, e *event.Event) { assert.Equal(t, "acme", e.Extensions()["tenant"]) }},
	}
	for _, tt := range tests {
		t.Run(tt.attr, func(t *testing.T) {
			t.Parallel()
			tr, errs := build(t, attribute.RemovePlugin(), map[string]string{attribute.KeyName: tt.attr})
			require.Empty(t, errs)
			out := apply(t, tr, sample())
			assert.Equal(t, "e1", out.ID())
			assert.Equal(t, "shop/eu", out.Source())
			tt.check(t, out)
		})
	}
}

// Through the registry, as a connector config declares them: problems name their full keys, and the transforms
// apply in order.
func TestRegistry(t *testing.T) {
	t.Parallel()
	r := connector.NewRegistry()
	require.NoError(t, r.RegisterTransform(attribute.SetPlugin()))
	require.NoError(t, r.RegisterTransform(attribute.RemovePlugin()))

	_, errs := r.Transforms(map[string]string{
		"transforms": "a,b", "transforms.a.type": attribute.SetName, "transforms.a.name": "id", "transforms.a.value": "x",
		"transforms.b.type": attribute.RemoveName, "transforms.b.name": "type",
	}, connector.Env{})
	require.Len(t, errs, 2)
	assert.Equal(t, "transforms.a.name", errs[0].Key)
	assert.Equal(t, "transforms.b.name", errs[1].Key)

	ts, errs := r.Transforms(map[string]string{
		"transforms": "tenant,nosubject", "transforms.tenant.type": attribute.SetName, "transforms.tenant.name": "tenant",
		"transforms.tenant.value": "initech", "transforms.nosubject.type": attribute.RemoveName, "transforms.nosubject.name": "subject",
	}, connector.Env{})
	require.Empty(t, errs)
	require.Len(t, ts, 2)
	e := sample()
	for _, tr := range ts {
		e = apply(t, tr, e)
	}
	assert.Equal(t, "initech", e.Extensions()["tenant"])
	assert.Empty(t, e.Subject())
}
