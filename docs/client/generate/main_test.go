package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommittedClientIsCurrent fails when docs/client/client.gen.go is not what the generator makes from the
// committed docs/swagger.json (itself checked against the annotations by web's OpenAPI test): run `make client`.
func TestCommittedClientIsCurrent(t *testing.T) {
	swagger, err := os.ReadFile("../../swagger.json")
	require.NoError(t, err)
	committed, err := os.ReadFile("../client.gen.go")
	require.NoError(t, err)

	generated, err := Client(swagger)
	require.NoError(t, err)
	if string(generated) != string(committed) {
		t.Fatal("docs/client/client.gen.go is stale or edited by hand: run `make client` and commit the result")
	}
}

// TestCommittedOpenAPI3IsCurrent fails when docs/openapi3.json, which the console's TypeScript types are generated
// from, is not the OpenAPI 3 form of the committed docs/swagger.json: run `make docs` (or `make client`).
func TestCommittedOpenAPI3IsCurrent(t *testing.T) {
	swagger, err := os.ReadFile("../../swagger.json")
	require.NoError(t, err)
	committed, err := os.ReadFile("../../openapi3.json")
	require.NoError(t, err, "docs/openapi3.json is missing: run `make docs`")

	generated, err := OpenAPI3(swagger)
	require.NoError(t, err)
	if string(generated) != string(committed) {
		t.Fatal("docs/openapi3.json is stale or edited by hand: run `make docs` and commit the result")
	}
}

// TestOpenAPI3 checks the converted document itself: OpenAPI 3, every path and schema of the Swagger 2.0 spec,
// Swagger 2.0's definitions moved under components, body parameters turned into request bodies, and the same
// bytes on every run (so the freshness test above is not flaky).
func TestOpenAPI3(t *testing.T) {
	swagger, err := os.ReadFile("../../swagger.json")
	require.NoError(t, err)
	var v2 struct {
		Paths       map[string]map[string]json.RawMessage `json:"paths"`
		Definitions map[string]json.RawMessage            `json:"definitions"`
	}
	require.NoError(t, json.Unmarshal(swagger, &v2))

	out, err := OpenAPI3(swagger)
	require.NoError(t, err)
	again, err := OpenAPI3(swagger)
	require.NoError(t, err)
	require.Equal(t, string(out), string(again), "the output is stable")
	assert.Equal(t, byte('\n'), out[len(out)-1], "the file ends with a newline")
	assert.Contains(t, string(out), "\n  \"openapi\": \"3.0.3\",\n", "pretty-printed, two spaces")

	var v3 struct {
		OpenAPI    string                                `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
		Definitions json.RawMessage `json:"definitions"`
	}
	require.NoError(t, json.Unmarshal(out, &v3))
	assert.Equal(t, "3.0.3", v3.OpenAPI)
	assert.Nil(t, v3.Definitions, "Swagger 2.0's definitions are components/schemas in OpenAPI 3")
	require.NotEmpty(t, v2.Paths)
	for path, ops := range v2.Paths {
		for method := range ops {
			assert.Containsf(t, v3.Paths[path], method, "%s %s is in the OpenAPI 3 document", method, path)
		}
	}
	for name := range v2.Definitions {
		assert.Containsf(t, v3.Components.Schemas, name, "schema %s is in components/schemas", name)
	}

	var createBus struct {
		RequestBody struct {
			Content map[string]json.RawMessage `json:"content"`
		} `json:"requestBody"`
		Parameters []struct{ In string } `json:"parameters"`
	}
	require.Contains(t, v3.Paths["/api/v1/buses"], "post")
	require.NoError(t, json.Unmarshal(v3.Paths["/api/v1/buses"]["post"], &createBus))
	assert.Contains(t, createBus.RequestBody.Content, "application/json", "the body parameter is a request body")
	for _, p := range createBus.Parameters {
		assert.NotEqual(t, "body", p.In, "OpenAPI 3 has no body parameters")
	}
}

// TestOpenAPI3RefusesBadSpecs: a spec that is not JSON or does not convert fails with an error naming the step.
func TestOpenAPI3RefusesBadSpecs(t *testing.T) {
	for _, tc := range []struct{ name, spec, err string }{
		{"not JSON", "{", "read Swagger 2.0 spec"},
		{"dangling reference", `{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{"/x":{"get":{"responses":{"200":{"description":"ok","schema":{"$ref":"#/definitions/Missing"}}}}}}}`, "OpenAPI 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenAPI3([]byte(tc.spec))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}
