package connector

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJSONSchema(t *testing.T) {
	spec := Spec{
		{Name: "token", Type: TypeString, Required: true, Secret: true, Doc: "API token."},
		{Name: "n", Type: TypeInt, Default: "3", Min: Min(1)},
		{Name: "on", Type: TypeBool},
		{Name: "mode", Type: TypeEnum, Enum: []string{"a", "b"}, Default: "a"},
		{Name: "doc", Type: TypeJSON},
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

	keys := spec.ConfigKeys()
	require.Len(t, keys, 5)
	assert.Equal(t, "PASSWORD", keys[0].Type)
	assert.Equal(t, "HIGH", keys[0].Importance)
	assert.Equal(t, "LONG", keys[1].Type)
	assert.Equal(t, "BOOLEAN", keys[2].Type)
	assert.Equal(t, []string{"a", "b"}, spec[3].RecommendedValues())
}
