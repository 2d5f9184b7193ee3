// Package plugins_test checks what every built-in plugin owes the console, which renders its forms from the
// plugins' specs (GET /connector-plugins/{p}/schema): every key of a plugin's full spec, the keys the runtime adds
// included, and every key of a transform plugin has a title and a doc, and its example, if any, is a value the key
// accepts. A key added later without them fails here.
package plugins_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"

	// Every plugin package, each registering its plugins in init; TestEveryPluginPackageIsChecked keeps the list
	// complete.
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/attribute"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/eventbus"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/http"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/inputtransformer"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/log"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/mqtt"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/replay"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/router"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/schedule"
	_ "github.com/eventbridge-go/eventbridge/worker/plugins/webhook"
)

// pluginsPath is the import path of this directory.
const pluginsPath = "github.com/eventbridge-go/eventbridge/worker/plugins"

// maxTitle bounds a title: a form label, not a sentence.
const maxTitle = 40

// TestEveryPluginPackageIsChecked fails when a package under worker/plugins is not imported by this file: its
// plugins would not be registered, so not checked.
func TestEveryPluginPackageIsChecked(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "plugins_test.go", nil, parser.ImportsOnly)
	require.NoError(t, err)
	imported := map[string]bool{}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		require.NoError(t, err)
		imported[p] = true
	}
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	packages := 0
	for _, e := range entries {
		if !e.IsDir() || !hasGoSource(t, e.Name()) {
			continue
		}
		packages++
		assert.True(t, imported[pluginsPath+"/"+e.Name()], "plugin package %s is not imported by plugins_test.go", e.Name())
	}
	assert.Positive(t, packages, "no plugin package found: the test does not run in worker/plugins")
}

// hasGoSource reports whether dir holds a Go file that is not a test.
func hasGoSource(t *testing.T, dir string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			return true
		}
	}
	return false
}

// TestSpecsDescribeEveryField walks the full spec of every built-in connector plugin and the spec of every
// built-in transform plugin.
func TestSpecsDescribeEveryField(t *testing.T) {
	t.Parallel()
	reg := connector.Default()
	type spec struct {
		name   string
		fields connector.Spec
		schema map[string]any // the JSON Schema the console reads; nil for transforms, which have none
	}
	var specs []spec
	for _, p := range reg.Plugins() {
		specs = append(specs, spec{name: "plugin " + p.Name, fields: p.FullSpec(), schema: p.FullSpec().JSONSchema(p.Name, p.Doc)})
	}
	for _, p := range reg.TransformPlugins() {
		specs = append(specs, spec{name: "transform " + p.Name, fields: p.Spec})
	}
	require.NotEmpty(t, reg.Plugins(), "no connector plugin registered: nothing would be checked")
	require.NotEmpty(t, reg.TransformPlugins(), "no transform plugin registered: nothing would be checked")

	for _, s := range specs {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			byTitle := map[string]string{}
			for _, f := range s.fields {
				for _, problem := range fieldProblems(f) {
					t.Errorf("%s: %s", f.Name, problem)
				}
				if other, ok := byTitle[f.Title]; ok && f.Title != "" {
					t.Errorf("%s and %s have the same title %q: a form could not tell them apart", other, f.Name, f.Title)
				}
				byTitle[f.Title] = f.Name
			}
			if s.schema == nil {
				return
			}
			props, ok := s.schema["properties"].(map[string]any)
			require.True(t, ok, "the schema has no properties")
			for _, f := range s.fields {
				p, ok := props[f.Name].(map[string]any)
				if !assert.True(t, ok, "the schema has no property %s", f.Name) {
					continue
				}
				assert.Equal(t, f.Title, p["title"], "title of %s", f.Name)
				assert.Equal(t, f.Doc, p["description"], "description of %s", f.Name)
				if f.Example != "" {
					assert.Equal(t, []string{f.Example}, p["examples"], "examples of %s", f.Name)
				}
			}
		})
	}
}

// fieldProblems returns what f lacks for a form: a title in sentence case, a doc that says more than the key, an
// example that the field accepts.
func fieldProblems(f connector.Field) []string {
	var out []string
	switch first, _ := utf8.DecodeRuneInString(f.Title); {
	case f.Title == "":
		out = append(out, "has no title")
	case f.Title != strings.TrimSpace(f.Title):
		out = append(out, "the title has leading or trailing space")
	case !unicode.IsUpper(first):
		out = append(out, "the title does not start with a capital letter")
	case strings.HasSuffix(f.Title, "."):
		out = append(out, "the title ends with a period")
	case utf8.RuneCountInString(f.Title) > maxTitle:
		out = append(out, "the title is longer than "+strconv.Itoa(maxTitle)+" characters")
	case f.Title == f.Name:
		out = append(out, "the title is the key")
	}
	// Sentence case: after the first word, a capital is an acronym's (URL, ID, QoS), not a Title Case word's. A
	// proper noun would be refused too; rephrase the title around it.
	if words := strings.Fields(f.Title); len(words) > 1 {
		for _, w := range words[1:] {
			r, size := utf8.DecodeRuneInString(w)
			if unicode.IsUpper(r) && size < len(w) && strings.ToLower(w[size:]) == w[size:] {
				out = append(out, "the title is not in sentence case: "+strconv.Quote(w))
			}
		}
	}
	switch doc := strings.TrimSpace(f.Doc); {
	case doc == "":
		out = append(out, "has no doc")
	case strings.Trim(doc, ".") == f.Name || strings.Trim(doc, ".") == f.Title:
		out = append(out, "the doc only repeats the key or the title")
	}
	if f.Example != "" {
		if errs := (connector.Spec{f}).Validate(map[string]string{f.Name: f.Example}); len(errs) > 0 {
			out = append(out, "the example "+strconv.Quote(f.Example)+" is refused: "+errs.Error())
		}
	}
	return out
}

// TestFieldProblems shows that the walk above can fail: each lack is found, and a described field passes.
func TestFieldProblems(t *testing.T) {
	t.Parallel()
	good := connector.Field{Name: "mqtt.url", Title: "Broker URL", Type: connector.TypeString,
		Doc: "Broker URL of the connector.", Example: "tcp://broker.example.com:1883"}
	tests := []struct {
		name   string
		change func(f *connector.Field)
		want   string // a part of the one problem expected; "" for none
	}{
		{"described", func(*connector.Field) {}, ""},
		{"acronym and unit", func(f *connector.Field) { f.Title = "Retry timeout (ms) of QoS and NATS URLs" }, ""},
		{"no title", func(f *connector.Field) { f.Title = "" }, "has no title"},
		{"lower-case title", func(f *connector.Field) { f.Title = "broker URL" }, "capital letter"},
		{"title case", func(f *connector.Field) { f.Title = "Broker Address" }, `sentence case: "Address"`},
		{"trailing period", func(f *connector.Field) { f.Title = "Broker URL." }, "ends with a period"},
		{"long title", func(f *connector.Field) { f.Title = "The URL of the broker that the connector connects to" }, "longer than"},
		{"no doc", func(f *connector.Field) { f.Doc = " " }, "has no doc"},
		{"doc repeats the key", func(f *connector.Field) { f.Doc = "mqtt.url." }, "only repeats"},
		{"doc repeats the title", func(f *connector.Field) { f.Doc = "Broker URL" }, "only repeats"},
		{"example refused", func(f *connector.Field) {
			f.Type, f.Example = connector.TypeDuration, "5 seconds"
		}, `example "5 seconds" is refused`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := good
			tt.change(&f)
			got := fieldProblems(f)
			if tt.want == "" {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1, "%q", got)
			assert.Contains(t, got[0], tt.want)
		})
	}
}
