package connect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// Connector names are for people and built from names, each name a part of its own (namePart): a name's dots and
// slashes (which AWS's bus, rule and target names may hold) are escaped as =2E and =2F, and '=' occurs in no name, so
// the parts of a connector name are unambiguous and it stays a KV key and a URL path segment
// ([-_=.a-zA-Z0-9], at most 255 characters).

// maxNamePart bounds a part so that eb.<account>.<bus>.<rule>.<target> stays within 255 characters; a longer part
// keeps its beginning and ends with =<16 hex characters of the name's SHA-256>.
const maxNamePart = 70

// namePart is name as a part of a connector name.
func namePart(name string) string {
	if !strings.ContainsAny(name, "./") && len(name) <= maxNamePart {
		return name
	}
	p := strings.NewReplacer(".", "=2E", "/", "=2F").Replace(name)
	if len(p) > maxNamePart {
		sum := sha256.Sum256([]byte(name))
		p = p[:maxNamePart-17]
		if i := strings.LastIndexByte(p, '='); i >= len(p)-2 {
			p = p[:i] // never half an escape
		}
		p += "=" + hex.EncodeToString(sum[:8])
	}
	return p
}

func busPrefix(accountID, busName string) string {
	return "eb." + accountID + "." + namePart(busName) + "."
}

// RouterName is the router connector of a bus: eb.<account>.<bus>.router.
func RouterName(accountID, busName string) string { return busPrefix(accountID, busName) + "router" }

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
