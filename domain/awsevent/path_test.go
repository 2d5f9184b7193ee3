package awsevent_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/eventbridge-go/eventbridge/domain/awsevent"
)

// TestRewritePath: the members AWS names otherwise are renamed at the start of a path only, and back.
func TestRewritePath(t *testing.T) {
	t.Parallel()
	cases := []struct{ aws, ce string }{
		{"$.detail", "$.data"},
		{"$.detail.orderId", "$.data.orderId"},
		{"$.detail[0]", "$.data[0]"},
		{"$.detail.detail", "$.data.detail"},
		{"$.detail-type", "$.type"},
		{"$.source", "$.source"},
		{"$.resources[1]", "$.resources[1]"},
		{"$", "$"},
		{"$.details", "$.details"},
		{"$.detail-types", "$.detail-types"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.ce, awsevent.RewritePath(tc.aws), tc.aws)
		if tc.aws != "$.details" && tc.aws != "$.detail-types" {
			assert.Equal(t, tc.aws, awsevent.PathForAWS(tc.ce), tc.ce)
		}
	}
	assert.Equal(t, "$.datum", awsevent.PathForAWS("$.datum"))
}

// TestARNs: the default bus's rules have the short form.
func TestARNs(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "arn:aws:events:eu-west-1:123456789012:event-bus/orders", awsevent.BusARN("eu-west-1", "123456789012", "orders"))
	assert.Equal(t, "arn:aws:events:eu-west-1:123456789012:rule/r", awsevent.RuleARN("eu-west-1", "123456789012", "default", "r"))
	assert.Equal(t, "arn:aws:events:eu-west-1:123456789012:rule/orders/r", awsevent.RuleARN("eu-west-1", "123456789012", "orders", "r"))
}
