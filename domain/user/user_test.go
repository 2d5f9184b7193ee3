package user_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/user"
)

func TestUsernames(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"alice": "alice", "Alice": "alice", "ops@example.com": "ops@example.com",
		"a.b-c_d+e": "a.b-c_d+e", "7": "7"} {
		got, err := user.NormalizeUsername("username", in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got)
	}
	for _, bad := range []string{"", ".alice", "al ice", "alice!", strings.Repeat("a", 65), "ümlaut"} {
		_, err := user.NormalizeUsername("username", bad)
		assert.ErrorIsf(t, err, domain.ErrValidation, "%q", bad)
	}
}

func TestPasswords(t *testing.T) {
	t.Parallel()
	assert.NoError(t, user.CheckPassword("eight ch"))
	assert.NoError(t, user.CheckPassword(strings.Repeat("x", user.MaxPasswordLength)))
	for _, bad := range []string{"", "seven c", strings.Repeat("x", user.MaxPasswordLength+1), "bad utf8 \xff\xfe"} {
		err := user.CheckPassword(bad)
		assert.ErrorIsf(t, err, domain.ErrValidation, "%q", bad)
		assert.NotContains(t, err.Error(), bad[:min(len(bad), 8)]+"x", "the password is not repeated")
	}
}
