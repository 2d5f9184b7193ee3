package connect

import (
	"fmt"

	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/rpc"
)

var _ connection.Sealer = (*Sealer)(nil)

// Sealer encrypts connection secrets under the installation's master key, in the enc:v1: form that the workers
// decrypt (rpc.EncryptSecret): what the database holds is what connector configs carry.
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

// Seal returns plaintext encrypted as enc:v1:<base64>, with a fresh nonce on every call. Its errors never
// contain the plaintext.
func (s *Sealer) Seal(plaintext string) (string, error) {
	return rpc.EncryptSecret(s.key, plaintext)
}

// Open decrypts a value Seal made. The adapter opens secrets only to seal them again in another shape (several
// secret headers as one JSON value); its errors never contain the plaintext.
func (s *Sealer) Open(ciphertext string) (string, error) {
	return rpc.DecryptSecret(s.key, ciphertext)
}
