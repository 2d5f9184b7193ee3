package account_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/eventbridge-go/eventbridge/domain/account"
)

// TestAWSAccountID: every account id gives 12 digits, always the same ones, and different accounts different ones.
func TestAWSAccountID(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, id := range []string{"default", "a", "b", "acme", "acme2", "0", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"} {
		n := account.AWSAccountID(id)
		assert.Regexp(t, `^[0-9]{12}$`, n, id)
		assert.Equal(t, n, account.AWSAccountID(id), "stable")
		if other, ok := seen[n]; ok {
			t.Errorf("%s and %s share %s", id, other, n)
		}
		seen[n] = id
	}
}
