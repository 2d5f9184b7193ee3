package rpc

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Sealed values. Workers and the control plane share the master key; configs on the wire and in KV, and the
// control plane's database, hold secrets only sealed under it.
//
// Version 2 (SealSecret, OpenSecret), the one in use: "enc:v2:" followed by the standard base64 (with padding) of a
// 12-byte nonce and the AES-256-GCM ciphertext (with its 16-byte tag) of the plaintext, sealed with associated data
// that names its owner (a Binding: the connector and config key in connector configs, the account, resource and
// field in the database). The binding is not in the value: whoever opens it says whose it must be, so a value moved
// to another connector, key, resource or account never opens.
//
// Version 1 (EncryptSecret, DecryptSecret): "enc:v1:" and the same without associated data, bound to nothing.
// Installations made before version 2 hold such values; the start-up migrations of the control plane and the
// workers read them once to seal them again in version 2, and nothing else opens them.
const (
	SecretPrefix   = "enc:v1:"
	SecretPrefixV2 = "enc:v2:"
)

// SealedPrefix starts every sealed value, whatever its version.
const SealedPrefix = "enc:"

// MasterKeySize is the size of the master key in bytes (AES-256).
const MasterKeySize = 32

// Errors of DecryptSecret, for errors.Is.
var (
	ErrNotEncrypted    = errors.New("value is not encrypted (no " + SecretPrefix + " prefix)")
	ErrMalformedSecret = errors.New("encrypted value is malformed")
	ErrWrongKey        = errors.New("encrypted value does not decrypt with the master key (wrong key or altered value)")
	ErrMasterKey       = errors.New("master key must be 32 bytes")
)

// IsEncrypted reports whether value has a sealed form (enc:...). It does not check the rest.
func IsEncrypted(value string) bool { return strings.HasPrefix(value, SealedPrefix) }

// IsV1 reports whether value is sealed in version 1 (enc:v1:...), which only the migrations read.
func IsV1(value string) bool { return strings.HasPrefix(value, SecretPrefix) }

// ErrWrongBinding is a version 2 value opened as another owner's (or with another key, or altered).
var ErrWrongBinding = errors.New("sealed value does not open for this owner with the master key (sealed for another connector, key " +
	"or resource, with another master key, or altered)")

// Binding names the owner of a sealed value, field by field; it is the associated data of version 2.
type Binding []string

// ConnectorBinding is the binding of a secret in a connector's config: the installation (cluster id), the connector
// and the config key.
func ConnectorBinding(cluster, connector, key string) Binding {
	return Binding{"connector", cluster, connector, key}
}

// bytes encodes b unambiguously: each field preceded by its length.
func (b Binding) bytes() []byte {
	out := []byte("eventbridge-secret-v2")
	for _, f := range b {
		out = binary.AppendUvarint(out, uint64(len(f)))
		out = append(out, f...)
	}
	return out
}

// SealSecret returns plaintext sealed under key (32 bytes) for the owner b, as enc:v2:<base64(nonce|ciphertext)>.
// Each call uses a fresh random nonce. Its errors never contain the plaintext.
func SealSecret(key []byte, b Binding, plaintext string) (string, error) {
	aead, err := secretAEAD(key)
	if err != nil {
		return "", fmt.Errorf("sealing a secret: %w", err)
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("sealing a secret: %w", err)
	}
	sealed := aead.Seal(nonce, nonce, []byte(plaintext), b.bytes())
	return SecretPrefixV2 + base64.StdEncoding.EncodeToString(sealed), nil
}

// OpenSecret returns the plaintext of an enc:v2: value sealed for the owner b under key. A value sealed for another
// owner is ErrWrongBinding; a version 1 value is ErrNotEncrypted (only the migrations read those, with
// DecryptSecret). Errors never contain the value.
func OpenSecret(key []byte, b Binding, value string) (string, error) {
	rest, ok := strings.CutPrefix(value, SecretPrefixV2)
	if !ok {
		if IsV1(value) {
			return "", fmt.Errorf("opening a secret: %w: a version 1 value (enc:v1:) is sealed again by the start-up migration, not opened", ErrNotEncrypted)
		}
		return "", fmt.Errorf("opening a secret: %w", ErrNotEncrypted)
	}
	aead, err := secretAEAD(key)
	if err != nil {
		return "", fmt.Errorf("opening a secret: %w", err)
	}
	sealed, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return "", fmt.Errorf("opening a secret: %w: not base64", ErrMalformedSecret)
	}
	if len(sealed) < aead.NonceSize()+aead.Overhead() {
		return "", fmt.Errorf("opening a secret: %w: %d bytes is too short for a nonce and a tag", ErrMalformedSecret, len(sealed))
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], b.bytes())
	if err != nil {
		return "", fmt.Errorf("opening a secret: %w", ErrWrongBinding)
	}
	return string(plain), nil
}

func secretAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != MasterKeySize {
		return nil, fmt.Errorf("%w, not %d", ErrMasterKey, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// EncryptSecret returns plaintext encrypted under key (32 bytes) as enc:v1:<base64(nonce|ciphertext)>, bound to
// nothing. Each call uses a fresh random nonce. Only tests make version 1 values now (what an earlier release
// wrote); everything else seals with SealSecret.
func EncryptSecret(key []byte, plaintext string) (string, error) {
	aead, err := secretAEAD(key)
	if err != nil {
		return "", fmt.Errorf("encrypting a secret: %w", err)
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("encrypting a secret: %w", err)
	}
	sealed := aead.Seal(nonce, nonce, []byte(plaintext), nil)
	return SecretPrefix + base64.StdEncoding.EncodeToString(sealed), nil
}

// DecryptSecret returns the plaintext of an enc:v1: value under key, for the migrations. Errors wrap ErrNotEncrypted,
// ErrMalformedSecret, ErrWrongKey or ErrMasterKey; they never contain the value.
func DecryptSecret(key []byte, value string) (string, error) {
	rest, ok := strings.CutPrefix(value, SecretPrefix)
	if !ok {
		return "", fmt.Errorf("decrypting a secret: %w", ErrNotEncrypted)
	}
	aead, err := secretAEAD(key)
	if err != nil {
		return "", fmt.Errorf("decrypting a secret: %w", err)
	}
	sealed, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return "", fmt.Errorf("decrypting a secret: %w: not base64", ErrMalformedSecret)
	}
	if len(sealed) < aead.NonceSize()+aead.Overhead() {
		return "", fmt.Errorf("decrypting a secret: %w: %d bytes is too short for a nonce and a tag", ErrMalformedSecret, len(sealed))
	}
	nonce, ct := sealed[:aead.NonceSize()], sealed[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, ct, nil)
	if err != nil {
		return "", fmt.Errorf("decrypting a secret: %w", ErrWrongKey)
	}
	return string(plain), nil
}
