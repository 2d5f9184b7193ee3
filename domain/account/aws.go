package account

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// AWSAccountID is the 12-digit account id that the Amazon EventBridge API shows for an account (in ARNs, in the
// `account` of events, in CreatedBy): derived from the account's id, so that every replica and every restart
// agree on it without storing it. Two accounts could share one only by a collision of 40 bits of SHA-256 (one in
// 10^12); it identifies nothing on its own, since every request acts in the account of its access key.
func AWSAccountID(id string) string {
	sum := sha256.Sum256([]byte("eventbridge-go account " + id))
	return fmt.Sprintf("%012d", binary.BigEndian.Uint64(sum[:8])%1_000_000_000_000)
}
