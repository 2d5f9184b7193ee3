package inputtransformer_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/inputtransformer"
)

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		spec    string
		wantMsg string // "" = valid
	}{
		{"input transformer", `{"inputTransformer": {"inputPathsMap": {"id": "$.data.orderId"}, "inputTemplate": "{\"order\": <id>}"}}`, ""},
		{"RocketMQ form", `{"transform": {"form": "JSONPATH", "value": "$.data.orderId"}}`, ""},
		{"not JSON", `{`, "reading a transformer spec"},
		{"unknown field", `{"inputTemplate": "x"}`, "unknown field"},
		{"attributes alone", `{"attributes": {"subject": "<ce.id>"}}`, ""},
		{"attributes beside a form", `{"inputPath": "$.data", "attributes": {"subject": "<ce.id>"}}`, ""},
		{"nothing", `{}`, "one of inputTransformer, input, inputPath and transform is required"},
		{"an attribute that cannot be set", `{"attributes": {"id": "x"}}`, "attributes.id"},
		{"invalid template", `{"inputTransformer": {"inputTemplate": ""}}`, "inputTransformer.inputTemplate is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := inputtransformer.Plugin()
			tr, err := inputtransformer.New(p.Spec.Values(map[string]string{inputtransformer.KeySpec: tt.spec}), connector.Env{})
			if tt.wantMsg == "" {
				require.NoError(t, err)
				require.NotNil(t, tr)
				return
			}
			var fe connector.FieldErrors
			require.ErrorAs(t, err, &fe)
			require.Len(t, fe, 1)
			assert.Equal(t, inputtransformer.KeySpec, fe[0].Key)
			assert.Contains(t, fe[0].Message, tt.wantMsg)
		})
	}
	spec := inputtransformer.Plugin().Spec
	assert.NotEmpty(t, spec.Validate(map[string]string{}), "spec is required")
	assert.NotEmpty(t, spec.Validate(map[string]string{inputtransformer.KeySpec: "{"}), "spec is JSON")
}

// Configured as a connector configures it, through the registry the plugin registers in.
func TestApplyThroughTheRegistry(t *testing.T) {
	t.Parallel()
	_, ok := connector.Default().LookupTransform(inputtransformer.Name)
	require.True(t, ok, "the plugin registers itself")
	cfg := map[string]string{
		"transforms":            "input",
		"transforms.input.type": inputtransformer.Name,
		"transforms.input.spec": `{"inputTransformer": {"inputPathsMap": {"id": "$.data.orderId", "n": "$.data.items[1]"},` +
			` "inputTemplate": "{\"order\": <id>, \"second\": <n>, \"type\": \"<ce.type>\"}"}}`,
	}
	ts, errs := connector.Default().Transforms(cfg, connector.Env{})
	require.Empty(t, errs)
	require.Len(t, ts, 1)
	in := jetstreamtest.Event("e1", "order.created", map[string]any{"orderId": "o-1", "items": []any{"a", 2}})
	out, err := ts[0].Apply(context.Background(), in)
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.JSONEq(t, `{"order": "o-1", "second": 2, "type": "order.created"}`, string(out[0].Data()))
	assert.Equal(t, "application/json", out[0].DataContentType())
	assert.Equal(t, "e1", out[0].ID())
	assert.JSONEq(t, `{"orderId": "o-1", "items": ["a", 2]}`, string(in.Data()), "the record is not modified")

	cfg["transforms.input.spec"] = `{"inputPath": "data.orderId"}`
	_, errs = connector.Default().Transforms(cfg, connector.Env{})
	require.Len(t, errs, 1)
	assert.Equal(t, "transforms.input.spec", errs[0].Key)
	assert.Contains(t, errs[0].Message, "inputPath")
}

// The attributes of the spec are set on the record the sink writes; a value an attribute cannot take gives the
// record up.
func TestApplySetsAttributes(t *testing.T) {
	t.Parallel()
	p := inputtransformer.Plugin()
	tr, err := inputtransformer.New(p.Spec.Values(map[string]string{inputtransformer.KeySpec: `{"inputTransformer": ` +
		`{"inputPathsMap": {"id": "$.data.orderId"}, "inputTemplate": "{\"order\": <id>}"}, ` +
		`"attributes": {"subject": "orders/<id>", "type": "<ce.type>.v2", "orderid": "<id>"}}`}), connector.Env{})
	require.NoError(t, err)
	in := jetstreamtest.Event("e1", "order.created", map[string]any{"orderId": "o-1"})
	out, err := tr.Apply(context.Background(), in)
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.JSONEq(t, `{"order": "o-1"}`, string(out[0].Data()))
	assert.Equal(t, "orders/o-1", out[0].Subject())
	assert.Equal(t, "order.created.v2", out[0].Type())
	assert.Equal(t, "o-1", out[0].Extensions()["orderid"])
	assert.Equal(t, "e1", out[0].ID())
	assert.Equal(t, "order.created", in.Type(), "the record is not modified")
	assert.Empty(t, in.Subject())

	// Attributes alone keep the data.
	tr, err = inputtransformer.New(p.Spec.Values(map[string]string{inputtransformer.KeySpec: `{"attributes": {"subject": "<ce.source>"}}`}), connector.Env{})
	require.NoError(t, err)
	out, err = tr.Apply(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, "test/source", out[0].Subject())
	assert.Equal(t, in.Data(), out[0].Data())
	assert.Equal(t, in.DataContentType(), out[0].DataContentType())

	// An empty type is an error.
	tr, err = inputtransformer.New(p.Spec.Values(map[string]string{inputtransformer.KeySpec: `{"attributes": {"type": "<ce.subject>"}}`}), connector.Env{})
	require.NoError(t, err)
	_, err = tr.Apply(context.Background(), in)
	require.ErrorContains(t, err, "attributes.type")
}

// With format aws the transformer sees AWS's envelope, knows the rule, and {} delivers the envelope itself.
func TestApplyInAWSFormat(t *testing.T) {
	t.Parallel()
	p := inputtransformer.Plugin()
	values := func(spec string) connector.Values {
		return p.Spec.Values(map[string]string{inputtransformer.KeySpec: spec, inputtransformer.KeyFormat: inputtransformer.FormatAWS,
			inputtransformer.KeyRuleName: "big", inputtransformer.KeyRuleARN: "arn:aws:events:us-east-1:123456789012:rule/big",
			inputtransformer.KeyAccount: "123456789012", inputtransformer.KeyRegion: "us-east-1"})
	}
	in := jetstreamtest.Event("e1", "order.created", map[string]any{"orderId": "o-1"})
	tr, err := inputtransformer.New(values(`{}`), connector.Env{})
	require.NoError(t, err)
	out, err := tr.Apply(context.Background(), in)
	require.NoError(t, err)
	var env map[string]any
	require.NoError(t, json.Unmarshal(out[0].Data(), &env))
	assert.Equal(t, "0", env["version"])
	assert.Equal(t, "order.created", env["detail-type"])
	assert.Equal(t, "123456789012", env["account"])
	assert.Equal(t, "us-east-1", env["region"])
	assert.Equal(t, map[string]any{"orderId": "o-1"}, env["detail"])
	assert.Equal(t, "application/json", out[0].DataContentType())

	tr, err = inputtransformer.New(values(`{"inputTransformer": {"inputPathsMap": {"id": "$.detail.orderId"}, `+
		`"inputTemplate": "{\"order\": <id>, \"rule\": <aws.events.rule-name>}"}}`), connector.Env{})
	require.NoError(t, err)
	out, err = tr.Apply(context.Background(), in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"order": "o-1", "rule": "big"}`, string(out[0].Data()))

	assert.NotEmpty(t, p.Spec.Validate(map[string]string{inputtransformer.KeySpec: "{}", inputtransformer.KeyFormat: "xml"}),
		"the format is one of cloudevents and aws")
}
