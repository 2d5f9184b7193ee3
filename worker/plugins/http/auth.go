package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/egress"
)

// Authentication types (auth.type).
const (
	AuthNone         = "none"
	AuthBasic        = "basic"
	AuthAPIKey       = "api_key"
	AuthOAuth        = "oauth_client_credentials"
	AuthDeauthorized = "deauthorized"
	DefaultAPIKeyHdr = "X-API-Key"

	// OAuth client authentication styles (auth.oauth.auth_style).
	OAuthStyleHeader = "header" // client_id and client_secret in an HTTP Basic Authorization header (RFC 6749 2.3.1)
	OAuthStyleBody   = "body"   // client_id and client_secret as form parameters
)

// authenticator sets a request's credentials.
type authenticator interface {
	// apply sets the credentials on req; it may fetch them (OAuth). The token returned identifies the
	// credentials used, for invalidate.
	apply(ctx context.Context, req *http.Request) (token string, err error)
	// invalidate forgets token after the target refused it (401); it reports whether a retry may help.
	invalidate(token string) bool
}

type noAuth struct{}

func (noAuth) apply(context.Context, *http.Request) (string, error) { return "", nil }
func (noAuth) invalidate(string) bool                               { return false }

type basicAuth struct{ user, password string }

func (a basicAuth) apply(_ context.Context, req *http.Request) (string, error) {
	req.SetBasicAuth(a.user, a.password)
	return "", nil
}
func (basicAuth) invalidate(string) bool { return false }

type apiKeyAuth struct{ header, value string }

func (a apiKeyAuth) apply(_ context.Context, req *http.Request) (string, error) {
	req.Header.Set(a.header, a.value)
	return "", nil
}
func (apiKeyAuth) invalidate(string) bool { return false }

// deauthorized sends nothing: the connection whose credentials the requests would carry was deauthorized.
type deauthorized struct{ connection string }

func (a deauthorized) apply(context.Context, *http.Request) (string, error) {
	return "", connector.Permanent(fmt.Errorf("http: not sent: connection %q is DEAUTHORIZED (its credentials were dropped); "+
		"give them again (UpdateConnection, or PATCH /api/v1/connections/%s) to authorize it", a.connection, a.connection))
}
func (deauthorized) invalidate(string) bool { return false }

// oauthAuth gets access tokens with the OAuth 2.0 client-credentials grant (RFC 6749 4.4) and caches one until
// shortly before it expires, or until the target answers 401 to it.
type oauthAuth struct {
	tokenURL     string
	clientID     string
	clientSecret string
	scopes       []string
	extra        map[string]string
	bodyStyle    bool
	client       *http.Client
	timeout      time.Duration
	now          func() time.Time

	mu      sync.Mutex // held while a token is fetched: concurrent writers wait for that one fetch
	token   string
	refresh time.Time // zero: until refused
}

func (a *oauthAuth) apply(ctx context.Context, req *http.Request) (string, error) {
	tok, err := a.get(ctx)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return tok, nil
}

func (a *oauthAuth) invalidate(token string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token == token {
		a.token = ""
	}
	return true
}

func (a *oauthAuth) get(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token != "" && (a.refresh.IsZero() || a.now().Before(a.refresh)) {
		return a.token, nil
	}
	tok, lifetime, err := a.fetch(ctx)
	if err != nil {
		return "", err
	}
	a.token, a.refresh = tok, time.Time{}
	if lifetime > 0 {
		// Refreshed shortly before expiry: a tenth of its lifetime early, at most 30s.
		a.refresh = a.now().Add(lifetime - min(lifetime/10, 30*time.Second))
	}
	return tok, nil
}

// fetch asks the token endpoint for a token. Its errors are retryable (the endpoint may recover, credentials may
// be rotated), except a refused non-public address.
func (a *oauthAuth) fetch(ctx context.Context) (string, time.Duration, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(a.scopes) > 0 {
		form.Set("scope", strings.Join(a.scopes, " "))
	}
	for k, v := range a.extra {
		form.Set(k, v)
	}
	if a.bodyStyle {
		form.Set("client_id", a.clientID)
		form.Set("client_secret", a.clientSecret)
	}
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, connector.Permanent(fmt.Errorf("http: oauth token request: %w", err))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if !a.bodyStyle {
		req.SetBasicAuth(url.QueryEscape(a.clientID), url.QueryEscape(a.clientSecret))
	}
	resp, err := a.client.Do(req)
	if err != nil {
		if errors.Is(err, egress.ErrRefused) {
			return "", 0, connector.Permanent(fmt.Errorf("http: oauth token endpoint: %w", err))
		}
		return "", 0, fmt.Errorf("http: oauth token endpoint: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := fmt.Errorf("http: oauth token endpoint answered %d: %s", resp.StatusCode, snippet(body))
		if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok && Retryable(resp.StatusCode) {
			return "", 0, connector.RetryAfter(err, d)
		}
		return "", 0, err
	}
	var tr struct {
		AccessToken string          `json:"access_token"`
		TokenType   string          `json:"token_type"`
		ExpiresIn   json.RawMessage `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &tr); err != nil || tr.AccessToken == "" {
		return "", 0, fmt.Errorf("http: oauth token endpoint answered no access_token: %s", snippet(body))
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return "", 0, fmt.Errorf("http: oauth token type %q is not bearer", tr.TokenType)
	}
	var secs float64
	if len(tr.ExpiresIn) > 0 {
		s := strings.Trim(string(tr.ExpiresIn), `"`) // some servers send it as a string
		_, _ = fmt.Sscan(s, &secs)
	}
	return tr.AccessToken, time.Duration(secs * float64(time.Second)), nil
}

func snippet(b []byte) string {
	if len(b) > 512 {
		b = b[:512]
	}
	return strings.TrimSpace(string(b))
}

// newAuth builds the authenticator of a config. client is the sink's (guarded) client, used for the token
// endpoint too.
func newAuth(cfg connector.Values, client *http.Client, timeout time.Duration) (authenticator, error) {
	switch cfg.String(KeyAuthType) {
	case AuthBasic:
		return basicAuth{user: cfg.String(KeyAuthUsername), password: cfg.String(KeyAuthPassword)}, nil
	case AuthAPIKey:
		return apiKeyAuth{header: cfg.String(KeyAuthAPIKeyHeader), value: cfg.String(KeyAuthAPIKeyValue)}, nil
	case AuthDeauthorized:
		return deauthorized{connection: cfg.String(KeyAuthConnection)}, nil
	case AuthOAuth:
		a := &oauthAuth{
			tokenURL:     cfg.String(KeyOAuthTokenURL),
			clientID:     cfg.String(KeyOAuthClientID),
			clientSecret: cfg.String(KeyOAuthClientSecret),
			scopes:       splitScopes(cfg.String(KeyOAuthScopes)),
			bodyStyle:    cfg.String(KeyOAuthAuthStyle) == OAuthStyleBody,
			client:       client,
			timeout:      timeout,
			now:          time.Now,
		}
		if err := cfg.JSON(KeyOAuthExtraParams, &a.extra); err != nil {
			return nil, err
		}
		if raw := cfg.String(KeyOAuthSecretExtraParams); raw != "" {
			var secret map[string]string
			if err := json.Unmarshal([]byte(raw), &secret); err != nil {
				return nil, connector.FieldErrors{{Key: KeyOAuthSecretExtraParams, Message: "must be a JSON object of strings"}}
			}
			if a.extra == nil {
				a.extra = map[string]string{}
			}
			for k, v := range secret {
				a.extra[k] = v
			}
		}
		return a, nil
	default:
		return noAuth{}, nil
	}
}

func splitScopes(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' })
}

// checkAuth checks what the Spec cannot say field by field: the keys each auth.type requires.
func checkAuth(cfg connector.Values) error {
	var errs connector.FieldErrors
	need := func(keys ...string) {
		for _, k := range keys {
			if cfg.String(k) == "" {
				errs = append(errs, connector.FieldError{Key: k, Message: "is required with auth.type " + cfg.String(KeyAuthType)})
			}
		}
	}
	switch cfg.String(KeyAuthType) {
	case AuthBasic:
		need(KeyAuthUsername)
	case AuthAPIKey:
		need(KeyAuthAPIKeyValue)
	case AuthOAuth:
		need(KeyOAuthTokenURL, KeyOAuthClientID, KeyOAuthClientSecret)
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

func checkStringMap(v string) error {
	var m map[string]string
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return errors.New("must be a JSON object of strings")
	}
	return nil
}
