package target

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/transform"
)

func TestNewValidates(t *testing.T) {
	t.Parallel()
	now := time.Now()
	ok := HTTPConfig{URL: "https://example.com/hook"}
	cases := []struct {
		name      string
		spec      Spec
		wantField string
	}{
		{"valid with defaults", Spec{Name: "hook", Type: HTTP, HTTP: ok, RetryPolicy: DefaultRetryPolicy()}, ""},
		{"bad name", Spec{Name: "a/b", Type: HTTP, HTTP: ok, RetryPolicy: DefaultRetryPolicy()}, "name"},
		{"no type", Spec{Name: "t", HTTP: ok, RetryPolicy: DefaultRetryPolicy()}, "type"},
		{"type that cannot name a plugin", Spec{Name: "t", Type: "SQS!", RetryPolicy: DefaultRetryPolicy()}, "type"},
		{"source plugin as a target", Spec{Name: "t", Type: "mqtt-source", RetryPolicy: DefaultRetryPolicy()}, "type"},
		{"plugin config setting topics", Spec{Name: "t", Type: "mqtt", Config: map[string]string{"topics": "x"}, RetryPolicy: DefaultRetryPolicy()}, "config.topics"},
		{"plugin config setting an errors key", Spec{Name: "t", Type: "mqtt", Config: map[string]string{"errors.tolerance": "none"}, RetryPolicy: DefaultRetryPolicy()}, "config.errors.tolerance"},
		{"plugin config setting a transform", Spec{Name: "t", Type: "mqtt", Config: map[string]string{"transforms.x.type": "y"}, RetryPolicy: DefaultRetryPolicy()}, "config.transforms.x.type"},
		{"a new plugin target with a masked secret", Spec{Name: "t", Type: "mqtt", Config: map[string]string{"mqtt.password": SecretMask}, RetryPolicy: DefaultRetryPolicy()}, "config.mqtt.password"},
		{"plugin keys on an http target", Spec{Name: "t", Type: HTTP, HTTP: ok, Config: map[string]string{"mqtt.topic": "x"}, RetryPolicy: DefaultRetryPolicy()}, "config"},
		{"no url", Spec{Name: "t", Type: HTTP, RetryPolicy: DefaultRetryPolicy()}, "config.url"},
		{"ftp url", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: "ftp://x/y"}, RetryPolicy: DefaultRetryPolicy()}, "config.url"},
		{"relative url", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: "/hook"}, RetryPolicy: DefaultRetryPolicy()}, "config.url"},
		{"bad method", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: ok.URL, Method: "TRACE"}, RetryPolicy: DefaultRetryPolicy()}, "config.method"},
		{"bad mode", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: ok.URL, Mode: "batch"}, RetryPolicy: DefaultRetryPolicy()}, "config.mode"},
		{"timeout too long", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: ok.URL, Timeout: time.Hour}, RetryPolicy: DefaultRetryPolicy()}, "config.timeout"},
		{"bad header", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: ok.URL, Headers: map[string]string{"a b": "c"}}, RetryPolicy: DefaultRetryPolicy()}, "config.headers"},
		{"header injection", Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: ok.URL, Headers: map[string]string{"X": "a\r\nb: c"}}, RetryPolicy: DefaultRetryPolicy()}, "config.headers"},
		{"too many attempts", Spec{Name: "t", Type: HTTP, HTTP: ok, RetryPolicy: RetryPolicy{MaximumRetryAttempts: 186, MaximumEventAgeInSeconds: 60}}, "retryPolicy.maximumRetryAttempts"},
		{"age too short", Spec{Name: "t", Type: HTTP, HTTP: ok, RetryPolicy: RetryPolicy{MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 59}}, "retryPolicy.maximumEventAgeInSeconds"},
		{"role ARN", Spec{Name: "t", Type: HTTP, HTTP: ok, RetryPolicy: DefaultRetryPolicy(), RoleARN: "arn:aws:iam::123456789012:role/invoke"}, ""},
		{"role ARN not an ARN", Spec{Name: "t", Type: HTTP, HTTP: ok, RetryPolicy: DefaultRetryPolicy(), RoleARN: "invoke-role"}, "roleArn"},
		{"role ARN with a space", Spec{Name: "t", Type: HTTP, HTTP: ok, RetryPolicy: DefaultRetryPolicy(), RoleARN: "arn:aws:iam::1:role/a b"}, "roleArn"},
		{"role ARN too long", Spec{Name: "t", Type: HTTP, HTTP: ok, RetryPolicy: DefaultRetryPolicy(), RoleARN: "arn:" + strings.Repeat("r", MaxRoleARNLength)}, "roleArn"},
		{"input transformer", withTransformer(transform.Spec{InputTransformer: &transform.InputTransformer{
			InputPathsMap: map[string]string{"id": "$.data.orderId"}, InputTemplate: `{"order": <id>}`}}), ""},
		{"input", withTransformer(transform.Spec{Input: ptr(`{"a": 1}`)}), ""},
		{"inputPath", withTransformer(transform.Spec{InputPath: ptr("$.data")}), ""},
		{"RocketMQ form", withTransformer(transform.Spec{Transform: &transform.Param{Form: transform.Original}}), ""},
		{"template missing", withTransformer(transform.Spec{InputTransformer: &transform.InputTransformer{}}), "inputTransformer.inputTemplate"},
		{"bad path", withTransformer(transform.Spec{InputTransformer: &transform.InputTransformer{
			InputPathsMap: map[string]string{"id": "data.orderId"}, InputTemplate: "<id>"}}), "inputTransformer.inputPathsMap.id"},
		{"input not JSON", withTransformer(transform.Spec{Input: ptr("nope")}), "input"},
		{"two transformers", withTransformer(transform.Spec{Input: ptr("1"), InputPath: ptr("$.data")}), "inputPath"},
		{"bad form", withTransformer(transform.Spec{Transform: &transform.Param{Form: "ALL"}}), "transform.form"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := New("default", "b", "r", tc.spec, nil, now)
			if tc.wantField == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got.RoleARN() != tc.spec.RoleARN {
					t.Fatalf("role ARN = %q, want %q", got.RoleARN(), tc.spec.RoleARN)
				}
				if !got.Transformer().Equal(tc.spec.Transformer) {
					t.Fatalf("transformer = %+v, want %+v", got.Transformer(), tc.spec.Transformer)
				}
				h := got.HTTP()
				if h.Method != "POST" || h.Mode != Binary || h.Timeout != 5*time.Second || !domain.IsID(got.ID()) {
					t.Fatalf("defaults not applied: %+v id %q", h, got.ID())
				}
				return
			}
			if !errors.Is(err, domain.ErrValidation) {
				t.Fatalf("want a validation error, got %v", err)
			}
			if e, _ := domain.As(err); e.Field != tc.wantField {
				t.Fatalf("field = %q, want %q (%v)", e.Field, tc.wantField, err)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func withTransformer(tr transform.Spec) Spec {
	return Spec{Name: "t", Type: HTTP, HTTP: HTTPConfig{URL: "https://example.com/hook"}, Transformer: tr, RetryPolicy: DefaultRetryPolicy()}
}

func TestChangeReplacesTheTransformer(t *testing.T) {
	t.Parallel()
	now := time.Now()
	spec := withTransformer(transform.Spec{Input: ptr(`"v1"`)})
	tg, err := New("default", "b", "r", spec, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	bad := withTransformer(transform.Spec{Input: ptr("not json")})
	if err := tg.Change(bad, nil, now); !errors.Is(err, domain.ErrValidation) {
		t.Fatalf("want a validation error, got %v", err)
	}
	if !tg.Transformer().Equal(spec.Transformer) {
		t.Fatal("a refused change left the transformer changed")
	}
	if err := tg.Change(withTransformer(transform.Spec{}), nil, now); err != nil {
		t.Fatal(err)
	}
	if !tg.Transformer().IsZero() {
		t.Fatalf("the transformer is removed by a spec without one: %+v", tg.Transformer())
	}
}

func TestPluginTargetKeepsMaskedSecrets(t *testing.T) {
	t.Parallel()
	now := time.Now()
	spec := Spec{Name: "t", Type: "mqtt", RetryPolicy: DefaultRetryPolicy(),
		Config: map[string]string{"mqtt.url": "tcp://broker:1883", "mqtt.password": "enc:v1:abc"}}
	tg, err := New("a", "b", "r", spec, nil, now)
	require.NoError(t, err)
	require.True(t, tg.Type().IsPlugin())
	require.Equal(t, map[string]string{"mqtt.url": "tcp://broker:1883", "mqtt.password": SecretMask}, tg.PublicConfig())

	// Given back masked, the stored secret stays; given anew, it is replaced.
	spec.Config = tg.PublicConfig()
	spec.Config["mqtt.url"] = "tcp://other:1883"
	require.NoError(t, tg.Change(spec, nil, now))
	require.Equal(t, map[string]string{"mqtt.url": "tcp://other:1883", "mqtt.password": "enc:v1:abc"}, tg.Config())
	spec.Config["mqtt.password"] = "enc:v1:new"
	require.NoError(t, tg.Change(spec, nil, now))
	require.Equal(t, "enc:v1:new", tg.Config()["mqtt.password"])

	// Changing the type drops the old secrets: a mask then has nothing to keep.
	spec.Type, spec.Config = "other-sink", map[string]string{"mqtt.password": SecretMask}
	require.Error(t, tg.Change(spec, nil, now))

	// A built-in type carries no plugin config.
	require.NoError(t, tg.Change(Spec{Name: "t", Type: Log, RetryPolicy: DefaultRetryPolicy()}, nil, now))
	require.Nil(t, tg.Config())
	require.False(t, Log.IsPlugin())
}

// sinks stands for the runtime's plugin check (a process boundary): mqtt has one secret key.
type sinks struct{}

func (sinks) CheckSink(_ context.Context, _ Type, _ map[string]string) ([]string, error) {
	return []string{"mqtt.password"}, nil
}

// prefixSealer seals by prefixing the owner's field, so a test sees what was sealed for what.
type prefixSealer struct{}

func (prefixSealer) Seal(o domain.SecretOwner, p string) (string, error) {
	return "enc:test:" + o.Kind + "/" + o.ID + "/" + o.Field + ":" + p, nil
}

// TestServiceNeverTakesSealedInput: a sealed value (enc:...) given in a plugin target's config or as a secret
// header is refused, whoever it belonged to; plaintext is sealed by Change for the target and field it belongs to,
// the mask keeps the stored value.
func TestServiceNeverTakesSealedInput(t *testing.T) {
	t.Parallel()
	s := &Service{Plugins: sinks{}, Sealer: prefixSealer{}}
	ctx := context.Background()
	_, err := s.preparePlugin(ctx, Spec{Name: "t", Type: "mqtt", Config: map[string]string{"mqtt.password": "enc:v1:c29tZW9uZSBlbHNl"}})
	require.ErrorIs(t, err, domain.ErrValidation)
	de, _ := domain.As(err)
	require.Equal(t, "config.mqtt.password", de.Field)
	_, err = s.preparePlugin(ctx, Spec{Name: "t", Type: "mqtt", Config: map[string]string{"mqtt.url": "enc:v1:x"}})
	require.ErrorIs(t, err, domain.ErrValidation, "in any key")
	spec, err := s.preparePlugin(ctx, Spec{Name: "t", Type: "mqtt", RetryPolicy: DefaultRetryPolicy(),
		Config: map[string]string{"mqtt.password": "pw", "mqtt.url": "tcp://b:1883"}})
	require.NoError(t, err)
	require.Equal(t, []string{"mqtt.password"}, spec.SecretKeys)
	tg, err := New("acme", "b", "r", spec, prefixSealer{}, time.Now())
	require.NoError(t, err)
	require.Equal(t, "enc:test:target/"+tg.ID()+"/config.mqtt.password:pw", tg.Config()["mqtt.password"])
	require.Equal(t, "tcp://b:1883", tg.Config()["mqtt.url"])

	require.ErrorIs(t, checkHeaders(HTTPConfig{Headers: map[string]string{"Authorization": "enc:v1:x"}}), domain.ErrValidation)
	require.NoError(t, checkHeaders(HTTPConfig{Headers: map[string]string{"X-Team": "enc:v1:not-secret"}}),
		"a plain header's value is sent as it is, whatever it looks like")
	h, err := New("acme", "b", "r", Spec{Name: "h", Type: HTTP, RetryPolicy: DefaultRetryPolicy(), HTTP: HTTPConfig{URL: "https://x.example/",
		Headers: map[string]string{"authorization": "Bearer t", "X-Team": "shop"}}}, prefixSealer{}, time.Now())
	require.NoError(t, err)
	require.Equal(t, "enc:test:target/"+h.ID()+"/headers.Authorization:Bearer t", h.HTTP().Headers["authorization"])
	require.Equal(t, "shop", h.HTTP().Headers["X-Team"])
}
