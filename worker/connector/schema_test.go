package connector

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJSONSchema(t *testing.T) {
	t.Parallel()
	spec := Spec{
		{Name: "token", Title: "API token", Type: TypeString, Required: true, Secret: true, Doc: "API token."},
		{Name: "n", Type: TypeInt, Default: "3", Min: Min(1)},
		{Name: "on", Type: TypeBool},
		{Name: "mode", Type: TypeEnum, Enum: []string{"a", "b"}, Default: "a"},
		{Name: "doc", Title: "Document", Type: TypeJSON, Example: `{"a": 1}`},
	}
	b, err := json.Marshal(spec.JSONSchema("p", "Plugin p."))
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(b, &s))
	assert.Equal(t, JSONSchemaDialect, s["$schema"])
	assert.Equal(t, "p", s["title"])
	assert.Equal(t, "Plugin p.", s["description"])
	assert.Equal(t, []any{"token"}, s["required"])
	props := s["properties"].(map[string]any)
	token := props["token"].(map[string]any)
	assert.Equal(t, true, token["writeOnly"])
	assert.Equal(t, "password", token["format"])
	assert.Equal(t, "API token.", token["description"])
	n := props["n"].(map[string]any)
	assert.Equal(t, "3", n["default"])
	assert.Equal(t, "int", n["x-type"])
	assert.Equal(t, float64(1), n["x-minimum"])
	assert.NotEmpty(t, n["pattern"])
	assert.Equal(t, []any{"true", "false"}, props["on"].(map[string]any)["enum"])
	assert.Equal(t, []any{"a", "b"}, props["mode"].(map[string]any)["enum"])
	assert.Equal(t, "application/json", props["doc"].(map[string]any)["contentMediaType"])
	assert.Equal(t, "API token", token["title"])
	assert.NotContains(t, token, "examples", "a field without an example has none")
	doc := props["doc"].(map[string]any)
	assert.Equal(t, "Document", doc["title"])
	assert.Equal(t, []any{`{"a": 1}`}, doc["examples"], "examples is an array (JSON Schema 2020-12)")
	assert.NotContains(t, n, "title", "a field without a title has none")

	keys := spec.ConfigKeys()
	require.Len(t, keys, 5)
	assert.Equal(t, "PASSWORD", keys[0].Type)
	assert.Equal(t, "API token", keys[0].DisplayName, "the display name is the title")
	assert.Equal(t, "n", keys[1].DisplayName, "without a title, the display name is the key")
	assert.Equal(t, "HIGH", keys[0].Importance)
	assert.Equal(t, "LONG", keys[1].Type)
	assert.Equal(t, "BOOLEAN", keys[2].Type)
	assert.Equal(t, []string{"a", "b"}, spec[3].RecommendedValues())
}

func TestFieldJSONCarriesTitleAndExample(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Field{Name: "mqtt.url", Title: "Broker URL", Type: TypeString, Example: "tcp://broker.example.com:1883"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"name": "mqtt.url", "title": "Broker URL", "type": "string", "example": "tcp://broker.example.com:1883"}`, string(b))
	b, err = json.Marshal(Field{Name: "n", Type: TypeInt})
	require.NoError(t, err)
	assert.JSONEq(t, `{"name": "n", "type": "int"}`, string(b), "title and example are omitted when empty")
}

// TestCommonSpecsAreDescribed checks the keys the runtime adds to every plugin's spec: each has a title, a doc,
// and an example that its own checks accept. worker/plugins checks the full spec of every built-in plugin.
func TestCommonSpecsAreDescribed(t *testing.T) {
	t.Parallel()
	for name, spec := range map[string]Spec{"SinkSpec": SinkSpec(), "SourceSpec": SourceSpec()} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, f := range spec {
				assert.NotEmpty(t, f.Title, "%s has no title", f.Name)
				assert.NotEmpty(t, f.Doc, "%s has no doc", f.Name)
				if f.Example != "" {
					assert.Empty(t, f.check(f.Example), "%s: the example %q is refused", f.Name, f.Example)
				}
			}
		})
	}
}
