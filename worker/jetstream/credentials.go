package jetstream

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"

	"github.com/nats-io/nats.go"
)

// Credentials are the user and password NATS clients of an installation authenticate with: the embedded server
// requires them, and workers and the control plane send them to an external NATS.
//
// A credentials file holds them on one line, "user:password" (split at the first colon; white space around the
// line ignored). The user is 1 to 64 letters, digits, '.', '_' and '-'; the password 16 to 1024 visible ASCII
// characters, which may include ':' but not start with "$2" (nats-server would take it for a bcrypt hash).
type Credentials struct {
	User     string
	Password string
}

// DefaultUser is the user of generated credentials.
const DefaultUser = "eventbridge"

var userRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// ErrInvalidCredentials is returned for credentials that break the rules above; its text never holds the password.
var ErrInvalidCredentials = errors.New(`NATS credentials are one line "user:password": a user of 1 to 64 letters, ` +
	`digits, '.', '_' or '-', and a password of 16 to 1024 visible ASCII characters not starting with "$2"`)

// Validate reports ErrInvalidCredentials.
func (c Credentials) Validate() error {
	if !userRe.MatchString(c.User) || len(c.Password) < 16 || len(c.Password) > 1024 || strings.HasPrefix(c.Password, "$2") {
		return ErrInvalidCredentials
	}
	for i := 0; i < len(c.Password); i++ {
		if c.Password[i] < 0x21 || c.Password[i] > 0x7e {
			return ErrInvalidCredentials
		}
	}
	return nil
}

// Option authenticates a nats.Connect with the credentials.
func (c Credentials) Option() nats.Option { return nats.UserInfo(c.User, c.Password) }

// String hides the password, so that credentials printed by mistake give nothing away.
func (c Credentials) String() string { return c.User + ":***" }

// LogValue hides the password in logs.
func (c Credentials) LogValue() slog.Value { return slog.StringValue(c.String()) }

// NewCredentials returns credentials for DefaultUser with a new password: 32 random bytes in hex.
func NewCredentials() (Credentials, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return Credentials{}, err
	}
	return Credentials{User: DefaultUser, Password: hex.EncodeToString(b)}, nil
}

// ReadCredentialsFile reads a credentials file. Errors name the file and never contain its content.
func ReadCredentialsFile(path string) (Credentials, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Credentials{}, fmt.Errorf("reading the NATS credentials: %w", err)
	}
	user, pass, _ := strings.Cut(strings.TrimSpace(string(b)), ":")
	c := Credentials{User: user, Password: pass}
	if err := c.Validate(); err != nil {
		return Credentials{}, fmt.Errorf("NATS credentials file %s: %w", path, err)
	}
	return c, nil
}

// FileLine is the content of a credentials file holding c.
func (c Credentials) FileLine() string { return c.User + ":" + c.Password + "\n" }
