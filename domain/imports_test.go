package domain_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// forbidden are import path prefixes that domain code must never use: the domain stays pure.
var forbidden = []string{
	"github.com/gin-gonic/",
	"gorm.io/",
	"github.com/nats-io/",
	"github.com/cloudevents/sdk-go/v2/client",
	"github.com/cloudevents/sdk-go/v2/protocol",
	"github.com/cloudevents/sdk-go/v2/binding",
	"github.com/eventbridge-go/eventbridge/web",
	"github.com/eventbridge-go/eventbridge/persistence",
	"github.com/eventbridge-go/eventbridge/adapter",
	"github.com/eventbridge-go/eventbridge/worker",
	"github.com/eventbridge-go/eventbridge/migrations",
	"github.com/eventbridge-go/eventbridge/rpc",
	"github.com/eventbridge-go/eventbridge/stream",
}

// violations lists "file imports path" for every forbidden import under dir, and how many files it read.
func violations(t *testing.T, dir string) (out []string, files int) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if strings.HasPrefix(p, bad) {
					out = append(out, path+" imports "+p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, files
}

func TestDomainImportsNoInfrastructure(t *testing.T) {
	bad, files := violations(t, ".")
	if files < 10 {
		t.Fatalf("read only %d files; is the test running from domain/?", files)
	}
	for _, v := range bad {
		t.Errorf("%s: domain packages must not depend on infrastructure", v)
	}
}

func TestImportCheckCatchesInfrastructure(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nimport (\n\t\"fmt\"\n\t\"gorm.io/gorm\"\n\t\"github.com/cloudevents/sdk-go/v2/event\"\n\tnats \"github.com/nats-io/nats.go\"\n)\n"
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bad, _ := violations(t, dir)
	if len(bad) != 2 {
		t.Fatalf("want gorm and nats reported, got %v", bad)
	}
}
