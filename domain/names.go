package domain

import (
	"crypto/rand"
	"encoding/base32"
	"regexp"
	"strings"
	"time"
)

var (
	accountIDRe = regexp.MustCompile(`^[a-z0-9]{1,32}$`)
	nameRe      = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	idRe        = regexp.MustCompile(`^[a-z2-7]{16}$`)
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

// TargetConnector reads the names of a target's connector of the account: eb.<account>.<bus>.<rule>.<target>. A
// dot never occurs in a name, so the name is unambiguous; ok is false for any other connector.
func TargetConnector(accountID, connector string) (busName, ruleName, targetName string, ok bool) {
	parts := strings.Split(connector, ".")
	if len(parts) != 5 || parts[0] != "eb" || parts[1] != accountID {
		return "", "", "", false
	}
	for _, p := range parts[2:] {
		if ValidateName("name", p) != nil {
			return "", "", "", false
		}
	}
	return parts[2], parts[3], parts[4], true
}
