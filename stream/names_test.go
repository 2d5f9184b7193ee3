package stream_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/eventbridge-go/eventbridge/stream"
)

// TestMsgIDsKeepTheirForm: the Nats-Msg-Ids of events and their hops are the SHA-256 in hex of the texts below, as
// every earlier version stored them: an id that changed would let JetStream store again, inside its duplicate
// window, an event retried across an upgrade. Long texts (past the stack buffer) hash the same way.
func TestMsgIDsKeepTheirForm(t *testing.T) {
	sum := func(text string) string {
		s := sha256.Sum256([]byte(text))
		return hex.EncodeToString(s[:])
	}
	long := strings.Repeat("x", 300)
	assert.Equal(t, sum("4|shop|1"), stream.PutMsgID("shop", "1"))
	assert.Equal(t, sum("0||"), stream.PutMsgID("", ""))
	assert.Equal(t, sum("300|"+long+"|"+long), stream.PutMsgID(long, long))
	assert.Equal(t, sum("m1|dlq|c"), stream.HopMsgID("m1", "dlq", "c"))
	assert.Equal(t, sum("m1"), stream.HopMsgID("m1"))
	assert.Equal(t, sum(long+"|"+long), stream.HopMsgID(long, long))
	assert.Equal(t, sum("batch|a|b"), stream.BatchMsgID([]string{"a", "b"}))
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = stream.PutMsgID("shop", strings.Repeat("i", i)) // 64 bytes each: hashed in pieces
	}
	assert.Equal(t, sum("batch|"+strings.Join(ids, "|")), stream.BatchMsgID(ids))
	for n := 250; n <= 520; n++ { // around the buffer's size and its multiples
		prev, hop := strings.Repeat("p", n/3), strings.Repeat("h", n-n/3)
		assert.Equal(t, sum(prev+"|"+hop+"|"+prev), stream.HopMsgID(prev, hop, prev), "length %d", n)
	}
	assert.LessOrEqual(t, testing.AllocsPerRun(100, func() { _ = stream.BatchMsgID(ids) }), 3.0,
		"a batch's ids are not gathered into one text")
	assert.LessOrEqual(t, testing.AllocsPerRun(100, func() { _ = stream.PutMsgID("shop", "1") }), 1.0)
	assert.LessOrEqual(t, testing.AllocsPerRun(100, func() { _ = stream.HopMsgID(ids[0], "route", "r") }), 1.0,
		"a short hop id is hashed from the stack")
}
