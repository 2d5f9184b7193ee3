package connection

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/eventbridge-go/eventbridge/domain"
)

// fakeSealer seals by prefixing and hiding the plaintext in hex-like form, so tests can tell sealed from plain.
type fakeSealer struct{ n int }

func (f *fakeSealer) Seal(_ domain.SecretOwner, p string) (string, error) {
	f.n++
	var b strings.Builder
	b.WriteString("sealed:")
	for i := len(p) - 1; i >= 0; i-- {
		b.WriteByte(p[i])
	}
	return b.String(), nil
}

type failingSealer struct{}

func (failingSealer) Seal(domain.SecretOwner, string) (string, error) {
	return "", errors.New("no key")
}

func basicSpec() Spec {
	return Spec{Name: "c", AuthorizationType: Basic, Basic: &BasicAuth{Username: "u", Password: "pw"}}
}

func TestNewValidation(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxValueLength+1)
	many := make([]Parameter, MaxParameters+1)
	for i := range many {
		many[i] = Parameter{Key: "k" + strings.Repeat("x", i), Value: "v"}
	}
	cases := []struct {
		name      string
		account   string
		spec      func(s *Spec)
		wantField string
	}{
		{"basic", "a", func(s *Spec) {}, ""},
		{"api key", "a", func(s *Spec) {
			s.AuthorizationType, s.Basic, s.APIKey = APIKey, nil, &APIKeyAuth{APIKeyName: "X-Api-Key", APIKeyValue: "k"}
		}, ""},
		{"oauth", "a", func(s *Spec) {
			s.AuthorizationType, s.Basic = OAuthClientCredentials, nil
			s.OAuth = &OAuthParameters{AuthorizationEndpoint: "https://auth.example.com/token", HTTPMethod: "post", ClientID: "id",
				ClientSecret: "cs", Scopes: []string{"a.read", "b:write"},
				HTTPParameters: HTTPParameters{BodyParameters: []Parameter{{Key: "audience", Value: "x", IsValueSecret: true}}}}
		}, ""},
		{"invocation parameters", "a", func(s *Spec) {
			s.InvocationHTTPParameters = HTTPParameters{
				HeaderParameters:      []Parameter{{Key: "X-Team", Value: "shop"}, {Key: "X-Token", Value: "t", IsValueSecret: true}},
				QueryStringParameters: []Parameter{{Key: "a b", Value: ""}},
				BodyParameters:        []Parameter{{Key: "k", Value: "v"}},
			}
		}, ""},
		{"bad account", "A", func(s *Spec) {}, "accountId"},
		{"bad name", "a", func(s *Spec) { s.Name = "a.b" }, "name"},
		{"long description", "a", func(s *Spec) { s.Description = strings.Repeat("d", 513) }, "description"},
		{"no type", "a", func(s *Spec) { s.AuthorizationType = "" }, "authorizationType"},
		{"unknown type", "a", func(s *Spec) { s.AuthorizationType = "DIGEST" }, "authorizationType"},
		{"type without its parameters", "a", func(s *Spec) { s.Basic = nil }, "authParameters.basicAuthParameters"},
		{"parameters of another type", "a", func(s *Spec) { s.APIKey = &APIKeyAuth{APIKeyName: "k", APIKeyValue: "v"} },
			"authParameters.apiKeyAuthParameters"},
		{"no username", "a", func(s *Spec) { s.Basic.Username = "" }, "authParameters.basicAuthParameters.username"},
		{"no password", "a", func(s *Spec) { s.Basic.Password = "" }, "authParameters.basicAuthParameters.password"},
		{"long password", "a", func(s *Spec) { s.Basic.Password = long }, "authParameters.basicAuthParameters.password"},
		{"control character in password", "a", func(s *Spec) { s.Basic.Password = "a\nb" }, "authParameters.basicAuthParameters.password"},
		{"bad api key name", "a", func(s *Spec) {
			s.AuthorizationType, s.Basic, s.APIKey = APIKey, nil, &APIKeyAuth{APIKeyName: "X Key", APIKeyValue: "k"}
		}, "authParameters.apiKeyAuthParameters.apiKeyName"},
		{"no api key value", "a", func(s *Spec) {
			s.AuthorizationType, s.Basic, s.APIKey = APIKey, nil, &APIKeyAuth{APIKeyName: "X-Key"}
		}, "authParameters.apiKeyAuthParameters.apiKeyValue"},
		{"oauth endpoint not http", "a", func(s *Spec) {
			s.AuthorizationType, s.Basic = OAuthClientCredentials, nil
			s.OAuth = &OAuthParameters{AuthorizationEndpoint: "ftp://x/token", HTTPMethod: "POST", ClientID: "id", ClientSecret: "cs"}
		}, "authParameters.oauthParameters.authorizationEndpoint"},
		{"oauth method", "a", func(s *Spec) {
			s.AuthorizationType, s.Basic = OAuthClientCredentials, nil
			s.OAuth = &OAuthParameters{AuthorizationEndpoint: "http://x/token", HTTPMethod: "DELETE", ClientID: "id", ClientSecret: "cs"}
		}, "authParameters.oauthParameters.httpMethod"},
		{"oauth client id", "a", func(s *Spec) {
			s.AuthorizationType, s.Basic = OAuthClientCredentials, nil
			s.OAuth = &OAuthParameters{AuthorizationEndpoint: "http://x/token", HTTPMethod: "GET", ClientSecret: "cs"}
		}, "authParameters.oauthParameters.clientParameters.clientId"},
		{"oauth client secret", "a", func(s *Spec) {
			s.AuthorizationType, s.Basic = OAuthClientCredentials, nil
			s.OAuth = &OAuthParameters{AuthorizationEndpoint: "http://x/token", HTTPMethod: "GET", ClientID: "id"}
		}, "authParameters.oauthParameters.clientParameters.clientSecret"},
		{"oauth scope with a space", "a", func(s *Spec) {
			s.AuthorizationType, s.Basic = OAuthClientCredentials, nil
			s.OAuth = &OAuthParameters{AuthorizationEndpoint: "http://x/token", HTTPMethod: "GET", ClientID: "id", ClientSecret: "s",
				Scopes: []string{"a b"}}
		}, "authParameters.oauthParameters.scopes"},
		{"oauth parameter", "a", func(s *Spec) {
			s.AuthorizationType, s.Basic = OAuthClientCredentials, nil
			s.OAuth = &OAuthParameters{AuthorizationEndpoint: "http://x/token", HTTPMethod: "GET", ClientID: "id", ClientSecret: "s",
				HTTPParameters: HTTPParameters{QueryStringParameters: []Parameter{{Key: ""}}}}
		}, "authParameters.oauthParameters.oauthHttpParameters.queryStringParameters[0].key"},
		{"header key", "a", func(s *Spec) {
			s.InvocationHTTPParameters.HeaderParameters = []Parameter{{Key: "ok", Value: "v"}, {Key: "bad key", Value: "v"}}
		}, "authParameters.invocationHttpParameters.headerParameters[1].key"},
		{"duplicate header", "a", func(s *Spec) {
			s.InvocationHTTPParameters.HeaderParameters = []Parameter{{Key: "x-a", Value: "v"}, {Key: "X-A", Value: "v"}}
		}, "authParameters.invocationHttpParameters.headerParameters[1].key"},
		{"secret parameter without value", "a", func(s *Spec) {
			s.InvocationHTTPParameters.BodyParameters = []Parameter{{Key: "k", IsValueSecret: true}}
		}, "authParameters.invocationHttpParameters.bodyParameters[0].value"},
		{"control character in value", "a", func(s *Spec) {
			s.InvocationHTTPParameters.HeaderParameters = []Parameter{{Key: "X-A", Value: "a\r\nb"}}
		}, "authParameters.invocationHttpParameters.headerParameters[0].value"},
		{"too many parameters", "a", func(s *Spec) { s.InvocationHTTPParameters.BodyParameters = many },
			"authParameters.invocationHttpParameters.bodyParameters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := basicSpec()
			tc.spec(&s)
			c, err := New(tc.account, s, &fakeSealer{}, time.Now())
			if tc.wantField == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !domain.IsID(c.ID()) {
					t.Fatalf("id %q", c.ID())
				}
				return
			}
			e, ok := domain.As(err)
			if !ok || !errors.Is(err, domain.ErrValidation) || e.Field != tc.wantField {
				t.Fatalf("want a validation error on %q, got %v", tc.wantField, err)
			}
		})
	}
}

// TestSecretsAreSealedAndNeverShown: every secret is sealed when built, redacted for callers, and never in an
// error.
func TestSecretsAreSealedAndNeverShown(t *testing.T) {
	t.Parallel()
	s := Spec{Name: "c", AuthorizationType: OAuthClientCredentials,
		OAuth: &OAuthParameters{AuthorizationEndpoint: "https://a/token", HTTPMethod: "POST", ClientID: "id", ClientSecret: "client-secret",
			HTTPParameters: HTTPParameters{HeaderParameters: []Parameter{{Key: "X-O", Value: "oauth-secret", IsValueSecret: true}}}},
		InvocationHTTPParameters: HTTPParameters{
			QueryStringParameters: []Parameter{{Key: "q", Value: "query-secret", IsValueSecret: true}, {Key: "p", Value: "plain"}}},
	}
	sealer := &fakeSealer{}
	c, err := New("a", s, sealer, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if sealer.n != 3 {
		t.Fatalf("want 3 secrets sealed, got %d", sealer.n)
	}
	sealed := c.Sealed()
	if sealed.OAuth.ClientSecret != "sealed:terces-tneilc" || sealed.OAuth.HTTPParameters.HeaderParameters[0].Value != "sealed:terces-htuao" ||
		sealed.InvocationHTTPParameters.QueryStringParameters[0].Value != "sealed:terces-yreuq" {
		t.Fatalf("secrets not sealed: %+v", sealed)
	}
	if sealed.InvocationHTTPParameters.QueryStringParameters[1].Value != "plain" {
		t.Fatal("a value that is not secret is kept as it is")
	}
	r := c.Redacted()
	if r.OAuth.ClientSecret != "" || r.OAuth.HTTPParameters.HeaderParameters[0].Value != "" ||
		r.InvocationHTTPParameters.QueryStringParameters[0].Value != "" || r.InvocationHTTPParameters.QueryStringParameters[1].Value != "plain" {
		t.Fatalf("redacted spec shows a secret: %+v", r)
	}
	// Changing the redacted spec back keeps every sealed secret, without sealing anything.
	before := sealer.n
	if err := c.Change(r, sealer, time.Now()); err != nil {
		t.Fatal(err)
	}
	if sealer.n != before {
		t.Fatal("kept secrets are not sealed again")
	}
	if got := c.Sealed(); got.OAuth.ClientSecret != sealed.OAuth.ClientSecret ||
		got.InvocationHTTPParameters.QueryStringParameters[0].Value != sealed.InvocationHTTPParameters.QueryStringParameters[0].Value {
		t.Fatalf("secrets not kept: %+v", got)
	}

	// A validation error never quotes a secret.
	bad := basicSpec()
	bad.Basic.Password = strings.Repeat("hunter2", 100)
	_, err = New("a", bad, sealer, time.Now())
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("want an error without the secret, got %v", err)
	}
	bad.Basic.Password = "hunter2\x00"
	if _, err = New("a", bad, sealer, time.Now()); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("want an error without the secret, got %v", err)
	}
	// A sealer failure is internal and does not quote the secret either.
	_, err = New("a", basicSpec(), failingSealer{}, time.Now())
	if !errors.Is(err, domain.ErrInternal) || strings.Contains(err.Error(), "pw") {
		t.Fatalf("want an internal error without the secret, got %v", err)
	}
}

func TestChangeKeepsSecretsOnlyWhereTheyBelong(t *testing.T) {
	t.Parallel()
	sealer := &fakeSealer{}
	c, err := New("a", basicSpec(), sealer, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Same type, password omitted: kept.
	if err := c.Change(Spec{AuthorizationType: Basic, Basic: &BasicAuth{Username: "v"}}, sealer, time.Now()); err != nil {
		t.Fatal(err)
	}
	if c.Sealed().Basic.Password != "sealed:wp" || c.Sealed().Basic.Username != "v" || c.Name() != "c" {
		t.Fatalf("got %+v", c.Sealed())
	}
	// New password: sealed anew.
	if err := c.Change(Spec{AuthorizationType: Basic, Basic: &BasicAuth{Username: "v", Password: "new"}}, sealer, time.Now()); err != nil {
		t.Fatal(err)
	}
	if c.Sealed().Basic.Password != "sealed:wen" {
		t.Fatalf("got %+v", c.Sealed())
	}
	// Another type: nothing to keep.
	err = c.Change(Spec{AuthorizationType: APIKey, APIKey: &APIKeyAuth{APIKeyName: "X-Key"}}, sealer, time.Now())
	if e, ok := domain.As(err); !ok || e.Field != "authParameters.apiKeyAuthParameters.apiKeyValue" {
		t.Fatalf("want apiKeyValue required, got %v", err)
	}
	// A secret parameter keeps the value of the secret parameter with the same key only.
	err = c.Change(Spec{AuthorizationType: Basic, Basic: &BasicAuth{Username: "v"},
		InvocationHTTPParameters: HTTPParameters{BodyParameters: []Parameter{{Key: "k", Value: "s", IsValueSecret: true}}}}, sealer, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	err = c.Change(Spec{AuthorizationType: Basic, Basic: &BasicAuth{Username: "v"},
		InvocationHTTPParameters: HTTPParameters{BodyParameters: []Parameter{{Key: "k", IsValueSecret: true}}}}, sealer, time.Now())
	if err != nil || c.Sealed().InvocationHTTPParameters.BodyParameters[0].Value != "sealed:s" {
		t.Fatalf("want the parameter kept: %v %+v", err, c.Sealed())
	}
	err = c.Change(Spec{AuthorizationType: Basic, Basic: &BasicAuth{Username: "v"},
		InvocationHTTPParameters: HTTPParameters{QueryStringParameters: []Parameter{{Key: "k", IsValueSecret: true}}}}, sealer, time.Now())
	if e, ok := domain.As(err); !ok || e.Field != "authParameters.invocationHttpParameters.queryStringParameters[0].value" {
		t.Fatalf("a parameter of another list keeps nothing: %v", err)
	}
}

func TestPatchApply(t *testing.T) {
	t.Parallel()
	cur := Spec{Name: "c", Description: "d", AuthorizationType: Basic, Basic: &BasicAuth{Username: "u"},
		InvocationHTTPParameters: HTTPParameters{BodyParameters: []Parameter{{Key: "k", Value: "v"}}}}
	desc := "new"
	got := Patch{Description: &desc}.apply(cur)
	if got.Description != "new" || got.Basic == nil || len(got.InvocationHTTPParameters.BodyParameters) != 1 {
		t.Fatalf("got %+v", got)
	}
	typ := APIKey
	got = Patch{AuthorizationType: &typ, APIKey: &APIKeyAuth{APIKeyName: "X"}}.apply(cur)
	if got.Basic != nil || got.APIKey == nil || got.AuthorizationType != APIKey {
		t.Fatalf("changing the type drops the former parameters: %+v", got)
	}
	got = Patch{InvocationHTTPParameters: &HTTPParameters{}}.apply(cur)
	if !got.InvocationHTTPParameters.IsZero() {
		t.Fatalf("invocation parameters replaced as a whole: %+v", got)
	}
}

func TestDeauthorizeDropsSecretsUntilAChangeGivesThemAll(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	spec := basicSpec()
	spec.InvocationHTTPParameters = HTTPParameters{HeaderParameters: []Parameter{
		{Key: "X-Team", Value: "shop"}, {Key: "X-Token", Value: "t0k", IsValueSecret: true}}}
	c, err := New("a", spec, &fakeSealer{}, created)
	if err != nil {
		t.Fatal(err)
	}
	if c.State() != Authorized || !c.AuthorizedAt().Equal(created) || !c.DeauthorizedAt().IsZero() {
		t.Fatalf("new connection: state %s, authorized %v, deauthorized %v", c.State(), c.AuthorizedAt(), c.DeauthorizedAt())
	}

	at := created.Add(time.Hour)
	c.Deauthorize(at)
	if c.State() != Deauthorized || !c.DeauthorizedAt().Equal(at) || !c.UpdatedAt().Equal(at) || !c.AuthorizedAt().Equal(created) {
		t.Fatalf("deauthorized: state %s, deauthorized %v, updated %v, authorized %v", c.State(), c.DeauthorizedAt(), c.UpdatedAt(), c.AuthorizedAt())
	}
	s := c.Sealed()
	if s.Basic.Password != "" || s.InvocationHTTPParameters.HeaderParameters[1].Value != "" {
		t.Fatalf("secrets kept after Deauthorize: %+v", s)
	}
	if s.Basic.Username != "u" || s.InvocationHTTPParameters.HeaderParameters[0].Value != "shop" {
		t.Fatalf("the declaration without secrets should stay: %+v", s)
	}
	c.Deauthorize(at.Add(time.Minute)) // a second time changes nothing
	if !c.DeauthorizedAt().Equal(at) {
		t.Fatalf("deauthorizing again moved the time to %v", c.DeauthorizedAt())
	}

	// A change that gives no secret keeps it DEAUTHORIZED.
	redacted := c.Redacted()
	redacted.Description = "parked"
	if err := c.Change(redacted, &fakeSealer{}, at.Add(2*time.Minute)); err != nil {
		t.Fatalf("a change without secrets of a DEAUTHORIZED connection: %v", err)
	}
	if c.State() != Deauthorized || c.Description() != "parked" {
		t.Fatalf("after a change without secrets: state %s, description %q", c.State(), c.Description())
	}

	// One that gives some secrets must give them all: nothing is kept to fill the others.
	partial := c.Redacted()
	partial.Basic.Password = "new"
	err = c.Change(partial, &fakeSealer{}, at.Add(3*time.Minute))
	if !errors.Is(err, domain.ErrValidation) || !strings.Contains(err.Error(), "invocationHttpParameters.headerParameters[1].value is required") {
		t.Fatalf("a change giving the password only: %v", err)
	}
	if c.State() != Deauthorized {
		t.Fatal("a refused change authorized the connection")
	}

	all := c.Redacted()
	all.Basic.Password = "new"
	all.InvocationHTTPParameters.HeaderParameters[1].Value = "t0k2"
	back := at.Add(4 * time.Minute)
	if err := c.Change(all, &fakeSealer{}, back); err != nil {
		t.Fatal(err)
	}
	if c.State() != Authorized || !c.AuthorizedAt().Equal(back) || !c.DeauthorizedAt().IsZero() {
		t.Fatalf("after the secrets came back: state %s, authorized %v, deauthorized %v", c.State(), c.AuthorizedAt(), c.DeauthorizedAt())
	}
	if got := c.Sealed().Basic.Password; got != "sealed:wen" {
		t.Fatalf("password sealed as %q", got)
	}

	// Stored and read back, the state and its times stay.
	c.Deauthorize(back.Add(time.Minute))
	again := UnmarshalFromDatabase(Stored{ID: c.ID(), AccountID: "a", CreatedAt: created, UpdatedAt: c.UpdatedAt(),
		AuthorizedAt: c.AuthorizedAt(), DeauthorizedAt: c.DeauthorizedAt()}, c.Sealed())
	if again.State() != Deauthorized || !again.AuthorizedAt().Equal(back) {
		t.Fatalf("read back: state %s, authorized %v", again.State(), again.AuthorizedAt())
	}
	if old := UnmarshalFromDatabase(Stored{ID: "x", AccountID: "a", CreatedAt: created}, spec); old.State() != Authorized || !old.AuthorizedAt().Equal(created) {
		t.Fatalf("a connection stored before states: state %s, authorized %v", old.State(), old.AuthorizedAt())
	}
}
