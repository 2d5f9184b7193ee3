package connect

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/eventbridge-go/eventbridge/rpc"
)

func TestSealer(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, rpc.MasterKeySize)
	s, err := NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Seal("hunter2")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Seal("hunter2")
	if err != nil {
		t.Fatal(err)
	}
	if !rpc.IsEncrypted(a) || strings.Contains(a, "hunter2") || a == b {
		t.Fatalf("want two different enc:v1: ciphertexts without the plaintext, got %q and %q", a, b)
	}
	plain, err := rpc.DecryptSecret(key, a)
	if err != nil || plain != "hunter2" {
		t.Fatalf("the workers' DecryptSecret must open it: %q, %v", plain, err)
	}
	if _, err := NewSealer(key[:16]); !errors.Is(err, rpc.ErrMasterKey) {
		t.Fatalf("want ErrMasterKey for a short key, got %v", err)
	}
}
