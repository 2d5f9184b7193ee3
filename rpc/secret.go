package rpc

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// SecretPrefix starts every encrypted config value: "enc:v1:" followed by the standard base64 (with padding) of
// a 12-byte nonce and the AES-256-GCM ciphertext (with its 16-byte tag) of the plaintext under the master key.
// Workers and the control plane share the key; configs on the wire and in KV hold only this form of a secret.
const SecretPrefix = "enc:v1:"

// MasterKeySize is the size of the master key in bytes (AES-256).
const MasterKeySize = 32

// Errors of DecryptSecret, for errors.Is.
var (
	ErrNotEncrypted    = errors.New("value is not encrypted (no " + SecretPrefix + " prefix)")
	ErrMalformedSecret = errors.New("encrypted value is malformed")
	ErrWrongKey        = errors.New("encrypted value does not decrypt with the master key (wrong key or altered value)")
	ErrMasterKey       = errors.New("master key must be 32 bytes")
)

// IsEncrypted reports whether value has the encrypted form (enc:v1:...). It does not check the rest.
func IsEncrypted(value string) bool { return strings.HasPrefix(value, SecretPrefix) }

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

// EncryptSecret returns plaintext encrypted under key (32 bytes) as enc:v1:<base64(nonce|ciphertext)>. Each call
// uses a fresh random nonce, so encrypting the same value twice gives two different strings.
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

// DecryptSecret returns the plaintext of an enc:v1: value under key. Errors wrap ErrNotEncrypted,
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
