package docs_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/eventbridge-go/eventbridge/"

// importRules is the table "Folders and what may import what" of docs/ARCHITECTURE.md: the project packages that
// the (non-test) code of a folder may import. A folder is ruled by its nearest entry; "x/..." allows x and every
// package below it, "x" allows x alone. Test code may import more (a web test starts persistence and NATS).
var importRules = map[string][]string{
	"domain":          {"domain/..."},
	"stream":          {"domain/cloudevent"},
	"rpc":             nil,
	"listener":        nil,
	"tracing":         nil,
	"gcpace":          nil,
	"scrape":          nil,
	"migrations":      nil,
	"persistence":     {"domain/...", "migrations", "persistence/..."},
	"adapter":         {"domain/...", "rpc", "stream", "tracing", "scrape"},
	"web":             {"domain/...", "docs"},
	"web/rest":        {"web", "domain/..."},
	"web/rocketmq":    {"web", "web/rest", "domain/..."},
	"web/aws":         {"web", "domain/...", "adapter/sigv4"},
	"worker":          {"worker/...", "rpc", "stream", "domain/pattern", "domain/transform", "domain/cloudevent", "listener", "tracing", "scrape"},
	"cmd/worker":      {"worker/...", "rpc", "stream", "listener", "tracing", "gcpace"},
	"cmd/eventbridge": {"..."},
	"docs":            {"docs/..."},
	"frontend":        nil,
}

// ruleOf returns the rule of the package in dir (relative to the module root) and whether one applies.
func ruleOf(dir string) ([]string, bool) {
	for d := dir; d != "."; d = filepath.Dir(d) {
		if r, ok := importRules[filepath.ToSlash(d)]; ok {
			return r, true
		}
	}
	return nil, false
}

func allowed(rule []string, pkg string) bool {
	for _, a := range rule {
		if a == "..." || a == pkg {
			return true
		}
		if base, ok := strings.CutSuffix(a, "/..."); ok && (pkg == base || strings.HasPrefix(pkg, base+"/")) {
			return true
		}
	}
	return false
}

// violations lists "dir imports pkg" for every project import that the rules forbid, and the folders no rule
// covers; imports maps a package's folder to the project packages it imports (both relative to the module root).
func violations(imports map[string][]string) []string {
	var out []string
	for dir, pkgs := range imports {
		rule, ok := ruleOf(dir)
		if !ok {
			out = append(out, dir+" is in no rule of docs/ARCHITECTURE.md")
			continue
		}
		for _, p := range pkgs {
			if !allowed(rule, p) {
				out = append(out, dir+" imports "+p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// projectImports reads the project imports of the non-test Go files under root, by folder.
func projectImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		out[rel] = append(out[rel], []string{}...)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if pkg, ok := strings.CutPrefix(p, module); ok && !slices.Contains(out[rel], pkg) {
				out[rel] = append(out[rel], pkg)
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestImportRules: every package imports only what docs/ARCHITECTURE.md allows its folder.
func TestImportRules(t *testing.T) {
	t.Parallel()
	imports := projectImports(t, "..")
	require.Contains(t, imports, "web/rest", "the walk reads the whole module")
	require.Contains(t, imports, "worker/plugins/router")
	require.Greater(t, len(imports), 30)
	assert.Empty(t, violations(imports))
}

// TestImportRulesCatchViolations: forbidden imports and folders without a rule are reported.
func TestImportRulesCatchViolations(t *testing.T) {
	t.Parallel()
	got := violations(map[string][]string{
		"adapter/eventstore": {"domain/bus", "stream", "worker/jetstream"},
		"web/rest":           {"web", "web/rocketmq", "persistence"},
		"web":                {"web/rest"},
		"domain/bus":         {"domain", "stream"},
		"worker/plugins/x":   {"worker/connector", "domain/pattern", "domain/bus"},
		"tools/gen":          {"domain"},
	})
	assert.Equal(t, []string{
		"adapter/eventstore imports worker/jetstream",
		"domain/bus imports stream",
		"tools/gen is in no rule of docs/ARCHITECTURE.md",
		"web imports web/rest",
		"web/rest imports persistence",
		"web/rest imports web/rocketmq",
		"worker/plugins/x imports domain/bus",
	}, got)
}
