// Command generate writes, from the committed Swagger 2.0 spec, the OpenAPI 3 form of the spec (docs/openapi3.json,
// which the console's TypeScript types are generated from) and the Go client of the control plane's REST API: it
// converts the spec to OpenAPI 3 with kin-openapi's openapi2conv, validates it, writes it pretty-printed, and
// generates the client and its types with oapi-codegen's code generator. Run by `go generate ./docs/client`
// (`make client`, `make docs`); paths are relative to docs/client, where go generate runs it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oapi-codegen/oapi-codegen/v2/pkg/codegen"
)

const generatorModule = "github.com/oapi-codegen/oapi-codegen/v2"

func main() {
	spec := flag.String("spec", "../swagger.json", "the Swagger 2.0 spec to read")
	out := flag.String("out", "client.gen.go", "the Go file to write")
	v3 := flag.String("openapi3", "../openapi3.json", `the OpenAPI 3 file to write; "" writes none`)
	flag.Parse()
	if err := run(*spec, *out, *v3); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run(specPath, outPath, openapi3Path string) error {
	swagger, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	doc3, err := convert(swagger)
	if err != nil {
		return err
	}
	if openapi3Path != "" {
		v3, err := marshalOpenAPI3(doc3)
		if err != nil {
			return err
		}
		if err := os.WriteFile(openapi3Path, v3, 0o644); err != nil {
			return err
		}
	}
	code, err := generate(doc3)
	if err != nil {
		return err
	}
	return os.WriteFile(outPath, code, 0o644)
}

// OpenAPI3 returns the OpenAPI 3 form of a Swagger 2.0 spec in JSON, indented by two spaces, keys sorted, with a
// final newline. It fails when the spec does not convert to a valid OpenAPI 3 document. Like Client, the output
// depends only on the spec and on the converter's version in go.mod, so a test can compare it with the committed
// docs/openapi3.json.
func OpenAPI3(swagger []byte) ([]byte, error) {
	doc3, err := convert(swagger)
	if err != nil {
		return nil, err
	}
	return marshalOpenAPI3(doc3)
}

// Client returns the Go source of package client generated from a Swagger 2.0 spec in JSON. It fails when the
// spec does not convert to a valid OpenAPI 3 document or when oapi-codegen refuses it. The output depends only on
// the spec and on the versions of the generator and converter in go.mod, so a test can compare it with the
// committed file.
func Client(swagger []byte) ([]byte, error) {
	doc3, err := convert(swagger)
	if err != nil {
		return nil, err
	}
	return generate(doc3)
}

// convert turns a Swagger 2.0 spec in JSON into a validated OpenAPI 3 document.
func convert(swagger []byte) (*openapi3.T, error) {
	var doc2 openapi2.T
	if err := json.Unmarshal(swagger, &doc2); err != nil {
		return nil, fmt.Errorf("read Swagger 2.0 spec: %w", err)
	}
	converted, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, fmt.Errorf("convert to OpenAPI 3: %w", err)
	}
	// The converter leaves empty, non-nil allOf lists on every parameter, which oapi-codegen takes for a
	// composition of nothing; written out and loaded again, the document is what a user of the converted file gets.
	v3, err := json.Marshal(converted)
	if err != nil {
		return nil, fmt.Errorf("write OpenAPI 3 spec: %w", err)
	}
	doc3, err := openapi3.NewLoader().LoadFromData(v3)
	if err != nil {
		return nil, fmt.Errorf("load OpenAPI 3 spec: %w", err)
	}
	bearerSchemes(doc3)
	if err := doc3.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("converted spec is not valid OpenAPI 3: %w", err)
	}
	return doc3, nil
}

// bearerSchemes turns the Swagger 2.0 API-key schemes on the Authorization header (Swagger 2.0 has no bearer
// type) into OpenAPI 3's http bearer scheme, which clients and tools know to send as "Authorization: Bearer".
func bearerSchemes(doc3 *openapi3.T) {
	for _, ref := range doc3.Components.SecuritySchemes {
		if s := ref.Value; s != nil && s.Type == "apiKey" && s.In == "header" && s.Name == "Authorization" {
			ref.Value = &openapi3.SecurityScheme{Type: "http", Scheme: "bearer", BearerFormat: "API key",
				Description: s.Description}
		}
	}
}

// marshalOpenAPI3 writes doc3 as stable, pretty JSON: encoding/json sorts the keys of the maps kin-openapi
// marshals through, and HTML characters are left as they are (descriptions hold "<" and "&").
func marshalOpenAPI3(doc3 *openapi3.T) ([]byte, error) {
	compact, err := json.Marshal(doc3)
	if err != nil {
		return nil, fmt.Errorf("write OpenAPI 3 spec: %w", err)
	}
	// Decoding into any and encoding again sorts every object's keys, whatever order a MarshalJSON chose.
	var v any
	if err := json.Unmarshal(compact, &v); err != nil {
		return nil, fmt.Errorf("write OpenAPI 3 spec: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil { // Encode ends with a newline
		return nil, fmt.Errorf("write OpenAPI 3 spec: %w", err)
	}
	return buf.Bytes(), nil
}

// generate returns the Go source of package client for doc3.
func generate(doc3 *openapi3.T) ([]byte, error) {
	version := generatorVersion()
	code, err := codegen.Generate(doc3, codegen.Configuration{
		PackageName: "client",
		Generate:    codegen.GenerateOptions{Client: true, Models: true},
		// Never fetch anything while generating: the spec has local references only.
		AllowRemoteRefsFrom:  []string{},
		NoVCSVersionOverride: &version,
	})
	if err != nil {
		return nil, fmt.Errorf("oapi-codegen: %w", err)
	}
	// oapi-codegen names the main module of the running binary (this repository's) as the generator; name itself.
	header, rest, ok := strings.Cut(code, " DO NOT EDIT.")
	if !ok {
		return nil, fmt.Errorf("oapi-codegen output has no generated-code header")
	}
	if i := strings.Index(header, "Code generated by "); i >= 0 {
		header = header[:i] + "Code generated by " + generatorModule + " version " + version
	}
	return []byte(header + " DO NOT EDIT." + rest), nil
}

// generatorVersion is oapi-codegen's version as go.mod pins it.
func generatorVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == generatorModule {
				return dep.Version
			}
		}
	}
	return "unknown"
}
