package main

import (
	"os"
	"testing"

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
