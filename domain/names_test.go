package domain_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/eventbridge-go/eventbridge/domain"
)

// TestAWSNames: buses, rules and targets take the names Amazon EventBridge allows (dots; slashes in bus names; up to
// 256 characters for a bus); other resources keep theirs.
func TestAWSNames(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"orders", "org.shop/orders", "a/b/c", "x.y-z_1", strings.Repeat("b", 256)} {
		assert.NoError(t, domain.ValidateBusName("name", n), n)
	}
	for _, n := range []string{"", ".", "..", "a b", "a:b", "a=b", "ä", strings.Repeat("b", 257)} {
		assert.Error(t, domain.ValidateBusName("name", n), n)
	}
	for _, n := range []string{"created", "created.v1", "Events-Archive-x", strings.Repeat("r", 64)} {
		assert.NoError(t, domain.ValidateRuleName("name", n), n)
		assert.NoError(t, domain.ValidateTargetName("name", n), n)
	}
	for _, n := range []string{"", ".", "..", "a/b", "a=b", strings.Repeat("r", 65)} {
		assert.Error(t, domain.ValidateRuleName("name", n), n)
		assert.Error(t, domain.ValidateTargetName("name", n), n)
	}
	assert.Error(t, domain.ValidateName("name", "a.b"), "connections and the rest keep their names")
	assert.NoError(t, domain.ValidateNameOf("bus", "a/b"))
	assert.Error(t, domain.ValidateNameOf("rule", "a/b"))
}

// TestTargetConnector: connector names read back the names they were made of, escapes undone.
func TestTargetConnector(t *testing.T) {
	t.Parallel()
	name := "eb.acme." + domain.ConnectorPart("org.shop/orders") + "." + domain.ConnectorPart("created.v1") + "." +
		domain.ConnectorPart("hook")
	assert.Equal(t, "eb.acme.org=2Eshop=2Forders.created=2Ev1.hook", name)
	b, r, tg, ok := domain.TargetConnector("acme", name)
	assert.True(t, ok)
	assert.Equal(t, []string{"org.shop/orders", "created.v1", "hook"}, []string{b, r, tg})
	for _, other := range []string{"eb.other.b.r.t", "eb.acme.b.router", "eb.acme.b=2.r.t", "eb.acme.b=3Dx.r.t", "x.acme.b.r.t"} {
		_, _, _, ok := domain.TargetConnector("acme", other)
		assert.False(t, ok, other)
	}
}

// TestNewUUID: version 4, RFC 4122 variant, never twice the same.
func TestNewUUID(t *testing.T) {
	t.Parallel()
	a, b := domain.NewUUID(), domain.NewUUID()
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, a)
	assert.NotEqual(t, a, b)
}
