package web_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/frontend"
	"github.com/eventbridge-go/eventbridge/web"
)

// A console build as Vite makes it: index.html naming hashed files under assets/, and files of public/ at the root.
const (
	consoleIndex = `<!doctype html><html><head><script type="module" src="/assets/index-B2x9Qf.js"></script>` +
		`<link rel="stylesheet" href="/assets/index-Cq81.css"></head><body><div id="root"></div></body></html>`
	consoleJS     = `import{a as o}from"./_commonjsHelpers-D1k.js";console.log(o)`
	consoleHelper = `export const a=1`
	consoleCSS    = `body{margin:0}`
	consoleIcon   = `<svg xmlns="http://www.w3.org/2000/svg"/>`
)

func consoleBuild() fstest.MapFS {
	return fstest.MapFS{
		"index.html":                         {Data: []byte(consoleIndex)},
		"assets/index-B2x9Qf.js":             {Data: []byte(consoleJS)},
		"assets/_commonjsHelpers-D1k.js":     {Data: []byte(consoleHelper)},
		"assets/index-Cq81.css":              {Data: []byte(consoleCSS)},
		"favicon.svg":                        {Data: []byte(consoleIcon)},
		"assets/fonts/inter-latin-4f1a.woff": {Data: []byte("wOFF")},
	}
}

// consoleCase is one request to a router serving a console build.
type consoleCase struct {
	name    string
	method  string // GET when ""
	url     string
	headers map[string]string

	status int
	// body is the exact answer; code, when not "", the code of the problem document answered instead.
	body  string
	code  string
	cache string // the Cache-Control header
	ctype string // a prefix of the Content-Type header
	check func(t *testing.T, resp *http.Response, body []byte)
}

// runConsole sends every case to a real HTTP server around the router with the console files.
func runConsole(t *testing.T, files fs.FS, cases []consoleCase) {
	t.Helper()
	srv := httptest.NewServer(newRouter(web.Config{Console: files}, web.Services{}))
	t.Cleanup(srv.Close)
	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method := c.method
			if method == "" {
				method = http.MethodGet
			}
			req, err := http.NewRequest(method, srv.URL+c.url, nil)
			require.NoError(t, err)
			for k, v := range c.headers {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			t.Logf("%s %s -> %d %v %s", method, c.url, resp.StatusCode, resp.Header, truncate(body, 300))

			assert.Equal(t, c.status, resp.StatusCode)
			if c.code != "" {
				assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
				var p web.Problem
				require.NoError(t, json.Unmarshal(body, &p), "a problem document")
				assert.Equal(t, c.code, p.Code)
				assert.Equal(t, c.status, p.Status)
				assert.NotEmpty(t, p.Detail)
			} else if c.body != "" || method == http.MethodHead {
				assert.Equal(t, c.body, string(body))
			}
			if c.cache != "" {
				assert.Equal(t, c.cache, resp.Header.Get("Cache-Control"))
			}
			if c.ctype != "" {
				assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), c.ctype),
					"Content-Type %q, want %q", resp.Header.Get("Content-Type"), c.ctype)
			}
			if c.check != nil {
				c.check(t, resp, body)
			}
		})
	}
}

const (
	immutable = "public, max-age=31536000, immutable"
	html      = "text/html; charset=utf-8"
	// browserAccept is the Accept header of a browser's navigation (Chromium's).
	browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
)

func withAccept(c consoleCase, accept string) consoleCase {
	c.headers = map[string]string{"Accept": accept}
	return c
}

// TestConsole: the console's files with their cache policy, index.html for the console's own paths (SPA fallback),
// and the API's paths untouched.
func TestConsole(t *testing.T) {
	t.Parallel()
	index := func(name, url string) consoleCase {
		return consoleCase{name: name, url: url, status: http.StatusOK, body: consoleIndex, cache: "no-cache", ctype: html,
			check: func(t *testing.T, resp *http.Response, _ []byte) {
				assert.NotEmpty(t, resp.Header.Get("ETag"), "index.html is revalidated with its ETag")
				assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
				assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
			}}
	}
	runConsole(t, consoleBuild(), []consoleCase{
		index("root", "/"),
		index("index.html", "/index.html"),
		index("a page of the console", "/builder"),
		index("a page with parameters", "/builder/orders/paid"),
		index("a page with a query", "/runtime?connector=eb.default.orders.router"),
		index("a page with a trailing slash", "/buses/"),
		index("a path that climbs out is cleaned", "/assets/../../../etc/passwd"),
		{name: "HEAD of a page", method: http.MethodHead, url: "/builder", status: http.StatusOK, cache: "no-cache", ctype: html,
			check: func(t *testing.T, resp *http.Response, _ []byte) {
				assert.Equal(t, int64(len(consoleIndex)), resp.ContentLength)
			}},
		{name: "a hashed script", url: "/assets/index-B2x9Qf.js", status: http.StatusOK, body: consoleJS, cache: immutable,
			ctype: "text/javascript"},
		{name: "a hashed script named with an underscore", url: "/assets/_commonjsHelpers-D1k.js", status: http.StatusOK,
			body: consoleHelper, cache: immutable, ctype: "text/javascript"},
		{name: "a hashed style", url: "/assets/index-Cq81.css", status: http.StatusOK, body: consoleCSS, cache: immutable,
			ctype: "text/css"},
		{name: "a file in a folder of assets", url: "/assets/fonts/inter-latin-4f1a.woff", status: http.StatusOK, body: "wOFF",
			cache: immutable},
		{name: "a file at the root is revalidated", url: "/favicon.svg", status: http.StatusOK, body: consoleIcon,
			cache: "no-cache", ctype: "image/svg+xml"},
		{name: "a missing asset is not index.html", url: "/assets/index-OLD.js", status: http.StatusNotFound, code: "RouteNotFound"},
		{name: "a folder of assets is not a file", url: "/assets", status: http.StatusNotFound, code: "RouteNotFound"},
		{name: "a missing file is not index.html", url: "/robots.txt", status: http.StatusNotFound, code: "RouteNotFound"},
		{name: "a missing script is not index.html", url: "/sw.js", headers: map[string]string{"Accept": "*/*"},
			status: http.StatusNotFound, code: "RouteNotFound"},
		{name: "a missing asset is not index.html, even to a browser", url: "/assets/index-OLD.js",
			headers: map[string]string{"Accept": browserAccept}, status: http.StatusNotFound, code: "RouteNotFound"},
		withAccept(index("a page with a dot, by a browser", "/runtime/connectors/eb.default.orders.router"), browserAccept),
		{name: "a range of an asset", url: "/assets/index-Cq81.css", headers: map[string]string{"Range": "bytes=0-3"},
			status: http.StatusPartialContent, body: consoleCSS[:4]},

		// The API keeps its answers.
		{name: "an unknown API route", url: "/api/v1/nothing", status: http.StatusNotFound, code: "RouteNotFound"},
		{name: "the API's root", url: "/api", status: http.StatusNotFound, code: "RouteNotFound"},
		{name: "healthz", url: "/healthz", status: http.StatusOK, body: `{"status":"ok"}`, ctype: "application/json"},
		{name: "under healthz", url: "/healthz/more", status: http.StatusNotFound, code: "RouteNotFound"},
		{name: "under readyz", url: "/readyz/more", status: http.StatusNotFound, code: "RouteNotFound"},
		{name: "swagger UI", url: "/swagger/index.html", status: http.StatusOK, ctype: html,
			check: func(t *testing.T, _ *http.Response, body []byte) { assert.Contains(t, string(body), "swagger-ui") }},
		{name: "a webhook path", url: "/webhook/nothing", status: http.StatusNotFound, code: "RouteNotFound"},
		{name: "a RocketMQ EventBridge route by GET", url: "/putEvents", status: http.StatusMethodNotAllowed, code: "MethodNotAllowed"},
		{name: "under a RocketMQ EventBridge route", url: "/rule/nothing", status: http.StatusNotFound, code: "RouteNotFound"},
		{name: "a POST to a page", method: http.MethodPost, url: "/builder", status: http.StatusNotFound, code: "RouteNotFound"},
		{name: "a DELETE of the root", method: http.MethodDelete, url: "/", status: http.StatusNotFound, code: "RouteNotFound"},
	})
}

// TestConsoleGzip: scripts, styles and pages of 1 KiB or more are gzipped for the clients that accept it, as
// another representation (its own ETag, Vary: Accept-Encoding); others get the file as it is.
func TestConsoleGzip(t *testing.T) {
	t.Parallel()
	big := strings.Repeat(consoleJS+"\n", 200)
	build := consoleBuild()
	build["assets/vendor-9aB1.js"] = &fstest.MapFile{Data: []byte(big)}
	build["assets/fonts/big-77.woff2"] = &fstest.MapFile{Data: []byte(big)}

	gzipped := func(t *testing.T, resp *http.Response, body []byte) {
		assert.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
		assert.Equal(t, "Accept-Encoding", resp.Header.Get("Vary"))
		assert.True(t, strings.HasSuffix(resp.Header.Get("ETag"), `-gzip"`), "the gzipped form has its own ETag")
		assert.Less(t, len(body), len(big)/10, "compressed")
		zr, err := gzip.NewReader(bytes.NewReader(body))
		require.NoError(t, err)
		plain, err := io.ReadAll(zr)
		require.NoError(t, err)
		assert.Equal(t, big, string(plain))
	}
	plain := func(vary bool) func(t *testing.T, resp *http.Response, body []byte) {
		return func(t *testing.T, resp *http.Response, _ []byte) {
			assert.Empty(t, resp.Header.Get("Content-Encoding"))
			if vary {
				assert.Equal(t, "Accept-Encoding", resp.Header.Get("Vary"))
			} else {
				assert.Empty(t, resp.Header.Get("Vary"), "the file is never gzipped")
			}
			assert.False(t, strings.HasSuffix(resp.Header.Get("ETag"), `-gzip"`))
		}
	}
	enc := func(v string) map[string]string { return map[string]string{"Accept-Encoding": v} }
	const vendor = "/assets/vendor-9aB1.js"
	runConsole(t, build, []consoleCase{
		{name: "a browser", url: vendor, headers: enc("gzip, deflate, br, zstd"), status: http.StatusOK, cache: immutable,
			ctype: "text/javascript", check: gzipped},
		{name: "any coding", url: vendor, headers: enc("*"), status: http.StatusOK, check: gzipped},
		{name: "identity only", url: vendor, headers: enc("identity"), status: http.StatusOK, body: big, cache: immutable,
			ctype: "text/javascript", check: plain(true)},
		{name: "gzip refused", url: vendor, headers: enc("gzip;q=0, identity"), status: http.StatusOK, body: big, check: plain(true)},
		{name: "anything but gzip", url: vendor, headers: enc("br, gzip; q=0.0, *"), status: http.StatusOK, body: big, check: plain(true)},
		{name: "a small page", url: "/", headers: enc("gzip"), status: http.StatusOK, body: consoleIndex, check: plain(false)},
		{name: "a font", url: "/assets/fonts/big-77.woff2", headers: enc("gzip"), status: http.StatusOK, body: big, check: plain(false)},
	})

	// Revalidation of the gzipped form.
	srv := httptest.NewServer(newRouter(web.Config{Console: build}, web.Services{}))
	t.Cleanup(srv.Close)
	get := func(headers map[string]string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, srv.URL+vendor, nil)
		require.NoError(t, err)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		return resp
	}
	etag := get(enc("gzip")).Header.Get("ETag")
	assert.Equal(t, http.StatusNotModified, get(map[string]string{"Accept-Encoding": "gzip", "If-None-Match": etag}).StatusCode)
	plainTag := get(enc("identity")).Header.Get("ETag")
	assert.NotEqual(t, etag, plainTag)
	assert.Equal(t, http.StatusOK, get(map[string]string{"Accept-Encoding": "identity", "If-None-Match": etag}).StatusCode,
		"the gzipped form's tag does not validate the plain one")
}

// TestConsoleRevalidation: a browser that has index.html answers 304 to its If-None-Match, and the ETag changes
// with the contents.
func TestConsoleRevalidation(t *testing.T) {
	t.Parallel()
	etagOf := func(files fs.FS) string {
		rec := httptest.NewRecorder()
		newRouter(web.Config{Console: files}, web.Services{}).ServeHTTP(rec, localRequest(http.MethodGet, "/", nil))
		require.Equal(t, http.StatusOK, rec.Code)
		etag := rec.Header().Get("ETag")
		require.NotEmpty(t, etag)
		return etag
	}
	build := consoleBuild()
	etag := etagOf(build)

	runConsole(t, build, []consoleCase{
		{name: "unchanged", url: "/", headers: map[string]string{"If-None-Match": etag}, status: http.StatusNotModified},
		{name: "unchanged, by a page", url: "/builder", headers: map[string]string{"If-None-Match": etag}, status: http.StatusNotModified},
		{name: "another version", url: "/", headers: map[string]string{"If-None-Match": `"old"`}, status: http.StatusOK, body: consoleIndex},
	})

	rebuilt := consoleBuild()
	rebuilt["index.html"] = &fstest.MapFile{Data: []byte(strings.Replace(consoleIndex, "B2x9Qf", "Zz71Aa", 1))}
	assert.NotEqual(t, etag, etagOf(rebuilt), "a new build has a new ETag")
}

// TestConsoleNotBuilt: a binary built without the console says so on the console's paths, to a browser as a
// page and to other clients as a problem document, and how to build it; the API is served all the same.
func TestConsoleNotBuilt(t *testing.T) {
	t.Parallel()
	for name, files := range map[string]fs.FS{
		"no build":              nil,
		"an empty dist":         fstest.MapFS{},
		"a dist without a page": fstest.MapFS{"assets/index-B2x9Qf.js": {Data: []byte(consoleJS)}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			howTo := func(t *testing.T, _ *http.Response, body []byte) {
				assert.Contains(t, string(body), "built without the console")
				assert.Contains(t, string(body), "make build")
				assert.Contains(t, string(body), "npm run build")
			}
			browser := map[string]string{"Accept": browserAccept}
			runConsole(t, files, []consoleCase{
				{name: "root, by a browser", url: "/", headers: browser, status: http.StatusNotFound, ctype: html, check: howTo},
				{name: "a page, by a browser", url: "/builder/orders/paid", headers: browser, status: http.StatusNotFound,
					ctype: html, check: howTo},
				{name: "root, by curl", url: "/", status: http.StatusNotFound, code: "ConsoleNotBuilt", check: howTo},
				{name: "root, asking for JSON", url: "/", headers: map[string]string{"Accept": "application/json"},
					status: http.StatusNotFound, code: "ConsoleNotBuilt", check: howTo},
				{name: "an asset", url: "/assets/index-B2x9Qf.js", status: http.StatusNotFound, code: "ConsoleNotBuilt"},
				{name: "an unknown API route", url: "/api/v1/nothing", status: http.StatusNotFound, code: "RouteNotFound"},
				{name: "healthz", url: "/healthz", status: http.StatusOK, body: `{"status":"ok"}`},
			})
		})
	}
}

// TestConsoleEmbedded: the router serves the console embedded in this build (frontend.Dist), every file of it,
// or says it has none when the console was not built before the test.
func TestConsoleEmbedded(t *testing.T) {
	t.Parallel()
	dist := frontend.Dist()
	if !frontend.Built() {
		runConsole(t, dist, []consoleCase{{name: "root", url: "/", status: http.StatusNotFound, code: "ConsoleNotBuilt"}})
		return
	}
	page, err := fs.ReadFile(dist, "index.html")
	require.NoError(t, err)
	cases := []consoleCase{
		{name: "root", url: "/", status: http.StatusOK, body: string(page), cache: "no-cache", ctype: html},
		{name: "the builder", url: "/builder", status: http.StatusOK, body: string(page), cache: "no-cache", ctype: html},
	}
	require.NoError(t, fs.WalkDir(dist, "assets", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(dist, name)
		cases = append(cases, consoleCase{name: name, url: "/" + name, status: http.StatusOK, body: string(data), cache: immutable})
		return err
	}))
	require.Greater(t, len(cases), 2, "the build has assets")
	runConsole(t, dist, cases)
}
