// Package password hashes users' passwords with argon2id (github.com/alexedwards/argon2id over golang.org/x/crypto),
// in the PHC string format that carries the salt and the parameters, so that stronger parameters apply to new
// hashes without breaking old ones.
package password

import (
	"fmt"

	"github.com/alexedwards/argon2id"

	"github.com/eventbridge-go/eventbridge/domain/user"
)

var _ user.PasswordHasher = Hasher{}

// Params are OWASP's recommended argon2id settings (m=19 MiB, t=2, p=1), the smallest that it recommends, for a
// sign-in of about 25 ms on one core.
var Params = &argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// Hasher is a user.PasswordHasher with Params (the zero value) or its own.
type Hasher struct {
	Params *argon2id.Params
}

func (h Hasher) params() *argon2id.Params {
	if h.Params != nil {
		return h.Params
	}
	return Params
}

// Hash returns the PHC string of password ($argon2id$v=19$m=...,t=...,p=...$salt$hash).
func (h Hasher) Hash(password string) (string, error) {
	s, err := argon2id.CreateHash(password, h.params())
	if err != nil {
		return "", fmt.Errorf("hashing a password: %w", err)
	}
	return s, nil
}

// Verify reports whether password matches the PHC string encoded (compared in constant time).
func (h Hasher) Verify(password, encoded string) (bool, error) {
	ok, err := argon2id.ComparePasswordAndHash(password, encoded)
	if err != nil {
		return false, fmt.Errorf("checking a password: %w", err)
	}
	return ok, nil
}
