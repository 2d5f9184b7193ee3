package awsevent

// DefaultBus is the bus of the AWS API's requests that name none.
const DefaultBus = "default"

// BusARN is the ARN of a bus: arn:aws:events:<region>:<account>:event-bus/<bus>.
func BusARN(region, account, bus string) string {
	return "arn:aws:events:" + region + ":" + account + ":event-bus/" + bus
}

// RuleARN is the ARN of a rule: rule/<rule> on the default bus, rule/<bus>/<rule> on another, as AWS names them.
func RuleARN(region, account, bus, rule string) string {
	if bus == DefaultBus {
		return "arn:aws:events:" + region + ":" + account + ":rule/" + rule
	}
	return "arn:aws:events:" + region + ":" + account + ":rule/" + bus + "/" + rule
}
