package connect

import (
	"context"
	"slices"
	"strings"

	"github.com/eventbridge-go/eventbridge/domain"
)

// Connector names are for people and built from names, each a part of its own (domain.ConnectorPart: dots and
// slashes escaped), so they are unambiguous.

// namePart is name as a part of a connector name.
func namePart(name string) string { return domain.ConnectorPart(name) }

func busPrefix(accountID, busName string) string { return partsPrefix(accountID, namePart(busName)) }

// partsPrefix is busPrefix from the parts of a connector name (ownerOf).
func partsPrefix(accountID, busPart string) string { return "eb." + accountID + "." + busPart + "." }

// RouterName is the router connector of a bus: eb.<account>.<bus>.router.
func RouterName(accountID, busName string) string { return busPrefix(accountID, busName) + "router" }

// isRouter reports whether a connector name is a bus's router's (eb.<account>.<bus>.router).
func isRouter(connector string) bool {
	parts := strings.Split(connector, ".")
	return len(parts) == 4 && parts[0] == "eb" && parts[3] == "router"
}

// TargetName is the sink connector of one rule's target: eb.<account>.<bus>.<rule>.<target>.
func TargetName(accountID, busName, ruleName, targetName string) string {
	return busPrefix(accountID, busName) + namePart(ruleName) + "." + namePart(targetName)
}

// ownerOf returns the account and the bus's part (namePart) of a connector name that this adapter manages ("eb."
// names).
func ownerOf(connector string) (accountID, busPart string, ok bool) {
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
