package password_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/password"
)

func TestHashAndVerify(t *testing.T) {
	t.Parallel()
	h := password.Hasher{}
	enc, err := h.Hash("correct horse battery staple")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(enc, "$argon2id$v=19$m=19456,t=2,p=1$"), enc)
	assert.NotContains(t, enc, "correct horse")
	again, err := h.Hash("correct horse battery staple")
	require.NoError(t, err)
	assert.NotEqual(t, enc, again, "salted")

	ok, err := h.Verify("correct horse battery staple", enc)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = h.Verify("correct horse battery stapler", enc)
	require.NoError(t, err)
	assert.False(t, ok)
	_, err = h.Verify("x", "not a hash")
	assert.Error(t, err)
}
