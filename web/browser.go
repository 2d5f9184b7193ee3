package web

import (
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/session"
	"github.com/eventbridge-go/eventbridge/domain/source"
)

// What protects the API from browsers on other sites: the Host check against DNS rebinding, the content type of
// bodies (a cross-site page can send text/plain, application/x-www-form-urlencoded and multipart/form-data
// without asking, never application/json), and the CSRF check of requests that a session cookie authenticates.

// Codes of the problems raised here.
const (
	// CodeMisdirectedRequest: the Host header is not one of the API's public hosts (421).
	CodeMisdirectedRequest = "MisdirectedRequest"
	// CodeUnsupportedMediaType: a body that is not JSON where JSON is required (415).
	CodeUnsupportedMediaType = "UnsupportedMediaType"
	// CodeCrossSiteRequestRefused: a cookie-authenticated request failed the CSRF check (403).
	CodeCrossSiteRequestRefused = "CrossSiteRequestRefused"
)

// SessionCookie is the cookie that holds a console session's token.
const SessionCookie = "eb_session"

// CSRFHeader carries the session's CSRF token (session.CSRFToken) on every request that a session cookie
// authenticates and that changes something.
const CSRFHeader = "X-CSRF-Token"

var errCrossSite = &domain.Error{Kind: domain.KindForbidden, Code: CodeCrossSiteRequestRefused}

const clientKey = "eventbridge.client"

// ClientIP is the address of the request's client: the TCP peer's; when the peer is a trusted proxy
// (Config.TrustedProxies), the last address of X-Forwarded-For that is not a trusted proxy, walking from the
// right. It is the zero Addr when the peer's address cannot be read or a hop is not an address.
func ClientIP(c *gin.Context) netip.Addr {
	if v, ok := c.Get(clientKey); ok {
		return v.(netip.Addr)
	}
	return netip.Addr{}
}

func clientIP(r *http.Request, trusted []netip.Prefix) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	peer = peer.Unmap()
	if len(trusted) == 0 || !source.AllowedIP(trusted, peer) {
		return peer
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		addr, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return netip.Addr{} // a hop that is no address: nothing before it can be trusted
		}
		addr = addr.Unmap()
		if !source.AllowedIP(trusted, addr) {
			return addr
		}
		peer = addr
	}
	return peer
}

// ClientAddr is ClientIP as text ("" when unknown).
func ClientAddr(c *gin.Context) string {
	if a := ClientIP(c); a.IsValid() {
		return a.String()
	}
	return ""
}

// hosts is the policy of the Host header: the hosts of the public URLs, loopback names and IP literals. A DNS
// rebinding attack reaches the API under a name of the attacker's, which is none of these; an IP literal or a
// loopback name cannot be rebound, so they are always answered (probes, port-forwards, the CLI on the machine).
type hosts struct {
	names []string // lower case, without port
}

func newHosts(publicURLs []string) hosts {
	var h hosts
	for _, s := range publicURLs {
		if u, err := url.Parse(s); err == nil && u.Hostname() != "" {
			h.names = append(h.names, strings.ToLower(u.Hostname()))
		}
	}
	return h
}

// allowed reports whether host (a Host header: name or address, with or without a port) is answered. A request
// without one (HTTP/1.0) is: browsers always send it.
func (h hosts) allowed(host string) bool {
	if host == "" {
		return true
	}
	name := host
	if n, _, err := net.SplitHostPort(host); err == nil {
		name = n
	}
	name = strings.ToLower(strings.TrimSuffix(strings.Trim(name, "[]"), "."))
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	for _, n := range h.names {
		if name == n {
			return true
		}
	}
	return false
}

// checkHost answers 421 for a Host that is not answered (see hosts), except on the paths in anyHost (health and
// webhooks, which probes and senders reach by other names).
func checkHost(h hosts, anyHost map[string]bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		if anyHost[c.FullPath()] || h.allowed(c.Request.Host) {
			c.Next()
			return
		}
		known := "loopback names and IP addresses"
		if len(h.names) > 0 {
			known = strings.Join(h.names, ", ") + ", " + known
		}
		WriteProblem(c, NewProblem(http.StatusMisdirectedRequest, CodeMisdirectedRequest, "Host",
			"this server does not answer to the host "+quote(c.Request.Host)+"; it answers to "+known+
				" (set --public-url to the URL clients use)"))
	}
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}

// IsJSON reports whether a Content-Type is application/json or a +json type.
func IsJSON(contentType string) bool {
	media, _, err := mime.ParseMediaType(contentType)
	return err == nil && (media == "application/json" || strings.HasSuffix(media, "+json"))
}

// hasBody reports whether the request carries a body.
func hasBody(r *http.Request) bool {
	return r.ContentLength > 0 || (r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody)
}

// requireJSON answers 415 for a request whose body is not JSON; requests without a body pass.
func requireJSON(c *gin.Context, fail func(*gin.Context, error)) bool {
	if !hasBody(c.Request) || IsJSON(c.GetHeader("Content-Type")) {
		return true
	}
	ct := c.GetHeader("Content-Type")
	if ct == "" {
		ct = "none"
	}
	fail(c, &domain.Error{Kind: domain.KindUnsupportedMediaType, Code: CodeUnsupportedMediaType, Field: "Content-Type",
		Message: "this operation takes a JSON body (Content-Type application/json), not Content-Type " + quote(ct)})
	return false
}

// safeMethod reports whether a method changes nothing (RFC 9110): no CSRF check applies to it.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// sameOrigin checks that a browser request comes from the API's own origin: Sec-Fetch-Site same-origin when the
// browser sends it, else an Origin whose host is the request's Host or whose origin is a public URL's. A request
// with neither header is not from a browser that could be tricked, unless required is set (a cookie was sent).
func sameOrigin(c *gin.Context, publicOrigins []string, required bool) error {
	if site := c.GetHeader("Sec-Fetch-Site"); site != "" {
		if site == "same-origin" {
			return nil
		}
		return errCrossSite.With("the browser says this request comes from another site (Sec-Fetch-Site %s)", quote(site))
	}
	origin := c.GetHeader("Origin")
	if origin == "" {
		if required {
			return errCrossSite.With("a request authenticated by the session cookie must say where it comes from (Origin or Sec-Fetch-Site)")
		}
		return nil
	}
	u, err := url.Parse(origin)
	if err == nil && u.Host != "" && strings.EqualFold(u.Host, c.Request.Host) {
		return nil
	}
	for _, o := range publicOrigins {
		if strings.EqualFold(strings.TrimRight(origin, "/"), o) {
			return nil
		}
	}
	return errCrossSite.With("this request comes from the origin %s, not from this server's", quote(origin))
}

// checkCSRF is the CSRF check of a state-changing request authenticated by the session token: same origin and
// the session's CSRF token in CSRFHeader.
func checkCSRF(c *gin.Context, token string, publicOrigins []string) error {
	if err := sameOrigin(c, publicOrigins, true); err != nil {
		return err
	}
	got, want := c.GetHeader(CSRFHeader), session.CSRFToken(token)
	if got == "" {
		return errCrossSite.With("a request authenticated by the session cookie must send the session's CSRF token in %s", CSRFHeader)
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return errCrossSite.With("the CSRF token in %s is not this session's", CSRFHeader)
	}
	return nil
}

// SetSessionCookie gives the browser the session's token in an HttpOnly, SameSite=Lax cookie that ends with the
// session (Secure when the API's public URL is https or the request came over TLS).
func SetSessionCookie(c *gin.Context, token string, expires time.Time) {
	http.SetCookie(c.Writer, &http.Cookie{Name: SessionCookie, Value: token, Path: "/", Expires: expires,
		MaxAge: max(1, int(time.Until(expires).Seconds())), HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: secureCookies(c)})
}

// ClearSessionCookie tells the browser to forget the session cookie.
func ClearSessionCookie(c *gin.Context) {
	http.SetCookie(c.Writer, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: secureCookies(c)})
}

const secureKey = "eventbridge.secure"

func secureCookies(c *gin.Context) bool { return c.GetBool(secureKey) || c.Request.TLS != nil }

// CheckSignIn refuses a sign-in from a browser on another site (login CSRF: signing the victim in as the
// attacker); programs that send neither Origin nor Sec-Fetch-Site pass.
func CheckSignIn(c *gin.Context) error {
	return sameOrigin(c, c.GetStringSlice(originsKey), false)
}

const originsKey = "eventbridge.origins"
