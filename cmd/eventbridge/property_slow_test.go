//go:build slow

package main

import "testing"

// TestSlowAcknowledgedIsDeliveredOrDeadLettered is the property of TestAcknowledgedIsDeliveredOrDeadLettered on
// 12,300 generated events (more than 10,000 of them acknowledged), with another seed.
func TestSlowAcknowledgedIsDeliveredOrDeadLettered(t *testing.T) {
	runProperty(t, 2, 12_300)
}
