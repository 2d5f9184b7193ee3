package connect

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/eventbridge-go/eventbridge/domain"
)

// connectorNameRe is what the worker accepts as a connector name (worker/herder checkName).
var connectorNameRe = regexp.MustCompile(`^[-_=.a-zA-Z0-9]{1,255}$`)

// TestNameParts: names without dots and slashes are their own part (connector names of earlier versions are
// unchanged); others are escaped so that the parts stay unambiguous; the longest names AWS allows make connector
// names the worker accepts, distinct from each other.
func TestNameParts(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "eb.acme.orders.created.hook", TargetName("acme", "orders", "created", "hook"))
	assert.Equal(t, "eb.acme.orders.router", RouterName("acme", "orders"))
	assert.Equal(t, "eb.acme.my=2Eorg=2Fbus.rule=2Ev2.t=2E1", TargetName("acme", "my.org/bus", "rule.v2", "t.1"))
	assert.NotEqual(t, TargetName("a", "b.c", "d", "e"), TargetName("a", "b", "c.d", "e"), "a dot in a name is not a separator")

	long := strings.Repeat("x.y/", 64) // 256 characters, AWS's longest bus name
	names := map[string]bool{}
	for _, bus := range []string{long, long[:255] + "z", strings.Repeat("b", 256)} {
		n := TargetName(strings.Repeat("a", 32), bus, strings.Repeat("r.", 32), strings.Repeat("t.", 32))
		assert.Regexp(t, connectorNameRe, n)
		names[n] = true
		acc, part, ok := ownerOf(n)
		assert.True(t, ok)
		assert.Equal(t, strings.Repeat("a", 32), acc)
		assert.Equal(t, namePart(bus), part)
	}
	assert.Len(t, names, 3, "long names that differ make different connector names")
	b, r, tg, ok := domain.TargetConnector("acme", TargetName("acme", "my.org/bus", "rule.v2", "t.1"))
	assert.True(t, ok)
	assert.Equal(t, []string{"my.org/bus", "rule.v2", "t.1"}, []string{b, r, tg}, "dead letters read the names back")
	_, _, _, ok = domain.TargetConnector("acme", TargetName("acme", long, "r", "t"))
	assert.False(t, ok, "a shortened name does not read back")
	assert.LessOrEqual(t, len(namePart(long)), domain.MaxConnectorPart)
	assert.NotContains(t, namePart(strings.Repeat(".", 30)), "==", "never half an escape")
}
