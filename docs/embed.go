package docs

import _ "embed"

// SwaggerJSON is the OpenAPI document that `make docs` generates (swagger.json), served as it is. Serving it
// through swag's ReadDoc instead would race: ReadDoc rewrites the shared SwaggerInfo on every call.
//
//go:embed swagger.json
var SwaggerJSON []byte
