package connect

import (
	"fmt"
	"maps"

	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/rpc"
)

var _ connection.Sealer = (*Sealer)(nil)

// Sealer seals and opens secrets under the installation's master key: the values the database holds (Seal, Open:
// version 1 today, bound to nothing) and the values of connector configs, sealed for their connector and config key
// (SealFor, OpenFor: version 2, rpc.ConnectorBinding), which is the only form a worker opens.
type Sealer struct {
	key []byte
}

// NewSealer returns a Sealer for the master key (rpc.MasterKeySize bytes); an error for a key of another size.
func NewSealer(masterKey []byte) (*Sealer, error) {
	if len(masterKey) != rpc.MasterKeySize {
		return nil, fmt.Errorf("sealer: %w, not %d", rpc.ErrMasterKey, len(masterKey))
	}
	return &Sealer{key: append([]byte(nil), masterKey...)}, nil
}

// Seal returns plaintext sealed as the database keeps it, with a fresh nonce on every call. Its errors never contain
// the plaintext.
func (s *Sealer) Seal(plaintext string) (string, error) {
	return rpc.EncryptSecret(s.key, plaintext)
}

// Open opens a value Seal made. The adapter opens secrets only to seal them again for a connector; its errors never
// contain the plaintext.
func (s *Sealer) Open(ciphertext string) (string, error) {
	return rpc.DecryptSecret(s.key, ciphertext)
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

// bindSecrets returns cfg, the config of the connector name as built from the database, with every sealed value
// (as the database keeps it) opened and sealed again for the connector and its key: a worker opens a secret only
// for the connector and key it was sealed for, so a value copied elsewhere is useless. Errors name the key, never
// a value.
func (a *Adapter) bindSecrets(name string, cfg map[string]string) (map[string]string, error) {
	var out map[string]string
	for k, v := range cfg {
		if !rpc.IsV1(v) {
			continue
		}
		if a.cfg.Secrets == nil {
			return nil, fmt.Errorf("config key %s is a secret and this deployment has no master key", k)
		}
		p, err := a.cfg.Secrets.Open(v)
		if err != nil {
			return nil, fmt.Errorf("config key %s: %w", k, err)
		}
		if out == nil {
			out = maps.Clone(cfg)
		}
		if out[k], err = a.cfg.Secrets.SealFor(a.binding(name, k), p); err != nil {
			return nil, fmt.Errorf("config key %s: %w", k, err)
		}
	}
	if out == nil {
		return cfg, nil
	}
	return out, nil
}
