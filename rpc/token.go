package rpc

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// The cluster token is the shared secret of an installation's worker REST API: every worker requires it on every
// route but GET / and GET /healthz, and the control plane sends it. A token file holds the token on one line; white
// space around it is ignored.
const (
	// TokenUser is the user name of HTTP Basic authentication with the cluster token as password, for Kafka Connect
	// tools that speak only Basic. Bearer (Authorization: Bearer <token>) needs no user.
	TokenUser = "worker"
	// MinTokenLen and MaxTokenLen bound a token's length in characters.
	MinTokenLen = 32
	MaxTokenLen = 1024
)

// ErrInvalidToken is returned for a token that cannot be a cluster token. Its text never contains the token.
var ErrInvalidToken = fmt.Errorf("a cluster token is %d to %d visible ASCII characters (no spaces)", MinTokenLen, MaxTokenLen)

// CheckToken reports ErrInvalidToken for a token that is too short, too long or holds anything but visible ASCII
// (which an Authorization header could not carry unchanged).
func CheckToken(token string) error {
	if len(token) < MinTokenLen || len(token) > MaxTokenLen {
		return ErrInvalidToken
	}
	for i := 0; i < len(token); i++ {
		if token[i] < 0x21 || token[i] > 0x7e {
			return ErrInvalidToken
		}
	}
	return nil
}

// NewToken returns a new cluster token: 32 random bytes in hex (64 characters).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// ReadTokenFile reads a cluster token file. Errors name the file and never contain its content.
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the cluster token: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if err := CheckToken(token); err != nil {
		return "", fmt.Errorf("cluster token file %s: %w", path, err)
	}
	return token, nil
}

// ReadCAFile reads PEM certificates (a CA bundle) into a pool, for clients of workers whose certificates are not
// signed by a CA of the system.
func ReadCAFile(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading CA certificates: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New("CA file " + path + " holds no PEM certificate")
	}
	return pool, nil
}
