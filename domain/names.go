package domain

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"regexp"
	"strings"
	"time"
)

var (
	accountIDRe = regexp.MustCompile(`^[a-z0-9]{1,32}$`)
	nameRe      = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	idRe        = regexp.MustCompile(`^[a-z2-7]{16}$`)
	// AWS's names: a bus's may hold dots and slashes (up to 256 characters), a rule's and a target's dots.
	busNameRe    = regexp.MustCompile(`^[A-Za-z0-9._/-]{1,256}$`)
	ruleNameRe   = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	targetNameRe = ruleNameRe
)

// DefaultAccountID is the account of requests that do not name one.
const DefaultAccountID = "default"

// ValidateAccountID checks an account id: 1 to 32 characters of [a-z0-9].
func ValidateAccountID(id string) error {
	if !accountIDRe.MatchString(id) {
		return Invalid("accountId", "account id %q must be 1 to 32 characters of a-z and 0-9", id)
	}
	return nil
}

// ValidateName checks a resource name: 1 to 64 characters of [A-Za-z0-9_-]. field names the input in the error.
func ValidateName(field, name string) error {
	if !nameRe.MatchString(name) {
		return Invalid(field, "%s %q must be 1 to 64 characters of A-Z, a-z, 0-9, '_' and '-'", field, name)
	}
	return nil
}

// ValidateBusName checks a bus's name as Amazon EventBridge allows it: 1 to 256 characters of [A-Za-z0-9._/-],
// not "." or ".." (they would be path segments of their own in URLs). field names the input in the error.
func ValidateBusName(field, name string) error {
	if !busNameRe.MatchString(name) || name == "." || name == ".." {
		return Invalid(field, "%s %q must be 1 to 256 characters of A-Z, a-z, 0-9, '.', '/', '_' and '-', "+
			"and not . or ..", field, name)
	}
	return nil
}

// ValidateRuleName checks a rule's name as Amazon EventBridge allows it: 1 to 64 characters of [A-Za-z0-9._-],
// not "." or "..".
func ValidateRuleName(field, name string) error {
	if !ruleNameRe.MatchString(name) || name == "." || name == ".." {
		return Invalid(field, "%s %q must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-', and not . or ..",
			field, name)
	}
	return nil
}

// ValidateTargetName checks a target's name (AWS's target Id): 1 to 64 characters of [A-Za-z0-9._-], not "." or
// "..".
func ValidateTargetName(field, name string) error {
	if !targetNameRe.MatchString(name) || name == "." || name == ".." {
		return Invalid(field, "%s %q must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-', and not . or ..",
			field, name)
	}
	return nil
}

// ValidateNameOf checks v as the name of what field says, "bus", "rule" or "target" (the fields of filters).
func ValidateNameOf(field, v string) error {
	switch field {
	case "bus":
		return ValidateBusName(field, v)
	case "rule":
		return ValidateRuleName(field, v)
	}
	return ValidateTargetName(field, v)
}

// ValidateDescription checks a free-text description (at most 512 bytes).
func ValidateDescription(s string) error {
	if len(s) > 512 {
		return Invalid("description", "description is %d bytes long; at most 512 are allowed", len(s))
	}
	return nil
}

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewID returns a new immutable internal id: 16 lowercase base32 characters (80 random bits).
func NewID() string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return strings.ToLower(idEncoding.EncodeToString(b[:]))
}

// NewUUID returns a random (version 4) UUID: the form of the request ids of the RocketMQ EventBridge and AWS APIs
// and of the event ids AWS's PutEvents gives.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[0:4]) + "-" + hex.EncodeToString(b[4:6]) + "-" + hex.EncodeToString(b[6:8]) + "-" +
		hex.EncodeToString(b[8:10]) + "-" + hex.EncodeToString(b[10:16])
}

// IsID reports whether s has the form of an internal id.
func IsID(s string) bool { return idRe.MatchString(s) }

// Clock tells the time to services; nil is the system clock. Tests set their own.
type Clock func() time.Time

// Now returns the time in UTC to the microsecond, which is what both databases store, so that a resource reads
// back exactly as it was answered when created.
func (c Clock) Now() time.Time {
	t := time.Now()
	if c != nil {
		t = c()
	}
	return t.UTC().Truncate(time.Microsecond)
}

// Connector names are for people, eb.<account>.<bus>.<rule>.<target>, each name a part of its own (ConnectorPart):
// a name's dots and slashes are escaped as =2E and =2F, and '=' occurs in no name, so the parts are unambiguous and
// the name stays a KV key and a URL path segment ([-_=.a-zA-Z0-9], at most 255 characters).

// MaxConnectorPart bounds a part so that eb.<account>.<bus>.<rule>.<target> stays within 255 characters; a longer
// part keeps its beginning and ends with =<16 hex characters of the name's SHA-256>, and reads back as no name.
const MaxConnectorPart = 70

var partEscapes = strings.NewReplacer(".", "=2E", "/", "=2F")
var partUnescapes = strings.NewReplacer("=2E", ".", "=2F", "/")

// ConnectorPart is name as a part of a connector name.
func ConnectorPart(name string) string {
	if !strings.ContainsAny(name, "./") && len(name) <= MaxConnectorPart {
		return name
	}
	p := partEscapes.Replace(name)
	if len(p) > MaxConnectorPart {
		sum := sha256.Sum256([]byte(name))
		p = p[:MaxConnectorPart-17]
		if i := strings.LastIndexByte(p, '='); i >= len(p)-2 {
			p = p[:i] // never half an escape
		}
		p += "=" + hex.EncodeToString(sum[:8])
	}
	return p
}

// nameOfPart is the name a connector part was made of; ok is false for a shortened part or anything else.
func nameOfPart(p string) (string, bool) {
	name := partUnescapes.Replace(p)
	if strings.Contains(name, "=") || ConnectorPart(name) != p {
		return "", false
	}
	return name, true
}

// TargetConnector reads the names of a target's connector of the account: eb.<account>.<bus>.<rule>.<target>
// (ConnectorPart); ok is false for any other connector, and for one whose names were too long to be kept whole.
func TargetConnector(accountID, connector string) (busName, ruleName, targetName string, ok bool) {
	parts := strings.Split(connector, ".")
	if len(parts) != 5 || parts[0] != "eb" || parts[1] != accountID {
		return "", "", "", false
	}
	var names [3]string
	for i, p := range parts[2:] {
		if names[i], ok = nameOfPart(p); !ok {
			return "", "", "", false
		}
	}
	if ValidateBusName("bus", names[0]) != nil || ValidateRuleName("rule", names[1]) != nil ||
		ValidateTargetName("target", names[2]) != nil {
		return "", "", "", false
	}
	return names[0], names[1], names[2], true
}
