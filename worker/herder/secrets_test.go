package herder

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

func secretHerder(t *testing.T, key []byte) *Herder {
	r := connector.NewRegistry()
	require.NoError(t, r.Register(httpsink.Plugin()))
	require.NoError(t, r.RegisterTransform(connector.TransformPlugin{Name: "vault", Spec: connector.Spec{
		{Name: "token", Type: connector.TypeString, Secret: true}, {Name: "path", Type: connector.TypeString}},
		New: func(connector.Values, connector.Env) (connector.Transform, error) { return nil, errors.New("unused") }}))
	return &Herder{cfg: Config{Registry: r, MasterKey: key, Names: stream.Names{Cluster: "eb"}}}
}

func TestSecretKeysSealAndOpen(t *testing.T) {
	key := bytes.Repeat([]byte{9}, 32)
	h := secretHerder(t, key)
	cfg := map[string]string{
		connector.KeyClass: httpsink.Name, httpsink.KeyAuthPassword: "pw-123", httpsink.KeyAuthUsername: "svc",
		httpsink.KeyAuthAPIKeyValue: "", connector.KeyTransforms: "v, other",
		"transforms.v.type": "vault", "transforms.v.token": "tok-456", "transforms.v.path": "/p",
		"transforms.other.type": "unknown",
	}
	assert.Equal(t, []string{httpsink.KeyAuthAPIKeyValue, httpsink.KeyOAuthClientSecret, httpsink.KeyOAuthSecretExtraParams,
		httpsink.KeyAuthPassword, httpsink.KeySecretBodyParams, httpsink.KeySecretHeaders, "transforms.v.token",
		httpsink.KeyWebhookSigningSecret}, h.secretKeys(cfg))

	const name = "eb.acme.orders.r.t"
	sealed, err := h.seal(name, cfg, nil)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(sealed[httpsink.KeyAuthPassword], rpc.SecretPrefixV2), "sealed in version 2")
	assert.True(t, rpc.IsEncrypted(sealed["transforms.v.token"]), "secrets of transforms are sealed too")
	assert.Equal(t, "svc", sealed[httpsink.KeyAuthUsername])
	assert.Equal(t, "/p", sealed["transforms.v.path"])
	assert.Empty(t, sealed[httpsink.KeyAuthAPIKeyValue], "an empty value stays empty")
	assert.Equal(t, "pw-123", cfg[httpsink.KeyAuthPassword], "the given config is not modified")

	again, err := h.seal(name, cfg, sealed)
	require.NoError(t, err)
	assert.Equal(t, sealed, again, "the same plaintext keeps the stored ciphertext")
	resealed, err := h.seal(name, sealed, nil)
	require.NoError(t, err)
	assert.Equal(t, sealed, resealed, "a value sealed for this connector and key is kept as it is")

	plain, secrets, errs := h.open(name, sealed)
	require.Empty(t, errs)
	assert.Equal(t, cfg, plain)
	assert.ElementsMatch(t, []string{"pw-123", "tok-456"}, secrets)

	// A sealed value moved to another connector, another key, or read with another master key does not open.
	_, _, errs = h.open("eb.other.orders.r.t", sealed)
	require.Len(t, errs, 2, "another connector (another account's)")
	assert.Contains(t, errs[0].Message, "cannot be opened")
	moved := map[string]string{connector.KeyClass: httpsink.Name, httpsink.KeyAuthAPIKeyValue: sealed[httpsink.KeyAuthPassword]}
	_, _, errs = h.open(name, moved)
	require.Len(t, errs, 1, "another key of the same connector")
	assert.Equal(t, httpsink.KeyAuthAPIKeyValue, errs[0].Key)
	other := secretHerder(t, key)
	other.cfg.Names.Cluster = "other"
	_, _, errs = other.open(name, sealed)
	assert.Len(t, errs, 2, "another installation")
	_, err = h.seal("eb.other.orders.r.t", sealed, nil)
	require.Error(t, err, "a config put with another connector's sealed values is refused")
	assert.Contains(t, err.Error(), "not this connector's")
	v1, err := rpc.EncryptSecret(key, "pw-123")
	require.NoError(t, err)
	_, err = h.seal(name, map[string]string{connector.KeyClass: httpsink.Name, httpsink.KeyAuthPassword: v1}, nil)
	require.Error(t, err, "version 1 is not taken as input")

	_, _, errs = secretHerder(t, bytes.Repeat([]byte{1}, 32)).open(name, sealed)
	require.Len(t, errs, 2)
	assert.Equal(t, httpsink.KeyAuthPassword, errs[0].Key)
	assert.Contains(t, errs[0].Message, "cannot be opened")
	assert.NotContains(t, errs.Error(), sealed[httpsink.KeyAuthPassword])

	noKey := secretHerder(t, nil)
	_, err = noKey.seal(name, cfg, nil)
	var fe connector.FieldErrors
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, httpsink.KeyAuthPassword, fe[0].Key)
	assert.Contains(t, fe[0].Message, "--master-key")
	_, _, errs = noKey.open(name, sealed)
	require.NotEmpty(t, errs)
	assert.Contains(t, errs[0].Message, "no master key")
}

func TestRedact(t *testing.T) {
	secrets := []string{"hunter2", "ab"}
	fe := connector.FieldErrors{{Key: "k", Message: `"hunter2" is not one of a, b`}}
	got := redact(fe, secrets)
	var out connector.FieldErrors
	require.ErrorAs(t, got, &out, "field errors stay field errors")
	assert.Equal(t, `"[hidden]" is not one of a, b`, out[0].Message)
	assert.Equal(t, "dial: user hunter2: [hidden] ab", redact(errors.New("dial: user hunter2: [hidden] ab"), secrets[1:]).Error(),
		"secrets under 3 characters are left")
	assert.Equal(t, "dial: [hidden]", redact(errors.New("dial: hunter2"), secrets).Error())
	assert.Nil(t, redact(nil, secrets))
}
