package web_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/web/aws"
	"github.com/eventbridge-go/eventbridge/web/rest"
	"github.com/eventbridge-go/eventbridge/web/rocketmq"
	workerrest "github.com/eventbridge-go/eventbridge/worker/rest"
)

var update = flag.Bool("update", false, "rewrite docs/operations.md from the operation tables")

// allDialects are the operation tables of the control plane, the router's own first, as cmd/eventbridge builds them.
func allDialects() []web.Dialect {
	return web.Dialects(web.Config{}, web.Services{}, rest.New, rocketmq.New, aws.New)
}

var operationName = regexp.MustCompile(`^[a-z][A-Za-z]*(\.[a-z][A-Za-z]*)+$`)

// undeclaredRoutes lists the routes of r that no operation of dialects declares, and the operations declared twice
// or badly named.
func undeclaredRoutes(r *web.Router, dialects []web.Dialect) []string {
	var out []string
	declared := map[string]string{}
	dialectOf := map[string]string{}
	for _, d := range dialects {
		for _, op := range d.Operations {
			route := op.Method + " " + op.Route()
			if prev, ok := declared[route]; ok {
				out = append(out, fmt.Sprintf("%s is declared twice: %s and %s", route, prev, op.Name))
			}
			declared[route] = op.Name
			if !operationName.MatchString(op.Name) {
				out = append(out, fmt.Sprintf("%s: operation name %q is not <resource>.<verb>", route, op.Name))
			}
			if prev, ok := dialectOf[op.Name]; ok && prev != d.Name {
				out = append(out, fmt.Sprintf("operation %s is declared by two dialects, %s and %s", op.Name, prev, d.Name))
			}
			dialectOf[op.Name] = d.Name
			if op.Handler == nil {
				out = append(out, route+" has no handler")
			}
		}
	}
	for _, rt := range r.Routes() {
		if _, ok := declared[rt.Method+" "+rt.Path]; !ok {
			out = append(out, fmt.Sprintf("route %s %s is in no operation table", rt.Method, rt.Path))
		}
	}
	return out
}

// TestOperationTablesCoverEveryRoute: every route of the router is an operation of a dialect's table, declared
// once with a well-formed name, and every dialect answers errors.
func TestOperationTablesCoverEveryRoute(t *testing.T) {
	t.Parallel()
	dialects := allDialects()
	names := make([]string, 0, len(dialects))
	for _, d := range dialects {
		names = append(names, d.Name)
		assert.NotEmptyf(t, d.Operations, "dialect %s declares no operation", d.Name)
		assert.NotNilf(t, d.WriteError, "dialect %s has no error shape", d.Name)
	}
	assert.Equal(t, []string{"web", "rest", "rocketmq", "aws"}, names)
	r := newRouter(web.Config{}, web.Services{})
	assert.Empty(t, undeclaredRoutes(r, dialects))
	assert.Greater(t, len(r.Routes()), 80, "the router has its routes")
}

// TestOperationTableCheckCatchesStrayRoutes: a route registered outside the tables, a route declared twice and a
// badly named operation are reported.
func TestOperationTableCheckCatchesStrayRoutes(t *testing.T) {
	t.Parallel()
	r := newRouter(web.Config{}, web.Services{})
	r.GET("/api/v1/stray", func(*gin.Context) {})
	dialects := allDialects()
	dialects[1].Operations = append(dialects[1].Operations,
		web.Operation{Name: "Buses_List", Method: http.MethodGet, Path: "/api/v1/buses", Handler: func(*gin.Context) {}})
	got := undeclaredRoutes(r, dialects)
	assert.Contains(t, got, "route GET /api/v1/stray is in no operation table")
	assert.Contains(t, got, "GET /api/v1/buses is declared twice: buses.list and Buses_List")
	assert.Contains(t, got, `GET /api/v1/buses: operation name "Buses_List" is not <resource>.<verb>`)
}

// TestOperationNameReachesTheRequest: the name of the operation serving a request is on its context and in the
// request log; a request no route serves has none.
func TestOperationNameReachesTheRequest(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	s := web.Services{}
	seen := ""
	probe := func(web.Config, web.Services) web.Dialect {
		return web.Dialect{Name: "probe", WriteError: func(c *gin.Context, err error) {}, Operations: []web.Operation{
			{Name: "probe.look", Method: http.MethodGet, Path: "/probe", Public: true, Handler: func(c *gin.Context) {
				seen = web.OperationOf(c)
				c.Status(http.StatusNoContent)
			}},
		}}
	}
	r := web.NewRouter(web.Config{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, s, rest.New, rocketmq.New, probe)
	r.ServeHTTP(httptest.NewRecorder(), localRequest(http.MethodGet, "/probe", nil))
	assert.Equal(t, "probe.look", seen)
	r.ServeHTTP(httptest.NewRecorder(), localRequest(http.MethodGet, "/api/v1/nowhere", nil))
	assert.Contains(t, logs.String(), "path=/probe status=204")
	assert.Contains(t, logs.String(), `operation=probe.look`)
	assert.Contains(t, logs.String(), `path=/api/v1/nowhere status=404`)
	assert.Contains(t, logs.String(), `operation="" account=""`)
}

// TestDialectsAnswerErrorsInTheirShape: each dialect's WriteError answers a domain error as that dialect does.
func TestDialectsAnswerErrorsInTheirShape(t *testing.T) {
	t.Parallel()
	for _, d := range allDialects() {
		t.Run(d.Name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(rec)
			c.Request = localRequest(http.MethodPost, "/", nil)
			d.WriteError(c, bus.ErrNotFound.With("bus %q does not exist", "orders"))
			var body map[string]any
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
			switch d.Name {
			case "aws":
				assert.Equal(t, http.StatusBadRequest, rec.Code)
				assert.Equal(t, aws.ContentType, rec.Header().Get("Content-Type"))
				assert.Equal(t, "ResourceNotFoundException", body["__type"])
			case "rocketmq":
				assert.Equal(t, http.StatusConflict, rec.Code)
				assert.Equal(t, "EventBusNotExist", body["code"])
				assert.Contains(t, body, "requestId")
			default:
				assert.Equal(t, http.StatusNotFound, rec.Code)
				assert.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
				assert.Equal(t, "BusNotFound", body["code"])
			}
			assert.Equal(t, `bus "orders" does not exist`, firstOf(body, "detail", "message"))
		})
	}
}

// docPath is how docs/operations.md shows the path of op: its Path, and for an operation that its dialect's
// TargetHeader selects (the Amazon EventBridge API's POST /), the header's value.
func docPath(d web.Dialect, op web.Operation) string {
	switch op.Target {
	case "":
		return "`" + op.Path + "`"
	case web.TargetOther:
		return "`" + op.Path + "` (any other `" + d.TargetHeader + "`)"
	}
	return "`" + op.Path + "` (`" + d.TargetHeader + ": " + op.Target + "`)"
}

func firstOf(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return nil
}

// TestOperationsDocUpToDate keeps docs/operations.md, the table of every operation, equal to the operation tables:
// run `go test ./web -run TestOperationsDocUpToDate -update` after changing one.
func TestOperationsDocUpToDate(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("# Operations\n\n" +
		"Every route of the control plane is one operation of a dialect's operation table (`web.Operation`), with a\n" +
		"stable name. The router is built from these tables only (`web.NewRouter`); a test fails when a route is in none.\n" +
		"Each names the permission it needs (see docs/identity.md for the roles that have it); public operations need\n" +
		"no credential and take no account. Every call of an audited operation writes one entry of the audit log\n" +
		"(`GET /api/v1/audit-log`, docs/identity.md#audit-log); the worker's entries are named `worker.<operation>`.\n" +
		"This file is written from the tables by `go test ./web -run TestOperationsDocUpToDate -update`.\n")
	for _, d := range allDialects() {
		fmt.Fprintf(&b, "\n## %s\n\n| operation | method | path | permission | audited |\n|---|---|---|---|---|\n", d.Name)
		rows := map[string][]string{}
		var order []string
		for _, op := range d.Operations {
			if _, ok := rows[op.Name]; !ok {
				order = append(order, op.Name)
			}
			rows[op.Name] = append(rows[op.Name], op.Method+" "+docPath(d, op))
		}
		for _, name := range order {
			public, audited := "", "no"
			for _, op := range d.Operations {
				if op.Name == name {
					public = "`" + string(op.Permission) + "`"
					if op.Public {
						public = "public"
					}
					if op.Audited() {
						audited = "yes"
					}
				}
			}
			methods, paths := []string{}, []string{}
			for _, r := range rows[name] {
				m, p, _ := strings.Cut(r, " ")
				if !slices.Contains(methods, m) {
					methods = append(methods, m)
				}
				if !slices.Contains(paths, p) {
					paths = append(paths, p)
				}
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", name, strings.Join(methods, ", "), strings.Join(paths, ", "), public, audited)
		}
	}
	// The worker runtime's REST API (Kafka Connect's dialect) has its own table and one credential, the cluster
	// token (docs/runtime-security.md).
	b.WriteString("\n## worker REST (Kafka Connect)\n\nThe worker's own table (`worker/rest`); every route but the public ones " +
		"takes the cluster token.\n\n| operation | method | path | permission | audited |\n|---|---|---|---|---|\n")
	for _, r := range workerrest.NewHandler(nil, workerrest.Config{Metrics: http.NotFoundHandler()}).Routes() {
		perm, audited := "cluster token", "yes"
		if r.Public {
			perm = "public"
		}
		if !r.Audited() {
			audited = "no"
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s | %s |\n", r.Name, r.Method, strings.TrimSuffix(r.Pattern, "{$}"), perm, audited)
	}
	path := filepath.Join("..", "docs", "operations.md")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), b.String(), "docs/operations.md is out of date: go test ./web -run TestOperationsDocUpToDate -update")
}
