package web_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/docs"
	"github.com/eventbridge-go/eventbridge/web"
)

// swagArgs are the arguments of `go tool swag` that make docs/ (the Makefile's docs target runs the same), with
// the output directory last.
var swagArgs = []string{"tool", "swag", "init", "--quiet", "--generalInfo", "router.go", "--dir", "./web,./web/rest,./web/rocketmq,./domain",
	"--outputTypes", "go,json,yaml", "--parseInternal", "--output"}

// TestOpenAPIUpToDate regenerates the OpenAPI document into a temporary directory and requires it to equal the
// committed one: run `make docs` after changing a handler's annotations or a DTO.
// swaggerDoc is the served spec, read once: swag's ReadDoc writes to the spec on every call, so parallel tests
// calling it race.
var swaggerDoc = sync.OnceValue(func() string { return docs.SwaggerInfo.ReadDoc() })

func TestOpenAPIUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs swag")
	}
	t.Parallel()
	out := filepath.Join(t.TempDir(), "docs") // swag names the package after the directory
	cmd := exec.Command("go", append(swagArgs, out)...)
	cmd.Dir = ".." // the module root
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	require.NoError(t, cmd.Run(), "go tool swag: %s", stderr.String())

	for _, name := range []string{"swagger.json", "swagger.yaml", "docs.go"} {
		want, err := os.ReadFile(filepath.Join("..", "docs", name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		assert.Equalf(t, string(want), string(got), "docs/%s is out of date: run make docs", name)
	}
}

// TestOpenAPICoversEveryRoute: every route of the router is documented with its method, and every documented
// operation is a route.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	t.Parallel()
	var spec struct {
		BasePath string                               `json:"basePath"`
		Info     struct{ Title string }               `json:"info"`
		Paths    map[string]map[string]map[string]any `json:"paths"`
	}
	require.NoError(t, json.Unmarshal([]byte(swaggerDoc()), &spec))
	assert.Equal(t, "EventBridge-Go API", spec.Info.Title)
	assert.Equal(t, "/", spec.BasePath)

	param := regexp.MustCompile(`:([A-Za-z0-9_]+)`)
	routes := map[string]bool{}
	for _, r := range newRouter(web.Config{}, web.Services{}).Routes() {
		if strings.HasPrefix(r.Path, "/swagger/") {
			continue
		}
		if strings.Contains(r.Path, "#") {
			// Operation.Route of the Amazon EventBridge API (POST / selected by X-Amz-Target): AWS's JSON 1.1
			// protocol, which is not in the OpenAPI document; docs/aws-api.md documents it.
			continue
		}
		path := param.ReplaceAllString(r.Path, "{$1}")
		method := strings.ToLower(r.Method)
		routes[method+" "+path] = true
		_, ok := spec.Paths[path][method]
		assert.Truef(t, ok, "route %s %s is not in docs/swagger.json", r.Method, path)
	}
	require.Greater(t, len(routes), 15, "the router has its routes")
	for path, ops := range spec.Paths {
		for method := range ops {
			assert.Truef(t, routes[method+" "+path], "docs/swagger.json documents %s %s, which the router does not serve", method, path)
		}
	}
}

// TestOpenAPIParameters: every path parameter of a documented operation is declared.
func TestOpenAPIParameters(t *testing.T) {
	t.Parallel()
	var spec struct {
		Paths map[string]map[string]struct {
			Parameters []struct{ Name, In string } `json:"parameters"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal([]byte(swaggerDoc()), &spec))
	param := regexp.MustCompile(`\{([^}]+)\}`)
	for path, ops := range spec.Paths {
		for method, op := range ops {
			declared := map[string]bool{}
			for _, p := range op.Parameters {
				if p.In == "path" {
					declared[p.Name] = true
				}
			}
			for _, m := range param.FindAllStringSubmatch(path, -1) {
				assert.Truef(t, declared[m[1]], "%s %s does not declare the path parameter %s", method, path, m[1])
			}
			assert.Lenf(t, declared, len(param.FindAllString(path, -1)), "%s %s declares path parameters it does not have", method, path)
		}
	}
}

// TestOpenAPISecurity: every documented operation but the public ones (health, webhooks, signing in) declares the bearer scheme,
// and the public ones declare none; the scheme is the Authorization header.
func TestOpenAPISecurity(t *testing.T) {
	t.Parallel()
	var spec struct {
		SecurityDefinitions map[string]struct{ Type, Name, In string } `json:"securityDefinitions"`
		Paths               map[string]map[string]struct {
			Security []map[string][]string `json:"security"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal([]byte(swaggerDoc()), &spec))
	assert.Equal(t, struct{ Type, Name, In string }{"apiKey", "Authorization", "header"}, spec.SecurityDefinitions["BearerAuth"])
	public := regexp.MustCompile(`^/(healthz|readyz|webhook/putEvents|api/v1/webhooks/\{token\})$`)
	secured := 0
	for path, ops := range spec.Paths {
		for method, op := range ops {
			if public.MatchString(path) || (path == "/api/v1/session" && method == "post") { // signing in
				assert.Emptyf(t, op.Security, "%s %s is public", method, path)
				continue
			}
			if assert.Lenf(t, op.Security, 1, "%s %s declares the bearer scheme", method, path) {
				assert.Contains(t, op.Security[0], "BearerAuth")
				secured++
			}
		}
	}
	assert.Greater(t, secured, 100)
}
