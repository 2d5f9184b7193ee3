package connect

import (
	"fmt"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/rpc"
)

// Sealer seals and opens secrets under the installation's master key, always in version 2 (rpc.SealSecret):
// the database's for their owner (Seal, Open: the account, the kind and id of the resource, the field), and the
// values of connector configs for their connector and config key (SealFor, OpenFor: rpc.ConnectorBinding), which is
// the only form a worker opens. Upgrade seals a value of version 1 (an earlier release's, bound to nothing) again for
// its owner, for the start-up migration.
type Sealer struct {
	key []byte
}

var (
	_ domain.Sealer = (*Sealer)(nil)
	_ domain.Opener = (*Sealer)(nil)
)

// NewSealer returns a Sealer for the master key (rpc.MasterKeySize bytes); an error for a key of another size.
func NewSealer(masterKey []byte) (*Sealer, error) {
	if len(masterKey) != rpc.MasterKeySize {
		return nil, fmt.Errorf("sealer: %w, not %d", rpc.ErrMasterKey, len(masterKey))
	}
	return &Sealer{key: append([]byte(nil), masterKey...)}, nil
}

// ownerBinding is the binding of a secret the database keeps.
func ownerBinding(o domain.SecretOwner) rpc.Binding {
	return rpc.Binding{"db", o.Account, o.Kind, o.ID, o.Field}
}

// Seal returns plaintext sealed for its owner, with a fresh nonce on every call. Its errors never contain the
// plaintext.
func (s *Sealer) Seal(owner domain.SecretOwner, plaintext string) (string, error) {
	return rpc.SealSecret(s.key, ownerBinding(owner), plaintext)
}

// Open opens a value Seal made for owner; a value sealed for another owner does not open. The adapter opens
// secrets only to seal them again for a connector; its errors never contain a value.
func (s *Sealer) Open(owner domain.SecretOwner, sealed string) (string, error) {
	return rpc.OpenSecret(s.key, ownerBinding(owner), sealed)
}

// Upgrade returns v sealed again for owner when an earlier release sealed it in version 1 (bound to nothing), and
// v itself otherwise (a domain.Resealer).
func (s *Sealer) Upgrade(owner domain.SecretOwner, v string) (string, error) {
	if !rpc.IsV1(v) {
		return v, nil
	}
	p, err := rpc.DecryptSecret(s.key, v)
	if err != nil {
		return "", err
	}
	return s.Seal(owner, p)
}

// SealFor seals plaintext for the owner b (a connector's config key).
func (s *Sealer) SealFor(b rpc.Binding, plaintext string) (string, error) {
	return rpc.SealSecret(s.key, b, plaintext)
}

// OpenFor opens a value sealed for the owner b.
func (s *Sealer) OpenFor(b rpc.Binding, ciphertext string) (string, error) {
	return rpc.OpenSecret(s.key, b, ciphertext)
}

// binding is the owner of the secret under key in the config of the connector name.
func (a *Adapter) binding(name, key string) rpc.Binding {
	return rpc.ConnectorBinding(a.cluster(), name, key)
}

// opener is the adapter's Sealer as a domain.Opener: nil without a master key (opening a sealed value then fails,
// naming it).
func (a *Adapter) opener() domain.Opener {
	if a.cfg.Secrets == nil {
		return nil
	}
	return a.cfg.Secrets
}

// sealFor returns cfg, the config of the connector name with the plaintext values of its secret keys, with each
// of them sealed for the connector and its key: a worker opens a secret only for the connector and key it was sealed
// for, so a value copied elsewhere is useless. Errors name the key, never a value.
func (a *Adapter) sealFor(name string, cfg map[string]string, secretKeys []string) (map[string]string, error) {
	for _, k := range secretKeys {
		v, ok := cfg[k]
		if !ok || v == "" {
			continue
		}
		if a.cfg.Secrets == nil {
			return nil, fmt.Errorf("config key %s is a secret and this deployment has no master key", k)
		}
		sealed, err := a.cfg.Secrets.SealFor(a.binding(name, k), v)
		if err != nil {
			return nil, fmt.Errorf("config key %s: %w", k, err)
		}
		cfg[k] = sealed
	}
	return cfg, nil
}
