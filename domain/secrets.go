package domain

import "strings"

// SecretOwner names what a sealed secret belongs to: the account, the kind of resource ("connection", "source",
// "target"), its id and the field of it. A secret is sealed for its owner and opens only for it, so a sealed value
// copied into another field, resource or account is useless.
type SecretOwner struct {
	Account, Kind, ID, Field string
}

// Sealer seals a secret for its owner before it is kept. Its output is opaque to the domain (enc:... ciphertext under
// the installation's master key); its errors never contain the plaintext.
type Sealer interface {
	Seal(owner SecretOwner, plaintext string) (string, error)
}

// Opener opens a value a Sealer sealed for the same owner; a value sealed for another owner does not open. Its
// errors never contain the value.
type Opener interface {
	Open(owner SecretOwner, sealed string) (string, error)
}

// SealedPrefix starts every sealed value.
const SealedPrefix = "enc:"

// IsSealed reports whether v has the form of a sealed value.
func IsSealed(v string) bool { return strings.HasPrefix(v, SealedPrefix) }

// Resealer changes a sealed value of owner into another sealed value (the start-up migration that seals the values
// of an earlier release again for their owner); it returns v itself when there is nothing to change.
type Resealer func(owner SecretOwner, v string) (string, error)
