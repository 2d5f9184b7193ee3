package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// CodeConsoleNotBuilt: the binary was built without the console (404 on the console's paths).
const CodeConsoleNotBuilt = "ConsoleNotBuilt"

// Cache-Control of the console's files. Vite names the files under assets/ after a hash of their contents, so a
// browser may keep them for ever; every other file (index.html first, which names the current assets) is
// revalidated on every use, cheaply with its ETag.
const (
	cacheImmutable  = "public, max-age=31536000, immutable"
	cacheRevalidate = "no-cache"
)

// consoleAssets is the directory of the console's hashed files.
const consoleAssets = "assets/"

// consoleHowToBuild says how to get a binary with the console, for the answer of a binary without it.
const consoleHowToBuild = "This binary was built without the console. Build it with `make build` (needs Node.js and " +
	"npm: it runs `npm ci` and `npm run build` in frontend/, then go build embeds frontend/dist), or run " +
	"`npm ci && npm run build` in frontend/ before `go build ./cmd/eventbridge`. The REST API is served all the " +
	"same; Swagger UI is at /swagger/index.html."

// console serves the browser console from the build in Config.Console: its files, and index.html for every other
// GET or HEAD outside the API (the console's routes in the browser: /builder/orders/paid), so that a reload or a
// shared link opens the right page. It is safe for concurrent use.
type console struct {
	files fs.FS // nil when the binary has no console
	log   *slog.Logger
	// routes lists the router's routes; read once, on the first request that reaches the console.
	routes   func() gin.RoutesInfo
	reserved func() map[string]bool

	mu    sync.Mutex
	cache map[string]consoleFile // by file name
}

// consoleRoutes makes the router's NoRoute handler serve the console (Config.Console) for the paths no API route
// serves. A request outside the console (another method, or a path under the first segment of an API route:
// /api/..., /swagger/..., /bus/... of the RocketMQ EventBridge API) keeps its RouteNotFound problem.
func consoleRoutes(r *gin.Engine, log *slog.Logger, files fs.FS) {
	c := &console{log: log, routes: r.Routes, cache: map[string]consoleFile{}}
	if files != nil {
		if _, err := fs.Stat(files, "index.html"); err == nil {
			c.files = files
		}
	}
	c.reserved = sync.OnceValue(c.apiSegments)
	r.NoRoute(c.serve)
}

// apiSegments are the first path segments of the router's routes ("api", "swagger", "healthz", "bus", ...): the
// console never answers under them, so a mistyped API path gets a problem document, not a web page.
func (c *console) apiSegments() map[string]bool {
	out := map[string]bool{}
	for _, r := range c.routes() {
		first, _, _ := strings.Cut(strings.TrimPrefix(r.Path, "/"), "/")
		if first != "" && !strings.HasPrefix(first, ":") && !strings.HasPrefix(first, "*") {
			out[first] = true
		}
	}
	return out
}

// serve answers a request no route serves: a file of the console, its index.html, or a RouteNotFound problem.
func (c *console) serve(ctx *gin.Context) {
	req := ctx.Request
	first, _, _ := strings.Cut(strings.TrimPrefix(req.URL.Path, "/"), "/")
	if (req.Method != http.MethodGet && req.Method != http.MethodHead) || c.reserved()[first] {
		noRoute(ctx)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+req.URL.Path), "/")
	if c.files == nil {
		c.notBuilt(ctx)
		return
	}
	if name == "" || name == "index.html" {
		c.serveFile(ctx, "index.html")
		return
	}
	if isFile(c.files, name) {
		c.serveFile(ctx, name)
		return
	}
	// A missing asset is a 404, never index.html: a browser would run the page as a script or style and report a
	// misleading MIME type error. So is a missing file (a name with a dot) that no browser navigates to; a page
	// may still have a dot in its path (connector names have: eb.default.orders.router), and a navigation asks
	// for text/html.
	if strings.HasPrefix(name+"/", consoleAssets) ||
		(strings.Contains(path.Base(name), ".") && !strings.Contains(req.Header.Get("Accept"), "text/html")) {
		WriteProblem(ctx, NewProblem(http.StatusNotFound, CodeRouteNotFound, "",
			fmt.Sprintf("the console has no file %s", req.URL.Path)))
		return
	}
	c.serveFile(ctx, "index.html")
}

// serveFile answers the console's file name with its cache policy and ETag, gzipped when the client accepts it
// and the file is worth it; http.ServeContent answers HEAD, ranges and If-None-Match.
func (c *console) serveFile(ctx *gin.Context, name string) {
	meta, err := c.meta(name)
	if err != nil {
		c.writeError(ctx, err)
		return
	}
	h := ctx.Writer.Header()
	if strings.HasPrefix(name, consoleAssets) {
		h.Set("Cache-Control", cacheImmutable)
	} else {
		h.Set("Cache-Control", cacheRevalidate)
	}
	h.Set("X-Content-Type-Options", "nosniff")
	if path.Ext(name) == ".html" {
		// The console changes state (deletes, redrives): no page of another site may frame it.
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Type", "text/html; charset=utf-8")
	}
	// The zero modification time (embedded files have none) sends no Last-Modified; the ETag does its work.
	if meta.gzipped != nil {
		h.Add("Vary", "Accept-Encoding")
		if acceptsGzip(ctx.Request) {
			h.Set("Content-Encoding", "gzip")
			h.Set("ETag", meta.etag[:len(meta.etag)-1]+`-gzip"`) // another representation, another tag
			http.ServeContent(ctx.Writer, ctx.Request, name, time.Time{}, bytes.NewReader(meta.gzipped))
			return
		}
	}
	h.Set("ETag", meta.etag)
	f, err := c.files.Open(name)
	if err != nil {
		c.writeError(ctx, fmt.Errorf("console file %s: %w", name, err))
		return
	}
	defer f.Close()
	content, ok := f.(io.ReadSeeker) // embedded files are
	if !ok {
		data, err := io.ReadAll(f)
		if err != nil {
			c.writeError(ctx, fmt.Errorf("console file %s: %w", name, err))
			return
		}
		content = bytes.NewReader(data)
	}
	http.ServeContent(ctx.Writer, ctx.Request, name, time.Time{}, content)
}

// consoleFile is what the console computes once per file.
type consoleFile struct {
	etag    string // strong, a hash of the contents
	gzipped []byte // the contents gzipped; nil when not worth it
}

// gzipMinSize is the size under which a file is served as it is: gzip would save a few bytes at best.
const gzipMinSize = 1024

// gzipTypes are the extensions of files that compress well (scripts, styles, markup, data); fonts and images
// are compressed already.
var gzipTypes = map[string]bool{".html": true, ".js": true, ".mjs": true, ".css": true, ".svg": true, ".json": true,
	".map": true, ".txt": true, ".xml": true, ".wasm": true}

// meta returns the ETag and gzipped form of the console's file name, computed on its first request.
func (c *console) meta(name string) (consoleFile, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.cache[name]; ok {
		return m, nil
	}
	data, err := fs.ReadFile(c.files, name)
	if err != nil {
		return consoleFile{}, fmt.Errorf("console file %s: %w", name, err)
	}
	sum := sha256.Sum256(data)
	m := consoleFile{etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`}
	if len(data) >= gzipMinSize && gzipTypes[path.Ext(name)] {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // the level is valid
		if _, err := zw.Write(data); err != nil {
			return consoleFile{}, fmt.Errorf("gzip console file %s: %w", name, err)
		}
		if err := zw.Close(); err != nil {
			return consoleFile{}, fmt.Errorf("gzip console file %s: %w", name, err)
		}
		if buf.Len() < len(data) {
			m.gzipped = buf.Bytes()
		}
	}
	c.cache[name] = m
	return m, nil
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip: gzip, or else *, with a q-value that is
// not 0 (RFC 9110, section 12.5.3).
func acceptsGzip(r *http.Request) bool {
	gzipQ, starQ := -1.0, -1.0
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(part, ";")
			q := 1.0
			if k, val, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
					q = f
				}
			}
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "gzip", "x-gzip":
				gzipQ = q
			case "*":
				starQ = q
			}
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}

// notBuilt answers a console path of a binary built without the console: a page saying so for a browser, a
// ConsoleNotBuilt problem for any other client, both 404 and both saying how to build it.
func (c *console) notBuilt(ctx *gin.Context) {
	if !strings.Contains(ctx.GetHeader("Accept"), "text/html") {
		WriteProblem(ctx, NewProblem(http.StatusNotFound, CodeConsoleNotBuilt, "", consoleHowToBuild))
		return
	}
	ctx.Header("Cache-Control", cacheRevalidate)
	ctx.Header("X-Content-Type-Options", "nosniff")
	ctx.Data(http.StatusNotFound, "text/html; charset=utf-8", []byte(notBuiltPage))
}

var notBuiltPage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>EventBridge-Go: no console in this binary</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 44rem; margin: 3rem auto; line-height: 1.5">
<h1>No console in this binary</h1>
<p>` + html.EscapeString(consoleHowToBuild) + `</p>
<p><a href="/swagger/index.html">Swagger UI</a> · <a href="/healthz">/healthz</a></p>
</body>
</html>
`

// isFile reports whether name is a regular file of fsys (not a directory).
func isFile(fsys fs.FS, name string) bool {
	if !fs.ValidPath(name) {
		return false
	}
	fi, err := fs.Stat(fsys, name)
	return err == nil && fi.Mode().IsRegular()
}

// writeError answers err as a problem document (see ProblemOf).
func (c *console) writeError(ctx *gin.Context, err error) {
	WriteProblem(ctx, ProblemOf(c.log, ctx.Request, err))
}
