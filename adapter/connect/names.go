package connect

import (
	"context"
	"slices"
	"strings"
)

// Connector names are for people and built from names; a dot never occurs in a name, so they are unambiguous.

func busPrefix(accountID, busName string) string { return "eb." + accountID + "." + busName + "." }

// RouterName is the router connector of a bus: eb.<account>.<bus>.router.
func RouterName(accountID, busName string) string { return busPrefix(accountID, busName) + "router" }

// TargetName is the sink connector of one rule's target: eb.<account>.<bus>.<rule>.<target>.
func TargetName(accountID, busName, ruleName, targetName string) string {
	return busPrefix(accountID, busName) + ruleName + "." + targetName
}

// ownerOf returns the account and bus of a connector name that this adapter manages ("eb." names).
func ownerOf(connector string) (accountID, busName string, ok bool) {
	parts := strings.Split(connector, ".")
	if len(parts) < 4 || parts[0] != "eb" {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// ConnectorAccounts returns the accounts that the runtime's "eb." connectors name, sorted, each once.
func (a *Adapter) ConnectorAccounts(ctx context.Context) ([]string, error) {
	actual, err := a.cfg.Runtime.ListConnectors(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for name := range actual {
		if acc, _, ok := ownerOf(name); ok && !slices.Contains(out, acc) {
			out = append(out, acc)
		}
	}
	slices.Sort(out)
	return out, nil
}
